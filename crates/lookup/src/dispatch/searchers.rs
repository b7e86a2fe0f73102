//! The search threads and how requests reach them, one design per dispatch:
//!
//! - `queue`: one shared FIFO under a `std::sync::Mutex` with a `Condvar`, the classic
//!   server work queue. A connection locks it and notifies once per request; a worker
//!   locks it per request, sleeps on the condition variable when it is empty, and hands
//!   each result back with one mailbox lock and one notify.
//! - `rayon`: each request is spawned onto a rayon pool (work-stealing deques fed from
//!   rayon's injector) instead of one locked queue; results go back as in `queue`.
//! - `batched` (the fix): requests travel in batches of up to `batch` on one shared queue,
//!   so one lock and at most one wake-up move a whole batch; nobody is woken who is not
//!   asleep; a worker hands back each connection's results of a batch in one go.
//!
//! Every design has exactly `threads` search threads, named `worker-N` so the profiler
//! keeps them. This module does not count operations or check answers: connections do.

use std::collections::VecDeque;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use harness::OpCtx;

use super::connection::Submit;
use super::shared::{bump, Core, Request, Response};
use crate::directory::Directory;

/// How long [`Searchers::join`] waits for rayon's threads to exit.
const RAYON_EXIT: Duration = Duration::from_secs(5);

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// Locks `mutex`, adding the time spent blocked (if it was contended) to `waited_ns`.
fn lock_timed<'a, T>(mutex: &'a Mutex<T>, waited_ns: &mut u64) -> MutexGuard<'a, T> {
    if let Ok(guard) = mutex.try_lock() {
        return guard;
    }
    let start = Instant::now();
    let guard = lock(mutex);
    *waited_ns += start.elapsed().as_nanos() as u64;
    guard
}

/// The classic work queue: single requests under one lock.
pub(crate) struct WorkQueue {
    state: Mutex<WorkState>,
    work: Condvar,
}

struct WorkState {
    requests: VecDeque<Request>,
    quit: bool,
}

/// The fix's queue: batches rather than requests, and a count of sleeping workers.
pub(crate) struct BatchQueue {
    state: Mutex<BatchState>,
    work: Condvar,
    batch: usize,
}

struct BatchState {
    batches: VecDeque<Vec<Request>>,
    sleepers: usize,
    quit: bool,
}

/// The search threads of one server, whatever the dispatch.
pub(crate) enum Searchers {
    /// `queue`.
    Queue {
        queue: Arc<WorkQueue>,
        threads: Vec<JoinHandle<()>>,
    },
    /// `rayon`.
    Rayon {
        pool: Arc<rayon::ThreadPool>,
        exited: Arc<(Mutex<usize>, Condvar)>,
        threads: usize,
        /// The pool's threads, spawned by us so that they can be joined: rayon's exit
        /// handler runs before a thread's thread-local destructors, and LMDB's (a reader
        /// slot released in the environment's lock file) must not run after the
        /// directory has closed the environment.
        handles: Arc<Mutex<Vec<JoinHandle<()>>>>,
    },
    /// `batched`.
    Batched {
        queue: Arc<BatchQueue>,
        threads: Vec<JoinHandle<()>>,
    },
}

/// Runs a search thread's loop (or a rayon job, `index` then naming its connection); a
/// panic marks the server failed, so connections stop at once instead of waiting for an
/// answer that will never come.
fn guarded<D: Directory>(core: &Core<D>, index: usize, body: impl FnOnce()) {
    if let Err(payload) = catch_unwind(AssertUnwindSafe(body)) {
        core.fail(format!(
            "search thread or job {index} panicked: {}",
            harness::runner::panic_message(payload.as_ref())
        ));
    }
}

fn spawn_named(index: usize, body: impl FnOnce() + Send + 'static) -> JoinHandle<()> {
    std::thread::Builder::new()
        .name(format!("worker-{index}"))
        .spawn(body)
        .expect("spawning a search thread")
}

