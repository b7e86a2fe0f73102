//! The pool question's controls: each part that decides a verdict run on the real
//! workload (the driver's pool against the simulated server, in this process, small)
//! through its own registry entry, once with the seed's cause taken away (the part must
//! come out contradicted) and once with it present (shown). A lab whose outcome followed
//! from how it builds its two sides would come out the same both times.
//!
//! The parts (`pool::findings::claims`):
//! - `large_batch_gain`: the fix (10 x 5000) over the driver's default at a batch the
//!   model was not fitted to, judged by a band around the seed's gain there (1 + 180%:
//!   2.24x-3.50x). Its cause: the default pool's slots run out (at the seed's 1000
//!   clients x 500 statements a request, 1024 slots hold two requests) while the fix
//!   runs into the server's CPU instead.
//! - `no_change_at_batch_1`: at one datapoint a request the fix changes nothing (a band
//!   of 0.91x-1.10x), although the default could queue. Its cause: the server's CPU runs
//!   out before the default's slots do, so more slots find nothing to use.
//! - `plateau` (a size, no longer a deciding part's control, kept as a check of the lab):
//!   a pool whose cap never binds grows with its clients.
//!
//! How the controls stay small: 64 clients, not the seed's 1000 and more, one thread
//! each. With a request one statement (`statement_points = 0`) a request takes one slot,
//! so the test's `[seed]` table names a default of 4 or 32 slots, which 64 clients fill
//! as the seed's 1024 were filled by 1000 clients x 500 statements; every request costs
//! 4 ms of the server's CPU and 6 ms that use none (no per-datapoint cost, no heap), so
//! a side's rate is one of three limits the model keeps in virtual time: the server's
//! cores / 4 ms, the slots / 10 ms (4 slots: 400 requests/s; 32: 3200), or the clients
//! (6400 requests/s). Which limit binds is the cause each test sets; the gains follow
//! from the model's arithmetic, far from the bands' edges, and not from how fast this
//! machine wakes a thread. A late wake-up only lengthens a hold: a side the server bounds
//! keeps a backlog queued at the server through it (64 clients, or the 32 slots of "no
//! change"'s default), and a side its slots bound gains 0.025x per 0.1 ms late on the
//! gain of 2.5x, which would take 4 ms on every request to leave its band. The
//! comparison, figure (`datapoints_per_sec`) and rule are the entries' own, found in a
//! small plan of `pool-seed-batch` cells; only what the cells run changes. Why smaller
//! cells keep the question: what a control asks is whether the part's comparison and rule
//! can come out either way on this hot path's workload, and the workload's limits (the
//! driver's slots, the server's cores, the clients) are the same code at 64 clients as
//! at 1000; only their sizes are chosen so that one cause is present or absent.
//!
//! No figure here is asserted as a speed: only the parts' outcomes and which side of
//! the band an interval lies on.

use std::collections::BTreeMap;

use pool::findings::claims::{
    BATCH_FILE, CLIENTS_FILE, LARGE_BATCH_GAIN, NO_CHANGE_AT_BATCH_1, PLATEAU, VARIANT,
};
use pool::findings::registry;
use pool::PoolHotPath;
use serde_json::json;
use verdict::decide::{CellRef, Claim, Outcome, Planned, Rule};
use verdict::findings::Seeds;

/// Clients of every batch cell: more than the slots the default is given here.
const CLIENTS: usize = 64;
/// The default the large batch's controls name: 4 slots, which 64 clients fill.
const SMALL_DEFAULT: (u64, u64) = (1, 4);
/// The default "no change"'s controls name: 32 slots, which 64 clients fill (so it can
/// queue and the part is asked), enough to keep a backlog at a server that runs out.
const QUEUE_DEFAULT: (u64, u64) = (1, 32);
/// The seed's default, whose 1024 slots 64 clients never fill.
const SEED_DEFAULT: (u64, u64) = (1, 1024);
/// The seed's fix.
const FIX: (u64, u64) = (10, 5000);
/// Server cores at which the fix runs into the CPU at 1000 requests/s, 2.5 times what
/// the small default's slots allow (4 / 10 ms), with 54 ms of work queued there
/// (the clients not in their 6 ms without CPU or on a core) to ride out a stall.
const ROOMY_SERVER: u64 = 4;
/// A server core, which runs out (250 requests/s) before the 32 slots of "no change"'s
/// default do (3200 requests/s).
const BUSY_SERVER: u64 = 1;
/// Server cores that outlast those 32 slots (8000 requests/s): the fix does what its
/// 64 clients ask (6400 requests/s).
const SPARE_SERVER: u64 = 32;

