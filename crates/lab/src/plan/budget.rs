//! The cost model of a matrix and fitting a plan to its time budget.
//!
//! A counted run costs `overhead + PER_THREAD x threads + warm-up + window`, where
//! `overhead` is what a child of that scenario file took beyond its warm-up and window
//! (measured by the newest results file, else the file's estimate: `costs`); a profiled
//! run costs its profiling window instead of the window, and what a profiled run of that
//! file took beyond them as the newest results file measured it, else `overhead` plus
//! [`PROFILE_EXTRA`] and [`PROFILE_PER_THREAD`] for perf (twice for a cell profiled twice,
//! `profiled::repeated`);
//! the report adds [`REPORT`] once. When the plan's estimate is over [`PLAN_SHARE`] of the
//! budget, `fit`
//! trims, in this order, stopping as soon as it fits: (1) windows and warm-ups, down to
//! each file's `min_duration` (files without one keep theirs); (2) repetitions, towards 5
//! (`lab compare`'s least for a verdict; 3 where the findings' parts are measured as
//! pairs, which then decide); then, the rounds being elastic down to [`KEPT_REPEATS`] a
//! cell, only while two repetitions of every cell and the profiles would leave the pairs
//! less than [`PAIRS_FLOOR`] of the budget, the files without `keep_cores` and then those
//! with it lose (3) the thread counts far past a row's own cores in the rows below the
//! most cores (`thin_rows`), then in those rows the variants no part compares
//! (`thin_variants`), and (4) core counts, one at a time, file by file, keeping the
//! most cores and 1 longest; a core count dropped before the later files were thinned
//! comes back where it then fits (`restore_cores`). The thread x core matrix is the first
//! thing a reader reads, and its rows at fewer cores cost a minute here. Nothing the user typed
//! (`duration=`, `warmup=`, `repeats=`, `cores=`, `variants=`) is trimmed. What was trimmed is
//! recorded per file. It runs nothing.

use std::time::Duration;

use super::profiled::{self as select, Which};
use super::{MatrixPlan, ScenarioPlan, Settings};
use crate::scenario_file::Axis;
use verdict::decide::CellRef;

/// What each worker thread adds to a child's start and end (spawning, its data, joining):
/// about what 3000 pool clients took here.
pub const PER_THREAD: Duration = Duration::from_micros(250);

/// What perf adds to a profiled run (start-up, shut-down, DWARF stacks read back,
/// folding, the flamegraphs drawn) where no results file measured the file's profiles,
/// besides [`PROFILE_PER_THREAD`]. Only a fresh clone's first plan uses it: a run records
/// each profile's own time (`ProfileRef::run_overhead_s`) and the next plan prices its
/// profiles by that. Run 20261207T043031Z here took 0.4-1.5 s more for a profiled run of
/// an in-process hot path than for a counted one, 0.1-0.7 s more for the PostgreSQL pools
/// and 1.8-3.4 s more for 389 DS (its server's off-CPU profile besides); 2.5 s, the
/// figure before, priced its 80 profiles at about 2 minutes more than they took.
pub const PROFILE_EXTRA: Duration = Duration::from_millis(1000);

/// What perf adds to a profiled run for each thread of the cell: it opens its events in
/// every thread the process starts and reads each one's buffers back. The same run's
/// pool-clients profiles at 3000 client threads took 10-13 s more than a counted run.
pub const PROFILE_PER_THREAD: Duration = Duration::from_micros(3500);

/// Rendering the report once the runs are done.
pub const REPORT: Duration = Duration::from_secs(10);

/// The share of the budget a plan is fitted to: the rest is for what the estimate cannot
/// see (retakes under interference, a slower minute, the canary and reference between
/// rounds). A default run from a clean clone (run 20261201T134556Z) took 10 min 59 s for a
/// plan estimated at 10 min 6 s, 8.7% more, and so ended 12 s past its 15 minutes.
pub const PLAN_SHARE: f64 = 0.92;

