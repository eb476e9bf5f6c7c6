//! `POST /console/api/call/{command}`: the desktop's IPC commands over HTTP. `{command}` is the
//! Tauri command's name and the body its arguments as the generated bindings send them (a JSON
//! object, camelCase keys); the answer is the command's result as JSON, or its error in the IPC
//! shape (`{code, message, gates}`) with the code's HTTP status. One engine call per command —
//! the same as the desktop's `src-tauri/src/commands/` — run as the signed-in admin
//! (`switchyard_engine::acting_as`: every change is an audit row naming `user:<name>`).
//!
//! What only the desktop does is not here (the console does not show it): the relay's own token
//! and port, this machine's client set-up, autostart, import/export files, a login's sign-in in a
//! local browser or terminal. Verification runs to its end and answers with its report (no
//! progress events over HTTP).

use std::sync::Arc;

use http::{Request, StatusCode};
use hyper::body::Incoming;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Map, Value};
use switchyard_engine::{
    acting_as, AffinityMode, CapKind, ConnectionEdit, Engine, EngineError, ErrorCode, IpcError, LimitInput,
    NewConnection, NewCredential, NewProfile, OrderEntry, ProfileEdit, RelayUserInput, Secret, Strategy, UsageBy,
};

use super::session::{csrf_of, csrf_refused, refused};
use crate::body::client_body::{json as json_response, Response};
use crate::state::RelayState;

pub(super) async fn call(state: &Arc<RelayState>, name: &str, req: Request<Incoming>) -> Response {
    let engine = state.router.engine().clone();
    let Some(cookie) = super::cookie(req.headers()) else { return refused() };
    let caller = match engine.console_caller(&cookie).await {
        Ok(Some(c)) => c,
        Ok(None) => return refused(),
        Err(e) => return crate::reply::neutral_engine_error(&e),
    };
    if !csrf_of(req.headers()).is_some_and(|c| caller.csrf_matches(c)) {
        return csrf_refused();
    }
    let Some(body) = super::body_of(req).await else {
        return failure(StatusCode::PAYLOAD_TOO_LARGE, ErrorCode::Invalid, "the request body is too large".into());
    };
    let args: Map<String, Value> = if body.is_empty() {
        Map::new()
    } else {
        match serde_json::from_slice(&body) {
            Ok(Value::Object(m)) => m,
            _ => {
                return failure(
                    StatusCode::BAD_REQUEST,
                    ErrorCode::Invalid,
                    "the arguments must be a JSON object".into(),
                )
            }
        }
    };
    let args = Args(args);
    match acting_as(caller.actor(), dispatch(&engine, name, &args)).await {
        Ok(Some(value)) => json_response(StatusCode::OK, &value),
        Ok(None) => {
            failure(StatusCode::NOT_FOUND, ErrorCode::NotFound, format!("the console has no command {name:.60}"))
        }
        Err(Failure::Engine(e)) => engine_failure(e),
        Err(Failure::Args(why)) => failure(StatusCode::BAD_REQUEST, ErrorCode::Invalid, why),
    }
}

enum Failure {
    Engine(EngineError),
    Args(String),
}

impl From<EngineError> for Failure {
    fn from(e: EngineError) -> Self {
        Failure::Engine(e)
    }
}

/// A command's arguments.
struct Args(Map<String, Value>);

impl Args {
    /// Argument `key` (camelCase, as the bindings send it); absent or `null` reads as JSON `null`.
    fn get<T: DeserializeOwned>(&self, key: &str) -> Result<T, Failure> {
        let value = self.0.get(key).cloned().unwrap_or(Value::Null);
        serde_json::from_value(value).map_err(|e| Failure::Args(format!("argument {key}: {e}")))
    }

    fn text(&self, key: &str) -> Result<String, Failure> {
        self.get::<String>(key)
    }

    /// A secret argument: handed to the engine as a [`Secret`], never kept or echoed.
    fn secret(&self, key: &str) -> Result<Option<Secret>, Failure> {
        Ok(self.get::<Option<String>>(key)?.map(Secret::new))
    }
}

