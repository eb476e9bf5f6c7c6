//! Subcommands as thin adapters: parse → one engine call → [`Output`].

use switchyard_engine::{
    ConnectionEdit, Engine, EngineError, NewConnection, NewCredential, NewProfile, ProfileEdit, UserSetting,
};

use crate::args::{ConnectionCmd, HealthCmd, ProfileCmd, RoutingCmd};
use crate::output::Output;
use crate::render::connection::{ConnectionEdited, Removed};
use crate::render::profile::ProfileChanged;
use crate::render::routing::RoutingReport;
use crate::secret_input::{read_optional, read_required};

pub async fn connection(engine: &Engine, cmd: ConnectionCmd) -> Result<Output, EngineError> {
    Ok(match cmd {
        ConnectionCmd::Add { slug, protocol, base_url, models, mappings, headers, secret } => {
            let secret = read_optional(&secret)?;
            let new = NewConnection { slug, protocol, base_url, models, mappings, headers };
            Output::view(engine.connection_add(new, secret).await?)
        }
        ConnectionCmd::List => Output::view(engine.connection_list().await?),
        ConnectionCmd::Show { slug } => Output::view(engine.connection_show(&slug).await?),
        ConnectionCmd::Edit {
            slug,
            protocol,
            base_url,
            models,
            mappings,
            headers,
            clear_headers,
            first_byte_timeout_secs,
            if_revision,
        } => {
            if let Some(secs) = first_byte_timeout_secs {
                engine.set_first_byte_timeout(&slug, secs).await?;
                let only_timeout = protocol.is_none()
                    && base_url.is_none()
                    && models.is_empty()
                    && mappings.is_empty()
                    && headers.is_empty()
                    && !clear_headers;
                if only_timeout {
                    return Ok(Output::view(engine.connection_show(&slug).await?));
                }
            }
            let edit = ConnectionEdit {
                protocol,
                base_url,
                models: non_empty(models),
                mappings: non_empty(mappings),
                headers: if clear_headers { Some(vec![]) } else { non_empty(headers) },
                if_revision,
            };
            Output::view(ConnectionEdited(engine.connection_edit(&slug, edit).await?))
        }
        ConnectionCmd::Remove { slug } => {
            let removal = engine.connection_remove(&slug).await?;
            Output::view(Removed { what: format!("connection '{slug}'"), removal })
        }
    })
}

pub async fn profile(engine: &Engine, cmd: ProfileCmd, json: bool) -> Result<Output, EngineError> {
    Ok(match cmd {
        ProfileCmd::Add { slug, label, weight, priority, kind, client, expires, secret } => {
            let secret = read_optional(&secret)?;
            let credential = NewCredential { kind, client, expires_at: expires };
            let new = NewProfile { label, weight, priority };
            let profile = engine.profile_add_kind(&slug, new, credential, secret).await?;
            Output::view(ProfileChanged { verb: "added", profile })
        }
        ProfileCmd::Login { slug, profile, kind, weight, priority, args } => {
            if engine.login_is_owned(&slug, &profile, kind.as_deref()).await? {
                let new = NewProfile { label: profile, weight, priority };
                crate::login_cmd::run_owned(engine, &slug, new).await?
            } else {
                crate::login_cmd::run(engine, &slug, &profile, &args, json).await?
            }
        }
        ProfileCmd::List { slug } => Output::view(engine.profile_list(&slug).await?),
        ProfileCmd::Edit { slug, profile, label, weight, priority, enable, disable, primary, if_revision } => {
            let enabled = if enable {
                Some(true)
            } else if disable {
                Some(false)
            } else {
                None
            };
            let edit = ProfileEdit { label, weight, priority, enabled, make_primary: primary, if_revision };
            Output::view(ProfileChanged { verb: "updated", profile: engine.profile_edit(&slug, &profile, edit).await? })
        }
        ProfileCmd::Rotate { slug, profile, expires, secret } => {
            let secret = read_required(&secret)?;
            let profile = engine.profile_rotate_until(&slug, &profile, secret, expires.as_deref()).await?;
            Output::view(ProfileChanged { verb: "replaced the credential of", profile })
        }
        ProfileCmd::Remove { slug, profile } => {
            let removal = engine.profile_remove(&slug, &profile).await?;
            Output::view(Removed { what: format!("profile '{profile}'"), removal })
        }
    })
}

