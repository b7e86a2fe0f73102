//! The instrument's counting, sampling and recording, without a runner.

use super::*;

#[test]
fn an_untimed_context_counts_and_times_nothing() {
    thread_reset(1, 0);
    thread_take();
    let mut c = LockCounters::default();
    for _ in 0..10 {
        let hold = c.acquired(LockId(2), None);
        assert!(!hold.timed());
    }
    c.acquired(LockId(2), Some(Duration::from_micros(5))).end();
    assert_eq!(c.tallies.len(), 3);
    assert_eq!(c.tallies[2].acquisitions, 11);
    // The wait is recorded on the thread when the hold drops, after the release.
    let t = &thread_take()[2];
    assert_eq!((t.contended, t.wait_sum_ns, t.hold_samples), (1, 5_000, 0));
}

/// A guard that notes, as it is released, how many holds the thread had recorded.
struct Noting<'a>(&'a std::cell::Cell<Option<u64>>);

impl Drop for Noting<'_> {
    fn drop(&mut self) {
        let samples = THREAD.with(|t| t.borrow().tallies.get(3).map_or(0, |t| t.hold_samples));
        self.0.set(Some(samples));
    }
}

#[test]
fn a_timed_hold_is_recorded_after_the_release_and_ends_before_it() {
    thread_reset(1, 5);
    let mut ctx = crate::OpCtx {
        locks: LockCounters::sampled(1, 5),
        ..crate::OpCtx::default()
    };
    let seen = std::cell::Cell::new(None);
    let held = ctx.lock(LockId(3), || Some(Noting(&seen)), || unreachable!());
    assert!(held.hold.timed());
    std::thread::sleep(Duration::from_millis(2));
    drop(held);
    assert_eq!(
        seen.get(),
        Some(0),
        "nothing recorded while the lock was held"
    );
    let t = thread_take();
    assert_eq!(t[3].hold_samples, 1);
    assert!(t[3].hold_sum_ns >= 2_000_000, "{:?}", t[3]);
    assert_eq!(ctx.locks.tallies[3].acquisitions, 1);
}

#[test]
fn with_the_instrument_off_a_context_counts_nothing() {
    let mut c = LockCounters {
        off: true,
        ..LockCounters::default()
    };
    let hold = c.acquired(LockId(0), Some(Duration::from_micros(1)));
    assert!(!hold.timed());
    drop(hold);
    assert!(c.tallies.is_empty());
}

#[test]
fn a_sampled_thread_times_about_one_hold_in_n() {
    thread_reset(4, 1);
    for _ in 0..4000 {
        let _hold = thread_acquired(LockId(0), None);
    }
    let t = thread_take();
    assert_eq!(t[0].acquisitions, 4000);
    assert!(
        (700..1300).contains(&t[0].hold_samples),
        "{}",
        t[0].hold_samples
    );
    assert!(thread_take().is_empty(), "taken once");
}

#[test]
fn sets_join_and_note_what_they_leave_unnamed() {
    let a = LockSet::new().with(LockId(0), "directory", 1);
    let b = LockSet::new()
        .with(LockId(0), "twice", 1)
        .shared(LockId(1), "reads")
        .unnamed("the map's shards");
    let joined = a.join(b).unnamed("the queue");
    let names: Vec<_> = joined.locks.iter().map(|l| l.name.as_str()).collect();
    assert_eq!(names, ["directory", "reads"]);
    assert_eq!(
        joined.unnamed.as_deref(),
        Some("the map's shards; the queue")
    );
}
