//! Client set-up with undo (docs/design.md, "Client set-up"): point Claude Code, Codex or opencode
//! at the relay for one connection by editing the client's own config file — previewed as a
//! unified diff, written atomically after the original is kept under the data dir, detected
//! (`status`) and undone byte for byte (`restore`). Only the relay token is ever written; a
//! provider key found in plain text can be moved into the keychain as a profile.
//!
//! Per client: `claude_code.rs`, `codex.rs`, `opencode.rs` (what to edit, what counts as
//! pointed); `json_edit.rs` (span-keeping JSON/JSONC edits); `diff.rs`; `backup.rs`.

mod backup;
mod claude_code;
mod codex;
mod diff;
mod json_edit;
mod opencode;

pub use crate::views::{ClientPreview, ClientRestoreReport, ClientSetupReport, ClientStatus};
use std::path::{Path, PathBuf};

use switchyard_core::InvalidInput;
use switchyard_store::profiles;
use switchyard_vault::Secret;

use crate::engine::Engine;
use crate::error::EngineError;
use crate::inputs::NewProfile;
use crate::rows::locator_of;

/// The clients set-up knows, as named on the command line.
pub const CLIENTS: [&str; 3] = ["claude-code", "codex", "opencode"];

/// Where the clients keep their config, from the environment they would see.
#[derive(Debug, Clone, Default)]
pub struct ClientHome {
    pub home: PathBuf,
    /// `CLAUDE_CONFIG_DIR` (default `~/.claude`).
    pub claude_config_dir: Option<PathBuf>,
    /// `CODEX_HOME` (default `~/.codex`).
    pub codex_home: Option<PathBuf>,
    /// `XDG_CONFIG_HOME` (default `~/.config`).
    pub xdg_config_home: Option<PathBuf>,
}

impl ClientHome {
    pub fn from_env() -> Self {
        let var = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty()).map(PathBuf::from);
        ClientHome {
            home: var("HOME").or_else(dirs::home_dir).unwrap_or_else(|| PathBuf::from(".")),
            claude_config_dir: var("CLAUDE_CONFIG_DIR"),
            codex_home: var("CODEX_HOME"),
            xdg_config_home: var("XDG_CONFIG_HOME"),
        }
    }

    /// The config file `client` reads.
    pub fn config_path(&self, client: &str) -> Result<PathBuf, EngineError> {
        Ok(match client {
            "claude-code" => {
                self.claude_config_dir.clone().unwrap_or_else(|| self.home.join(".claude")).join("settings.json")
            }
            "codex" => self.codex_home.clone().unwrap_or_else(|| self.home.join(".codex")).join("config.toml"),
            "opencode" => {
                let dir = self.xdg_config_home.clone().unwrap_or_else(|| self.home.join(".config")).join("opencode");
                let jsonc = dir.join("opencode.jsonc");
                if jsonc.exists() {
                    jsonc
                } else {
                    dir.join("opencode.json")
                }
            }
            other => return Err(unknown_client(other)),
        })
    }
}

/// What `client setup` asks for.
#[derive(Debug, Clone)]
pub struct ClientRequest {
    pub client: String,
    /// The connection; `None`: the only connection of the client's protocol.
    pub slug: Option<String>,
    pub home: ClientHome,
    /// The relay port to point at (`None`: the port setting).
    pub port: Option<u16>,
    /// Move a plain-text provider key found in the file into the keychain as a profile with this label.
    pub move_key: Option<String>,
}

/// What a client module computes.
pub(crate) struct Plan {
    pub after: String,
    pub plain_keys: Vec<PlainKey>,
    pub notes: Vec<String>,
}

pub(crate) struct PlainKey {
    pub name: String,
    pub value: String,
}

/// The relay a file points at.
pub(crate) struct Pointed {
    pub port: u16,
    pub slug: String,
    pub token: Option<String>,
}

/// What set-up writes.
pub(crate) struct Target {
    pub slug: String,
    pub protocol: String,
    pub base_url: String,
    pub token: String,
    pub model: Option<String>,
    pub models: Vec<String>,
}

fn unknown_client(name: &str) -> EngineError {
    let shown = switchyard_core::secret_shape::echo_safe(name).unwrap_or(switchyard_core::secret_shape::NOT_SHOWN);
    EngineError::Invalid(InvalidInput::new(
        "client",
        format!("unknown client '{shown}'; one of {}", CLIENTS.join(", ")),
    ))
}

pub(crate) fn invalid_file(client: &str, e: &json_edit::ParseError) -> EngineError {
    invalid_file_text(client, e.line, e.column, e.what)
}

