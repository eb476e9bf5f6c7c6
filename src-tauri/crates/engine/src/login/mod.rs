//! Owned logins (docs/design.md, section 14; invariants 21 and 22): a ChatGPT/Codex sign-in that
//! Switchyard holds and renews itself, so any client of an OpenAI connection can use the
//! subscription through the relay. Only OpenAI's: its sign-in is described as usable from other
//! tools; Anthropic's and Google's are for their own clients (those users have `token` and
//! `external` profiles).
//!
//! - `tokens.rs` — the keychain item `{access, refresh, expires_at, account_id, generation}` and
//!   the id token's claims.
//! - `endpoints.rs` — the issuer, token endpoint and backend (settings with real defaults).
//! - `token_endpoint.rs` — the HTTP calls: device code, poll, code exchange, refresh (classified
//!   by core `login.rs`).
//! - `sign_in.rs` — the device-code sign-in use cases.
//! - `browser.rs` — the browser (PKCE) sign-in: the authorize URL and the callback listener.
//! - `refresh.rs` — single-flight renewal across tasks and processes, compare-and-swap on the
//!   refresh token, crash recovery; what an attempt is sent with.
//! - `lock.rs` — the per-login lock file in `<data dir>/logins/`.
//!
//! What the router does with a login (proactive renewal before an attempt, one renewal and one
//! retry after a 401) is `router/login.rs`.

pub(crate) mod browser;
pub(crate) mod endpoints;
pub(crate) mod lock;
pub(crate) mod refresh;
pub(crate) mod sign_in;
pub(crate) mod token_endpoint;
pub(crate) mod tokens;

pub use browser::CALLBACK_PORT;
pub(crate) use endpoints::EndpointMoved;
pub use endpoints::{LoginEndpoints, CLIENT_ID, DEFAULT_ISSUER};
pub use lock::LOGINS_DIR;
pub(crate) use refresh::{Logins, NoLogin, Renewal, Trigger};
pub use token_endpoint::DeviceCode;
