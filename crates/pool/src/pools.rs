//! The four pool designs. Each hands a client a lease on one of `connections` host
//! connections, with at most `max_requests` leases per connection, and takes it back.
//!
//! | variant | acquire |
//! |---|---|
//! | `driver-v3` | the driver's: pick the least-loaded connection; if its in-flight count is at the limit, wait on a lock's condition until a request returns |
//! | `semaphore` | one counting semaphore of connections x max_requests permits, then any connection (round robin) |
//! | `lock-free` | a bag of slots, each client first retries the slot it used last (thread affinity), else scans, else waits on a hand-off queue (HikariCP's ConcurrentBag) |
//! | `r2d2` | the r2d2 crate: one exclusive pooled connection per request, connections x max_requests of them |

use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender};
use parking_lot::{Condvar, Mutex};

/// A pool design.
pub trait Pool: Send + Sync + 'static {
    /// What a client holds while its request is in flight.
    type Lease: Send;
    /// Per-client state kept between requests (e.g. the slot used last).
    type Local: Send;
    /// Fresh state for client `index`.
    fn local(&self, index: usize) -> Self::Local;
    /// A lease, or `None` when `timeout` passed first.
    fn acquire(&self, local: &mut Self::Local, timeout: Duration) -> Option<Self::Lease>;
    /// The host connection a lease is on.
    fn connection_of(&self, lease: &Self::Lease) -> usize;
    /// Gives the lease back.
    fn release(&self, lease: Self::Lease, local: &mut Self::Local);
}

/// `driver-v3`: least-loaded connection with an in-flight limit, waiters on a lock's
/// condition (the Java driver's `HostConnectionPool.awaitAvailableConnection`).
pub struct DriverV3 {
    in_flight: Vec<AtomicUsize>,
    max_requests: usize,
    waiters: AtomicUsize,
    lock: Mutex<()>,
    available: Condvar,
}

impl DriverV3 {
    /// `connections` connections of `max_requests` each.
    pub fn new(connections: usize, max_requests: usize) -> Self {
        DriverV3 {
            in_flight: (0..connections).map(|_| AtomicUsize::new(0)).collect(),
            max_requests,
            waiters: AtomicUsize::new(0),
            lock: Mutex::new(()),
            available: Condvar::new(),
        }
    }

    fn try_borrow(&self) -> Option<usize> {
        loop {
            let (index, load) = self
                .in_flight
                .iter()
                .enumerate()
                .map(|(i, c)| (i, c.load(Ordering::Acquire)))
                .min_by_key(|&(_, load)| load)?;
            if load >= self.max_requests {
                return None;
            }
            if self.in_flight[index]
                .compare_exchange(load, load + 1, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
            {
                return Some(index);
            }
        }
    }
}

impl Pool for DriverV3 {
    type Lease = usize;
    type Local = ();
    fn local(&self, _index: usize) {}
    fn acquire(&self, _local: &mut (), timeout: Duration) -> Option<usize> {
        if let Some(i) = self.try_borrow() {
            return Some(i);
        }
        let deadline = Instant::now() + timeout;
        let mut guard = self.lock.lock();
        self.waiters.fetch_add(1, Ordering::SeqCst);
        let result = loop {
            if let Some(i) = self.try_borrow() {
                break Some(i);
            }
            if self.available.wait_until(&mut guard, deadline).timed_out() {
                break self.try_borrow();
            }
        };
        self.waiters.fetch_sub(1, Ordering::SeqCst);
        result
    }
    fn connection_of(&self, lease: &usize) -> usize {
        *lease
    }
    fn release(&self, lease: usize, _local: &mut ()) {
        self.in_flight[lease].fetch_sub(1, Ordering::AcqRel);
        if self.waiters.load(Ordering::SeqCst) > 0 {
            // Taking the lock orders this signal after a waiter's last check.
            let _guard = self.lock.lock();
            self.available.notify_one();
        }
    }
}

/// `semaphore`: connections x max_requests permits, then any connection with room.
pub struct SemaphorePool {
    permits: Mutex<usize>,
    released: Condvar,
    next: AtomicUsize,
    in_flight: Vec<AtomicUsize>,
    max_requests: usize,
}

impl SemaphorePool {
    /// `connections` x `max_requests` permits.
    pub fn new(connections: usize, max_requests: usize) -> Self {
        SemaphorePool {
            permits: Mutex::new(connections * max_requests),
            released: Condvar::new(),
            next: AtomicUsize::new(0),
            in_flight: (0..connections).map(|_| AtomicUsize::new(0)).collect(),
            max_requests,
        }
    }