/// The share of the budget kept for the findings' parts, measured as pairs after the
/// rounds (`lab::pairs`): the rounds fit `PLAN_SHARE - PAIRS_SHARE`. Why this much: at
/// the noise here (sd 0.08 of a pair's log ratio) a part needs some 60-100 pairs to be
/// +-3% narrow, a few seconds of pairs for the in-process hot paths and a minute or more
/// for a real server restarted per repetition; the cells' own tables lose little from 8
/// repetitions going to 5.
pub const PAIRS_SHARE: f64 = 0.35;

/// The fewest repetitions the budget trims to: `lab compare`'s least for a verdict.
pub const MIN_REPEATS: usize = 5;

/// The fewest when the findings' parts are measured as pairs: the verdicts then rest on
/// the pairs, and a cell's 3 repetitions give its table a median and a spread.
pub const MIN_REPEATS_WITH_PAIRS: usize = 3;

/// The shortest warm-up the budget trims to.
const MIN_WARMUP: Duration = Duration::from_millis(20);

/// Cells, runs (profiled ones included) and the expected time of a file or a plan.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Estimate {
    /// Cells.
    pub cells: usize,
    /// Child runs: repetitions plus profiling runs.
    pub runs: usize,
    /// Expected wall time.
    pub time: Duration,
}

impl ScenarioPlan {
    /// The expected wall time of one counted repetition at `threads`.
    pub fn run_cost(&self, threads: usize) -> Duration {
        self.overhead + PER_THREAD * threads as u32 + self.warmup + self.duration
    }

    /// The measured window of each side of a part's pair: the file's own pair window,
    /// else the rounds' window as the budget left it.
    pub fn pair_window(&self) -> Duration {
        self.pair_duration.unwrap_or(self.duration)
    }

    /// The expected wall time of one side of a part's pair at `threads`, in a child of
    /// its own: a repetition at the pair window.
    pub fn pair_side_cost(&self, threads: usize) -> Duration {
        self.run_cost(threads) - self.duration + self.pair_window()
    }

    /// The expected wall time of one profiling run at `threads`.
    pub fn profile_cost(&self, threads: usize, quick: bool) -> Duration {
        self.profile_overhead
            .unwrap_or(self.overhead + PROFILE_EXTRA + PROFILE_PER_THREAD * threads as u32)
            + PER_THREAD * threads as u32
            + self.warmup
            + select::window(self.duration, quick)
    }

    /// This file's cells, runs and expected time, profiling as `which` says.
    pub fn estimate(&self, which: Which, quick: bool) -> Estimate {
        let cells = self.cells();
        let profiled = select::profiled(&cells, which);
        let repeated = select::repeated(&cells, which);
        let mut e = Estimate {
            cells: cells.len(),
            ..Estimate::default()
        };
        for ((cell, profiled), repeated) in cells.iter().zip(profiled).zip(repeated) {
            e.runs += self.repeats;
            e.time += self.run_cost(cell.threads) * self.repeats as u32;
            // A repeated profile is a second profiling run of its own.
            let n = usize::from(profiled) + usize::from(repeated);
            e.runs += n;
            e.time += self.profile_cost(cell.threads, quick) * n as u32;
        }
        e
    }
}

impl MatrixPlan {
    /// Each scenario file's estimate, in plan order.
    pub fn estimates(&self) -> Vec<Estimate> {
        let which = select::which(self);
        self.scenarios
            .iter()
            .map(|s| s.estimate(which, self.quick))
            .collect()
    }

    /// The whole plan's estimate, the report included.
    pub fn estimate(&self) -> Estimate {
        self.estimates().into_iter().fold(
            Estimate {
                time: REPORT,
                ..Estimate::default()
            },
            |a, e| Estimate {
                cells: a.cells + e.cells,
                runs: a.runs + e.runs,
                time: a.time + e.time,
            },
        )
    }

    /// What the rounds take at the least, the repetitions they keep whatever the budget
    /// ([`KEPT_REPEATS`] a cell), with the profiles and the report: the rounds run first,
    /// so the pairs get what this leaves of the budget, whatever share the plan kept them.
    pub fn least_rounds(&self) -> Duration {
        let mut least = self.clone();
        for s in &mut least.scenarios {
            s.repeats = s.repeats.min(KEPT_REPEATS);
        }
        least.estimate().time
    }

