//! `GET /healthz`: `{"ok":true}` for anyone; with the relay token, also each connection's
//! routing mode and state (never secrets).

use std::sync::Arc;

use axum::extract::State;
use axum::http::HeaderMap;
use axum::Json;
use serde_json::{json, Value};

use crate::auth::is_authorized;
use crate::state::RelayState;

pub async fn healthz(State(state): State<Arc<RelayState>>, headers: HeaderMap) -> Json<Value> {
    if !is_authorized(&headers, &state.token) {
        return Json(json!({"ok": true}));
    }
    let connections = match state.router.engine().connection_list().await {
        Ok(list) => list
            .into_iter()
            .map(|c| json!({"slug": c.slug, "protocol": c.protocol, "mode": c.routing_mode, "state": c.routing_state}))
            .collect::<Vec<_>>(),
        Err(_) => vec![],
    };
    Json(json!({"ok": true, "connections": connections}))
}
