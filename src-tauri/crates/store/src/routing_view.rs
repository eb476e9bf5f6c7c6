//! One read of what a routing decision on a shared store needs (invariant 25), in one round
//! trip: the turn's binding and the conversation's (`route_bindings`), the SWRR position of the
//! (connection or pool, model) (`swrr_positions`) and every circuit of the connection's profiles
//! with its probe lease (`circuits`). The parts come back as rows of one `UNION ALL`; the
//! engine folds them into its in-memory state before it decides.

use sqlx::{AnyConnection, FromRow};

use crate::error::StoreError;

/// What to read.
#[derive(Debug, Clone, Copy)]
pub struct ViewKeys<'a> {
    /// The scope of the conversation binding: `conversation`, or `pool:<id>` for a pool's member.
    pub conversation_scope: &'a str,
    /// The turn key (`''`: none; a pool has no turn binding).
    pub turn: &'a str,
    /// The conversation key (`''`: none).
    pub conversation: &'a str,
    pub model: &'a str,
    /// The SWRR target: a connection id, or `pool:<id>`.
    pub swrr_target: &'a str,
    /// The connection whose profiles' circuits are read (`''`: none).
    pub connection_id: &'a str,
    pub now_ms: i64,
}

/// One part of the view; which fields mean what depends on `part` (see [`RoutingView`]).
#[derive(Debug, Clone, PartialEq, Eq, FromRow)]
struct Part {
    part: String,
    a: Option<String>,
    b: Option<String>,
    c: Option<String>,
    d: Option<String>,
    e: Option<String>,
    n1: Option<i64>,
    n2: Option<i64>,
    n3: Option<i64>,
}

/// A live binding: what it keeps, its last use and window (ms).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ViewBinding {
    pub target: String,
    pub last_ms: i64,
    pub window_ms: i64,
}

/// A circuit row with its lease.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ViewCircuit {
    pub profile_id: String,
    pub model: String,
    pub state: String,
    pub kind: Option<String>,
    pub until_ms: Option<i64>,
    pub backoff_level: i64,
    pub lease_owner: Option<String>,
    pub lease_until_ms: Option<i64>,
}

/// What [`read`] found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RoutingView {
    pub turn: Option<ViewBinding>,
    pub conversation: Option<ViewBinding>,
    /// The SWRR weights text and revision (see `swrr_positions`).
    pub swrr: Option<(String, i64)>,
    pub circuits: Vec<ViewCircuit>,
}

/// Reads the view of `keys` in one statement.
pub async fn read(conn: &mut AnyConnection, keys: &ViewKeys<'_>) -> Result<RoutingView, StoreError> {
    let parts = sqlx::query_as::<_, Part>(
        "SELECT CAST('turn' AS TEXT) AS part, target AS a, CAST(NULL AS TEXT) AS b, CAST(NULL AS TEXT) AS c, \
         CAST(NULL AS TEXT) AS d, CAST(NULL AS TEXT) AS e, last_ms AS n1, window_ms AS n2, CAST(NULL AS BIGINT) AS n3 \
         FROM route_bindings WHERE scope = 'turn' AND key = $1 AND model = '' AND expires_ms > $4 AND $1 <> '' \
         UNION ALL SELECT 'conversation', target, NULL, NULL, NULL, NULL, last_ms, window_ms, NULL \
         FROM route_bindings WHERE scope = $6 AND key = $2 AND model = $3 AND expires_ms > $4 AND $2 <> '' \
         UNION ALL SELECT 'swrr', weights, NULL, NULL, NULL, NULL, revision, NULL, NULL \
         FROM swrr_positions WHERE target = $5 AND model = $3 \
         UNION ALL SELECT 'circuit', profile_id, model, state, kind, lease_owner, until_ms, backoff_level, lease_until_ms \
         FROM circuits WHERE profile_id IN (SELECT id FROM profiles WHERE connection_id = $7)",
    )
    .bind(keys.turn)
    .bind(keys.conversation)
    .bind(keys.model)
    .bind(keys.now_ms)
    .bind(keys.swrr_target)
    .bind(keys.conversation_scope)
    .bind(keys.connection_id)
    .fetch_all(conn)
    .await?;
    let mut view = RoutingView::default();
    for p in parts {
        let binding = |p: &Part| ViewBinding {
            target: p.a.clone().unwrap_or_default(),
            last_ms: p.n1.unwrap_or(0),
            window_ms: p.n2.unwrap_or(0),
        };
        match p.part.as_str() {
            "turn" => view.turn = Some(binding(&p)),
            "conversation" => view.conversation = Some(binding(&p)),
            "swrr" => view.swrr = Some((p.a.unwrap_or_default(), p.n1.unwrap_or(0))),
            "circuit" => view.circuits.push(ViewCircuit {
                profile_id: p.a.unwrap_or_default(),
                model: p.b.unwrap_or_default(),
                state: p.c.unwrap_or_default(),
                kind: p.d,
                lease_owner: p.e,
                until_ms: p.n1,
                backoff_level: p.n2.unwrap_or(0),
                lease_until_ms: p.n3,
            }),
            other => {
                return Err(StoreError::Corrupt { table: "routing view", detail: format!("unknown part '{other}'") })
            }
        }
    }
    Ok(view)
}