    /// The time the pairs can count on under `budget`: they run from the rounds' end to
    /// the budget's (the report's few seconds aside), and the rounds take their share, or
    /// all of their estimate where that is less, or their least
    /// ([`MatrixPlan::least_rounds`]) where that is more. Why not the share kept for the
    /// pairs: a default run here planned 10 min of pairs and measured 7 min 11 s of them,
    /// the rounds' least having taken 7 min 39 s where 7 min 40 s was estimated.
    pub fn pairs_room(&self, budget: Duration) -> Duration {
        let share = rounds_share(budget, true, super::parts::reserve(&self.parts));
        let rounds = self.least_rounds().max(self.estimate().time.min(share));
        budget.saturating_sub(rounds)
    }

    /// Whether the estimate exceeds the budget (after trimming, nothing left to trim).
    pub fn over_budget(&self) -> bool {
        self.budget.is_some_and(|b| self.estimate().time > b)
    }
}

/// What the rounds, the profiles and the report may take of `budget` once the parts'
/// pairs (`pairs`, planned by `parts`) are kept: never less than [`PAIRS_SHARE`] for the
/// pairs, and the rounds never less than [`MIN_ROUNDS_SHARE`] (their cells' tables, and
/// the figures the parts' sides are read from, need some).
pub fn rounds_share(budget: Duration, with_pairs: bool, pairs: Duration) -> Duration {
    if !with_pairs {
        return budget.mul_f64(PLAN_SHARE);
    }
    let kept = (pairs.as_secs_f64() / budget.as_secs_f64().max(1e-9))
        .clamp(PAIRS_SHARE, PLAN_SHARE - MIN_ROUNDS_SHARE);
    budget.mul_f64(PLAN_SHARE - kept)
}

/// The least share of the budget the rounds keep, however many pairs the parts need.
pub const MIN_ROUNDS_SHARE: f64 = 0.25;

/// The least share of the budget the pairs keep when the core axis needs the rest: a
/// plan drops a core count only when two repetitions of every cell and the profiles
/// would leave the pairs less than this.
pub const PAIRS_FLOOR: f64 = 0.25;

/// Repetitions the rounds keep of every cell whatever the budget (`matrix::rounds`).
pub const KEPT_REPEATS: usize = 2;

/// What a file had before trimming.
struct Own {
    duration: Duration,
    warmup: Duration,
    repeats: usize,
    cores: Vec<usize>,
}

