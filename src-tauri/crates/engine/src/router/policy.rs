//! What kind of request a run holds, decided once ([`Policy::decide`], at its start and again
//! when it enters a hop) and asked by the loop and by selection — never re-derived from the
//! request's parts: a request naming its external login ([`Policy::Pinned`]), a legacy one
//! ([`Policy::Legacy`]), or one routed among the connection's keys ([`Policy::Routed`], with
//! the profile a continued Responses answer pins it to). Where it may go when its connection
//! cannot serve it is [`Hops`]: nowhere, the connection's active fallback chain, or the other
//! members of its pool. The counters the planner bounds are [`Counts`].

use std::sync::Arc;

use switchyard_core::routing::{FallbackKind, Hop, Strategy};

use crate::router::{Pin, PoolRoute, Snapshot};

/// How one request is routed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Policy {
    /// The request names its profile (`x-switchyard-profile`: an official CLI's own login run by
    /// `switchyard exec`): one attempt there with the client's own credential, nothing changed,
    /// no other account.
    Pinned(Pin),
    /// Legacy routing: the primary key only, one attempt per connection, the answer passed on as
    /// it comes (the connection is legacy, suspended, or the request names no model).
    Legacy,
    /// Balanced or priority routing among the connection's eligible keys. `continuing`: the
    /// profile that produced the response this request continues (`previous_response_id`), the
    /// only one it may go to.
    Routed { strategy: Strategy, continuing: Option<String> },
}

impl Policy {
    /// The policy of a request on `snapshot` for `model`, naming `pinned` (a profile id or label)
    /// and continuing a response `continuing` produced. The one place a request's kind is decided.
    pub(crate) fn decide(
        snapshot: &Snapshot,
        model: Option<&str>,
        pinned: Option<Pin>,
        continuing: Option<String>,
    ) -> Policy {
        if let Some(pin) = pinned {
            return Policy::Pinned(pin);
        }
        match (snapshot.strategy, model) {
            (Some(strategy), Some(_)) => Policy::Routed { strategy, continuing },
            _ => Policy::Legacy,
        }
    }

    pub(crate) fn is_legacy(&self) -> bool {
        matches!(self, Policy::Legacy)
    }

    /// The request makes one attempt on its connection: legacy (one key), or pinned (one
    /// account's credential).
    pub(crate) fn makes_one_attempt(&self) -> bool {
        matches!(self, Policy::Legacy | Policy::Pinned(_))
    }

    /// Whether selection may look further than this connection when it cannot serve: never for a
    /// request naming its profile (no other account may take it), else when `hops` lead somewhere.
    pub(crate) fn may_fall_back(&self, hops: &Hops) -> bool {
        !matches!(self, Policy::Pinned(_)) && hops.has_next()
    }

    /// Whether an attempt passes the answer through as it comes (no stream held until its first
    /// content, no model renamed): legacy outside a pool, and a pinned request. A pool's legacy
    /// member is routed like any member (a failure before output may hand the turn over).
    pub(crate) fn passes_through(&self, hops: &Hops) -> bool {
        match self {
            Policy::Pinned(_) => true,
            Policy::Legacy => !matches!(hops, Hops::Pool(_)),
            Policy::Routed { .. } => false,
        }
    }

    /// Whether the answer goes back exactly as legacy sends it (no `x-switchyard-*` headers):
    /// a legacy request that stayed on its own connection, outside a pool.
    pub(crate) fn answers_as_legacy(&self, hops: &Hops) -> bool {
        self.is_legacy() && !hops.hopped() && !matches!(hops, Hops::Pool(_))
    }

    /// The credential the client carries when this request names its login (a pinned request):
    /// a failure is held against the login only when that credential is the login's own —
    /// a refusal of a credential the relay did not choose says nothing of the login it was sent
    /// under, and holding it would let any token holder lock another person's login out.
    /// `None`: the relay chose the key, and its failures are the key's.
    pub(crate) fn client_credential(&self) -> Option<&Pin> {
        match self {
            Policy::Pinned(pin) => Some(pin),
            _ => None,
        }
    }