    /// A connection with room; one exists because permits never exceed the total room.
    fn any_with_room(&self) -> usize {
        let n = self.in_flight.len();
        let start = self.next.fetch_add(1, Ordering::Relaxed);
        loop {
            for k in 0..n {
                let i = (start + k) % n;
                let load = self.in_flight[i].load(Ordering::Acquire);
                if load < self.max_requests
                    && self.in_flight[i]
                        .compare_exchange(load, load + 1, Ordering::AcqRel, Ordering::Acquire)
                        .is_ok()
                {
                    return i;
                }
            }
        }
    }
}

impl Pool for SemaphorePool {
    type Lease = usize;
    type Local = ();
    fn local(&self, _index: usize) {}
    fn acquire(&self, _local: &mut (), timeout: Duration) -> Option<usize> {
        let deadline = Instant::now() + timeout;
        let mut permits = self.permits.lock();
        while *permits == 0 {
            if self.released.wait_until(&mut permits, deadline).timed_out() && *permits == 0 {
                return None;
            }
        }
        *permits -= 1;
        drop(permits);
        Some(self.any_with_room())
    }
    fn connection_of(&self, lease: &usize) -> usize {
        *lease
    }
    fn release(&self, lease: usize, _local: &mut ()) {
        self.in_flight[lease].fetch_sub(1, Ordering::AcqRel);
        *self.permits.lock() += 1;
        self.released.notify_one();
    }
}

const FREE: u8 = 0;
const IN_USE: u8 = 1;

/// `lock-free`: a bag of connections x max_requests slots. A client first tries the slot
/// it used last (no shared write if it is free), then scans from its own offset, and only
/// when every slot is taken waits on a hand-off queue that a releasing client feeds
/// directly. No lock on the fast path.
pub struct LockFreeBag {
    slots: Vec<AtomicU8>,
    max_requests: usize,
    waiters: AtomicUsize,
    handoff_tx: Sender<usize>,
    handoff_rx: Receiver<usize>,
}

/// A client's memory of the slot it used last.
pub struct BagLocal {
    last: usize,
}

impl LockFreeBag {
    /// `connections` x `max_requests` slots.
    pub fn new(connections: usize, max_requests: usize) -> Self {
        let (handoff_tx, handoff_rx) = crossbeam_channel::bounded(0);
        LockFreeBag {
            slots: (0..connections * max_requests)
                .map(|_| AtomicU8::new(FREE))
                .collect(),
            max_requests,
            waiters: AtomicUsize::new(0),
            handoff_tx,
            handoff_rx,
        }
    }