/// Trims `plan` until its estimate fits its budget, in the order the module describes,
/// and records what each file lost.
pub(super) fn fit(plan: &mut MatrixPlan, settings: &Settings, pairs: Duration) {
    let Some(whole) = plan.budget else { return };
    let budget = rounds_share(whole, plan.pairs, pairs);
    let fits = |plan: &MatrixPlan| plan.estimate().time <= budget;
    if fits(plan) {
        return;
    }
    let named = super::parts::named_points(plan);
    let mut spans: Vec<Option<usize>> = vec![None; plan.scenarios.len()];
    let own: Vec<Own> = plan
        .scenarios
        .iter()
        .map(|s| Own {
            duration: s.duration,
            warmup: s.warmup,
            repeats: s.repeats,
            cores: s.cores.clone(),
        })
        .collect();
    'done: {
        if settings.duration.is_none() {
            for tenth in (0..10).rev() {
                for (s, own) in plan.scenarios.iter_mut().zip(&own) {
                    shorten(s, own, tenth as f64 / 10.0, settings.warmup.is_none());
                }
                if fits(plan) {
                    break 'done;
                }
            }
        }
        if settings.repeats.is_none() {
            let most = plan.scenarios.iter().map(|s| s.repeats).max().unwrap_or(0);
            let least = if plan.pairs {
                MIN_REPEATS_WITH_PAIRS
            } else {
                MIN_REPEATS
            };
            for r in (least..most).rev() {
                for (s, own) in plan.scenarios.iter_mut().zip(&own) {
                    s.repeats = own.repeats.min(r.max(own.repeats.min(least)));
                }
                if fits(plan) {
                    break 'done;
                }
            }
        }
        // The core axis goes last, and only while even the repetitions the rounds keep
        // whatever the budget says (two a cell) and the profiles would leave the pairs
        // less than their floor: a row of core counts costs a minute of rounds here, and
        // the seed's own table has a row per CPU count.
        let floor = whole.mul_f64(PLAN_SHARE - PAIRS_FLOOR);
        let core_fits = |plan: &MatrixPlan| plan.least_rounds() <= floor;
        // Before a row goes, the rows below the most cores lose the thread counts far past
        // their own cores: what a row is for is its knee (threads = cores) and just past
        // it; far past it the row repeats its time slicing, which its largest count shows.
        // Files without `keep_cores` go first, rows then core counts, so the files the
        // seeds' own tables come from keep their rows widest.
        // Then those rows keep only the designs the parts compare (the seed's table is of
        // its own design), and only then does a row go.
        if settings.cores.is_none() && !core_fits(plan) {
            let _ = [false, true].into_iter().any(|keep| {
                thin_rows(plan, keep, settings, &named, &mut spans, &core_fits)
                    || thin_variants(plan, keep, settings, &named, &core_fits)
                    || thin_cores(plan, keep, &core_fits)
            });
            restore_cores(plan, &own, &named, &spans, &core_fits);
        }
    }
    for ((s, own), span) in plan.scenarios.iter_mut().zip(&own).zip(spans) {
        let ms = |d: Duration| super::text(Duration::from_millis(d.as_millis() as u64));
        if s.duration != own.duration {
            s.trimmed.push(format!(
                "windows {} -> {}",
                ms(own.duration),
                ms(s.duration)
            ));
        }
        if s.warmup != own.warmup {
            s.trimmed
                .push(format!("warm-ups {} -> {}", ms(own.warmup), ms(s.warmup)));
        }
        if s.repeats != own.repeats {
            s.trimmed
                .push(format!("repeats {} -> {}", own.repeats, s.repeats));
        }
        let gone: Vec<usize> = own
            .cores
            .iter()
            .copied()
            .filter(|c| !s.cores.contains(c))
            .collect();
        let cores = s.cores.clone();
        s.rows.retain(|c, _| cores.contains(c));
        s.row_variants.retain(|c, _| cores.contains(c));
        let thinned: Vec<usize> = s
            .cores
            .iter()
            .copied()
            .filter(|c| s.rows.contains_key(c))
            .collect();
        if let (Some(span), false) = (span, thinned.is_empty()) {
            s.trimmed.push(format!(
                "threads past {span}x cores left out at cores {} (1, the most and the parts' kept; cores= keeps every row whole)",
                crate::scenario_file::join(&thinned)
            ));
        }
        if let Some(kept) = s.row_variants.values().next() {
            let at: Vec<usize> = s.row_variants.keys().copied().collect();
            s.trimmed.push(format!(
                "variants other than {} left out at cores {} (the designs the parts compare kept; variants= keeps every row whole)",
                kept.join(","),
                crate::scenario_file::join(&at)
            ));
        }
        if !gone.is_empty() {
            s.trimmed.push(format!(
                "cores {} left out",
                crate::scenario_file::join(&gone)
            ));
        }
    }
}

/// The window (and warm-up, in proportion, when `warmup` may change) at `share` of the
/// way from the file's floor to its own.
fn shorten(s: &mut ScenarioPlan, own: &Own, share: f64, warmup: bool) {
    if s.min_duration >= own.duration {
        return;
    }
    let span = (own.duration - s.min_duration).as_secs_f64();
    let window = s.min_duration + Duration::from_secs_f64(span * share);
    s.duration = Duration::from_millis(window.as_millis() as u64);
    if warmup {
        let scaled = own
            .warmup
            .mul_f64(s.duration.as_secs_f64() / own.duration.as_secs_f64());
        let floor = MIN_WARMUP.min(own.warmup);
        s.warmup = Duration::from_millis(scaled.max(floor).as_millis() as u64);
    }
}

