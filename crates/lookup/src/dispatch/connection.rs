//! A connection thread: the part of a directory server that reads requests off client
//! connections and waits for their results. It keeps up to `in_flight` requests
//! outstanding (the clients it multiplexes), hands new ones to the search threads through
//! whichever dispatch is chosen, and receives the results in its mailbox.
//!
//! It is also the referee: every request has a slot and an id, so an answer to a request
//! that was never asked, or a second answer to one, is caught here; every search result
//! is checked against the uid asked for. Operations and latency (enqueue to result) are
//! counted here, when the result is back, and only in the measured window.

use std::time::{Duration, Instant};

use hdrhistogram::Histogram;

use super::shared::{Answer, Core, Request, Response};
use crate::directory::Directory;
use crate::workload::{PlannedOp, PLAN_LEN};

/// How long a connection waits for a result before it looks at the abort flag again.
const POLL: Duration = Duration::from_millis(50);

/// A connection that got no result for this long while requests were outstanding gives
/// them up as never answered (a lost request must fail the cell, not hang it).
const STALL: Duration = Duration::from_secs(10);

/// Hands a connection's new requests to the search threads; adds the time it spent
/// blocked to the second argument. Requests are taken out of the vector.
pub(crate) type Submit<'a> = dyn FnMut(&mut Vec<Request>, &mut u64) + 'a;

/// What one connection saw over its whole life.
#[derive(Debug)]
pub(crate) struct ConnReport {
    /// Requests it enqueued.
    pub(crate) enqueued: u64,
    /// Answers it accepted (one per enqueued request when all is well).
    pub(crate) answered: u64,
    /// Answers to a request that was not outstanding: a duplicate or an invention.
    pub(crate) duplicates: u64,
    /// Requests still outstanding when it gave up waiting for them.
    pub(crate) unanswered: u64,
    /// Searches that returned no entry or another uid's, and modifications refused.
    pub(crate) wrong: u64,
    /// Modifications acknowledged.
    pub(crate) modified: u64,
    /// Good results back in the measured window.
    pub(crate) window_ops: u64,
    /// Wrong results back in the measured window.
    pub(crate) window_errors: u64,
    /// Time blocked in the measured window: waiting for results, or on a lock to enqueue.
    pub(crate) window_wait_ns: u64,
    /// Enqueue-to-result latency of the results back in the measured window (ns).
    pub(crate) latency: Histogram<u64>,
}

#[derive(Debug, Clone, Copy)]
struct Pending {
    id: u64,
    user: u32,
    modify: bool,
}

/// One connection's outstanding-request table and tallies.
pub(crate) struct Connection {
    index: u32,
    plan: Vec<PlannedOp>,
    next: usize,
    next_id: u64,
    slots: Vec<Option<Pending>>,
    free: Vec<u32>,
    report: ConnReport,
}

impl Connection {
    /// A connection keeping up to `in_flight` requests outstanding, following `plan`.
    pub(crate) fn new(index: usize, plan: Vec<PlannedOp>, in_flight: usize) -> Connection {
        assert_eq!(plan.len(), PLAN_LEN, "a plan has PLAN_LEN operations");
        Connection {
            index: index as u32,
            plan,
            next: 0,
            next_id: 0,
            slots: vec![None; in_flight],
            free: (0..in_flight as u32).rev().collect(),
            report: ConnReport {
                enqueued: 0,
                answered: 0,
                duplicates: 0,
                unanswered: 0,
                wrong: 0,
                modified: 0,
                window_ops: 0,
                window_errors: 0,
                window_wait_ns: 0,
                latency: harness::stats::new_histogram(),
            },
        }
    }

    /// Requests outstanding.
    pub(crate) fn outstanding(&self) -> usize {
        self.slots.len() - self.free.len()
    }

    /// Free slots.
    pub(crate) fn room(&self) -> usize {
        self.free.len()
    }

    /// Makes the next planned request (enqueue time not yet stamped).
    pub(crate) fn make_request(&mut self) -> Request {
        let slot = self.free.pop().expect("make_request needs a free slot");
        let op = self.plan[self.next];
        self.next = (self.next + 1) & (PLAN_LEN - 1);
        let id = self.next_id;
        self.next_id += 1;
        self.slots[slot as usize] = Some(Pending {
            id,
            user: op.user,
            modify: op.modify,
        });
        self.report.enqueued += 1;
        Request {
            conn: self.index,
            slot,
            id,
            user: op.user,
            modify: op.modify,
            enqueued_ns: 0,
        }
    }

