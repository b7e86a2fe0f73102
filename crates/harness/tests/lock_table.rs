//! The lock table against physics: workloads whose holds are known (sleeps of a fixed
//! length, or hold lengths the test hands to the instrument), so the checks hold on a
//! loaded two-core machine. No assertion here is about speed: only that the utilisation
//! law, the ceiling K / S and the sampling agree with what the workload did.

use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use harness::lock_table::LockRow;
use harness::locks::{LockId, LockSet};
use harness::schema::CellKey;
use harness::{runner, OpCtx, Outcome, Repetition, RunRecord, RunSettings, Worker, Workload};

const GATE: LockId = LockId(0);

/// Every operation takes one of `slots` slots (a mutex for 1) and sleeps `hold` in it.
struct Gate {
    slots: usize,
    free: Mutex<usize>,
    returned: Condvar,
    hold: Duration,
    sample_every: u32,
}

impl Gate {
    fn new(slots: usize, hold: Duration, sample_every: u32) -> Gate {
        Gate {
            slots,
            free: Mutex::new(slots),
            returned: Condvar::new(),
            hold,
            sample_every,
        }
    }
}

struct GateWorker<'a> {
    gate: &'a Gate,
    /// Time held, every hold timed by the worker itself (the exhaustive figure).
    held: Duration,
    holds: u64,
}

impl Worker for GateWorker<'_> {
    fn op(&mut self, ctx: &mut OpCtx) -> Outcome {
        let gate = self.gate;
        let mut free = gate.free.lock().unwrap();
        let mut waited = None;
        if *free == 0 {
            let start = Instant::now();
            while *free == 0 {
                free = gate.returned.wait(free).unwrap();
            }
            waited = Some(start.elapsed());
        }
        *free -= 1;
        drop(free);
        if let Some(w) = waited {
            ctx.record_wait(w);
        }
        let mut hold = ctx.acquired(GATE, waited);
        let start = Instant::now();
        std::thread::sleep(gate.hold);
        self.held += start.elapsed();
        self.holds += 1;
        hold.end();
        *gate.free.lock().unwrap() += 1;
        gate.returned.notify_one();
        Outcome::OK
    }

    fn window_opened(&mut self) {
        self.held = Duration::ZERO;
        self.holds = 0;
    }
}

impl<'a> Workload for &'a Gate {
    type Worker = GateWorker<'a>;
    fn worker(&self, _index: usize, _threads: usize) -> GateWorker<'a> {
        GateWorker {
            gate: self,
            held: Duration::ZERO,
            holds: 0,
        }
    }
    fn verify(&self, _workers: &[GateWorker<'a>]) -> Result<(), String> {
        Ok(())
    }
    fn waits_measured(&self) -> bool {
        true
    }
    fn lock_sample_every(&self) -> u32 {
        self.sample_every
    }
    fn locks(&self) -> Option<LockSet> {
        Some(LockSet::new().with(GATE, "gate", self.slots as u32))
    }
}

fn record_of(gate: &Gate, threads: usize, window: Duration) -> Repetition {
    let settings = RunSettings {
        threads,
        warmup: Duration::from_millis(30),
        duration: window,
    };
    let m = runner::run(&gate, settings).unwrap();
    let key = CellKey {
        hot_path: "gate".into(),
        variant: format!("k{}", gate.slots),
        params: Default::default(),
        threads,
        cores: 2,
    };
    Repetition::from_measurement(&key, "0-1", &m)
}

fn row(record: &RunRecord) -> &LockRow {
    &record.locks.as_ref().expect("the gate is named")[0]
}

