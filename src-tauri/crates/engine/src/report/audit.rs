//! `audit list`: the admin changes, oldest first (invariant 31): who, what, when, revisions.

use switchyard_store::audit;

use crate::clock::rfc3339;
use crate::context::Context;
use crate::error::EngineError;
use crate::report::time_zone::parse_since;
use crate::views::AuditView;

impl Context {
    /// The rows since `since` (RFC 3339 or `Nd`; default: everything), of `user` when given
    /// (rows the user made with an admin token, or that changed the user).
    pub async fn audit_list(&self, since: Option<&str>, user: Option<&str>) -> Result<Vec<AuditView>, EngineError> {
        let since_ms = match since {
            Some(text) => parse_since(text, self.now_ms(), &self.zone().await?)?,
            None => 0,
        };
        let mut conn = self.store.acquire().await?;
        Ok(audit::list(&mut conn, since_ms, user)
            .await?
            .into_iter()
            .map(|r| AuditView {
                at: rfc3339(r.at_ms),
                actor: r.actor,
                action: r.action,
                subject: r.subject,
                revision_before: r.revision_before,
                revision_after: r.revision_after,
                detail: r.detail.and_then(|d| serde_json::from_str(&d).ok()),
            })
            .collect())
    }
}
