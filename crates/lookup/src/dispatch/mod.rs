//! How searches reach the search threads: the `dispatch` parameter.
//!
//! `direct` is the lookup hot path as it always was: each of the harness's `threads`
//! threads makes up its own searches ([`crate::workload`]). Every other dispatch runs the
//! search the way a directory server serves it (seed 002's `nsslapd-threadnumber`):
//! `connections` connection threads each keep `in_flight` requests outstanding and hand
//! them to exactly `threads` search threads ([`searchers`]: one locked queue, a rayon
//! pool, or the batched fix); a search thread runs the search and hands the result back
//! to its connection ([`connection`]), where it is checked and counted.
//!
//! A [`Server`] measures itself rather than going through [`harness::runner`], because
//! rayon owns its threads: the runner's shape (exactly `threads` threads of its own, each
//! calling `Worker::op`) cannot host them, and one measuring path for every dispatch keeps
//! the counting point the same for all: an operation counts when its result is back at
//! its connection, and latency runs from enqueue to that moment. The window, warm-up and
//! CPU time follow the runner's timeline.
//!
//! The time account: each search thread's time is split into time in the directory
//! (`OpCtx` waits inside it reported apart) and everything else, which is the hand-off
//! (waiting for work, taking it, handing the result back); connections report the time
//! they spend blocked (waiting for results or on a lock to enqueue).

mod connection;
mod searchers;
mod shared;

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use harness::{CellFailure, Measurement, RunSettings};
use serde_json::json;

use self::connection::{ConnReport, Connection};
use self::searchers::Searchers;
use self::shared::Core;
use crate::directory::Directory;
use crate::workload::LookupWorkload;

/// How searches reach the search threads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dispatch {
    /// Each search thread makes up its own searches (no hand-off at all).
    Direct,
    /// One shared queue under a std `Mutex` with a `Condvar`, one request at a time.
    Queue,
    /// Each request spawned onto a rayon pool (work-stealing deques).
    Rayon,
    /// The fix: requests and results travel in batches; only sleepers are woken.
    Batched,
}

impl Dispatch {
    /// Every dispatch's name, in the order reports list them.
    pub const NAMES: &'static [&'static str] = &["direct", "queue", "rayon", "batched"];

    /// Parses a dispatch's name, listing the accepted ones on error.
    pub fn parse(text: &str) -> Result<Dispatch, String> {
        Ok(match text {
            "direct" => Dispatch::Direct,
            "queue" => Dispatch::Queue,
            "rayon" => Dispatch::Rayon,
            "batched" => Dispatch::Batched,
            _ => {
                return Err(format!(
                    "dispatch={text:?}: expected one of {}",
                    Dispatch::NAMES.join(", ")
                ))
            }
        })
    }

    /// The name as a user writes it.
    pub fn name(self) -> &'static str {
        match self {
            Dispatch::Direct => "direct",
            Dispatch::Queue => "queue",
            Dispatch::Rayon => "rayon",
            Dispatch::Batched => "batched",
        }
    }
}

/// The shape of a dispatching server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DispatchConfig {
    /// How requests reach the search threads (not [`Dispatch::Direct`]).
    pub dispatch: Dispatch,
    /// Search threads.
    pub threads: usize,
    /// Connection threads.
    pub connections: usize,
    /// Requests each connection keeps outstanding.
    pub in_flight: usize,
    /// Most requests per hand-over in [`Dispatch::Batched`].
    pub batch: usize,
}

/// Grants the connections their requests: a count shared by all (one atomic operation
/// per refill, not per request).
struct Control {
    tickets: AtomicI64,
    state: Mutex<RoundState>,
    changed: Condvar,
}

struct RoundState {
    generation: u64,
    idle: usize,
    shutdown: bool,
}

impl Control {
    fn lock(&self) -> MutexGuard<'_, RoundState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Takes up to `want` tickets; how many it got.
    fn take(&self, want: usize) -> usize {
        if want == 0 {
            return 0;
        }
        let before = self.tickets.fetch_sub(want as i64, Ordering::Relaxed);
        before.clamp(0, want as i64) as usize
    }
}

