//! The placeholders of a multi-row `VALUES` list (the ledger's batches, the replicas' bindings,
//! a store copy's rows): `($1, $2), ($3, $4)` on Postgres, `(?, ?), (?, ?)` on SQLite.
//!
//! Why two spellings: sqlx binds an SQLite statement's arguments by asking SQLite each
//! parameter's name (`sqlite3_bind_parameter_name`), a walk of the statement's name list from
//! its start, so binding n named (`$N`) parameters costs n²/2 steps — 1.2 M for a 1,536-argument
//! ledger batch, 38 % of a loaded relay's CPU (perf, issue 40). An anonymous `?` has no name and
//! binds in order, which is what a `VALUES` list numbered row after row means anyway.

use crate::Backend;

/// `rows` tuples of `columns` placeholders each, in order row after row (numbered from `$1` on
/// Postgres).
pub(crate) fn value_rows(backend: Backend, rows: usize, columns: usize) -> String {
    let tuples: Vec<String> = (0..rows)
        .map(|r| {
            let marks: Vec<String> = (1..=columns)
                .map(|c| match backend {
                    Backend::Postgres => format!("${}", r * columns + c),
                    Backend::Sqlite => "?".to_string(),
                })
                .collect();
            format!("({})", marks.join(", "))
        })
        .collect();
    tuples.join(", ")
}

#[cfg(test)]
mod tests {
    use super::value_rows;
    use crate::Backend;

    #[test]
    fn placeholders_are_numbered_row_after_row_on_postgres() {
        assert_eq!(value_rows(Backend::Postgres, 2, 3), "($1, $2, $3), ($4, $5, $6)");
        assert_eq!(value_rows(Backend::Postgres, 1, 1), "($1)");
        assert_eq!(value_rows(Backend::Postgres, 0, 4), "", "no rows, no tuples");
    }

    #[test]
    fn sqlite_placeholders_are_anonymous_so_binding_never_walks_a_name_list() {
        assert_eq!(value_rows(Backend::Sqlite, 2, 2), "(?, ?), (?, ?)");
        assert_eq!(value_rows(Backend::Sqlite, 0, 4), "", "no rows, no tuples");
    }
}
