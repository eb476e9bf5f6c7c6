//! The bodies the relay moves: a request's body on its way upstream (`outgoing.rs`: taken
//! whole, or forwarded frame by frame with a copy kept aside, whose buffers `copy_buffers.rs`
//! reuses), an answer's body on its way to the client (`relayed.rs`: the held bytes, then
//! the upstream stream as it arrives, watched for usage and errors), and the one body type
//! every response of the relay carries (`client_body.rs`); a body read whole (`whole.rs`).

pub(crate) mod client_body;
pub(crate) mod copy_buffers;
pub(crate) mod outgoing;
pub(crate) mod relayed;
pub(crate) mod whole;

/// Bodies declared at most this long are taken whole before forwarding (`outgoing.rs`), and
/// their copies' buffers are not kept for reuse (`copy_buffers.rs`).
pub(crate) const SMALL_BODY: u64 = 64 * 1024;
