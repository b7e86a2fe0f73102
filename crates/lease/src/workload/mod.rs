//! Lease holders at work: each worker owns a share of the applications and, for each,
//! extends the lease its unit holds, now and then lets a lease lapse (the leader dies)
//! and claims it again for another unit once it expired, and probes that a non-holder's
//! extend is rejected. Worker 0 also runs the expiry sweeper.
//!
//! Time is simulated: `time_scale` simulated seconds pass per real second, so a 60 s
//! lease lapses within a run. Applications are split between workers, so a lease is only
//! ever claimed by one worker and "two holders" can only come from the store.
//!
//! Paced (`rate`, or `load=seed`: each lease visited once per extend interval), a worker
//! takes its applications in turn, one step per due instant. The checks and the window's
//! figures are in the `checks` submodule.

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use harness::{OpCtx, Outcome, Worker, Workload};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use crate::store::LeaseStore;

mod checks;

/// The leadership scenario.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LeaseShape {
    /// Applications (one leadership lease each).
    pub applications: usize,
    /// Units per application (candidate holders).
    pub units: usize,
    /// Lease duration, simulated milliseconds.
    pub lease_ms: i64,
    /// Simulated seconds per real second.
    pub time_scale: f64,
    /// Total operations per second to pace to; 0 = as fast as the store goes.
    pub rate: u64,
}

/// Simulated time since the workload was made.
#[derive(Debug)]
pub struct SimClock {
    start: Instant,
    scale: f64,
}

impl SimClock {
    /// A clock running `scale` times real time.
    pub fn new(scale: f64) -> Self {
        SimClock {
            start: Instant::now(),
            scale,
        }
    }
    /// Simulated milliseconds now.
    pub fn now(&self) -> i64 {
        (self.start.elapsed().as_secs_f64() * 1000.0 * self.scale) as i64
    }
}

/// The name of application `a`'s lease and of its unit `u`.
pub fn lease_name(a: usize) -> String {
    format!("application-{a:05}")
}

fn unit_name(a: usize, u: usize) -> String {
    format!("application-{a:05}/{u}")
}

/// Each lease loses its leader about once per this many simulated milliseconds (ten
/// minutes), so a share of leases lapse, are swept and are claimed again in every run,
/// however fast the store is.
const CHURN_MS: i64 = 600_000;

/// Every lease and unit name, made once so the hot loop formats nothing.
struct Names {
    leases: Vec<String>,
    units: Vec<Vec<String>>,
}

impl Names {
    fn new(applications: usize, units: usize) -> Names {
        Names {
            leases: (0..applications).map(lease_name).collect(),
            units: (0..applications)
                .map(|a| (0..units).map(|u| unit_name(a, u)).collect())
                .collect(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum AppState {
    Held { unit: usize, acked: i64 },
    Abandoned { unit: usize, until: i64 },
    Lost { unit: usize },
}

/// The workload over store `S`.
pub struct LeaseWorkload<S: LeaseStore> {
    store: Arc<S>,
    shape: LeaseShape,
    clock: Arc<SimClock>,
    initial: Vec<i64>,
    names: Arc<Names>,
    last_sweep: Arc<AtomicI64>,
    wchar_at_open: Arc<AtomicU64>,
    leases_checked: AtomicU64,
    ack_log: Option<std::path::PathBuf>,
}

/// Bytes this process has written through write(2) and friends (`wchar` in
/// /proc/self/io), which covers SQLite's and LMDB's file and WAL writes.
pub fn bytes_written() -> u64 {
    std::fs::read_to_string("/proc/self/io")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("wchar:"))
                .and_then(|l| l[6..].trim().parse().ok())
        })
        .unwrap_or(0)
}

impl<S: LeaseStore> LeaseWorkload<S> {
    /// Claims every application's lease for its unit 0, as at the seed's start.
    pub fn new(store: Arc<S>, shape: LeaseShape, clock: Arc<SimClock>) -> Result<Self, String> {
        let mut session = store.session()?;
        let now = clock.now();
        let mut initial = Vec::with_capacity(shape.applications);
        for a in 0..shape.applications {
            let expiry = now + shape.lease_ms;
            if !store.claim(&mut session, &lease_name(a), &unit_name(a, 0), now, expiry)? {
                return Err(format!("could not claim {} at the start", lease_name(a)));
            }
            initial.push(expiry);
        }
        Ok(LeaseWorkload {
            store,
            shape,
            clock,
            initial,
            names: Arc::new(Names::new(shape.applications, shape.units)),
            last_sweep: Arc::new(AtomicI64::new(i64::MIN)),
            wchar_at_open: Arc::new(AtomicU64::new(0)),
            leases_checked: AtomicU64::new(0),
            ack_log: None,
        })
    }