/// A malformed client file: where, never what (it may hold a key). Code `invalid`, nothing written.
pub(crate) fn invalid_file_text(client: &str, line: usize, column: usize, what: &str) -> EngineError {
    EngineError::Invalid(InvalidInput::new(
        "client_config",
        format!(
            "the {client} config file is malformed at line {line}, column {column} ({what}); fix it and retry — nothing was written"
        ),
    ))
}

/// A Switchyard relay token (`sy_` + 64 hex).
pub(crate) fn is_relay_token(v: &str) -> bool {
    v.len() == 67 && v.starts_with("sy_") && v[3..].bytes().all(|b| b.is_ascii_hexdigit())
}

/// `(port, slug)` of a loopback relay URL `http://127.0.0.1:PORT/c/SLUG[/v1]`.
pub(crate) fn relay_url_parts(url: &str) -> Option<(u16, String)> {
    let rest = url.strip_prefix("http://")?;
    let (host_port, path) = rest.split_once('/')?;
    let (host, port) = host_port.rsplit_once(':')?;
    if !matches!(host, "127.0.0.1" | "localhost" | "[::1]") {
        return None;
    }
    let port = port.parse().ok()?;
    let path = path.trim_end_matches('/');
    let path = path.strip_suffix("/v1").unwrap_or(path);
    let slug = path.strip_prefix("c/")?;
    (!slug.is_empty() && !slug.contains('/')).then(|| (port, slug.to_string()))
}

