//! What one request through a real pool took, and a client's tally of them: acquisition
//! time (from asking the pool to holding a connection), the wait inside it (the part
//! after the pool had no idle connection to give at once), the whole request (acquire,
//! statement, release), and the share of request time spent acquiring (`acquire_share`).
//!
//! Arithmetic on instants the pools read; no pool, no database, no clock of its own, so
//! that the figures can be checked with made-up instants.

use std::time::{Duration, Instant};

use hdrhistogram::Histogram;

/// The instants of one request, as the pool adapter read them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timing {
    /// When the client asked the pool for a connection.
    pub start: Instant,
    /// When it began waiting, after the pool had no idle connection to hand out at once;
    /// `None` when it got one at once.
    pub waited_from: Option<Instant>,
    /// When it held a connection (or gave up waiting).
    pub got: Instant,
    /// When the connection was back in the pool with the statement answered (`got` for a
    /// request that never got one).
    pub end: Instant,
}

impl Timing {
    /// Time from asking to holding a connection.
    pub fn acquire(&self) -> Duration {
        self.got.saturating_duration_since(self.start)
    }

    /// Time spent waiting for a connection, when the client had to.
    pub fn wait(&self) -> Option<Duration> {
        self.waited_from
            .map(|from| self.got.saturating_duration_since(from))
    }

    /// The whole request: acquire, statement, release.
    pub fn request(&self) -> Duration {
        self.end.saturating_duration_since(self.start)
    }
}

/// One client's requests in the measured window: sums and histograms of the times.
#[derive(Debug, Default)]
pub struct AcquireTally {
    /// Requests timed (answered or timed out waiting).
    pub requests: u64,
    /// Of them, those that waited for a connection.
    pub waited: u64,
    /// Total acquisition time.
    pub acquire: Duration,
    /// Total wait for a connection.
    pub wait: Duration,
    /// Total request time.
    pub request: Duration,
    acquire_ns: Option<Histogram<u64>>,
    wait_ns: Option<Histogram<u64>>,
}

impl AcquireTally {
    /// Adds one request's times.
    pub fn record(&mut self, t: &Timing) {
        self.requests += 1;
        self.acquire += t.acquire();
        self.request += t.request();
        self.acquire_ns
            .get_or_insert_with(harness::stats::new_histogram)
            .saturating_record(t.acquire().as_nanos() as u64);
        if let Some(wait) = t.wait() {
            self.waited += 1;
            self.wait += wait;
            self.wait_ns
                .get_or_insert_with(harness::stats::new_histogram)
                .saturating_record(wait.as_nanos() as u64);
        }
    }

    /// Adds another client's tally (the cell's figures are over every client).
    pub fn add(&mut self, other: &AcquireTally) {
        self.requests += other.requests;
        self.waited += other.waited;
        self.acquire += other.acquire;
        self.wait += other.wait;
        self.request += other.request;
        for (into, from) in [
            (&mut self.acquire_ns, &other.acquire_ns),
            (&mut self.wait_ns, &other.wait_ns),
        ] {
            if let Some(from) = from {
                harness::stats::merge_into(
                    into.get_or_insert_with(harness::stats::new_histogram),
                    from,
                );
            }
        }
    }

    /// The share of request time spent acquiring, over every request (time-weighted, as
    /// a profile would show it, not a mean of per-request shares that would let a
    /// thousand quick requests outvote one that waited a second); `None` without any
    /// request time. Within [0, 1] because each acquisition lies inside its request.
    pub fn acquire_share(&self) -> Option<f64> {
        (!self.request.is_zero()).then(|| self.acquire.as_secs_f64() / self.request.as_secs_f64())
    }

    /// The share of requests that waited for a connection; `None` without requests.
    pub fn waited_share(&self) -> Option<f64> {
        (self.requests > 0).then(|| self.waited as f64 / self.requests as f64)
    }

