//! The lookup question on synthetic plans and pairs, no timing: here `claims` lists every
//! part on every plan (cannot where cells or CPUs are missing); in [`answers`] each part
//! comes out shown, contradicted and inconclusive, and the answer's verdict and sentences
//! follow its parts.

use std::collections::BTreeMap;

use serde_json::json;
use verdict::decide::{CellRef, Claim, Planned};
use verdict::findings::Seeds;

use super::claims::{claims, LOSS_PAST_CORES, PER_THREAD_PAST_KNEE, SHORT_OF_LINEAR};
use super::registry;

mod answers;

const BASE: &str = "entry-cache";
const CONTROL: &str = "arc-swap-snapshot";

/// lookup.toml's default plan on `cpus` CPUs for `variants`: threads 1, 2, 4, 6, 12, nproc,
/// 2 nproc, 6 nproc on cores powers of two up to nproc and nproc, with the file's full
/// parameters; plus lookup-dispatch cells of the same variants, which no part may use.
fn plan(cpus: usize, variants: &[&str]) -> Vec<CellRef> {
    let mut threads = vec![1, 2, 4, 6, 12, cpus, 2 * cpus, 6 * cpus];
    threads.sort_unstable();
    threads.dedup();
    let mut cores: Vec<usize> = (0..8).map(|p| 1 << p).filter(|c| *c <= cpus).collect();
    cores.push(cpus);
    cores.dedup();
    custom(&cores, &threads, variants)
}

/// Cells of `variants` at every `threads` on every `cores`.
fn custom(cores: &[usize], threads: &[usize], variants: &[&str]) -> Vec<CellRef> {
    let mut out = Vec::new();
    for v in variants {
        for c in cores {
            for t in threads {
                out.push(
                    CellRef::new("lookup", v, *t, *c)
                        .with("users", 6000)
                        .with("groups", 4000)
                        .with("write_pct", 0)
                        .with("keys", "uniform"),
                );
                out.push(CellRef::new("lookup-dispatch", v, *t, *c).with("dispatch", "direct"));
            }
        }
    }
    out
}

/// `[seed]` tables as lookup.toml has them.
fn seeds() -> BTreeMap<String, serde_json::Value> {
    BTreeMap::from([(
        "lookup".to_owned(),
        json!({
            "baseline": ["entry-cache", "global-mutex"],
            "control": ["arc-swap-snapshot", "lmdb"],
            "knee_threads": 4,
        }),
    )])
}

fn claims_of(cells: &[CellRef], seeds: &BTreeMap<String, serde_json::Value>) -> Vec<Claim> {
    claims(&Planned { cells, seeds })
}

/// (threads over threads, cores) of each side of a decided claim.
fn sides(c: &Claim) -> [(String, usize, usize, usize); 2] {
    let cmp = c.comparison.as_ref().expect("decided");
    let side = |s: &verdict::decide::Side| {
        let per = s.per.as_ref().expect("a ratio side");
        assert_eq!(
            (s.cell.cores, s.cell.variant.as_str()),
            (per.cores, per.variant.as_str())
        );
        (
            s.cell.variant.clone(),
            s.cell.threads,
            per.threads,
            s.cell.cores,
        )
    };
    [side(&cmp.a), side(&cmp.b)]
}

fn names(claims: &[Claim]) -> Vec<&str> {
    claims.iter().map(|c| c.part.as_str()).collect()
}

/// The registry's part names, in order: what every plan's claims list.
fn parts() -> Vec<String> {
    let seeds = BTreeMap::new();
    let registry = registry(Seeds(&seeds));
    registry.names().into_iter().map(str::to_owned).collect()
}

/// The claim of part `name`.
fn part<'c>(claims: &'c [Claim], name: &str) -> &'c Claim {
    claims
        .iter()
        .find(|c| c.part == name)
        .unwrap_or_else(|| panic!("no part {name}"))
}

#[test]
fn on_two_cpus_two_parts_are_decided_and_the_knee_says_what_it_needs() {
    let cells = plan(2, &[BASE, "global-mutex", "dashmap", CONTROL, "lmdb"]);
    let c = claims_of(&cells, &seeds());
    assert_eq!(names(&c), parts());
    let short = sides(part(&c, SHORT_OF_LINEAR));
    assert_eq!(short[0], (BASE.to_owned(), 2, 1, 2));
    assert_eq!(short[1], (CONTROL.to_owned(), 2, 1, 2));
    assert!(part(&c, PER_THREAD_PAST_KNEE).comparison.is_none());
    assert!(
        part(&c, PER_THREAD_PAST_KNEE)
            .missing
            .contains("5 CPUs or more"),
        "{}",
        part(&c, PER_THREAD_PAST_KNEE).missing
    );
    let loss = sides(part(&c, LOSS_PAST_CORES));
    assert_eq!(loss[0], (BASE.to_owned(), 12, 2, 2));
    assert_eq!(loss[1], (CONTROL.to_owned(), 12, 2, 2));
    // Every side is a planned cell of lookup.toml, never of lookup-dispatch.
    for claim in c.iter().filter_map(|c| c.comparison.as_ref()) {
        for cell in claim.cells() {
            assert_eq!(cell.file, "lookup");
            assert!(cells.contains(cell));
        }
    }
}