/// The multiples of a row's cores up to which a thinned row keeps its thread counts, tried
/// in turn, widest first.
const ROW_SPANS: [usize; 3] = [4, 2, 1];

/// Thins the rows below the most cores of each thread-axis file whose `keep_cores` is
/// `keep`, file by file and span by span
/// ([`ROW_SPANS`]), until the plan fits (true) or every row is as thin as it goes (false).
/// A thinned row keeps what [`row`] says; a file whose thread counts were typed keeps them
/// all. `spans` records each file's thinnest span.
fn thin_rows(
    plan: &mut MatrixPlan,
    keep: bool,
    settings: &Settings,
    named: &[CellRef],
    spans: &mut [Option<usize>],
    fits: &dyn Fn(&MatrixPlan) -> bool,
) -> bool {
    for span in ROW_SPANS {
        for (i, span_of) in spans.iter_mut().enumerate() {
            let s = &mut plan.scenarios[i];
            let typed =
                settings.threads.is_some() || settings.per_file.iter().any(|p| p.file == s.file);
            if s.keep_cores != keep || s.axis != Axis::Threads || typed {
                continue;
            }
            let Some(&most) = s.cores.iter().max() else {
                continue;
            };
            let mut thinned = false;
            for c in s.cores.clone().into_iter().filter(|&c| c < most) {
                let kept = row(s, c, span, named);
                if kept.len() < s.threads_at(c).len() {
                    s.rows.insert(c, kept);
                    thinned = true;
                }
            }
            if thinned {
                *span_of = Some(span);
                if fits(plan) {
                    return true;
                }
            }
        }
    }
    false
}

/// Leaves out of the rows below the most cores of each thread-axis file whose
/// `keep_cores` is `keep` the variants no part names ([`row_variants`]), file by file,
/// until the plan fits (true) or every such row is as thin as it goes (false). Why
/// variants before rows: a row below the most cores is for the seed's table (rows = CPUs,
/// columns = threads) of the designs the parts compare, while the designs are compared with
/// each other at the most cores, where every one keeps its row. A file whose variants
/// were typed keeps them all.
fn thin_variants(
    plan: &mut MatrixPlan,
    keep: bool,
    settings: &Settings,
    named: &[CellRef],
    fits: &dyn Fn(&MatrixPlan) -> bool,
) -> bool {
    if settings.variants.is_some() {
        return false;
    }
    for i in 0..plan.scenarios.len() {
        let s = &mut plan.scenarios[i];
        if s.keep_cores != keep || s.axis != Axis::Threads {
            continue;
        }
        let kept = row_variants(s, named);
        let Some(&most) = s.cores.iter().max() else {
            continue;
        };
        if kept.len() == s.variants.len() {
            continue;
        }
        for c in s.cores.clone().into_iter().filter(|&c| c < most) {
            s.row_variants.insert(c, kept.clone());
        }
        if fits(plan) {
            return true;
        }
    }
    false
}

/// The variants a thinned row of `s` keeps: the first (each hot path lists the design of
/// its seed's incident first, whose table the seed drew) and those a part names in this
/// file.
fn row_variants(s: &ScenarioPlan, named: &[CellRef]) -> Vec<&'static str> {
    s.variants
        .iter()
        .enumerate()
        .filter(|&(i, v)| i == 0 || named.iter().any(|n| n.file == s.file && n.variant == *v))
        .map(|(_, &v)| v)
        .collect()
}

/// Drops core counts from files whose `keep_cores` is `keep`, one at a time and file by
/// file, until the plan fits (true) or each such file has one core count left (false).
fn thin_cores(plan: &mut MatrixPlan, keep: bool, fits: &dyn Fn(&MatrixPlan) -> bool) -> bool {
    loop {
        let mut dropped = false;
        for i in 0..plan.scenarios.len() {
            let s = &mut plan.scenarios[i];
            if s.keep_cores != keep || s.cores.len() < 2 {
                continue;
            }
            let gone = drop_order(&s.cores)[0];
            s.cores.retain(|&c| c != gone);
            dropped = true;
            if fits(plan) {
                return true;
            }
        }
        if !dropped {
            return false;
        }
    }
}

