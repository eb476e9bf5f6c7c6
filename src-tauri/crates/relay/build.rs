//! Embeds the web console (`ui/dist-console`, built by `cd ui && npm run build:console`) into the
//! relay: every file becomes a `(path, content type, bytes)` entry of `console_assets.rs` in
//! OUT_DIR (relay `console/assets.rs`), so `relay serve --console` needs no files on the server.
//! Without a build there the table is empty and `--console` refuses to start, naming the command.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default());
    let dist = manifest.join("../../../ui/dist-console");
    println!("cargo:rerun-if-changed={}", dist.display());
    println!("cargo:rerun-if-env-changed=SWITCHYARD_CONSOLE_DIST");
    let dist = std::env::var_os("SWITCHYARD_CONSOLE_DIST").map_or(dist, PathBuf::from);
    let mut files = Vec::new();
    collect(&dist, &dist, &mut files);
    files.sort();
    let mut out = String::from("/// The built console: (path under /console/, content type, bytes).\n");
    out.push_str("pub(crate) static ASSETS: &[(&str, &str, &[u8])] = &[\n");
    for (rel, abs) in &files {
        println!("cargo:rerun-if-changed={}", abs.display());
        let _ =
            writeln!(out, "    ({rel:?}, {:?}, include_bytes!({:?})),", content_type(rel), abs.display().to_string());
    }
    out.push_str("];\n");
    let target = PathBuf::from(std::env::var("OUT_DIR").unwrap_or_default()).join("console_assets.rs");
    if let Err(e) = std::fs::write(&target, out) {
        panic!("cannot write {}: {e}", target.display());
    }
}

fn collect(root: &Path, dir: &Path, files: &mut Vec<(String, PathBuf)>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            println!("cargo:rerun-if-changed={}", path.display());
            collect(root, &path, files);
        } else if let Ok(rel) = path.strip_prefix(root) {
            let rel = rel.to_string_lossy().replace('\\', "/");
            files.push((rel, path.canonicalize().unwrap_or(path)));
        }
    }
}

fn content_type(path: &str) -> &'static str {
    match path.rsplit('.').next().unwrap_or("") {
        "html" => "text/html; charset=utf-8",
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "json" => "application/json",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "ico" => "image/x-icon",
        "woff2" => "font/woff2",
        "txt" => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}
