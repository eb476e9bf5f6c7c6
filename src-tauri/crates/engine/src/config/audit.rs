//! Writing the audit (invariant 31): one row per admin change, in the same transaction as the
//! change, naming who made it (`Context::actor`), what, and the revisions before and after.
//! Never a secret: the detail is a JSON object of the values set (names, scopes, capacities).

use switchyard_store::audit::{self, AuditRow};
use switchyard_store::AnyConnection;

use crate::context::Context;
use crate::error::EngineError;

/// One change, as the audit keeps it.
pub(crate) struct Change<'a> {
    pub action: &'a str,
    pub subject: &'a str,
    pub before: Option<i64>,
    pub after: Option<i64>,
    pub detail: Option<serde_json::Value>,
}

impl Change<'_> {
    /// A change that only moves the subject's revision by one (a rotation, a revocation).
    pub(crate) fn step<'a>(action: &'a str, subject: &'a str, after: i64) -> Change<'a> {
        Change { action, subject, before: Some(after - 1), after: Some(after), detail: None }
    }
}

impl Context {
    /// Writes `change`'s row on `conn` (the change's own transaction).
    pub(crate) async fn audit(&self, conn: &mut AnyConnection, change: Change<'_>) -> Result<(), EngineError> {
        let row = AuditRow {
            at_ms: self.now_ms(),
            actor: self.actor(),
            action: change.action.to_string(),
            subject: change.subject.to_string(),
            revision_before: change.before,
            revision_after: change.after,
            detail: change.detail.map(|d| d.to_string()),
        };
        audit::insert(conn, &row).await?;
        Ok(())
    }

    /// Writes `change`'s row on its own, right after a change that is not one transaction here
    /// (a routing activation, a circuit reset: their writes are spread over helpers).
    pub(crate) async fn audit_now(&self, change: Change<'_>) -> Result<(), EngineError> {
        let mut conn = self.store.acquire().await?;
        self.audit(&mut conn, change).await
    }
}

/// A change of a connection's or a profile's settings: the subject and the revisions, no values.
pub(crate) fn change<'a>(action: &'a str, subject: &'a str, before: Option<i64>, after: Option<i64>) -> Change<'a> {
    Change { action, subject, before, after, detail: None }
}