    /// Accepts one response received at `now_ns`, checking it answers an outstanding
    /// request exactly once and with the right entry.
    pub(crate) fn receive(
        &mut self,
        response: Response,
        uids: &[String],
        now_ns: u64,
        measuring: bool,
    ) {
        let slot = self.slots.get_mut(response.slot as usize);
        let pending = match slot {
            Some(slot) if slot.is_some_and(|p| p.id == response.id) => {
                slot.take().expect("checked above")
            }
            _ => {
                self.report.duplicates += 1;
                return;
            }
        };
        self.free.push(response.slot);
        self.report.answered += 1;
        let ok = match (&response.answer, pending.modify) {
            (Answer::Found(found), false) => found
                .as_ref()
                .is_some_and(|e| e.uid == uids[pending.user as usize]),
            (Answer::Modified(applied), true) => {
                self.report.modified += u64::from(*applied);
                *applied
            }
            _ => false,
        };
        if !ok {
            self.report.wrong += 1;
        }
        if measuring {
            if ok {
                self.report.window_ops += 1;
            } else {
                self.report.window_errors += 1;
            }
            self.report
                .latency
                .saturating_record(now_ns.saturating_sub(response.enqueued_ns));
        }
    }

    /// Issues requests while `take_tickets` grants them and collects every answer; returns
    /// when no ticket is left and nothing is outstanding, or when the server aborts.
    pub(crate) fn run_round<D: Directory>(
        &mut self,
        core: &Core<D>,
        take_tickets: &dyn Fn(usize) -> usize,
        submit: &mut Submit<'_>,
    ) {
        let mailbox = &core.mailboxes[self.index as usize];
        let mut batch = Vec::with_capacity(self.slots.len());
        let mut received = Vec::with_capacity(self.slots.len());
        let mut last_progress = Instant::now();
        loop {
            if core.abort.load(std::sync::atomic::Ordering::Relaxed) {
                return;
            }
            let granted = take_tickets(self.room());
            if granted > 0 {
                for _ in 0..granted {
                    let request = self.make_request();
                    batch.push(request);
                }
                let mut waited = 0;
                submit(&mut batch, &mut waited);
                debug_assert!(batch.is_empty(), "submit takes every request");
                if core.measuring() {
                    self.report.window_wait_ns += waited;
                }
            }
            if self.outstanding() == 0 {
                return;
            }
            let mut waited = 0;
            let got = mailbox.take(&mut received, POLL, &mut waited);
            let measuring = core.measuring();
            if measuring {
                self.report.window_wait_ns += waited;
            }
            if !got {
                if last_progress.elapsed() > STALL {
                    self.report.unanswered += self.outstanding() as u64;
                    return;
                }
                continue;
            }
            last_progress = Instant::now();
            let now = core.now_ns();
            for response in received.drain(..) {
                self.receive(response, &core.uids, now, measuring);
            }
        }
    }

    /// The tallies, once the connection is done; requests still outstanding count as
    /// never answered.
    pub(crate) fn into_report(mut self) -> ConnReport {
        self.report.unanswered = self.outstanding() as u64;
        self.report
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::directory::DirectoryData;

    fn connection() -> (Connection, Vec<String>) {
        let data = DirectoryData::generate(4, 0);
        let uids: Vec<String> = data.users.iter().map(|u| u.uid.clone()).collect();
        let plan = (0..PLAN_LEN)
            .map(|i| PlannedOp {
                user: (i % 4) as u32,
                modify: false,
            })
            .collect();
        (Connection::new(0, plan, 3), uids)
    }

    /// A response to `request` carrying user `user`'s entry.
    fn answer(request: &Request, user: u32) -> Response {
        let data = DirectoryData::generate(4, 0);
        Response {
            slot: request.slot,
            id: request.id,
            enqueued_ns: 0,
            answer: Answer::Found(Some(data.users[user as usize].clone())),
        }
    }

    #[test]
    fn a_second_answer_to_one_request_is_a_duplicate() {
        let (mut c, uids) = connection();
        let a = c.make_request();
        let b = c.make_request();
        assert_eq!(c.outstanding(), 2);
        c.receive(answer(&a, a.user), &uids, 1, true);
        c.receive(answer(&a, a.user), &uids, 1, true);
        let report = c.into_report();
        assert_eq!(report.answered, 1);
        assert_eq!(report.duplicates, 1);
        assert_eq!(report.unanswered, 1, "b was never answered: {b:?}");
        assert_eq!(report.wrong, 0);
        assert_eq!(report.window_ops, 1);
    }

    #[test]
    fn a_reused_slot_refuses_the_old_request_id() {
        let (mut c, uids) = connection();
        let first = c.make_request();
        let stale = answer(&first, first.user);
        c.receive(answer(&first, first.user), &uids, 1, false);
        // The slot is free again; fill every slot so the first one is reused.
        let again: Vec<_> = (0..3).map(|_| c.make_request()).collect();
        assert!(again
            .iter()
            .any(|r| r.slot == first.slot && r.id != first.id));
        c.receive(stale, &uids, 1, false);
        assert_eq!(c.into_report().duplicates, 1);
    }

    #[test]
    fn somebody_elses_entry_is_a_wrong_answer() {
        let (mut c, uids) = connection();
        let a = c.make_request();
        c.receive(answer(&a, (a.user + 1) % 4), &uids, 5, true);
        let report = c.into_report();
        assert_eq!(report.wrong, 1);
        assert_eq!(report.window_errors, 1);
        assert_eq!(report.window_ops, 0);
    }
}
