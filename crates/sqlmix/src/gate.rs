//! The gates a transaction passes before it touches SQLite: a connection pool, a weighted
//! semaphore, a circuit breaker, and the retry backoff. Each measures the time a caller
//! spends waiting in it, since that is the question the seed kept asking ("are we being
//! throttled by the semaphore?").

use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use harness::locks::Hold;
use harness::OpCtx;
use parking_lot::{Condvar, Mutex};
use rand::Rng;
use rusqlite::Connection;

/// First retry delay (the seed's runner: 1 ms).
pub const BACKOFF_FIRST: Duration = Duration::from_millis(1);
/// Longest retry delay (100 ms).
pub const BACKOFF_CAP: Duration = Duration::from_millis(100);
/// Attempts before a transaction fails (250).
pub const MAX_ATTEMPTS: u32 = 250;

/// The delay before retry `attempt` (0-based): exponential from 1 ms, capped at 100 ms,
/// with jitter that keeps it between half and all of that.
pub fn backoff(attempt: u32, rng: &mut impl Rng) -> Duration {
    let exp = BACKOFF_FIRST.saturating_mul(1u32 << attempt.min(10));
    let full = exp.min(BACKOFF_CAP);
    full.mul_f64(rng.random_range(0.5..=1.0))
}

/// The lock table's ids of sqlmix's gates and locks.
pub mod lock_ids {
    use harness::locks::LockId;
    /// The transaction semaphore's permits (every shard's, as one set).
    pub const SEMAPHORE: LockId = LockId(0);
    /// A connection pool's connections (every shard's, as one set).
    pub const POOL: LockId = LockId(1);
    /// `single-conn`'s one connection, `rw-split`'s writer connection.
    pub const CONNECTION: LockId = LockId(2);
    /// SQLite's write lock, one per database file, as the runner sees it.
    pub const SQLITE_WRITE: LockId = LockId(3);
}

/// A fixed set of connections; a transaction takes any free one and waits when none is.
pub struct Pool {
    free: Mutex<Vec<Connection>>,
    returned: Condvar,
    size: usize,
}

/// A connection borrowed from a [`Pool`]; it goes back when dropped.
pub struct Pooled<'a> {
    pool: &'a Pool,
    conn: Option<Connection>,
    hold: Hold,
}

impl Pool {
    /// A pool of these connections.
    pub fn new(conns: Vec<Connection>) -> Pool {
        let size = conns.len();
        Pool {
            free: Mutex::new(conns),
            returned: Condvar::new(),
            size,
        }
    }

    /// Connections in the pool.
    pub fn size(&self) -> usize {
        self.size
    }

    /// Takes a free connection, waiting (and accounting the wait) if there is none.
    pub fn get(&self, ctx: &mut OpCtx) -> Pooled<'_> {
        let mut free = self.free.lock();
        let mut waited = None;
        if free.is_empty() {
            let start = Instant::now();
            while free.is_empty() {
                self.returned.wait(&mut free);
            }
            waited = Some(start.elapsed());
            ctx.record_wait(start.elapsed());
        }
        let conn = free.pop();
        drop(free);
        let hold = ctx.acquired(lock_ids::POOL, waited);
        Pooled {
            pool: self,
            conn,
            hold,
        }
    }
}

impl Deref for Pooled<'_> {
    type Target = Connection;
    fn deref(&self) -> &Connection {
        self.conn.as_ref().expect("held until drop")
    }
}

impl DerefMut for Pooled<'_> {
    fn deref_mut(&mut self) -> &mut Connection {
        self.conn.as_mut().expect("held until drop")
    }
}

impl Drop for Pooled<'_> {
    fn drop(&mut self) {
        self.hold.end();
        if let Some(conn) = self.conn.take() {
            self.pool.free.lock().push(conn);
            self.pool.returned.notify_one();
        }
    }
}

/// A counting semaphore of K slots gating every transaction, like the seed's weighted
/// semaphore with weight 1 per transaction.
pub struct Semaphore {
    free: Mutex<usize>,
    released: Condvar,
    slots: usize,
}

/// A held slot; released when dropped.
pub struct Permit<'a> {
    semaphore: &'a Semaphore,
    hold: Hold,
}

impl Semaphore {
    /// A semaphore with `slots` slots.
    pub fn new(slots: usize) -> Semaphore {
        Semaphore {
            free: Mutex::new(slots),
            released: Condvar::new(),
            slots,
        }
    }

    /// Slots in all.
    pub fn slots(&self) -> usize {
        self.slots
    }

