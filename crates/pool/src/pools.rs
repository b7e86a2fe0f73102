//! The four pool designs. Each hands a client a lease on one of `connections` host
//! connections, with at most `max_requests` leases per connection, and takes it back.
//!
//! | variant | acquire |
//! |---|---|
//! | `driver-v3` | the driver's: pick the least-loaded connection; if its in-flight count is at the limit, wait on a lock's condition until a request returns |
//! | `semaphore` | a counting semaphore of connections x max_requests permits (an atomic count; waiters park on a condition), then any connection with room, scanned from the client's own start |
//! | `lock-free` | HikariCP's ConcurrentBag: a bag of slots, each on its own cache line; a client first retries the slot it used last (one CAS on a line it already owns), else a bounded scan, else parks until a release wakes exactly one waiter |
//! | `r2d2` | the r2d2 crate: one exclusive pooled connection per request, connections x max_requests of them |
//!
//! Every design offers a non-blocking [`Pool::try_acquire`] and a blocking
//! [`Pool::acquire`], so the harness times only the calls that may wait and the fast path
//! carries no clock read. This module holds no harness work (audit, timing): that is
//! [`crate::workload`]'s, the same for every design.

use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

/// A pool design.
pub trait Pool: Send + Sync + 'static {
    /// What a client holds while its request is in flight.
    type Lease: Send;
    /// Per-client state kept between requests (e.g. the slot used last).
    type Local: Send;
    /// Fresh state for client `index`.
    fn local(&self, index: usize) -> Self::Local;
    /// A lease if one is free right now; never waits.
    fn try_acquire(&self, local: &mut Self::Local) -> Option<Self::Lease>;
    /// A lease, waiting up to `timeout`; `None` when `timeout` passed first.
    fn acquire(&self, local: &mut Self::Local, timeout: Duration) -> Option<Self::Lease>;
    /// The host connection a lease is on.
    fn connection_of(&self, lease: &Self::Lease) -> usize;
    /// Gives the lease back.
    fn release(&self, lease: Self::Lease, local: &mut Self::Local);
    /// Leases free now; equal to the capacity once every lease is back.
    fn free_leases(&self) -> usize;
}

/// Parked waiters of a pool, woken one per release: the slow path every design but r2d2
/// shares, so no design wins or loses by its waiting code.
///
/// A releaser publishes its free room with a SeqCst write, then reads `waiting` (SeqCst);
/// a waiter raises `waiting` (SeqCst) under the lock, then looks for room, then parks,
/// releasing the lock atomically. Either the waiter sees the room or the releaser sees
/// the waiter and, taking the lock, notifies only after the waiter parked: no lost wake-up.
#[derive(Default)]
pub struct Parking {
    waiting: AtomicUsize,
    lock: Mutex<()>,
    wake: Condvar,
}

impl Parking {
    /// Calls `try_take` until it yields or `timeout` passes, parked in between.
    pub fn wait_for<T>(
        &self,
        timeout: Duration,
        mut try_take: impl FnMut() -> Option<T>,
    ) -> Option<T> {
        let deadline = Instant::now() + timeout;
        let mut guard = self.lock.lock();
        self.waiting.fetch_add(1, Ordering::SeqCst);
        let got = loop {
            if let Some(t) = try_take() {
                break Some(t);
            }
            if self.wake.wait_until(&mut guard, deadline).timed_out() {
                break try_take();
            }
        };
        self.waiting.fetch_sub(1, Ordering::SeqCst);
        got
    }

    /// After room was published (SeqCst): wakes exactly one parked waiter, if any. The
    /// woken waiter competes for the room like anyone (no reservation), so a slot never
    /// sits idle while a parked thread is being scheduled.
    #[inline]
    pub fn wake_one(&self) {
        if self.waiting.load(Ordering::SeqCst) > 0 {
            let _guard = self.lock.lock();
            self.wake.notify_one();
        }
    }
}

/// `driver-v3`: least-loaded connection with an in-flight limit, waiters on a lock's
/// condition (the Java driver's `HostConnectionPool.awaitAvailableConnection`).
pub struct DriverV3 {
    in_flight: Vec<AtomicUsize>,
    max_requests: usize,
    parking: Parking,
}

