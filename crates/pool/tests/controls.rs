//! The pool's `plateau` part run on the real workload, small, where the seed's cause is
//! absent: a pool whose cap never binds (the fix's 10 x 5000 slots for 100 and 200
//! clients) grows with its clients, so the part must come out contradicted. A lab whose
//! plateau followed from its own construction would show it here too. The claim is the
//! registry's `plateau` entry in a small plan of those cells, so the test runs the part's
//! own sides and rule, not a restatement of them.

use std::collections::BTreeMap;

use pool::findings::claims::{PLATEAU, VARIANT};
use pool::findings::registry;
use pool::PoolHotPath;
use serde_json::json;
use verdict::decide::{CellRef, Claim, Outcome, Planned};
use verdict::findings::Seeds;

/// A cell of `pool-clients` whose 10 x 5000 slots never bind: 20 ms a request and no
/// server CPU, so 200 clients ask about 10k requests/s where the 50k slots serve 2.5M.
fn cell(clients: usize) -> CellRef {
    CellRef::new("pool-clients", VARIANT, clients, 2)
        .with("connections", 10)
        .with("max_requests", 5000)
        .with("base_us", 20000)
        .with("per_point_ns", 0)
        .with("cpu_us", 0)
        .with("cpu_per_point_ns", 0)
}

/// The registry's plateau in a plan of the never-binding pool at 100 and 200 clients,
/// that pool named as the seed's "default" (and its fix), with each side the planned cell
/// it names, whole, as `lab` runs it.
fn plateau_where_the_cap_never_binds() -> Claim {
    let cells = vec![cell(100), cell(200)];
    let mut seeds = BTreeMap::new();
    seeds.insert(
        "pool-clients".to_owned(),
        json!({
            "plateau_from": 100,
            "plateau_to": 200,
            "default": "10 x 5000",
            "fix": "10 x 5000",
        }),
    );
    let planned = Planned {
        cells: &cells,
        seeds: &seeds,
    };
    let mut claim = registry(Seeds(&seeds)).entry(PLATEAU).claim_in(&planned);
    let comparison = claim
        .comparison
        .as_mut()
        .unwrap_or_else(|| panic!("the plan holds the plateau's cells: {}", claim.missing));
    for side in [&mut comparison.a, &mut comparison.b] {
        side.cell = cells
            .iter()
            .find(|p| {
                side.cell
                    .matches(&p.file, &p.variant, p.threads, p.cores, &p.params)
            })
            .expect("a side is a planned cell")
            .clone();
    }
    claim
}

#[test]
fn a_pool_whose_cap_never_binds_contradicts_the_plateau() {
    let claim = plateau_where_the_cap_never_binds();
    let c = claim.comparison.as_ref().expect("sides found");
    assert_eq!((c.a.cell.threads, c.b.cell.threads), (200, 100));
    let m = verdict::testing::measured_until_decided(&PoolHotPath, &claim, 24, 50, 200);
    let i = m.interval().expect("9 pairs give an interval");
    eprintln!("plateau, cap never binding: {i}");
    assert_eq!(
        m.outcome(),
        Outcome::Contradicted,
        "{i} against {:?}",
        c.rule
    );
    // Contradicted because it grew, not because it fell: the other side of the band.
    assert!(i.low > 1.0, "{:.3}", i.low);
}
