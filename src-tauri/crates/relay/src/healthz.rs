//! `GET /healthz`: `{"ok":true}` for anyone; with the relay token, also each connection's
//! routing mode and state (never secrets).

use axum::http::{HeaderMap, Method};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::json;

use crate::state::RelayState;

pub async fn healthz(state: &RelayState, method: &Method, headers: &HeaderMap) -> Response {
    if let Err(refused) = crate::guard::before_auth(method, headers) {
        return refused.response();
    }
    if !state.is_authorized(headers) {
        return Json(json!({"ok": true})).into_response();
    }
    let connections = match state.router.engine().connection_list().await {
        Ok(list) => list
            .into_iter()
            .map(|c| json!({"slug": c.slug, "protocol": c.protocol, "mode": c.routing_mode, "state": c.routing_state}))
            .collect::<Vec<_>>(),
        Err(_) => vec![],
    };
    Json(json!({"ok": true, "connections": connections})).into_response()
}
