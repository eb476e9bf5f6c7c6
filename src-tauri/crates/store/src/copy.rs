//! Copying a table's rows from one store into a Postgres store, column by column as the
//! target's schema declares them (`store copy`, moving a data dir onto a team store). Both
//! schemas come from this crate's migrations, so the columns have the same names; each value is
//! read as the source holds it (SQLite's types are per value) and bound as the target column's
//! type, so a SQL NULL is typed and an integer in a REAL column arrives as a double. Nothing here
//! reads a secret: the sealed vault's rows are re-sealed by the engine, not copied.

use futures_util::TryStreamExt;
use sqlx::any::AnyRow;
use sqlx::{AnyConnection, Column, Row, TypeInfo, ValueRef};

use crate::error::StoreError;

/// The type of a target column, as far as a copy needs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Integer,
    Double,
    Text,
    Bytes,
}

/// One value as the source holds it.
#[derive(Debug, Clone, PartialEq)]
enum Cell {
    Null,
    Integer(i64),
    Double(f64),
    Text(String),
    Bytes(Vec<u8>),
}

/// The columns of `table` on the Postgres store `target`, in their order.
async fn target_columns(target: &mut AnyConnection, table: &str) -> Result<Vec<(String, Kind)>, StoreError> {
    let rows = sqlx::query_as::<_, (String, String)>(
        "SELECT CAST(column_name AS TEXT), CAST(data_type AS TEXT) FROM information_schema.columns \
         WHERE table_schema = current_schema() AND table_name = $1 ORDER BY ordinal_position",
    )
    .bind(table)
    .fetch_all(target)
    .await?;
    if rows.is_empty() {
        return Err(StoreError::CopyRefused(format!("the target store has no table {table}")));
    }
    rows.into_iter()
        .map(|(name, ty)| {
            let kind = match ty.as_str() {
                "bigint" | "integer" | "smallint" => Kind::Integer,
                "double precision" | "real" | "numeric" => Kind::Double,
                "text" | "character varying" => Kind::Text,
                "bytea" => Kind::Bytes,
                other => {
                    return Err(StoreError::CopyRefused(format!(
                        "{table}.{name} has type {other} on the target, which a copy does not carry"
                    )))
                }
            };
            Ok((name, kind))
        })
        .collect()
}

/// Column `i` of `row` as the source holds it.
fn cell(row: &AnyRow, i: usize) -> Result<Cell, StoreError> {
    let raw = row.try_get_raw(i)?;
    if raw.is_null() {
        return Ok(Cell::Null);
    }
    let ty = raw.type_info().name().to_ascii_uppercase();
    Ok(match ty.as_str() {
        "BOOLEAN" => Cell::Integer(i64::from(row.try_get::<bool, _>(i)?)),
        "SMALLINT" | "INTEGER" | "BIGINT" => Cell::Integer(row.try_get::<i64, _>(i)?),
        "REAL" | "DOUBLE" => Cell::Double(row.try_get::<f64, _>(i)?),
        "TEXT" => Cell::Text(row.try_get::<String, _>(i)?),
        "BLOB" => Cell::Bytes(row.try_get::<Vec<u8>, _>(i)?),
        other => {
            let column = row.column(i).name().to_string();
            return Err(StoreError::CopyRefused(format!("{column}: the source holds a value of type {other}")));
        }
    })
}

/// Binds `value` as a `kind` column; a value that does not fit is an error naming the column.
fn bind<'q>(
    query: sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments<'q>>,
    value: Cell,
    kind: Kind,
    column: &str,
) -> Result<sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments<'q>>, StoreError> {
    let misfit = |what: &str| StoreError::CopyRefused(format!("{column}: the source holds {what}"));
    Ok(match (kind, value) {
        (Kind::Integer, Cell::Null) => query.bind(None::<i64>),
        (Kind::Integer, Cell::Integer(n)) => query.bind(n),
        (Kind::Double, Cell::Null) => query.bind(None::<f64>),
        #[allow(clippy::cast_precision_loss)] // a REAL column holding a whole number, as SQLite stores it
        (Kind::Double, Cell::Integer(n)) => query.bind(n as f64),
        (Kind::Double, Cell::Double(x)) => query.bind(x),
        (Kind::Text, Cell::Null) => query.bind(None::<String>),
        (Kind::Text, Cell::Text(s)) => query.bind(s),
        (Kind::Bytes, Cell::Null) => query.bind(None::<Vec<u8>>),
        (Kind::Bytes, Cell::Bytes(b)) => query.bind(b),
        (kind, _) => return Err(misfit(&format!("a value that is not {kind:?}"))),
    })
}

/// Rows a copy leaves out: those whose text column `column` holds one of `values`.
#[derive(Debug, Clone, Copy)]
pub struct Except<'a> {
    pub column: &'a str,
    pub values: &'a [&'a str],
}

impl Except<'_> {
    fn drops(&self, row: &AnyRow) -> bool {
        row.try_get::<String, _>(self.column).is_ok_and(|v| self.values.contains(&v.as_str()))
    }
}

/// Rows per INSERT statement: a copy's round trips, not its rows, are what it waits on.
const ROWS_PER_STATEMENT: usize = 256;

/// Postgres binds at most 65,535 parameters per statement.
const MAX_PARAMETERS: usize = 65_535;