    /// Appends every acknowledged extend to `path` as it happens (`lease holder expiry`,
    /// one line per write(2) on an O_APPEND file, so a killed process loses none that it
    /// was told about): what a crash test checks the store against.
    pub fn with_ack_log(mut self, path: &std::path::Path) -> Result<Self, String> {
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(|e| format!("ack_log={}: cannot open for appending: {e}", path.display()))?;
        self.ack_log = Some(path.to_path_buf());
        Ok(self)
    }
}

#[derive(Debug, Default, Clone, Copy)]
struct Window {
    extends: u64,
    claims: u64,
    lost: u64,
}

/// One worker: its applications, its session and its tallies.
pub struct LeaseWorker<S: LeaseStore> {
    store: Arc<S>,
    session: S::Session,
    shape: LeaseShape,
    clock: Arc<SimClock>,
    index: usize,
    apps: Vec<(usize, AppState)>,
    names: Arc<Names>,
    cursor: usize,
    rng: SmallRng,
    ops: u64,
    next_abandon: i64,
    abandon_every: i64,
    next_due: Option<Instant>,
    interval: Duration,
    last_sweep: Arc<AtomicI64>,
    wchar_at_open: Arc<AtomicU64>,
    non_holder_accepted: u64,
    window: Window,
    ack_log: Option<std::fs::File>,
}

impl<S: LeaseStore> LeaseWorker<S> {
    /// In fixed-rate mode, when the next operation is due; the runner sleeps until then
    /// and times the operation from that instant ([`Worker::next_due`]). The schedule
    /// starts at the first operation and never skips: after a stall the operations
    /// behind it are due in the past, start at once, and their latency shows the stall.
    fn pace(&mut self) -> Option<Instant> {
        let scheduled = self.next_due?;
        let due = if self.ops == 0 {
            Instant::now()
        } else {
            scheduled
        };
        self.next_due = Some(due + self.interval);
        Some(due)
    }
}

impl<S: LeaseStore> Worker for LeaseWorker<S> {
    fn op(&mut self, ctx: &mut OpCtx) -> Outcome {
        let outcome = self.step();
        // What the store noted while blocking this thread (busy sleeps, the writer lock,
        // the commit queue).
        ctx.record_wait(crate::store::take_waits());
        outcome
    }

    // Fixed-rate mode: the runner sleeps until the due time and times the step from it.
    fn next_due(&mut self) -> Option<Instant> {
        self.pace()
    }

    fn window_opened(&mut self) {
        self.window = Window::default();
        self.store.reset_stats(&mut self.session);
        crate::store::take_waits();
        if self.index == 0 {
            self.store.window_opened();
        }
        // The first worker to see the window open marks the byte count: worker 0 alone
        // may sit in a durable commit or a busy wait until the window has closed, and
        // would then mark its end (durable runs read 0 bytes per extend that way).
        let _ = self.wchar_at_open.compare_exchange(
            0,
            bytes_written().max(1),
            Ordering::AcqRel,
            Ordering::Relaxed,
        );
    }
}

impl<S: LeaseStore> LeaseWorker<S> {
    fn step(&mut self) -> Outcome {
        self.ops += 1;
        let now = self.clock.now();
        let lease_ms = self.shape.lease_ms;
        if self.index == 0 && self.ops % 64 == 0 {
            if self.store.sweep(&mut self.session, now).is_err() {
                return Outcome::failed(0);
            }
            self.last_sweep.fetch_max(now, Ordering::AcqRel);
        }
        // Skip leases whose leader is gone and that have not lapsed yet: nothing to do.
        let n = self.apps.len();
        let mut slot = self.cursor;
        for _ in 0..n {
            match self.apps[slot].1 {
                AppState::Abandoned { until, .. } if now <= until => slot = (slot + 1) % n,
                _ => break,
            }
        }
        self.cursor = (slot + 1) % n.max(1);
        let Some(&(app, state)) = self.apps.get(slot) else {
            // A worker with no applications has nothing to renew.
            return Outcome::IDLE;
        };
        let mut idle = false;
        // Borrow the field, not an Arc clone: a clone per operation would bump a shared
        // reference count, itself a contended write.
        let names = &self.names;
        let lease = &names.leases[app];
        let unit_of = |u: usize| names.units[app][u].as_str();
        let units = self.shape.units;
        let (result, next) = match state {
            AppState::Held { unit, acked } => {
                let roll = self.rng.random_range(0..100);
                if roll < 5 && units > 1 {
                    // A non-holder tries to extend: the store must refuse.
                    let other = unit_of((unit + 1) % units);
                    let r = self
                        .store
                        .extend(&mut self.session, lease, other, now, now + lease_ms);
                    if r == Ok(true) {
                        self.non_holder_accepted += 1;
                    }
                    (r.map(|_| ()), state)
                } else if now >= self.next_abandon {
                    // The leader dies: nobody extends this lease until it lapses.
                    self.next_abandon = now + self.abandon_every;
                    idle = true;
                    (Ok(()), AppState::Abandoned { unit, until: acked })
                } else {
                    match self.store.extend(
                        &mut self.session,
                        lease,
                        unit_of(unit),
                        now,
                        now + lease_ms,
                    ) {
                        Ok(true) => {
                            self.window.extends += 1;
                            if let Some(log) = self.ack_log.as_mut() {
                                use std::io::Write;
                                let line =
                                    format!("{lease} {} {}\n", unit_of(unit), now + lease_ms);
                                if log.write_all(line.as_bytes()).is_err() {
                                    return Outcome::failed(0);
                                }
                            }
                            (
                                Ok(()),
                                AppState::Held {
                                    unit,
                                    acked: now + lease_ms,
                                },
                            )
                        }
                        Ok(false) => {
                            self.window.lost += 1;
                            (Ok(()), AppState::Lost { unit })
                        }
                        Err(e) => (Err(e), state),
                    }
                }
            }
            AppState::Abandoned { unit, until } if now > until => {
                self.claim(app, (unit + 1) % units, now, state)
            }
            AppState::Abandoned { .. } => {
                idle = true;
                (Ok(()), state)
            }
            AppState::Lost { unit } => self.claim(app, unit, now, state),
        };
        self.apps[slot].1 = next;
        match result {
            Ok(()) if idle => Outcome::IDLE,
            Ok(()) => Outcome::OK,
            Err(_) => Outcome::failed(0),
        }
    }

