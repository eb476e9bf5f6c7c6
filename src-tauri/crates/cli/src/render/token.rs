//! `switchyard relay token`: the relay's own credential, printed on request; `{"token"}`.

use serde::Serialize;

use super::Render;

#[derive(Debug, Serialize)]
pub struct RelayToken {
    pub token: String,
}

impl Render for RelayToken {
    fn text(&self) -> String {
        self.token.clone()
    }
}