/// The `[seed]` tables of both files, the batch file's as `benches/` has it (the large
/// batch judged is 500 with the seed's +180%, "no change" at batch 1), the clients
/// file naming the default pool `default`.
fn seeds(default: (u64, u64)) -> BTreeMap<String, serde_json::Value> {
    BTreeMap::from([
        (
            CLIENTS_FILE.to_owned(),
            json!({
                "default": format!("{} x {}", default.0, default.1),
                "fix": format!("{} x {}", FIX.0, FIX.1),
            }),
        ),
        (
            BATCH_FILE.to_owned(),
            json!({
                "batches": [1, 10, 100, 500, 5000],
                "gains": [0.0, 1.0, 2.0, 1.8, 1.3],
                "fitted_batches": [10, 100, 5000],
            }),
        ),
    ])
}

/// `cell` running the small model: one statement of 4 ms CPU and 6 ms without a
/// request, no cost per datapoint, no heap, on `server_cores`.
fn on_model(cell: CellRef, server_cores: u64) -> CellRef {
    cell.with("statement_points", 0)
        .with("base_us", 6000)
        .with("per_point_ns", 0)
        .with("cpu_us", 4000)
        .with("cpu_per_point_ns", 0)
        .with("heap_points", 0)
        .with("server_cores", server_cores)
}

/// Part `name`'s claim as the registry finds it in a plan of `pool-seed-batch` cells (the
/// default named `default`, and the fix, at `batch`, 64 clients, on `server_cores`), with
/// each side then run as the planned cell it names, whole.
fn claim_at(name: &str, default: (u64, u64), batch: u64, server_cores: u64) -> Claim {
    let seeds = seeds(default);
    let planned_cell = |shape: (u64, u64)| {
        on_model(
            CellRef::new(BATCH_FILE, VARIANT, CLIENTS, 2)
                .with("connections", shape.0)
                .with("max_requests", shape.1)
                .with("batch", batch),
            server_cores,
        )
    };
    let cells = vec![planned_cell(default), planned_cell(FIX)];
    let planned = Planned {
        cells: &cells,
        seeds: &seeds,
    };
    let mut claim = registry(Seeds(&seeds)).entry(name).claim_in(&planned);
    let cmp = claim
        .comparison
        .as_ref()
        .unwrap_or_else(|| panic!("{name} finds no sides: {}", claim.missing));
    assert_eq!(cmp.figure, "datapoints_per_sec");
    let shape = |c: &CellRef| {
        (
            c.params["connections"].clone(),
            c.params["max_requests"].clone(),
        )
    };
    assert_eq!(
        (shape(&cmp.a.cell), shape(&cmp.b.cell)),
        (
            (json!(FIX.0), json!(FIX.1)),
            (json!(default.0), json!(default.1))
        ),
        "the fix over the default"
    );
    // The entry names a side by the parameters that tell the plan's cells apart; it runs
    // as the planned cell, every parameter of it.
    verdict::testing::rewrite_cells(&mut claim, |side| {
        on_model(side.with("batch", batch), server_cores)
    });
    claim
}

/// The band a part is judged by.
fn band(claim: &Claim) -> (f64, f64) {
    match claim.comparison.as_ref().map(|c| c.rule) {
        Some(Rule::Within { low, high }) => (low, high),
        rule => panic!("{} is judged by a band: {rule:?}", claim.part),
    }
}