    /// Takes a slot, waiting (and accounting the wait) while none is free.
    pub fn acquire(&self, ctx: &mut OpCtx) -> Permit<'_> {
        let mut free = self.free.lock();
        let mut waited = None;
        if *free == 0 {
            let start = Instant::now();
            while *free == 0 {
                self.released.wait(&mut free);
            }
            waited = Some(start.elapsed());
            ctx.record_wait(start.elapsed());
        }
        *free -= 1;
        drop(free);
        Permit {
            semaphore: self,
            hold: ctx.acquired(lock_ids::SEMAPHORE, waited),
        }
    }
}

impl Drop for Permit<'_> {
    fn drop(&mut self) {
        self.hold.end();
        *self.semaphore.free.lock() += 1;
        self.semaphore.released.notify_one();
    }
}

/// What an open breaker does with a new transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BreakerMode {
    /// Parks it until the breaker closes (after `cooldown`).
    Park,
    /// Turns it away at once (the seed's "turn away fast"); after `cooldown` one
    /// transaction goes through as a probe, and only its success closes the breaker.
    Reject,
}

/// Accepted `breaker_mode` values.
pub const BREAKER_MODES: &[&str] = &["park", "reject"];

impl BreakerMode {
    /// Parses a `breaker_mode` value.
    pub fn parse(text: &str) -> Result<BreakerMode, String> {
        match text {
            "park" => Ok(BreakerMode::Park),
            "reject" => Ok(BreakerMode::Reject),
            _ => Err(format!(
                "breaker_mode={text:?}: accepted {}",
                BREAKER_MODES.join(", ")
            )),
        }
    }
}

/// What the breaker lets a new transaction do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admit {
    /// Go ahead (the breaker is closed).
    Pass,
    /// Go ahead as the probe of an open breaker.
    Probe,
    /// Turned away without touching the database.
    Reject,
}

/// A circuit breaker: after `threshold` busy errors in a row (across all threads) it opens
/// for `cooldown`. In [`BreakerMode::Park`] transactions park until it closes instead of
/// piling more attempts onto a database that is already refusing them; in
/// [`BreakerMode::Reject`] new transactions fail at once until a probe succeeds.
pub struct Breaker {
    busy_in_a_row: AtomicU32,
    open_until: Mutex<Option<Instant>>,
    open: AtomicBool,
    probing: AtomicBool,
    trips: AtomicU64,
    threshold: u32,
    cooldown: Duration,
    mode: BreakerMode,
}

impl Breaker {
    /// A parking breaker that opens after `threshold` consecutive busy errors, for `cooldown`.
    pub fn new(threshold: u32, cooldown: Duration) -> Breaker {
        Breaker::with_mode(threshold, cooldown, BreakerMode::Park)
    }

    /// A breaker of either mode.
    pub fn with_mode(threshold: u32, cooldown: Duration, mode: BreakerMode) -> Breaker {
        Breaker {
            busy_in_a_row: AtomicU32::new(0),
            open_until: Mutex::new(None),
            open: AtomicBool::new(false),
            probing: AtomicBool::new(false),
            trips: AtomicU64::new(0),
            threshold,
            cooldown,
            mode,
        }
    }

    /// Its mode.
    pub fn mode(&self) -> BreakerMode {
        self.mode
    }

    /// Parks the caller while the breaker is open (accounted as waiting).
    pub fn wait_while_open(&self, ctx: &mut OpCtx) {
        let until = *self.open_until.lock();
        if let Some(until) = until {
            let now = Instant::now();
            if until > now {
                std::thread::sleep(until - now);
                ctx.record_wait(until - now);
            }
        }
    }

    /// Reject mode: whether a new transaction may go, and whether as the probe.
    pub fn admit(&self) -> Admit {
        // One relaxed load while closed: the common case writes nothing shared.
        if !self.open.load(Ordering::Acquire) {
            return Admit::Pass;
        }
        let due = self
            .open_until
            .lock()
            .is_none_or(|until| Instant::now() >= until);
        if due && !self.probing.swap(true, Ordering::AcqRel) {
            Admit::Probe
        } else {
            Admit::Reject
        }
    }