/// Tickets of a timed run: more than any window can use.
const UNLIMITED: i64 = i64::MAX / 2;

/// A running dispatching server over directory `D`: connection threads and search threads
/// started, waiting for a round of requests.
pub struct Server<D: Directory> {
    core: Arc<Core<D>>,
    control: Arc<Control>,
    searchers: Option<Arc<Searchers>>,
    connections: Vec<JoinHandle<ConnReport>>,
    config: DispatchConfig,
}

/// What a stopped server reports.
struct Finished {
    reports: Vec<ConnReport>,
}

impl<D: Directory> Server<D> {
    /// Starts `config.connections` connection threads (named `connection-N`, each
    /// following the workload's plan for its index) and `config.threads` search threads.
    pub fn start(workload: &LookupWorkload<D>, config: DispatchConfig) -> Result<Self, String> {
        if config.threads == 0 || config.connections == 0 || config.in_flight == 0 {
            return Err("threads, connections and in_flight must be at least 1".into());
        }
        let core = Arc::new(Core::new(
            Arc::clone(workload.dir()),
            Arc::clone(workload.uids()),
            config.connections,
            config.threads,
        ));
        let searchers = Arc::new(match config.dispatch {
            Dispatch::Direct => {
                return Err("dispatch=direct has no server: the harness runs it".into())
            }
            Dispatch::Queue => Searchers::queue(&core, config.threads),
            Dispatch::Rayon => Searchers::rayon(config.threads)?,
            Dispatch::Batched => Searchers::batched(&core, config.threads, config.batch),
        });
        let control = Arc::new(Control {
            tickets: AtomicI64::new(0),
            // Every connection starts idle: a server stopped before its first round (a
            // benchmark criterion's filter skipped) has nothing to wait for. Counting
            // them busy made `finish` wait forever for a round that never started.
            state: Mutex::new(RoundState {
                generation: 0,
                idle: config.connections,
                shutdown: false,
            }),
            changed: Condvar::new(),
        });
        let mut server = Server {
            core,
            control,
            searchers: Some(Arc::clone(&searchers)),
            connections: Vec::with_capacity(config.connections),
            config,
        };
        for index in 0..config.connections {
            let connection = Connection::new(index, workload.plan(index), config.in_flight);
            let core = Arc::clone(&server.core);
            let control = Arc::clone(&server.control);
            let searchers = Arc::clone(&searchers);
            let handle = std::thread::Builder::new()
                .name(format!("connection-{index}"))
                .spawn(move || connection_main(connection, &core, &control, &searchers))
                .map_err(|e| format!("spawning connection thread {index}: {e}"))?;
            server.connections.push(handle);
        }
        Ok(server)
    }

    fn start_round(&self, tickets: i64) {
        let mut state = self.control.lock();
        self.control.tickets.store(tickets, Ordering::Relaxed);
        state.generation += 1;
        state.idle = 0;
        self.control.changed.notify_all();
    }