impl Searchers {
    /// `threads` workers taking single requests from one locked queue.
    pub(crate) fn queue<D: Directory>(core: &Arc<Core<D>>, threads: usize) -> Searchers {
        let queue = Arc::new(WorkQueue {
            state: Mutex::new(WorkState {
                requests: VecDeque::new(),
                quit: false,
            }),
            work: Condvar::new(),
        });
        let handles = (0..threads)
            .map(|index| {
                let core = Arc::clone(core);
                let queue = Arc::clone(&queue);
                spawn_named(index, move || {
                    guarded(&core, index, || queue_worker(&core, &queue, index))
                })
            })
            .collect();
        Searchers::Queue {
            queue,
            threads: handles,
        }
    }

    /// A rayon pool of `threads` workers.
    pub(crate) fn rayon(threads: usize) -> Result<Searchers, String> {
        let exited = Arc::new((Mutex::new(0usize), Condvar::new()));
        let on_exit = Arc::clone(&exited);
        let handles: Arc<Mutex<Vec<JoinHandle<()>>>> = Arc::default();
        let spawned = Arc::clone(&handles);
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .spawn_handler(move |thread| {
                let handle = std::thread::Builder::new()
                    .name(format!("worker-{}", thread.index()))
                    .spawn(|| thread.run())?;
                lock(&spawned).push(handle);
                Ok(())
            })
            .exit_handler(move |_| {
                *lock(&on_exit.0) += 1;
                on_exit.1.notify_all();
            })
            .build()
            .map_err(|e| format!("building a rayon pool of {threads} threads: {e}"))?;
        Ok(Searchers::Rayon {
            pool: Arc::new(pool),
            exited,
            threads,
            handles,
        })
    }

    /// `threads` workers taking batches of up to `batch` requests from one queue.
    pub(crate) fn batched<D: Directory>(
        core: &Arc<Core<D>>,
        threads: usize,
        batch: usize,
    ) -> Searchers {
        let queue = Arc::new(BatchQueue {
            state: Mutex::new(BatchState {
                batches: VecDeque::new(),
                sleepers: 0,
                quit: false,
            }),
            work: Condvar::new(),
            batch: batch.max(1),
        });
        let handles = (0..threads)
            .map(|index| {
                let core = Arc::clone(core);
                let queue = Arc::clone(&queue);
                spawn_named(index, move || {
                    guarded(&core, index, || batched_worker(&core, &queue, index))
                })
            })
            .collect();
        Searchers::Batched {
            queue,
            threads: handles,
        }
    }

