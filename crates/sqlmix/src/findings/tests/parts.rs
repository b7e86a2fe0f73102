//! The claims a plan gives: which cells each part compares, and why a part cannot be
//! decided where the plan lacks them.

use serde_json::json;

use super::*;

#[test]
fn the_default_plan_decides_every_part_with_sides_at_one_threads_and_cores() {
    let claims = claims_of(&plan(true, 2));
    let names: Vec<&str> = claims.iter().map(|c| c.part.as_str()).collect();
    assert_eq!(
        names,
        [
            K2,
            POOL2,
            APPS,
            JUJU_CLIENT,
            GO_K2,
            GO_SEED_K2,
            GO_POOL2,
            WRITES
        ]
    );
    assert_eq!(names, registry().names());
    for c in &claims {
        let cmp = c
            .comparison
            .as_ref()
            .unwrap_or_else(|| panic!("{}: {}", c.part, c.missing));
        assert_eq!(
            (cmp.a.cell.threads, cmp.a.cell.cores),
            (cmp.b.cell.threads, cmp.b.cell.cores)
        );
        assert!(
            cmp.a.per.is_none() && cmp.b.per.is_none(),
            "single-cell sides"
        );
        // Each side matches exactly one planned cell.
        for side in [&cmp.a.cell, &cmp.b.cell] {
            let n = plan(true, 2)
                .iter()
                .filter(|p| side.matches(&p.file, &p.variant, p.threads, p.cores, &p.params))
                .count();
            assert_eq!(n, 1, "{}: {}", c.part, side.text());
        }
    }
    let k2 = comparison(&claims, K2);
    assert_eq!(k2.a.cell.params["slots"], json!(2));
    assert_eq!(k2.b.cell.params["slots"], json!("unlimited"));
    let pool = comparison(&claims, POOL2);
    assert_eq!(
        (pool.a.cell.file.as_str(), pool.b.cell.file.as_str()),
        (REAL_POOL, REAL)
    );
    let juju = comparison(&claims, JUJU_CLIENT);
    assert_eq!(juju.a.cell.params["client_us"], json!(100));
    // The stand-in is a model; the Go client's parts are the real node's.
    assert_eq!(claim(&claims, JUJU_CLIENT).basis, "model");
    // The Go client's sides are its own cells, never the lab client's beside them.
    let go = comparison(&claims, GO_K2);
    for side in [&go.a.cell, &go.b.cell] {
        assert_eq!(
            (side.file.as_str(), &side.params["client"]),
            (REAL_GO, &json!("go"))
        );
    }
    // The seed-shaped load's sides are its own file's, at its 210 step workers.
    let seed = comparison(&claims, GO_SEED_K2);
    for side in [&seed.a.cell, &seed.b.cell] {
        assert_eq!((side.file.as_str(), side.threads), (REAL_GO_SEED, 210));
    }
    assert_eq!(seed.a.cell.params["slots"], json!(2));
    let go_pool = comparison(&claims, GO_POOL2);
    assert_eq!(
        (go_pool.a.cell.file.as_str(), go_pool.b.cell.file.as_str()),
        (REAL_GO_POOL, REAL_GO)
    );
    assert_eq!(go_pool.b.cell.params["client"], json!("go"));
    // writes_tank_reads compares reads/s, half writing against none.
    let writes = comparison(&claims, WRITES);
    assert_eq!(writes.figure, "reads_per_sec");
    assert_eq!(
        (
            &writes.a.cell.params["read_pct"],
            &writes.b.cell.params["read_pct"]
        ),
        (&json!(50), &json!(100))
    );
}

#[test]
fn every_deciding_part_names_its_two_controls() {
    // K = 2 against none (with either client), at Juju's client time and three apps
    // against one decide the verdict: each names the test that takes its cause away and
    // the one that puts it back, and a deciding part added later without them fails here.
    verdict::testing::controls_conformance(
        &registry(),
        &[include_str!("../../../tests/controls.rs")],
    )
    .unwrap();
}

