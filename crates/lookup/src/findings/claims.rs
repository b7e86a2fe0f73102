//! The parts of seed 002's claim as the lab decides them on its own directory designs:
//! each a paired comparison of the seed's design (the baseline, which takes a lock on every
//! read) against a control that takes none, on the same cells, so that what every design
//! loses on this machine (memory, the VM's CPUs) is not counted against the lock.
//!
//! The parts, always all three and in this order ([`PARTS`]):
//! 1. [`SHORT_OF_LINEAR`]: the baseline's scaling from 1 thread to threads = CPUs,
//!    X(CPUs) / X(1), over the control's same scaling;
//! 2. [`PER_THREAD_PAST_KNEE`]: the baseline's X(P) / X(knee) over the control's, with P
//!    past the seed's knee and below the CPUs where the plan has such a count, else at
//!    them (the seed's "after t4 we immediately see a per thread decline", with idle
//!    cores), so it needs more CPUs than the knee;
//! 3. [`LOSS_PAST_CORES`]: the baseline's X(most threads) / X(threads = CPUs) over the
//!    control's (the seed's "the decline intensifies once we exceed the CPU").
//!
//! Per-thread figures need no scale here: both sides of a part run the same thread counts,
//! so X / threads divides out. Not here: wording the answer (`findings`), measuring pairs
//! or spending the budget (`lab`).

use harness::decide::{CellRef, Claim, Comparison, Planned, Rule, Side};
use harness::findings::Seeds;

use crate::variants::VariantName;

/// The scenario file whose cells the parts compare.
pub const FILE: &str = "lookup";

/// Part: the baseline falls further short of linear, up to the CPUs, than the control.
pub const SHORT_OF_LINEAR: &str = "short_of_linear";
/// Part: past the seed's knee, up to the CPUs, the baseline gains less than the control.
pub const PER_THREAD_PAST_KNEE: &str = "per_thread_past_knee";
/// Part: past the CPUs the baseline keeps less of its throughput than the control.
pub const LOSS_PAST_CORES: &str = "loss_past_cores";

/// The question's parts, in the order the answer lists them. Scripts read the names.
pub const PARTS: [&str; 3] = [SHORT_OF_LINEAR, PER_THREAD_PAST_KNEE, LOSS_PAST_CORES];

/// Every part's rule on (baseline's scaling) / (control's scaling). Shown below 0.95: the
/// lock costs at least 5% of scaling beyond what the lock-free design loses on the same
/// cells, an effect worth a sentence (the seed's own shortfall, 2500 / 3800 per thread at
/// 4 threads, is 0.66). Contradicted above 0.98: within 2% of the control, or scaling
/// better, the lock costs nothing this machine can tell from what every design pays.
/// Between them an effect of 2-5% stays inconclusive, which is the honest answer for it.
pub const RULE: Rule = Rule::Below {
    shown: 0.95,
    contradicted: 0.98,
};

/// The seed's design when the `[seed]` table names none: the entry cache whose every read
/// updates its bookkeeping under a lock, else the big lock.
const DEFAULT_BASELINE: &[&str] = &[
    VariantName::EntryCache.name(),
    VariantName::GlobalMutex.name(),
];

/// The control when the `[seed]` table names none: designs whose reads take no lock
/// (`arc-swap-snapshot`: one atomic load and per-thread counters; `lmdb`: MVCC readers).
/// `dashmap` and the reader-writer locks take a (shared) lock on every read, so they are
/// no control.
const DEFAULT_CONTROL: &[&str] = &[
    VariantName::ArcSwapSnapshot.name(),
    VariantName::Lmdb.name(),
];

/// The seed's knee when the `[seed]` table has none: "after t4 we immediately see a per
/// thread decline".
pub const DEFAULT_KNEE: usize = 4;

/// What the `[seed]` table of `lookup.toml` says the parts compare.
#[derive(Debug, Clone, PartialEq)]
pub struct Designs {
    /// The seed's design, in order of preference (`baseline`).
    pub baseline: Vec<String>,
    /// Lock-free controls, in order of preference (`control`).
    pub control: Vec<String>,
    /// The seed's knee in threads (`knee_threads`).
    pub knee: usize,
}

