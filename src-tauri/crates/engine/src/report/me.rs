//! `GET /v1/switchyard/me` (invariant 31: a user reads only their own figures): the caller's
//! name, role, scope, usage today and this month (every connection's ledger, their rows only),
//! and each limit that applies to their requests with its current window — a `users` limit's
//! window of their own, never another user's.

use switchyard_core::limit::{LimitScope, UserScope};
use switchyard_store::{connections, limits};

use crate::clock::rfc3339;
use crate::config::limits::status_of;
use crate::config::relay_users::TokenGrant;
use crate::context::Context;
use crate::error::EngineError;
use crate::limits::book::spec_of;
use crate::report::time_zone::{date_of, start_of};
use crate::report::usage::{UsageBy, LOCAL_USER};
use crate::views::{MeUsage, MeView};

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
        let mut out_limits = Vec::new();
        let mut conn = self.store.acquire().await?;
        for row in limits::list(&mut conn).await? {
            let Some(spec) = spec_of(&row) else { continue };
            let applies = match (&spec.scope, &name) {
                (LimitScope::User(n), Some(me)) => n == me,
                (LimitScope::Users, Some(_)) => true,
                (LimitScope::Connection(n) | LimitScope::Pool(n), _) => scope.allows_target(n),
                _ => false,
            };
            if !applies {
                continue;
            }
            let own = match (&spec.scope, &name) {
                (LimitScope::Users, Some(me)) => Some(me.as_str()),
                _ => None,
            };
            let rows = status_of(&mut conn, &spec, now, &tz).await?;
            match own {
                // A `users` limit counts each user apart: only the caller's window.
                Some(me) => {
                    let mine = rows.iter().find(|r| r.subject == me).cloned().or_else(|| {
                        rows.first().cloned().map(|r| crate::views::LimitStatusView {
                            subject: me.to_string(),
                            used: 0.0,
                            reserved: 0.0,
                            remaining: r.capacity,
                            ..r
                        })
                    });
                    out_limits.extend(mine);
                }
                None => out_limits.extend(rows),
            }
        }
        let users_shadowed =
            |v: &crate::views::LimitStatusView| v.scope == "users" && out_limits_has_own(&out_limits, v);
        let shown: Vec<_> = out_limits.iter().filter(|v| !users_shadowed(v)).cloned().collect();
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

/// Whether the caller has their own `user:NAME` limit of `v`'s measure and period (which then
/// replaces the `users` one).
fn out_limits_has_own(all: &[crate::views::LimitStatusView], v: &crate::views::LimitStatusView) -> bool {
    all.iter().any(|o| o.scope.starts_with("user:") && o.measure == v.measure && o.period == v.period)
}
