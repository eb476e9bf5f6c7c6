//! A forwarded request's keys, computed after its answer on the ledger's writer ([`DeferredKeys`]):
//! legacy forwarding reads no body before it goes upstream, so the turn, conversation and session
//! its attempt row carries ([`LedgerKeys`]) are read from the body's copy off the request path.

/// The keys a deferred computation gives an attempt row.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LedgerKeys {
    pub turn: String,
    pub conversation: Option<String>,
    pub session: Option<String>,
}

/// Computes a request's [`LedgerKeys`] (from its body, which it holds) on the ledger's writer.
pub struct DeferredKeys(pub Box<dyn FnOnce() -> LedgerKeys + Send + Sync>);

impl DeferredKeys {
    /// Runs the computation.
    pub(crate) fn compute(self) -> LedgerKeys {
        (self.0)()
    }
}

impl std::fmt::Debug for DeferredKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("DeferredKeys")
    }
}
