//! What limits hold (`limit_counters`, `limit_leases`): admission takes a request's reservation
//! from every matching limit in one transaction, in sorted order, all or nothing; settlement
//! turns a reservation into what was spent; concurrency slots are lease rows with an expiry.
//!
//! Exact across replicas (invariant 28) because each limit's window is one row and every take
//! is one conditional upsert on it: `INSERT … ON CONFLICT DO UPDATE … WHERE used + reserved +
//! amount <= capacity` locks that row (Postgres) or runs under the file's write lock (SQLite,
//! `BEGIN IMMEDIATE`), so two replicas' takes of one window are serialized and the second sees
//! the first's. A concurrency slot locks its limit's row the same way before it counts the live
//! leases. Takes are sorted by (limit, subject) so two requests never lock in opposite orders.

use sqlx::AnyConnection;

use crate::error::StoreError;

/// One limit's part of a request's reservation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Take {
    pub limit_id: String,
    /// The user for a `users` limit, else "".
    pub subject: String,
    /// The window's start (engine clock, ms); 0 for a concurrency slot.
    pub window_start: i64,
    /// What is taken: requests, tokens, millionths of a USD; 1 slot for concurrency.
    pub amount: i64,
    /// The limit's capacity.
    pub capacity: i64,
    /// A concurrency slot (a lease row) rather than a counter.
    pub slot: bool,
}

/// Who holds a concurrency slot: the relay process (`owner`, renewing its slots while it runs)
/// and the request (`holder`).
#[derive(Debug, Clone, Copy)]
pub struct Holder<'a> {
    pub owner: &'a str,
    pub holder: &'a str,
    /// When the slot is free again unless renewed (engine clock, ms).
    pub expires_ms: i64,
}

/// Why admission refused: the take that did not fit, and what its window held.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Full {
    /// Index into the takes as given.
    pub index: usize,
    pub used: i64,
    pub reserved: i64,
}

/// Takes every one of `takes` (already sorted by the caller: `sort_takes`), all or nothing, on
/// `conn` inside a transaction the caller opened and commits (or rolls back on `Err`/`Some`).
/// `Ok(None)`: admitted.
pub async fn admit(
    conn: &mut AnyConnection,
    takes: &[Take],
    holder: Holder<'_>,
    now_ms: i64,
) -> Result<Option<Full>, StoreError> {
    for (index, take) in takes.iter().enumerate() {
        let fits = if take.amount > take.capacity {
            false
        } else if take.slot {
            take_slot(conn, take, holder, now_ms).await?
        } else {
            take_counter(conn, take).await?
        };
        if !fits {
            let (used, reserved) = held(conn, take, now_ms).await?;
            return Ok(Some(Full { index, used, reserved }));
        }
    }
    Ok(None)
}

/// One counter take on its own, outside a transaction: the conditional upsert is atomic by
/// itself (one statement, one round trip), so a request meeting a single periodic limit pays one
/// statement instead of BEGIN, the upsert and COMMIT. `Ok(None)`: taken.
pub async fn admit_one(conn: &mut AnyConnection, take: &Take) -> Result<Option<Full>, StoreError> {
    if take.amount <= take.capacity && take_counter(conn, take).await? {
        return Ok(None);
    }
    let (used, reserved) = held(conn, take, 0).await?;
    Ok(Some(Full { index: 0, used, reserved }))
}

/// Every counter take of `takes` (sorted; no slots) in one statement on Postgres: the
/// `switchyard_admit` function (migration 0016) runs the same conditional upserts and raises at
/// the first that does not fit, which rolls them all back. One round trip, all or nothing.
pub async fn admit_postgres(conn: &mut AnyConnection, takes: &[Take]) -> Result<Option<Full>, StoreError> {
    // Ids and subjects are names of `a-z 0-9 . _ -` (checked where they are made); quoted anyway.
    let text = |v: &str| v.replace('\\', "\\\\").replace('"', "\\\"");
    let rows: Vec<String> = takes
        .iter()
        .map(|t| {
            format!(
                r#"{{"limit_id":"{}","subject":"{}","window_start":{},"amount":{},"capacity":{}}}"#,
                text(&t.limit_id),
                text(&t.subject),
                t.window_start,
                t.amount,
                t.capacity
            )
        })
        .collect();
    let sent = format!("[{}]", rows.join(","));
    match sqlx::query("SELECT switchyard_admit($1)").bind(sent).execute(&mut *conn).await {
        Ok(_) => Ok(None),
        Err(sqlx::Error::Database(db)) if db.message().starts_with("switchyard_limit_full ") => {
            let index: usize = db.message().rsplit(' ').next().and_then(|i| i.parse().ok()).unwrap_or(0);
            let take = takes.get(index).ok_or(StoreError::Corrupt {
                table: "limit_counters",
                detail: format!("admission named take {index} of {}", takes.len()),
            })?;
            let (used, reserved) = held(conn, take, 0).await?;
            Ok(Some(Full { index, used, reserved }))
        }
        Err(e) => Err(e.into()),
    }
}

/// Sorts takes into the one order every replica locks rows in.
pub fn sort_takes(takes: &mut [Take]) {
    takes.sort_by(|a, b| (&a.limit_id, &a.subject, a.window_start).cmp(&(&b.limit_id, &b.subject, b.window_start)));
}

