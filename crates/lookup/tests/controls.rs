//! The lookup question's controls, where a part decides a verdict: none does today. All
//! three parts are measurements of size only (issue 51, `lookup::findings::claims`):
//! `short_of_linear` and `per_thread_past_knee` follow from the designs' construction,
//! and `loss_past_cores` found no setting of the lab's designs where a locked design
//! loses past the CPUs far enough beyond the noise of a shared 2-CPU machine for a test
//! to show it, or its absence, every time. A part that decides later names its two tests
//! here (`controls_conformance` in the findings tests reads this file).
//!
//! What stays: the `short_of_linear` part run on the real workload, small, where the lock's cost is
//! absent from the side the part blames: the `[seed]` table names the lock-free
//! `arc-swap-snapshot` as the "baseline" and `entry-cache` (a mutex and an LRU move on every
//! read) as the "control", so the baseline's scaling over the control's is far above 1 and
//! the part must come out contradicted. A lab whose shortfall followed from its own
//! construction (the harness, the pairs, the interval) rather than from the lock would show
//! it here too. The claim is the registry's own: its entry finds the sides in a plan of
//! four cells and its rule judges them.
//!
//! Why it does not flake on a noisy 2-core machine: the effect is structural and large.
//! With two free CPUs the snapshot does about 2x at 2 threads what it does at 1, the entry
//! cache 0.45-0.65x (its threads fight over one lock and the LRU list's cache lines): a
//! ratio of 2.3-4.5, measured here, against a threshold of 0.98. A lock-free read never
//! scales worse than one that serialises on a lock, so no regime puts the true ratio below
//! 1, and `decided_in_attempts` takes more pairs (up to 48, and up to three attempts)
//! while bursts of other jobs leave the interval undecided: noise costs time (9 pairs,
//! about 5 s, on a quiet machine), not the outcome; an interval still undecided after
//! that passes only with its ratio above the threshold (`noise_kept_undecided`). What no number of pairs can mend: another
//! job that holds a CPU throughout. Then the scheduler keeps both threads on one CPU,
//! neither design scales (measured: both scalings near 1.0, ratios 0.95-1.3, undecided),
//! and the question "up to the CPUs" cannot be asked; the test then asks only that the
//! part is not shown, and says so. It tells that case by the lock-free design's own
//! scaling and other jobs' share of the CPUs (from `/proc`), so on a machine to itself a
//! lab that failed to scale still fails here.
//!
//! No figure here is asserted as a speed: only the part's outcome and which side of 1 its
//! median ratio lies on; the two figures above only choose which outcome is asked.

use std::collections::BTreeMap;

use lookup::findings::claims::{Designs, SHORT_OF_LINEAR};
use lookup::LookupHotPath;
use serde_json::json;
use verdict::decide::{CellRef, Outcome, Planned};

/// The lock-free design, named as the part's baseline.
const LOCK_FREE: &str = "arc-swap-snapshot";
/// The design that takes a lock on every read, named as the part's control.
const LOCKED: &str = "entry-cache";