    fn claim(&self, slot: usize) -> bool {
        self.slots[slot].load(Ordering::Relaxed) == FREE
            && self.slots[slot]
                .compare_exchange(FREE, IN_USE, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
    }

    fn scan(&self, from: usize) -> Option<usize> {
        let n = self.slots.len();
        (0..n).map(|k| (from + k) % n).find(|&s| self.claim(s))
    }
}

impl Pool for LockFreeBag {
    type Lease = usize;
    type Local = BagLocal;
    fn local(&self, index: usize) -> BagLocal {
        // Spread first picks so clients do not all start scanning at slot 0.
        BagLocal {
            last: index.wrapping_mul(2_654_435_761) % self.slots.len().max(1),
        }
    }
    fn acquire(&self, local: &mut BagLocal, timeout: Duration) -> Option<usize> {
        if self.claim(local.last) {
            return Some(local.last);
        }
        if let Some(s) = self.scan(local.last) {
            local.last = s;
            return Some(s);
        }
        self.waiters.fetch_add(1, Ordering::SeqCst);
        // A slot may have been freed between the scan and announcing ourselves.
        let got = self
            .scan(local.last)
            .or_else(|| self.handoff_rx.recv_timeout(timeout).ok());
        self.waiters.fetch_sub(1, Ordering::SeqCst);
        if let Some(s) = got {
            local.last = s;
        }
        got
    }
    fn connection_of(&self, lease: &usize) -> usize {
        lease / self.max_requests
    }
    fn release(&self, lease: usize, _local: &mut BagLocal) {
        if self.waiters.load(Ordering::SeqCst) > 0 && self.handoff_tx.try_send(lease).is_ok() {
            // Handed straight to a waiter: the slot stays in use, now theirs.
            return;
        }
        self.slots[lease].store(FREE, Ordering::Release);
    }
}

/// A connection to the simulated host, as r2d2 manages it.
#[derive(Debug)]
pub struct HostConnection {
    id: usize,
}

/// Makes [`HostConnection`]s for r2d2; connection `n` is on host connection `n / per`.
#[derive(Debug)]
pub struct HostManager {
    next: AtomicUsize,
}

/// The manager's error type (connecting never fails here).
#[derive(Debug)]
pub struct NeverFails;

impl std::fmt::Display for NeverFails {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("cannot happen")
    }
}

impl std::error::Error for NeverFails {}

impl r2d2::ManageConnection for HostManager {
    type Connection = HostConnection;
    type Error = NeverFails;
    fn connect(&self) -> Result<HostConnection, NeverFails> {
        Ok(HostConnection {
            id: self.next.fetch_add(1, Ordering::Relaxed),
        })
    }
    fn is_valid(&self, _conn: &mut HostConnection) -> Result<(), NeverFails> {
        Ok(())
    }
    fn has_broken(&self, _conn: &mut HostConnection) -> bool {
        false
    }
}

/// `r2d2`: the classic exclusive pool.
pub struct R2d2Pool {
    pool: r2d2::Pool<HostManager>,
    max_requests: usize,
}

impl R2d2Pool {
    /// connections x max_requests exclusive connections, all made up front.
    pub fn new(connections: usize, max_requests: usize) -> Result<Self, String> {
        let size = u32::try_from(connections * max_requests)
            .map_err(|_| "connections x max_requests is too large for r2d2".to_owned())?;
        let pool = r2d2::Pool::builder()
            .max_size(size)
            .min_idle(Some(size))
            .test_on_check_out(false)
            .connection_timeout(Duration::from_secs(30))
            .build(HostManager {
                next: AtomicUsize::new(0),
            })
            .map_err(|e| format!("r2d2 pool: {e}"))?;
        Ok(R2d2Pool { pool, max_requests })
    }
}

impl Pool for R2d2Pool {
    type Lease = r2d2::PooledConnection<HostManager>;
    type Local = ();
    fn local(&self, _index: usize) {}
    fn acquire(&self, _local: &mut (), timeout: Duration) -> Option<Self::Lease> {
        self.pool.get_timeout(timeout).ok()
    }
    fn connection_of(&self, lease: &Self::Lease) -> usize {
        lease.id / self.max_requests
    }
    fn release(&self, lease: Self::Lease, _local: &mut ()) {
        drop(lease);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn hammer<P: Pool>(pool: Arc<P>, clients: usize, connections: usize, limit: usize) {
        let audit: Arc<Vec<AtomicUsize>> =
            Arc::new((0..connections).map(|_| AtomicUsize::new(0)).collect());
        let handles: Vec<_> = (0..clients)
            .map(|i| {
                let (pool, audit) = (pool.clone(), audit.clone());
                std::thread::spawn(move || {
                    let mut local = pool.local(i);
                    for _ in 0..300 {
                        let lease = pool
                            .acquire(&mut local, Duration::from_secs(10))
                            .expect("no timeout");
                        let c = pool.connection_of(&lease);
                        let n = audit[c].fetch_add(1, Ordering::SeqCst) + 1;
                        assert!(n <= limit, "{n} in flight on connection {c}, limit {limit}");
                        std::thread::yield_now();
                        audit[c].fetch_sub(1, Ordering::SeqCst);
                        pool.release(lease, &mut local);
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
    }

    #[test]
    fn driver_respects_the_per_connection_limit() {
        hammer(Arc::new(DriverV3::new(2, 3)), 12, 2, 3);
    }

    #[test]
    fn lock_free_bag_respects_the_per_connection_limit() {
        hammer(Arc::new(LockFreeBag::new(2, 3)), 12, 2, 3);
    }

    #[test]
    fn r2d2_respects_the_per_connection_limit() {
        hammer(Arc::new(R2d2Pool::new(2, 3).unwrap()), 12, 2, 3);
    }

    #[test]
    fn semaphore_respects_the_per_connection_limit() {
        hammer(Arc::new(SemaphorePool::new(2, 3)), 12, 2, 3);
    }

    #[test]
    fn a_full_pool_times_out() {
        let pool = DriverV3::new(1, 1);
        let held = pool.acquire(&mut (), Duration::from_millis(1)).unwrap();
        let start = Instant::now();
        assert!(pool.acquire(&mut (), Duration::from_millis(30)).is_none());
        assert!(start.elapsed() >= Duration::from_millis(25));
        pool.release(held, &mut ());
        assert!(pool.acquire(&mut (), Duration::from_millis(1)).is_some());
        let bag = LockFreeBag::new(1, 1);
        let mut local = bag.local(0);
        let _held = bag.acquire(&mut local, Duration::from_millis(1)).unwrap();
        assert!(bag
            .acquire(&mut bag.local(1), Duration::from_millis(20))
            .is_none());
    }
}
