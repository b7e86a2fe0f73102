//! A persistent team of worker threads for criterion's `iter_custom`: the threads are
//! started once, outside every timed region, and each timed call only releases them to
//! run a given number of operations and waits until all are done.
//!
//! This is for benchmarks only; matrix cells use [`crate::runner`], which measures a fixed
//! window rather than a fixed operation count.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Barrier};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::workload::{self, OpCtx, Worker, Workload};

struct Shared {
    start: Barrier,
    end: Barrier,
    per_thread: AtomicU64,
    quit: AtomicBool,
}

/// Threads that each own one worker and run batches of operations on demand.
pub struct ThreadTeam {
    shared: Arc<Shared>,
    handles: Vec<JoinHandle<()>>,
}

impl ThreadTeam {
    /// Starts one thread per worker; they wait for [`ThreadTeam::run`].
    pub fn new<K: Worker + 'static>(workers: Vec<K>) -> ThreadTeam {
        let n = workers.len();
        let shared = Arc::new(Shared {
            start: Barrier::new(n + 1),
            end: Barrier::new(n + 1),
            per_thread: AtomicU64::new(0),
            quit: AtomicBool::new(false),
        });
        let handles = workers
            .into_iter()
            .map(|mut worker| {
                let shared = Arc::clone(&shared);
                std::thread::spawn(move || {
                    let mut ctx = OpCtx::default();
                    loop {
                        shared.start.wait();
                        if shared.quit.load(Ordering::Acquire) {
                            return;
                        }
                        for _ in 0..shared.per_thread.load(Ordering::Acquire) {
                            std::hint::black_box(worker.op(&mut ctx));
                        }
                        shared.end.wait();
                    }
                })
            })
            .collect();
        ThreadTeam { shared, handles }
    }

    /// Starts `threads` threads, each with its own worker of `workload`: what every
    /// hot path's criterion benchmark needs.
    pub fn for_workload<W: Workload>(workload: &W, threads: usize) -> ThreadTeam
    where
        W::Worker: 'static,
    {
        ThreadTeam::new(workload::workers(workload, threads))
    }

    /// Threads in the team.
    pub fn threads(&self) -> usize {
        self.handles.len()
    }

    /// Runs about `iters` operations in total, split evenly over the threads, and returns
    /// the wall time from release to the last thread finishing.
    pub fn run(&self, iters: u64) -> Duration {
        let per_thread = iters.div_ceil(self.threads().max(1) as u64).max(1);
        self.shared.per_thread.store(per_thread, Ordering::Release);
        let start = Instant::now();
        self.shared.start.wait();
        self.shared.end.wait();
        start.elapsed()
    }
}

impl Drop for ThreadTeam {
    fn drop(&mut self) {
        self.shared.quit.store(true, Ordering::Release);
        self.shared.start.wait();
        for handle in self.handles.drain(..) {
            let _ = handle.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::Outcome;

    struct Counter(Arc<AtomicU64>);
    impl Worker for Counter {
        fn op(&mut self, _ctx: &mut OpCtx) -> Outcome {
            self.0.fetch_add(1, Ordering::Relaxed);
            Outcome::OK
        }
    }

    #[test]
    fn runs_the_requested_operations_on_every_thread() {
        let total = Arc::new(AtomicU64::new(0));
        let team = ThreadTeam::new((0..3).map(|_| Counter(Arc::clone(&total))).collect());
        team.run(300);
        assert_eq!(total.load(Ordering::Relaxed), 300);
        team.run(10); // 10 / 3 rounds up to 4 each
        assert_eq!(total.load(Ordering::Relaxed), 312);
        drop(team);
    }
}
