//! `GET /v1/switchyard/me` (invariant 31: a user reads only their own figures): the caller's
//! name, role, scope, usage today and this month (every connection's ledger, their rows only),
//! and each limit that applies to their requests with its current window — a `users` limit's
//! window of their own, never another user's.

use switchyard_core::limit::{matching, LimitScope, LimitSpec, Requester, UserScope};
use switchyard_store::{connections, limits};

use crate::clock::rfc3339;
use crate::config::limits::status_of;
use crate::config::relay_users::TokenGrant;
use crate::context::Context;
use crate::error::EngineError;
use crate::limits::book::spec_of;
use crate::report::time_zone::{date_of, start_of};
use crate::report::usage::{UsageBy, LOCAL_USER};
use crate::views::{LimitStatusView, MeUsage, MeView};

impl Context {
    /// The figures of `grant`'s holder (`None`: the install's own token).
    pub async fn me(&self, grant: Option<&TokenGrant>) -> Result<MeView, EngineError> {
        let tz = self.zone().await?;
        let now = self.now_ms();
        let today = start_of(date_of(now, &tz), &tz);
        let month = start_of(date_of(now, &tz).first_of_month(), &tz);
        let name = grant.map(|g| g.name.clone());
        let key = name.clone().unwrap_or_else(|| LOCAL_USER.to_string());
        let scope = grant.map(|g| g.scope.clone()).unwrap_or_default();
        let slugs: Vec<String> = {
            let mut conn = self.store.acquire().await?;
            connections::list(&mut conn).await?.into_iter().map(|c| c.slug).collect()
        };
        let (mut day, mut mon) = (
            MeUsage { cost_usd: Some(0.0), ..MeUsage::default() },
            MeUsage { cost_usd: Some(0.0), ..MeUsage::default() },
        );
        for slug in slugs.iter().filter(|s| scope.allows_target(s)) {
            for (since, into) in [(today, &mut day), (month, &mut mon)] {
                let view = self.usage(slug, Some(&rfc3339(since)), UsageBy::User).await?;
                if let Some(row) = view.rows.into_iter().find(|r| r.key == key) {
                    into.requests += row.requests;
                    into.input_tokens += row.input_tokens;
                    into.output_tokens += row.output_tokens;
                    into.cost_usd = into.cost_usd.zip(row.cost_usd).map(|(a, b)| a + b);
                }
            }
        }
        let mut conn = self.store.acquire().await?;
        let specs: Vec<LimitSpec> = limits::list(&mut conn).await?.iter().filter_map(spec_of).collect();
        // The caller's own and the `users` ones exactly as admission matches them (core `matching`:
        // a user's own limit replaces the `users` one of its measure and period); the connections'
        // and pools' within the caller's scope.
        let who = Requester { user: name.as_deref(), connection: None, pool: None };
        let mut shown = Vec::new();
        for m in matching(&specs, who) {
            let rows = status_of(&mut conn, m.spec, now, &tz).await?;
            if m.subject.is_empty() {
                shown.extend(rows);
                continue;
            }
            // A `users` limit counts each user apart: only the caller's window, never another's.
            let mine = rows.iter().find(|r| r.subject == m.subject).cloned();
            shown.extend(mine.or_else(|| rows.into_iter().next().map(|r| unused(r, m.subject))));
        }
        for spec in specs.iter().filter(|s| match &s.scope {
            LimitScope::Connection(n) | LimitScope::Pool(n) => scope.allows_target(n),
            _ => false,
        }) {
            shown.extend(status_of(&mut conn, spec, now, &tz).await?);
        }
        let UserScope { targets, models } = scope;
        Ok(MeView {
            name,
            role: grant.map_or("install", |g| g.role.as_str()).to_string(),
            connections: targets,
            models,
            expires_at: grant.and_then(|g| g.expires_at).map(rfc3339),
            today: day,
            month: mon,
            limits: shown,
        })
    }
}

/// A `users` limit's window for a user who has not used it yet (`row` is another user's or the
/// empty window: only its capacity and reset are kept).
fn unused(row: LimitStatusView, subject: &str) -> LimitStatusView {
    LimitStatusView {
        subject: subject.to_string(),
        used: 0.0,
        reserved: 0.0,
        remaining: row.capacity,
        refused: 0,
        ..row
    }
}