    /// Counts a busy error; opens the breaker when there were `threshold` in a row. A
    /// probe that meets busy keeps it open for another `cooldown`.
    pub fn on_busy(&self, probe: bool) {
        if probe {
            *self.open_until.lock() = Some(Instant::now() + self.cooldown);
            self.probing.store(false, Ordering::Release);
            return;
        }
        let n = self.busy_in_a_row.fetch_add(1, Ordering::Relaxed) + 1;
        if n >= self.threshold {
            self.busy_in_a_row.store(0, Ordering::Relaxed);
            *self.open_until.lock() = Some(Instant::now() + self.cooldown);
            if !self.open.swap(true, Ordering::AcqRel) || self.mode == BreakerMode::Park {
                self.trips.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// A transaction went through: the run of busy errors is over, and in reject mode a
    /// succeeding probe closes the breaker.
    pub fn on_success(&self, probe: bool) {
        // Read first: most successes find it at zero and need not write the shared line.
        if self.busy_in_a_row.load(Ordering::Relaxed) != 0 {
            self.busy_in_a_row.store(0, Ordering::Relaxed);
        }
        if probe {
            self.open.store(false, Ordering::Release);
            self.probing.store(false, Ordering::Release);
        }
    }

    /// Times the breaker opened.
    pub fn trips(&self) -> u64 {
        self.trips.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use std::sync::Arc;

    #[test]
    fn backoff_grows_from_one_millisecond_to_the_cap() {
        let mut rng = rand::rngs::SmallRng::seed_from_u64(1);
        for _ in 0..100 {
            let first = backoff(0, &mut rng);
            assert!(first >= Duration::from_micros(500) && first <= BACKOFF_FIRST);
            let fourth = backoff(3, &mut rng);
            assert!(fourth >= Duration::from_millis(4) && fourth <= Duration::from_millis(8));
            assert!(backoff(200, &mut rng) <= BACKOFF_CAP);
            assert!(backoff(200, &mut rng) >= BACKOFF_CAP / 2);
        }
    }

    #[test]
    fn semaphore_never_admits_more_than_its_slots() {
        let sem = Arc::new(Semaphore::new(2));
        let inside = Arc::new(AtomicU32::new(0));
        let most = Arc::new(AtomicU32::new(0));
        let handles: Vec<_> = (0..6)
            .map(|_| {
                let (sem, inside, most) = (sem.clone(), inside.clone(), most.clone());
                std::thread::spawn(move || {
                    let mut ctx = OpCtx::default();
                    for _ in 0..200 {
                        let _p = sem.acquire(&mut ctx);
                        let n = inside.fetch_add(1, Ordering::SeqCst) + 1;
                        most.fetch_max(n, Ordering::SeqCst);
                        std::hint::spin_loop();
                        inside.fetch_sub(1, Ordering::SeqCst);
                    }
                    ctx.waited()
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
        assert!(most.load(Ordering::SeqCst) <= 2);
        assert_eq!(*sem.free.lock(), 2);
    }

    #[test]
    fn pool_lends_each_connection_to_one_caller_and_takes_it_back() {
        let pool = Pool::new(
            (0..2)
                .map(|_| Connection::open_in_memory().unwrap())
                .collect(),
        );
        let mut ctx = OpCtx::default();
        let a = pool.get(&mut ctx);
        let b = pool.get(&mut ctx);
        assert!(pool.free.lock().is_empty());
        drop(a);
        assert_eq!(pool.free.lock().len(), 1);
        drop(b);
        assert_eq!(pool.free.lock().len(), 2);
        assert_eq!(
            ctx.waited(),
            Duration::ZERO,
            "no wait while a connection was free"
        );
    }

    #[test]
    fn breaker_opens_after_a_run_of_busy_errors_and_parks_callers() {
        let breaker = Breaker::new(3, Duration::from_millis(20));
        breaker.on_busy(false);
        breaker.on_busy(false);
        breaker.on_success(false);
        breaker.on_busy(false);
        assert_eq!(breaker.trips(), 0, "the run was broken by a success");
        breaker.on_busy(false);
        breaker.on_busy(false);
        assert_eq!(breaker.trips(), 1);
        let mut ctx = OpCtx::default();
        breaker.wait_while_open(&mut ctx);
        assert!(
            ctx.waited() >= Duration::from_millis(10),
            "{:?}",
            ctx.waited()
        );
    }

    #[test]
    fn a_rejecting_breaker_turns_away_until_a_probe_succeeds() {
        let breaker = Breaker::with_mode(2, Duration::from_millis(5), BreakerMode::Reject);
        assert_eq!(breaker.admit(), Admit::Pass);
        breaker.on_busy(false);
        breaker.on_busy(false);
        assert_eq!(breaker.trips(), 1);
        assert_eq!(breaker.admit(), Admit::Reject, "open: turned away at once");
        std::thread::sleep(Duration::from_millis(6));
        assert_eq!(
            breaker.admit(),
            Admit::Probe,
            "after the cooldown one probe"
        );
        assert_eq!(breaker.admit(), Admit::Reject, "only one probe at a time");
        breaker.on_busy(true);
        assert_eq!(
            breaker.admit(),
            Admit::Reject,
            "a failed probe keeps it open"
        );
        std::thread::sleep(Duration::from_millis(6));
        assert_eq!(breaker.admit(), Admit::Probe);
        breaker.on_success(true);
        assert_eq!(breaker.admit(), Admit::Pass, "a good probe closes it");
    }
}
