//! Which parts a plan declares, on which cells, and how each part's pairs come out:
//! shown, contradicted and inconclusive for every part.

use verdict::decide::Outcome;

use super::*;

#[test]
fn every_part_is_listed_in_order_whatever_the_plan() {
    let none = BTreeMap::new();
    let registry = registry(Seeds(&none));
    let names = registry.names();
    // The names scripts read, each declared once.
    assert_eq!(
        names,
        [PLATEAU, LIFT, LARGE_BATCH_GAIN, NO_CHANGE_AT_BATCH_1],
        "renamed or reordered"
    );
    let empty = claims_of(&[], &none);
    let declared: Vec<&str> = empty.iter().map(|c| c.part.as_str()).collect();
    assert_eq!(declared, names);
    for c in &empty {
        assert!(c.comparison.is_none(), "{}", c.part);
        assert!(!c.missing.is_empty(), "{}", c.part);
        // The plateau and the lift follow from the model's construction: sizes.
        let sized = [PLATEAU, LIFT].contains(&c.part.as_str());
        assert_eq!(
            (c.basis.as_str(), c.size_only),
            ("model", sized),
            "{}",
            c.part
        );
    }
    let declared: Vec<String> = default_claims().into_iter().map(|c| c.part).collect();
    assert_eq!(declared, names);
}

#[test]
fn every_deciding_part_names_its_two_controls() {
    // The large batch's gain and "no change" at batch 1 decide the verdict: each names
    // the test that takes its cause away and the one that puts it back, and a part
    // added later without them fails here.
    let none = BTreeMap::new();
    verdict::testing::controls_conformance(
        &registry(Seeds(&none)),
        &[include_str!("../../../tests/controls.rs")],
    )
    .unwrap();
}

#[test]
fn a_plan_without_the_clients_file_cannot_decide_the_plateau_or_the_lift() {
    let cells: Vec<CellRef> = plan(2, &[1000])
        .into_iter()
        .filter(|c| c.file != CLIENTS_FILE)
        .collect();
    let claims = claims_of(&cells, &seeds());
    for name in [PLATEAU, LIFT] {
        let c = named(&claims, name);
        assert!(c.comparison.is_none());
        assert!(c.missing.contains("pool-clients"), "{}", c.missing);
    }
    assert!(named(&claims, LARGE_BATCH_GAIN).comparison.is_some());
}

#[test]
fn sides_are_the_seeds_cells_at_the_same_cores_and_clients() {
    // 16 CPUs elsewhere: the sides follow the plan, not this machine's 2.
    let claims = claims_of(&plan(16, &[1000]), &seeds());
    let plateau = named(&claims, PLATEAU).comparison.unwrap();
    assert_eq!(
        (plateau.a.cell.threads, plateau.b.cell.threads),
        (2000, 1000)
    );
    assert_eq!(plateau.a.cell.params["connections"], 1);
    assert_eq!(plateau.b.cell.params["max_requests"], 1024);
    for name in [PLATEAU, LIFT, LARGE_BATCH_GAIN] {
        let c = named(&claims, name).comparison.unwrap();
        assert!(
            c.a.per.is_none() && c.b.per.is_none(),
            "{name}: one cell a side"
        );
        assert_eq!((c.a.cell.cores, c.b.cell.cores), (16, 16), "{name}");
    }
    for name in [LIFT, LARGE_BATCH_GAIN] {
        let c = named(&claims, name).comparison.unwrap();
        assert_eq!(c.a.cell.threads, c.b.cell.threads, "{name}");
        assert_eq!(
            c.a.cell.params["connections"], 10,
            "{name}: the fix over the default"
        );
        assert_eq!(c.b.cell.params["connections"], 1, "{name}");
    }
    let large = named(&claims, LARGE_BATCH_GAIN).comparison.unwrap();
    assert_eq!(large.a.cell.file, BATCH_FILE);
    assert_eq!(large.a.cell.params["batch"], 500, "the out-of-sample batch");
    assert_eq!(large.figure, "datapoints_per_sec");
    // Each side names only what tells it apart: it matches exactly one planned cell.
    let cells = plan(16, &[1000]);
    for c in claims.iter().filter_map(|c| c.comparison.as_ref()) {
        for side in c.cells() {
            let n = cells
                .iter()
                .filter(|p| side.matches(&p.file, &p.variant, p.threads, p.cores, &p.params))
                .count();
            assert_eq!(n, 1, "{}", side.text());
        }
    }
}

