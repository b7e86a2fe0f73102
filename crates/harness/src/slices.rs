//! Resident sides alternating in short slices: the conductor of a block of pairs whose
//! sides are kept alive together in one process, each side's thread team parked while
//! another's runs.
//!
//! Why: a pair of whole windows (100 ms to 1 s a side, each after its own start and
//! warm-up) carries the host's slow phases into its ratio (the sd of a pair's log ratio
//! was 0.08-0.36 here), while sides that alternate every few tens of milliseconds see the
//! same phases and cancel them (the probe behind issue 49: 0.035 against 0.156 for one
//! map against itself). Each side is built once (its data loaded, its workers made, its
//! threads started), so a pair no longer pays a build, a warm-up or a canary.
//!
//! How: `lab pairs` runs each side's ordinary `measure` on a thread of its own inside
//! [`Conductor::side`]; the runner ([`crate::runner::run`]) finds the conductor there,
//! starts its team parked, and then runs the turns the conductor hands it: one warm-up
//! turn per side, then for each pair `slices` turns per side, the sides' order reversed
//! every other round (a b, b a, ...) so that neither side always follows the other.
//! Between turns a team is parked between operations, so only one side runs at a time.
//!
//! A turn counts operations *completed* in its counted span (each worker keeps a running
//! count in a cache line of its own, read by the controller at both ends), after a
//! re-warm: a team resumed from parked meets empty queues, and a closed loop runs fast
//! until its queues fill again, about one response time (threads / throughput) later.
//! So the turns' length follows the slowest side's response time, read in the warm-ups:
//! the counted span is at least [`SLICE`] and [`RESPONSE_TIMES`] response times, the
//! re-warm a quarter of it and at least three response times, and a pair gives each side
//! as many turns as its window holds (one, for a slow real node: then it is a resident
//! whole window). A side whose `measure` returns without reaching the runner (an error,
//! a hot path that runs its work elsewhere) ends the block for all: [`Conductor::result`]
//! then says why.
//!
//! Not here: choosing which comparisons interleave, or turning the log into records
//! (`lab`). A side's whole [`crate::Measurement`] (its verification, latency, extras)
//! still comes from its one runner call; its time account spans the parked turns too, so
//! only the pairs' figures ([`Conductor::result`]) are per slice.

use std::cell::RefCell;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Duration;

/// The shortest counted span of a turn: short against the host's slow phases (a probe
/// here: 5 ms turns took the sd of a pair's log ratio from 0.156 to 0.035), long against
/// a switch (parking and waking a team, tens of microseconds).
pub const SLICE: Duration = Duration::from_millis(10);

/// How many response times a turn's counted span lasts at least: what a turn's first
/// response times carry of the re-warm's transient is then a few percent at most.
pub const RESPONSE_TIMES: u32 = 20;

/// What a block of interleaved pairs is asked to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Schedule {
    /// Sides resident at once (a comparison's cells).
    pub sides: usize,
    /// Pairs to measure.
    pub pairs: usize,
    /// Each side's counted time in one pair (its cell's window).
    pub window: Duration,
    /// Each side's one warm-up turn before the first pair.
    pub warmup: Duration,
    /// The index of the block's first pair in its comparison's whole sequence: the
    /// sides' order alternates over the sequence, not afresh in every block.
    pub first: usize,
}

/// How the pairs' turns are cut, once the warm-ups have read the sides' response times.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cut {
    /// Turns per side in one pair.
    pub slices: usize,
    /// Each turn's uncounted re-warm.
    pub rewarm: Duration,
    /// Each turn's counted span.
    pub counted: Duration,
}

impl Schedule {
    /// The sides in the order they take round `round` of pair `pair` (the block's own
    /// numbering) when a pair has `slices` rounds: forwards on even rounds of the whole
    /// sequence, backwards on odd ones.
    pub fn order(&self, pair: usize, round: usize, slices: usize) -> Vec<usize> {
        let mut order: Vec<usize> = (0..self.sides).collect();
        if ((self.first + pair) * slices + round) % 2 == 1 {
            order.reverse();
        }
        order
    }

    /// The cut for a slowest response time of `response` (`None`: a side did nothing in
    /// its warm-up): as many turns as the window holds of the longer of [`SLICE`] and
    /// [`RESPONSE_TIMES`] response times, an even number so that each side leads as
    /// often, or one turn of the whole window.
    pub fn cut(&self, response: Option<Duration>) -> Cut {
        let least = response.map_or(self.window, |r| (r * RESPONSE_TIMES).max(SLICE));
        let n = (self.window.as_secs_f64() / least.as_secs_f64()).floor() as usize;
        let slices = if n >= 2 { n / 2 * 2 } else { 1 };
        let counted = self.window / slices as u32;
        let rewarm = (counted / 4).max(response.map_or(counted, |r| r * 3));
        Cut {
            slices,
            rewarm,
            counted,
        }
    }

