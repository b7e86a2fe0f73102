//! What every lease store offers, the figures a session keeps about its own writes, and
//! the meter through which a store reports time its caller spent blocked.

use std::cell::Cell;
use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};

thread_local! {
    static WAITED: Cell<Duration> = const { Cell::new(Duration::ZERO) };
}

/// Notes that the calling thread was blocked for `waited` inside a store (a busy-handler
/// sleep, LMDB's writer lock, the batched store's commit queue). Stores run on the
/// worker's own thread, so a thread-local carries it to the worker without widening the
/// store contract; the worker hands it to the runner after each step
/// ([`take_waits`]).
pub fn note_wait(waited: Duration) {
    WAITED.with(|w| w.set(w.get() + waited));
}

/// The blocked time noted on this thread since the last call, and resets it.
pub fn take_waits() -> Duration {
    WAITED.with(|w| w.replace(Duration::ZERO))
}

/// The blocked time noted on this thread so far in this step (left in place for
/// [`take_waits`]).
pub fn waits_so_far() -> Duration {
    WAITED.with(|w| w.get())
}

/// Time on this thread since `start`, less the blocked time noted since then
/// (`waited_before` is [`waits_so_far`] at `start`): the store's busy time, not counting
/// a caller asleep in the busy handler or queued for a writer. A sleeping caller keeps
/// no database busy (the seed's mongotop counted the database's time), and one sleep of
/// SQLite's busy handler (1 ms and up) outweighs dozens of statements.
pub fn busy_since(start: Instant, waited_before: Duration) -> Duration {
    start
        .elapsed()
        .saturating_sub(waits_so_far().saturating_sub(waited_before))
}

/// The lock table's ids of the stores' locks.
pub mod lock_ids {
    use harness::locks::LockId;
    /// A store's single writer: LMDB's writer lock, the batched store's committer.
    pub const WRITER: LockId = LockId(0);
}

/// The store's busy time one session spent on one table (blocked time left out:
/// [`busy_since`]).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct TableTime {
    /// Time in statements that read the table.
    pub read: Duration,
    /// Time in statements that wrote it.
    pub write: Duration,
}

/// The name under which a SQLite store charges `BEGIN` and `COMMIT` (taking the write
/// lock, appending to the WAL): the transaction machinery's own time, not a table's.
pub const TRANSACTION: &str = "transaction";

/// A session's own account of its work (reset when the measured window opens).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SessionStats {
    /// Rows (or keys) written by extends.
    pub rows_written: u64,
    /// Per table.
    pub tables: BTreeMap<&'static str, TableTime>,
}

impl SessionStats {
    /// Runs `f`, charging its busy time (its time less what it spent blocked,
    /// [`busy_since`]) to `table`, as a write if `write`.
    pub fn timed<T, E>(
        &mut self,
        table: &'static str,
        write: bool,
        f: impl FnOnce() -> Result<T, E>,
    ) -> Result<T, E> {
        let (start, waited) = (Instant::now(), waits_so_far());
        let out = f();
        self.charge(table, write, busy_since(start, waited));
        out
    }

    /// Adds `spent` to `table`'s time, as a write if `write`.
    pub fn charge(&mut self, table: &'static str, write: bool, spent: Duration) {
        let t = self.tables.entry(table).or_default();
        if write {
            t.write += spent;
        } else {
            t.read += spent;
        }
    }
}

/// A database server's account of one window ([`LeaseStore::server_account`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ServerAccount {
    /// Execution milliseconds per table, (read, write), as the server timed them.
    pub tables: BTreeMap<String, (f64, f64)>,
    /// Bytes the server wrote to its log (PostgreSQL's WAL) in the window.
    pub bytes: u64,
    /// Figures of its own for `extra`.
    pub extra: serde_json::Map<String, serde_json::Value>,
}

/// A lease as stored: who holds it and until when (simulated milliseconds).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredLease {
    /// The holder (a unit name).
    pub holder: String,
    /// Expiry, simulated milliseconds since the start.
    pub expiry: i64,
}

/// A store of leadership leases.
pub trait LeaseStore: Send + Sync + 'static {
    /// One worker's connection and figures.
    type Session: Send;
    /// Opens a session.
    fn session(&self) -> Result<Self::Session, String>;
    /// The session's figures.
    fn stats<'s>(&self, session: &'s Self::Session) -> &'s SessionStats;
    /// Forgets the session's figures (the measured window opens).
    fn reset_stats(&self, session: &mut Self::Session);
    /// Claims `lease` for `holder` if nobody holds it or its lease expired before `now`.
    fn claim(
        &self,
        s: &mut Self::Session,
        lease: &str,
        holder: &str,
        now: i64,
        expiry: i64,
    ) -> Result<bool, String>;
    /// Extends `lease` to `expiry` if `holder` holds it; `false` for anyone else.
    fn extend(
        &self,
        s: &mut Self::Session,
        lease: &str,
        holder: &str,
        now: i64,
        expiry: i64,
    ) -> Result<bool, String>;
    /// Removes leases that expired before `now`; returns how many.
    fn sweep(&self, s: &mut Self::Session, now: i64) -> Result<u64, String>;
    /// Whether the store ran with settings under which an acknowledged extend survives a
    /// crash (SQLite `synchronous=full`, LMDB with its default sync); the report marks
    /// each store from this. A read-back in the same process does not prove it; the
    /// kill test does.
    fn durable(&self) -> bool;
    /// Reads every lease back through the store's own environment or a fresh SQLite
    /// connection (never a second LMDB environment on the same files in this process).
    fn read_back(&self) -> Result<HashMap<String, StoredLease>, String>;
    /// Rows written outside sessions (e.g. a clock updater), for rows per extend.
    fn background_rows(&self) -> u64 {
        0
    }
    /// The database's own account of the window just closed (`window` long), where the
    /// store has one (PostgreSQL's `pg_stat_statements` and WAL): it replaces the
    /// sessions' timing per table and the process's bytes written.
    fn server_account(
        &self,
        _window: std::time::Duration,
    ) -> Option<Result<ServerAccount, String>> {
        None
    }
    /// Store-specific figures for `extra`.
    fn extra(&self) -> serde_json::Map<String, serde_json::Value> {
        serde_json::Map::new()
    }
    /// Resets store-wide window figures.
    fn window_opened(&self) {}
    /// The locks this store names for the lock table (through
    /// [`harness::locks::thread_acquired`], ids from [`lock_ids`]) and what it leaves
    /// unnamed; by default it names none.
    fn locks(&self) -> harness::locks::LockSet {
        harness::locks::LockSet::new().unnamed("this store's locks (it names none)")
    }
}
