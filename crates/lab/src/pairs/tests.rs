//! Pairs measured over a real plan's cells with a stand-in for the child: the order
//! alternates, a clear effect stops at the first look, the budget and a failed side stop a
//! comparison with the reason, and an interruption stops all.

use std::cell::RefCell;
use std::time::{Duration, Instant};

use harness::testing::synthetic_cell;
use harness::Repetition;
use verdict::decide::{Claim, Comparison, Measured, Outcome, Rule, Side};

use super::*;
use crate::plan::{MatrixPlan, Settings};

/// A stand-in for the children: each repetition's record from a closure.
struct Fake<F: FnMut(usize, usize) -> Option<Repetition>>(F);

impl<F: FnMut(usize, usize) -> Option<Repetition>> Runner for Fake<F> {
    fn one(&mut self, cell: usize, pair: usize) -> Option<Repetition> {
        (self.0)(cell, pair)
    }
}

fn plan() -> MatrixPlan {
    let args: Vec<String> = [
        "scenarios=lookup",
        "variants=dashmap,global-mutex",
        "threads=1,2",
        "cores=1",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    MatrixPlan::build(&Settings::parse(&args).unwrap(), &root).unwrap()
}

/// The placebo of [`part`]'s mutex cell (global-mutex at 2 threads on 1 core), on `figure`.
fn placebo(figure: &str) -> Measured {
    let mutex = CellRef::new("lookup", "global-mutex", 2, 1);
    Measured::new(Claim::placebo(mutex, figure))
}

/// Pairs for every part, no deadline, nothing saved.
fn all(parts: &mut [Measured], cells: &[CellSpec<'_>], run: &mut dyn Runner) -> bool {
    measure(parts, cells, None, Reach::All, run, &mut |_| {})
}

/// dashmap against global-mutex at 2 threads on 1 core: shown above 1.05.
fn part() -> Measured {
    part_at("faster", 2)
}

/// Part `name`: dashmap against global-mutex at `threads` threads on 1 core.
fn part_at(name: &str, threads: usize) -> Measured {
    let side = |v: &str| Side::cell(CellRef::new("lookup", v, threads, 1));
    Measured::new(Claim::decided_by(
        name,
        "dashmap beats the mutex",
        Comparison::throughput(
            side("dashmap"),
            side("global-mutex"),
            Rule::Above {
                shown: 1.05,
                contradicted: 1.0,
            },
        ),
    ))
}

/// A record of plan cell `i` doing `ops` ops/s.
fn record(cells: &[CellSpec<'_>], i: usize, ops: f64) -> Repetition {
    let c = &cells[i];
    Repetition(synthetic_cell(
        "lookup",
        "lookup",
        c.variant,
        &[],
        c.threads,
        c.cores,
        ops,
        0.0,
        1,
    ))
}

#[test]
fn pairs_alternate_and_a_clear_effect_stops_at_the_first_look() {
    let plan = plan();
    let cells = plan.cells();
    let mut parts = vec![part()];
    let calls = RefCell::new(Vec::new());
    let mut run = Fake(|i: usize, _pair: usize| {
        calls.borrow_mut().push(cells[i].variant);
        let ops = if cells[i].variant == "dashmap" {
            2e6
        } else {
            1e6
        };
        Some(record(&cells, i, ops))
    });
    let mut saves = 0;
    assert!(measure(
        &mut parts,
        &cells,
        None,
        Reach::All,
        &mut run,
        &mut |_| { saves += 1 }
    ));
    let m = &parts[0];
    assert_eq!(m.stopped, "decided");
    assert_eq!(m.pairs.len(), verdict::decide::interval::LOOKS[0]);
    assert_eq!(m.outcome(), Outcome::Shown);
    assert!((m.interval().unwrap().ratio - 2.0).abs() < 1e-9);
    let calls = calls.into_inner();
    assert_eq!(
        &calls[..4],
        ["dashmap", "global-mutex", "global-mutex", "dashmap"]
    );
    assert!(saves >= 1);
}

#[test]
fn parts_on_the_same_cells_share_one_pair_of_windows() {
    // Two parts of the same two cells (one figure each of the same records, as lease's
    // busy times are): the first's pairs are the second's too, so no window runs twice.
    let plan = plan();
    let cells = plan.cells();
    let mut second = part();
    second.claim.part = "also".to_owned();
    let mut parts = vec![part(), second];
    let calls = RefCell::new(0);
    let mut run = Fake(|i: usize, _pair: usize| {
        *calls.borrow_mut() += 1;
        let ops = if cells[i].variant == "dashmap" {
            2e6
        } else {
            1e6
        };
        Some(record(&cells, i, ops))
    });
    assert!(all(&mut parts, &cells, &mut run));
    let first_look = verdict::decide::interval::LOOKS[0];
    for m in &parts {
        assert_eq!(m.pairs.len(), first_look, "{}", m.claim.part);
        assert_eq!(m.stopped, "decided");
    }
    assert_eq!(calls.into_inner(), 2 * first_look);
    // Both are charged the pairs' time, which the total counts once.
    assert!(parts[0].seconds > 0.0 && parts[0].seconds == parts[1].seconds);
    assert_eq!(measuring_seconds(&parts), parts[0].seconds);
    assert_eq!(measuring_seconds(&parts[..1]), parts[0].seconds);
}

#[test]
fn a_spent_budget_and_a_failed_side_stop_with_their_reason() {
    let plan = plan();
    let cells = plan.cells();
    // A part that has its least pairs, too wide to stop at them (ratios 0.9 to 1.3):
    // nothing more runs past the budget.
    let mut parts = vec![part()];
    parts[0].pairs = [0.9e6, 1.1e6, 1.3e6]
        .iter()
        .map(|&a| vec![a, 1e6])
        .cycle()
        .take(MIN_PAIRS)
        .collect();
    let past = Instant::now() - Duration::from_secs(1);
    let mut never =
        Fake(|_: usize, _: usize| -> Option<Repetition> { panic!("ran past its budget") });
    assert!(measure(
        &mut parts,
        &cells,
        Some(past),
        Reach::All,
        &mut never,
        &mut |_| {}
    ));
    assert_eq!(parts[0].stopped, "budget spent");
    assert_eq!(parts[0].pairs.len(), MIN_PAIRS);
    assert_eq!(parts[0].part().outcome, Outcome::Inconclusive);

    let mut parts = vec![part()];
    let mut failing = Fake(|i: usize, _: usize| {
        let mut r = record(&cells, i, 1e6);
        if cells[i].variant == "global-mutex" {
            r = Repetition::failed(&r.key(), "0", "crashed: signal 11");
        }
        Some(r)
    });
    assert!(all(&mut parts, &cells, &mut failing));
    assert!(
        parts[0].stopped.starts_with("failed: `global-mutex`"),
        "{}",
        parts[0].stopped
    );
    assert!(parts[0].stopped.contains("signal 11"));
}

#[test]
fn an_interruption_stops_every_comparison() {
    let plan = plan();
    let cells = plan.cells();
    let mut parts = vec![part(), part()];
    let mut n = 0;
    let mut run = Fake(|i: usize, _: usize| {
        n += 1;
        (n < 5).then(|| record(&cells, i, 1e6))
    });
    assert!(!all(&mut parts, &cells, &mut run));
    assert_eq!(parts[0].stopped, "interrupted");
    assert_eq!(parts[0].pairs.len(), 2);
    assert!(parts[1].pairs.is_empty());
}

#[test]
fn a_side_outside_the_plan_is_a_part_that_says_so() {
    let plan = plan();
    let cells = plan.cells();
    let refs: Vec<CellRef> = cells.iter().map(cell_ref).collect();
    let side = |v: &str| Side::cell(CellRef::new("lookup", v, 12, 1));
    let claim = Claim::decided_by(
        "x",
        "claim",
        Comparison::throughput(
            side("dashmap"),
            side("global-mutex"),
            Rule::Within {
                low: 0.9,
                high: 1.1,
            },
        ),
    );
    let c = resolvable(claim, &refs);
    assert!(c.comparison.is_none());
    assert!(c.missing.contains("12 threads on 1 CPU"), "{}", c.missing);
}

/// A stand-in that measures every pair as a block in one process.
struct Blocks {
    asked: Vec<usize>,
    starts: Vec<usize>,
    /// How far dashmap's figure swings around 1.5x from pair to pair (0: not at all).
    wiggle: f64,
}

impl Runner for Blocks {
    fn one(&mut self, _: usize, _: usize) -> Option<Repetition> {
        panic!("single repetitions asked of a block runner")
    }
    fn blocks(&self, _: &[usize]) -> bool {
        true
    }
    fn block_cost(&self, _: &[usize], count: usize, _: usize) -> Duration {
        // Ten seconds a pair: a deadline in these tests is tens of seconds away, far
        // beyond any stall of the test's own thread.
        Duration::from_secs(10 * count as u64)
    }
    fn block(
        &mut self,
        cells: &[usize],
        count: usize,
        start: usize,
        _: usize,
    ) -> Option<Result<Block, String>> {
        self.asked.push(count);
        self.starts.push(start);
        assert_eq!(cells.len(), 2);
        let pairs = (start..start + count)
            .map(|k| {
                let ops = 1.5e6 * (1.0 + self.wiggle * ((k % 3) as f64 - 1.0));
                let ra = synthetic_cell("lookup", "lookup", "dashmap", &[], 2, 1, ops, 0.0, 1);
                let rb = synthetic_cell("lookup", "lookup", "global-mutex", &[], 2, 1, 1e6, 0.0, 1);
                vec![Repetition(ra), Repetition(rb)]
            })
            .collect();
        Some(Ok(Block { pairs, slices: 1 }))
    }
}

#[test]
fn blocks_go_to_the_next_look_and_fit_the_deadline() {
    let plan = plan();
    let cells = plan.cells();
    let blocks = |wiggle: f64| Blocks {
        asked: Vec::new(),
        starts: Vec::new(),
        wiggle,
    };
    let mut parts = vec![part()];
    let mut runner = blocks(0.0);
    assert!(all(&mut parts, &cells, &mut runner));
    assert_eq!(runner.asked, [verdict::decide::interval::LOOKS[0]]);
    assert_eq!(parts[0].stopped, "decided");
    assert!((parts[0].interval().unwrap().ratio - 1.5).abs() < 1e-9);

    // Pairs that swing too much to decide at any look before 24 (0.75x to 2.25x against
    // a threshold of 1.05): with the deadline already past, the undecided part still
    // gets its least pairs, look by look, and no more.
    let mut parts = vec![part()];
    let mut runner = blocks(0.5);
    measure(
        &mut parts,
        &cells,
        Some(Instant::now()),
        Reach::All,
        &mut runner,
        &mut |_| {},
    );
    assert_eq!(runner.asked, [9, 7, 8]);
    // Each block goes on from where the last ended in the sequence, so its sides' order
    // does too.
    assert_eq!(runner.starts, [0, 9, 16]);
    assert_eq!(parts[0].pairs.len(), MIN_PAIRS);
    assert_eq!(parts[0].stopped, "budget spent");

    // A part decided at its first look takes no more once the time is up.
    let mut parts = vec![part()];
    let mut runner = blocks(0.2);
    measure(
        &mut parts,
        &cells,
        Some(Instant::now()),
        Reach::All,
        &mut runner,
        &mut |_| {},
    );
    assert_eq!(runner.asked, [9]);
    assert_eq!(parts[0].outcome(), Outcome::Shown);
    assert_eq!(parts[0].stopped, "budget spent");

    // Past the least pairs, a block shrinks to what fits: 55 s left at 10 s a pair.
    let mut parts = vec![part()];
    parts[0].pairs = vec![vec![1.2e6, 1e6], vec![1.8e6, 1e6], vec![1.5e6, 1e6]]
        .into_iter()
        .cycle()
        .take(MIN_PAIRS)
        .collect();
    let mut runner = blocks(0.2);
    let deadline = Instant::now() + Duration::from_secs(55);
    measure(
        &mut parts,
        &cells,
        Some(deadline),
        Reach::All,
        &mut runner,
        &mut |_| {},
    );
    assert_eq!(runner.asked[0], 5);
    assert_eq!(runner.starts[0], MIN_PAIRS);
}

#[test]
fn a_ratio_between_the_thresholds_stops_early_as_futile() {
    // 1.02 against thresholds 1.0 and 1.05: no number of pairs decides it.
    let side = |v: &str| Side::cell(CellRef::new("lookup", v, 2, 1));
    let mut m = Measured::new(Claim::decided_by(
        "gap",
        "claim",
        Comparison::throughput(
            side("dashmap"),
            side("global-mutex"),
            Rule::Above {
                shown: 1.05,
                contradicted: 1.0,
            },
        ),
    ));
    for i in 0..verdict::decide::interval::LOOKS[1] {
        let wiggle = 1.0 + 0.01 * ((i % 5) as f64 - 2.0);
        m.pairs.push(vec![1.02e6 * wiggle, 1e6]);
    }
    assert_eq!(m.outcome(), Outcome::Inconclusive);
    assert!(futile(&m));
    // A clear effect still going to the next look is not futile.
    let mut clear = part();
    for _ in 0..verdict::decide::interval::LOOKS[1] {
        clear.pairs.push(vec![1.02e6, 1e6]);
        clear.pairs.push(vec![1.9e6, 1e6]);
    }
    clear.pairs.truncate(verdict::decide::interval::LOOKS[1]);
    assert!(!futile(&clear));
}

#[test]
fn a_resumed_run_goes_on_with_the_parts_it_stopped_and_keeps_the_decided() {
    let mut interrupted = part();
    interrupted.pairs = vec![vec![2e6, 1e6]; 5];
    interrupted.stopped = "interrupted".to_owned();
    let carried = carry_over(vec![part()], &[interrupted]);
    assert_eq!(carried[0].pairs.len(), 5);
    assert!(carried[0].stopped.is_empty());
    let mut decided = part();
    decided.pairs = vec![vec![2e6, 1e6]; 9];
    decided.stopped = "decided".to_owned();
    assert_eq!(carry_over(vec![part()], &[decided])[0].stopped, "decided");
}

/// A size (the comparison at 1 thread) and the deciding part (2 threads) measured
/// together, dashmap doing `dashmap(threads, call)` ops/s against the mutex's 1M: the
/// parts after, and which part each pair went to, in order (by its threads).
fn a_size_beside_the_deciding_part(
    dashmap: impl Fn(usize, usize) -> f64,
) -> (Vec<Measured>, Vec<usize>) {
    let plan = plan();
    let cells = plan.cells();
    // Its own cells, so its pairs are its own (parts on the same cells share theirs).
    let mut size = part_at("size", 1);
    size.claim.size_only = true;
    size.looks = verdict::decide::interval::Looks::Once;
    let mut parts = vec![size, part()];
    let calls = RefCell::new(Vec::new());
    let mut k = 0usize;
    let mut run = Fake(|i: usize, _pair: usize| {
        k += 1;
        calls.borrow_mut().push(cells[i].threads);
        let ops = if cells[i].variant == "dashmap" {
            dashmap(cells[i].threads, k)
        } else {
            1e6
        };
        Some(record(&cells, i, ops))
    });
    assert!(all(&mut parts, &cells, &mut run));
    // Each pair is two calls on one part's cells.
    let pairs = calls.into_inner().chunks(2).map(|c| c[0]).collect();
    (parts, pairs)
}

#[test]
fn a_size_takes_its_fixed_pairs_and_no_more_while_the_deciding_part_goes_on() {
    use crate::plan::parts::SIZE_PAIRS;
    // Both clearly shown (1.5x, 1.4x) but too noisy to be narrow before their most
    // pairs, so neither stops for its own sake early.
    let (parts, pairs) = a_size_beside_the_deciding_part(|threads, k| {
        let effect = if threads == 2 { 1.5 } else { 1.4 };
        1e6 * effect * [0.7, 1.3, 1.0, 0.8, 1.25][k % 5]
    });
    let last_deciding = pairs.iter().rposition(|&t| t == 2).unwrap();
    let size_before = pairs[..=last_deciding].iter().filter(|&&t| t == 1).count();
    assert!(parts[1].pairs.len() > MIN_PAIRS, "{}", parts[1].stopped);
    assert_eq!(
        size_before, SIZE_PAIRS,
        "the size ran {size_before} pairs while the deciding part still wanted them"
    );
    // Its level holds for a count fixed before it ran: it stops there, the time left
    // to the part a verdict rests on.
    assert_eq!(parts[0].pairs.len(), SIZE_PAIRS, "{}", parts[0].stopped);
}

#[test]
fn an_undecided_deciding_part_takes_its_next_looks_before_a_size_takes_its_floor() {
    // The deciding part is 1.12x with a wobble that leaves its interval across 1.05 at
    // its least pairs; the size is a quiet 1.4x.
    let (parts, pairs) = a_size_beside_the_deciding_part(|threads, k| match threads {
        2 => 1.12e6 * [0.7, 1.35, 1.0, 0.8, 1.3, 0.95, 1.1][k % 7],
        _ => 1.4e6,
    });
    let first_size = pairs.iter().position(|&t| t == 1).unwrap();
    let before = pairs[..first_size].iter().filter(|&&t| t == 2).count();
    let mut at = parts[1].clone();
    at.pairs.truncate(MIN_PAIRS);
    assert_eq!(
        at.outcome(),
        Outcome::Inconclusive,
        "the premise: undecided at its least"
    );
    // Old order: the size's floor right after the deciding part's least pairs.
    assert!(
        before > MIN_PAIRS,
        "the size began after {before} pairs of the undecided part"
    );
}

#[test]
fn a_decided_but_wide_deciding_part_takes_its_next_look_before_a_size_takes_its_floor() {
    // The deciding part is a clear 2x with a wobble that leaves it decided but +-17% at
    // its first look; the size is a quiet 1.4x.
    let (parts, pairs) = a_size_beside_the_deciding_part(|threads, k| match threads {
        2 => 2e6 * [0.7, 1.35, 1.0, 0.8, 1.3, 0.95, 1.1][k % 7],
        _ => 1.4e6,
    });
    let mut first = parts[1].clone();
    first.pairs.truncate(verdict::decide::interval::LOOKS[0]);
    assert_eq!(first.outcome(), Outcome::Shown, "the premise: decided");
    assert!(
        first.interval().unwrap().half_width() > wide(&first),
        "the premise: wide"
    );
    let first_size = pairs.iter().position(|&t| t == 1).unwrap();
    let before = pairs[..first_size].iter().filter(|&&t| t == 2).count();
    assert!(
        before >= verdict::decide::interval::LOOKS[1],
        "the size began after {before} pairs of the wide part"
    );
}

/// A stand-in that measures blocks of any cells, each cell's figure fixed by its variant
/// (dashmap 1.5M ops/s, the mutex 1M), and keeps the cells of every block it was asked.
struct Windows {
    variants: Vec<&'static str>,
    asked: Vec<(Vec<usize>, usize)>,
    /// How long each block takes.
    pause: Duration,
    /// The turns a side the plan asks for (1: whole windows); every block comes back
    /// cut into one, as when a pair's warm-up stalled.
    slices: usize,
}

impl Windows {
    /// A stand-in for the plan's `cells`, each block taking `pause`.
    fn of(cells: &[CellSpec<'_>], pause: Duration) -> Windows {
        Windows {
            variants: cells.iter().map(|c| c.variant).collect(),
            asked: Vec::new(),
            pause,
            slices: 1,
        }
    }
}

impl Runner for Windows {
    fn one(&mut self, _: usize, _: usize) -> Option<Repetition> {
        panic!("single repetitions asked of a block runner")
    }
    fn blocks(&self, _: &[usize]) -> bool {
        true
    }
    fn slices(&self, _: &[usize], _: &str) -> usize {
        self.slices
    }
    fn block(
        &mut self,
        cells: &[usize],
        count: usize,
        _: usize,
        _: usize,
    ) -> Option<Result<Block, String>> {
        self.asked.push((cells.to_vec(), count));
        std::thread::sleep(self.pause);
        // Each window's machine-wide busy CPUs tell its place in the block: 1.0, 1.1, ...
        let record = |at: usize, i: usize| {
            let v = self.variants[i];
            let ops = if v == "dashmap" { 1.5e6 } else { 1e6 };
            let mut r = synthetic_cell("lookup", "lookup", v, &[], 2, 1, ops, 0.0, 1);
            r.interference = Some(harness::interference::Interference {
                busy_cpus: 1.0 + 0.1 * at as f64,
                ..Default::default()
            });
            Repetition(r)
        };
        let pairs = (0..count)
            .map(|_| {
                cells
                    .iter()
                    .enumerate()
                    .map(|(at, &i)| record(at, i))
                    .collect()
            })
            .collect();
        Some(Ok(Block { pairs, slices: 1 }))
    }
}

#[test]
fn a_placebo_rides_on_its_cells_deciding_part_in_three_windows_a_pair() {
    let plan = plan();
    let cells = plan.cells();
    let mut parts = vec![part(), placebo("ops_per_sec")];
    let mut run = Windows::of(&cells, Duration::ZERO);
    assert!(all(&mut parts, &cells, &mut run));
    let first_look = verdict::decide::interval::LOOKS[0];
    // One block: dashmap, the mutex, the mutex again; the deciding part's pairs are the
    // first two windows, the placebo's the last two, both adjacent.
    assert_eq!(run.asked.len(), 1, "{:?}", run.asked);
    let (blocked, count) = &run.asked[0];
    assert_eq!(*count, first_look);
    let names: Vec<&str> = blocked.iter().map(|&i| cells[i].variant).collect();
    assert_eq!(names, ["dashmap", "global-mutex", "global-mutex"]);
    assert_eq!(blocked[1], blocked[2]);
    for m in &parts {
        assert_eq!(m.pairs.len(), first_look, "{}", m.claim.part);
        assert_eq!(m.stopped, "decided", "{}", m.claim.part);
    }
    assert!((parts[0].interval().unwrap().ratio - 1.5).abs() < 1e-9);
    assert!((parts[1].interval().unwrap().ratio - 1.0).abs() < 1e-9);
    // Each keeps its own windows' busy CPUs beside its figures, in its cells' order.
    let busy =
        |m: &Measured| -> Vec<String> { m.busy[0].iter().map(|b| format!("{b:.1}")).collect() };
    assert_eq!(parts[0].busy.len(), first_look);
    assert_eq!(busy(&parts[0]), ["1.0", "1.1"]);
    assert_eq!(busy(&parts[1]), ["1.1", "1.2"]);
    // Each is charged half the block, which the total counts once.
    assert_eq!(parts[0].seconds, parts[1].seconds);
    let total = parts[0].seconds + parts[1].seconds;
    assert!((measuring_seconds(&parts) - total).abs() < 1e-12);
}

#[test]
fn a_block_asked_to_interleave_keeps_no_busy_cpus_even_when_it_came_back_uncut() {
    let plan = plan();
    let cells = plan.cells();
    let mut parts = vec![part()];
    let mut run = Windows::of(&cells, Duration::ZERO);
    // The cause taken away first: whole windows of their own keep their busy CPUs.
    assert!(all(&mut parts, &cells, &mut run));
    assert!(parts[0].busy.iter().flatten().all(|&b| b > 0.0));
    let mut parts = vec![part()];
    run.slices = 2;
    assert!(all(&mut parts, &cells, &mut run));
    assert!(!parts[0].busy.is_empty());
    assert!(
        parts[0].busy.iter().flatten().all(|&b| b == 0.0),
        "{:?}",
        parts[0].busy
    );
}

#[test]
fn a_trio_asks_no_more_pairs_than_the_companion_wants() {
    // The placebo already has all but two of its first look: the block runs two pairs in
    // trio, then the deciding part goes on alone.
    let plan = plan();
    let cells = plan.cells();
    let mut short = placebo("ops_per_sec");
    let first_look = verdict::decide::interval::LOOKS[0];
    short.pairs = vec![vec![1e6, 1e6]; first_look - 2];
    let mut parts = vec![part(), short];
    let mut run = Windows::of(&cells, Duration::ZERO);
    assert!(all(&mut parts, &cells, &mut run));
    let shape: Vec<(usize, usize)> = run.asked.iter().map(|(c, n)| (c.len(), *n)).collect();
    assert_eq!(shape, [(3, 2), (2, first_look - 2)]);
    assert_eq!(parts[1].pairs.len(), first_look);
    assert_eq!(parts[0].pairs.len(), first_look);
}

#[test]
fn two_deciding_parts_on_one_cell_and_its_placebo_ride_in_four_windows_each_its_own() {
    // Cells of the lookup plan at 1 core: dashmap and the mutex at 1 and 2 threads. Two
    // deciding parts share the mutex at 2 threads (dashmap 2 against it, it against
    // dashmap 1), and the placebo is that cell against itself.
    let plan = plan();
    let cells = plan.cells();
    let refs: Vec<CellRef> = cells.iter().map(cell_ref).collect();
    let mutex = CellRef::new("lookup", "global-mutex", 2, 1);
    let side = |v: &str, t: usize| Side::cell(CellRef::new("lookup", v, t, 1));
    let second = Measured::new(Claim::decided_by(
        "beats_dashmap_1",
        "the mutex at 2 beats dashmap at 1",
        Comparison::throughput(
            side("global-mutex", 2),
            side("dashmap", 1),
            Rule::Above {
                shown: 1.05,
                contradicted: 1.0,
            },
        ),
    ));
    let mut parts = vec![part(), second, placebo("ops_per_sec")];
    let mut run = Windows::of(&cells, Duration::ZERO);
    assert!(all(&mut parts, &cells, &mut run));
    let first_look = verdict::decide::interval::LOOKS[0];
    assert_eq!(run.asked.len(), 1, "{:?}", run.asked);
    let (blocked, count) = &run.asked[0];
    assert_eq!(*count, first_look);
    let at = |r: &CellRef| position(r, &refs).unwrap();
    let dashmap_1 = at(&CellRef::new("lookup", "dashmap", 1, 1));
    let dashmap_2 = at(&CellRef::new("lookup", "dashmap", 2, 1));
    let m = at(&mutex);
    assert_eq!(*blocked, vec![dashmap_2, m, m, dashmap_1]);
    for p in &parts {
        assert_eq!(p.pairs.len(), first_look, "{}", p.claim.part);
    }
    // dashmap's windows are 1.5M, the mutex's 1M whatever the threads.
    assert!((parts[0].interval().unwrap().ratio - 1.5).abs() < 1e-9);
    assert!((parts[1].interval().unwrap().ratio - 1.0 / 1.5).abs() < 1e-9);
    assert!((parts[2].interval().unwrap().ratio - 1.0).abs() < 1e-9);
    // Each is charged a third of the block, which the total counts once.
    assert!((parts[0].seconds - parts[1].seconds).abs() < 1e-12);
    assert!((parts[0].seconds - parts[2].seconds).abs() < 1e-12);
    let total: f64 = parts.iter().map(|p| p.seconds).sum();
    assert!((measuring_seconds(&parts) - total).abs() < 1e-12);
}

#[test]
fn a_companion_that_takes_no_pair_leaves_the_block_s_seconds_to_the_part_it_rode_with() {
    // The placebo asks a figure the records lack: it rides, takes nothing, and the
    // deciding part is charged the whole block, so the run's pair time counts it once.
    let plan = plan();
    let cells = plan.cells();
    let mut parts = vec![part(), placebo("no_such_figure")];
    // Each block sleeps: the trio's seconds are at least this, whatever the machine.
    let pause = Duration::from_millis(30);
    let mut run = Windows::of(&cells, pause);
    assert!(all(&mut parts, &cells, &mut run));
    assert_eq!(run.asked[0].0.len(), 3, "the premise: it rode");
    assert!(parts[1].pairs.is_empty());
    assert_eq!(parts[0].stopped, "decided", "the premise: one block");
    // The whole trio is the deciding part's, not half of it.
    assert!(
        parts[0].seconds >= pause.as_secs_f64(),
        "{}",
        parts[0].seconds
    );
}

#[test]
fn a_placebo_past_its_floor_waits_for_a_later_reach() {
    // A noisy placebo: its floor does not make it narrow.
    let plan = plan();
    let cells = plan.cells();
    let mut parts = vec![placebo("ops_per_sec")];
    let wobble = [0.8, 1.25, 1.1, 0.9, 1.3, 0.75, 1.0];
    let mut k = 0;
    let mut noisy = Fake(|i: usize, _: usize| {
        k += 1;
        Some(record(&cells, i, 1e6 * wobble[k % wobble.len()]))
    });
    let at_floor = floor(&parts[0].claim);
    assert!(measure(
        &mut parts,
        &cells,
        None,
        Reach::PastFloorsLater,
        &mut noisy,
        &mut |_| {}
    ));
    assert_eq!(parts[0].pairs.len(), at_floor);
    assert!(parts[0].stopped.is_empty(), "{}", parts[0].stopped);
    // Later, with everything in reach, it goes on from there.
    assert!(all(&mut parts, &cells, &mut noisy));
    assert!(parts[0].pairs.len() > at_floor, "{}", parts[0].pairs.len());
    assert!(!parts[0].stopped.is_empty());
}

#[test]
fn a_looser_precision_stops_a_decided_part_at_an_earlier_look() {
    // `precision=` reaches every declared part.
    let mut args: Vec<String> = ["scenarios=lookup", "precision=25%"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let loose = MatrixPlan::build(&Settings::parse(&args).unwrap(), &root).unwrap();
    let declared = declare(&loose, &loose.cells());
    assert!(!declared.is_empty());
    assert!(declared.iter().all(|m| m.precision == 0.25));
    args.pop();
    let default = MatrixPlan::build(&Settings::parse(&args).unwrap(), &root).unwrap();
    let declared = declare(&default, &default.cells());
    assert!(declared
        .iter()
        .all(|m| m.precision == verdict::decide::PRECISION));

    // A clear 2x whose pairs wobble by up to 20%: decided at the first look, and there
    // narrower than +-25% but wider than the default +-3%.
    let plan = plan();
    let cells = plan.cells();
    let wobble = [0.8, 1.2, 1.0, 0.9, 1.1, 0.85, 1.15];
    let pairs_at = |precision: f64| {
        let mut parts = vec![part()];
        parts[0].precision = precision;
        let mut run = Fake(|i: usize, pair: usize| {
            let ops = if cells[i].variant == "dashmap" {
                2e6 * wobble[pair % wobble.len()]
            } else {
                1e6
            };
            Some(record(&cells, i, ops))
        });
        assert!(all(&mut parts, &cells, &mut run));
        assert_eq!(parts[0].outcome(), Outcome::Shown);
        assert_eq!(parts[0].stopped, "decided");
        parts[0].pairs.len()
    };
    let first = verdict::decide::interval::LOOKS[0];
    assert_eq!(pairs_at(0.25), first);
    assert!(pairs_at(verdict::decide::PRECISION) > first);
}
