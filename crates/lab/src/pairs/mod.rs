//! The findings' parts measured as pairs adjacent in time, after the matrix's rounds.
//!
//! Why pairs and not the rounds' cells: two cells a round apart differ by what the host
//! did in the minute between them (the sd of their log ratio is 0.29 here), while two
//! children run back to back vary together (0.08). So each part's comparison
//! ([`verdict::decide`]) runs its cells one after the other, a then b, then b then a
//! (alternated, so neither side always runs first), and adds pairs until its interval
//! decides at a look and is as narrow as its precision (`precision=`, +-3% by default),
//! or the time runs out. Time is shared by giving the next pairs to the comparison that
//! has had the least time so far, so a real server's expensive pairs do not starve the
//! others, nor they it.
//!
//! A pair's children are ordinary repetitions of their cells at their planned window;
//! they are kept with the comparison, not merged into the cells' figures. Not here: what
//! a part claims (each hot path's `claims`), turning pairs into outcomes
//! (`verdict::decide`).

pub mod child;
pub mod lock_delay;
pub mod lock_library;

#[cfg(test)]
mod tests;

use std::time::{Duration, Instant};

use harness::{CellRecord, Repetition};
use verdict::decide::{CellRef, Measured, Outcome};

pub use crate::plan::parts::declare;
#[cfg(test)]
use crate::plan::parts::resolvable;
use crate::plan::parts::{cell_ref, floor, position, Chain, CHAIN_PARTS, MIN_PAIRS};
use crate::plan::CellSpec;

/// Continues the comparisons of a resumed run: a part measured before keeps its pairs
/// where its claim is unchanged, and one that stopped for the run's sake (interrupted,
/// out of budget) goes on; one that stopped for its own (decided, futile, failed) stays.
pub fn carry_over(declared: Vec<Measured>, before: &[Measured]) -> Vec<Measured> {
    declared
        .into_iter()
        .map(|m| {
            let mut kept = before
                .iter()
                .find(|b| b.claim == m.claim)
                .cloned()
                .unwrap_or(m);
            if matches!(kept.stopped.as_str(), "interrupted" | "budget spent") {
                kept.stopped.clear();
            }
            kept
        })
        .collect()
}

/// The plan's cell indices of a comparison's cells, in its order; `None` without one.
fn cells_of(m: &Measured, refs: &[CellRef]) -> Option<Vec<usize>> {
    let c = m.claim.comparison.as_ref()?;
    c.cells().into_iter().map(|r| position(r, refs)).collect()
}

/// How pairs get measured: one repetition of a plan cell in a child of its own, or a
/// block of pairs of a comparison's cells in one child (`child`).
pub trait Runner {
    /// One repetition of plan cell `cell` for pair `pair`; `None` when interrupted.
    fn one(&mut self, cell: usize, pair: usize) -> Option<Repetition>;
    /// Whether `block` can measure pairs of these plan cells in one process.
    fn blocks(&self, _cells: &[usize]) -> bool {
        false
    }
    /// Slices per side in one pair of these plan cells compared on `figure`: above 1
    /// where `block` can keep them resident and alternate them in short turns
    /// (`harness::slices`), 1 where each pair measures whole windows.
    fn slices(&self, _cells: &[usize], _figure: &str) -> usize {
        1
    }
    /// `count` pairs of `cells` in one child, each pair's records in `cells`' order, the
    /// first of them pair `start` of the comparison (which fixes the order of its sides),
    /// interleaved in `slices` turns a side where above 1; `None` when interrupted,
    /// `Some(Err(why))` when it failed.
    fn block(
        &mut self,
        _cells: &[usize],
        _count: usize,
        _start: usize,
        _slices: usize,
    ) -> Option<Result<Block, String>> {
        Some(Err("no block mode".to_owned()))
    }
    /// What a block of `count` pairs of `cells` is expected to cost.
    fn block_cost(&self, _cells: &[usize], _count: usize, _slices: usize) -> Duration {
        Duration::ZERO
    }
}

/// What a block of pairs gave: each pair's records in its cells' order, and the turns
/// per side each pair was cut into (1: whole windows).
pub struct Block {
    /// The pairs.
    pub pairs: Vec<Vec<Repetition>>,
    /// Turns per side in each pair.
    pub slices: usize,
}

/// Why a comparison stops now, if it does.
fn stop_reason(m: &Measured) -> Option<&'static str> {
    if m.done() {
        return Some(match m.outcome() {
            Outcome::Inconclusive => "most pairs",
            _ => "decided",
        });
    }
    futile(m).then_some("would not decide within the most pairs at this noise")
}

