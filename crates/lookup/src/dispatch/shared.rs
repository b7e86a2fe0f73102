//! What connection threads and search threads share: the request and response shapes,
//! the directory, the clock every latency is read from, each connection's mailbox (where
//! results are handed back) and each search thread's time account.
//!
//! This module does not decide how requests travel from a connection to a search thread;
//! [`super::searchers`] does.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use harness::OpCtx;

use crate::directory::{Directory, Entry};

/// One request a connection thread put on the way to the search threads.
#[derive(Debug)]
pub(crate) struct Request {
    /// The connection that waits for the answer.
    pub(crate) conn: u32,
    /// The connection's slot for this request (its outstanding-request table).
    pub(crate) slot: u32,
    /// Unique within the connection: a second answer to the same id is a duplicate.
    pub(crate) id: u64,
    /// Index of the user searched or modified.
    pub(crate) user: u32,
    /// Modify rather than search.
    pub(crate) modify: bool,
    /// When it was enqueued ([`Core::now_ns`]): latency runs from here to the result.
    pub(crate) enqueued_ns: u64,
}

/// What the directory answered.
#[derive(Debug)]
pub(crate) enum Answer {
    /// A search's result, copied out as a server copies it into a response.
    Found(Option<Entry>),
    /// Whether a modification was applied.
    Modified(bool),
}

/// A result on its way back to its connection.
#[derive(Debug)]
pub(crate) struct Response {
    /// The request's slot.
    pub(crate) slot: u32,
    /// The request's id.
    pub(crate) id: u64,
    /// The request's enqueue time, carried back so the connection needs no lookup.
    pub(crate) enqueued_ns: u64,
    /// The answer.
    pub(crate) answer: Answer,
}

/// Adds to a counter only its owning thread writes: a plain load and store, no locked
/// instruction, but readable by the controller at any time.
#[inline]
pub(crate) fn bump(counter: &AtomicU64, by: u64) {
    counter.store(counter.load(Ordering::Relaxed) + by, Ordering::Relaxed);
}

/// One search thread's time account over the measured window, alone on its cache lines.
#[repr(align(128))]
#[derive(Default)]
pub(crate) struct SearcherAccount {
    /// Requests it served.
    pub(crate) served: AtomicU64,
    /// Time inside the directory (searching or modifying), directory waits included.
    pub(crate) busy_ns: AtomicU64,
    /// Time blocked in the directory, as the directory reported it through `OpCtx`.
    pub(crate) directory_wait_ns: AtomicU64,
    /// Time outside the directory: waiting for work, taking it and handing results back.
    pub(crate) queue_ns: AtomicU64,
    /// End of its last search (rayon jobs keep no thread-local state of their own).
    pub(crate) last_end_ns: AtomicU64,
}

/// Where a connection thread receives its results. Padded so that two connections'
/// mailboxes never share a cache line.
#[repr(align(128))]
pub(crate) struct Mailbox {
    inner: Mutex<MailboxInner>,
    ready: Condvar,
}

struct MailboxInner {
    responses: Vec<Response>,
    /// The connection is asleep on `ready`: only then does a batched hand-back notify.
    waiting: bool,
}