fn to_value<T: Serialize>(v: T) -> Result<Option<Value>, Failure> {
    serde_json::to_value(v).map(Some).map_err(|e| Failure::Engine(EngineError::Internal(e.to_string())))
}

/// One command: `Ok(None)` when the console has no such command.
async fn dispatch(engine: &Arc<Engine>, name: &str, a: &Args) -> Result<Option<Value>, Failure> {
    match name {
        "app_info" => to_value(json!({"version": env!("CARGO_PKG_VERSION"), "data_dir": "team relay"})),
        // Connections and their keys.
        "list_connections" => to_value(engine.connection_overview().await?),
        "connection_show" => to_value(engine.connection_show(&a.text("slug")?).await?),
        "connection_add" => {
            let input: NewConnection = a.get("input")?;
            to_value(engine.connection_add(input, a.secret("secret")?).await?)
        }
        "connection_edit" => {
            let edit: ConnectionEdit = a.get("edit")?;
            to_value(engine.connection_edit(&a.text("slug")?, edit).await?)
        }
        "connection_remove" => to_value(engine.connection_remove(&a.text("slug")?).await?),
        "profile_add" => {
            let input: NewProfile = a.get("input")?;
            let credential: Option<NewCredential> = a.get("credential")?;
            let secret = a.secret("secret")?;
            to_value(engine.profile_add_kind(&a.text("slug")?, input, credential.unwrap_or_default(), secret).await?)
        }
        "profile_edit" => {
            let edit: ProfileEdit = a.get("edit")?;
            to_value(engine.profile_edit(&a.text("slug")?, &a.text("profile")?, edit).await?)
        }
        "profile_reorder" => {
            let order: Vec<OrderEntry> = a.get("order")?;
            to_value(engine.profile_reorder(&a.text("slug")?, &order).await?)
        }
        "profile_rotate" => {
            let secret = a.secret("secret")?.ok_or_else(|| Failure::Args("argument secret: missing".into()))?;
            let expires: Option<String> = a.get("expires")?;
            let (slug, profile) = (a.text("slug")?, a.text("profile")?);
            to_value(engine.profile_rotate_until(&slug, &profile, secret, expires.as_deref()).await?)
        }
        "profile_remove" => to_value(engine.profile_remove(&a.text("slug")?, &a.text("profile")?).await?),
        "profile_login_command" => to_value(engine.profile_login_command(&a.text("slug")?, &a.text("profile")?).await?),
        "profile_check_login" => to_value(engine.profile_login_finished(&a.text("slug")?, &a.text("profile")?).await?),
        // Verification and routing.
        "verify" => {
            let profile: Option<String> = a.get("profile")?;
            let deep: Option<bool> = a.get("deep")?;
            to_value(engine.verify(&a.text("slug")?, profile.as_deref(), deep.unwrap_or(false), &|_| {}).await?)
        }
        "routing_status" => to_value(engine.routing_status(&a.text("slug")?).await?),
        "routing_activate" => {
            let mode: Strategy = a.get("mode")?;
            let actor = engine.acting_actor();
            to_value(engine.routing_activate(&a.text("slug")?, mode, &actor).await?)
        }
        "routing_deactivate" => to_value(engine.routing_deactivate(&a.text("slug")?).await?),
        "routing_affinity" => {
            let mode: AffinityMode = a.get("mode")?;
            let window: Option<i32> = a.get("windowMin")?;
            to_value(engine.set_affinity(&a.text("slug")?, mode, window.map(i64::from)).await?)
        }
        "health_reset" => {
            let model: Option<String> = a.get("model")?;
            engine.health_reset(&a.text("slug")?, &a.text("profile")?, model.as_deref()).await?;
            to_value(())
        }
        "fallback_status" => to_value(engine.fallback_status(&a.text("slug")?).await?),
        "key_checks" => to_value(engine.reverify_plan(&a.text("slug")?).await?),
        "quota" => to_value(engine.quota(&a.text("slug")?).await?),
        // Pools.
        "pool_list" => to_value(engine.pool_list().await?),
        "pool_status" => to_value(engine.pool_status(&a.text("pool")?).await?),
        "pool_add" => {
            let members: Vec<String> = a.get("members")?;
            to_value(engine.pool_add(&a.text("pool")?, &a.text("protocol")?, &members).await?)
        }
        "pool_edit" => {
            let members: Vec<String> = a.get("members")?;
            let revision: Option<i32> = a.get("ifRevision")?;
            to_value(engine.pool_edit(&a.text("pool")?, &members, revision.map(i64::from)).await?)
        }
        "pool_remove" => {
            engine.pool_remove(&a.text("pool")?).await?;
            to_value(())
        }
        "pool_activate" => {
            let mode: Strategy = a.get("mode")?;
            to_value(engine.pool_activate(&a.text("pool")?, mode).await?)
        }
        "pool_deactivate" => to_value(engine.pool_deactivate(&a.text("pool")?).await?),
        // The ledger: attempts, usage.
        "attempts" => {
            let limit: i32 = a.get("limit")?;
            to_value(engine.attempts(&a.text("slug")?, i64::from(limit)).await?)
        }
        "attempts_of" => {
            let limit: i32 = a.get("limit")?;
            let user: Option<String> = a.get("user")?;
            to_value(engine.attempts_of(&a.text("slug")?, i64::from(limit), user.as_deref()).await?)
        }
        "usage_chart" => {
            let days: i32 = a.get("days")?;
            to_value(engine.usage_chart(&a.text("slug")?, i64::from(days)).await?)
        }
        "usage_table" => {
            let since: Option<String> = a.get("since")?;
            let by = UsageBy::parse(&a.text("by")?).map_err(|e| Failure::Args(e.to_string()))?;
            to_value(engine.usage(&a.text("slug")?, since.as_deref(), by).await?)
        }
        // Limits.
        "connection_limits" => to_value(engine.connection_limits(&a.text("slug")?).await?),
        "connection_cap_set" => {
            let kind: CapKind = a.get("kind")?;
            let amount: f64 = a.get("amount")?;
            to_value(engine.connection_cap_set(&a.text("slug")?, kind, amount).await?)
        }
        "limit_list" => to_value(engine.limit_list().await?),
        "limit_status" => {
            let scope: Option<String> = a.get("scope")?;
            to_value(engine.limit_status(scope.as_deref()).await?)
        }
        "limit_set" => {
            let input: LimitInput = a.get("input")?;
            to_value(engine.limit_set_input(&input).await?)
        }
        "limit_remove" => {
            engine.limit_remove(&a.text("id")?).await?;
            to_value(())
        }
        // Relay users and the audit.
        "relay_user_list" => to_value(engine.relay_user_list().await?),
        "relay_user_add" => {
            let input: RelayUserInput = a.get("input")?;
            to_value(engine.relay_user_add_input(&a.text("name")?, &input).await?)
        }
        "relay_user_edit" => {
            let input: RelayUserInput = a.get("input")?;
            let revision: Option<i32> = a.get("ifRevision")?;
            to_value(engine.relay_user_edit_input(&a.text("name")?, &input, revision.map(i64::from)).await?)
        }
        "relay_user_rotate" => to_value(engine.relay_user_rotate_token(&a.text("name")?).await?),
        "relay_user_revoke" => {
            engine.relay_user_revoke(&a.text("name")?).await?;
            to_value(())
        }
        "audit_list" => {
            let since: Option<String> = a.get("since")?;
            let user: Option<String> = a.get("user")?;
            to_value(engine.audit_list(since.as_deref(), user.as_deref()).await?)
        }
        _ => Ok(None),
    }
}

/// A refusal of the API itself, in the IPC error shape.
fn failure(status: StatusCode, code: ErrorCode, message: String) -> Response {
    answer(status, &IpcError { code, message, gates: None })
}

/// An engine error in the IPC error shape (the desktop's own type), with its code's HTTP status.
fn engine_failure(e: EngineError) -> Response {
    let status = StatusCode::from_u16(e.code().http_status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    answer(status, &IpcError::from(e))
}

fn answer(status: StatusCode, error: &IpcError) -> Response {
    match serde_json::to_value(error) {
        Ok(value) => json_response(status, &value),
        Err(_) => crate::body::client_body::bare(StatusCode::INTERNAL_SERVER_ERROR),
    }
}
