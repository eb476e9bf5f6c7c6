//! Preview and write: what set-up would change ([`preview`]: a masked, capped unified diff and
//! the hash of the bytes it was computed from) and the write of exactly that ([`setup`]: the
//! original kept first, a moved key taken out of both the file and the kept original, the hash
//! re-checked right before the rename, the key's absence verified before "moved" is said). One
//! set-up or restore of a file runs at a time (`backup::lock`); a link out of HOME is refused.

use std::collections::BTreeSet;
use std::path::Path;

use switchyard_engine::{Engine, EngineError, InvalidInput, NewProfile, ProfileView, Secret};

use crate::backup::{self, hash_of, Manifest, MovedSpot};
use crate::client::ClientRequest;
use crate::config_file::{in_file, line_column, ConfigFile, Plan, Target};
use crate::config_read::{self, ConfigText};
use crate::diff;
use crate::mask::{self, Known};
use crate::moved_key::{recipe_of, PLACEHOLDER};
use crate::views::{ClientPreview, ClientSetupReport};

struct Computed {
    preview: ClientPreview,
    read: ConfigText,
    plan: Plan,
    target: Target,
    /// The key `--move-key` moves (one value, maybe at several names).
    moved: Option<String>,
}

/// The change set-up would make, as a unified diff, and the hash of the file it read.
pub async fn preview(engine: &Engine, req: &ClientRequest) -> Result<ClientPreview, EngineError> {
    Ok(compute(engine, req).await?.preview)
}

/// Writes the set-up previewed from a file whose hash was `expected_hash`; refuses (code
/// `conflict`, nothing written) when the file changed since. Keeps the original first.
pub async fn setup(
    engine: &Engine,
    req: &ClientRequest,
    expected_hash: &str,
) -> Result<ClientSetupReport, EngineError> {
    let path = req.home.config_path(req.client);
    let dir = backup::dir_for(engine.data_dir(), req.client.name(), &path);
    // Held until set-up returns: a second set-up or a restore of this file waits, then reads
    // what this one wrote (its preview's hash no longer matches: code `conflict`).
    let _lock = backup::lock(&dir, &path).await?;
    let c = compute(engine, req).await?;
    if c.preview.file_hash != expected_hash {
        return Err(EngineError::Changed(format!(
            "{} changed since the preview; preview again and retry — nothing was written",
            path.display()
        )));
    }
    if !c.preview.changes {
        return Ok(ClientSetupReport { preview: c.preview, written: false, backup: None, moved_to: None });
    }
    let file = req.client.file();
    let existing = backup::read_manifest(&dir)?;
    let kept_before = match existing {
        Some(_) => Some(backup::read_original(&dir)?),
        None => None,
    };
    // The kept original is the first one set-up saw.
    let kept = match &kept_before {
        Some(bytes) => String::from_utf8_lossy(bytes).into_owned(),
        None => c.read.text.clone().unwrap_or_default(),
    };
    let old_spots = existing.as_ref().map(|m| m.moved_keys.clone()).unwrap_or_default();
    let mut moved_to = None;
    let mut kept_now = None;
    let mut spots = old_spots.clone();
    if let (Some(label), Some(key)) = (&req.move_key, &c.moved) {
        let (text, shifted, new) = without_key(file, &kept, key, &old_spots, &path)?;
        let new_profile = NewProfile { label: label.clone(), ..NewProfile::default() };
        let view = engine.profile_add(&c.target.slug, new_profile, Secret::new(key.clone())).await?;
        spots = shifted;
        spots.extend(new.into_iter().map(|(at, recipe)| MovedSpot { at, profile: view.id.clone(), recipe }));
        spots.sort_by_key(|s| s.at);
        kept_now = Some(text);
        moved_to = Some(view);
    }
    let written_sha256 = backup::sha256_hex(c.plan.after.as_bytes());
    let moved_id = moved_to.as_ref().map(|p| p.id.clone());
    let manifest = match existing.clone() {
        Some(m) => Manifest {
            written_sha256,
            slug: c.target.slug.clone(),
            moved_profile: m.moved_profile.clone().or(moved_id),
            moved_slug: m.moved_slug.clone().or(moved_to.as_ref().map(|_| c.target.slug.clone())),
            moved_keys: spots,
            ..m
        },
        None => Manifest {
            client: req.client.name().to_string(),
            path: path.display().to_string(),
            existed: c.read.text.is_some(),
            mode: c.read.mode,
            original_sha256: c.preview.file_hash.clone(),
            written_sha256,
            slug: c.target.slug.clone(),
            created_at_ms: engine.now_ms(),
            moved_slug: moved_id.as_ref().map(|_| c.target.slug.clone()),
            moved_profile: moved_id,
            moved_keys: spots,
        },
    };
    let original = match (&kept_now, &existing) {
        (Some(text), _) => Some(text.as_str()),
        (None, None) => Some(kept.as_str()),
        (None, Some(_)) => None,
    };
    let undo = Undo {
        engine,
        slug: &c.target.slug,
        moved_to: moved_to.as_ref(),
        dir: &dir,
        existing: existing.as_ref(),
        kept_before: kept_before.as_deref(),
    };
    if let Err(e) = backup::save(&dir, &manifest, original.map(str::as_bytes)) {
        undo.run().await;
        return Err(e);
    }
    let mode = Some(written_mode(c.read.mode));
    if let Err(e) = backup::write_atomic(&c.read.real, c.plan.after.as_bytes(), mode, Some(&c.preview.file_hash)) {
        undo.run().await;
        return Err(e);
    }
    if let (Some(key), Some(p)) = (&c.moved, &moved_to) {
        verify_gone(file, &c.read.real, &dir, key, &path, p)?;
    }
    Ok(ClientSetupReport { preview: c.preview, written: true, backup: Some(dir.display().to_string()), moved_to })
}