    /// Runs `body` (a connection's whole life) with the function that hands its requests
    /// to these search threads.
    pub(crate) fn connect<D: Directory, R>(
        &self,
        core: &Core<D>,
        body: impl FnOnce(&mut Submit<'_>) -> R,
    ) -> R {
        match self {
            Searchers::Queue { queue, .. } => body(&mut |requests, waited| {
                for mut request in requests.drain(..) {
                    request.enqueued_ns = core.now_ns();
                    lock_timed(&queue.state, waited).requests.push_back(request);
                    queue.work.notify_one();
                }
            }),
            Searchers::Rayon { pool, .. } => pool.in_place_scope(|scope| {
                body(&mut |requests, _waited| {
                    for mut request in requests.drain(..) {
                        request.enqueued_ns = core.now_ns();
                        scope.spawn(move |_| {
                            let conn = request.conn;
                            guarded(core, conn as usize, || rayon_job(core, request))
                        });
                    }
                })
            }),
            Searchers::Batched { queue, .. } => body(&mut |requests, waited| {
                let now = core.now_ns();
                let mut batches = Vec::with_capacity(requests.len().div_ceil(queue.batch));
                while !requests.is_empty() {
                    let take = requests.len().min(queue.batch);
                    let mut batch: Vec<Request> = requests.drain(..take).collect();
                    for request in &mut batch {
                        request.enqueued_ns = now;
                    }
                    batches.push(batch);
                }
                let count = batches.len();
                let sleepers = {
                    let mut state = lock_timed(&queue.state, waited);
                    state.batches.extend(batches);
                    state.sleepers
                };
                for _ in 0..count.min(sleepers) {
                    queue.work.notify_one();
                }
            }),
        }
    }

    /// Stops the search threads (nothing may be outstanding) and waits for them to exit.
    pub(crate) fn join(self) -> Result<(), String> {
        match self {
            Searchers::Queue { queue, threads } => {
                lock(&queue.state).quit = true;
                queue.work.notify_all();
                join_all(threads)
            }
            Searchers::Batched { queue, threads } => {
                lock(&queue.state).quit = true;
                queue.work.notify_all();
                join_all(threads)
            }
            Searchers::Rayon {
                pool,
                exited,
                threads,
                handles,
            } => {
                // Dropping the last handle terminates the pool; its threads exit on their own.
                drop(pool);
                let (count, cv) = &*exited;
                let (count, timeout) = cv
                    .wait_timeout_while(lock(count), RAYON_EXIT, |n| *n < threads)
                    .unwrap_or_else(|e| e.into_inner());
                if timeout.timed_out() {
                    return Err(format!("only {} of {threads} rayon threads exited", *count));
                }
                drop(count);
                // Every thread has left rayon's loop; joining waits out its thread-local
                // destructors too.
                let handles = std::mem::take(&mut *lock(&handles));
                join_all(handles)
            }
        }
    }
}

fn join_all(threads: Vec<JoinHandle<()>>) -> Result<(), String> {
    for (index, handle) in threads.into_iter().enumerate() {
        handle
            .join()
            .map_err(|_| format!("search thread {index} could not be joined"))?;
    }
    Ok(())
}

fn queue_worker<D: Directory>(core: &Core<D>, queue: &WorkQueue, index: usize) {
    let mut ctx = OpCtx::default();
    let mut last_end = 0;
    loop {
        let request = {
            let mut state = lock(&queue.state);
            loop {
                if let Some(request) = state.requests.pop_front() {
                    break request;
                }
                if state.quit {
                    return;
                }
                state = queue.work.wait(state).unwrap_or_else(|e| e.into_inner());
            }
        };
        let response = core.serve_accounted(&request, index, &mut ctx, &mut last_end);
        core.mailboxes[request.conn as usize].deliver_one(response);
    }
}

fn rayon_job<D: Directory>(core: &Core<D>, request: Request) {
    let index = rayon::current_thread_index().expect("rayon jobs run on the pool");
    let account = &core.accounts[index];
    let mut last_end = account
        .last_end_ns
        .load(std::sync::atomic::Ordering::Relaxed);
    // The directory's waits are read before and after, so a fresh context per job is fine.
    let mut ctx = OpCtx::default();
    let response = core.serve_accounted(&request, index, &mut ctx, &mut last_end);
    account
        .last_end_ns
        .store(last_end, std::sync::atomic::Ordering::Relaxed);
    core.mailboxes[request.conn as usize].deliver_one(response);
}

fn batched_worker<D: Directory>(core: &Core<D>, queue: &BatchQueue, index: usize) {
    let mut ctx = OpCtx::default();
    let mut last_end = 0u64;
    let mut outgoing: Vec<Vec<Response>> = (0..core.mailboxes.len()).map(|_| Vec::new()).collect();
    loop {
        let batch = {
            let mut state = lock(&queue.state);
            loop {
                if let Some(batch) = state.batches.pop_front() {
                    break batch;
                }
                if state.quit {
                    return;
                }
                state.sleepers += 1;
                state = queue.work.wait(state).unwrap_or_else(|e| e.into_inner());
                state.sleepers -= 1;
            }
        };
        // One time account per batch: two clock reads, however many requests.
        let start = core.now_ns();
        let waited_before = ctx.waited();
        for request in &batch {
            let response = core.serve(request, index, &mut ctx);
            outgoing[request.conn as usize].push(response);
        }
        let end = core.now_ns();
        if core.measuring() {
            let account = &core.accounts[index];
            bump(&account.served, batch.len() as u64);
            bump(&account.busy_ns, end - start);
            bump(
                &account.directory_wait_ns,
                (ctx.waited() - waited_before).as_nanos() as u64,
            );
            if last_end != 0 {
                bump(&account.queue_ns, start.saturating_sub(last_end));
            }
        }
        last_end = end;
        for (conn, responses) in outgoing.iter_mut().enumerate() {
            if !responses.is_empty() {
                core.mailboxes[conn].deliver_all(responses);
            }
        }
    }
}
