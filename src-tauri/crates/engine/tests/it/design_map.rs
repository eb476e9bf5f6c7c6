//! The map in docs/design.md names every source file (the way jj's test runner refuses a test
//! file nobody listed): a file under `src-tauri/crates/<crate>/src` that its crate's room list
//! does not name — by file name, and by folder for a file in a folder — fails this test, so a new
//! file comes with its line in the map. A folder's `mod.rs` is named by its folder; `lib.rs` and
//! `main.rs` by the crate.

use std::path::{Path, PathBuf};

type TestResult = Result<(), Box<dyn std::error::Error>>;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../..")
}

/// The paragraph of the map's "rooms of each crate" that describes `crate_dir` (it starts with
/// `**<crate_dir>**`), up to the next crate's.
fn crate_paragraph<'m>(rooms: &'m str, crate_dir: &str) -> Option<&'m str> {
    let start = rooms.find(&format!("**{crate_dir}**"))?;
    let rest = &rooms[start + 2..];
    let end = rest.find("\n**").map_or(rest.len(), |i| i + 1);
    Some(&rest[..end])
}

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            sources(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The files of `src` the paragraph does not name.
fn unnamed(src: &Path, paragraph: &str) -> Vec<String> {
    let mut files = Vec::new();
    sources(src, &mut files);
    let mut missing = Vec::new();
    for f in files {
        let rel = f.strip_prefix(src).unwrap_or(&f).to_string_lossy().replace('\\', "/");
        let (folders, name) = match rel.rsplit_once('/') {
            Some((folders, name)) => (Some(folders), name),
            None => (None, rel.as_str()),
        };
        let named = match (folders, name) {
            (None, "lib.rs" | "main.rs") => true,
            (Some(folders), "mod.rs") => paragraph.contains(&format!("{folders}/")),
            (Some(folders), name) => {
                let last = folders.rsplit('/').next().unwrap_or(folders);
                paragraph.contains(&format!("{last}/")) && paragraph.contains(name)
            }
            (None, name) => paragraph.contains(name),
        };
        if !named {
            missing.push(rel);
        }
    }
    missing.sort();
    missing
}

#[test]
fn the_map_names_every_source_file() -> TestResult {
    let design = std::fs::read_to_string(repo().join("docs/design.md"))?;
    let rooms = design
        .split("### The rooms of each crate")
        .nth(1)
        .and_then(|r| r.split("\n### ").next())
        .ok_or("docs/design.md has no 'The rooms of each crate' part in its map")?;
    let crates = repo().join("src-tauri/crates");
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(&crates)? {
        let dir = entry?.path();
        let name = dir.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_string();
        let src = dir.join("src");
        if !src.is_dir() {
            continue;
        }
        let Some(paragraph) = crate_paragraph(rooms, &name) else {
            missing.push(format!("{name}: the crate has no paragraph in the map"));
            continue;
        };
        missing.extend(unnamed(&src, paragraph).into_iter().map(|f| format!("{name}/src/{f}")));
    }
    assert!(
        missing.is_empty(),
        "docs/design.md's map (The rooms of each crate) names no line for these source files; add one each:\n  {}",
        missing.join("\n  ")
    );
    Ok(())
}

#[test]
fn an_unnamed_file_is_caught() -> TestResult {
    let dir = tempfile::tempdir()?;
    std::fs::create_dir_all(dir.path().join("room"))?;
    for f in ["lib.rs", "named.rs", "room/mod.rs", "room/kept.rs", "room/forgotten.rs", "stray.rs"] {
        std::fs::write(dir.path().join(f), "")?;
    }
    let paragraph = "**x** — `named.rs`; `room/` (`kept.rs`).";
    assert_eq!(
        unnamed(dir.path(), paragraph),
        ["room/forgotten.rs", "stray.rs"],
        "a file the paragraph does not name, in a folder or not, is reported; lib.rs and a named folder's mod.rs are not"
    );
    Ok(())
}