#[test]
fn one_mutex_held_200_us_per_operation_is_fully_used_and_never_passed() {
    let gate = Gate::new(1, Duration::from_micros(200), 1);
    let record = record_of(&gate, 4, Duration::from_millis(400));
    let r = row(&record);
    let u = r.utilization.unwrap();
    // Four threads always have someone holding or about to hold the one slot.
    assert!((0.75..=1.05).contains(&u), "U = {u}: {r:?}");
    // No 1-thread cell beside it: no uncontended hold, so no capacity to quote.
    assert_eq!((r.ceiling_ops_per_sec, r.ceiling_share), (None, None));
    let b = record.bounds.as_ref().unwrap();
    let ceiling = b.ceiling_ops_per_sec;
    assert!(
        record.ops_per_sec <= ceiling * 1.05,
        "{} > {ceiling}",
        record.ops_per_sec
    );
    assert_eq!(record.locks_complete, Some(true));
    let hold = r.hold_ns.unwrap();
    assert!(hold.mean >= 200_000.0, "a 200 us sleep held {hold:?}");
    assert_eq!(b.lock, "gate");
    // Sleeping holders use little CPU: the lock, not the cores, binds.
    assert_eq!(b.cores, 2);
    assert!(!b.cpu_bound(), "{b:?}");
    let lock_cost = record.lock_cost.expect("the instrument's cost is stated");
    assert!(lock_cost.counted_ns >= 0.0 && lock_cost.timed_ns.is_finite());
    assert!(b.bound_ops_per_sec <= b.ceiling_ops_per_sec * 1.0001);
    assert!(record.ops_per_sec <= b.ceiling_ops_per_sec * 1.05);
}

#[test]
fn the_one_thread_cell_gives_the_capacity_of_the_others() {
    let gate = Gate::new(1, Duration::from_micros(200), 1);
    // One repetition each, as cells.
    let mut cells = vec![
        record_of(&gate, 1, Duration::from_millis(200)).0,
        record_of(&gate, 3, Duration::from_millis(200)).0,
    ];
    let alone = row(&cells[0]).clone();
    // A 1-thread record is its own uncontended cell.
    let s0 = alone.hold_ns.unwrap().mean;
    assert_eq!(alone.uncontended_hold_ns, Some(s0));
    assert!((alone.ceiling_share.unwrap() - alone.utilization.unwrap()).abs() < 1e-9);
    harness::lock_table::fill_ceilings(&mut cells);
    let busy = row(&cells[1]);
    assert_eq!(busy.uncontended_hold_ns, Some(s0));
    let expected = 1e9 / (s0 * busy.acquisitions_per_op.unwrap());
    assert!((busy.ceiling_ops_per_sec.unwrap() / expected - 1.0).abs() < 1e-9);
    assert!(busy.ceiling_share.unwrap() <= 1.05, "{busy:?}");
}

#[test]
fn a_semaphore_of_three_slots_has_three_times_the_ceiling_of_one_lock() {
    let hold = Duration::from_micros(200);
    let one = Gate::new(1, hold, 1);
    let three = Gate::new(3, hold, 1);
    let a = record_of(&one, 6, Duration::from_millis(300));
    let b = record_of(&three, 6, Duration::from_millis(300));
    let (ra, rb) = (row(&a), row(&b));
    // The same sleep in both: their typical holds agree (medians; a loaded machine puts
    // its stalls in the means' tails, differently in each run).
    let (ha, hb) = (ra.hold_ns.unwrap(), rb.hold_ns.unwrap());
    assert!((hb.p50 / ha.p50 - 1.0).abs() < 0.25, "{ha:?} vs {hb:?}");
    // K = 3 at the same hold: three times one lock's ceiling, K / S with each run's S.
    let (ba, bb) = (a.bounds.as_ref().unwrap(), b.bounds.as_ref().unwrap());
    let ratio = bb.ceiling_ops_per_sec / ba.ceiling_ops_per_sec;
    let ratio_s = hb.mean / ha.mean;
    let expected = 3.0 / ratio_s;
    assert!(
        (ratio - expected).abs() < 1e-6 * expected + 1e-9,
        "ceiling is K / S: {ratio} vs {expected}"
    );
    for (record, r) in [(&a, ra), (&b, rb)] {
        let ceiling = record.bounds.as_ref().unwrap().ceiling_ops_per_sec;
        assert!(record.ops_per_sec <= ceiling * 1.05);
        assert!(r.utilization.unwrap() <= 1.05, "{r:?}");
    }
}

