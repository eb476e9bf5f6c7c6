//! `switchyard export` and `switchyard import`: the file is read or written here, the rest is
//! one engine call; the result goes back to the output module already rendered as JSON and text.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use clap::Args;
use switchyard_engine::{Conflict, Engine, EngineError, ImportReport, InvalidInput, MAX_IMPORT_BYTES};

use crate::output::Output;

#[derive(Debug, Args)]
pub struct ExportArgs {
    /// Connections to export (default: every connection).
    #[arg(value_name = "SLUG")]
    pub slugs: Vec<String>,
    /// Write the file here instead of stdout; an existing file is kept unless --force.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Overwrite FILE if it exists.
    #[arg(long, requires = "out")]
    pub force: bool,
}

#[derive(Debug, Args)]
pub struct ImportArgs {
    /// A switchyard.config v1 file (at most 1 MiB).
    pub file: PathBuf,
    /// Only list what would be created, renamed or skipped; write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// What to do when a slug exists here: import under SLUG-2, … or leave it out.
    #[arg(long, value_name = "rename|skip", default_value = "rename", value_parser = ["rename", "skip"])]
    pub on_conflict: String,
}

pub async fn export(engine: &Engine, args: ExportArgs) -> Result<Output, EngineError> {
    let slugs = (!args.slugs.is_empty()).then_some(args.slugs.as_slice());
    let text = engine.export(slugs).await?;
    let Some(path) = args.out else {
        let doc = text.trim_end().to_string();
        return Ok(Output::Rendered { json: doc.clone(), text: doc });
    };
    write_new(&path, &text, args.force)?;
    let count = serde_json::from_str::<serde_json::Value>(&text)
        .ok()
        .and_then(|v| v["connections"].as_array().map(Vec::len))
        .unwrap_or(0);
    let json = serde_json::json!({ "out": path.display().to_string(), "connections": count });
    Ok(Output::Rendered {
        json: json.to_string(),
        text: format!(
            "exported {count} connection(s) to {} (no secrets: the receiver adds keys after import)",
            path.display()
        ),
    })
}

pub async fn import(engine: &Engine, args: ImportArgs) -> Result<Output, EngineError> {
    let on_conflict: Conflict = args.on_conflict.parse()?;
    let text = read_limited(&args.file)?;
    let report = engine.import(&text, args.dry_run, on_conflict).await?;
    let json = serde_json::to_string_pretty(&report)
        .map_err(|e| EngineError::Internal(format!("cannot render the report: {e}")))?;
    Ok(Output::Rendered { json, text: describe(&report) })
}

/// Writes `text` to `path`; an existing file is an error unless `force`.
fn write_new(path: &Path, text: &str, force: bool) -> Result<(), EngineError> {
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true);
    if force {
        opts.create(true).truncate(true);
    } else {
        opts.create_new(true);
    }
    let shown = path.display();
    let mut file = opts.open(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::AlreadyExists => {
            EngineError::Precondition(format!("'{shown}' already exists; pass --force to overwrite it"))
        }
        _ => EngineError::Internal(format!("cannot write '{shown}': {e}")),
    })?;
    file.write_all(text.as_bytes())
        .and_then(|()| file.sync_all())
        .map_err(|e| EngineError::Internal(format!("cannot write '{shown}': {e}")))
}

/// Reads at most one byte more than the import limit, so a huge file is refused without
/// reading it whole (the engine names the limit).
fn read_limited(path: &Path) -> Result<String, EngineError> {
    let shown = path.display().to_string();
    let file = std::fs::File::open(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => EngineError::NotFound { what: "file", name: shown.clone() },
        _ => EngineError::Internal(format!("cannot read '{shown}': {e}")),
    })?;
    let mut bytes = Vec::new();
    let limit = u64::try_from(MAX_IMPORT_BYTES).unwrap_or(u64::MAX) + 1;
    file.take(limit)
        .read_to_end(&mut bytes)
        .map_err(|e| EngineError::Internal(format!("cannot read '{shown}': {e}")))?;
    if bytes.len() > MAX_IMPORT_BYTES {
        return Ok(String::from_utf8_lossy(&bytes).into_owned());
    }
    String::from_utf8(bytes).map_err(|_| InvalidInput::new("document", "is not UTF-8 text").into())
}

/// The report for people: one line per connection, the totals, and what to do next.
fn describe(r: &ImportReport) -> String {
    let mut out = Vec::new();
    if r.dry_run {
        out.push("dry run: nothing was written".to_string());
    }
    for c in &r.connections {
        let what = match (c.action.as_str(), &c.new_slug) {
            ("rename", Some(new)) => format!("rename  {} -> {new}", c.slug),
            ("skip", _) => format!("skip    {} (the slug exists here)", c.slug),
            _ => format!("create  {}", c.slug),
        };
        let mut line = format!("  {what:<40}");
        if c.action != "skip" {
            line.push_str(&format!(" {} profile(s), disabled, no credentials", c.profiles.len()));
            if let Some(mode) = &c.pending_mode {
                line.push_str(&format!("; {mode} routing pending"));
            }
        }
        out.push(line.trim_end().to_string());
    }
    let verb = if r.dry_run { "would be " } else { "" };
    out.push(format!("{} {verb}created, {} {verb}renamed, {} {verb}skipped", r.created, r.renamed, r.skipped));
    if !r.dry_run && r.created + r.renamed > 0 {
        out.push(
            "next, for each profile: switchyard profile rotate SLUG LABEL --secret-stdin; \
             switchyard profile edit SLUG LABEL --enable; then switchyard verify SLUG \
             (a pending routing mode starts by itself once the gates hold)"
                .to_string(),
        );
    }
    out.join("\n")
}
