//! The parts of the seed's claim as comparisons of the cells a plan runs: which cells each
//! part compares, on which figure, and what ratio counts as shown or contradicted. The
//! sides come from the plan (`Planned`), never from this machine's size, so the same
//! code declares 2-CPU and 64-CPU comparisons.
//!
//! Not here: measuring pairs (`lab`), reading their outcomes (`super::answer`), the
//! profile part's shares (`super::profile`).

use harness::decide::{CellRef, Claim, Comparison, Planned, Rule, Side};

use super::FILE;
use crate::ds389;

/// The variant every part compares.
pub const VARIANT: &str = crate::Kind::Ds389.name();

/// Part (a): more server threads than CPUs cost total throughput.
pub const THREADS_PAST_CPUS: &str = "threads_past_cpus";
/// Part (b): the seed's recommendation (threads = CPUs) against the server's default.
pub const RECOMMENDATION: &str = "recommendation";
/// Part (c): per-thread decline while CPUs are free.
pub const PER_THREAD_WITH_CPUS_FREE: &str = "per_thread_with_cpus_free";
/// Part (d): where the server's time goes as threads grow.
pub const WHERE_TIME_GOES: &str = "where_time_goes";

/// Part (a) in words.
pub const THREADS_PAST_CPUS_CLAIM: &str = "more 389 DS worker threads than CPUs cost total throughput: X at the most threads is below X at threads = CPUs";
/// Part (b) in words.
pub const RECOMMENDATION_CLAIM: &str = "the seed's recommendation, threads = CPUs, does more than 389 DS's own autotuned default (nsslapd-threadnumber: -1) and the seed's 16";
/// Part (c) in words.
pub const PER_THREAD_WITH_CPUS_FREE_CLAIM: &str = "per-thread throughput falls as threads rise while CPUs are free (threads below the server's CPUs, the clients on other CPUs)";
/// Part (d) in words.
pub const WHERE_TIME_GOES_CLAIM: &str = "some server functions take a growing share of the server's on-CPU time from 1 thread to the most threads (its own differential profile)";

/// The seed's 16 where its `[seed]` table does not say: "a curve which starts at 16
/// threads from 1 to 4 cores".
pub const SEED_THREADS: usize = 16;

/// Costing at least 5% of throughput is a cost worth the seed's claim; within 2% (or a
/// gain) is no cost. The band between stays inconclusive rather than forcing a word.
const COST: Rule = Rule::Below {
    shown: 0.95,
    contradicted: 0.98,
};

/// A default worth changing must give at least 5% more; under 2% more (or less) is not
/// worth a change of default, so it contradicts the recommendation.
const GAIN: Rule = Rule::Above {
    shown: 1.05,
    contradicted: 1.02,
};

/// Per-thread at t threads at most 0.90 of 1 thread's is a decline like the seed's (it
/// saw 0.66 at 4 threads); at least 0.95 is near-linear scaling, no decline to speak of.
/// Wider than the other rules because even a server with no contention loses some per
/// thread to the shared clients and kernel.
const DECLINE: Rule = Rule::Below {
    shown: 0.90,
    contradicted: 0.95,
};

/// The fixed list of parts for a plan, on this machine's CPUs.
pub fn claims(planned: &Planned<'_>) -> Vec<Claim> {
    claims_on(planned, crate::procstat::machine_cpus().len())
}

/// The fixed list of parts for a plan on a machine of `nproc` CPUs, in order.
pub fn claims_on(planned: &Planned<'_>, nproc: usize) -> Vec<Claim> {
    let widest = widest(planned);
    let against = widest.and_then(|c| recommendation_other(planned, c));
    vec![
        threads_past_cpus(planned, widest, against.as_ref().map(|(t, _)| *t)),
        recommendation(planned, widest, against),
        per_thread_with_cpus_free(planned, nproc),
        Claim::cannot(
            WHERE_TIME_GOES,
            WHERE_TIME_GOES_CLAIM,
            "read from the server's own profiles of the 1-thread and the most-threads cells on the most CPUs, not measured as pairs",
        ),
    ]
}

/// The most CPUs the plan runs 389 DS on.
fn widest(planned: &Planned<'_>) -> Option<usize> {
    planned
        .of_file(FILE)
        .iter()
        .filter(|c| c.variant == VARIANT)
        .map(|c| c.cores)
        .max()
}

fn cell(planned: &Planned<'_>, threads: usize, cores: usize) -> Option<CellRef> {
    planned.find(FILE, VARIANT, threads, cores).cloned()
}