impl DriverV3 {
    /// `connections` connections of `max_requests` each.
    pub fn new(connections: usize, max_requests: usize) -> Self {
        DriverV3 {
            in_flight: (0..connections).map(|_| AtomicUsize::new(0)).collect(),
            max_requests,
            parking: Parking::default(),
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
    fn try_acquire(&self, _local: &mut ()) -> Option<usize> {
        self.try_borrow()
    }
    fn acquire(&self, _local: &mut (), timeout: Duration) -> Option<usize> {
        self.try_borrow()
            .or_else(|| self.parking.wait_for(timeout, || self.try_borrow()))
    }
    fn connection_of(&self, lease: &usize) -> usize {
        *lease
    }
    fn release(&self, lease: usize, _local: &mut ()) {
        self.in_flight[lease].fetch_sub(1, Ordering::SeqCst);
        self.parking.wake_one();
    }
    fn free_leases(&self) -> usize {
        self.in_flight
            .iter()
            .map(|c| self.max_requests.saturating_sub(c.load(Ordering::Acquire)))
            .sum()
    }
}

/// `semaphore`: connections x max_requests permits, then any connection with room.
///
/// The permit count is one atomic (a CAS takes a permit, no lock); only a client that
/// finds none parks.
pub struct SemaphorePool {
    permits: AtomicUsize,
    parking: Parking,
    in_flight: Vec<AtomicUsize>,
    max_requests: usize,
}

/// A semaphore client's memory of the connection it used last.
pub struct SemaphoreLocal {
    next: usize,
}

impl SemaphorePool {
    /// `connections` x `max_requests` permits.
    pub fn new(connections: usize, max_requests: usize) -> Self {
        SemaphorePool {
            permits: AtomicUsize::new(connections * max_requests),
            parking: Parking::default(),
            in_flight: (0..connections).map(|_| AtomicUsize::new(0)).collect(),
            max_requests,
        }
    }

    fn take_permit(&self) -> bool {
        let mut now = self.permits.load(Ordering::Relaxed);
        while now > 0 {
            match self.permits.compare_exchange_weak(
                now,
                now - 1,
                Ordering::Acquire,
                Ordering::Relaxed,
            ) {
                Ok(_) => return true,
                Err(seen) => now = seen,
            }
        }
        false
    }

    /// A connection with room, from the client's own start (no shared cursor); one exists
    /// because permits never exceed the total room.
    fn any_with_room(&self, local: &mut SemaphoreLocal) -> usize {
        let n = self.in_flight.len();
        loop {
            for k in 0..n {
                let i = (local.next + k) % n;
                let load = self.in_flight[i].load(Ordering::Acquire);
                if load < self.max_requests
                    && self.in_flight[i]
                        .compare_exchange(load, load + 1, Ordering::AcqRel, Ordering::Acquire)
                        .is_ok()
                {
                    local.next = i;
                    return i;
                }
            }
            std::hint::spin_loop();
        }
    }
}

impl Pool for SemaphorePool {
    type Lease = usize;
    type Local = SemaphoreLocal;
    fn local(&self, index: usize) -> SemaphoreLocal {
        SemaphoreLocal {
            next: index % self.in_flight.len().max(1),
        }
    }
    fn try_acquire(&self, local: &mut SemaphoreLocal) -> Option<usize> {
        self.take_permit().then(|| self.any_with_room(local))
    }
    fn acquire(&self, local: &mut SemaphoreLocal, timeout: Duration) -> Option<usize> {
        let got = self.take_permit()
            || self
                .parking
                .wait_for(timeout, || self.take_permit().then_some(()))
                .is_some();
        got.then(|| self.any_with_room(local))
    }
    fn connection_of(&self, lease: &usize) -> usize {
        *lease
    }
    fn release(&self, lease: usize, _local: &mut SemaphoreLocal) {
        self.in_flight[lease].fetch_sub(1, Ordering::AcqRel);
        self.permits.fetch_add(1, Ordering::SeqCst);
        self.parking.wake_one();
    }
    fn free_leases(&self) -> usize {
        self.permits.load(Ordering::Acquire)
    }
}

const FREE: u8 = 0;
const IN_USE: u8 = 1;

/// One slot of the bag on a cache line of its own, so that a client reusing its slot
/// never invalidates another client's.
#[repr(align(128))]
struct Slot(AtomicU8);

/// How many slots a client scans before it parks (it scans them all once more after
/// announcing itself, so a free slot is never missed).
const SCAN_LIMIT: usize = 64;

/// `lock-free`: HikariCP's ConcurrentBag over connections x max_requests slots.
///
/// Fast path: the client retries the slot it used last: a load and a CAS on a cache line
/// no one else wrote since (no shared counter, no lock). Else a scan of at most
/// 64 slots from there. Else it parks ([`Parking`]: it announces itself,
/// scans every slot once, and sleeps); a release frees the slot first and then wakes
/// exactly one parked waiter, which competes for the free slot without a reservation
/// (HikariCP's `requite`, without its spinning offer loop).
pub struct LockFreeBag {
    slots: Vec<Slot>,
    max_requests: usize,
    parking: Parking,
}

/// A client's memory of the slot it used last.
pub struct BagLocal {
    last: usize,
}

impl LockFreeBag {
    /// `connections` x `max_requests` slots.
    pub fn new(connections: usize, max_requests: usize) -> Self {
        LockFreeBag {
            slots: (0..connections * max_requests)
                .map(|_| Slot(AtomicU8::new(FREE)))
                .collect(),
            max_requests,
            parking: Parking::default(),
        }
    }

    #[inline]
    fn claim(&self, slot: usize) -> bool {
        let s = &self.slots[slot].0;
        s.load(Ordering::Relaxed) == FREE
            && s.compare_exchange(FREE, IN_USE, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
    }

    fn scan(&self, from: usize, limit: usize) -> Option<usize> {
        let n = self.slots.len();
        (1..=limit.min(n))
            .map(|k| (from + k) % n)
            .find(|&s| self.claim(s))
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
    #[inline]
    fn try_acquire(&self, local: &mut BagLocal) -> Option<usize> {
        if self.claim(local.last) {
            return Some(local.last);
        }
        let s = self.scan(local.last, SCAN_LIMIT)?;
        local.last = s;
        Some(s)
    }
    fn acquire(&self, local: &mut BagLocal, timeout: Duration) -> Option<usize> {
        if let Some(s) = self.try_acquire(local) {
            return Some(s);
        }
        let n = self.slots.len();
        let s = self
            .parking
            .wait_for(timeout, || self.scan(local.last, n))?;
        local.last = s;
        Some(s)
    }
    fn connection_of(&self, lease: &usize) -> usize {
        lease / self.max_requests
    }
    #[inline]
    fn release(&self, lease: usize, _local: &mut BagLocal) {
        // SeqCst orders the free slot before the read of the waiter count (see Parking).
        self.slots[lease].0.store(FREE, Ordering::SeqCst);
        self.parking.wake_one();
    }
    fn free_leases(&self) -> usize {
        self.slots
            .iter()
            .filter(|s| s.0.load(Ordering::Acquire) == FREE)
            .count()
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
    fn try_acquire(&self, _local: &mut ()) -> Option<Self::Lease> {
        self.pool.try_get()
    }
    fn acquire(&self, _local: &mut (), timeout: Duration) -> Option<Self::Lease> {
        self.pool.get_timeout(timeout).ok()
    }
    fn connection_of(&self, lease: &Self::Lease) -> usize {
        lease.id / self.max_requests
    }
    fn release(&self, lease: Self::Lease, _local: &mut ()) {
        drop(lease);
    }
    fn free_leases(&self) -> usize {
        self.pool.state().idle_connections as usize
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
        assert_eq!(pool.free_leases(), connections * limit, "every lease back");
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
        assert!(bag.try_acquire(&mut bag.local(1)).is_none());
    }

    /// A parked waiter is woken by the release, long before its timeout.
    fn release_wakes_a_parked_waiter<P: Pool>(pool: P) {
        let pool = Arc::new(pool);
        let mut local = pool.local(0);
        let held = pool.acquire(&mut local, Duration::from_millis(1)).unwrap();
        let waiter = {
            let pool = Arc::clone(&pool);
            std::thread::spawn(move || {
                let start = Instant::now();
                let mut local = pool.local(1);
                let got = pool.acquire(&mut local, Duration::from_secs(20));
                let waited = start.elapsed();
                if let Some(lease) = got {
                    pool.release(lease, &mut local);
                    Some(waited)
                } else {
                    None
                }
            })
        };
        std::thread::sleep(Duration::from_millis(30));
        pool.release(held, &mut local);
        let waited = waiter.join().unwrap().expect("the waiter got the lease");
        assert!(waited < Duration::from_secs(10), "woken by the release");
        assert_eq!(pool.free_leases(), 1);
    }

    #[test]
    fn releases_wake_parked_waiters() {
        release_wakes_a_parked_waiter(LockFreeBag::new(1, 1));
        release_wakes_a_parked_waiter(DriverV3::new(1, 1));
        release_wakes_a_parked_waiter(SemaphorePool::new(1, 1));
        release_wakes_a_parked_waiter(R2d2Pool::new(1, 1).unwrap());
    }
}
