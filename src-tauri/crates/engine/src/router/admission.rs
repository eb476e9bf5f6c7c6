//! Admission: the run's first step (invariants 28–30). Before anything is decided or sent, the
//! request's reservation is taken from every limit it meets in one store decision through the
//! routing-state seam (`RoutingState::admit`), all or nothing. Admitted, the run holds a
//! [`Ticket`] its delivering attempt's ledger row settles (or that returns everything when the
//! request fails before output). Refused, nothing changes — no circuit, binding or SWRR
//! position — and the refusal is the relay's own (429 `limit:<id>`, 403 `limit_needs_price`, 503
//! `limits_unavailable`), recorded as a ledger row naming its limit; never a failover.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, PoisonError};
use std::time::Duration;

use switchyard_core::connection::Protocol;
use switchyard_core::limit::{matching, Estimate, LimitSpec, Measure, Requester};
use switchyard_store::attempts::AttemptRow;

use crate::ledger::Later;
use crate::router::Snapshot;
use crate::telemetry::{Ending, RequestMark, Told};
use switchyard_store::limit_counters::{sort_takes, Full, Holder, Take};

use crate::clock::rfc3339;
use crate::limits::book::LimitBook;
use crate::limits::ticket::{Hold, Ticket};
use crate::limits::window::window;
use crate::limits::BOOK_TTL;
use crate::router::refusal::{Refusal, Unavailable};
use crate::router::state::RoutingState;
use crate::router::{Resolved, Router};

/// What a router keeps for admission: the book, and this process as a holder of slots.
#[derive(Debug)]
pub(crate) struct RouterLimits {
    book: std::sync::Mutex<Option<Arc<LimitBook>>>,
    refresh: tokio::sync::Mutex<()>,
    /// This process among the holders of concurrency slots (random: a restarted process is
    /// another owner, and its predecessor's slots run out).
    owner: Arc<str>,
    next_holder: AtomicU64,
    slot_lease: Duration,
}

impl RouterLimits {
    pub(crate) fn new(slot_lease: Duration) -> Self {
        let mut bytes = [0u8; 8];
        let _ = getrandom::fill(&mut bytes);
        RouterLimits {
            book: std::sync::Mutex::default(),
            refresh: tokio::sync::Mutex::new(()),
            owner: Arc::from(hex::encode(bytes)),
            next_holder: AtomicU64::new(1),
            slot_lease,
        }
    }
}

/// Renews this process's concurrency slots every third of their lease while the router lives
/// (a stream longer than the lease keeps its slot; a killed process's slots run out).
pub(crate) fn spawn_slot_renewer(limits: &RouterLimits, engine: Arc<crate::engine::Engine>, alive: &Arc<()>) {
    let (owner, lease) = (limits.owner.clone(), limits.slot_lease);
    let alive = Arc::downgrade(alive);
    tokio::spawn(async move {
        let mut tick = tokio::time::interval((lease / 3).max(Duration::from_millis(100)));
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            if alive.upgrade().is_none() {
                break;
            }
            let until = engine.now_ms().saturating_add(i64::try_from(lease.as_millis()).unwrap_or(i64::MAX));
            let renewed = match engine.store.acquire().await {
                Ok(mut conn) => switchyard_store::limit_counters::renew(&mut conn, &owner, until).await,
                Err(e) => Err(e),
            };
            if let Err(e) = renewed {
                tracing::debug!(error = %e, "concurrency slots not renewed");
            }
        }
    });
}

/// What admission asks of a request.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Admitting<'a> {
    /// The request's telemetry mark (its refusal's row ends the request).
    pub mark: Option<&'a RequestMark>,
    /// The connection's snapshot, when the request names a connection (telemetry's labels).
    pub snapshot: Option<&'a Arc<Snapshot>>,
    pub user: Option<&'a str>,
    /// The connection the request names (its id for the refusal's row, its slug for limits).
    pub connection: Option<(&'a str, &'a str)>,
    /// The pool the request names (its id for the row, its name for limits).
    pub pool: Option<(&'a str, &'a str)>,
    pub model: Option<&'a str>,
    pub estimate: Estimate,
    pub protocol: Protocol,
}