#[test]
fn the_sampled_hold_mean_agrees_with_every_hold_timed() {
    // One thread, 100 us sleeps, one hold in two timed by the table; the worker times
    // every hold itself. Kept in a local run so the workers come back.
    let gate = Gate::new(1, Duration::from_micros(100), 2);
    let settings = RunSettings {
        threads: 1,
        warmup: Duration::from_millis(20),
        duration: Duration::from_millis(500),
    };
    // The runner hands the workers only to verify: this workload adds up their own
    // timings there.
    let exhaustive = std::sync::Mutex::new((Duration::ZERO, 0u64));
    struct Keeping<'a> {
        gate: &'a Gate,
        out: &'a Mutex<(Duration, u64)>,
    }
    impl<'a> Workload for Keeping<'a> {
        type Worker = GateWorker<'a>;
        fn worker(&self, i: usize, n: usize) -> GateWorker<'a> {
            Workload::worker(&self.gate, i, n)
        }
        fn verify(&self, workers: &[GateWorker<'a>]) -> Result<(), String> {
            let mut out = self.out.lock().unwrap();
            for w in workers {
                out.0 += w.held;
                out.1 += w.holds;
            }
            Ok(())
        }
        fn lock_sample_every(&self) -> u32 {
            self.gate.sample_every
        }
        fn locks(&self) -> Option<LockSet> {
            Workload::locks(&self.gate)
        }
    }
    let m = runner::run(
        &Keeping {
            gate: &gate,
            out: &exhaustive,
        },
        settings,
    )
    .unwrap();
    let (held, holds) = *exhaustive.lock().unwrap();
    let every = held.as_nanos() as f64 / holds as f64;
    let tally = &m.locks.as_ref().unwrap().tallies[0];
    assert!(
        tally.hold_samples > 100 && tally.hold_samples < holds,
        "{tally:?}"
    );
    let sampled = tally.hold_sum_ns as f64 / tally.hold_samples as f64;
    let off = (sampled - every).abs() / every;
    assert!(off < 0.10, "sampled {sampled} ns vs every hold {every} ns");
}

#[test]
fn known_hold_lengths_sampled_one_in_sixteen_keep_their_mean() {
    // Holds the test hands to the instrument: no clock noise, only the sampler's.
    struct Known;
    struct KnownWorker {
        n: u64,
    }
    impl Worker for KnownWorker {
        fn op(&mut self, ctx: &mut OpCtx) -> Outcome {
            self.n += 1;
            // A skewed, repeating pattern: mostly 1 us, one in 50 a 1 ms hold.
            let ns = if self.n % 50 == 0 { 1_000_000 } else { 1_000 };
            ctx.acquired(GATE, None).end_after(Duration::from_nanos(ns));
            Outcome::OK
        }
    }
    impl Workload for Known {
        type Worker = KnownWorker;
        fn worker(&self, _: usize, _: usize) -> KnownWorker {
            KnownWorker { n: 0 }
        }
        fn verify(&self, _: &[KnownWorker]) -> Result<(), String> {
            Ok(())
        }
        fn lock_sample_every(&self) -> u32 {
            16
        }
        fn locks(&self) -> Option<LockSet> {
            Some(LockSet::new().with(GATE, "known", 1))
        }
    }
    let m = runner::run(
        &Known,
        RunSettings {
            threads: 2,
            warmup: Duration::from_millis(10),
            duration: Duration::from_millis(200),
        },
    )
    .unwrap();
    let t = &m.locks.as_ref().unwrap().tallies[0];
    let exact = (49.0 * 1_000.0 + 1_000_000.0) / 50.0;
    let sampled = t.hold_sum_ns as f64 / t.hold_samples as f64;
    assert!(t.hold_samples * 8 < t.acquisitions, "{t:?}");
    assert!(
        (sampled - exact).abs() / exact < 0.10,
        "sampled {sampled} vs {exact} over {} samples",
        t.hold_samples
    );
}

#[test]
fn a_hot_path_that_names_no_locks_has_a_null_table() {
    struct Quiet;
    struct QuietWorker;
    impl Worker for QuietWorker {
        fn op(&mut self, _: &mut OpCtx) -> Outcome {
            Outcome::OK
        }
    }
    impl Workload for Quiet {
        type Worker = QuietWorker;
        fn worker(&self, _: usize, _: usize) -> QuietWorker {
            QuietWorker
        }
        fn verify(&self, _: &[QuietWorker]) -> Result<(), String> {
            Ok(())
        }
    }
    let settings = RunSettings {
        threads: 1,
        warmup: Duration::ZERO,
        duration: Duration::from_millis(20),
    };
    let m = runner::run(&Quiet, settings).unwrap();
    let key = CellKey {
        hot_path: "q".into(),
        variant: "q".into(),
        params: Default::default(),
        threads: 1,
        cores: 1,
    };
    let json = serde_json::to_value(Repetition::from_measurement(&key, "0", &m)).unwrap();
    assert!(
        json["locks"].is_null() && json["bounds"].is_null(),
        "{json}"
    );
    assert!(json["locks_complete"].is_null());
}
