//! The parts on plausible synthetic records: each comes out shown, contradicted and
//! inconclusive; the plan's sides follow the machine's CPUs; a part whose cells are not
//! planned is `cannot`, never dropped.

use std::collections::BTreeMap;

use harness::account::TimeShare;
use harness::schema::ProfileRef;
use verdict::decide::{CellRef, Claim, Measured, Outcome, Planned};

use super::profile::{judge, shares, Shares};
use super::*;
use verdict::testing::claim;

/// A usable 389 DS cell with `reps` repetitions spread ±2% around `ops`.
fn cell(
    file: &str,
    variant: &str,
    threads: usize,
    cores: usize,
    ops: f64,
    reps: usize,
) -> CellRecord {
    let r =
        harness::testing::synthetic_cell("ldap", file, variant, &[], threads, cores, ops, 0.0, 1);
    let values: Vec<f64> = (0..reps)
        .map(|i| ops * (0.98 + 0.04 * i as f64 / (reps.max(2) - 1) as f64))
        .collect();
    CellRecord::merge_repetitions(
        &values
            .iter()
            .map(|&v| {
                let mut one = r.clone();
                one.repeats = 1;
                one.ops_per_sec = v;
                one.ops_per_sec_min = v;
                one.ops_per_sec_max = v;
                one.ops_per_sec_reps = vec![v];
                one.server_time_share = Some(TimeShare {
                    on_cpu: 0.5,
                    run_queue: Some(0.1),
                    blocked: None,
                    other: 0.4,
                });
                harness::Repetition(one)
            })
            .collect::<Vec<_>>(),
    )
    .unwrap()
}

/// The planned 389 DS cells of a machine of `nproc` CPUs: the file's threads
/// (1, 2, 4, 6, 12, 16, nproc, 2nproc, 6nproc) at powers-of-two cores and nproc.
fn plan(nproc: usize) -> Vec<CellRef> {
    let mut cores: Vec<usize> = (0..)
        .map(|i| 1usize << i)
        .take_while(|&c| c < nproc)
        .collect();
    cores.push(nproc);
    let mut threads = vec![1, 2, 4, 6, 12, 16, nproc, 2 * nproc, 6 * nproc];
    threads.sort_unstable();
    threads.dedup();
    let mut out = Vec::new();
    for &c in &cores {
        for &t in &threads {
            out.push(CellRef::new(FILE, VARIANT, t, c).with("connections", 10));
        }
    }
    out
}

/// The `[seed]` table of benches/389ds.toml as far as the parts read it.
fn seeds() -> BTreeMap<String, serde_json::Value> {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../benches/389ds.toml"
    ))
    .unwrap();
    let file: toml::Table = toml::from_str(&text).unwrap();
    let seed = serde_json::to_value(&file["seed"]).unwrap();
    BTreeMap::from([(FILE.to_owned(), seed)])
}

fn claims_of(cells: &[CellRef], nproc: usize) -> Vec<Claim> {
    let seeds = seeds();
    claims_on(
        &Planned {
            cells,
            seeds: &seeds,
        },
        nproc,
    )
}

fn names(claims: &[Claim]) -> Vec<&str> {
    claims.iter().map(|c| c.part.as_str()).collect()
}

fn sides(c: &Claim) -> (usize, usize, usize, usize) {
    let cmp = c.comparison.as_ref().unwrap_or_else(|| panic!("{c:?}"));
    (
        cmp.a.cell.threads,
        cmp.a.cell.cores,
        cmp.b.cell.threads,
        cmp.b.cell.cores,
    )
}

/// The parts' names, as scripts read them.
const ALL: [&str; 4] = [
    THREADS_PAST_CPUS,
    RECOMMENDATION,
    PER_THREAD_WITH_CPUS_FREE,
    WHERE_TIME_GOES,
];

#[test]
fn on_two_cpus_two_comparisons_and_two_parts_that_cannot() {
    let c = claims_of(&plan(2), 2);
    assert_eq!(names(&c), ALL);
    assert_eq!(registry_on(2).names(), ALL);
    let (past, rec) = (claim(&c, THREADS_PAST_CPUS), claim(&c, RECOMMENDATION));
    let (free, time) = (
        claim(&c, PER_THREAD_WITH_CPUS_FREE),
        claim(&c, WHERE_TIME_GOES),
    );
    // The most threads other than the autotuned 16, against threads = CPUs.
    assert_eq!(sides(past), (12, 2, 2, 2));
    // threads = CPUs against the autotuned default, 16 here (also the seed's 16).
    assert_eq!(sides(rec), (2, 2, 16, 2));
    assert_eq!(
        rec.claim,
        format!("{RECOMMENDATION_CLAIM}: threads = CPUs (2) against 389 DS's autotuned default (nsslapd-threadnumber: -1, which it resolves to 16 on 2 CPUs, which is also the seed's 16: one comparison serves both)")
    );
    assert!(
        free.comparison.is_none() && free.missing.contains("needs at least 7"),
        "{free:?}"
    );
    assert_eq!(free.claim, PER_THREAD_WITH_CPUS_FREE_CLAIM);
    assert!(time.comparison.is_none());
    // The planned cells themselves, parameters and all.
    assert_eq!(
        past.comparison.as_ref().unwrap().a.cell.params["connections"],
        10
    );
}