#[test]
fn on_sixteen_cpus_every_part_is_decided_on_the_most_cpus() {
    let c = claims_of(&plan(16, &[BASE, CONTROL]), &seeds());
    assert_eq!(names(&c), parts());
    assert_eq!(
        sides(part(&c, SHORT_OF_LINEAR))[0],
        (BASE.to_owned(), 16, 1, 16)
    );
    // Past the knee with CPUs idle: 12 threads on 16 CPUs.
    assert_eq!(
        sides(part(&c, PER_THREAD_PAST_KNEE))[0],
        (BASE.to_owned(), 12, 4, 16)
    );
    assert_eq!(
        sides(part(&c, PER_THREAD_PAST_KNEE))[1],
        (CONTROL.to_owned(), 12, 4, 16)
    );
    // On 6 CPUs no planned count lies between the knee and the CPUs: threads = CPUs.
    let six = claims_of(&plan(6, &[BASE, CONTROL]), &seeds());
    assert_eq!(
        sides(part(&six, PER_THREAD_PAST_KNEE))[0],
        (BASE.to_owned(), 6, 4, 6)
    );
    assert_eq!(
        sides(part(&c, LOSS_PAST_CORES))[0],
        (BASE.to_owned(), 96, 16, 16)
    );
}

#[test]
fn on_one_cpu_only_the_loss_past_it_is_decided() {
    let c = claims_of(&plan(1, &[BASE, CONTROL]), &seeds());
    assert_eq!(names(&c), parts());
    assert!(
        part(&c, SHORT_OF_LINEAR)
            .missing
            .contains("needs 2 CPUs or more"),
        "{}",
        part(&c, SHORT_OF_LINEAR).missing
    );
    assert!(part(&c, PER_THREAD_PAST_KNEE)
        .missing
        .contains("5 CPUs or more"));
    assert_eq!(
        sides(part(&c, LOSS_PAST_CORES))[0],
        (BASE.to_owned(), 12, 1, 1)
    );
}

#[test]
fn missing_designs_or_cells_make_every_part_cannot_not_dropped() {
    let no_control = claims_of(&plan(2, &[BASE, "global-mutex", "dashmap"]), &seeds());
    assert_eq!(names(&no_control), parts());
    for c in &no_control {
        assert!(c.comparison.is_none() && c.missing.contains("lock-free control"));
    }
    let no_base = claims_of(&plan(2, &["dashmap", CONTROL]), &seeds());
    assert_eq!(names(&no_base), parts());
    for c in &no_base {
        assert!(c.comparison.is_none() && c.missing.contains("seed's design"));
    }
    // No thread count equal to the CPUs: neither scaling up to them nor past them.
    let gaps = claims_of(&custom(&[2], &[1, 4], &[BASE, CONTROL]), &seeds());
    assert_eq!(names(&gaps), parts());
    assert!(
        part(&gaps, SHORT_OF_LINEAR)
            .missing
            .contains("threads = CPUs"),
        "{}",
        part(&gaps, SHORT_OF_LINEAR).missing
    );
    assert!(part(&gaps, PER_THREAD_PAST_KNEE)
        .missing
        .contains("5 CPUs or more"));
    assert!(
        part(&gaps, LOSS_PAST_CORES)
            .missing
            .contains("threads = CPUs"),
        "{}",
        part(&gaps, LOSS_PAST_CORES).missing
    );
}

#[test]
fn every_deciding_part_names_its_two_controls() {
    // No part decides today (all three are sizes); a part added later that decides must
    // name the test that takes its cause away and the one that puts it back, in
    // `tests/controls.rs`, or fail here.
    verdict::testing::controls_conformance(
        &registry(Seeds(&seeds())),
        &[include_str!("../../../tests/controls.rs")],
    )
    .unwrap();
}

#[test]
fn the_seed_table_names_the_control_and_the_knee() {
    let cells = plan(16, &[BASE, CONTROL, "lmdb"]);
    let lmdb = BTreeMap::from([(
        "lookup".to_owned(),
        json!({"baseline": ["global-mutex", "entry-cache"], "control": "lmdb", "knee_threads": 6}),
    )]);
    let c = claims_of(&cells, &lmdb);
    assert_eq!(
        sides(part(&c, SHORT_OF_LINEAR))[0].0,
        BASE,
        "the first baseline planned"
    );
    assert_eq!(sides(part(&c, SHORT_OF_LINEAR))[1].0, "lmdb");
    assert_eq!(
        sides(part(&c, PER_THREAD_PAST_KNEE))[0],
        (BASE.to_owned(), 12, 6, 16)
    );
    assert!(part(&c, PER_THREAD_PAST_KNEE).claim.contains("6 threads"));
    // Without a table: entry-cache against arc-swap-snapshot, knee 4.
    let c = claims_of(&cells, &BTreeMap::new());
    assert_eq!(sides(part(&c, SHORT_OF_LINEAR))[1].0, CONTROL);
    assert_eq!(sides(part(&c, PER_THREAD_PAST_KNEE))[0].2, 4);
}
