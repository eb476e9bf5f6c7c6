//! Subcommands as thin adapters: parse → one engine call → [`Output`].

use switchyard_engine::{ConnectionEdit, Engine, EngineError, NewConnection, NewProfile, ProfileEdit};

use crate::args::{ConnectionCmd, HealthCmd, ProfileCmd, RoutingCmd};
use crate::output::Output;
use crate::secret_input::{read_optional, read_required};

pub async fn connection(engine: &Engine, cmd: ConnectionCmd) -> Result<Output, EngineError> {
    Ok(match cmd {
        ConnectionCmd::Add { slug, protocol, base_url, models, mappings, headers, secret } => {
            let secret = read_optional(&secret)?;
            let new = NewConnection { slug, protocol, base_url, models, mappings, headers };
            Output::Connection(engine.connection_add(new, secret).await?)
        }
        ConnectionCmd::List => Output::Connections(engine.connection_list().await?),
        ConnectionCmd::Show { slug } => Output::Connection(engine.connection_show(&slug).await?),
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
                    return Ok(Output::Connection(engine.connection_show(&slug).await?));
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
            Output::ConnectionEdited(engine.connection_edit(&slug, edit).await?)
        }
        ConnectionCmd::Remove { slug } => {
            let what = format!("connection '{slug}'");
            Output::Removed(engine.connection_remove(&slug).await?, what)
        }
    })
}

pub async fn profile(engine: &Engine, cmd: ProfileCmd) -> Result<Output, EngineError> {
    Ok(match cmd {
        ProfileCmd::Add { slug, label, weight, priority, secret } => {
            let secret = read_required(&secret)?;
            Output::Profile(engine.profile_add(&slug, NewProfile { label, weight, priority }, secret).await?, "added")
        }
        ProfileCmd::List { slug } => Output::Profiles(engine.profile_list(&slug).await?),
        ProfileCmd::Edit { slug, profile, label, weight, priority, enable, disable, primary, if_revision } => {
            let enabled = if enable {
                Some(true)
            } else if disable {
                Some(false)
            } else {
                None
            };
            let edit = ProfileEdit { label, weight, priority, enabled, make_primary: primary, if_revision };
            Output::Profile(engine.profile_edit(&slug, &profile, edit).await?, "updated")
        }
        ProfileCmd::Rotate { slug, profile, secret } => {
            let secret = read_required(&secret)?;
            Output::Profile(engine.profile_rotate(&slug, &profile, secret).await?, "replaced the credential of")
        }
        ProfileCmd::Remove { slug, profile } => {
            let what = format!("profile '{profile}'");
            Output::Removed(engine.profile_remove(&slug, &profile).await?, what)
        }
    })
}

pub async fn routing(engine: &Engine, cmd: RoutingCmd) -> Result<Output, EngineError> {
    Ok(Output::Routing(match cmd {
        RoutingCmd::Status { slug } => {
            let status = engine.routing_status(&slug).await?;
            return Ok(Output::RoutingWithFallback(status, engine.fallback_status(&slug).await?));
        }
        RoutingCmd::Fallback { slug, clear: true, .. } => {
            return Ok(Output::Fallback(engine.fallback_clear(&slug).await?))
        }
        RoutingCmd::Fallback { slug, hops, .. } => {
            return Ok(Output::Fallback(engine.fallback_set(&slug, &hops).await?))
        }
        RoutingCmd::FallbackActivate { slug } => return Ok(Output::Fallback(engine.fallback_activate(&slug).await?)),
        RoutingCmd::FallbackDeactivate { slug } => {
            return Ok(Output::Fallback(engine.fallback_deactivate(&slug).await?))
        }
        RoutingCmd::Activate { slug, mode } => engine.routing_activate(&slug, &mode, &actor()).await?,
        RoutingCmd::Deactivate { slug } => engine.routing_deactivate(&slug).await?,
        RoutingCmd::Affinity { slug, mode, window_min } => engine.set_affinity(&slug, &mode, window_min).await?,
        RoutingCmd::QuotaAware { slug, state, reserve_pct } => {
            engine.set_quota_aware(&slug, state == "on", reserve_pct).await?
        }
    }))
}

pub async fn health(engine: &Engine, cmd: HealthCmd) -> Result<Output, EngineError> {
    match cmd {
        HealthCmd::Reset { slug, profile, model } => {
            engine.health_reset(&slug, &profile, model.as_deref()).await?;
            Ok(Output::Routing(engine.routing_status(&slug).await?))
        }
    }
}

/// `settings [KEY VALUE]`: sets one value if given, then shows all.
pub async fn settings(engine: &Engine, key: Option<&str>, value: Option<&str>) -> Result<Output, EngineError> {
    const DAY_MS: i64 = 24 * 3600 * 1000;
    let number = |k: &str, v: &str| {
        v.parse::<i64>()
            .map_err(|_| EngineError::Invalid(switchyard_engine::InvalidInput::new(k, "must be a whole number")))
    };
    match (key, value) {
        (Some(k @ "evidence-max-age-days"), Some(days)) => {
            engine.set_max_evidence_age_ms(number(k, days)?.saturating_mul(DAY_MS)).await?
        }
        (Some(k @ "relay-port"), Some(port)) => engine.set_relay_port(number(k, port)?).await?,
        (Some("time-zone"), Some(name)) => engine.set_time_zone(name).await?,
        (Some(k @ "ledger-retention-rows"), Some(rows)) => engine.set_ledger_retention_rows(number(k, rows)?).await?,
        (Some(k), None) => {
            return Err(EngineError::Invalid(switchyard_engine::InvalidInput::new(k, "needs a value")));
        }
        _ => {}
    }
    let days = engine.max_evidence_age_ms().await? as f64 / DAY_MS as f64;
    Ok(Output::Settings(serde_json::json!({
        "evidence_max_age_days": days,
        "relay_port": engine.relay_port().await?,
        "time_zone": engine.time_zone().await?.name,
        "ledger_retention_rows": engine.ledger_retention_rows().await?,
        "data_dir": engine.data_dir().display().to_string(),
    })))
}

/// Who activated routing, for the record: the CLI and the OS user.
fn actor() -> String {
    let user = std::env::var("USER").or_else(|_| std::env::var("USERNAME")).unwrap_or_else(|_| "unknown".into());
    format!("cli:{user}")
}

fn non_empty(v: Vec<String>) -> Option<Vec<String>> {
    if v.is_empty() {
        None
    } else {
        Some(v)
    }
}