impl Router {
    /// The limits as last read, re-read when older than [`BOOK_TTL`]. A request finding the book
    /// stale waits for the one re-read (never admits on an older book: a limit set a second ago
    /// holds). `None`: never read, and the store cannot be.
    pub(crate) async fn limit_book(&self) -> Option<Arc<LimitBook>> {
        let fresh = |book: &Option<Arc<LimitBook>>| {
            let now = self.engine.monotonic();
            book.as_ref().filter(|b| now.saturating_duration_since(b.read_at) < BOOK_TTL).cloned()
        };
        let cached = self.limits.book.lock().unwrap_or_else(PoisonError::into_inner).clone();
        if let Some(book) = fresh(&cached) {
            return Some(book);
        }
        let _guard = self.limits.refresh.lock().await;
        let cached = self.limits.book.lock().unwrap_or_else(PoisonError::into_inner).clone();
        if let Some(book) = fresh(&cached) {
            return Some(book);
        }
        // Boxed: a re-read (once per BOOK_TTL) is kilobytes of future every request would carry.
        match Box::pin(self.engine.limit_book(self.engine.monotonic())).await {
            Ok(book) => {
                let book = Arc::new(book);
                *self.limits.book.lock().unwrap_or_else(PoisonError::into_inner) = Some(book.clone());
                Some(book)
            }
            Err(e) => {
                tracing::warn!(error = %e, "limits not re-read; the last ones hold");
                cached
            }
        }
    }

    /// Whether a limit counting tokens or USD may meet a request of `user` to `target`: the
    /// relay then reads its body before routing, for the reservation's estimate.
    pub async fn limits_read_body(&self, target: &Resolved, user: Option<&str>) -> bool {
        match self.limit_book().await {
            Some(book) => book.counts_body(user, target.name()),
            None => false,
        }
    }

    /// Takes the request's reservation (see the module). `Ok(None)`: no limit meets it.
    pub(crate) async fn admit_limits(&self, a: Admitting<'_>) -> Result<Option<Ticket>, Unavailable> {
        let Some(book) = self.limit_book().await else {
            return Err(self.refused_unavailable(&a, "the limits could not be read from the store"));
        };
        if book.specs.is_empty() {
            return Ok(None);
        }
        let who = Requester { user: a.user, connection: a.connection.map(|c| c.1), pool: a.pool.map(|p| p.1) };
        let met = matching(&book.specs, who);
        if met.is_empty() {
            return Ok(None);
        }
        let now_ms = self.engine.now_ms();
        let rates = a.model.and_then(|m| book.prices.get(m)).copied();
        let mut takes = Vec::with_capacity(met.len());
        let mut specs: Vec<&LimitSpec> = Vec::with_capacity(met.len());
        for m in &met {
            let spec = m.spec;
            let amount = match spec.measure {
                Measure::Requests | Measure::Concurrency => 1,
                Measure::Tokens => i64::try_from(a.estimate.tokens()).unwrap_or(i64::MAX),
                Measure::Usd => match rates {
                    Some(r) => a.estimate.micro_usd(r.input, r.output),
                    None => return Err(self.needs_price(&a, spec)),
                },
            };
            let window_start = spec.period.map_or(0, |p| window(p, now_ms, &book.zone).0);
            takes.push(Take {
                limit_id: spec.id.clone(),
                subject: m.subject.to_string(),
                window_start,
                amount,
                capacity: spec.capacity,
                slot: spec.measure == Measure::Concurrency,
            });
            specs.push(spec);
        }
        let mut order: Vec<usize> = (0..takes.len()).collect();
        order.sort_by(|&x, &y| (&takes[x].limit_id, &takes[x].subject).cmp(&(&takes[y].limit_id, &takes[y].subject)));
        let sorted_specs: Vec<&LimitSpec> = order.iter().map(|&i| specs[i]).collect();
        sort_takes(&mut takes);
        let has_slot = takes.iter().any(|t| t.slot);
        let holder_id = self.limits.next_holder.fetch_add(1, Ordering::Relaxed).to_string();
        let lease_ms = i64::try_from(self.limits.slot_lease.as_millis()).unwrap_or(i64::MAX);
        let holder =
            Holder { owner: &self.limits.owner, holder: &holder_id, expires_ms: now_ms.saturating_add(lease_ms) };
        // Boxed: a store transaction's future (kilobytes) only a limited request needs.
        match Box::pin(self.state.admit(&self.engine.store, &takes, holder, now_ms)).await {
            Err(e) => {
                tracing::warn!(code = e.code().as_str(), "limits unavailable: request refused");
                Err(self.refused_unavailable(&a, "the store that holds the limits cannot be reached"))
            }
            Ok(Some(full)) => Err(self.full(&a, &book, sorted_specs[full.index], &takes[full.index], &full, now_ms)),
            Ok(None) => {
                let holds = takes
                    .iter()
                    .zip(&sorted_specs)
                    .map(|(t, s)| Hold {
                        limit_id: t.limit_id.clone(),
                        subject: t.subject.clone(),
                        window_start: t.window_start,
                        measure: s.measure,
                        reserved: t.amount,
                    })
                    .collect();
                let slots = has_slot.then(|| (self.limits.owner.to_string(), holder_id));
                Ok(Some(Ticket::new(holds, slots, rates, a.protocol, self.ledger.clone())))
            }
        }
    }