fn threads_at(planned: &Planned<'_>, cores: usize) -> Vec<usize> {
    let mut v: Vec<usize> = planned
        .of_file(FILE)
        .iter()
        .filter(|c| c.variant == VARIANT && c.cores == cores)
        .map(|c| c.threads)
        .collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// What the recommendation is compared against on `cores` CPUs, and in words: the
/// autotuned count where it differs from the CPUs, else the seed's 16 (on 16 or more CPUs
/// the autotuned count is the CPUs); `None` when both are the CPUs.
pub fn recommendation_other(planned: &Planned<'_>, cores: usize) -> Option<(usize, String)> {
    let auto = ds389::autotuned_threads(cores);
    let seed = planned
        .seeds()
        .f64(FILE, "autotune_floor")
        .map_or(SEED_THREADS, |v| v as usize);
    if auto != cores {
        let also = if auto == seed {
            format!(", which is also the seed's {seed}: one comparison serves both")
        } else {
            String::new()
        };
        Some((
            auto,
            format!("389 DS's autotuned default (nsslapd-threadnumber: -1, which it resolves to {auto} on {cores} CPUs{also})"),
        ))
    } else if seed != cores {
        Some((
            seed,
            format!("the seed's {seed} (on {cores} CPUs the autotuned default already is {cores} = the CPUs)"),
        ))
    } else {
        None
    }
}

fn threads_past_cpus(planned: &Planned<'_>, widest: Option<usize>, skip: Option<usize>) -> Claim {
    let cannot = |why: String| Claim::cannot(THREADS_PAST_CPUS, THREADS_PAST_CPUS_CLAIM, why);
    let Some(c) = widest else {
        return cannot("the plan has no 389 DS cell (benches/389ds.toml)".to_owned());
    };
    let past: Vec<usize> = threads_at(planned, c)
        .into_iter()
        .filter(|&t| t > c)
        .collect();
    // The recommendation part already compares the autotuned count against the CPUs:
    // the most threads other than it, so the two parts are two comparisons, not one twice.
    let most = past
        .iter()
        .copied()
        .filter(|&t| Some(t) != skip)
        .max()
        .or_else(|| past.last().copied());
    let (Some(most), Some(at_cpus)) = (most, cell(planned, c, c)) else {
        return cannot(format!(
            "the plan has no 389 DS cells at threads = CPUs ({c}) and above on {c} CPUs"
        ));
    };
    let a = cell(planned, most, c).expect("a planned count");
    // One comparison, on the most CPUs: a 389 DS pair starts two servers (about 4 s), so
    // a comparison per CPU count would double the part's cost.
    Claim::decided_by(
        THREADS_PAST_CPUS,
        THREADS_PAST_CPUS_CLAIM,
        Comparison::throughput(Side::cell(a), Side::cell(at_cpus), COST),
    )
}

fn recommendation(
    planned: &Planned<'_>,
    widest: Option<usize>,
    against: Option<(usize, String)>,
) -> Claim {
    let cannot = |why: String| Claim::cannot(RECOMMENDATION, RECOMMENDATION_CLAIM, why);
    let Some(c) = widest else {
        return cannot("the plan has no 389 DS cell (benches/389ds.toml)".to_owned());
    };
    let Some((other, words)) = against else {
        return cannot(format!(
            "on {c} CPUs threads = CPUs is both the autotuned default and the seed's 16: nothing to compare"
        ));
    };
    match (cell(planned, c, c), cell(planned, other, c)) {
        (Some(a), Some(b)) => Claim::decided_by(
            RECOMMENDATION,
            format!("{RECOMMENDATION_CLAIM}: threads = CPUs ({c}) against {words}"),
            Comparison::throughput(Side::cell(a), Side::cell(b), GAIN),
        ),
        _ => cannot(format!(
            "the plan lacks 389 DS at {c} or {other} threads on {c} CPUs (benches/389ds.toml lists 16 and nproc for this part)"
        )),
    }
}

fn per_thread_with_cpus_free(planned: &Planned<'_>, nproc: usize) -> Claim {
    // CPUs free: the server's threads fewer than its CPUs, and CPUs left over for the
    // clients (they run on the machine's other CPUs only where there are some).
    let mut cores = planned.cores(FILE);
    cores.retain(|&c| c < nproc);
    let found = cores.iter().rev().find_map(|&c| {
        let t = threads_at(planned, c)
            .into_iter()
            .filter(|&t| t >= 2 && t < c)
            .max()?;
        Some((cell(planned, t, c)?, cell(planned, 1, c)?, t))
    });
    match found {
        Some((a, b, t)) => Claim::decided_by(
            PER_THREAD_WITH_CPUS_FREE,
            PER_THREAD_WITH_CPUS_FREE_CLAIM,
            Comparison {
                a: Side::cell(a),
                b: Side::cell(b),
                figure: "ops_per_sec".to_owned(),
                // Per thread: X(t) / (t X(1)).
                scale: 1.0 / t as f64,
                rule: DECLINE,
            },
        ),
        None => Claim::cannot(
            PER_THREAD_WITH_CPUS_FREE,
            PER_THREAD_WITH_CPUS_FREE_CLAIM,
            format!(
                "this machine has {nproc} CPU(s); the part needs at least 5: the server on 4 at 1 and 2 threads (fewer threads than its CPUs, with the default powers-of-two cores) and the clients on the rest"
            ),
        ),
    }
}
