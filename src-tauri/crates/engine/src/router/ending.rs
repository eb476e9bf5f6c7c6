//! How a request's end reaches telemetry (`telemetry/`): a delivering attempt's row says so
//! itself (`Recording::ends_request`), a limit's refusal is a row that says so
//! (`admission.rs`); every other end — all attempts failed, no answer, nothing eligible, a
//! pool that could not take it — is told to the ledger's writer after the request's last row
//! ([`Router::tell_end`]). Nothing is told when telemetry is off (the run has no mark).

use std::sync::Arc;

use crate::router::route::Routed;
use crate::router::{RequestRun, Router, Snapshot};
use crate::telemetry::{Ending, RequestEnd, RequestMark, Told};

impl Router {
    /// Tells telemetry how `run` ended, unless its delivering row does.
    pub(super) fn tell_end<D, K>(&self, run: &RequestRun, routed: &Routed<D, K>) {
        let Some(mark) = run.mark.clone() else { return };
        let (ending, profile_id) = match routed {
            Routed::Delivered { .. } => return,
            Routed::Kept { route, .. } => (Ending::Failed, Some(route.profile_id.clone())),
            Routed::NoAnswer { route, .. } => (Ending::NoAnswer, Some(route.profile_id.clone())),
            Routed::Unavailable { .. } => (Ending::Refused, run.tried.last().cloned()),
        };
        let told = Told {
            snapshot: Some(run.snapshot.clone()),
            pool: run.hops.pool().map(|p| p.pool.clone()),
            mark,
            ends: Some(ending),
        };
        self.ledger.ended(RequestEnd {
            told,
            user: run.recorded.user.clone(),
            model: run.model.clone(),
            profile_id,
            failure: run.failed,
            ended_ms: self.engine.now_ms(),
        });
    }

    /// Tells telemetry of a request refused before it had a run (a pool that cannot take it).
    pub(super) fn tell_refused(&self, refused: Refused<'_>) {
        let Some(mark) = refused.mark else { return };
        let told = Told {
            snapshot: refused.snapshot.cloned(),
            pool: refused.pool.map(str::to_string),
            mark,
            ends: Some(Ending::Refused),
        };
        self.ledger.ended(RequestEnd {
            told,
            user: refused.user.map(str::to_string),
            model: refused.model.map(str::to_string),
            profile_id: None,
            failure: None,
            ended_ms: self.engine.now_ms(),
        });
    }
}

/// A request refused before its run started.
pub(super) struct Refused<'a> {
    pub mark: Option<RequestMark>,
    pub snapshot: Option<&'a Arc<Snapshot>>,
    pub pool: Option<&'a str>,
    pub user: Option<&'a str>,
    pub model: Option<&'a str>,
}
