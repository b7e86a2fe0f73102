//! The findings' parts a plan can ask, and the pairs the plan gives each before anything
//! runs: at least [`MIN_PAIRS`], and as many as decide a part at the noise measured here
//! (or [`DEFAULT_NOISE`]), each at what its pairs cost by the cost model.
//!
//! Why planned and not left over: pairs alone decide a part, so a plan that gave the rounds
//! all they asked and the pairs what was left decided nothing on a slow machine. The
//! budget keeps the pairs' time first (`budget::fit` trims the rounds to what is left);
//! the plan says which parts the budget cannot give their pairs. Not here: running pairs
//! or deciding when they stop (`pairs`).

use std::time::Duration;

use verdict::decide::interval::{self, Looks};
use verdict::decide::{CellRef, Claim, Measured, Planned};

use super::{CellSpec, MatrixPlan};

/// The fewest pairs the plan gives a part it can ask: the third look, where a part at the
/// noise here (sd 0.08-0.10 of a pair's log ratio) is +-5% narrow.
pub const MIN_PAIRS: usize = 24;

/// The pairs the plan gives a measurement of size only (no verdict rests on it): a count
/// fixed before they run, looked at once ([`interval::Looks::Once`]), so its interval is
/// at 95% itself rather than at the per-look level of a part that may stop at any of
/// several looks. Seven pairs so at 95% give about +-6% at the noise here (sd 0.07 of a
/// pair's log ratio), where nine at the per-look level gave about +-8%. Why so few: run A
/// of issue 49 spent 331 s of its 582 s of pairs on sizes taken to [`MIN_PAIRS`] and
/// beyond while the parts that decide the verdicts had 150 s; at nine pairs three default
/// runs here (20261206T231507Z and the two after) still spent 138-144 s on sizes while
/// sqlmix's deciding parts stopped at 9-16 pairs, +-3.3-8.5%.
pub const SIZE_PAIRS: usize = interval::ONCE_PAIRS;

/// The placebo's least pairs: its first look, as a deciding part's schedule has it (the
/// placebo is looked at as the parts it vouches for are). Why not a deciding part's
/// [`MIN_PAIRS`]: it is measured on a deciding part's cell, as dear a pair as the parts
/// (sqlmix's real node, about 2.7 s), and at 24 pairs it took 145 s of a default run's
/// pairs (20261206T211801Z) while the deciding parts stopped at 16 for the budget; at 9
/// its interval was +-5% at the noise of those cells (20261206T213710Z), enough to show a
/// bias of the kind it is there for (26-42%), and it takes more once the deciding parts
/// have theirs.
pub const PLACEBO_PAIRS: usize = interval::LOOKS[0];

/// The pairs a part takes before parts of a lower tier get more (`pairs::measure`): a
/// size's [`SIZE_PAIRS`], the placebo's [`PLACEBO_PAIRS`], a deciding part's
/// [`MIN_PAIRS`].
pub fn floor(claim: &Claim) -> usize {
    if claim.placebo {
        PLACEBO_PAIRS
    } else if claim.size_only {
        SIZE_PAIRS
    } else {
        MIN_PAIRS
    }
}

/// The sd of a pair's log ratio the plan assumes for a part no earlier results file
/// measured: two windows back to back vary together, 0.08 of their log ratio here.
pub const DEFAULT_NOISE: f64 = 0.08;

/// The half-width a part's planned pairs aim at.
pub const AIM: f64 = 0.05;

/// The most pairs the plan keeps time for, the last look of a run with a budget
/// ([`interval::Looks::Budgeted`]): a part noisier than the plan can afford (a lock-bound
/// design's pairs vary 0.3-0.5 here) gets this many in the plan and whatever time the
/// others leave at run time, rather than the whole budget.
pub const MOST_PLANNED: usize = 64;

