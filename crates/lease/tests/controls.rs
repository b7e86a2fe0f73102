//! The lease question's controls, where a part decides a verdict: none does today. Every
//! part is a measurement of size only (issue 51, `lease::findings::claims`): on SQLite
//! `busy_time_leases` comes out contradicted here, with its cause taken away, but no
//! setting shows it with the cause present (`global-clock` against `txn-log` measures
//! 1.0-1.3x at the seed's load, above the seed's band), so no test can show it going
//! either way. A part that decides later names its two tests here
//! (`controls_conformance` in the findings tests reads this file).
//!
//! What stays: the `busy_time_leases` part run on the real workload (SQLite, in
//! this process, small) where the seed's cause is absent: no patch between the sides, so
//! no cut, and the part must come out contradicted by the registry entry's own rule (the
//! band around the seed's 0.57x) and figure. A lab whose cut followed from its own
//! construction (the way it times or attributes statements) would show a cut here too.
//!
//! How the cause is taken away: both sides are `txn-log`, the store before the patch,
//! standing for "a global-clock store made to write what txn-log writes": the patch's
//! saving on the leases is that an extend no longer reads the holder and writes the
//! namespace clock row beside the lease, and a `global-clock` that still did both would
//! be `txn-log` on the leases. The same design on both sides is that store, without a
//! parameter the hot path would carry only for this test.
//!
//! What this does not say: on SQLite the real comparison (`global-clock` against
//! `txn-log`) comes out contradicted too, above the band (which is why the part is a
//! size); this test checks only that the lab's own timing makes no cut where there is
//! none.
//!
//! Not here: PostgreSQL (it needs a server; `tests/postgres.rs`), the other parts.

use std::collections::BTreeMap;

use lease::findings::claims::{Store, AFTER, BEFORE, BUSY_TIME_LEASES, SEED_LOAD};
use lease::LeaseHotPath;
use verdict::decide::{CellRef, Outcome, Planned, Rule, Side};
use verdict::findings::Seeds;

/// A cell of the seed's load as `lease-seed-load.toml` plans it: 500 leases, each
/// extended every 30 s of simulated time at 100x (1667 operations a second), one worker.
/// Why not faster, for more extends a window: a worker this lightly loaded is woken
/// promptly on a busy machine, where one that needs half a CPU (500x) is starved now and
/// then and its busy time swings thirtyfold between windows.
fn cell(variant: &str) -> CellRef {
    CellRef::new(SEED_LOAD, variant, 1, 2)
        .with("applications", 500)
        .with("time_scale", 100)
        .with("load", "seed")
}

#[test]
fn txn_log_against_itself_contradicts_the_cut_on_the_leases() {
    // The seed's figures, as `benches/lease-seed-load.toml`'s `[seed]` table has them:
    // they set the entry's band (0.44-0.74).
    let seeds: BTreeMap<String, serde_json::Value> = [(
        SEED_LOAD.to_owned(),
        serde_json::json!({
            "leases_ms_before": 470, "leases_ms_after": 267,
            "txns_ms_before": 868, "txns_ms_after": 625,
        }),
    )]
    .into_iter()
    .collect();
    let cells = vec![cell(AFTER), cell(BEFORE)];
    let planned = Planned {
        cells: &cells,
        seeds: &seeds,
    };
    let registry = lease::findings::registry(Seeds(&seeds));
    let mut claim = registry
        .entry(&Store::Sqlite.part(&BUSY_TIME_LEASES))
        .claim_in(&planned);
    let comparison = claim.comparison.as_mut().expect("the plan has both sides");
    assert_eq!(comparison.figure, BUSY_TIME_LEASES.figure);
    // The cause taken away: the patched side is the store before the patch.
    comparison.a = Side::cell(cell(BEFORE));
    let rule = comparison.rule;
    let Rule::Within { high, .. } = rule else {
        panic!("the leases part is judged by a band around the seed's cut: {rule:?}");
    };

    // About 0.7 s a pair: usually decided at 9 pairs (6 s); a busy machine's slow
    // windows take more, and 48 pairs (the last look allowed) some 35 s an attempt.
    let m =
        verdict::testing::expect_outcome(&LeaseHotPath, &claim, Outcome::Contradicted, 48, 50, 200);
    let i = m.interval().expect("9 pairs or more give an interval");
    eprintln!(
        "busy_time_leases, txn-log against itself: {i}, against {}",
        rule.text()
    );
    // Contradicted because there is no cut, not because of a cut deeper than the seed's.
    assert!(i.ratio > high, "{i}");
}