#[test]
fn no_change_is_no_part_where_the_default_cannot_queue() {
    // 1000 clients at batch 1 have at most 1000 statements in flight: fewer than 1024.
    let c = named(&default_claims(), NO_CHANGE_AT_BATCH_1);
    assert!(c.comparison.is_none());
    assert!(c.missing.contains("cannot queue"), "{}", c.missing);
    assert!(
        c.missing.contains("1000") && c.missing.contains("1024"),
        "{}",
        c.missing
    );
    // With 2000 clients it can: the part compares the fix and the default there.
    let c = named(&queueing_claims(), NO_CHANGE_AT_BATCH_1)
        .comparison
        .unwrap();
    assert_eq!((c.a.cell.threads, c.b.cell.threads), (2000, 2000));
    assert_eq!(c.b.cell.params["batch"], 1);
}

/// The outcome of part `name` of `claims` with pairs at `ratio`.
fn outcome(claims: &[Claim], name: &str, ratio: f64, n: usize) -> Outcome {
    measured(&named(claims, name), ratio, n).part().outcome
}

#[test]
fn the_plateau_is_a_band_from_flat_to_the_seeds_growth() {
    let c = default_claims();
    assert_eq!(outcome(&c, PLATEAU, 1.01, 24), Outcome::Shown);
    assert_eq!(outcome(&c, PLATEAU, 1.15, 24), Outcome::Shown);
    assert_eq!(outcome(&c, PLATEAU, 1.9, 24), Outcome::Contradicted);
    assert_eq!(outcome(&c, PLATEAU, 1.4, 24), Outcome::Contradicted);
    // A fall is no plateau.
    assert_eq!(outcome(&c, PLATEAU, 0.85, 24), Outcome::Contradicted);
    // At either edge of the band: undecided however many pairs.
    assert_eq!(outcome(&c, PLATEAU, 1.2, 192), Outcome::Inconclusive);
    assert_eq!(outcome(&c, PLATEAU, 0.95, 192), Outcome::Inconclusive);
    // Too few pairs for an interval.
    assert_eq!(outcome(&c, PLATEAU, 1.01, 5), Outcome::Inconclusive);
}

#[test]
fn the_lift_is_shown_clearly_above_and_contradicted_without_one() {
    let c = default_claims();
    assert_eq!(outcome(&c, LIFT, 1.93, 16), Outcome::Shown);
    assert_eq!(outcome(&c, LIFT, 1.0, 24), Outcome::Contradicted);
    assert_eq!(outcome(&c, LIFT, 0.8, 24), Outcome::Contradicted);
    assert_eq!(outcome(&c, LIFT, 1.15, 192), Outcome::Inconclusive);
}

#[test]
fn the_large_batch_gain_agrees_with_the_seeds_inside_its_band_only() {
    let c = default_claims();
    // +209% against the seed's +180%: 1.10x the seed's throughput gain.
    assert_eq!(outcome(&c, LARGE_BATCH_GAIN, 3.09, 24), Outcome::Shown);
    // No gain, or far more than the seed's: both disagree with it.
    assert_eq!(
        outcome(&c, LARGE_BATCH_GAIN, 1.0, 24),
        Outcome::Contradicted
    );
    assert_eq!(
        outcome(&c, LARGE_BATCH_GAIN, 4.2, 24),
        Outcome::Contradicted
    );
    // At the band's edge (2.8 / 1.25 = 2.24) the interval straddles it.
    assert_eq!(
        outcome(&c, LARGE_BATCH_GAIN, 2.24, 192),
        Outcome::Inconclusive
    );
}

#[test]
fn no_change_where_the_default_can_queue_comes_out_each_way() {
    let c = queueing_claims();
    assert_eq!(outcome(&c, NO_CHANGE_AT_BATCH_1, 1.0, 24), Outcome::Shown);
    assert_eq!(
        outcome(&c, NO_CHANGE_AT_BATCH_1, 1.5, 24),
        Outcome::Contradicted
    );
    assert_eq!(
        outcome(&c, NO_CHANGE_AT_BATCH_1, 1.103, 192),
        Outcome::Inconclusive
    );
    // In the default plan it is never measured: inconclusive, saying why.
    let p = measured(&named(&default_claims(), NO_CHANGE_AT_BATCH_1), 1.0, 24).part();
    assert_eq!(p.outcome, Outcome::Inconclusive);
    assert!(p.why.contains("cannot queue"), "{}", p.why);
}

#[test]
fn without_seed_tables_the_seeds_own_figures_are_used() {
    let claims = claims_of(&plan(2, &[1000]), &BTreeMap::new());
    let plateau = named(&claims, PLATEAU).comparison.unwrap();
    assert_eq!(plateau.rule.thresholds(), vec![0.95, 1.2]);
    let large = named(&claims, LARGE_BATCH_GAIN).comparison.unwrap();
    assert_eq!(large.a.cell.params["batch"], 500);
}
