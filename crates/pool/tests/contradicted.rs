//! The pool's `plateau` part run on the real workload, small, where the seed's cause is
//! absent: a pool whose cap never binds (the fix's 10 x 5000 slots for 100 and 200
//! clients) grows with its clients, so the part must come out contradicted. A lab whose
//! plateau followed from its own construction would show it here too.

use std::collections::BTreeMap;

use harness::decide::{CellRef, Claim, Comparison, Outcome, Side};
use harness::findings::Seeds;
use pool::findings::claims::{SeedFigures, VARIANT};
use pool::PoolHotPath;

#[test]
fn a_pool_whose_cap_never_binds_contradicts_the_plateau() {
    let seeds = BTreeMap::new();
    let rule = SeedFigures::of(Seeds(&seeds)).plateau_rule();
    // 20 ms a request: 100 clients ask about 5k requests/s of 50k slots' worth.
    let cell = |clients: usize| {
        CellRef::new("pool-clients", VARIANT, clients, 2)
            .with("connections", 10)
            .with("max_requests", 5000)
            .with("base_us", 20000)
            .with("per_point_ns", 0)
            .with("cpu_us", 0)
            .with("cpu_per_point_ns", 0)
    };
    let claim = Claim::decided_by(
        "plateau",
        "the pool's throughput plateaus as clients double",
        Comparison::throughput(Side::cell(cell(200)), Side::cell(cell(100)), rule),
    );
    let m = harness::testing::measured_pairs(&PoolHotPath, &claim, 9, 50, 200);
    let i = m.interval().expect("9 pairs give an interval");
    eprintln!(
        "plateau, cap never binding: {:.3} [{:.3}-{:.3}]",
        i.ratio, i.low, i.high
    );
    assert_eq!(
        m.outcome(),
        Outcome::Contradicted,
        "{:.3} [{:.3}-{:.3}] against {:?}",
        i.ratio,
        i.low,
        i.high,
        rule
    );
    // Contradicted because it grew, not because it fell: the other side of the band.
    assert!(i.low > 1.0, "{:.3}", i.low);
}