#[test]
fn a_lock_free_baseline_against_a_locked_control_contradicts_short_of_linear() {
    let seeds = BTreeMap::from([(
        "lookup".to_owned(),
        json!({ "baseline": [LOCK_FREE], "control": [LOCKED] }),
    )]);
    let designs = Designs::of(verdict::findings::Seeds(&seeds));
    assert_eq!(
        (designs.baseline.as_slice(), designs.control.as_slice()),
        (
            [LOCK_FREE.to_owned()].as_slice(),
            [LOCKED.to_owned()].as_slice()
        ),
        "the registry reads the designs from the [seed] table"
    );
    // 1 and 2 threads on this machine's 2 CPUs, a small directory the cache holds whole
    // (every read a hit: the lock and the LRU move, no database).
    let cells: Vec<CellRef> = [LOCK_FREE, LOCKED]
        .iter()
        .flat_map(|v| {
            [1, 2].map(|threads| {
                CellRef::new("lookup", v, threads, 2)
                    .with("users", 1000)
                    .with("groups", 0)
                    .with("cache_entries", 1000)
            })
        })
        .collect();
    let planned = Planned {
        cells: &cells,
        seeds: &seeds,
    };
    let claim = lookup::findings::claims(&planned)
        .into_iter()
        .find(|c| c.part == SHORT_OF_LINEAR)
        .expect("the registry declares short_of_linear");
    let cmp = claim
        .comparison
        .as_ref()
        .expect("the plan has its four cells");
    assert_eq!(
        (cmp.a.cell.variant.as_str(), cmp.b.cell.variant.as_str()),
        (LOCK_FREE, LOCKED)
    );

    let before = cpu_time();
    let m = verdict::testing::decided_in_attempts(
        &LookupHotPath,
        &claim,
        Outcome::Contradicted,
        48,
        20,
        100,
    );
    let others = others_share(before, cpu_time());
    let i = m.interval().expect("9 pairs or more give an interval");
    // Each pair's figures in the comparison's order: the lock-free design at 2 threads and
    // at 1, then the locked one.
    let lock_free_scaling = median(m.pairs.iter().map(|p| p[0] / p[1]).collect());
    let locked_scaling = median(m.pairs.iter().map(|p| p[2] / p[3]).collect());
    eprintln!(
        "short_of_linear, {LOCK_FREE} over {LOCKED}: {i}, {:?}; scalings \
         {lock_free_scaling:.2} and {locked_scaling:.2}; other jobs' share of the CPUs {}",
        m.outcome(),
        others.map_or("unknown".to_owned(), |o| format!("{:.0}%", o * 100.0)),
    );
    let figure = format!("{i}, against {:?}", cmp.rule);
    // Never shown, whatever the machine did: a shortfall that came from the lab rather than
    // the lock would show here.
    assert_ne!(m.outcome(), Outcome::Shown, "{figure}");
    // Two threads scale only on two free CPUs. Where other jobs held the CPUs and the
    // lock-free design could not scale, the part's question (scaling up to the CPUs) was
    // not asked: a single busy job in another session is enough for the scheduler to put
    // both threads on one CPU (measured: scalings near 1.0, ratios 0.95-1.3, undecided).
    // On a machine to ourselves the lab's own failure to scale would still fail here.
    let crowded = lock_free_scaling < 1.5 && others.is_some_and(|o| o > 0.1);
    if crowded {
        eprintln!("other jobs held the CPUs: only \"not shown\" is asked of this run");
        return;
    }
    if !verdict::testing::noise_kept_undecided(&m, Outcome::Contradicted) {
        assert_eq!(m.outcome(), Outcome::Contradicted, "{figure}");
    }
    // Contradicted because the lock-free design scaled better, not by matching it.
    assert!(i.ratio > 1.0, "{figure}");
}

/// The median of `v`.
fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// The machine's busy, this process's and all CPU time so far, in ticks, from `/proc`.
fn cpu_time() -> Option<[f64; 3]> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let cpu: Vec<f64> = stat
        .lines()
        .next()?
        .split_whitespace()
        .skip(1)
        .take(8)
        .map(|v| v.parse().ok())
        .collect::<Option<_>>()?;
    let all: f64 = cpu.iter().sum();
    let busy = all - cpu.get(3)? - cpu.get(4)?;
    let own = std::fs::read_to_string("/proc/self/stat").ok()?;
    let fields: Vec<&str> = own.rsplit_once(')')?.1.split_whitespace().collect();
    let mine = fields.get(11)?.parse::<f64>().ok()? + fields.get(12)?.parse::<f64>().ok()?;
    Some([busy, mine, all])
}

/// Other jobs' share of the machine's CPUs between two readings.
fn others_share(before: Option<[f64; 3]>, after: Option<[f64; 3]>) -> Option<f64> {
    let (b, a) = (before?, after?);
    let all = a[2] - b[2];
    (all > 0.0).then(|| (((a[0] - b[0]) - (a[1] - b[1])) / all).max(0.0))
}