#[test]
fn without_the_go_client_its_parts_are_inconclusive_with_their_reason() {
    let cells = plan_without_go(true, 2);
    let claims = claims_of(&cells);
    for (name, file) in [
        (GO_K2, REAL_GO),
        (GO_SEED_K2, REAL_GO_SEED),
        (GO_POOL2, REAL_GO),
    ] {
        let c = claim(&claims, name);
        assert!(c.comparison.is_none(), "{name}");
        assert!(
            c.missing.contains(file) && c.missing.contains("golang-github-canonical-go-dqlite-dev"),
            "{name}: {}",
            c.missing
        );
    }
    // The lab's parts are decided all the same.
    assert!(claim(&claims, K2).comparison.is_some());
    let ms = measured_all(&claims, |_| Outcome::Shown);
    let (cells, seeds) = (records(true), seeds());
    let a = answer(&Run {
        cells: &cells,
        seeds: &seeds,
        comparisons: &ms,
    })
    .unwrap();
    let go = a.parts.iter().find(|p| p.name == GO_K2).unwrap();
    assert_eq!(go.outcome, Outcome::Inconclusive);
    assert!(go.why.contains("golang-go"), "{}", go.why);
}

#[test]
fn sides_are_paired_where_both_exist_never_the_luckiest_of_each() {
    // K = 2 at 2 and 4 CPUs, unlimited only at 2: the pair is at 2, not 4 against 2.
    let mut cells = plan(true, 2);
    cells.push(planned_cell(
        REAL,
        "semaphore",
        48,
        4,
        &[("slots", json!(2))],
    ));
    let k2 = comparison(&claims_of(&cells), K2).clone();
    assert_eq!((k2.a.cell.cores, k2.b.cell.cores), (2, 2));
    // With both at 4 CPUs the widest point leads, derived from the plan.
    let wide = comparison(&claims_of(&plan(true, 4)), K2).clone();
    assert_eq!((wide.a.cell.cores, wide.b.cell.cores), (4, 4));
}

#[test]
fn without_the_real_node_every_part_is_listed_and_says_just_setup() {
    let claims = claims_of(&plan(false, 2));
    assert_eq!(claims.len(), registry().names().len());
    for c in &claims {
        assert!(c.comparison.is_none(), "{}", c.part);
        assert!(
            c.missing.contains("just setup"),
            "{}: {}",
            c.part,
            c.missing
        );
    }
    let a = answer_with(false, |_| Outcome::Shown);
    assert_eq!(a.verdict, Verdict::CannotTell);
    assert_eq!(a.parts.len(), registry().names().len());
    assert!(a.sentences[0].contains("just setup"), "{}", a.sentences[0]);
    // The model's figures are context, labelled, with what it was calibrated on.
    assert!(a.details.iter().any(|d| d.contains("dqlite model")));
    assert!(a.calibrated_on.iter().any(|c| c.contains("serve_us")));
}

#[test]
fn a_plan_lacking_one_file_says_which() {
    let cells: Vec<CellRef> = plan(true, 2)
        .into_iter()
        .filter(|c| c.file != REAL_POOL)
        .collect();
    let claims = claims_of(&cells);
    assert!(claim(&claims, K2).comparison.is_some());
    let pool = claim(&claims, POOL2);
    assert!(pool.comparison.is_none());
    assert!(pool.missing.contains(REAL_POOL), "{}", pool.missing);
    let no_client: Vec<CellRef> = plan(true, 2)
        .into_iter()
        .filter(|c| c.file != REAL_CLIENT)
        .collect();
    assert!(claim(&claims_of(&no_client), JUJU_CLIENT)
        .missing
        .contains(REAL_CLIENT));
}

#[test]
fn the_registry_conforms_to_the_default_plan_and_its_answer() {
    let cells = plan(true, 2);
    let no_seeds = BTreeMap::new();
    let planned = Planned {
        cells: &cells,
        seeds: &no_seeds,
    };
    let a = answer_with(true, |_| Outcome::Shown);
    verdict::testing::parts_conformance(&registry(), &planned, Some(&a)).unwrap();
    // Each part's figure is in the answer's sentences, read by name.
    let ms = measured_all(&claims_of(&cells), |_| Outcome::Shown);
    let (records, seeds) = (records(true), seeds());
    let run = Run {
        cells: &records,
        seeds: &seeds,
        comparisons: &ms,
    };
    let r = registry();
    let parts = r.parts(&run);
    let s = a.sentences.join(" ");
    for name in r.names() {
        assert!(s.contains(&parts.get(name).figure()), "{name}: {s}");
    }
}