#[test]
fn larger_machines_derive_their_sides_from_the_plan() {
    let c = claims_of(&plan(8), 8);
    assert_eq!(sides(claim(&c, THREADS_PAST_CPUS)), (48, 8, 8, 8));
    assert_eq!(sides(claim(&c, RECOMMENDATION)), (8, 8, 16, 8));
    // On 8 CPUs no count lies past the seed's knee of 4 and below the 4 CPUs the server
    // gets with CPUs left for the clients.
    let free = claim(&c, PER_THREAD_WITH_CPUS_FREE);
    assert!(free.comparison.is_none(), "{free:?}");
    // On 16: 6 threads on 8 of the CPUs against the knee's 4, per thread.
    let c16 = claims_of(&plan(16), 16);
    let free = claim(&c16, PER_THREAD_WITH_CPUS_FREE);
    assert_eq!(sides(free), (6, 8, 4, 8));
    assert_eq!(free.comparison.as_ref().unwrap().scale, 4.0 / 6.0);
    assert_eq!(
        free.claim,
        format!("{PER_THREAD_WITH_CPUS_FREE_CLAIM}: per thread at 6 threads against at the seed's knee of 4 threads (knee_threads in benches/389ds.toml)")
    );
    // 64 CPUs: the autotuned default is the CPUs, so the seed's 16 is the other side.
    let c = claims_of(&plan(64), 64);
    let rec = claim(&c, RECOMMENDATION);
    assert_eq!(sides(rec), (64, 64, 16, 64));
    assert!(rec.claim.contains("the seed's 16"), "{}", rec.claim);
    assert_eq!(sides(claim(&c, THREADS_PAST_CPUS)), (384, 64, 64, 64));
    // 16 CPUs: threads = CPUs = autotuned = the seed's 16: nothing to compare.
    let c = claims_of(&plan(16), 16);
    let rec = claim(&c, RECOMMENDATION);
    assert!(rec.comparison.is_none() && rec.missing.contains("nothing to compare"));
}

#[test]
fn missing_cells_are_cannot_never_dropped() {
    let c = claims_of(&[], 2);
    assert_eq!(names(&c), ALL);
    assert!(c
        .iter()
        .all(|c| c.comparison.is_none() && !c.missing.is_empty()));
    // Without 16 in the file the recommendation cannot be compared.
    let no16: Vec<CellRef> = plan(2).into_iter().filter(|c| c.threads != 16).collect();
    let c = claims_of(&no16, 2);
    let rec = claim(&c, RECOMMENDATION);
    assert!(
        rec.comparison.is_none() && rec.missing.contains("16"),
        "{rec:?}"
    );
    assert_eq!(sides(claim(&c, THREADS_PAST_CPUS)), (12, 2, 2, 2));
}

/// `n` pairs whose ratio is `ratio`, spread +-4e+00% ([`verdict::testing::synthetic_pairs`]).
fn measured(claim: &Claim, ratio: f64, n: usize) -> Measured {
    verdict::testing::synthetic_pairs(claim, ratio, 0.04, n)
}

fn outcome_of(claim: &Claim, ratio: f64, n: usize) -> Outcome {
    let seeds = BTreeMap::new();
    let m = [measured(claim, ratio, n)];
    let run = Run {
        cells: &[],
        seeds: &seeds,
        comparisons: &m,
    };
    run.part(&claim.part, &claim.claim).outcome
}

#[test]
fn each_comparison_part_can_be_shown_contradicted_or_inconclusive() {
    let c = claims_of(&plan(8), 8);
    let (past, rec) = (claim(&c, THREADS_PAST_CPUS), claim(&c, RECOMMENDATION));
    // Part (c) needs a count past the knee below the CPUs the server gets: 16 CPUs.
    let c16 = claims_of(&plan(16), 16);
    let free = claim(&c16, PER_THREAD_WITH_CPUS_FREE);
    use Outcome::*;
    // (a) 48 threads past the 8 CPUs: 0.85x is a cost, 1.05x a gain, 0.96x undecided.
    assert_eq!(outcome_of(past, 0.85, 24), Shown);
    assert_eq!(outcome_of(past, 1.05, 24), Contradicted);
    assert_eq!(outcome_of(past, 0.96, 24), Inconclusive);
    // (b) threads = CPUs over the default: 1.20x shown, 0.90x contradicted (the issue's
    // figures: 2 CPUs peak at 4, 13.5k at 1 against 13.2k at 12), 1.035x undecided.
    assert_eq!(outcome_of(rec, 1.20, 24), Shown);
    assert_eq!(outcome_of(rec, 0.90, 24), Contradicted);
    assert_eq!(outcome_of(rec, 1.035, 24), Inconclusive);
    // (c) per thread at 6 threads over the knee's 4: 0.70 shown, 1.0 contradicted, 0.925 undecided.
    assert_eq!(outcome_of(free, 0.70, 24), Shown);
    assert_eq!(outcome_of(free, 1.00, 24), Contradicted);
    assert_eq!(outcome_of(free, 0.925, 24), Inconclusive);
    // Too few pairs for an interval.
    assert_eq!(outcome_of(past, 0.5, 3), Inconclusive);
}

