//! The `attempts` table: append-only ledger of physical provider calls. Rows name the stable
//! profile id (never the label) and carry no secret material.

use sqlx::any::AnyArguments;
use sqlx::error::BoxDynError;
use sqlx::{AnyConnection, Arguments, FromRow};

use crate::error::StoreError;

#[derive(Debug, Clone, Default, PartialEq, Eq, FromRow)]
pub struct AttemptRow {
    pub at_ms: i64,
    pub connection_id: String,
    pub turn: String,
    pub attempt: i64,
    pub profile_id: String,
    pub reason: String,
    pub model: Option<String>,
    pub status: Option<i64>,
    pub failure_kind: Option<String>,
    pub scope: Option<String>,
    pub ttfb_ms: Option<i64>,
    pub duration_ms: Option<i64>,
    pub input_tokens: Option<i64>,
    pub output_tokens: Option<i64>,
    /// The client's session, hashed (never the raw id).
    pub session: Option<String>,
    /// The request's conversation key (a hash with its kind prefix, never the raw id).
    pub conversation: Option<String>,
    /// Why this turn moved its warm conversation to another key (`excluded:<exclusion>`,
    /// `unavailable`, `removed`); `None` when it did not move.
    pub moved: Option<String>,
    pub cache_read_tokens: Option<i64>,
    pub cache_write_tokens: Option<i64>,
    /// The caller's tags (`x-switchyard-tag-*`), a JSON object of name -> value; `None`
    /// when the request carried none.
    pub tags: Option<String>,
    /// What the official CLI reported the attempt's tokens would cost at list price, in
    /// millionths of a USD (CLI backend attempts only; a reference figure, never a cost).
    pub reference_cost_micro_usd: Option<i64>,
    /// The relay user the attempt was made for (a `relay_users` name, never the token);
    /// `None` for the install's own token.
    pub user_name: Option<String>,
    /// The pool the attempt was routed through (its id); `None` outside pools.
    pub pool_id: Option<String>,
    /// The connection the client named when the attempt went to another one (a fallback
    /// hop): its id, so the origin's ledger shows where its turn went. `None` otherwise.
    pub origin_id: Option<String>,
    /// The limit a limit refusal names (its row has no attempt upstream); `None` otherwise.
    pub limit_id: Option<String>,
}

/// A row with its id, for paging through the table in id order.
#[derive(Debug, Clone, PartialEq, Eq, FromRow)]
pub struct LedgerRow {
    pub id: i64,
    #[sqlx(flatten)]
    pub row: AttemptRow,
}

/// The columns of an [`AttemptRow`], in its field order (what the selects read and the
/// insert binds).
macro_rules! columns {
    () => {
        "at_ms, connection_id, turn, attempt, profile_id, reason, model, status, failure_kind, scope, ttfb_ms, \
         duration_ms, input_tokens, output_tokens, session, conversation, moved, cache_read_tokens, \
         cache_write_tokens, tags, reference_cost_micro_usd, user_name, pool_id, origin_id, limit_id"
    };
}

/// Newest first.
pub async fn for_connection(
    conn: &mut AnyConnection,
    connection_id: &str,
    limit: i64,
) -> Result<Vec<AttemptRow>, StoreError> {
    Ok(sqlx::query_as::<_, AttemptRow>(concat!(
        "SELECT ",
        columns!(),
        " FROM attempts WHERE connection_id = $1 OR origin_id = $1 ORDER BY id DESC LIMIT $2"
    ))
    .bind(connection_id)
    .bind(limit)
    .fetch_all(conn)
    .await?)
}

/// Newest first, only rows at or after `since_ms`.
pub async fn for_connection_since(
    conn: &mut AnyConnection,
    connection_id: &str,
    since_ms: i64,
    limit: i64,
) -> Result<Vec<AttemptRow>, StoreError> {
    Ok(sqlx::query_as::<_, AttemptRow>(concat!(
        "SELECT ",
        columns!(),
        " FROM attempts WHERE (connection_id = $1 OR origin_id = $1) AND at_ms >= $2 ORDER BY id DESC LIMIT $3"
    ))
    .bind(connection_id)
    .bind(since_ms)
    .bind(limit)
    .fetch_all(conn)
    .await?)
}

/// Newest first: the rows routed through pool `pool_id`, at or after `since_ms`.
pub async fn for_pool(
    conn: &mut AnyConnection,
    pool_id: &str,
    since_ms: i64,
    limit: i64,
) -> Result<Vec<AttemptRow>, StoreError> {
    Ok(sqlx::query_as::<_, AttemptRow>(concat!(
        "SELECT ",
        columns!(),
        " FROM attempts WHERE pool_id = $1 AND at_ms >= $2 ORDER BY id DESC LIMIT $3"
    ))
    .bind(pool_id)
    .bind(since_ms)
    .bind(limit)
    .fetch_all(conn)
    .await?)
}

