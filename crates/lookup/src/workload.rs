//! Turns a [`Directory`] into a [`harness::Workload`]: which users each thread searches,
//! which operations modify, and what "correct" means afterwards.
//!
//! Each worker gets a pre-generated plan of operations (user index and search or modify)
//! so that no random number is drawn and no key is formatted inside the timed loop.

use std::sync::Arc;

use harness::{OpCtx, Outcome, Worker, Workload};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use rand_distr::{Distribution, Zipf};

use crate::directory::{Directory, DirectoryData};

/// Operations in one worker's plan; it cycles through them. A power of two.
pub(crate) const PLAN_LEN: usize = 1 << 14;

/// Which users get searched.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum KeyDistribution {
    /// Every user equally often (the seed's randomised uid search).
    Uniform,
    /// Zipf with exponent 0.99: a few users are searched far more often than the rest.
    Zipf,
}

impl KeyDistribution {
    /// Parses `uniform` or `zipf`.
    pub fn parse(text: &str) -> Result<KeyDistribution, String> {
        match text {
            "uniform" => Ok(KeyDistribution::Uniform),
            "zipf" => Ok(KeyDistribution::Zipf),
            _ => Err(format!("keys={text:?}: expected one of uniform, zipf")),
        }
    }
}

/// The mix of operations, independent of the directory design.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WorkloadShape {
    /// Percent of operations that modify an entry.
    pub write_pct: u32,
    /// Which users are picked.
    pub keys: KeyDistribution,
    /// Seed of every plan (thread `i` uses `seed + i`).
    pub seed: u64,
}

/// One planned operation: which user, and whether it modifies rather than searches.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PlannedOp {
    pub(crate) user: u32,
    pub(crate) modify: bool,
}

/// The lookup workload over directory `D`.
pub struct LookupWorkload<D: Directory> {
    dir: Arc<D>,
    uids: Arc<[String]>,
    shape: WorkloadShape,
}

impl<D: Directory> LookupWorkload<D> {
    /// A workload searching the users of `data`, loaded into `dir`.
    pub fn new(dir: Arc<D>, data: &DirectoryData, shape: WorkloadShape) -> Self {
        LookupWorkload {
            dir,
            uids: data.users.iter().map(|u| u.uid.clone()).collect(),
            shape,
        }
    }

    /// The uids of the directory's users, by user index.
    pub(crate) fn uids(&self) -> &Arc<[String]> {
        &self.uids
    }

    /// The directory this workload runs against.
    pub(crate) fn dir(&self) -> &Arc<D> {
        &self.dir
    }

    /// The plan of thread (or connection) `index`: [`PLAN_LEN`] operations it cycles through.
    pub(crate) fn plan(&self, index: usize) -> Vec<PlannedOp> {
        let mut rng = SmallRng::seed_from_u64(self.shape.seed.wrapping_add(index as u64));
        let users = self.uids.len();
        let zipf = match self.shape.keys {
            KeyDistribution::Zipf if users > 0 => {
                Some(Zipf::new(users as f64, 0.99).expect("valid zipf parameters"))
            }
            _ => None,
        };
        (0..PLAN_LEN)
            .map(|_| {
                let user = match &zipf {
                    // Zipf ranks start at 1.
                    Some(z) => (z.sample(&mut rng) as usize).clamp(1, users) - 1,
                    None => rng.random_range(0..users.max(1)),
                };
                PlannedOp {
                    user: user as u32,
                    modify: rng.random_range(0..100) < self.shape.write_pct,
                }
            })
            .collect()
    }
}

/// One thread's handle: its plan, its tallies and a shared reference to the directory.
pub struct LookupWorker<D: Directory> {
    dir: Arc<D>,
    uids: Arc<[String]>,
    plan: Vec<PlannedOp>,
    next: usize,
    thread: usize,
    /// Searches that returned no entry or somebody else's.
    wrong_answers: u64,
    /// Modifications the directory acknowledged.
    modified: u64,
}

impl<D: Directory> Worker for LookupWorker<D> {
    #[inline]
    fn op(&mut self, ctx: &mut OpCtx) -> Outcome {
        let planned = self.plan[self.next];
        self.next = (self.next + 1) & (PLAN_LEN - 1);
        let uid = &self.uids[planned.user as usize];
        let ok = if planned.modify {
            let ok = self.dir.modify(uid, ctx);
            self.modified += u64::from(ok);
            ok
        } else {
            let found = self.dir.search(uid, self.thread, ctx);
            let ok = found.as_ref().is_some_and(|e| e.uid == *uid);
            std::hint::black_box(found);
            ok
        };
        if ok {
            Outcome::OK
        } else {
            self.wrong_answers += 1;
            Outcome::failed(0)
        }
    }
}

impl<D: Directory> Workload for LookupWorkload<D> {
    type Worker = LookupWorker<D>;

    // Measured: every directory times its lock, latch or writer slot where it blocks.
    fn waits_measured(&self) -> bool {
        true
    }

    fn worker(&self, index: usize, _threads: usize) -> LookupWorker<D> {
        LookupWorker {
            dir: Arc::clone(&self.dir),
            uids: Arc::clone(&self.uids),
            plan: self.plan(index),
            next: 0,
            thread: index,
            wrong_answers: 0,
            modified: 0,
        }
    }