    fn claim(
        &mut self,
        app: usize,
        unit: usize,
        now: i64,
        state: AppState,
    ) -> (Result<(), String>, AppState) {
        let expiry = now + self.shape.lease_ms;
        let names = &self.names;
        match self.store.claim(
            &mut self.session,
            &names.leases[app],
            &names.units[app][unit],
            now,
            expiry,
        ) {
            Ok(true) => {
                self.window.claims += 1;
                (
                    Ok(()),
                    AppState::Held {
                        unit,
                        acked: expiry,
                    },
                )
            }
            Ok(false) => (Ok(()), state),
            Err(e) => (Err(e), state),
        }
    }
}

impl<S: LeaseStore> Workload for LeaseWorkload<S> {
    type Worker = LeaseWorker<S>;

    // Measured: every store notes where it blocks (busy-handler sleeps, LMDB's writer
    // lock, the batched store's commit queue, the memory map's shard locks).
    fn waits_measured(&self) -> bool {
        true
    }

    fn locks(&self) -> Option<harness::locks::LockSet> {
        Some(self.store.locks())
    }

    fn worker(&self, index: usize, threads: usize) -> LeaseWorker<S> {
        let apps = (0..self.shape.applications)
            .filter(|a| a % threads == index)
            .map(|a| {
                (
                    a,
                    AppState::Held {
                        unit: 0,
                        acked: self.initial[a],
                    },
                )
            })
            .collect();
        let interval = if self.shape.rate > 0 {
            Duration::from_secs_f64(threads as f64 / self.shape.rate as f64)
        } else {
            Duration::ZERO
        };
        LeaseWorker {
            store: Arc::clone(&self.store),
            session: self.store.session().expect("opening a session"),
            shape: self.shape,
            clock: Arc::clone(&self.clock),
            index,
            apps,
            names: Arc::clone(&self.names),
            cursor: 0,
            rng: SmallRng::seed_from_u64(0x1ea5e + index as u64),
            ops: 0,
            next_abandon: 0,
            abandon_every: CHURN_MS / (self.shape.applications / threads).max(1) as i64,
            next_due: (self.shape.rate > 0).then(Instant::now),
            interval,
            last_sweep: Arc::clone(&self.last_sweep),
            wchar_at_open: Arc::clone(&self.wchar_at_open),
            non_holder_accepted: 0,
            window: Window::default(),
            ack_log: self.ack_log.as_ref().map(|p| {
                std::fs::OpenOptions::new()
                    .append(true)
                    .open(p)
                    .expect("the ack log opened when the workload was made")
            }),
        }
    }

    fn verify(&self, workers: &[LeaseWorker<S>]) -> Result<(), String> {
        self.check_workers(workers)
    }

    fn extra(
        &self,
        workers: &[LeaseWorker<S>],
        window: Duration,
    ) -> serde_json::Map<String, serde_json::Value> {
        self.window_figures(workers, window)
    }
}