/// Whether an undecided comparison, at a look of at least two, could not decide even at
/// the most pairs: its interval narrowed as 1/sqrt(pairs) from what it is now (less a
/// fifth, to err towards going on) still spans a threshold around today's median. Its
/// time then goes to the others; stopping early never costs the interval its validity.
fn futile(m: &Measured) -> bool {
    let n = m.pairs.len();
    let most = m.looks.last();
    let (Some(c), Some(i)) = (&m.claim.comparison, m.interval()) else {
        return false;
    };
    let second = m.looks.counts().get(1).copied().unwrap_or(usize::MAX);
    if n < second || !m.looks.is_look(n) || m.outcome() != Outcome::Inconclusive {
        return false;
    }
    let half = (i.high / i.low).ln() / 2.0;
    let projected = 0.8 * half * (n as f64 / most as f64).sqrt();
    let centre = i.ratio.ln();
    c.rule
        .outcome((centre - projected).exp(), (centre + projected).exp())
        == Outcome::Inconclusive
}

/// What [`measure`] gives pairs to.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Reach {
    /// Every part until it stops.
    All,
    /// Every part but a placebo past its floor: what can change a verdict or show a
    /// figure, and the instrument's error at its floor. Why apart: the matrix's rounds
    /// the budget left out come next (`matrix`), and narrower cells are worth more to a
    /// reader than a placebo narrowed past its floor, which is all a run here gave its
    /// last 100 s to (run AI, 20261207T152208Z, with a third round cut for the pairs).
    PastFloorsLater,
}

