//! Reading a set-up back ([`status`]) and undoing it ([`restore`]): the kept original written
//! back byte for byte, moved keys put back from their profiles, or the file set-up created
//! removed (through a symlink: the link stays). When a moved key's profile was removed or its
//! key rotated, the original cannot be rebuilt: restore says so and writes nothing, and
//! `--force` writes the original with the placeholder where the key was.

use switchyard_engine::{Engine, EngineError};

use crate::backup::{self, hash_of, Manifest};
use crate::client::{Client, ClientHome};
use crate::config_file::in_file;
use crate::config_read::{self, real_path};
use crate::moved_key::{rebuild, rebuild_legacy, PLACEHOLDER};
use crate::views::{ClientRestoreReport, ClientStatus};

/// What `restore` did, and whether a moved key's placeholder was left in the file (`--force`
/// after the key's profile was removed or rotated).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Restored {
    pub report: ClientRestoreReport,
    pub placeholder_left: bool,
}

/// Whether `client` points at a Switchyard relay, at which connection, with the current token.
pub async fn status(engine: &Engine, client: Client, home: &ClientHome) -> Result<ClientStatus, EngineError> {
    let file = client.file();
    let path = home.config_path(client);
    let text = config_read::read_config(&path)?.text;
    let pointed = match &text {
        Some(t) => file.pointed(t).map_err(|e| in_file(e, &path))?,
        None => None,
    };
    let protocol = match &pointed {
        Some(p) => engine.connection_show(&p.slug).await.map(|d| d.connection.protocol).unwrap_or_default(),
        None => String::new(),
    };
    let plain = match &text {
        Some(t) => file.plain_keys(t, &protocol).map_err(|e| in_file(e, &path))?.into_iter().map(|k| k.name).collect(),
        None => vec![],
    };
    let token = engine.relay_token(false).await?;
    let restorable = backup::read_manifest(&backup::dir_for(engine.data_dir(), client.name(), &path))?.is_some();
    Ok(ClientStatus {
        client: client.name().to_string(),
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
/// (code `conflict`) when the file changed since set-up wrote it, and (code `precondition`)
/// when a moved key cannot be put back or the file is a link out of HOME, unless `force`.
/// Runs alone: a set-up or restore of the same file waits for it (`backup::lock`).
pub async fn restore(engine: &Engine, client: Client, home: &ClientHome, force: bool) -> Result<Restored, EngineError> {
    let path = home.config_path(client);
    let dir = backup::dir_for(engine.data_dir(), client.name(), &path);
    // One set-up or restore of a file at a time (a set-up racing this one would keep its own
    // original or write over the restored one).
    let _lock = backup::lock(&dir, &path).await?;
    let Some(manifest) = backup::read_manifest(&dir)? else {
        return Err(EngineError::NotFound { what: "client backup", name: client.name().to_string() });
    };
    let real = real_path(&path);
    if !force {
        config_read::check_link(&path, &real, &home.home)?;
    }
    let current = config_read::read_bytes(&real, &path)?;
    if !force && hash_of(current.as_deref()) != manifest.written_sha256 {
        return Err(EngineError::Changed(format!(
            "{} changed since Switchyard set it up; restore --force brings the original back anyway",
            path.display()
        )));
    }
    let expect = (!force).then_some(manifest.written_sha256.as_str());
    let report = ClientRestoreReport {
        client: client.name().to_string(),
        path: path.display().to_string(),
        restored: manifest.existed,
        removed: !manifest.existed,
    };
    if !manifest.existed {
        // The target of a link, not the link: a dangling link stays as it was.
        match std::fs::remove_file(&real) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(EngineError::Internal(format!("cannot remove {}: {e}", path.display())))
            }
            _ => {}
        }
        backup::remove(&dir)?;
        return Ok(Restored { report, placeholder_left: false });
    }
    let kept = backup::read_original(&dir)?;
    let moved = manifest.moved_profile.is_some() || !manifest.moved_keys.is_empty();
    let (bytes, placeholder_left) = match with_keys(engine, &manifest, &kept).await? {
        Some(original) if backup::sha256_hex(&original) == manifest.original_sha256 => (original, false),
        _ if !moved => {
            return Err(EngineError::Internal(format!(
                "the kept original of {} does not match its hash; left it in {}",
                path.display(),
                dir.display()
            )))
        }
        _ if force => (kept, true),
        _ => {
            return Err(EngineError::Precondition(format!(
                "the key moved out of {} is no longer the secret of its profile (the profile was removed or its key rotated), so the original cannot be rebuilt byte for byte; restore --force writes it back with {PLACEHOLDER} where the key was — nothing was written",
                path.display()
            )))
        }
    };
    backup::write_atomic(&real, &bytes, manifest.mode, expect)?;
    backup::remove(&dir)?;
    Ok(Restored { report, placeholder_left })
}

/// The kept original with every moved key put back from its profile; `None` when a profile or
/// its secret is gone, or a recipe does not fit the secret.
async fn with_keys(engine: &Engine, manifest: &Manifest, kept: &[u8]) -> Result<Option<Vec<u8>>, EngineError> {
    let mut text = String::from_utf8_lossy(kept).into_owned();
    let mut spots = manifest.moved_keys.clone();
    spots.sort_by_key(|s| std::cmp::Reverse(s.at));
    for spot in &spots {
        let Some(secret) = engine.profile_secret(&spot.profile).await? else { return Ok(None) };
        let Some(literal) = rebuild(&spot.recipe, secret.expose()) else { return Ok(None) };
        if text.get(spot.at..spot.at + PLACEHOLDER.len()) != Some(PLACEHOLDER) {
            return Ok(None);
        }
        text.replace_range(spot.at..spot.at + PLACEHOLDER.len(), &literal);
    }
    // Manifests written before spots existed: the key's characters replaced in place.
    if let Some(legacy) = manifest.moved_profile.as_ref().filter(|id| spots.iter().all(|s| &s.profile != *id)) {
        let Some(secret) = engine.profile_secret(legacy).await? else { return Ok(None) };
        text = rebuild_legacy(&text, secret.expose());
    }
    Ok(Some(text.into_bytes()))
}