/// `large_batch_gain` with its cause taken away: the default is the seed's 1 x 1024,
/// whose slots 64 clients never fill, so both pools run into the same 4 cores (1000
/// requests/s) and the fix gains nothing, far below the seed's band (2.24x-3.50x).
#[test]
fn a_default_whose_slots_never_run_out_contradicts_the_large_batch_gain() {
    let claim = claim_at(LARGE_BATCH_GAIN, SEED_DEFAULT, 500, ROOMY_SERVER);
    let (low, _) = band(&claim);
    let m =
        verdict::testing::expect_outcome(&PoolHotPath, &claim, Outcome::Contradicted, 24, 100, 300);
    let i = m.interval().expect("an interval");
    // Contradicted because there is no gain, not one beyond the seed's.
    assert!(i.high < low, "{i}");
}

/// `large_batch_gain` with its cause present: the default's 4 slots run out at 64
/// clients (400 requests/s, each slot held 10 ms) while the fix runs into the server's
/// 4 cores (1000 requests/s): a gain of 2.5x, inside the seed's band (2.24x-3.50x), as
/// the seed's default ran out of slots at 500 statements a request. Low in the band on
/// purpose: a late wake-up delays a slot's hand-over and a stall of the machine idles
/// the default's slots, while the fix's work waits queued at the server, so noise here
/// raises the gain (by 0.1-0.2x measured, once 0.7x at 9 pairs) more than it lowers it
/// (0.2x).
#[test]
fn a_default_whose_slots_run_out_shows_the_large_batch_gain() {
    let claim = claim_at(LARGE_BATCH_GAIN, SMALL_DEFAULT, 500, ROOMY_SERVER);
    verdict::testing::expect_outcome(&PoolHotPath, &claim, Outcome::Shown, 24, 100, 300);
}

/// `no_change_at_batch_1` with its cause taken away: the server's 32 cores (8000
/// requests/s) outlast the default's 32 slots (3200 requests/s), so the fix's slots lift
/// the default's limit and it does what its 64 clients ask (6400 requests/s): a gain of
/// 2.0x, wholly above the "no change" band (0.91x-1.10x).
#[test]
fn a_server_with_cores_to_spare_contradicts_no_change_at_batch_1() {
    let claim = claim_at(NO_CHANGE_AT_BATCH_1, QUEUE_DEFAULT, 1, SPARE_SERVER);
    let (_, high) = band(&claim);
    let m =
        verdict::testing::expect_outcome(&PoolHotPath, &claim, Outcome::Contradicted, 24, 100, 200);
    let i = m.interval().expect("an interval");
    // Contradicted because the fix gained, not because it lost.
    assert!(i.low > high, "{i}");
}

/// `no_change_at_batch_1` with its cause present: the server's one core runs out at 250
/// requests/s, before the default's 32 slots would (3200 requests/s), so both pools do
/// what the server allows and the fix's slots find nothing to use: 1.0x, inside the band
/// (0.91x-1.10x), although 64 clients queue for the default's 32 slots.
#[test]
fn a_server_whose_cores_run_out_first_shows_no_change_at_batch_1() {
    let claim = claim_at(NO_CHANGE_AT_BATCH_1, QUEUE_DEFAULT, 1, BUSY_SERVER);
    // A band 10% either side of 1 asks for a narrow interval, and a stall of the machine
    // at a window's edge moves a side by a few percent (measured: 0.93x-1.03x for single
    // pairs with the load at 9 on 2 CPUs): windows of 400 ms halve that, and up to 32
    // pairs let a noisy run narrow its interval rather than fail.
    verdict::testing::expect_outcome(&PoolHotPath, &claim, Outcome::Shown, 32, 100, 400);
}

// `plateau` (a size since issue 51, so no deciding part's control): a pool whose cap never
// binds must grow with its clients. Kept as a check that the lab's own construction makes
// no plateau where the cap is absent.

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
    let m =
        verdict::testing::expect_outcome(&PoolHotPath, &claim, Outcome::Contradicted, 24, 50, 200);
    let i = m.interval().expect("9 pairs give an interval");
    eprintln!("plateau, cap never binding: {i}");
    // Contradicted because it grew, not because it fell: the other side of the band.
    assert!(i.ratio > 1.0, "{i}");
}
