//! Resident sides alternating in turns (`harness::slices`) through the real runner: only
//! one side's team runs at a time, every counted turn is logged, and a team of more
//! threads than CPUs parks and wakes without losing a worker.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use harness::slices::{Conductor, Schedule};
use harness::{OpCtx, Outcome, RunSettings, Worker, Workload};

/// Operations of each side now under way, and operations that saw the other side's.
#[derive(Default)]
struct Stage {
    busy: [AtomicUsize; 2],
    overlaps: AtomicUsize,
}

struct Side {
    me: usize,
    stage: Arc<Stage>,
}

struct SideWorker {
    me: usize,
    stage: Arc<Stage>,
    done: u64,
}

impl Worker for SideWorker {
    fn op(&mut self, _ctx: &mut OpCtx) -> Outcome {
        self.stage.busy[self.me].fetch_add(1, Ordering::SeqCst);
        if self.stage.busy[1 - self.me].load(Ordering::SeqCst) > 0 {
            self.stage.overlaps.fetch_add(1, Ordering::SeqCst);
        }
        std::hint::black_box((0..200u64).sum::<u64>());
        self.stage.busy[self.me].fetch_sub(1, Ordering::SeqCst);
        self.done += 1;
        Outcome::OK
    }
}

impl Workload for Side {
    type Worker = SideWorker;
    fn worker(&self, _index: usize, _threads: usize) -> SideWorker {
        SideWorker {
            me: self.me,
            stage: Arc::clone(&self.stage),
            done: 0,
        }
    }
    fn verify(&self, workers: &[SideWorker]) -> Result<(), String> {
        // Every worker ran: none was lost in a park.
        match workers.iter().position(|w| w.done == 0) {
            Some(i) => Err(format!("worker {i} never ran")),
            None => Ok(()),
        }
    }
}

/// One block of 3 pairs of a 3-thread side against an 8-thread one, 40 ms windows: its
/// log and cut. Panics where a side ran during the other's turn or lost a worker.
fn block() -> (Vec<Vec<harness::slices::Counts>>, harness::slices::Cut) {
    let stage = Arc::new(Stage::default());
    let conductor = Conductor::new(Schedule {
        sides: 2,
        pairs: 3,
        window: Duration::from_millis(40),
        warmup: Duration::from_millis(10),
        first: 0,
    });
    let threads = [3, 8];
    let wholes: Vec<_> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..2)
            .map(|me| {
                let conductor = Arc::clone(&conductor);
                let stage = Arc::clone(&stage);
                scope.spawn(move || {
                    conductor.side(me, || {
                        harness::runner::run(
                            &Side { me, stage },
                            RunSettings {
                                threads: threads[me],
                                warmup: Duration::from_millis(10),
                                duration: Duration::from_millis(40),
                            },
                        )
                    })
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for whole in wholes {
        let m = whole.expect("measured");
        m.verified.expect("every worker ran");
    }
    assert_eq!(
        stage.overlaps.load(Ordering::SeqCst),
        0,
        "a side ran during the other's turn"
    );
    conductor.result().expect("the block finished")
}

#[test]
fn one_side_runs_at_a_time_and_every_turn_is_counted() {
    // Where the turns fall is the host's to move: a warm-up half (5 ms) stalled whole
    // reads no response time and cuts the block into whole windows, and a turn stalled
    // whole counts nothing. So up to three blocks, each checked for overlaps and lost
    // workers, until one is cut into turns that all counted.
    let mut tries = Vec::new();
    for _ in 0..3 {
        let (log, cut) = block();
        let counted = log.iter().flatten().all(|c| c.ops > 0);
        if cut.slices >= 2 && counted {
            assert_eq!(log.len(), 3);
            for counts in log.iter().flatten() {
                assert!(counts.window >= cut.counted * cut.slices as u32 / 2);
            }
            return;
        }
        tries.push(format!("{cut:?}: {log:?}"));
    }
    panic!("no block was cut into turns that all counted: {tries:#?}");
}