async fn take_counter(conn: &mut AnyConnection, take: &Take) -> Result<bool, StoreError> {
    let done = sqlx::query(
        "INSERT INTO limit_counters (limit_id, subject, window_start, used, reserved) VALUES ($1, $2, $3, 0, $4) \
         ON CONFLICT (limit_id, subject, window_start) DO UPDATE SET reserved = limit_counters.reserved + excluded.reserved \
         WHERE limit_counters.used + limit_counters.reserved + excluded.reserved <= $5",
    )
    .bind(&take.limit_id)
    .bind(&take.subject)
    .bind(take.window_start)
    .bind(take.amount)
    .bind(take.capacity)
    .execute(conn)
    .await?;
    Ok(done.rows_affected() > 0)
}

async fn take_slot(conn: &mut AnyConnection, take: &Take, holder: Holder<'_>, now_ms: i64) -> Result<bool, StoreError> {
    // The limit's row, locked until commit: the count below then sees every slot taken before.
    sqlx::query(
        "INSERT INTO limit_counters (limit_id, subject, window_start, used, reserved) VALUES ($1, $2, 0, 0, 0) \
         ON CONFLICT (limit_id, subject, window_start) DO UPDATE SET used = limit_counters.used",
    )
    .bind(&take.limit_id)
    .bind(&take.subject)
    .execute(&mut *conn)
    .await?;
    sqlx::query("DELETE FROM limit_leases WHERE limit_id = $1 AND subject = $2 AND expires_ms <= $3")
        .bind(&take.limit_id)
        .bind(&take.subject)
        .bind(now_ms)
        .execute(&mut *conn)
        .await?;
    let done = sqlx::query(
        "INSERT INTO limit_leases (limit_id, subject, owner, holder, expires_ms) SELECT $1, $2, $3, $4, $5 \
         WHERE (SELECT count(*) FROM limit_leases WHERE limit_id = $1 AND subject = $2) < $6",
    )
    .bind(&take.limit_id)
    .bind(&take.subject)
    .bind(holder.owner)
    .bind(holder.holder)
    .bind(holder.expires_ms)
    .bind(take.capacity)
    .execute(conn)
    .await?;
    Ok(done.rows_affected() > 0)
}

/// What a take's window holds now: (used, reserved), or for a slot (live slots, 0).
async fn held(conn: &mut AnyConnection, take: &Take, now_ms: i64) -> Result<(i64, i64), StoreError> {
    if take.slot {
        let live: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM limit_leases WHERE limit_id = $1 AND subject = $2 AND expires_ms > $3",
        )
        .bind(&take.limit_id)
        .bind(&take.subject)
        .bind(now_ms)
        .fetch_one(conn)
        .await?;
        return Ok((live, 0));
    }
    let row: Option<(i64, i64)> = sqlx::query_as(
        "SELECT used, reserved FROM limit_counters WHERE limit_id = $1 AND subject = $2 AND window_start = $3",
    )
    .bind(&take.limit_id)
    .bind(&take.subject)
    .bind(take.window_start)
    .fetch_optional(conn)
    .await?;
    Ok(row.unwrap_or((0, 0)))
}

/// One counter take settled: `spent` becomes used, the whole reservation leaves reserved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settle {
    pub limit_id: String,
    pub subject: String,
    pub window_start: i64,
    pub reserved: i64,
    pub spent: i64,
}

/// Settles `settles` (one statement each; the caller's transaction or autocommit).
pub async fn settle(conn: &mut AnyConnection, settles: &[Settle]) -> Result<(), StoreError> {
    for s in settles {
        sqlx::query(
            "UPDATE limit_counters SET used = used + $1, \
             reserved = CASE WHEN reserved >= $2 THEN reserved - $2 ELSE 0 END \
             WHERE limit_id = $3 AND subject = $4 AND window_start = $5",
        )
        .bind(s.spent)
        .bind(s.reserved)
        .bind(&s.limit_id)
        .bind(&s.subject)
        .bind(s.window_start)
        .execute(&mut *conn)
        .await?;
    }
    Ok(())
}

/// Frees the slots `holder` of `owner` took.
pub async fn release(conn: &mut AnyConnection, owner: &str, holder: &str) -> Result<(), StoreError> {
    sqlx::query("DELETE FROM limit_leases WHERE owner = $1 AND holder = $2")
        .bind(owner)
        .bind(holder)
        .execute(conn)
        .await?;
    Ok(())
}

/// Renews every slot `owner` holds until `expires_ms`; returns how many.
pub async fn renew(conn: &mut AnyConnection, owner: &str, expires_ms: i64) -> Result<u64, StoreError> {
    Ok(sqlx::query("UPDATE limit_leases SET expires_ms = $1 WHERE owner = $2")
        .bind(expires_ms)
        .bind(owner)
        .execute(conn)
        .await?
        .rows_affected())
}

/// A window as it stands: (subject, used, reserved).
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct Window {
    pub subject: String,
    pub used: i64,
    pub reserved: i64,
}

/// Every subject's counters of `limit_id` in the window starting `window_start`.
pub async fn windows(conn: &mut AnyConnection, limit_id: &str, window_start: i64) -> Result<Vec<Window>, StoreError> {
    Ok(sqlx::query_as::<_, Window>(
        "SELECT subject, used, reserved FROM limit_counters WHERE limit_id = $1 AND window_start = $2 ORDER BY subject",
    )
    .bind(limit_id)
    .bind(window_start)
    .fetch_all(conn)
    .await?)
}

/// Live slots of `limit_id` per subject: (subject, live).
pub async fn slots(conn: &mut AnyConnection, limit_id: &str, now_ms: i64) -> Result<Vec<(String, i64)>, StoreError> {
    Ok(sqlx::query_as::<_, (String, i64)>(
        "SELECT subject, count(*) FROM limit_leases WHERE limit_id = $1 AND expires_ms > $2 GROUP BY subject ORDER BY subject",
    )
    .bind(limit_id)
    .bind(now_ms)
    .fetch_all(conn)
    .await?)
}