/// One page of a pool's rows at or after `since_ms`, oldest id first, after `after_id`.
pub async fn pool_page_since(
    conn: &mut AnyConnection,
    pool_id: &str,
    since_ms: i64,
    after_id: i64,
    limit: i64,
) -> Result<Vec<LedgerRow>, StoreError> {
    Ok(sqlx::query_as::<_, LedgerRow>(concat!(
        "SELECT id, ",
        columns!(),
        " FROM attempts WHERE pool_id = $1 AND id > $2 AND at_ms >= $3 ORDER BY id LIMIT $4"
    ))
    .bind(pool_id)
    .bind(after_id)
    .bind(since_ms)
    .bind(limit)
    .fetch_all(conn)
    .await?)
}

/// Newest first: a profile's rows at or after `since_ms` whose tags hold `tag` = `value`
/// (`switchyard exec --failover`: what the relay recorded for one launch, tagged with its id).
/// `tag` is a tag name (`a-z 0-9 _ -`, core `tag.rs`).
pub async fn tagged_since(
    conn: &mut AnyConnection,
    connection_id: &str,
    profile_id: &str,
    since_ms: i64,
    tag: &str,
    value: &str,
) -> Result<Vec<AttemptRow>, StoreError> {
    // The tag's value: SQLite's JSON path, Postgres's `->>` on the text parsed as JSON (tags are
    // written by the relay as a JSON object, never anything else).
    let (sql, key) = match crate::Backend::of(conn) {
        crate::Backend::Sqlite => (
            concat!(
                "SELECT ",
                columns!(),
                " FROM attempts WHERE connection_id = $1 AND at_ms >= $2 AND profile_id = $3 AND tags IS NOT NULL \
                 AND CASE WHEN json_valid(tags) THEN json_extract(tags, $4) END = $5 ORDER BY id DESC LIMIT 100"
            ),
            format!("$.\"{tag}\""),
        ),
        crate::Backend::Postgres => (
            concat!(
                "SELECT ",
                columns!(),
                " FROM attempts WHERE connection_id = $1 AND at_ms >= $2 AND profile_id = $3 AND tags IS NOT NULL \
                 AND (tags::jsonb ->> $4) = $5 ORDER BY id DESC LIMIT 100"
            ),
            tag.to_string(),
        ),
    };
    Ok(sqlx::query_as::<_, AttemptRow>(sql)
        .bind(connection_id)
        .bind(since_ms)
        .bind(profile_id)
        .bind(key)
        .bind(value)
        .fetch_all(conn)
        .await?)
}

/// The id just before the connection's first row at or after `since_ms` (through the
/// `(connection_id, at_ms)` index), where paging starts: so a recent `since` on a long ledger
/// does not walk the older rows. `None`: no such row.
pub async fn page_start(
    conn: &mut AnyConnection,
    connection_id: &str,
    since_ms: i64,
) -> Result<Option<i64>, StoreError> {
    Ok(sqlx::query_scalar::<_, Option<i64>>(
        "SELECT min(id) - 1 FROM attempts WHERE connection_id = $1 AND at_ms >= $2",
    )
    .bind(connection_id)
    .bind(since_ms)
    .fetch_one(conn)
    .await?)
}

/// One page of a connection's rows at or after `since_ms`, oldest id first, starting after
/// `after_id` (keyset paging: each page is an index range, so reading every row of a large
/// ledger never holds more than one page).
pub async fn page_since(
    conn: &mut AnyConnection,
    connection_id: &str,
    since_ms: i64,
    after_id: i64,
    limit: i64,
) -> Result<Vec<LedgerRow>, StoreError> {
    Ok(sqlx::query_as::<_, LedgerRow>(concat!(
        "SELECT id, ",
        columns!(),
        " FROM attempts WHERE connection_id = $1 AND id > $2 AND at_ms >= $3 ORDER BY id LIMIT $4"
    ))
    .bind(connection_id)
    .bind(after_id)
    .bind(since_ms)
    .bind(limit)
    .fetch_all(conn)
    .await?)
}

/// One profile's prompt-cache counts summed over the ledger (successful attempts only).
#[derive(Debug, Clone, Default, PartialEq, Eq, sqlx::FromRow)]
pub struct CacheTotals {
    pub profile_id: String,
    /// Sum of `input_tokens` as reported (Anthropic: uncached only; OpenAI: the whole prompt).
    pub input_tokens: i64,
    pub cache_read_tokens: i64,
    pub cache_write_tokens: i64,
}