fn read_file(path: &Path) -> Result<Option<String>, EngineError> {
    match std::fs::read(path) {
        Ok(bytes) => String::from_utf8(bytes).map(Some).map_err(|_| {
            EngineError::Invalid(InvalidInput::new(
                "client_config",
                format!("{} is not UTF-8 text; nothing was written", path.display()),
            ))
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(EngineError::Internal(format!("cannot read {}: {e}", path.display()))),
    }
}

fn hash_of(text: Option<&str>) -> String {
    text.map_or_else(|| "absent".to_string(), |t| backup::sha256_hex(t.as_bytes()))
}

fn mask(text: &str, secrets: &[&str]) -> String {
    let mut out = text.to_string();
    for s in secrets.iter().filter(|s| s.len() >= 8) {
        let shown = if is_relay_token(s) { "<relay token>" } else { "<provider key>" };
        out = out.replace(s, shown);
    }
    out
}

fn pointed_in(client: &str, text: &str) -> Result<Option<Pointed>, EngineError> {
    match client {
        "claude-code" => claude_code::pointed(text),
        "codex" => codex::pointed(text),
        _ => opencode::pointed(text),
    }
}

fn plain_keys_in(client: &str, text: &str, protocol: &str) -> Result<Vec<PlainKey>, EngineError> {
    match client {
        "claude-code" => claude_code::plain_keys(text),
        "codex" => codex::plain_keys(text),
        _ => opencode::plain_keys(text, protocol),
    }
}

struct Computed {
    preview: ClientPreview,
    path: PathBuf,
    before: Option<String>,
    plan: Plan,
}

impl Engine {
    async fn client_target(&self, req: &ClientRequest) -> Result<Target, EngineError> {
        let protocol_needed = match req.client.as_str() {
            "claude-code" => Some("anthropic"),
            "codex" => Some("openai"),
            "opencode" => None,
            other => return Err(unknown_client(other)),
        };
        let slug = match &req.slug {
            Some(s) => s.clone(),
            None => {
                let fits: Vec<_> = self
                    .connection_list()
                    .await?
                    .into_iter()
                    .filter(|c| protocol_needed.is_none_or(|p| c.protocol == p))
                    .collect();
                match fits.as_slice() {
                    [one] => one.slug.clone(),
                    _ => {
                        return Err(EngineError::Invalid(InvalidInput::new(
                            "slug",
                            format!("name the connection {} should use ({} fit)", req.client, fits.len()),
                        )))
                    }
                }
            }
        };
        let detail = self.connection_show(&slug).await?;
        let c = detail.connection;
        if let Some(p) = protocol_needed {
            if c.protocol != p {
                return Err(EngineError::Invalid(InvalidInput::new(
                    "slug",
                    format!("{} speaks {p}; connection '{}' is {}", req.client, c.slug, c.protocol),
                )));
            }
        }
        let port = match req.port {
            Some(p) => p,
            None => self.relay_port().await?,
        };
        let mut base_url = format!("http://127.0.0.1:{port}/c/{}", c.slug);
        if c.protocol == "openai" || req.client == "opencode" {
            base_url.push_str("/v1");
        }
        let token = self.relay_token(false).await?;
        Ok(Target {
            slug: c.slug,
            protocol: c.protocol,
            base_url,
            token: token.expose().to_string(),
            model: c.models.first().cloned(),
            models: c.models,
        })
    }

    async fn client_compute(&self, req: &ClientRequest) -> Result<(Computed, Target), EngineError> {
        let target = self.client_target(req).await?;
        let path = req.home.config_path(&req.client)?;
        let before = read_file(&path)?;
        let text = before.as_deref().unwrap_or("");
        let move_key = req.move_key.is_some();
        let plan = match req.client.as_str() {
            "claude-code" => claude_code::plan(text, &target, move_key)?,
            "codex" => codex::plan(text, &target)?,
            _ => opencode::plan(text, &target, move_key)?,
        };
        if move_key && plan.plain_keys.is_empty() {
            return Err(EngineError::Precondition(format!(
                "--move-key: {} holds no provider key in plain text",
                path.display()
            )));
        }
        let mut secrets: Vec<&str> = vec![target.token.as_str()];
        secrets.extend(plan.plain_keys.iter().map(|k| k.value.as_str()));
        let shown_path = path.display().to_string();
        let diff = diff::unified(&shown_path, &mask(text, &secrets), &mask(&plan.after, &secrets));
        let mut notes = plan.notes.clone();
        if req.client == "claude-code" && !move_key && plan.plain_keys.iter().any(|k| k.name.ends_with("AUTH_TOKEN")) {
            notes.push(
                "env.ANTHROPIC_AUTH_TOKEN held a provider key; set-up replaces it with the relay token (the kept original has it; --move-key LABEL keeps it as a profile)".into(),
            );
        }
        let preview = ClientPreview {
            client: req.client.clone(),
            path: shown_path,
            slug: target.slug.clone(),
            base_url: target.base_url.clone(),
            exists: before.is_some(),
            changes: before.as_deref() != Some(plan.after.as_str()),
            diff,
            file_hash: hash_of(before.as_deref()),
            plain_keys: plan.plain_keys.iter().map(|k| k.name.clone()).collect(),
            notes,
        };
        Ok((Computed { preview, path, before, plan }, target))
    }

    /// The change set-up would make, as a unified diff, and the hash of the file it read.
    pub async fn client_preview(&self, req: &ClientRequest) -> Result<ClientPreview, EngineError> {
        Ok(self.client_compute(req).await?.0.preview)
    }

    /// Writes the set-up previewed from a file whose hash was `expected_hash`; refuses (code
    /// `conflict`, nothing written) when the file changed since. Keeps the original first.
    pub async fn client_setup(
        &self,
        req: &ClientRequest,
        expected_hash: &str,
    ) -> Result<ClientSetupReport, EngineError> {
        let (computed, target) = self.client_compute(req).await?;
        let Computed { preview, path, before, plan } = computed;
        if preview.file_hash != expected_hash {
            return Err(EngineError::Changed(format!(
                "{} changed since the preview; preview again and retry — nothing was written",
                path.display()
            )));
        }
        if !preview.changes {
            return Ok(ClientSetupReport { preview, written: false, backup: None, moved_to: None });
        }
        let dir = backup::dir_for(self.data_dir(), &req.client, &path);
        let existing = backup::read_manifest(&dir)?;
        let first = existing.is_none();
        let mut moved_to = None;
        let mut kept_original = before.clone();
        if let Some(label) = &req.move_key {
            let key = &plan.plain_keys[0];
            let new = NewProfile { label: label.clone(), ..NewProfile::default() };
            let view = self.profile_add(&target.slug, new, Secret::new(key.value.clone())).await?;
            if let Some(orig) = &kept_original {
                kept_original = Some(orig.replace(&key.value, backup::MOVED_KEY));
            }
            moved_to = Some(view);
        }
        let written_sha256 = backup::sha256_hex(plan.after.as_bytes());
        let mut rewrite_original = None;
        let manifest = match existing {
            // A second set-up keeps the first original (the one before Switchyard); a key moved
            // now is taken out of that original too.
            Some(m) => {
                let mut m = backup::Manifest { written_sha256, slug: target.slug.clone(), ..m };
                if let (Some(p), None) = (&moved_to, &m.moved_profile) {
                    let key = &plan.plain_keys[0].value;
                    let kept = String::from_utf8_lossy(&backup::read_original(&dir)?).into_owned();
                    rewrite_original = Some(kept.replace(key.as_str(), backup::MOVED_KEY));
                    m.moved_profile = Some(p.id.clone());
                    m.moved_slug = Some(target.slug.clone());
                }
                m
            }
            None => backup::Manifest {
                client: req.client.clone(),
                path: path.display().to_string(),
                existed: before.is_some(),
                mode: backup::mode_of(&path),
                original_sha256: hash_of(before.as_deref()),
                written_sha256,
                slug: target.slug.clone(),
                created_at_ms: self.now_ms(),
                moved_profile: moved_to.as_ref().map(|p| p.id.clone()),
                moved_slug: moved_to.as_ref().map(|_| target.slug.clone()),
            },
        };
        let original_bytes = match rewrite_original {
            Some(text) => Some(text),
            None if first => Some(kept_original.unwrap_or_default()),
            None => None,
        };
        backup::save(&dir, &manifest, original_bytes.as_deref().map(str::as_bytes))?;
        let mode = backup::mode_of(&path).or(Some(0o600));
        backup::write_atomic(&backup::real_path(&path), plan.after.as_bytes(), mode)?;
        Ok(ClientSetupReport { preview, written: true, backup: Some(dir.display().to_string()), moved_to })
    }

    /// Whether `client` points at a Switchyard relay, at which connection, with the current token.
    pub async fn client_status(&self, client: &str, home: &ClientHome) -> Result<ClientStatus, EngineError> {
        let path = home.config_path(client)?;
        let text = read_file(&path)?;
        let pointed = match &text {
            Some(t) => pointed_in(client, t)?,
            None => None,
        };
        let protocol = match &pointed {
            Some(p) => self.connection_show(&p.slug).await.map(|d| d.connection.protocol).unwrap_or_default(),
            None => String::new(),
        };
        let plain = match &text {
            Some(t) => plain_keys_in(client, t, &protocol)?.into_iter().map(|k| k.name).collect(),
            None => vec![],
        };
        let token = self.relay_token(false).await?;
        let restorable = backup::read_manifest(&backup::dir_for(self.data_dir(), client, &path))?.is_some();
        Ok(ClientStatus {
            client: client.to_string(),
            path: path.display().to_string(),
            exists: text.is_some(),
            pointed: pointed.is_some(),
            slug: pointed.as_ref().map(|p| p.slug.clone()),
            port: pointed.as_ref().map(|p| i32::from(p.port)),
            token_current: pointed.as_ref().and_then(|p| p.token.as_deref()) == Some(token.expose()),
            restorable,
            plain_keys: plain,
        })
    }

    /// Puts the kept original back, byte for byte (or removes the file set-up created). Refuses
    /// (code `conflict`) when the file changed since set-up wrote it, unless `force`.
    pub async fn client_restore(
        &self,
        client: &str,
        home: &ClientHome,
        force: bool,
    ) -> Result<ClientRestoreReport, EngineError> {
        let path = home.config_path(client)?;
        let dir = backup::dir_for(self.data_dir(), client, &path);
        let Some(manifest) = backup::read_manifest(&dir)? else {
            return Err(EngineError::not_found("client backup", client));
        };
        let current = read_file(&path)?;
        if !force && hash_of(current.as_deref()) != manifest.written_sha256 {
            return Err(EngineError::Changed(format!(
                "{} changed since Switchyard set it up; restore --force brings the original back anyway",
                path.display()
            )));
        }
        let report = ClientRestoreReport {
            client: client.to_string(),
            path: path.display().to_string(),
            restored: manifest.existed,
            removed: !manifest.existed,
        };
        if !manifest.existed {
            match std::fs::remove_file(&path) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    return Err(EngineError::Internal(format!("cannot remove {}: {e}", path.display())))
                }
                _ => {}
            }
            backup::remove(&dir)?;
            return Ok(report);
        }
        let mut original = backup::read_original(&dir)?;
        if let Some(profile_id) = &manifest.moved_profile {
            let secret = self.moved_secret(profile_id).await?;
            let text = String::from_utf8_lossy(&original).replace(backup::MOVED_KEY, secret.expose());
            original = text.into_bytes();
        }
        if backup::sha256_hex(&original) != manifest.original_sha256 {
            return Err(EngineError::Internal(format!(
                "the kept original of {} does not match its hash; left it in {}",
                path.display(),
                dir.display()
            )));
        }
        backup::write_atomic(&backup::real_path(&path), &original, manifest.mode)?;
        backup::remove(&dir)?;
        Ok(report)
    }

    /// The secret of the profile a moved key became.
    async fn moved_secret(&self, profile_id: &str) -> Result<Secret, EngineError> {
        let row = {
            let mut conn = self.store.acquire().await?;
            profiles::by_id(&mut conn, profile_id).await?
        };
        let gone = || {
            EngineError::Precondition(format!(
                "the profile holding the moved key ({profile_id}) or its secret is gone; the original cannot be rebuilt"
            ))
        };
        let locator = row.as_ref().and_then(locator_of).ok_or_else(gone)?;
        self.vault_get(locator).await?.ok_or_else(gone)
    }
}
