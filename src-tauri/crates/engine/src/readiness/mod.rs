//! Whether a connection may route, and why: readiness per profile, the evidence that
//! test/discovery records (`verify.rs`) and its background renewal (`reverify.rs`),
//! activation behind the gates and suspension, imported modes waiting for their gates
//! (`pending.rs`), fallback chains gated the same way, and circuits written through to the store.

pub(crate) mod activation;
pub(crate) mod circuits;
pub(crate) mod evidence;
pub(crate) mod fallback;
pub(crate) mod gates;
pub(crate) mod pending;
pub(crate) mod pools;
pub(crate) mod reverify;
pub(crate) mod verify;