    /// Every measured turn in the order it is taken, cut as `cut` says.
    fn turns(&self, cut: Cut) -> Vec<Turn> {
        let mut turns = Vec::new();
        for pair in 0..self.pairs {
            for round in 0..cut.slices {
                for side in self.order(pair, round, cut.slices) {
                    turns.push(Turn::Measure { side, pair });
                }
            }
        }
        turns
    }
}

/// One turn of the schedule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Turn {
    /// A side runs uncounted.
    Warmup { side: usize },
    /// A side runs one counted slice of pair `pair`.
    Measure { side: usize, pair: usize },
}

/// What a side's runner is told to do next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// Run the team uncounted for this long, reading its throughput over the second
    /// half, then park it.
    Warmup(Duration),
    /// Run the team uncounted for `rewarm`, then counted for `counted`, then park it and
    /// report what it did.
    Measure {
        /// The uncounted re-warm.
        rewarm: Duration,
        /// The counted span.
        counted: Duration,
    },
    /// The schedule is over (or ended early): stop the team.
    Stop,
}

/// What one side did in one counted span (or in the second half of its warm-up).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Counts {
    /// Operations that succeeded and completed inside the span.
    pub ops: u64,
    /// The span's length.
    pub window: Duration,
    /// The side's worker threads.
    pub threads: usize,
}

impl Counts {
    fn add(&mut self, other: &Counts) {
        self.ops += other.ops;
        self.window += other.window;
        self.threads = other.threads;
    }

    /// Its response time by Little's law (threads / throughput); `None` without an
    /// operation.
    fn response(&self) -> Option<Duration> {
        (self.ops > 0).then(|| self.window * self.threads as u32 / self.ops as u32)
    }
}

struct State {
    /// Sides whose teams are started and parked.
    joined: usize,
    /// Sides whose `measure` returned.
    left: usize,
    /// The turns: the warm-ups, then, once they are done, the pairs' turns.
    turns: Vec<Turn>,
    /// The next turn to hand out.
    next: usize,
    /// Whether the turn `next - 1` is still being run.
    running: bool,
    /// Why the block ended early, if it did.
    ended: Option<String>,
    /// The slowest response time the warm-ups read so far (`None` inside: a side that
    /// did nothing).
    response: Option<Option<Duration>>,
    /// How the pairs' turns are cut, once the warm-ups are done.
    cut: Option<Cut>,
    /// Per pair, per side: the counts of its turns.
    log: Vec<Vec<Counts>>,
}

/// The conductor of one block of interleaved pairs, shared by its sides' runner threads.
pub struct Conductor {
    schedule: Schedule,
    state: Mutex<State>,
    changed: Condvar,
}

thread_local! {
    /// The conductor and side index of the `measure` running on this thread, if any.
    static SIDE: RefCell<Option<(Arc<Conductor>, usize)>> = const { RefCell::new(None) };
}

/// The conductor of the `measure` running on this thread, taken (a second runner call in
/// the same `measure` runs whole), with the side's index; `None` outside a block.
pub(crate) fn take_side() -> Option<(Arc<Conductor>, usize)> {
    SIDE.with(|s| s.borrow_mut().take())
}

impl Conductor {
    /// A conductor for `schedule`.
    pub fn new(schedule: Schedule) -> Arc<Conductor> {
        Arc::new(Conductor {
            schedule,
            state: Mutex::new(State {
                joined: 0,
                left: 0,
                turns: (0..schedule.sides)
                    .map(|side| Turn::Warmup { side })
                    .collect(),
                next: 0,
                running: false,
                ended: None,
                response: Some(Some(Duration::ZERO)),
                cut: None,
                log: vec![vec![Counts::default(); schedule.sides]; schedule.pairs],
            }),
            changed: Condvar::new(),
        })
    }

    /// How the pairs' turns were cut; `None` before the warm-ups are done.
    pub fn cut(&self) -> Option<Cut> {
        self.lock().cut
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Runs `measure` (a hot path's ordinary measure of one cell) as side `side`: the
    /// runner it calls joins the block. Returns what `measure` returned; when it returns
    /// without having joined, or early, the block ends for every side.
    pub fn side<R>(self: &Arc<Conductor>, side: usize, measure: impl FnOnce() -> R) -> R {
        struct Leave<'a>(&'a Conductor, usize);
        impl Drop for Leave<'_> {
            fn drop(&mut self) {
                SIDE.with(|s| s.borrow_mut().take());
                self.0.leave(self.1);
            }
        }
        SIDE.with(|s| *s.borrow_mut() = Some((Arc::clone(self), side)));
        let _leave = Leave(self, side);
        measure()
    }