impl Designs {
    /// The designs `seeds` name, or the defaults where they name none.
    pub fn of(seeds: Seeds<'_>) -> Designs {
        let list = |key: &str, default: &[&str]| {
            let mut v = seeds.strs(FILE, key);
            if v.is_empty() {
                v.extend(seeds.str(FILE, key).map(str::to_owned));
            }
            if v.is_empty() {
                v = default.iter().map(|s| (*s).to_owned()).collect();
            }
            v
        };
        Designs {
            baseline: list("baseline", DEFAULT_BASELINE),
            control: list("control", DEFAULT_CONTROL),
            knee: seeds
                .f64(FILE, "knee_threads")
                .filter(|k| *k >= 1.0)
                .map_or(DEFAULT_KNEE, |k| k as usize),
        }
    }
}

/// What part `part` claims, in the user's words (the same with or without a plan, so an
/// answer can name a part its run did not declare).
pub fn claim_words(part: &str, knee: usize) -> String {
    match part {
        SHORT_OF_LINEAR => "the seed's design (a lock on every read) scales from 1 thread to \
                            threads = CPUs at least 5% less than a lock-free control on the \
                            same CPUs"
            .to_owned(),
        PER_THREAD_PAST_KNEE => format!(
            "past the seed's knee ({knee} threads), up to the CPUs (no thread waiting for \
             one), the seed's design gains at least 5% less throughput than a lock-free \
             control on the same CPUs"
        ),
        LOSS_PAST_CORES => "past the CPUs (the most threads against threads = CPUs) the seed's \
                            design keeps at least 5% less of its throughput than a lock-free \
                            control on the same CPUs"
            .to_owned(),
        other => format!("unknown part {other}"),
    }
}

/// The question's parts among the cells `planned` will run: [`PARTS`], each decided by a
/// paired comparison, or [`Claim::cannot`] saying what would make it decidable.
pub fn claims(planned: &Planned<'_>) -> Vec<Claim> {
    let designs = Designs::of(planned.seeds());
    let knee = designs.knee;
    let has = |v: &str| planned.of_file(FILE).iter().any(|c| c.variant == v);
    let baseline = designs.baseline.iter().find(|v| has(v));
    let control = designs
        .control
        .iter()
        .find(|v| has(v) && Some(*v) != baseline);
    let (Some(base), Some(ctl)) = (baseline, control) else {
        let why = match baseline {
            None => format!(
                "no cell of the seed's design ({}) is planned in {FILE}.toml: run it with \
                 that variant",
                designs.baseline.join(" or ")
            ),
            Some(_) => format!(
                "no cell of a lock-free control ({}) is planned in {FILE}.toml: run it with \
                 that variant",
                designs.control.join(" or ")
            ),
        };
        return PARTS
            .iter()
            .map(|p| Claim::cannot(p, claim_words(p, knee), why.clone()))
            .collect();
    };
    let pair = Pair { planned, base, ctl };
    let most = planned.cores(FILE).last().copied().unwrap_or(0);
    vec![
        short_of_linear(&pair, most, knee),
        per_thread_past_knee(&pair, most, knee),
        loss_past_cores(&pair, most, knee),
    ]
}

/// The baseline and the control among one plan's cells.
struct Pair<'p, 'a> {
    planned: &'p Planned<'a>,
    base: &'p str,
    ctl: &'p str,
}

impl Pair<'_, '_> {
    /// Both designs' planned cells at `threads` on `cores`, as planned (with their full
    /// parameters: lookup.toml sweeps none, so one cell per variant, threads and cores).
    fn at(&self, threads: usize, cores: usize) -> Option<(CellRef, CellRef)> {
        let find = |v: &str| self.planned.find(FILE, v, threads, cores).cloned();
        Some((find(self.base)?, find(self.ctl)?))
    }

    /// The thread counts both designs have on `cores`, ascending.
    fn threads(&self, cores: usize) -> Vec<usize> {
        self.planned
            .threads(FILE, cores)
            .into_iter()
            .filter(|t| self.at(*t, cores).is_some())
            .collect()
    }

    /// The core counts of the plan, most first.
    fn cores_down(&self) -> Vec<usize> {
        let mut c = self.planned.cores(FILE);
        c.reverse();
        c
    }

