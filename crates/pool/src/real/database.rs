//! The PostgreSQL a cell's real pools lend connections to: the one `postgres_url` names,
//! or one the lab starts for the cell, resident across its window; the table the
//! requests use, made afresh; and the sum of its counters that the writes must account
//! for after the run.
//!
//! Not here: pools, requests, timing.

use tokio_postgres::NoTls;

use super::statement::{create_table, TABLE};

/// Whether the lab can start a PostgreSQL here; `Err` says why not.
pub fn installed() -> Result<(), String> {
    let bin = std::path::Path::new("/usr/lib/postgresql/15/bin/postgres");
    if bin.is_file() {
        Ok(())
    } else {
        Err(format!("{} not found", bin.display()))
    }
}

/// The server a cell uses, and its own when the lab started it (stopped and its folder
/// removed when this is dropped).
pub struct Database {
    url: String,
    _own: Option<OwnServer>,
}

/// A server the lab started for the cell.
struct OwnServer;

impl Database {
    /// The server at `url`, or, when `url` is empty, one the lab starts on `cpus`.
    pub fn open(url: &str, _cpus: &[usize]) -> Result<Database, String> {
        if url.is_empty() {
            return Err(
                "postgres_url is empty and this build starts no PostgreSQL of its own: accepted a libpq key=value string or a postgresql:// URL"
                    .into(),
            );
        }
        Ok(Database {
            url: url.to_owned(),
            _own: None,
        })
    }

    /// Where the pools connect.
    pub fn url(&self) -> &str {
        &self.url
    }

    fn client(&self) -> Result<postgres::Client, String> {
        postgres::Client::connect(&self.url, NoTls)
            .map_err(|e| format!("PostgreSQL at {:?}: {e}", self.url))
    }

    /// Makes the table of `rows` rows, every counter at 0.
    pub fn prepare(&self, rows: u64) -> Result<(), String> {
        self.client()?
            .batch_execute(&create_table(rows))
            .map_err(|e| format!("creating {TABLE}: {e}"))
    }

    /// The sum of the table's counters: the writes the server has committed.
    pub fn committed_writes(&self) -> Result<i64, String> {
        let row = self
            .client()?
            .query_one(
                &format!("SELECT COALESCE(SUM(balance), 0)::bigint FROM {TABLE}"),
                &[],
            )
            .map_err(|e| format!("summing {TABLE}: {e}"))?;
        Ok(row.get(0))
    }
}