    fn leave(&self, side: usize) {
        let mut s = self.lock();
        s.left += 1;
        let unfinished = s.cut.is_none() || s.next < s.turns.len() || s.running;
        if unfinished && s.ended.is_none() {
            s.ended = Some(format!(
                "side {} ended before the block's {} pairs were measured (its measure \
                 failed, or it does not run in this process's runner)",
                side + 1,
                self.schedule.pairs
            ));
        }
        self.changed.notify_all();
    }

    /// Waits until `n` sides have joined or left: `lab` builds the sides one at a time,
    /// each team parked before the next is built, so that no build runs beside a team.
    pub fn wait_started(&self, n: usize) {
        let mut s = self.lock();
        while s.joined + s.left < n && s.ended.is_none() {
            s = self.changed.wait(s).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// Called by a side's runner once its team is started and parked; waits until every
    /// side has (or the block ended).
    pub(crate) fn join(&self) {
        let mut s = self.lock();
        s.joined += 1;
        self.changed.notify_all();
        while s.joined < self.schedule.sides && s.ended.is_none() {
            s = self.changed.wait(s).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// Takes what side `side`'s turn just run gave (`finished`), then waits for its
    /// next turn and says what to do.
    pub(crate) fn next(&self, side: usize, finished: Option<Counts>) -> Next {
        let mut s = self.lock();
        let mine = |t: Option<Turn>| match t {
            Some(Turn::Warmup { side: t } | Turn::Measure { side: t, .. }) => t == side,
            None => false,
        };
        // Only the side whose turn is running can finish it: another side's first call
        // comes while it runs.
        if s.running && mine(s.next.checked_sub(1).map(|i| s.turns[i])) {
            let turn = s.next.checked_sub(1).map(|i| s.turns[i]);
            match (turn, finished) {
                (Some(Turn::Measure { pair, .. }), Some(counts)) => {
                    s.log[pair][side].add(&counts);
                }
                (Some(Turn::Warmup { .. }), counts) => {
                    let r = counts.and_then(|c| c.response());
                    s.response = match (s.response, r) {
                        (Some(Some(a)), Some(b)) => Some(Some(a.max(b))),
                        _ => Some(None),
                    };
                }
                _ => {}
            }
            s.running = false;
            if s.cut.is_none() && s.next == self.schedule.sides {
                let cut = self.schedule.cut(s.response.flatten());
                let turns = self.schedule.turns(cut);
                s.turns.extend(turns);
                s.cut = Some(cut);
            }
            self.changed.notify_all();
        }
        loop {
            if s.ended.is_some() {
                return Next::Stop;
            }
            let turn = s.turns.get(s.next).copied();
            match turn {
                // Stop once the last turn has ended, not while it runs: a side that
                // left then would end the block under it.
                None if s.cut.is_some() && !s.running => return Next::Stop,
                Some(Turn::Warmup { side: t }) if t == side && !s.running => {
                    s.next += 1;
                    s.running = true;
                    return Next::Warmup(self.schedule.warmup);
                }
                Some(Turn::Measure { side: t, .. }) if t == side && !s.running => {
                    s.next += 1;
                    s.running = true;
                    let cut = s.cut.unwrap_or(Cut {
                        slices: 1,
                        rewarm: Duration::ZERO,
                        counted: self.schedule.window,
                    });
                    return Next::Measure {
                        rewarm: cut.rewarm,
                        counted: cut.counted,
                    };
                }
                _ => s = self.changed.wait(s).unwrap_or_else(|e| e.into_inner()),
            }
        }
    }

    /// Each pair's counts per side and how the turns were cut, once every side has
    /// left: `Err` says why the block ended early.
    pub fn result(&self) -> Result<(Vec<Vec<Counts>>, Cut), String> {
        let s = self.lock();
        match (&s.ended, s.cut) {
            (Some(why), _) => Err(why.clone()),
            (None, Some(cut)) if s.next >= s.turns.len() => Ok((s.log.clone(), cut)),
            _ => Err("the block did not finish".to_owned()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schedule(pairs: usize, window_ms: u64, first: usize) -> Schedule {
        Schedule {
            sides: 2,
            pairs,
            window: Duration::from_millis(window_ms),
            warmup: Duration::from_millis(1),
            first,
        }
    }

    #[test]
    fn the_order_alternates_over_rounds_and_across_blocks() {
        let s = schedule(2, 20, 0);
        let cut = s.cut(Some(Duration::from_micros(1)));
        assert_eq!(cut.slices, 2);
        let sides: Vec<usize> = s
            .turns(cut)
            .iter()
            .map(|t| match t {
                Turn::Measure { side, .. } | Turn::Warmup { side } => *side,
            })
            .collect();
        assert_eq!(sides, [0, 1, 1, 0, 0, 1, 1, 0]);
        // A block starting at an odd pair with an odd number of rounds begins reversed.
        let s = schedule(1, 20, 1);
        assert_eq!(s.order(0, 0, 3), [1, 0]);
        assert_eq!(s.order(0, 1, 3), [0, 1]);
    }

    #[test]
    fn turns_follow_the_slowest_response_time() {
        let s = schedule(1, 200, 0);
        // Microsecond operations: turns of the shortest slice, an even number.
        let fast = s.cut(Some(Duration::from_micros(3)));
        assert_eq!(fast.slices, 20);
        assert_eq!(fast.counted, SLICE);
        // 2 ms responses: 40 ms spans, five fit, four are kept (even).
        let slow = s.cut(Some(Duration::from_millis(2)));
        assert_eq!((slow.slices, slow.counted), (4, Duration::from_millis(50)));
        assert!(slow.rewarm >= Duration::from_millis(6));
        // A 12 ms response (a real node at 48 threads): one resident whole window.
        let node = s.cut(Some(Duration::from_millis(12)));
        assert_eq!((node.slices, node.counted), (1, s.window));
        // A side that did nothing in its warm-up: whole windows too.
        assert_eq!(s.cut(None).slices, 1);
    }

    #[test]
    fn only_the_side_whose_turn_runs_can_end_it() {
        let c = Conductor::new(schedule(1, 20, 0));
        assert_eq!(c.next(0, None), Next::Warmup(Duration::from_millis(1)));
        // Side 1 arrives while side 0 warms up: it waits, and side 0's turn goes on.
        let other = Arc::clone(&c);
        let second = std::thread::spawn(move || other.next(1, None));
        std::thread::sleep(Duration::from_millis(20));
        assert!(!second.is_finished(), "side 1 ran during side 0's turn");
        let counts = Counts {
            ops: 1000,
            window: Duration::from_millis(1),
            threads: 1,
        };
        let next = std::thread::spawn({
            let c = Arc::clone(&c);
            move || c.next(0, Some(counts))
        });
        assert_eq!(
            second.join().unwrap(),
            Next::Warmup(Duration::from_millis(1))
        );
        // Side 1's warm-up done, side 0 measures first (round 0 runs forwards), cut into
        // two turns of 10 ms after a quarter's re-warm (a 1 us response time; a 20 ms
        // window).
        let first = std::thread::spawn({
            let c = Arc::clone(&c);
            move || c.next(1, Some(counts))
        });
        assert_eq!(
            next.join().unwrap(),
            Next::Measure {
                rewarm: Duration::from_micros(2500),
                counted: Duration::from_millis(10),
            }
        );
        assert_eq!(c.cut().unwrap().slices, 2);
        // A side leaving ends the block for the one still waiting.
        c.leave(0);
        assert_eq!(first.join().unwrap(), Next::Stop);
    }

    #[test]
    fn three_sides_take_every_turn_and_stop_after_the_last() {
        let c = Conductor::new(Schedule {
            sides: 3,
            ..schedule(2, 20, 0)
        });
        let counts = Counts {
            ops: 1000,
            window: Duration::from_millis(1),
            threads: 1,
        };
        let turns: Vec<_> = (0..3)
            .map(|side| {
                let c = Arc::clone(&c);
                std::thread::spawn(move || {
                    let mut taken = 0;
                    let mut finished = None;
                    loop {
                        match c.next(side, finished.take()) {
                            Next::Stop => return taken,
                            Next::Warmup(_) => finished = Some(counts),
                            Next::Measure { .. } => {
                                taken += 1;
                                finished = Some(counts);
                            }
                        }
                    }
                })
            })
            .collect();
        let taken: Vec<usize> = turns.into_iter().map(|t| t.join().unwrap()).collect();
        // Two pairs of two turns a side, every count logged.
        assert_eq!(taken, [4, 4, 4]);
        let (log, cut) = c.result().unwrap();
        assert_eq!(cut.slices, 2);
        assert!(log.iter().flatten().all(|n| n.ops == 2000));
    }

    #[test]
    fn a_side_that_never_joins_ends_the_block_for_all() {
        let c = Conductor::new(schedule(1, 20, 0));
        let other = Arc::clone(&c);
        let waiting = std::thread::spawn(move || {
            other.side(0, || {
                let (c, side) = take_side().unwrap();
                c.join();
                c.next(side, None)
            })
        });
        c.side(1, || ());
        assert_eq!(waiting.join().unwrap(), Next::Stop);
        assert!(c.result().unwrap_err().contains("side 2 ended"));
    }
}