impl Mailbox {
    fn new() -> Mailbox {
        Mailbox {
            inner: Mutex::new(MailboxInner {
                responses: Vec::new(),
                waiting: false,
            }),
            ready: Condvar::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, MailboxInner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The classic hand-back: one lock and one notify per result.
    pub(crate) fn deliver_one(&self, response: Response) {
        self.lock().responses.push(response);
        self.ready.notify_one();
    }

    /// The batched hand-back: every result in `responses` under one lock, and a wake-up
    /// only if the connection is asleep.
    pub(crate) fn deliver_all(&self, responses: &mut Vec<Response>) {
        let wake = {
            let mut inner = self.lock();
            inner.responses.append(responses);
            inner.waiting
        };
        if wake {
            self.ready.notify_one();
        }
    }

    /// Moves every result waiting into `into` (which must be empty), sleeping up to
    /// `timeout` for the first; adds the time spent blocked to `waited_ns`. False if none
    /// came.
    pub(crate) fn take(
        &self,
        into: &mut Vec<Response>,
        timeout: Duration,
        waited_ns: &mut u64,
    ) -> bool {
        let mut inner = match self.inner.try_lock() {
            Ok(inner) => inner,
            Err(_) => {
                let start = Instant::now();
                let inner = self.lock();
                *waited_ns += start.elapsed().as_nanos() as u64;
                inner
            }
        };
        if inner.responses.is_empty() {
            let start = Instant::now();
            inner.waiting = true;
            let (mut woken, _) = self
                .ready
                .wait_timeout_while(inner, timeout, |i| i.responses.is_empty())
                .unwrap_or_else(|e| e.into_inner());
            woken.waiting = false;
            *waited_ns += start.elapsed().as_nanos() as u64;
            inner = woken;
        }
        if inner.responses.is_empty() {
            return false;
        }
        std::mem::swap(&mut inner.responses, into);
        true
    }
}

/// The state every thread of one dispatching server shares.
pub(crate) struct Core<D: Directory> {
    /// The directory searched.
    pub(crate) dir: Arc<D>,
    /// uid of each user index.
    pub(crate) uids: Arc<[String]>,
    /// Origin of [`Core::now_ns`].
    base: Instant,
    /// Set by the controller for the measured window: figures count only while it is set.
    pub(crate) measuring: AtomicBool,
    /// Something failed (a search thread panicked): connections give up at once.
    pub(crate) abort: AtomicBool,
    /// Why the run was aborted.
    pub(crate) failure: Mutex<Option<String>>,
    /// One per connection thread.
    pub(crate) mailboxes: Box<[Mailbox]>,
    /// One per search thread.
    pub(crate) accounts: Box<[SearcherAccount]>,
}

impl<D: Directory> Core<D> {
    /// Shared state for `connections` connection threads and `threads` search threads.
    pub(crate) fn new(
        dir: Arc<D>,
        uids: Arc<[String]>,
        connections: usize,
        threads: usize,
    ) -> Core<D> {
        Core {
            dir,
            uids,
            base: Instant::now(),
            measuring: AtomicBool::new(false),
            abort: AtomicBool::new(false),
            failure: Mutex::new(None),
            mailboxes: (0..connections).map(|_| Mailbox::new()).collect(),
            accounts: (0..threads).map(|_| SearcherAccount::default()).collect(),
        }
    }

    /// Nanoseconds since the server started; 0 is never returned, so it can mean "unset".
    #[inline]
    pub(crate) fn now_ns(&self) -> u64 {
        self.base.elapsed().as_nanos() as u64 + 1
    }

    /// Whether the measured window is open.
    #[inline]
    pub(crate) fn measuring(&self) -> bool {
        self.measuring.load(Ordering::Relaxed)
    }

    /// Records why the run failed and tells every connection to stop.
    pub(crate) fn fail(&self, reason: String) {
        let mut failure = self.failure.lock().unwrap_or_else(|e| e.into_inner());
        failure.get_or_insert(reason);
        self.abort.store(true, Ordering::Relaxed);
    }

    /// Runs one request against the directory on search thread `thread`.
    #[inline]
    pub(crate) fn serve(&self, request: &Request, thread: usize, ctx: &mut OpCtx) -> Response {
        let uid = &self.uids[request.user as usize];
        let answer = if request.modify {
            Answer::Modified(self.dir.modify(uid, ctx))
        } else {
            Answer::Found(self.dir.search(uid, thread, ctx))
        };
        Response {
            slot: request.slot,
            id: request.id,
            enqueued_ns: request.enqueued_ns,
            answer,
        }
    }

    /// Serves one request with its time account (two clock reads): the time since the
    /// thread's previous search ended is hand-off time, the search itself is busy time.
    #[inline]
    pub(crate) fn serve_accounted(
        &self,
        request: &Request,
        thread: usize,
        ctx: &mut OpCtx,
        last_end_ns: &mut u64,
    ) -> Response {
        let start = self.now_ns();
        let waited_before = ctx.waited();
        let response = self.serve(request, thread, ctx);
        let end = self.now_ns();
        if self.measuring() {
            let account = &self.accounts[thread];
            bump(&account.served, 1);
            bump(&account.busy_ns, end - start);
            bump(
                &account.directory_wait_ns,
                (ctx.waited() - waited_before).as_nanos() as u64,
            );
            if *last_end_ns != 0 {
                bump(&account.queue_ns, start.saturating_sub(*last_end_ns));
            }
        }
        *last_end_ns = end;
        response
    }
}
