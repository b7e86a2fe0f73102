//! The database's own account of a window: PostgreSQL's `pg_stat_statements` execution
//! time grouped by the table each statement touches (mongotop's time per collection), and
//! the WAL written. Not here: running the statements (the parent module).

use std::collections::BTreeMap;

use crate::store::TRANSACTION;

/// The tables the lease stores use; a statement on any other (the lab's own queries on
/// the catalogue) is no store's time.
pub const TABLES: [&str; 4] = ["lease", "clock", "txns", "txn_log"];

/// The table `query` (a normalised statement text as `pg_stat_statements` keeps it)
/// touches and whether it writes it: the table it inserts into, updates or deletes from,
/// else the first it reads; BEGIN, COMMIT and ROLLBACK are [`TRANSACTION`]'s. `None`
/// for a statement on no lease table.
pub fn table_of(query: &str) -> Option<(&'static str, bool)> {
    let lower = query.trim().to_ascii_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .collect();
    let first = *words.first()?;
    if matches!(first, "begin" | "commit" | "rollback" | "start" | "end") {
        return Some((TRANSACTION, true));
    }
    let after = |keyword: &str| {
        words
            .windows(2)
            .find(|w| w[0] == keyword)
            .and_then(|w| TABLES.into_iter().find(|t| *t == w[1]))
    };
    let (table, write) = match first {
        "insert" => (after("into"), true),
        "update" => (
            words
                .get(1)
                .and_then(|w| TABLES.into_iter().find(|t| t == w)),
            true,
        ),
        "delete" => (after("from"), true),
        "select" => (after("from"), false),
        _ => (None, false),
    };
    Some((table?, write))
}

/// Execution milliseconds per table, (read, write), from `pg_stat_statements` rows
/// (query text, total execution ms).
pub fn tables(rows: &[(String, f64)]) -> BTreeMap<String, (f64, f64)> {
    let mut out: BTreeMap<String, (f64, f64)> = BTreeMap::new();
    for (query, ms) in rows {
        if let Some((table, write)) = table_of(query) {
            let e = out.entry(table.to_owned()).or_default();
            if write {
                e.1 += ms;
            } else {
                e.0 += ms;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_statement_is_charged_to_the_table_it_writes_else_reads() {
        let cases = [
            ("BEGIN", Some((TRANSACTION, true))),
            ("COMMIT", Some((TRANSACTION, true))),
            ("INSERT INTO txns (lease, op, state) VALUES ($1, $2, $3) RETURNING id", Some(("txns", true))),
            ("SELECT holder FROM lease WHERE uuid = $1 FOR UPDATE", Some(("lease", false))),
            ("UPDATE clock SET time = GREATEST(time, $1) WHERE namespace = $2", Some(("clock", true))),
            (
                "UPDATE lease SET expiry = $1 WHERE uuid = $2 AND holder = $3 AND expiry >= (SELECT time FROM clock WHERE namespace = $4)",
                Some(("lease", true)),
            ),
            ("INSERT INTO txn_log (txn, lease) VALUES ($1, $2)", Some(("txn_log", true))),
            ("DELETE FROM lease WHERE expiry < $1", Some(("lease", true))),
            ("SELECT pg_stat_statements_reset()", None),
            ("SELECT query FROM pg_stat_statements", None),
        ];
        for (query, want) in cases {
            assert_eq!(table_of(query), want, "{query}");
        }
        let t = tables(&[
            ("BEGIN".into(), 1.0),
            ("COMMIT".into(), 2.0),
            ("SELECT holder FROM lease WHERE uuid = $1".into(), 3.0),
            ("UPDATE lease SET expiry = $1 WHERE uuid = $2".into(), 4.0),
        ]);
        assert_eq!(t[TRANSACTION], (0.0, 3.0));
        assert_eq!(t["lease"], (3.0, 4.0));
    }
}
