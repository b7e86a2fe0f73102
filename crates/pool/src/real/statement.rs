//! The statements a request runs against PostgreSQL, the same text for every pool: a
//! primary-key read and a small durable write (one row's counter, committed on its own,
//! so with `synchronous_commit = on` the answer waits for the WAL flush), and the table
//! they run on. Both go through the extended protocol with a parameter, as Rust code
//! using these crates usually does (`query_opt` / `execute` with the text: a Parse and
//! a Bind per request, no statement cache, since r2d2 and bb8 offer none and deadpool's
//! would favour it).
//!
//! Not here: pools, timing, the server.

/// The table the requests use; created afresh for each cell.
pub const TABLE: &str = "lab_pool_accounts";

/// A primary-key read.
pub const READ: &str = "SELECT id, balance FROM lab_pool_accounts WHERE id = $1";

/// A small durable write: one row's counter, one commit.
pub const WRITE: &str = "UPDATE lab_pool_accounts SET balance = balance + 1 WHERE id = $1";

/// One request's statement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Statement {
    /// Read the row with this key.
    Read(i32),
    /// Add one to the row with this key.
    Write(i32),
}

/// Rows a statement read or wrote, as the server answered.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Rows {
    /// Rows read (each with the key asked for).
    pub read: u64,
    /// Rows the server said it updated.
    pub written: u64,
}

/// The SQL that makes the table of `rows` rows, every counter at 0.
pub fn create_table(rows: u64) -> String {
    format!(
        "DROP TABLE IF EXISTS {TABLE}; \
         CREATE TABLE {TABLE} (id integer PRIMARY KEY, balance bigint NOT NULL); \
         INSERT INTO {TABLE} SELECT g, 0 FROM generate_series(1, {rows}) g; \
         ANALYZE {TABLE};"
    )
}

/// What a read's answer says, checked against the key asked for.
pub fn read_rows(asked: i32, got: Option<i32>) -> Result<Rows, String> {
    match got {
        Some(id) if id == asked => Ok(Rows {
            read: 1,
            written: 0,
        }),
        Some(id) => Err(format!("a read of id {asked} returned id {id}")),
        None => Err(format!("a read of id {asked} returned no row")),
    }
}

/// What a write's answer says: the rows the server updated.
pub fn written_rows(updated: u64) -> Rows {
    Rows {
        read: 0,
        written: updated,
    }
}

/// Runs `statement` on a sync client (r2d2's connections).
pub fn run_sync(client: &mut postgres::Client, statement: Statement) -> Result<Rows, String> {
    match statement {
        Statement::Read(id) => {
            let row = client.query_opt(READ, &[&id]).map_err(|e| e.to_string())?;
            read_rows(id, row.map(|r| r.get(0)))
        }
        Statement::Write(id) => client
            .execute(WRITE, &[&id])
            .map(written_rows)
            .map_err(|e| e.to_string()),
    }
}

/// Runs `statement` on an async client (deadpool's and bb8's connections).
pub async fn run_async(
    client: &tokio_postgres::Client,
    statement: Statement,
) -> Result<Rows, String> {
    match statement {
        Statement::Read(id) => {
            let row = client
                .query_opt(READ, &[&id])
                .await
                .map_err(|e| e.to_string())?;
            read_rows(id, row.map(|r| r.get(0)))
        }
        Statement::Write(id) => client
            .execute(WRITE, &[&id])
            .await
            .map(written_rows)
            .map_err(|e| e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_read_counts_only_the_row_asked_for() {
        assert_eq!(read_rows(7, Some(7)).unwrap().read, 1);
        assert!(read_rows(7, Some(8)).unwrap_err().contains("returned id 8"));
        assert!(read_rows(7, None).unwrap_err().contains("no row"));
        assert_eq!(written_rows(1).written, 1);
    }
}