pub async fn routing(engine: &Engine, cmd: RoutingCmd) -> Result<Output, EngineError> {
    Ok(match cmd {
        RoutingCmd::Status { slug } if engine.is_pool(&slug).await? => Output::view(engine.pool_status(&slug).await?),
        RoutingCmd::Status { slug } => {
            let routing = engine.routing_status(&slug).await?;
            Output::view(RoutingReport { routing, fallback: engine.fallback_status(&slug).await? })
        }
        RoutingCmd::Fallback { slug, clear: true, .. } => Output::view(engine.fallback_clear(&slug).await?),
        RoutingCmd::Fallback { slug, hops, .. } => Output::view(engine.fallback_set(&slug, &hops).await?),
        RoutingCmd::FallbackActivate { slug } => Output::view(engine.fallback_activate(&slug).await?),
        RoutingCmd::FallbackDeactivate { slug } => Output::view(engine.fallback_deactivate(&slug).await?),
        RoutingCmd::Activate { slug, mode } => Output::view(engine.routing_activate(&slug, mode, &actor()).await?),
        RoutingCmd::Deactivate { slug } => Output::view(engine.routing_deactivate(&slug).await?),
        RoutingCmd::Affinity { slug, mode, window_min } => {
            Output::view(engine.set_affinity(&slug, mode, window_min).await?)
        }
        RoutingCmd::QuotaAware { slug, state, reserve_pct } => {
            Output::view(engine.set_quota_aware(&slug, state == "on", reserve_pct).await?)
        }
        RoutingCmd::CliBackend { slug, state: None, max_concurrent: None } => {
            Output::view(engine.cli_backend(&slug).await?)
        }
        RoutingCmd::CliBackend { slug, state, max_concurrent } => {
            Output::view(engine.set_cli_backend(&slug, state.map(|s| s == "on"), max_concurrent).await?)
        }
    })
}

pub async fn health(engine: &Engine, cmd: HealthCmd) -> Result<Output, EngineError> {
    match cmd {
        HealthCmd::Reset { slug, profile, model } => {
            engine.health_reset(&slug, &profile, model.as_deref()).await?;
            Ok(Output::view(engine.routing_status(&slug).await?))
        }
    }
}

/// `settings [KEY VALUE]`: sets one value if given, then shows all.
pub async fn settings(engine: &Engine, key: Option<&str>, value: Option<&str>) -> Result<Output, EngineError> {
    if let Some(name) = key {
        let which = UserSetting::from_name(name)
            .ok_or_else(|| EngineError::Invalid(switchyard_engine::InvalidInput::new(name, "is not a setting")))?;
        let value =
            value.ok_or_else(|| EngineError::Invalid(switchyard_engine::InvalidInput::new(name, "needs a value")))?;
        engine.set_user_setting(which, value).await?;
    }
    Ok(Output::view(engine.settings_view().await?))
}

/// Who activated routing, for the record: the CLI and the OS user.
fn actor() -> String {
    format!("cli:{}", os_user())
}

/// The name the OS user database has for the user running the command (`$USER` is often
/// unset in CI shells and under service managers); `uid:N` when the uid has no name there.
fn os_user() -> String {
    match whoami::fallible::username() {
        Ok(name) if !name.is_empty() => name,
        #[cfg(unix)]
        _ => format!("uid:{}", rustix::process::geteuid().as_raw()),
        #[cfg(not(unix))]
        _ => std::env::var("USERNAME").unwrap_or_else(|_| "unknown".into()),
    }
}

fn non_empty(v: Vec<String>) -> Option<Vec<String>> {
    if v.is_empty() {
        None
    } else {
        Some(v)
    }
}