/// One part as the plan sees it: the pairs it is given and what they cost, or why it
/// cannot be asked here.
#[derive(Debug, Clone)]
pub struct PartPlan {
    /// `<hot path>/<part>`.
    pub name: String,
    /// Pairs planned (0 when it cannot be asked).
    pub pairs: usize,
    /// What they cost by the cost model.
    pub cost: Duration,
    /// The noise the count was planned for, and where it came from.
    pub noise: (f64, &'static str),
    /// Why it cannot be asked here (empty when it can).
    pub missing: String,
    /// The earlier part whose pairs it shares (the same cells in the same order, another
    /// figure of the same records: `pairs::share`), which pays for them; empty when it
    /// pays for its own.
    pub shares: String,
    /// How one pair is measured ([`how_paired`]); empty when it cannot be asked.
    pub how: String,
}

/// Every part the plan's hot paths declare, in catalog order, each resolved to the
/// plan's cells or, where a side matches no planned cell, turned into a part that says so.
pub fn declare(plan: &MatrixPlan, cells: &[CellSpec<'_>]) -> Vec<Measured> {
    let refs: Vec<CellRef> = cells.iter().map(cell_ref).collect();
    let seeds = plan.seeds();
    let planned = Planned {
        cells: &refs,
        seeds: &seeds,
    };
    crate::catalog::questions()
        .iter()
        .filter(|h| cells.iter().any(|c| c.file.hot_path.name() == h.name()))
        .flat_map(|h| {
            let mut claims: Vec<Claim> = (h.claims)(&planned)
                .into_iter()
                .map(|claim| resolvable(claim, &refs))
                .collect();
            claims.extend(placebo(&claims, cells, &refs));
            let library = cells
                .iter()
                .any(|c| c.file.hot_path.name() == h.name() && c.file.lock_library);
            if h.hot_path.guards_locks() || (h.hot_path.preloads_locks() && library) {
                claims.extend(crate::pairs::lock_delay::declare(&claims, cells, &refs));
            }
            if h.hot_path.preloads_locks() && library {
                claims.extend(crate::pairs::lock_library::declare(&claims, cells, &refs));
            }
            claims.into_iter().map(|mut claim| {
                claim.hot_path = h.name().to_owned();
                let mut m = Measured::new(claim);
                // A run with a budget never gives a part more than [`MOST_PLANNED`] pairs,
                // so its deciding parts pay only for the looks up to there.
                if plan.budget.is_some() && m.looks == Looks::All {
                    m.looks = Looks::Budgeted;
                }
                m.precision = plan.precision;
                m
            })
        })
        .collect()
}

/// Every cell the plan's parts name: what the budget keeps when it thins the rows of the
/// thread x core matrix (`budget::thin_rows`, `budget::thin_variants`). None without pairs.
pub fn named_points(plan: &MatrixPlan) -> Vec<CellRef> {
    if !plan.pairs {
        return Vec::new();
    }
    declare(plan, &plan.cells())
        .iter()
        .filter_map(|m| m.claim.comparison.as_ref())
        .flat_map(|c| c.cells())
        .cloned()
        .collect()
}

/// The hot path's placebo ([`Claim::placebo`]), where any of its `claims` is decided by
/// pairs: the cheapest cell of the parts that decide its verdict (of its sizes where none
/// does) against itself on its part's figure, measured the way that part is (interleaved,
/// in one child, or two servers resident). Why a deciding part's cell: the placebo is the
/// error of the instrument a verdict rests on; sqlmix's cheapest cell of any part (a size's,
/// 300 ms windows) varied 0.12-0.18 a pair in runs Q and R (20261206T200250Z,
/// 20261206T202311Z) while its deciding parts' 1 s windows varied 0.045-0.07, so it
/// reported an error of +-10-15% for parts measured to +-3%.
fn placebo(claims: &[Claim], cells: &[CellSpec<'_>], refs: &[CellRef]) -> Option<Claim> {
    let cheapest = |deciding_only: bool| {
        claims
            .iter()
            .filter(|c| !deciding_only || !c.size_only)
            .filter_map(|c| c.comparison.as_ref())
            .flat_map(|c| c.cells().into_iter().map(move |r| (r, c.figure.as_str())))
            .filter_map(|(r, figure)| Some((position(r, refs)?, figure)))
            .min_by_key(|&(i, _)| cells[i].file.pair_side_cost(cells[i].threads))
    };
    cheapest(true)
        .or_else(|| cheapest(false))
        .map(|(i, figure)| Claim::placebo(refs[i].clone(), figure))
}

/// A cell as a comparison names it.
pub fn cell_ref(c: &CellSpec<'_>) -> CellRef {
    let mut params = c.params.to_map();
    if let Some(d) = &c.lock_delay {
        params.insert(harness::locks::delay::PARAM.to_owned(), d.text().into());
    }
    if c.without_lock_library {
        params.insert("lock_library".to_owned(), "off".into());
    }
    CellRef {
        file: c.file.file.clone(),
        variant: c.variant.to_owned(),
        threads: c.threads,
        cores: c.cores,
        params,
    }
}

/// The index of the planned cell `r` names.
pub fn position(r: &CellRef, refs: &[CellRef]) -> Option<usize> {
    refs.iter()
        .position(|c| r.matches(&c.file, &c.variant, c.threads, c.cores, &c.params))
}

/// `claim` as declared, or, where a side names a cell the plan lacks, a part that cannot
/// be decided and says which cell.
pub fn resolvable(claim: Claim, refs: &[CellRef]) -> Claim {
    let Some(c) = &claim.comparison else {
        return claim;
    };
    match c.cells().into_iter().find(|r| position(r, refs).is_none()) {
        None => claim,
        Some(lacking) => Claim {
            comparison: None,
            missing: format!("{} is not in this plan", lacking.text()),
            ..claim.clone()
        },
    }
}

/// The pairs and time each declared part gets before anything runs, from what an earlier
/// results file measured of it (`costs`: its pairs' noise and seconds) where one did,
/// else from [`DEFAULT_NOISE`] and the cost model.
pub fn plan_parts(
    plan: &MatrixPlan,
    cells: &[CellSpec<'_>],
    measured: &super::costs::Measured,
) -> Vec<PartPlan> {
    let noise = measured.noise();
    let refs: Vec<CellRef> = cells.iter().map(cell_ref).collect();
    let mut payers: Vec<(Vec<usize>, String)> = Vec::new();
    // Parts that can take companions in one block (`pairs::measure`): the chain of
    // windows so far and the first part's name.
    let mut hosts: Vec<(Chain, String)> = Vec::new();
    declare(plan, cells)
        .into_iter()
        .map(|m| {
            let name = format!("{}/{}", m.claim.hot_path, m.claim.part);
            let sides: Option<Vec<&CellSpec<'_>>> = m.claim.comparison.as_ref().and_then(|c| {
                c.cells()
                    .into_iter()
                    .map(|r| position(r, &refs).map(|i| &cells[i]))
                    .collect()
            });
            let Some(sides) = sides else {
                return PartPlan {
                    name,
                    pairs: 0,
                    cost: Duration::ZERO,
                    noise: (0.0, ""),
                    missing: m.claim.missing.clone(),
                    shares: String::new(),
                    how: String::new(),
                };
            };
            let at: Vec<usize> = m
                .claim
                .comparison
                .iter()
                .flat_map(|c| c.cells())
                .filter_map(|r| position(r, &refs))
                .collect();
            // The lab's own parts are declared against their cell itself and get their
            // other side after the rounds (`pairs::lock_delay`, `pairs::lock_library`): they
            // pay for their own pairs.
            let later = crate::results::LAB_PARTS.contains(&m.claim.part.as_str());
            let shares = match payers.iter().find(|(cells, _)| *cells == at) {
                _ if later => String::new(),
                Some((_, payer)) => payer.clone(),
                None => {
                    payers.push((at.clone(), name.clone()));
                    String::new()
                }
            };
            let (sd, from) = match noise.get(&name) {
                Some(&sd) => (sd, "an earlier run"),
                None => (DEFAULT_NOISE, "assumed"),
            };
            let pairs = if m.claim.size_only || m.claim.placebo {
                floor(&m.claim)
            } else {
                pairs_for(sd)
            };
            let figure = m.claim.comparison.as_ref().map_or("", |c| &c.figure);
            let slices = slices(&sides, figure);
            let chains = !later && shares.is_empty() && slices == 1 && at.len() == 2;
            let host = hosts
                .iter_mut()
                .filter(|(h, _)| chains && h.members.len() < CHAIN_PARTS)
                .find_map(|(h, name)| {
                    let (longer, own) = h.joined(usize::MAX, &at)?;
                    one_block(&longer.cells, cells).then_some((h, name, longer, own))
                });
            let mut how = how_paired(&sides, slices);
            let mut rode = false;
            let cost = match (shares.is_empty(), measured.pair_seconds().get(&name)) {
                (false, _) => Duration::ZERO,
                (true, Some(&s)) => Duration::from_secs_f64(s * pairs as f64),
                (true, None) => match host {
                    Some((h, host, longer, own)) => {
                        rode = true;
                        how = match longer.cells.len() {
                            3 => format!("{how}, in a trio with {host}"),
                            n => format!("{how}, in a block of {n} windows with {host}"),
                        };
                        *h = longer;
                        // It pays for the one window it adds.
                        pairs_cost(&[&cells[own]], pairs, 1)
                    }
                    None => pairs_cost(&sides, pairs, slices),
                },
            };
            if let Some(chain) = Chain::of(usize::MAX, &at).filter(|_| chains && !rode) {
                hosts.push((chain, name.clone()));
            }
            PartPlan {
                name,
                pairs,
                cost,
                noise: (sd, from),
                missing: String::new(),
                shares,
                how,
            }
        })
        .collect()
}

/// Parts measured in one block whose windows form a chain: each part's two cells are two
/// adjacent windows, so a part that shares a cell with another needs only its own other
/// window beside it, not a pair of its own (a real dqlite node's placebo is 1.35 s a pair
/// instead of 2.7). A trio is the short chain: the first part's other cell, the cell both
/// compare, the companion's other cell. A placebo (a cell against itself) joins at a
/// shared cell as a second window of it, so two parts that share a cell each keep a
/// window of their own: 389 DS's 12-against-2 and 2-against-16 thread parts and its
/// placebo on 2 threads run as 12, 2, 2, 16, and the two deciding parts no longer share
/// a window's luck (in a trio one slow 2-thread window gave one of them 1.352 and the
/// other 0.765 in the same pair). Why adjacent windows: the child runs a block's cells
/// in order and reversed on odd pairs (`child::in_turn`), so each part's two windows stay
/// adjacent in time and each part's sides still alternate which runs first.
#[derive(Debug, Clone, PartialEq)]
pub struct Chain {
    /// Plan cells in the block's order.
    pub cells: Vec<usize>,
    /// Each part in the block, the picked one first: its index among the parts and where
    /// its cells (in its order) sit in `cells`.
    pub members: Vec<(usize, [usize; 2])>,
    /// The most pairs the block asks: the least any companion still wants.
    pub most: usize,
}

/// The most parts one block serves: three (four windows a pair), the two deciding parts
/// of a real server and their placebo. Why no more: every side of a block is a resident
/// server, and each window more is one every part waits through.
pub const CHAIN_PARTS: usize = 3;

impl Chain {
    /// Part `i` alone on its two plan cells.
    pub fn of(i: usize, cells: &[usize]) -> Option<Chain> {
        (cells.len() == 2).then(|| Chain {
            cells: cells.to_vec(),
            members: vec![(i, [0, 1])],
            most: usize::MAX,
        })
    }

    /// This chain with part `j` on plan cells `theirs` joined, and the plan cell of the
    /// window that adds: at an end (its cell equal to the last window's goes there and
    /// its other after it, or its cell equal to the first window's goes there and its
    /// other before it), or, for a placebo, as a second window of its cell where two
    /// parts meet (the part after it then compares the new window). `None` when it can
    /// do neither, has other than two cells, or compares the same two cells as a part
    /// already in it (in the same order it takes the block's pairs anyway,
    /// `pairs::share`; reversed, it measures its own).
    pub fn joined(&self, j: usize, theirs: &[usize]) -> Option<(Chain, usize)> {
        if theirs.len() != 2 {
            return None;
        }
        let sorted = |mut c: [usize; 2]| {
            c.sort_unstable();
            c
        };
        let same = |at: &[usize; 2]| {
            sorted([self.cells[at[0]], self.cells[at[1]]]) == sorted([theirs[0], theirs[1]])
        };
        if self.members.iter().any(|(_, at)| same(at)) {
            return None;
        }
        let last = self.cells.len() - 1;
        let mut chain = self.clone();
        if let Some(k) = (0..2).find(|&k| theirs[k] == self.cells[last]) {
            let mut at = [0; 2];
            at[k] = last;
            at[1 - k] = last + 1;
            chain.cells.push(theirs[1 - k]);
            chain.members.push((j, at));
            return Some((chain, theirs[1 - k]));
        }
        if let Some(k) = (0..2).find(|&k| theirs[k] == self.cells[0]) {
            chain.cells.insert(0, theirs[1 - k]);
            for (_, at) in &mut chain.members {
                *at = at.map(|p| p + 1);
            }
            let mut at = [0; 2];
            at[k] = 1;
            chain.members.push((j, at));
            return Some((chain, theirs[1 - k]));
        }
        let cell = theirs[0];
        let p = (theirs[1] == cell)
            .then(|| self.cells.iter().position(|&c| c == cell))
            .flatten()?;
        chain.cells.insert(p + 1, cell);
        for (_, at) in &mut chain.members {
            let after = at.iter().any(|&q| q > p);
            *at = at.map(|q| if q > p || (q == p && after) { q + 1 } else { q });
        }
        chain.members.push((j, [p, p + 1]));
        Some((chain, cell))
    }
}

/// Whether plan cells `chain` can be one block (`pairs::measure`): one hot path, one CPU
/// mask, window and warm-up (a real server's sides resident side by side, an in-process
/// hot path's in turn in one child).
pub fn one_block(chain: &[usize], cells: &[CellSpec<'_>]) -> bool {
    let first = &cells[chain[0]];
    chain.iter().all(|&i| {
        let c = &cells[i];
        c.file.hot_path.name() == first.file.hot_path.name()
            && c.cores == first.cores
            && c.file.pair_window() == first.file.pair_window()
            && c.file.warmup == first.file.warmup
    })
}

/// The pairs that make a part +-[`AIM`] narrow at noise `sd`: the signed-rank interval's
/// half-width is about z x sd x 1.02 / sqrt(n) (its efficiency against the mean is 3/pi),
/// with z the per-look boundary of a run with a budget; rounded up to a look, at least
/// [`MIN_PAIRS`] and at most [`MOST_PLANNED`].
pub fn pairs_for(sd: f64) -> usize {
    let looks = Looks::Budgeted;
    let n = (looks.z() * sd * 1.02 / AIM).powi(2).ceil() as usize;
    looks
        .counts()
        .iter()
        .copied()
        .find(|&l| l >= n.max(MIN_PAIRS))
        .unwrap_or(looks.last())
        .min(MOST_PLANNED)
}

/// Slices per side in one pair of `sides` compared on `figure` (`harness::slices`): above
/// 1 where the sides can stay resident together and alternate, each side's window cut
/// into turns of about `harness::slices::SLICE` (an even number, so each side leads as often); 1 where
/// they cannot and each pair measures whole windows in turn. They can with `interleave=on` when every side is
/// of one hot path that says so of its cells (`HotPath::interleaves`), on the same CPUs
/// with one window and warm-up, the hot path has no resident mode of its own (a real
/// server's `measure_pairs`), and the figure is throughput (an extra is the whole
/// block's, not a pair's).
pub fn slices(sides: &[&CellSpec<'_>], figure: &str) -> usize {
    let Some(first) = sides.first() else {
        return 1;
    };
    let alike = sides.iter().all(|c| {
        c.file.hot_path.name() == first.file.hot_path.name()
            && c.cores == first.cores
            && c.file.pair_window() == first.file.pair_window()
            && c.file.warmup == first.file.warmup
            && c.file.interleave
            && c.file.hot_path.interleaves(&c.params)
    });
    if !alike || figure != "ops_per_sec" || first.file.hot_path.pairs_in_one_process() {
        return 1;
    }
    // The most turns the window holds; the child cuts fewer where the sides' response
    // times ask longer turns (`harness::slices::Schedule::cut`).
    let n = first.file.pair_window().as_millis() / harness::slices::SLICE.as_millis().max(1);
    (n as usize).max(2) / 2 * 2
}

/// How one pair of `sides` is measured, in the plan's words: interleaved turns where the
/// sides can stay resident and alternate (`slices` above 1); else whole windows, the
/// servers kept running where the hot path keeps both sides resident, or each side built
/// afresh for its window. Why the plan says it: a side that cannot switch fast (a real
/// server, a node started per window) is why its pairs cost what they cost.
pub fn how_paired(sides: &[&CellSpec<'_>], slices: usize) -> String {
    let Some(first) = sides.first() else {
        return String::new();
    };
    let window = humantime::format_duration(first.file.pair_window());
    if slices > 1 {
        format!("{window} a side in up to {slices} interleaved turns, both sides resident")
    } else if first.file.hot_path.pairs_in_one_process() {
        format!("whole {window} windows, each side's server kept running")
    } else {
        format!("whole {window} windows, each side built afresh")
    }
}

/// How many pairs of `sides` one start of their resident servers serves before both are
/// started afresh (`lab pairs` children of at most this many pairs). Why not one start a
/// block: where a server's memory and files land fixes some of its speed for as long as
/// it runs, so every pair of one start carries the same lean, and the spread of those
/// pairs cannot show it: 389 DS's placebo, one start for its 9 pairs, came out 1.050
/// [1.006-1.142] (run 20261206T213710Z) where at 24 pairs over three starts it held 1.0
/// in three runs. Three, an odd count, so that consecutive starts alternate which side
/// starts first (a child swaps them on an odd first pair). Unbounded for sides that are
/// rebuilt for every window or interleaved in one process (one build a block).
pub fn pairs_per_start(sides: &[&CellSpec<'_>], slices: usize) -> usize {
    let servers = slices <= 1
        && sides
            .first()
            .is_some_and(|c| c.file.hot_path.pairs_in_one_process());
    if servers {
        3
    } else {
        usize::MAX
    }
}

/// What `count` pairs of `sides` cost: interleaved (`slices` above 1), a process start
/// and each side's build and warm-up once, then each window; a hot path that keeps both
/// sides resident (a real server) pays its start once every [`pairs_per_start`] pairs and
/// then each window; any other pays a child's whole run per side per pair, the cost
/// model's upper bound (a block in one child skips the process starts).
pub fn pairs_cost(sides: &[&CellSpec<'_>], count: usize, slices: usize) -> Duration {
    let resident = slices > 1
        || sides
            .first()
            .is_some_and(|c| c.file.hot_path.pairs_in_one_process());
    let starts = count.div_ceil(pairs_per_start(sides, slices)).max(1) as u32;
    sides
        .iter()
        .map(|c| {
            if slices > 1 {
                c.file.overhead + c.file.warmup + c.file.pair_window() * count as u32
            } else if resident {
                c.file.overhead * starts + (c.file.warmup + c.file.pair_window()) * count as u32
            } else {
                c.file.pair_side_cost(c.threads) * count as u32
            }
        })
        .sum()
}

/// The time the planned parts' pairs need together.
pub fn reserve(parts: &[PartPlan]) -> Duration {
    parts.iter().map(|p| p.cost).sum()
}

impl MatrixPlan {
    /// The plan as the results file keeps it.
    pub fn record(&self) -> crate::results::RunPlan {
        crate::results::RunPlan {
            build_seconds: self.build_seconds,
            budget_seconds: self.budget.map(|b| b.as_secs_f64()),
            parts: self
                .parts
                .iter()
                .map(|p| crate::results::PlannedPart {
                    name: p.name.clone(),
                    pairs: p.pairs,
                    seconds: p.cost.as_secs_f64(),
                    noise: p.noise.0,
                    missing: p.missing.clone(),
                })
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_part_gets_the_least_pairs_at_the_noise_here_and_more_when_noisier() {
        assert_eq!(pairs_for(0.05), MIN_PAIRS);
        assert_eq!(pairs_for(DEFAULT_NOISE), MIN_PAIRS);
        // 0.15: (2.61 x 0.15 x 1.02 / 0.05)^2 = 64 pairs.
        assert_eq!(pairs_for(0.15), 64);
        assert_eq!(pairs_for(0.5), MOST_PLANNED);
    }
}