/// What a failed write takes back: the profile a moved key became, and the backup as it was.
struct Undo<'a> {
    engine: &'a Engine,
    slug: &'a str,
    moved_to: Option<&'a ProfileView>,
    dir: &'a Path,
    existing: Option<&'a Manifest>,
    kept_before: Option<&'a [u8]>,
}

impl Undo<'_> {
    async fn run(self) {
        if let Some(p) = self.moved_to {
            let _ = self.engine.profile_remove(self.slug, &p.id).await;
        }
        let _ = match self.existing {
            None => backup::remove(self.dir),
            Some(m) => backup::save(self.dir, m, self.kept_before),
        };
    }
}

/// Owner-only: the file will hold the relay token (an existing file keeps its owner bits).
fn written_mode(mode: Option<u32>) -> u32 {
    mode.map_or(0o600, |m| m & !0o077)
}

async fn compute(engine: &Engine, req: &ClientRequest) -> Result<Computed, EngineError> {
    let file = req.client.file();
    let target = target(engine, req).await?;
    let path = req.home.config_path(req.client);
    let read = config_read::read_config(&path)?;
    config_read::check_writable(&path, &read)?;
    config_read::check_link(&path, &read.real, &req.home.home)?;
    let text = read.text.as_deref().unwrap_or("");
    let plan = file.plan(text, &target, req.move_key.is_some()).map_err(|e| in_file(e, &path))?;
    let moved = match req.move_key {
        Some(_) => Some(key_to_move(file, &plan, &path)?),
        None => None,
    };
    let known = Known { token: &target.token, keys: plan.plain_keys.iter().map(|k| k.value.as_str()).collect() };
    let shown_path = path.display().to_string();
    let diff = diff::unified(&shown_path, &mask::masked(file, text, &known), &mask::masked(file, &plan.after, &known));
    let changes = read.text.as_deref() != Some(plan.after.as_str());
    let mut notes = plan.notes.clone();
    if read.real != path {
        let real = read.real.display();
        notes.push(format!("{shown_path} is a link to {real}; set-up writes there and the link stays"));
    }
    if let Some(m) = read.mode.filter(|m| changes && m & 0o077 != 0) {
        notes.push(format!(
            "{shown_path} can be read by other users (mode {m:o}); set-up writes it as {:o} since it will hold the relay token (restore puts {m:o} back)",
            written_mode(Some(m))
        ));
    }
    let preview = ClientPreview {
        client: req.client.name().to_string(),
        path: shown_path,
        slug: target.slug.clone(),
        base_url: target.base_url.clone(),
        exists: read.text.is_some(),
        changes,
        diff,
        file_hash: hash_of(read.text.as_deref().map(str::as_bytes)),
        plain_keys: plan.plain_keys.iter().map(|k| k.name.clone()).collect(),
        notes,
    };
    Ok(Computed { preview, read, plan, target, moved })
}

async fn target(engine: &Engine, req: &ClientRequest) -> Result<Target, EngineError> {
    let client = req.client;
    let slug = match &req.slug {
        Some(s) => s.clone(),
        None => {
            let fits: Vec<_> =
                engine.connection_list().await?.into_iter().filter(|c| client.speaks(&c.protocol)).collect();
            match fits.as_slice() {
                [one] => one.slug.clone(),
                _ => {
                    return Err(EngineError::Invalid(InvalidInput::new(
                        "slug",
                        format!("name the connection {client} should use ({} fit)", fits.len()),
                    )))
                }
            }
        }
    };
    let c = engine.connection_show(&slug).await?.connection;
    if !client.speaks(&c.protocol) {
        let speaks = client.protocol().unwrap_or("openai or anthropic");
        return Err(EngineError::Invalid(InvalidInput::new(
            "slug",
            format!("{client} speaks {speaks}; connection '{}' is {}", c.slug, c.protocol),
        )));
    }
    let port = match req.port {
        Some(p) => p,
        None => engine.relay_port().await?,
    };
    if port == 0 {
        return Err(EngineError::Invalid(InvalidInput::new(
            "relay_port",
            "port 0 means \"any free port\", which a client cannot call; set a real port (SWITCHYARD_RELAY_PORT or `switchyard settings relay-port N`) — nothing was written",
        )));
    }
    let mut base_url = format!("http://127.0.0.1:{port}/c/{}", c.slug);
    if client.wants_v1(&c.protocol) {
        base_url.push_str("/v1");
    }
    let token = engine.relay_token(false).await?;
    Ok(Target {
        slug: c.slug,
        protocol: c.protocol,
        base_url,
        token: token.expose().to_string(),
        model: c.models.first().cloned(),
        models: c.models,
    })
}