/// Measures pairs for every part in `parts` (as far as `reach` says) until each has
/// stopped or `deadline` passes. `run` runs one repetition of a plan cell (`None`:
/// interrupted); `saved` is called after each look so a stop loses at most one look's
/// pairs. Returns false when interrupted.
pub fn measure(
    parts: &mut [Measured],
    cells: &[CellSpec<'_>],
    deadline: Option<Instant>,
    reach: Reach,
    run: &mut dyn Runner,
    saved: &mut dyn FnMut(&[Measured]),
) -> bool {
    let refs: Vec<CellRef> = cells.iter().map(cell_ref).collect();
    let plans: Vec<Option<Vec<usize>>> = parts.iter().map(|m| cells_of(m, &refs)).collect();
    for (m, p) in parts.iter_mut().zip(&plans) {
        if p.is_none() && m.stopped.is_empty() {
            m.stopped = "not measured: no comparison".to_owned();
        }
    }
    loop {
        // In tiers: every undecided deciding part to the plan's least pairs first (fewest
        // first), so no part is left at a first look while another takes its fifth (a run
        // here gave an undecided 389 DS part 128 pairs while decided ones stopped at 16);
        // then, still undecided (or decided but wider than [`wide`] below its least), its
        // looks up to twice that ([`UNDECIDED_FIRST`]); then
        // every other part to its floor (a decided part; a size, its `SIZE_PAIRS`; the
        // placebo, its `PLACEBO_PAIRS`); then the undecided deciding parts beyond it, then the decided
        // ones not yet narrow, and only then the placebo beyond its floor (and a size,
        // where one is not looked at once, as in a resumed run from before; once, it
        // stops at its count): a deciding part's pairs can change a verdict, theirs only
        // narrow a figure shown beside it. Within a tier past the floors, the one that has had the least time.
        // Only the first tier runs past the deadline (`least`): a run here with 20 parts
        // gave one undecided part 103 pairs while the decided ones kept 9.
        let later = |m: &Measured| {
            reach == Reach::PastFloorsLater && m.claim.placebo && m.pairs.len() >= floor(&m.claim)
        };
        let next = (0..parts.len())
            .filter(|&i| parts[i].stopped.is_empty() && plans[i].is_some())
            .filter(|&i| !later(&parts[i]))
            .filter(|&i| stop_reason(&parts[i]).is_none())
            .min_by(|&a, &b| {
                let tier = |i: usize| tier(&parts[i]);
                tier(a)
                    .cmp(&tier(b))
                    .then(if tier(a) < 3 {
                        parts[a].pairs.len().cmp(&parts[b].pairs.len())
                    } else {
                        std::cmp::Ordering::Equal
                    })
                    .then(parts[a].seconds.total_cmp(&parts[b].seconds))
            });
        let Some(i) = next else { break };
        let order = plans[i].as_deref().unwrap_or_default();
        let spent = parts[i].seconds;
        let target = parts[i]
            .looks
            .next(parts[i].pairs.len())
            .unwrap_or(parts[i].pairs.len());
        let mut records = Vec::new();
        let figure = parts[i]
            .claim
            .comparison
            .as_ref()
            .map_or("", |c| c.figure.as_str());
        let slices = run.slices(order, figure);
        if slices > 1 || run.blocks(order) {
            let chain = (slices == 1)
                .then(|| chain(parts, i, &plans, run))
                .flatten();
            let m = &mut parts[i];
            m.slices = slices;
            let windows = match &chain {
                Some(c) => Windows {
                    cells: c.cells.clone(),
                    mine: c.members[0].1.to_vec(),
                    most: c.most,
                },
                None => Windows {
                    cells: order.to_vec(),
                    mine: (0..order.len()).collect(),
                    most: usize::MAX,
                },
            };
            let went_on = block(m, &windows, target, deadline, run, &mut records);
            let mut seconds = m.seconds - spent;
            if let Some(c) = &chain {
                // Every pair of adjacent windows served a part: each is charged its share
                // of the block, the picked part what a companion that took no pair (its
                // figure missing) leaves, so the block's seconds are all counted.
                seconds /= c.members.len() as f64;
                for &(j, at) in &c.members[1..] {
                    let theirs = project(&records, &at);
                    let before = parts[j].pairs.len();
                    parts[j].slices = 1;
                    take(&mut parts[j], &theirs, seconds);
                    share(parts, j, &plans, &theirs, seconds);
                    if parts[j].pairs.len() > before {
                        parts[i].seconds -= seconds;
                    }
                }
            }
            share(parts, i, &plans, &project(&records, &windows.mine), seconds);
            saved(parts);
            if !went_on {
                return false;
            }
            continue;
        }
        let m = &mut parts[i];
        let cost: Duration = order
            .iter()
            .map(|&c| cells[c].file.run_cost(cells[c].threads))
            .sum();
        while m.pairs.len() < target {
            // The least pairs run whatever the clock says (see `block`).
            if least(m) == 0 && deadline.is_some_and(|d| Instant::now() + cost > d) {
                m.stopped = "budget spent".to_owned();
                break;
            }
            let started = Instant::now();
            match one_pair(m, order, cells, run) {
                Ok((figures, pair)) => {
                    m.push(figures, busy(&pair));
                    records.push(pair);
                }
                Err(None) => {
                    m.seconds += started.elapsed().as_secs_f64();
                    m.stopped = "interrupted".to_owned();
                    saved(parts);
                    return false;
                }
                Err(Some(why)) => {
                    m.stopped = why;
                    m.seconds += started.elapsed().as_secs_f64();
                    break;
                }
            }
            m.seconds += started.elapsed().as_secs_f64();
        }
        settle(m);
        let seconds = m.seconds - spent;
        share(parts, i, &plans, &records, seconds);
        saved(parts);
    }
    true
}

/// How many pairs an undecided deciding part takes before any other part gets its floor:
/// twice the plan's least. Why before the floors: a default run here (20261206T102357Z)
/// stopped 389 DS's `threads_past_cpus` for the budget at its least 24 pairs, undecided,
/// while sizes and placebos took their floors first; a size's figure without pairs is a
/// figure missing, a deciding part without its next look can be a verdict missing. Why
/// bounded: a part near its threshold could take every pair of the run (the `futile`
/// check stops only the hopeless), and then no size or placebo would be shown at all.
pub const UNDECIDED_FIRST: usize = 2 * MIN_PAIRS;

/// How wide a decided part's interval may be (half its width, relative) and still give
/// way to a size's floor: twice its precision (+-6% at the default +-3%). Why: run
/// 20261206T233559Z stopped sqlmix's `go-client/k2_beats_unlimited` at its first look,
/// decided at 1.522 [1.362-1.593] (+-8%), for the budget that then gave every size its
/// nine pairs; a verdict whose figure moves that much from run to run is one a reader
/// cannot compare.
pub fn wide(m: &Measured) -> f64 {
    2.0 * m.precision
}

/// Which part's pairs go first: the lower tier (see `measure`). A decided deciding part
/// still wider than [`wide`] below the least pairs ranks as an undecided one does.
fn tier(m: &Measured) -> u8 {
    let deciding = !m.claim.size_only && !m.claim.placebo;
    let n = m.pairs.len();
    let too_wide = n < MIN_PAIRS && m.interval().is_some_and(|i| i.half_width() > wide(m));
    let undecided = m.outcome() == Outcome::Inconclusive || too_wide;
    match (deciding && undecided, n < floor(&m.claim)) {
        (true, true) => 0,
        (true, false) if n < UNDECIDED_FIRST => 1,
        (false, true) => 2,
        (true, false) => 3,
        (false, false) if deciding => 4,
        (false, false) => 5,
    }
}

/// Gives the pairs part `i` just measured (`records`, each pair's records in its cells'
/// order) to every part still going that compares the same cells in the same order: one
/// pair of windows holds every figure of its records (lease's busy times and bytes of one
/// pair of stores), so such parts need not each run their own; each is charged the time.
fn share(
    parts: &mut [Measured],
    i: usize,
    plans: &[Option<Vec<usize>>],
    records: &[Vec<Repetition>],
    seconds: f64,
) {
    if records.is_empty() {
        return;
    }
    for j in 0..parts.len() {
        if j == i || plans[j].is_none() || plans[j] != plans[i] || !parts[j].stopped.is_empty() {
            continue;
        }
        take(&mut parts[j], records, seconds);
    }
}

/// Gives part `m` the figures of pairs measured for another part (`records`, each pair's
/// records in `m`'s cells' order), charged `seconds` if it took any.
fn take(m: &mut Measured, records: &[Vec<Repetition>], seconds: f64) {
    let Some(c) = m.claim.comparison.clone() else {
        return;
    };
    let before = m.pairs.len();
    // A part looked at once takes no more than its count: its level holds for that
    // count fixed in advance, not for whatever another part's looks happened to ask.
    let most = m.looks.last();
    for pair in records {
        if m.pairs.len() >= most {
            break;
        }
        let figures: Option<Vec<f64>> = pair.iter().map(|r| c.figure_of(r)).collect();
        // A pair without this part's figure is left out; the part finds out why when
        // it runs its own.
        if let Some(f) = figures {
            m.push(f, busy(pair));
        }
    }
    if m.pairs.len() > before {
        m.seconds += seconds;
        settle(m);
    }
}

/// Each pair's records at positions `at` (a part's cells within a block's).
fn project(records: &[Vec<Repetition>], at: &[usize]) -> Vec<Vec<Repetition>> {
    records
        .iter()
        .map(|pair| at.iter().filter_map(|&k| pair.get(k).cloned()).collect())
        .collect()
}

/// The block to measure part `i` in ([`Chain`]), if other parts can ride with it: each
/// still going, wanting pairs now, able to join the chain so far, measured in whole
/// windows in one child, and ranked no later than `i` or below its floor (so no window
/// runs for a part the budget would not have reached); at most [`CHAIN_PARTS`], in the
/// order `measure` picks.
fn chain(
    parts: &[Measured],
    i: usize,
    plans: &[Option<Vec<usize>>],
    run: &dyn Runner,
) -> Option<Chain> {
    let mut chain = Chain::of(i, plans[i].as_deref()?)?;
    let ceiling = tier(&parts[i]).max(2);
    let mut riders: Vec<(usize, usize)> = (0..parts.len())
        .filter(|&j| j != i && parts[j].stopped.is_empty() && stop_reason(&parts[j]).is_none())
        .filter(|&j| tier(&parts[j]) <= ceiling)
        .filter_map(|j| {
            let m = &parts[j];
            let theirs = plans[j].as_deref()?;
            let figure = m.claim.comparison.as_ref()?.figure.as_str();
            let wanted = m.looks.next(m.pairs.len())?.saturating_sub(m.pairs.len());
            (wanted > 0 && run.slices(theirs, figure) == 1).then_some((j, wanted))
        })
        .collect();
    riders.sort_by(|&(a, _), &(b, _)| {
        let (x, y) = (&parts[a], &parts[b]);
        tier(x)
            .cmp(&tier(y))
            .then(x.pairs.len().cmp(&y.pairs.len()))
            .then(x.seconds.total_cmp(&y.seconds))
    });
    while chain.members.len() < CHAIN_PARTS {
        let Some((k, longer)) = riders.iter().enumerate().find_map(|(k, &(j, _))| {
            let (longer, _) = chain.joined(j, plans[j].as_deref()?)?;
            run.blocks(&longer.cells).then_some((k, longer))
        }) else {
            break;
        };
        let (_, wanted) = riders.remove(k);
        chain = Chain {
            most: longer.most.min(wanted),
            ..longer
        };
    }
    (chain.members.len() > 1).then_some(chain)
}

/// The pairs a part still takes whatever the clock says: up to [`MIN_PAIRS`] while it is
/// undecided; a part decided at an earlier look, a measurement of size only (no verdict
/// rests on it) or the placebo, its first look (a size's only one: `plan::parts::floor`).
fn least(m: &Measured) -> usize {
    let decided = !m.pairs.is_empty() && m.outcome() != Outcome::Inconclusive;
    let want = if decided || m.claim.size_only || m.claim.placebo {
        m.looks.first()
    } else {
        MIN_PAIRS
    };
    want.saturating_sub(m.pairs.len())
}

/// Marks a comparison stopped when its pairs say so.
fn settle(m: &mut Measured) {
    if m.stopped.is_empty() {
        if let Some(why) = stop_reason(m) {
            m.stopped = why.to_owned();
        }
    }
}

/// The windows one block runs a pair: its plan cells in order, where the measured
/// comparison's own cells sit among them (a chain runs its companions' cells too), and
/// the most pairs it asks now.
struct Windows {
    /// Plan cells in the block's order.
    cells: Vec<usize>,
    /// Positions in `cells` of the comparison's cells, in its order.
    mine: Vec<usize>,
    /// The most pairs this block runs (a chain's companions want no more).
    most: usize,
}

/// Pairs up to `target` (and at most `windows.most` now) for a comparison as one block in
/// one child (as many as fit before `deadline`), interleaved in `m.slices` turns a side
/// where above 1. `kept` gets each pair's records in the block's cells' order. False when
/// interrupted.
fn block(
    m: &mut Measured,
    windows: &Windows,
    target: usize,
    deadline: Option<Instant>,
    run: &mut dyn Runner,
    kept: &mut Vec<Vec<Repetition>>,
) -> bool {
    let Windows { cells, mine, most } = windows;
    let mut count = (target - m.pairs.len()).min(*most);
    // An undecided part's least pairs ([`MIN_PAIRS`]) run whatever the clock says: the
    // plan gave them their time before anything ran, and a part cut below them is one
    // the run could have decided (a part budget-stopped at 9 pairs decides nothing).
    // What an estimate got wrong comes out of the pairs beyond them.
    let least = least(m).min(count);
    if let Some(d) = deadline {
        let left = d.saturating_duration_since(Instant::now());
        while count > least && run.block_cost(cells, count, m.slices) > left {
            count -= 1;
        }
    }
    if count == 0 {
        m.stopped = "budget spent".to_owned();
        return true;
    }
    let Some(comparison) = m.claim.comparison.clone() else {
        return true;
    };
    let started = Instant::now();
    let asked = m.slices.max(1);
    let measured = run.block(cells, count, m.pairs.len(), asked);
    m.seconds += started.elapsed().as_secs_f64();
    match measured {
        None => {
            m.stopped = "interrupted".to_owned();
            return false;
        }
        Some(Err(why)) => m.stopped = format!("failed: {why}"),
        Some(Ok(Block { mut pairs, slices })) => {
            m.slices = slices;
            if asked > 1 {
                // Interleaved sides share one window each: their busy CPUs span both
                // sides' turns and say nothing of either's, here or in the parts that
                // share these pairs, so none is kept. Asked, not cut: a block asked to
                // interleave whose warm-up stalled still ran its sides in one process,
                // turn about.
                for r in pairs.iter_mut().flatten() {
                    if let Some(i) = r.0.interference.as_mut() {
                        i.busy_cpus = 0.0;
                    }
                }
            }
            for pair in pairs.iter() {
                if pair.len() != cells.len() {
                    m.stopped = "failed: a pair came back short".to_owned();
                    return true;
                }
                match mine
                    .iter()
                    .map(|&k| comparison.figure_of(&pair[k]).ok_or(&pair[k]))
                    .collect()
                {
                    Ok(figures) => {
                        m.push(figures, busy(mine.iter().map(|&k| &pair[k])));
                        kept.push(pair.clone());
                    }
                    Err(bad) => {
                        m.stopped = format!(
                            "failed: `{}` {} threads: {}",
                            bad.variant,
                            bad.threads,
                            why_no_figure(bad, &comparison.figure)
                        );
                        return true;
                    }
                }
            }
            if pairs.len() < count && m.stopped.is_empty() {
                m.stopped = format!(
                    "failed: the child returned {} of {count} pairs",
                    pairs.len()
                );
            }
        }
    }
    settle(m);
    true
}

/// One pair: every cell of the comparison once, in its order on even pairs and the
/// reverse on odd ones; its figures and records in the comparison's order. `Err(None)`
/// when interrupted, `Err(Some(why))` when a side failed.
fn one_pair(
    m: &Measured,
    order: &[usize],
    cells: &[CellSpec<'_>],
    run: &mut dyn Runner,
) -> Result<(Vec<f64>, Vec<Repetition>), Option<String>> {
    let comparison = m.claim.comparison.as_ref().ok_or(None)?;
    let n = m.pairs.len();
    let mut figures = vec![0.0; order.len()];
    let mut records: Vec<Option<Repetition>> = vec![None; order.len()];
    let mut slots: Vec<usize> = (0..order.len()).collect();
    if n % 2 == 1 {
        slots.reverse();
    }
    for slot in slots {
        let cell = &cells[order[slot]];
        let record = run.one(order[slot], n).ok_or(None)?;
        figures[slot] = comparison.figure_of(&record).ok_or_else(|| {
            Some(format!(
                "failed: {} {}",
                cell_ref(cell).text(),
                why_no_figure(&record, &comparison.figure)
            ))
        })?;
        records[slot] = Some(record);
    }
    Ok((figures, records.into_iter().flatten().collect()))
}

/// Each window's machine-wide busy CPUs in `pair` (0 where a record has none), kept
/// beside its figures for [`Measured::stalls`].
fn busy<'a>(pair: impl IntoIterator<Item = &'a Repetition>) -> Vec<f64> {
    pair.into_iter()
        .map(|r| r.interference.as_ref().map_or(0.0, |i| i.busy_cpus))
        .collect()
}

/// Why a side's record gives the comparison no figure: its failure, its failed check, or
/// the figure missing.
fn why_no_figure(r: &CellRecord, figure: &str) -> String {
    r.failure
        .clone()
        .or(r.verify_error.clone())
        .unwrap_or_else(|| format!("has no figure {figure}"))
}

/// One line for the log once the comparisons are done: parts per outcome and the time.
pub fn total_line(parts: &[Measured]) -> Option<String> {
    if parts.is_empty() {
        return None;
    }
    let count = |o: Outcome| parts.iter().filter(|m| m.outcome() == o).count();
    let mut why: Vec<(&str, usize)> = Vec::new();
    for m in parts
        .iter()
        .filter(|m| m.outcome() == Outcome::Inconclusive)
    {
        match why.iter_mut().find(|(r, _)| *r == m.reason()) {
            Some((_, n)) => *n += 1,
            None => why.push((m.reason(), 1)),
        }
    }
    let why: Vec<String> = why.iter().map(|(r, n)| format!("{n} {r}")).collect();
    let seconds = measuring_seconds(parts);
    Some(format!(
        "parts: {} shown, {} contradicted, {} inconclusive{}; {} pairs in {}",
        count(Outcome::Shown),
        count(Outcome::Contradicted),
        count(Outcome::Inconclusive),
        if why.is_empty() {
            String::new()
        } else {
            format!(" ({})", why.join(", "))
        },
        parts.iter().map(|m| m.pairs.len()).sum::<usize>(),
        humantime::format_duration(Duration::from_secs(seconds as u64))
    ))
}

/// The time the pairs took: each part's own seconds, those of parts on the same cells in
/// the same order counted once. Why: [`share`] charges every part that took a pair's
/// figures the pair's time, so that a part says what its figures cost; summed as they
/// are, lease's seven parts on two pairs of cells counted their windows up to four times (a
/// run here reported 8 min 16 s of pairs where 7 min 18 s ran). Such parts share while
/// both go on, so the one that went on longest holds the others' seconds.
pub fn measuring_seconds(parts: &[Measured]) -> f64 {
    let mut groups: Vec<(Vec<&CellRef>, f64)> = Vec::new();
    for m in parts {
        let cells = m
            .claim
            .comparison
            .as_ref()
            .map(|c| c.cells())
            .unwrap_or_default();
        match groups
            .iter_mut()
            .find(|(c, _)| !cells.is_empty() && *c == cells)
        {
            Some((_, s)) => *s = s.max(m.seconds),
            None => groups.push((cells, m.seconds)),
        }
    }
    groups.iter().map(|(_, s)| s).sum()
}
