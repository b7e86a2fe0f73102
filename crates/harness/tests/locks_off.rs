//! The lock table's instrument turned off for the process (`lab matrix locks=off`, which
//! reaches each child `lab run`): a hot path that names its locks still runs and counts
//! its operations, and its record has no lock table, says why, and states no instrument
//! cost. A file of its own, since the switch is process-wide and the other tests need it
//! on.

use std::sync::Mutex;
use std::time::Duration;

use harness::locks::{self, LockId, LockSet};
use harness::schema::CellKey;
use harness::{runner, CellRecord, OpCtx, Outcome, Repetition, RunSettings, Worker, Workload};

const SHARED: LockId = LockId(0);

struct Shared(Mutex<u64>);

struct SharedWorker<'a>(&'a Mutex<u64>);

impl Worker for SharedWorker<'_> {
    fn op(&mut self, ctx: &mut OpCtx) -> Outcome {
        let m = self.0;
        **ctx.lock(SHARED, || m.try_lock().ok(), || m.lock().unwrap()) += 1;
        Outcome::OK
    }
}

impl<'a> Workload for &'a Shared {
    type Worker = SharedWorker<'a>;
    fn worker(&self, _: usize, _: usize) -> SharedWorker<'a> {
        SharedWorker(&self.0)
    }
    fn verify(&self, _: &[SharedWorker<'a>]) -> Result<(), String> {
        Ok(())
    }
    fn locks(&self) -> Option<LockSet> {
        Some(LockSet::new().with(SHARED, "shared", 1))
    }
}

fn record(threads: usize) -> Repetition {
    let shared = Shared(Mutex::new(0));
    let settings = RunSettings {
        threads,
        warmup: Duration::from_millis(10),
        duration: Duration::from_millis(60),
    };
    let m = runner::run(&&shared, settings).unwrap();
    assert!(m.ops > 0 && *shared.0.lock().unwrap() >= m.ops);
    if let Some(l) = m.locks.as_ref().filter(|_| !locks::instrument_on()) {
        assert!(
            l.tallies.iter().all(|t| t.acquisitions == 0),
            "counted with the instrument off: {:?}",
            l.tallies
        );
    }
    let key = CellKey {
        hot_path: "shared".into(),
        variant: "mutex".into(),
        params: Default::default(),
        threads,
        cores: 2,
    };
    Repetition::from_measurement(&key, "0-1", &m)
}

#[test]
fn with_the_instrument_off_a_named_lock_gives_no_table() {
    locks::set_instrument(false);
    assert!(!locks::instrument_on());
    for threads in [1, 2] {
        let r = record(threads);
        assert!(r.locks_off, "{threads} threads");
        assert_eq!(r.locks, None);
        assert_eq!((r.bounds.as_ref(), r.lock_cost), (None, None));
        assert_eq!(r.locks_complete, None);
        let json = serde_json::to_value(&r).unwrap();
        assert_eq!(json["locks_off"], serde_json::json!(true));
        assert!(json["locks"].is_null());
        // Merged repetitions stay off.
        let merged = CellRecord::merge_repetitions(&[r.clone(), r]).unwrap();
        assert!(merged.locks_off && merged.locks.is_none());
    }
    locks::set_instrument(true);
    let on = record(1);
    assert!(!on.locks_off && on.locks.is_some());
    let json = serde_json::to_value(&on).unwrap();
    assert!(json.get("locks_off").is_none(), "absent when on: {json}");
}