    fn verify(&self, workers: &[LookupWorker<D>]) -> Result<(), String> {
        let wrong: u64 = workers.iter().map(|w| w.wrong_answers).sum();
        if wrong > 0 {
            return Err(format!(
                "{wrong} operations returned no entry or the wrong one"
            ));
        }
        let acknowledged: u64 = workers.iter().map(|w| w.modified).sum();
        let stored = self.dir.total_revisions();
        if stored != acknowledged {
            return Err(format!(
                "{acknowledged} modifications acknowledged but {stored} stored: {} lost",
                acknowledged as i64 - stored as i64
            ));
        }
        Ok(())
    }

    fn locks(&self) -> Option<harness::locks::LockSet> {
        Some(self.dir.locks())
    }

    fn latency_sample_every(&self) -> u32 {
        // A search takes a few hundred nanoseconds; reading the clock twice for each would
        // be a noticeable share of it.
        16
    }

    fn extra(
        &self,
        workers: &[LookupWorker<D>],
        _window: std::time::Duration,
    ) -> serde_json::Map<String, serde_json::Value> {
        let mut extra = self.dir.extra();
        let modified: u64 = workers.iter().map(|w| w.modified).sum();
        extra.insert("modifications".into(), serde_json::json!(modified));
        extra
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::directory::Entry;

    fn data() -> DirectoryData {
        DirectoryData::generate(500, 50)
    }

    fn shape(write_pct: u32, keys: KeyDistribution) -> WorkloadShape {
        WorkloadShape {
            write_pct,
            keys,
            seed: 7,
        }
    }

    /// A directory that drops every other modification and answers one uid wrongly: the
    /// verifier must catch both.
    struct Lossy {
        inner: crate::variants::LockedDirectory<crate::variants::GlobalMutex>,
        calls: std::sync::atomic::AtomicU64,
    }

    impl Directory for Lossy {
        fn search(&self, uid: &str, thread: usize, ctx: &mut OpCtx) -> Option<Entry> {
            if uid == "user000003" {
                return self.inner.search("user000004", thread, ctx);
            }
            self.inner.search(uid, thread, ctx)
        }
        fn modify(&self, uid: &str, ctx: &mut OpCtx) -> bool {
            let n = self
                .calls
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            n % 2 == 1 || self.inner.modify(uid, ctx)
        }
        fn total_revisions(&self) -> u64 {
            self.inner.total_revisions()
        }
        fn locks(&self) -> harness::locks::LockSet {
            self.inner.locks()
        }
    }

    fn lossy() -> Arc<Lossy> {
        Arc::new(Lossy {
            inner: crate::variants::LockedDirectory::new(&data()),
            calls: Default::default(),
        })
    }

    fn run_ops<D: Directory>(
        w: &LookupWorkload<D>,
        threads: usize,
        ops: usize,
    ) -> Vec<LookupWorker<D>> {
        std::thread::scope(|s| {
            let handles: Vec<_> = (0..threads)
                .map(|i| {
                    let mut worker = w.worker(i, threads);
                    s.spawn(move || {
                        let mut ctx = OpCtx::default();
                        for _ in 0..ops {
                            worker.op(&mut ctx);
                        }
                        worker
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        })
    }

    #[test]
    fn verifier_catches_lost_modifications() {
        let w = LookupWorkload::new(lossy(), &data(), shape(100, KeyDistribution::Uniform));
        let workers = run_ops(&w, 2, 200);
        let err = w.verify(&workers).unwrap_err();
        assert!(err.contains("lost"), "{err}");
    }

    #[test]
    fn verifier_catches_wrong_answers() {
        let w = LookupWorkload::new(lossy(), &data(), shape(0, KeyDistribution::Uniform));
        let workers = run_ops(&w, 1, PLAN_LEN);
        let err = w.verify(&workers).unwrap_err();
        assert!(err.contains("wrong"), "{err}");
    }

    #[test]
    fn plans_follow_the_shape() {
        let dir = Arc::new(crate::variants::DashMapDirectory::new(&data()));
        let w = LookupWorkload::new(dir, &data(), shape(20, KeyDistribution::Zipf));
        let plan = w.plan(0);
        let writes = plan.iter().filter(|p| p.modify).count() as f64 / PLAN_LEN as f64;
        assert!((0.15..0.25).contains(&writes), "write share {writes}");
        assert!(plan.iter().all(|p| (p.user as usize) < 500));
        // Zipf: the most popular user is searched far more often than an average one.
        let top = plan.iter().filter(|p| p.user == 0).count();
        assert!(top > 10 * PLAN_LEN / 500, "top user seen {top} times");
        // Different threads get different plans; the same thread the same plan.
        assert_ne!(
            w.plan(0).iter().map(|p| p.user).collect::<Vec<_>>(),
            w.plan(1).iter().map(|p| p.user).collect::<Vec<_>>()
        );
        assert_eq!(
            w.plan(3).iter().map(|p| p.user).collect::<Vec<_>>(),
            w.plan(3).iter().map(|p| p.user).collect::<Vec<_>>()
        );
    }
}