/// Per profile of the connection, the cache counts of its successful attempts in the ledger
/// (everything retained), by profile id.
pub async fn cache_totals(conn: &mut AnyConnection, connection_id: &str) -> Result<Vec<CacheTotals>, StoreError> {
    Ok(sqlx::query_as::<_, CacheTotals>(
        "SELECT profile_id, CAST(COALESCE(SUM(input_tokens), 0) AS BIGINT) AS input_tokens, \
         CAST(COALESCE(SUM(cache_read_tokens), 0) AS BIGINT) AS cache_read_tokens, \
         CAST(COALESCE(SUM(cache_write_tokens), 0) AS BIGINT) AS cache_write_tokens \
         FROM attempts WHERE connection_id = $1 AND status BETWEEN 200 AND 299 AND input_tokens IS NOT NULL \
         GROUP BY profile_id ORDER BY profile_id",
    )
    .bind(connection_id)
    .fetch_all(conn)
    .await?)
}

/// Per profile id, how many of the connection's conversations in the ledger it served first
/// (the profile of each conversation's oldest retained attempt; SQLite takes a bare column
/// from the row that holds `MIN(id)`).
pub async fn conversation_openers(
    conn: &mut AnyConnection,
    connection_id: &str,
) -> Result<Vec<(String, i64)>, StoreError> {
    // Postgres has no bare column beside an aggregate: DISTINCT ON picks each conversation's oldest row.
    let sql = match crate::Backend::of(conn) {
        crate::Backend::Sqlite => {
            "SELECT profile_id, COUNT(*) FROM (SELECT profile_id, MIN(id) FROM attempts \
             WHERE connection_id = $1 AND conversation IS NOT NULL GROUP BY conversation) \
             GROUP BY profile_id ORDER BY profile_id"
        }
        crate::Backend::Postgres => {
            "SELECT profile_id, COUNT(*) FROM (SELECT DISTINCT ON (conversation) profile_id FROM attempts \
             WHERE connection_id = $1 AND conversation IS NOT NULL ORDER BY conversation, id) AS firsts \
             GROUP BY profile_id ORDER BY profile_id"
        }
    };
    Ok(sqlx::query_as::<_, (String, i64)>(sql).bind(connection_id).fetch_all(conn).await?)
}

/// Keeps at most the newest `keep` rows overall (by id range: ids only grow, so this is an
/// index seek, not a scan of `keep` rows); returns how many were removed.
pub async fn prune(conn: &mut AnyConnection, keep: i64) -> Result<u64, StoreError> {
    Ok(sqlx::query("DELETE FROM attempts WHERE id <= (SELECT max(id) FROM attempts) - $1")
        .bind(keep)
        .execute(conn)
        .await?
        .rows_affected())
}

/// Rows per INSERT statement; a shorter batch pads with NULL rows that the statement skips,
/// so one prepared statement serves every batch size (each distinct shape would be another
/// cached statement per pooled connection, ~10 MB of relay RSS under load when there were 64).
/// Not larger: at a few hundred requests a second a 100 ms batch holds tens of rows, and a
/// 256-row shape bound ~200 NULL rows for them (callgrind: +1.4k instructions per row).
const SHAPE_ROWS: usize = 64;

/// Columns bound per row.
const COLUMNS: usize = 25;

/// `INSERT … SELECT * FROM (VALUES (…) × 64) WHERE column1 IS NOT NULL` (`at_ms` is never
/// NULL in a real row), in the backend's placeholders (`values.rs` says why SQLite's are `?`).
fn values_sql(backend: crate::Backend) -> &'static str {
    static SQLITE: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    static POSTGRES: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    let cell = match backend {
        crate::Backend::Sqlite => &SQLITE,
        crate::Backend::Postgres => &POSTGRES,
    };
    cell.get_or_init(|| {
        format!(
            concat!("INSERT INTO attempts (", columns!(), ") SELECT * FROM (VALUES {}) AS v WHERE column1 IS NOT NULL"),
            crate::values::value_rows(backend, SHAPE_ROWS, COLUMNS)
        )
    })
}