fn precondition(path: &Path, what: String) -> EngineError {
    EngineError::Precondition(format!("--move-key: {} {what} — nothing was written", path.display()))
}

/// The one key `--move-key` moves: refused when there is none, when the file holds different
/// keys, or when the key would stay somewhere in the file after set-up.
fn key_to_move(file: &dyn ConfigFile, plan: &Plan, path: &Path) -> Result<String, EngineError> {
    let values: BTreeSet<&str> = plan.plain_keys.iter().map(|k| k.value.as_str()).collect();
    let names = plan.plain_keys.iter().map(|k| k.name.as_str()).collect::<Vec<_>>().join(" and ");
    let key = match values.into_iter().collect::<Vec<_>>().as_slice() {
        [] => return Err(EngineError::Precondition(format!("--move-key: {} holds no provider key in plain text", path.display()))),
        [one] => one.to_string(),
        _ => {
            return Err(precondition(
                path,
                format!("holds different provider keys in {names}; --move-key moves one: keep one of them (add the other with `switchyard profile add`) and retry"),
            ))
        }
    };
    if let Some(at) = find_key(file, &plan.after, &key) {
        let (line, _) = line_column(&plan.after, at);
        return Err(precondition(
            path,
            format!("also holds the key outside {names} (line {line} after set-up); remove that copy and retry"),
        ));
    }
    Ok(key)
}

/// Where `key` is in `text`: a literal that decodes to it, or the key's characters anywhere.
fn find_key(file: &dyn ConfigFile, text: &str, key: &str) -> Option<usize> {
    let literal = file.literals(text).ok().and_then(|l| l.into_iter().find(|l| l.value == key).map(|l| l.span.start));
    literal.or_else(|| (key.len() >= 8).then(|| text.find(key)).flatten())
}

/// The kept original with every literal of `key` replaced by the placeholder: the new text,
/// `old` spots moved to their new offsets, and the new spots (offset, recipe).
#[allow(clippy::type_complexity)]
fn without_key(
    file: &dyn ConfigFile,
    kept: &str,
    key: &str,
    old: &[MovedSpot],
    path: &Path,
) -> Result<(String, Vec<MovedSpot>, Vec<(usize, String)>), EngineError> {
    let mut literals: Vec<_> = file.literals(kept).unwrap_or_default().into_iter().filter(|l| l.value == key).collect();
    literals.sort_by_key(|l| l.span.start);
    let (mut out, mut at, mut new) = (String::with_capacity(kept.len()), 0, vec![]);
    let mut shifted = old.to_vec();
    for l in &literals {
        let raw = &kept[l.span.clone()];
        let Some(recipe) = recipe_of(raw, key) else {
            let (line, _) = line_column(kept, l.span.start);
            return Err(precondition(path, format!("holds the key at line {line} in a form restore could not rebuild; write it as a plain string and retry")));
        };
        out.push_str(&kept[at..l.span.start]);
        new.push((out.len(), recipe));
        out.push_str(PLACEHOLDER);
        let grown = PLACEHOLDER.len() as isize - raw.len() as isize;
        for s in shifted.iter_mut().filter(|s| s.at >= l.span.end) {
            s.at = s.at.saturating_add_signed(grown);
        }
        at = l.span.end;
    }
    out.push_str(&kept[at..]);
    if let Some(at) = (key.len() >= 8).then(|| out.find(key)).flatten() {
        let (line, _) = line_column(&out, at);
        return Err(precondition(path, format!("holds the key at line {line} outside a string set-up can take it from (a comment?); remove it there and retry")));
    }
    Ok((out, shifted, new))
}

/// After the write: no copy of `key` in the file or the kept original, else say where it is.
fn verify_gone(
    file: &dyn ConfigFile,
    real: &Path,
    dir: &Path,
    key: &str,
    path: &Path,
    p: &ProfileView,
) -> Result<(), EngineError> {
    let now =
        config_read::read_bytes(real, path)?.map(|b| String::from_utf8_lossy(&b).into_owned()).unwrap_or_default();
    let kept = String::from_utf8_lossy(&backup::read_original(dir)?).into_owned();
    for (what, text) in [(path.display().to_string(), now), (format!("the kept original in {}", dir.display()), kept)] {
        if find_key(file, &text, key).is_some() {
            return Err(EngineError::Internal(format!(
                "the provider key is still in {what} after set-up; it is also in the keychain as profile '{}' — remove it from the file by hand",
                p.label
            )));
        }
    }
    Ok(())
}
