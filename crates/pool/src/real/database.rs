//! The PostgreSQL a cell's real pools lend connections to: the one `postgres_url` names,
//! or one the lab starts for the cell (`launcher::postgres`: durable commits, pinned to
//! the cell's cores, gone with the cell), resident across its window; the table the
//! requests use, made afresh; and the sum of its counters that the writes must account
//! for after the run.
//!
//! Not here: pools, requests, timing, how a server is started.

use launcher::postgres::{Postgres, PostgresOptions};
use tokio_postgres::NoTls;

use super::statement::{create_table, TABLE};

/// Whether the lab can start a PostgreSQL here; `Err` says why not.
pub fn installed() -> Result<(), String> {
    launcher::postgres::bin_dir().map(|_| ())
}

/// The server a cell uses, and its own when the lab started it (stopped and its folder
/// removed when this is dropped).
pub struct Database {
    url: String,
    _own: Option<Postgres>,
}

impl Database {
    /// The server at `url`, or, when `url` is empty, one the lab starts on `cpus` (on
    /// every CPU this process may use when empty).
    pub fn open(url: &str, cpus: &[usize]) -> Result<Database, String> {
        if !url.is_empty() {
            return Ok(Database {
                url: url.to_owned(),
                _own: None,
            });
        }
        let server = Postgres::start(&PostgresOptions {
            cpus: (!cpus.is_empty()).then(|| cpus.to_vec()),
            ..PostgresOptions::default()
        })?;
        Ok(Database {
            url: server.url(),
            _own: Some(server),
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