    /// 429 `limit:<id>`: what the window holds, and when the reservation fits again (the window's
    /// end; for slots, a second — one may end any moment).
    fn full(
        &self,
        a: &Admitting<'_>,
        book: &LimitBook,
        spec: &LimitSpec,
        take: &Take,
        full: &Full,
        now_ms: i64,
    ) -> Unavailable {
        let (retry, resets) = match spec.period {
            Some(p) => {
                let end = window(p, now_ms, &book.zone).1;
                (u64::try_from((end - now_ms + 999) / 1000).unwrap_or(1).max(1), Some(end))
            }
            None => (1, None),
        };
        let what = match spec.measure {
            Measure::Usd => format!(
                "${:.6} of ${:.6} used, ${:.6} reserved by running requests; this request may cost up to ${:.6}",
                full.used as f64 / 1e6,
                spec.capacity as f64 / 1e6,
                full.reserved as f64 / 1e6,
                take.amount as f64 / 1e6
            ),
            Measure::Concurrency => format!("{} of {} requests in flight", full.used, spec.capacity),
            m => format!(
                "{} of {} {} used, {} reserved by running requests; this request takes {}",
                full.used,
                spec.capacity,
                m.as_str(),
                full.reserved,
                take.amount
            ),
        };
        let per = spec.period.map(|p| format!(" per {}", p.as_str())).unwrap_or_default();
        let resets = resets.map(|r| format!("; the window resets at {}", rfc3339(r))).unwrap_or_default();
        let message = format!(
            "limit '{}' ({} {}{per}) refuses this request: {what}{resets}",
            spec.id,
            spec.scope,
            spec.measure.as_str()
        );
        let mut refused = Unavailable::new(Refusal::Limit, 429, Some(retry), message);
        refused.limit = Some(spec.id.clone());
        self.record_refusal(a, &refused);
        refused
    }

    fn needs_price(&self, a: &Admitting<'_>, spec: &LimitSpec) -> Unavailable {
        let model = a.model.unwrap_or("(none named)");
        let message = format!(
            "limit '{}' counts USD and model '{model}' has no price: set one with `switchyard prices set {model} \
             --input USD --output USD` (USD per million tokens); unknown is never spent as zero",
            spec.id
        );
        let mut refused = Unavailable::new(Refusal::LimitNeedsPrice, 403, None, message);
        refused.limit = Some(spec.id.clone());
        self.record_refusal(a, &refused);
        refused
    }

    fn refused_unavailable(&self, a: &Admitting<'_>, why: &str) -> Unavailable {
        let refused = Unavailable::new(Refusal::LimitsUnavailable, 503, None, format!("{why}; nothing was sent"));
        self.record_refusal(a, &refused);
        refused
    }

    /// A refusal of ours is a ledger row: no attempt upstream (attempt 0, no profile), the
    /// refusal's status and reason, the limit it names.
    fn record_refusal(&self, a: &Admitting<'_>, refused: &Unavailable) {
        let row = AttemptRow {
            at_ms: self.engine.now_ms(),
            connection_id: a.connection.map(|c| c.0.to_string()).unwrap_or_default(),
            turn: String::new(),
            attempt: 0,
            profile_id: String::new(),
            reason: refused.why.as_str().to_string(),
            model: a.model.map(str::to_string),
            status: Some(i64::from(refused.status)),
            duration_ms: Some(0),
            user_name: a.user.map(str::to_string),
            pool_id: a.pool.map(|p| p.0.to_string()),
            limit_id: refused.limit.clone(),
            ..AttemptRow::default()
        };
        let told = a.mark.cloned().map(|mark| Told {
            snapshot: a.snapshot.cloned(),
            pool: a.pool.map(|p| p.1.to_string()),
            mark,
            ends: Some(Ending::Refused),
        });
        self.ledger.record_later(row, Later { told, ..Later::default() });
    }
}
