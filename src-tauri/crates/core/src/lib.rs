//! Pure domain of Switchyard: the words of docs/design.md ("Words") as types, input validation and the
//! basis fingerprint. No async, no I/O, no clock reads: callers pass time in.

pub mod basis;
pub mod body_skim;
pub mod code;
pub mod connection;
pub mod conversation;
pub mod credential_health;
pub mod header;
mod hex_text;
pub mod limit;
pub mod login;
pub mod lru;
pub mod portable;
pub mod profile;
pub mod prompt_cache;
pub mod routing;
pub mod secret_shape;
pub mod states;
pub mod tag;
pub mod turn;
pub mod validate;

pub use basis::BasisFingerprint;
pub use code::ErrorCode;
pub use connection::{Protocol, RoutingMode, RoutingState};
pub use header::Header;
pub use validate::InvalidInput;