    /// The acquisition-time percentile `q` (0..=1) in nanoseconds.
    pub fn acquire_at(&self, q: f64) -> Option<u64> {
        self.acquire_ns.as_ref().map(|h| h.value_at_quantile(q))
    }

    /// The wait percentile `q` over the requests that waited, in nanoseconds.
    pub fn wait_at(&self, q: f64) -> Option<u64> {
        self.wait_ns.as_ref().map(|h| h.value_at_quantile(q))
    }

    /// The longest acquisition, in nanoseconds.
    pub fn acquire_max(&self) -> Option<u64> {
        self.acquire_ns.as_ref().map(|h| h.max())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(base: Instant, us: u64) -> Instant {
        base + Duration::from_micros(us)
    }

    fn timing(base: Instant, waited_from: Option<u64>, got: u64, end: u64) -> Timing {
        Timing {
            start: base,
            waited_from: waited_from.map(|w| at(base, w)),
            got: at(base, got),
            end: at(base, end),
        }
    }

    #[test]
    fn the_share_is_acquisition_time_over_request_time_summed_over_requests() {
        let base = Instant::now();
        let mut a = AcquireTally::default();
        // 10 us to acquire at once, of a 100 us request.
        a.record(&timing(base, None, 10, 100));
        // Waited 290 us after a 10 us try, of a 400 us request.
        a.record(&timing(base, Some(10), 300, 400));
        assert_eq!(a.requests, 2);
        assert_eq!(a.waited, 1);
        assert_eq!(a.acquire, Duration::from_micros(310));
        assert_eq!(a.wait, Duration::from_micros(290));
        assert_eq!(a.request, Duration::from_micros(500));
        let share = a.acquire_share().unwrap();
        assert!((share - 310.0 / 500.0).abs() < 1e-12, "{share}");
        // Not the mean of the per-request shares (0.1 and 0.75).
        assert!((share - 0.425).abs() > 0.1);
        assert_eq!(a.waited_share(), Some(0.5));
    }

    #[test]
    fn clients_add_up_and_the_share_stays_within_zero_and_one() {
        let base = Instant::now();
        let mut cell = AcquireTally::default();
        assert_eq!(cell.acquire_share(), None);
        assert_eq!(cell.waited_share(), None);
        let mut quick = AcquireTally::default();
        for i in 0..100 {
            quick.record(&timing(base, None, 1 + i % 3, 50));
        }
        let mut timed_out = AcquireTally::default();
        // A request that gave up waiting spent all its time acquiring.
        timed_out.record(&timing(base, Some(1), 5000, 5000));
        cell.add(&quick);
        cell.add(&timed_out);
        assert_eq!(cell.requests, 101);
        assert_eq!(cell.waited, 1);
        let share = cell.acquire_share().unwrap();
        let expected = (quick.acquire + timed_out.acquire).as_secs_f64()
            / (quick.request + timed_out.request).as_secs_f64();
        assert!((share - expected).abs() < 1e-12);
        assert!((0.0..=1.0).contains(&share));
        assert_eq!(timed_out.acquire_share(), Some(1.0));
        // Percentiles come from the merged histograms (2 significant digits: within 1%):
        // the wait is the timed-out one's 4999 us.
        let near = |got: u64, want: f64| (got as f64 - want).abs() <= want * 0.01;
        let wait = cell.wait_at(0.5).unwrap();
        assert!(near(wait, 4_999_000.0), "{wait}");
        assert!(near(cell.acquire_max().unwrap(), 5_000_000.0));
        assert!(cell.acquire_at(0.5).unwrap() as f64 <= 3_000.0 * 1.01);
    }

    #[test]
    fn instants_out_of_order_give_no_negative_time() {
        let base = Instant::now();
        // A clock read before `start` (as two threads' reads could be) counts as zero.
        let t = Timing {
            start: at(base, 10),
            waited_from: None,
            got: base,
            end: at(base, 20),
        };
        assert_eq!(t.acquire(), Duration::ZERO);
        assert_eq!(t.request(), Duration::from_micros(10));
    }
}