    /// Whether output of this request commits its turn (and teaches the key's token load): every
    /// request but legacy's, which keeps no binding.
    pub(crate) fn commits(&self) -> bool {
        !self.is_legacy()
    }

    /// The profile a continued response pins the request to.
    pub(crate) fn continuing(&self) -> Option<&str> {
        match self {
            Policy::Routed { continuing, .. } => continuing.as_deref(),
            _ => None,
        }
    }
}

/// Where a request may go when its connection has no eligible key for it (invariants 17, 24).
#[derive(Debug)]
pub(crate) enum Hops {
    /// Nowhere: no active chain, or the request names no model.
    None,
    /// The active fallback chain of the connection the request was sent to.
    Chain(Chain),
    /// The other members of the request's pool, in hand-off order.
    Pool(PoolRoute),
}

/// Where a request stands on its first connection's fallback chain.
#[derive(Debug)]
pub(crate) struct Chain {
    /// The connection the request was sent to (its chain is followed).
    pub origin: Arc<Snapshot>,
    /// The request left `origin` for a hop.
    pub left: bool,
    /// The next hop to consider.
    pub next: usize,
    /// Set while the next attempt is the first on a hop: why the request fell back.
    pub fresh: Option<FallbackKind>,
}

impl Hops {
    /// The hops of a request sent to `snapshot` for `model` (a pool's are given by its start).
    pub(crate) fn of(snapshot: &Arc<Snapshot>, model: Option<&str>) -> Hops {
        if snapshot.fallback.is_empty() || model.is_none() {
            return Hops::None;
        }
        Hops::Chain(Chain { origin: snapshot.clone(), left: false, next: 0, fresh: None })
    }

    /// The hops in order (a pool's other members, or the first connection's chain).
    pub(crate) fn list(&self) -> &[Hop] {
        match self {
            Hops::None => &[],
            Hops::Chain(c) => &c.origin.fallback,
            Hops::Pool(p) => &p.hops,
        }
    }

    /// The next hop to consider.
    pub(crate) fn next(&self) -> usize {
        match self {
            Hops::None => 0,
            Hops::Chain(c) => c.next,
            Hops::Pool(p) => p.next,
        }
    }

    /// A hop is left to try.
    pub(crate) fn has_next(&self) -> bool {
        self.list().len() > self.next()
    }

    /// The request left the connection it started on: along its chain (or resumed on a hop), or
    /// handed over to another member of its pool.
    pub(crate) fn hopped(&self) -> bool {
        match self {
            Hops::None => false,
            Hops::Chain(c) => c.left,
            Hops::Pool(p) => p.handed_off(),
        }
    }

    /// The reason the first attempt on a hop is recorded with (`fallback:<kind>` on a chain,
    /// `pool:<kind>` in a pool), once; `None` on any other attempt.
    pub(crate) fn take_fresh(&mut self) -> Option<String> {
        match self {
            Hops::None => None,
            Hops::Chain(c) => c.fresh.take().map(|kind| format!("fallback:{kind}")),
            Hops::Pool(p) => p.fresh.take().map(|kind| format!("pool:{kind}")),
        }
    }

    /// The pool route, for a pool request.
    pub(crate) fn pool(&self) -> Option<&PoolRoute> {
        match self {
            Hops::Pool(p) => Some(p),
            _ => None,
        }
    }

    /// The connection the request was sent to, once it left it along a chain (the ledger's origin).
    pub(crate) fn origin_left(&self) -> Option<&Snapshot> {
        match self {
            Hops::Chain(c) if c.left => Some(&c.origin),
            _ => None,
        }
    }
}

/// The counts the planner bounds a request by.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Counts {
    /// Physical attempts made so far (every connection).
    pub attempts: u32,
    /// Retries of the same profile so far (on this connection).
    pub same_retries: u32,
    /// Attempts made on connections before the current one (each hop has its own bound).
    pub hop_base: u32,
    /// Profiles eligible when the request (or its hop) started: counted by the first choice's
    /// evaluation (legacy: 1).
    pub eligible_at_start: Option<usize>,
}

