//! The placeholders of a multi-row `VALUES` list: `($1, $2), ($3, $4)` for 2 rows of 2 columns
//! (the ledger's batches, the replicas' bindings, a store copy's rows).

/// `rows` tuples of `columns` numbered placeholders each, numbered row after row from `$1`.
pub(crate) fn value_rows(rows: usize, columns: usize) -> String {
    let tuples: Vec<String> = (0..rows)
        .map(|r| {
            let marks: Vec<String> = (1..=columns).map(|c| format!("${}", r * columns + c)).collect();
            format!("({})", marks.join(", "))
        })
        .collect();
    tuples.join(", ")
}

#[cfg(test)]
mod tests {
    use super::value_rows;

    #[test]
    fn placeholders_are_numbered_row_after_row() {
        assert_eq!(value_rows(2, 3), "($1, $2, $3), ($4, $5, $6)");
        assert_eq!(value_rows(1, 1), "($1)");
        assert_eq!(value_rows(0, 4), "", "no rows, no tuples");
    }
}