    /// Waits until every connection finished its round (or one of them died).
    fn wait_idle(&self) {
        let mut state = self.control.lock();
        while state.idle < self.connections.len() {
            if self.connections.iter().any(|h| h.is_finished()) {
                return;
            }
            state = self
                .control
                .changed
                .wait_timeout(state, Duration::from_millis(50))
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }

    /// Has the connections issue `requests` requests in all, waits until every one is
    /// answered, and returns the time it took (for criterion's `iter_custom`).
    pub fn round(&self, requests: u64) -> Duration {
        let start = Instant::now();
        self.start_round(requests.min(UNLIMITED as u64) as i64);
        self.wait_idle();
        start.elapsed()
    }

    /// Stops the server: no new requests, every outstanding one answered, every thread
    /// joined. Idempotent.
    fn finish(&mut self) -> Result<Finished, String> {
        self.control.tickets.store(0, Ordering::Relaxed);
        self.wait_idle();
        {
            let mut state = self.control.lock();
            state.shutdown = true;
            self.control.changed.notify_all();
        }
        let mut reports = Vec::with_capacity(self.connections.len());
        let mut failure = None;
        for (index, handle) in self.connections.drain(..).enumerate() {
            match handle.join() {
                Ok(report) => reports.push(report),
                Err(payload) => {
                    failure.get_or_insert(format!(
                        "connection thread {index} panicked: {}",
                        harness::runner::panic_message(payload.as_ref())
                    ));
                }
            }
        }
        if let Some(searchers) = self.searchers.take() {
            let searchers = Arc::try_unwrap(searchers)
                .map_err(|_| "the search threads are still shared".to_owned())?;
            if let Err(e) = searchers.join() {
                failure.get_or_insert(e);
            }
        }
        let recorded = self
            .core
            .failure
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        match recorded.or(failure) {
            Some(reason) => Err(reason),
            None => Ok(Finished { reports }),
        }
    }

    /// Runs a warm-up and a measured window of `settings`, stops the server and returns
    /// the window's figures, verified.
    pub fn measure(mut self, settings: RunSettings) -> Result<Measurement, CellFailure> {
        self.start_round(UNLIMITED);
        if !settings.warmup.is_zero() {
            std::thread::sleep(settings.warmup);
        }
        // As the runner does: a profiler samples exactly the window, clock read first.
        harness::probe::window_opened();
        let machine = harness::interference::Window::open();
        let cpu_start = harness::runner::process_cpu_time();
        let start = Instant::now();
        self.core.measuring.store(true, Ordering::Relaxed);
        std::thread::sleep(settings.duration);
        self.core.measuring.store(false, Ordering::Relaxed);
        let window = start.elapsed();
        let cpu_time = harness::runner::process_cpu_time().saturating_sub(cpu_start);
        let interference = machine.close();
        harness::probe::window_closed();
        let finished = self.finish().map_err(CellFailure::new)?;
        let mut figures = self.figures(finished, window, cpu_time);
        figures.interference = interference;
        Ok(figures)
    }

    fn figures(&self, finished: Finished, window: Duration, cpu_time: Duration) -> Measurement {
        let reports = &finished.reports;
        let sum = |f: &dyn Fn(&ConnReport) -> u64| reports.iter().map(f).sum::<u64>();
        let mut latency = harness::stats::new_histogram();
        for report in reports {
            harness::stats::merge_into(&mut latency, &report.latency);
        }
        let accounts = &self.core.accounts;
        let account_sum =
            |f: &dyn Fn(&shared::SearcherAccount) -> u64| accounts.iter().map(f).sum::<u64>();
        let load = |a: &std::sync::atomic::AtomicU64| a.load(Ordering::Relaxed);
        let queue_ns = account_sum(&|a| load(&a.queue_ns));
        let directory_ns = account_sum(&|a| load(&a.directory_wait_ns));
        let busy_ns = account_sum(&|a| load(&a.busy_ns));
        let thread_time = window * self.config.threads as u32;
        let share =
            |ns: u64, whole: Duration| harness::stats::share(Duration::from_nanos(ns), whole);
        let modified = sum(&|r| r.modified);

        let mut extra = self.core.dir.extra();
        extra.insert("dispatch".into(), json!(self.config.dispatch.name()));
        extra.insert("modifications".into(), json!(modified));
        extra.insert(
            "queue_wait_share".into(),
            json!(share(queue_ns, thread_time)),
        );
        extra.insert(
            "directory_wait_share".into(),
            json!(share(directory_ns, thread_time)),
        );
        extra.insert("search_share".into(), json!(share(busy_ns, thread_time)));
        extra.insert(
            "connection_wait_share".into(),
            json!(share(
                sum(&|r| r.window_wait_ns),
                window * self.config.connections as u32
            )),
        );
        extra.insert("requests_answered".into(), json!(sum(&|r| r.answered)));

        // The one place a dispatching server builds the harness's record of a repetition:
        // a field added to `Measurement` is filled here, as the runner fills it.
        Measurement {
            threads: self.config.threads,
            window,
            ops: sum(&|r| r.window_ops),
            retries: 0,
            errors: sum(&|r| r.window_errors),
            timeouts: 0,
            idle: 0,
            waits_measured: true,
            waited: Duration::from_nanos(queue_ns + directory_ns),
            latency,
            cpu_time,
            interference: None,
            verified: self.verify(reports, modified),
            extra,
            // Not collected in a dispatching server yet: its search threads outlive the
            // window and rayon's are not ours, so the table is empty and says why.
            locks: Some(harness::locks::LockMeasurement {
                set: harness::locks::LockSet::new().unnamed(
                    "a dispatching server's locks (the request queue, the mailboxes, and the \
                     directory's locks on its search threads) are not collected yet",
                ),
                tallies: Vec::new(),
            }),
            // The search threads keep a wall-clock split of their own (searching, waiting
            // for work, waiting on the directory) rather than the runner's per-thread
            // scheduler readings, so "on CPU" here is time spent searching and the
            // run-queue delay (inside all three) is not measured.
            time: harness::account::TimeAccount {
                total_ns: thread_time.as_nanos() as u64,
                on_cpu_ns: busy_ns,
                run_queue_ns: None,
                blocked_ns: queue_ns + directory_ns,
                waited_ns: queue_ns + directory_ns,
            },
            clock_read_ns: harness::sampler::clock_read_ns(),
            server_time_share: None,
        }
    }

    /// Every search returned its entry, every enqueued request was answered exactly once,
    /// and no acknowledged modification was lost.
    fn verify(&self, reports: &[ConnReport], modified: u64) -> Result<(), String> {
        let sum = |f: &dyn Fn(&ConnReport) -> u64| reports.iter().map(f).sum::<u64>();
        let wrong = sum(&|r| r.wrong);
        if wrong > 0 {
            return Err(format!(
                "{wrong} operations returned no entry or the wrong one"
            ));
        }
        let (enqueued, answered) = (sum(&|r| r.enqueued), sum(&|r| r.answered));
        let (duplicates, unanswered) = (sum(&|r| r.duplicates), sum(&|r| r.unanswered));
        if duplicates > 0 || unanswered > 0 || answered != enqueued {
            return Err(format!(
                "{enqueued} requests enqueued, {answered} answered: {duplicates} answered \
                 more than once or never asked, {unanswered} never answered"
            ));
        }
        let stored = self.core.dir.total_revisions();
        if stored != modified {
            return Err(format!(
                "{modified} modifications acknowledged but {stored} stored: {} lost",
                modified as i64 - stored as i64
            ));
        }
        Ok(())
    }
}

impl<D: Directory> Drop for Server<D> {
    fn drop(&mut self) {
        if !self.connections.is_empty() || self.searchers.is_some() {
            let _ = self.finish();
        }
    }
}

/// A connection thread's life: one round of requests each time the controller starts one,
/// until shutdown.
fn connection_main<D: Directory>(
    mut connection: Connection,
    core: &Core<D>,
    control: &Control,
    searchers: &Searchers,
) -> ConnReport {
    searchers.connect(core, |submit| {
        let mut generation = 0;
        loop {
            {
                let mut state = control.lock();
                while state.generation == generation && !state.shutdown {
                    state = control
                        .changed
                        .wait(state)
                        .unwrap_or_else(|e| e.into_inner());
                }
                if state.shutdown {
                    return;
                }
                generation = state.generation;
            }
            connection.run_round(core, &|want| control.take(want), submit);
            let mut state = control.lock();
            state.idle += 1;
            control.changed.notify_all();
        }
    });
    connection.into_report()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_dispatch_parses_and_a_bad_one_names_them_all() {
        for name in Dispatch::NAMES {
            assert_eq!(Dispatch::parse(name).unwrap().name(), *name);
        }
        let err = Dispatch::parse("fifo").unwrap_err();
        assert!(!err.contains('\n'), "{err}");
        for name in Dispatch::NAMES {
            assert!(err.contains(name), "{err}");
        }
    }

    #[test]
    fn tickets_are_granted_once() {
        let control = Control {
            tickets: AtomicI64::new(5),
            state: Mutex::new(RoundState {
                generation: 0,
                idle: 0,
                shutdown: false,
            }),
            changed: Condvar::new(),
        };
        assert_eq!(control.take(3), 3);
        assert_eq!(control.take(3), 2);
        assert_eq!(control.take(3), 0);
        assert_eq!(control.take(0), 0);
    }
}