/// Gives back the core counts the budget dropped, in the reverse of the order it dropped
/// them (the most telling first), one of each file in turn (`keep_cores` files first) and
/// as thin as the file's other rows, while the plan still fits: a file dropped to one row
/// before the `keep_cores` files were thinned may have room for more once they were, and
/// taking turns gives every file its row at 1 core before any gets its middle rows (file
/// by file, the last files of a 16-CPU plan kept one row while the first kept five).
fn restore_cores(
    plan: &mut MatrixPlan,
    own: &[Own],
    named: &[CellRef],
    spans: &[Option<usize>],
    fits: &dyn Fn(&MatrixPlan) -> bool,
) {
    let mut files: Vec<usize> = (0..own.len()).collect();
    files.sort_by_key(|&i| !plan.scenarios[i].keep_cores);
    let orders: Vec<Vec<usize>> = own
        .iter()
        .map(|o| drop_order(&o.cores).into_iter().rev().collect())
        .collect();
    let mut open = vec![true; own.len()];
    let turns = orders.iter().map(Vec::len).max().unwrap_or(0);
    for turn in 0..turns {
        for &i in &files {
            let Some(&c) = orders[i].get(turn).filter(|_| open[i]) else {
                continue;
            };
            let s = &mut plan.scenarios[i];
            if s.cores.contains(&c) {
                continue;
            }
            let before = s.clone();
            s.cores.push(c);
            s.cores.sort_unstable();
            let below_most = s.cores.last() != Some(&c);
            if let Some(span) = spans[i].filter(|_| below_most) {
                let kept = row(s, c, span, named);
                s.rows.insert(c, kept);
            }
            if let Some(kept) = s.row_variants.values().next().cloned() {
                if below_most {
                    s.row_variants.insert(c, kept);
                }
            }
            if !fits(plan) {
                plan.scenarios[i] = before;
                open[i] = false;
            }
        }
    }
}

/// The thread counts a row at `cores` keeps at `span`: up to `span` times its cores, the
/// fewest and the most, and every cell a part names.
fn row(s: &ScenarioPlan, cores: usize, span: usize, named: &[CellRef]) -> Vec<usize> {
    let fewest = s.threads.iter().min();
    let most = s.threads.iter().max();
    s.threads
        .iter()
        .copied()
        .filter(|t| {
            *t <= span * cores
                || Some(t) == fewest
                || Some(t) == most
                || named
                    .iter()
                    .any(|n| n.file == s.file && n.threads == *t && n.cores == cores)
        })
        .collect()
}

/// The order in which to drop core counts: the most cores last, then 1, then the middle
/// of what is left by halves, so the counts kept stay spread from 1 to the most.
pub fn drop_order(cores: &[usize]) -> Vec<usize> {
    let n = cores.len();
    if n == 0 {
        return Vec::new();
    }
    let mut keep: Vec<usize> = vec![n - 1];
    if n > 1 {
        keep.push(0);
    }
    let mut spans = vec![(0usize, n - 1)];
    while let Some((lo, hi)) = (!spans.is_empty()).then(|| spans.remove(0)) {
        if hi - lo < 2 {
            continue;
        }
        let mid = (lo + hi) / 2;
        keep.push(mid);
        spans.push((lo, mid));
        spans.push((mid, hi));
    }
    keep.iter().rev().map(|&i| cores[i]).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn core_counts_go_from_the_middle_keeping_one_and_the_most() {
        assert_eq!(drop_order(&[1, 2]), [1, 2]);
        assert_eq!(drop_order(&[2]), [2]);
        assert_eq!(
            drop_order(&[1, 2, 4, 8, 16, 32, 64]),
            [32, 4, 16, 2, 8, 1, 64]
        );
        assert!(drop_order(&[]).is_empty());
    }
}