/// Appends a batch: up to 64 rows in one statement (one implicit transaction, one round trip
/// to the SQLite worker thread); a longer batch in one transaction. Bound parameters, not a
/// JSON array unpacked by `json_each`, which cost SQLite 7 vs 4.5 µs per row (256-row batches).
/// Takes the rows by value: their strings move into the statement's arguments, where a
/// borrowed argument is copied once more before it reaches the worker thread.
pub async fn insert_batch(conn: &mut AnyConnection, rows: Vec<AttemptRow>) -> Result<(), StoreError> {
    if rows.len() <= SHAPE_ROWS {
        return insert_chunk(conn, rows.into_iter()).await;
    }
    let mut tx = sqlx::Connection::begin(&mut *conn).await?;
    let mut rows = rows.into_iter().peekable();
    while rows.peek().is_some() {
        insert_chunk(&mut tx, rows.by_ref().take(SHAPE_ROWS)).await?;
    }
    tx.commit().await?;
    Ok(())
}

/// At most [`SHAPE_ROWS`] rows. The arguments are reserved up front and added directly
/// (`Query::bind` grows its vector eleven times on the way to 1,408 arguments).
async fn insert_chunk(conn: &mut AnyConnection, chunk: impl Iterator<Item = AttemptRow>) -> Result<(), StoreError> {
    let mut args = AnyArguments::default();
    args.reserve(SHAPE_ROWS * COLUMNS, 0);
    let mut rows = 0;
    for r in chunk.take(SHAPE_ROWS) {
        rows += 1;
        add_row(&mut args, r).map_err(sqlx::Error::Encode)?;
    }
    if rows == 0 {
        return Ok(());
    }
    for _ in rows..SHAPE_ROWS {
        pad_row(&mut args).map_err(sqlx::Error::Encode)?;
    }
    let sql = values_sql(crate::Backend::of(conn));
    sqlx::query_with(sql, args).execute(conn).await?;
    Ok(())
}

/// One row's columns, in [`columns!`] order.
fn add_row(args: &mut AnyArguments<'static>, r: AttemptRow) -> Result<(), BoxDynError> {
    args.add(r.at_ms)?;
    args.add(r.connection_id)?;
    args.add(r.turn)?;
    args.add(r.attempt)?;
    args.add(r.profile_id)?;
    args.add(r.reason)?;
    args.add(r.model)?;
    args.add(r.status)?;
    args.add(r.failure_kind)?;
    args.add(r.scope)?;
    args.add(r.ttfb_ms)?;
    args.add(r.duration_ms)?;
    args.add(r.input_tokens)?;
    args.add(r.output_tokens)?;
    args.add(r.session)?;
    args.add(r.conversation)?;
    args.add(r.moved)?;
    args.add(r.cache_read_tokens)?;
    args.add(r.cache_write_tokens)?;
    args.add(r.tags)?;
    args.add(r.reference_cost_micro_usd)?;
    args.add(r.user_name)?;
    args.add(r.pool_id)?;
    args.add(r.origin_id)?;
    args.add(r.limit_id)?;
    Ok(())
}

/// A padding row of NULLs, each typed like its column (Postgres resolves one type per column
/// of a `VALUES` list and refuses text beside bigint).
fn pad_row(args: &mut AnyArguments<'static>) -> Result<(), BoxDynError> {
    const INTEGER: [bool; COLUMNS] = [
        true, false, false, true, false, false, false, true, false, false, true, true, true, true, false, false, false,
        true, true, false, true, false, false, false, false,
    ];
    for integer in INTEGER {
        if integer {
            args.add(None::<i64>)?;
        } else {
            args.add(None::<String>)?;
        }
    }
    Ok(())
}

/// Each relay user's latest row: (user, at_ms).
pub async fn last_used_by_user(conn: &mut AnyConnection) -> Result<Vec<(String, i64)>, StoreError> {
    Ok(sqlx::query_as::<_, (String, i64)>(
        "SELECT user_name, max(at_ms) FROM attempts WHERE user_name IS NOT NULL GROUP BY user_name",
    )
    .fetch_all(conn)
    .await?)
}

/// Refusals of `limit_id` at or after `since_ms` (of `user` when given: a `users` limit's window).
pub async fn limit_refusals(
    conn: &mut AnyConnection,
    limit_id: &str,
    user: Option<&str>,
    since_ms: i64,
) -> Result<i64, StoreError> {
    let count = match user {
        Some(user) => {
            sqlx::query_scalar("SELECT count(*) FROM attempts WHERE limit_id = $1 AND at_ms >= $2 AND user_name = $3")
                .bind(limit_id)
                .bind(since_ms)
                .bind(user)
                .fetch_one(conn)
                .await?
        }
        None => {
            sqlx::query_scalar("SELECT count(*) FROM attempts WHERE limit_id = $1 AND at_ms >= $2")
                .bind(limit_id)
                .bind(since_ms)
                .fetch_one(conn)
                .await?
        }
    };
    Ok(count)
}