/// Folded stacks: the lab's client, and the server's with `grow` of its samples in
/// `op_shared_search;[unknown]` at the most threads and the rest elsewhere.
fn folded(samples: u64, in_search: f64) -> String {
    let s = (samples as f64 * in_search) as u64;
    let k = samples / 5;
    format!(
        "ldap/389-ds;tokio::runtime::park 900\n\
         ns-slapd;start_thread;connection_threadmain;op_shared_search;[unknown] {s}\n\
         ns-slapd;start_thread;connection_threadmain;[unknown] {}\n\
         ns-slapd;start_thread;__lll_lock_wait_[k] {k}\n",
        samples - s - k
    )
}

#[test]
fn shares_keep_only_the_servers_stacks() {
    let s = shares(&folded(1000, 0.3));
    assert_eq!(s.samples, 1000);
    assert_eq!(s.other, 900);
    assert!((s.share("op_shared_search") - 0.3).abs() < 1e-9);
    assert!((s.share("connection_threadmain") - 0.8).abs() < 1e-9);
    assert!((s.unresolved_share() - 0.8).abs() < 1e-9);
    assert_eq!(s.share("[unknown]"), 0.0);
}

/// Two profiles of one cell: the server's stacks with `a` and `b` of 1000 samples in
/// `op_shared_search`.
fn two(a: f64, b: f64) -> Vec<Shares> {
    vec![shares(&folded(1000, a)), shares(&folded(1000, b))]
}

#[test]
fn where_time_goes_can_be_shown_contradicted_or_inconclusive() {
    let one = two(0.2, 0.2);
    let p = judge(&one, &two(0.4, 0.4), 12, 2);
    assert_eq!(p.outcome, Outcome::Shown, "{}", p.why);
    assert!(
        p.why.starts_with("`op_shared_search` 20.0% -> 40.0%"),
        "{}",
        p.why
    );
    assert!(p.why.contains("unresolved"), "{}", p.why);
    let p = judge(&one, &two(0.21, 0.21), 12, 2);
    assert_eq!(p.outcome, Outcome::Contradicted, "{}", p.why);
    // Clears a floor of nothing, but 3.5 points is no shift to act on.
    let p = judge(&one, &two(0.235, 0.235), 12, 2);
    assert_eq!(p.outcome, Outcome::Inconclusive, "{}", p.why);
    // 8 points of growth against two 1-thread profiles 10 points apart: within noise,
    // and a floor that wide could not have shown a 5-point shift either.
    let p = judge(&two(0.15, 0.25), &two(0.28, 0.28), 12, 2);
    assert_eq!(p.outcome, Outcome::Inconclusive, "{}", p.why);
    assert!(p.why.contains("noise floor 10.0 points"), "{}", p.why);
    // The same growth over a 3-point floor is shown; within a 3-point floor, contradicted.
    let p = judge(&two(0.185, 0.215), &two(0.28, 0.28), 12, 2);
    assert_eq!(p.outcome, Outcome::Shown, "{}", p.why);
    let p = judge(&two(0.185, 0.215), &two(0.22, 0.22), 12, 2);
    assert_eq!(p.outcome, Outcome::Contradicted, "{}", p.why);
    // One profile a side gives no floor: never shown, however large the growth.
    let p = judge(&one[..1], &two(0.4, 0.4)[..1], 12, 2);
    assert_eq!(p.outcome, Outcome::Inconclusive);
    assert!(p.why.starts_with("no noise floor"), "{}", p.why);
    // A profile with no server stacks says what lab must keep.
    let p = judge(
        &one,
        &[shares("ldap/389-ds;x 500\n"), shares(&folded(1000, 0.4))],
        12,
        2,
    );
    assert_eq!(p.outcome, Outcome::Inconclusive);
    assert!(p.why.contains("process name"), "{}", p.why);
}

/// The parts are the server hot path's seed 002 question asked of 389 DS, so their
/// controls are the server crate's, run on its tiny server.
#[test]
fn every_deciding_part_names_its_two_controls() {
    verdict::testing::controls_conformance(
        &registry_on(9),
        &[include_str!("../../../server/tests/controls.rs")],
    )
    .unwrap();
}

mod answer;
