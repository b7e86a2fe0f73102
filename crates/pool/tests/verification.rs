//! The verification catches what it must, with deliberately broken pools: a pool that
//! hands the same lease to two clients at once fails the audit (also when the audit is
//! sampled, as in acquisition-only cells); a pool that keeps a lease fails the end check;
//! a pool that times out half its requests reports half the datapoints (only served
//! requests carry datapoints).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use harness::runner::{run, RunSettings};
use pool::pools::Pool;
use pool::workload::{PoolWorkload, RequestShape};

/// Hands out lease 0 of connection 0 to everyone, whatever its limit: a double hand-out.
struct EveryoneGetsSlotZero;

impl Pool for EveryoneGetsSlotZero {
    type Lease = usize;
    type Local = ();
    fn local(&self, _index: usize) {}
    fn try_acquire(&self, _local: &mut ()) -> Option<usize> {
        Some(0)
    }
    fn acquire(&self, _local: &mut (), _timeout: Duration) -> Option<usize> {
        Some(0)
    }
    fn connection_of(&self, _lease: &usize) -> usize {
        0
    }
    fn release(&self, _lease: usize, _local: &mut ()) {}
    fn free_leases(&self) -> usize {
        1
    }
}

/// Correct hand-outs of one lease, but it never comes back into the count.
struct LeaksOne {
    free: AtomicUsize,
}

impl Pool for LeaksOne {
    type Lease = usize;
    type Local = ();
    fn local(&self, _index: usize) {}
    fn try_acquire(&self, _local: &mut ()) -> Option<usize> {
        self.free
            .compare_exchange(1, 0, Ordering::AcqRel, Ordering::Acquire)
            .ok()
            .map(|_| 0)
    }
    fn acquire(&self, local: &mut (), _timeout: Duration) -> Option<usize> {
        self.try_acquire(local)
    }
    fn connection_of(&self, _lease: &usize) -> usize {
        0
    }
    fn release(&self, _lease: usize, _local: &mut ()) {}
    fn free_leases(&self) -> usize {
        self.free.load(Ordering::Acquire)
    }
}

/// Grants every other request at once and times the others out (without waiting).
struct TimesOutHalf {
    calls: AtomicUsize,
}

impl Pool for TimesOutHalf {
    type Lease = usize;
    type Local = ();
    fn local(&self, _index: usize) {}
    fn try_acquire(&self, _local: &mut ()) -> Option<usize> {
        None
    }
    fn acquire(&self, _local: &mut (), _timeout: Duration) -> Option<usize> {
        (self.calls.fetch_add(1, Ordering::Relaxed) % 2 == 0).then_some(0)
    }
    fn connection_of(&self, _lease: &usize) -> usize {
        0
    }
    fn release(&self, _lease: usize, _local: &mut ()) {}
    fn free_leases(&self) -> usize {
        usize::MAX
    }
}

fn settings(threads: usize) -> RunSettings {
    harness::testing::settings(threads, 10, 150)
}

fn with_latency(base: Duration) -> RequestShape {
    RequestShape {
        base,
        ..RequestShape::acquisition_only(Duration::from_secs(1))
    }
}

#[test]
fn a_double_hand_out_fails_the_audit() {
    let w = PoolWorkload::new(
        Arc::new(EveryoneGetsSlotZero),
        1,
        1,
        with_latency(Duration::from_micros(200)),
    );
    let m = run(&w, settings(4)).unwrap();
    let reason = m.verified.unwrap_err();
    assert!(reason.contains("handed out twice"), "{reason}");
}

#[test]
fn a_double_hand_out_fails_the_sampled_audit_of_acquisition_only_cells() {
    let shape = RequestShape::acquisition_only(Duration::from_secs(1));
    let w = PoolWorkload::new(Arc::new(EveryoneGetsSlotZero), 1, 1, shape);
    let m = run(
        &w,
        RunSettings {
            duration: Duration::from_millis(400),
            ..settings(8)
        },
    )
    .unwrap();
    let reason = m.verified.unwrap_err();
    assert!(reason.contains("handed out twice"), "{reason}");
}

#[test]
fn a_lease_never_returned_fails_the_end_check() {
    let pool = LeaksOne {
        free: AtomicUsize::new(1),
    };
    let shape = RequestShape::acquisition_only(Duration::from_millis(1));
    let w = PoolWorkload::new(Arc::new(pool), 1, 1, shape).audit_every_cycle();
    let m = run(&w, settings(1)).unwrap();
    let reason = m.verified.unwrap_err();
    assert!(reason.contains("0 of 1 leases back"), "{reason}");
}

#[test]
fn timed_out_requests_carry_no_datapoints() {
    let shape = RequestShape {
        batch: 10,
        ..with_latency(Duration::from_micros(100))
    };
    let w = PoolWorkload::new(
        Arc::new(TimesOutHalf {
            calls: AtomicUsize::new(0),
        }),
        1,
        1_000,
        shape,
    );
    let m = run(&w, settings(2)).unwrap();
    assert!(m.ops > 0);
    // Every other request timed out: as many timeouts as served, give or take the edges.
    assert!(
        m.timeouts.abs_diff(m.ops) <= 4,
        "{} served, {} timed out",
        m.ops,
        m.timeouts
    );
    let served_rate = m.ops as f64 / m.window.as_secs_f64();
    let datapoints = m.extra["datapoints_per_sec"].as_f64().unwrap();
    assert!(
        (datapoints - 10.0 * served_rate).abs() <= 1e-6 * datapoints,
        "{datapoints} datapoints/s, {served_rate} served/s"
    );
    let ratio = m.extra["ceiling_ratio"].as_f64().unwrap();
    let ceiling = m.extra["littles_law_ceiling"].as_f64().unwrap();
    assert!((ratio * ceiling - served_rate).abs() <= 1e-6 * served_rate);
    assert_eq!(m.extra["timeouts"].as_u64().unwrap(), m.timeouts);
}