    /// The baseline's `hi` over `lo` threads against the control's, on `cores`.
    fn scaling(&self, hi: usize, lo: usize, cores: usize) -> Option<Comparison> {
        let (bh, ch) = self.at(hi, cores)?;
        let (bl, cl) = self.at(lo, cores)?;
        Some(Comparison::throughput(
            Side::ratio(bh, bl),
            Side::ratio(ch, cl),
            RULE,
        ))
    }
}

/// [`SHORT_OF_LINEAR`] on the most CPUs (more than one) whose 1-thread and threads = CPUs
/// cells both designs have.
fn short_of_linear(pair: &Pair<'_, '_>, most: usize, knee: usize) -> Claim {
    let words = claim_words(SHORT_OF_LINEAR, knee);
    let found = pair
        .cores_down()
        .into_iter()
        .filter(|c| *c > 1)
        .find_map(|c| pair.scaling(c, 1, c));
    match found {
        // Size only: `entry-cache` takes a mutex and moves the entry to the LRU front on
        // every read, the control one atomic load, so which scales worse is known before
        // the run; how much worse is what it measures.
        Some(cmp) => Claim::decided_by(SHORT_OF_LINEAR, words, cmp).sized(),
        None if most <= 1 => Claim::cannot(
            SHORT_OF_LINEAR,
            words,
            format!(
                "needs 2 CPUs or more (threads = CPUs above 1 thread); this plan's most is \
                 {most}"
            ),
        ),
        None => Claim::cannot(
            SHORT_OF_LINEAR,
            words,
            format!(
                "needs `{}` and `{}` at 1 thread and at threads = CPUs on the same CPUs, \
                 which this plan lacks",
                pair.base, pair.ctl
            ),
        ),
    }
}

/// [`PER_THREAD_PAST_KNEE`] on the most CPUs above the knee, from the knee to the most
/// threads both designs have past the knee and below the CPUs (else at the CPUs).
fn per_thread_past_knee(pair: &Pair<'_, '_>, most: usize, knee: usize) -> Claim {
    let words = claim_words(PER_THREAD_PAST_KNEE, knee);
    let found = pair
        .cores_down()
        .into_iter()
        .filter(|c| *c > knee)
        .find_map(|c| {
            let past: Vec<usize> = pair
                .threads(c)
                .into_iter()
                .filter(|t| *t > knee && *t <= c)
                .collect();
            // The most threads that still leave a CPU idle, as the seed saw it ("even
            // with idle cores"); threads = CPUs where no count between lies past the knee.
            let p = past
                .iter()
                .copied()
                .filter(|t| *t < c)
                .max()
                .or_else(|| past.last().copied())?;
            pair.scaling(p, knee, c)
        });
    match found {
        Some(cmp) => Claim::decided_by(PER_THREAD_PAST_KNEE, words, cmp),
        None if most <= knee => Claim::cannot(
            PER_THREAD_PAST_KNEE,
            words,
            format!(
                "needs a machine with {} CPUs or more (more than the seed's knee of {knee} \
                 threads, so that threads past it still have CPUs free); this plan's most \
                 is {most}",
                knee + 1
            ),
        ),
        None => Claim::cannot(
            PER_THREAD_PAST_KNEE,
            words,
            format!(
                "needs `{}` and `{}` at {knee} threads and at more threads, up to the CPUs, \
                 on the same CPUs, which this plan lacks",
                pair.base, pair.ctl
            ),
        ),
    }
}

/// [`LOSS_PAST_CORES`] on the most CPUs whose threads = CPUs cell and a cell with more
/// threads both designs have, at the most threads there.
fn loss_past_cores(pair: &Pair<'_, '_>, most: usize, knee: usize) -> Claim {
    let words = claim_words(LOSS_PAST_CORES, knee);
    let found = pair.cores_down().into_iter().find_map(|c| {
        let top = pair.threads(c).into_iter().filter(|t| *t > c).max()?;
        pair.scaling(top, c, c)
    });
    match found {
        Some(cmp) => Claim::decided_by(LOSS_PAST_CORES, words, cmp),
        None => Claim::cannot(
            LOSS_PAST_CORES,
            words,
            format!(
                "needs `{}` and `{}` at threads = CPUs and at more threads on the same CPUs \
                 (this plan's most CPUs: {most}), which this plan lacks",
                pair.base, pair.ctl
            ),
        ),
    }
}
