//! `switchyard export` and `switchyard import`: the file is read or written here, the rest is
//! one engine call (`render/export.rs`, `render/import.rs` print the results).

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use clap::Args;
use switchyard_engine::{Conflict, Engine, EngineError, InvalidInput, MAX_IMPORT_BYTES};

use crate::output::Output;
use crate::render::export::ExportWritten;

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
    #[arg(long, value_enum, default_value = "rename")]
    pub on_conflict: Conflict,
}

pub async fn export(engine: &Engine, args: ExportArgs) -> Result<Output, EngineError> {
    let slugs = (!args.slugs.is_empty()).then_some(args.slugs.as_slice());
    let text = engine.export(slugs).await?;
    let Some(path) = args.out else {
        return Ok(Output::Document(text.trim_end().to_string()));
    };
    write_new(&path, &text, args.force)?;
    let connections = serde_json::from_str::<Counted>(&text).map_or(0, |doc| doc.connections.len());
    Ok(Output::view(ExportWritten { out: path.display().to_string(), connections }))
}

/// An exported document, read only to count its connections.
#[derive(serde::Deserialize)]
struct Counted {
    connections: Vec<serde::de::IgnoredAny>,
}

pub async fn import(engine: &Engine, args: ImportArgs) -> Result<Output, EngineError> {
    let on_conflict = args.on_conflict;
    let text = read_limited(&args.file)?;
    Ok(Output::view(engine.import(&text, args.dry_run, on_conflict).await?))
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