impl Counts {
    /// Attempts made on the current connection.
    pub(crate) fn on_connection(&self) -> u32 {
        self.attempts - self.hop_base
    }

    /// Starts counting a hop (nothing tried there yet).
    pub(crate) fn enter_hop(&mut self, legacy: bool) {
        self.hop_base = self.attempts;
        self.same_retries = 0;
        self.eligible_at_start = legacy.then_some(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pin(profile: &str) -> Pin {
        Pin { profile: profile.into(), credential: Arc::new(switchyard_vault::Secret::new("client-own")) }
    }

    fn hops_with(n: usize) -> Hops {
        if n == 0 {
            return Hops::None;
        }
        let route = crate::router::pool::tests::route_with_hops(n);
        Hops::Pool(route)
    }

    #[test]
    fn each_policy_answers_the_loop_s_questions() {
        let routed = Policy::Routed { strategy: Strategy::Balanced, continuing: None };
        let pinned = Policy::Pinned(pin("login"));
        let (none, pool) = (hops_with(0), hops_with(2));
        assert!(pinned.client_credential().is_some(), "a pinned request's failures are judged by its credential");
        assert!(
            Policy::Legacy.client_credential().is_none() && routed.client_credential().is_none(),
            "a chosen key's are its own"
        );
        // (policy, hops, may fall back, passes through, answers as legacy, one attempt, commits)
        let table = [
            (&Policy::Legacy, &none, false, true, true, true, false),
            (&Policy::Legacy, &pool, true, false, false, true, false),
            (&routed, &none, false, false, false, false, true),
            (&routed, &pool, true, false, false, false, true),
            (&pinned, &none, false, true, false, true, true),
            (&pinned, &pool, false, true, false, true, true),
        ];
        for (policy, hops, fall_back, through, plain, one, commits) in table {
            let what = format!("{policy:?} with {} hop(s)", hops.list().len());
            assert_eq!(policy.may_fall_back(hops), fall_back, "{what}: may_fall_back");
            assert_eq!(policy.passes_through(hops), through, "{what}: passes_through");
            assert_eq!(policy.answers_as_legacy(hops), plain, "{what}: answers_as_legacy");
            assert_eq!(policy.makes_one_attempt(), one, "{what}: makes_one_attempt");
            assert_eq!(policy.commits(), commits, "{what}: commits");
        }
    }

    #[test]
    fn a_spent_pool_route_leaves_nowhere_to_go() {
        let mut hops = hops_with(1);
        assert!(Policy::Legacy.may_fall_back(&hops), "one member left to hand over to");
        if let Hops::Pool(p) = &mut hops {
            p.next = 1;
        }
        assert!(!Policy::Legacy.may_fall_back(&hops), "every member was tried: nowhere to go");
    }

    #[test]
    fn continuing_is_a_routed_request_s_only() {
        let routed = Policy::Routed { strategy: Strategy::Priority, continuing: Some("p1".into()) };
        assert_eq!(routed.continuing(), Some("p1"), "a routed request continues its response's profile");
        assert_eq!(Policy::Legacy.continuing(), None, "legacy has one key anyway");
        assert_eq!(Policy::Pinned(pin("x")).continuing(), None, "a pinned request goes to its login only");
    }

    #[test]
    fn counts_bound_each_hop_on_its_own() {
        let mut c = Counts { attempts: 3, same_retries: 1, hop_base: 0, eligible_at_start: Some(4) };
        assert_eq!(c.on_connection(), 3);
        c.enter_hop(true);
        assert_eq!(
            (c.on_connection(), c.same_retries, c.eligible_at_start),
            (0, 0, Some(1)),
            "a legacy hop starts afresh"
        );
        c.attempts += 1;
        c.enter_hop(false);
        assert_eq!(
            (c.on_connection(), c.eligible_at_start),
            (0, None),
            "a routed hop counts its eligible set at its first choice"
        );
    }
}