/// Copies every row of `table` from `source` into `target` (a Postgres store) but those
/// `except` names, [`ROWS_PER_STATEMENT`] rows per INSERT. `progress` is told the running count
/// after every statement. Returns how many rows were written.
pub async fn copy_table(
    source: &mut AnyConnection,
    target: &mut AnyConnection,
    table: &str,
    except: Option<Except<'_>>,
    progress: &mut (dyn FnMut(u64) + Send),
) -> Result<u64, StoreError> {
    let columns = target_columns(target, table).await?;
    let names: Vec<String> = columns.iter().map(|(n, _)| format!("\"{n}\"")).collect();
    let select = format!("SELECT {} FROM {table}", names.join(", "));
    let per_statement = ROWS_PER_STATEMENT.min(MAX_PARAMETERS / columns.len()).max(1);
    let mut rows = sqlx::query(&select).fetch(source);
    let mut pending: Vec<Vec<Cell>> = Vec::with_capacity(per_statement);
    let mut written = 0_u64;
    loop {
        let row = rows.try_next().await?;
        if let Some(row) = &row {
            if except.is_some_and(|e| e.drops(row)) {
                continue;
            }
            pending.push((0..columns.len()).map(|i| cell(row, i)).collect::<Result<_, _>>()?);
        }
        if pending.len() == per_statement || (row.is_none() && !pending.is_empty()) {
            written += insert(target, table, &names, &columns, std::mem::take(&mut pending)).await?;
            progress(written);
        }
        if row.is_none() {
            return Ok(written);
        }
    }
}

/// One multi-row INSERT of `rows` into `table`.
async fn insert(
    target: &mut AnyConnection,
    table: &str,
    names: &[String],
    columns: &[(String, Kind)],
    rows: Vec<Vec<Cell>>,
) -> Result<u64, StoreError> {
    let tuples = crate::values::value_rows(crate::Backend::of(target), rows.len(), columns.len());
    let sql = format!("INSERT INTO {table} ({}) VALUES {tuples}", names.join(", "));
    let count = rows.len() as u64;
    let mut query = sqlx::query(&sql);
    for row in rows {
        for (value, (name, kind)) in row.into_iter().zip(columns) {
            query = bind(query, value, *kind, &format!("{table}.{name}"))?;
        }
    }
    query.execute(target).await?;
    Ok(count)
}

/// How many rows `target` holds in `tables` (every table a copy writes), in `settings` other
/// than `own_settings`, and in `sealed_secrets` other than a relay token (what a replica that
/// served from the store once wrote for itself): a copy goes only into a store where this is 0.
pub async fn rows_held(target: &mut AnyConnection, tables: &[&str], own_settings: &[&str]) -> Result<i64, StoreError> {
    let marks: Vec<String> = (1..=own_settings.len()).map(|i| format!("${i}")).collect();
    let mut counts: Vec<String> =
        tables.iter().filter(|t| **t != "settings").map(|t| format!("(SELECT count(*) FROM {t})")).collect();
    counts.push(format!("(SELECT count(*) FROM settings WHERE key NOT IN ({}))", marks.join(", ")));
    counts.push("(SELECT count(*) FROM sealed_secrets WHERE account <> 'relay-token')".to_string());
    let sql = format!("SELECT CAST({} AS BIGINT)", counts.join(" + "));
    let mut query = sqlx::query_scalar::<_, i64>(&sql);
    for key in own_settings {
        query = query.bind(*key);
    }
    Ok(query.fetch_one(target).await?)
}

/// The master keys the target's sealed rows are sealed under (a replica's relay token).
pub async fn sealed_key_ids(target: &mut AnyConnection) -> Result<Vec<String>, StoreError> {
    Ok(sqlx::query_scalar::<_, String>("SELECT DISTINCT key_id FROM sealed_secrets ORDER BY key_id")
        .fetch_all(target)
        .await?)
}

/// Whether the Postgres database at `url` already holds tables of something other than a
/// Switchyard store (tables, but no migration history): a copy must not migrate into it.
pub async fn holds_foreign_tables(url: &str) -> Result<bool, StoreError> {
    use sqlx::Connection;
    sqlx::any::install_default_drivers();
    let mut conn = AnyConnection::connect(url).await?;
    let (tables, ours) = sqlx::query_as::<_, (i64, i64)>(
        "SELECT CAST(count(*) AS BIGINT), CAST(count(*) FILTER (WHERE table_name = '_sqlx_migrations') AS BIGINT) \
         FROM information_schema.tables WHERE table_schema = current_schema()",
    )
    .fetch_one(&mut conn)
    .await?;
    conn.close().await?;
    Ok(tables > 0 && ours == 0)
}

/// Moves an identity column's sequence past the rows a copy wrote with explicit ids (Postgres).
pub async fn advance_identity(target: &mut AnyConnection, table: &str, column: &str) -> Result<(), StoreError> {
    let sql = format!(
        "SELECT CAST(setval(pg_get_serial_sequence('{table}', '{column}'), \
         COALESCE((SELECT max({column}) FROM {table}), 0) + 1, false) AS BIGINT)"
    );
    sqlx::query_scalar::<_, i64>(&sql).fetch_one(target).await?;
    Ok(())
}
