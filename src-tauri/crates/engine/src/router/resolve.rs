//! What a name in a relay path routes to ([`Router::resolve`]): a connection, or a pool (with the
//! member a `POOL@MEMBER` path names), looked up once per request. The relay asks this, then
//! routes the [`Resolved`] target; it never tries one kind and then the other itself.

use std::sync::Arc;

use switchyard_core::states::ProfileKind;
use switchyard_core::{ErrorCode, Protocol};

use crate::error::EngineError;
use crate::router::{PoolSnapshot, Router, Snapshot};

/// A name's routing target.
#[derive(Debug, Clone)]
pub enum Resolved {
    /// A connection (its snapshot).
    Connection(Arc<Snapshot>),
    /// A pool; `member`: the member a `POOL@MEMBER` path names (the request goes there only).
    Pool { pool: Arc<PoolSnapshot>, member: Option<String> },
}

impl Resolved {
    /// The dialect requests to it speak.
    pub fn protocol(&self) -> Protocol {
        match self {
            Resolved::Connection(s) => s.protocol,
            Resolved::Pool { pool, .. } => pool.protocol,
        }
    }

    /// The name the request's keys are computed under (a connection's slug, a pool's name).
    pub fn name(&self) -> &str {
        match self {
            Resolved::Connection(s) => &s.slug,
            Resolved::Pool { pool, .. } => &pool.name,
        }
    }

    /// Whether a request to it is forwarded as its body streams in (legacy with no chain:
    /// nothing in the body is read first). A pool always routes by the model and the
    /// conversation.
    pub fn forwards(&self) -> bool {
        match self {
            Resolved::Connection(s) => s.forwards(),
            Resolved::Pool { .. } => false,
        }
    }

    /// Whether requests to it may name their profile (`x-switchyard-profile`): a connection's
    /// only; a pool routes on the relay token.
    pub fn may_pin(&self) -> bool {
        matches!(self, Resolved::Connection(_))
    }

    /// Whether routing it may ask which official client sent the request (the client rule, core
    /// `may_serve`): only where something other than an API key can serve — a profile of the
    /// connection, a fallback hop's connection, a pool's members. A request to a connection of
    /// API keys only is never identified (issue 40: work only a feature needs runs only where
    /// the feature is configured). A pinned request is identified whatever this says.
    pub fn reads_client(&self) -> bool {
        match self {
            Resolved::Connection(s) => {
                !s.fallback.is_empty() || s.profiles.iter().any(|p| p.credential.kind != ProfileKind::ApiKey)
            }
            Resolved::Pool { .. } => true,
        }
    }

    /// The connection's snapshot, when it is one.
    pub fn snapshot(&self) -> Option<&Arc<Snapshot>> {
        match self {
            Resolved::Connection(s) => Some(s),
            Resolved::Pool { .. } => None,
        }
    }
}

impl Router {
    /// The connection or pool `name` (a path's first segment) routes to: a connection of that
    /// slug, else a pool of that name; `POOL@MEMBER` names a pool's member.
    /// (A pool's snapshot is boxed: its future is kilobytes, and a connection's request future,
    /// which hyper keeps per connection, would be sized by it.)
    pub async fn resolve(&self, name: &str) -> Result<Resolved, EngineError> {
        if let Some((pool, member)) = name.split_once('@') {
            return match Box::pin(self.pool_snapshot(pool)).await? {
                Some(pool) => Ok(Resolved::Pool { pool, member: Some(member.to_string()) }),
                None => Err(EngineError::not_found_pool(pool)),
            };
        }
        match self.snapshot(name).await {
            Ok(snapshot) => Ok(Resolved::Connection(snapshot)),
            Err(e) if e.code() == ErrorCode::NotFound => match Box::pin(self.pool_snapshot(name)).await? {
                Some(pool) => Ok(Resolved::Pool { pool, member: None }),
                None => Err(e),
            },
            Err(e) => Err(e),
        }
    }

    /// The models a `GET …/models` lists for `target` when the relay answers it itself: a routed
    /// connection's served models, a pool's members' — `None` for a legacy connection, whose
    /// listing passes through.
    pub async fn models(&self, target: &Resolved) -> Option<Vec<String>> {
        match target {
            Resolved::Connection(s) if s.lists_models() => Some(self.served_models(s)),
            Resolved::Connection(_) => None,
            Resolved::Pool { pool, .. } => Some(self.pool_models(pool).await),
        }
    }
}
