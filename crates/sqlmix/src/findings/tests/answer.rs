//! What the answer makes of the parts' pairs: outcomes, the verdict, the sentences and the
//! clients' table.

use super::*;

#[test]
fn every_part_comes_out_shown_contradicted_and_inconclusive() {
    for name in registry().names() {
        for want in [Outcome::Shown, Outcome::Contradicted, Outcome::Inconclusive] {
            let a = answer_with(true, |n| if n == name { want } else { Outcome::Shown });
            assert_eq!(
                outcome(&a, name),
                want,
                "{name} at {}",
                pairs_for(name, want).0
            );
        }
    }
}

#[test]
fn the_verdict_follows_the_parts() {
    let a = answer_with(true, |_| Outcome::Shown);
    assert_eq!(a.verdict, Verdict::Reproduced);
    let basis = |name: &str| {
        a.parts
            .iter()
            .find(|p| p.name == name)
            .unwrap()
            .basis
            .clone()
    };
    assert_eq!(basis(JUJU_CLIENT), "model");
    assert_eq!(
        basis(GO_K2),
        "",
        "the Go client's parts take the finding's basis, real"
    );
    assert_eq!(a.basis, Basis::Real);
    assert!(a.figure.contains("pairs"), "{}", a.figure);
    let against = answer_with(true, |_| Outcome::Contradicted);
    assert_eq!(against.verdict, Verdict::NotReproduced);
    // A deciding part contradicted (the pools' parts are sizes, which weigh nothing in
    // the finding's verdict).
    let mixed = answer_with(true, |n| match n {
        K2 => Outcome::Contradicted,
        APPS => Outcome::Inconclusive,
        _ => Outcome::Shown,
    });
    assert_eq!(mixed.verdict, Verdict::Partly);
}

#[test]
fn the_answer_names_the_setup_and_the_clients_time_per_transaction() {
    let a = answer_with(true, |_| Outcome::Shown);
    let s = a.sentences.join(" ");
    assert!(s.contains("one node") && s.contains("tmpfs"), "{s}");
    assert!(s.contains("48 threads on 2 CPUs"), "{s}");
    // The stand-in: 2 / 4.9k txn/s = 0.41 ms, slowed to 2 / 1.89k = 1.06 ms, and said to be
    // a model calibrated on another machine.
    assert!(s.contains("0.41 ms") && s.contains("1.06 ms"), "{s}");
    assert!(s.contains("100 us per statement"), "{s}");
    assert!(s.contains("another machine") && s.contains("model"), "{s}");
    // Both clients side by side, each one's time in the gate, Juju's named.
    assert!(s.contains("Juju's own client (Go"), "{s}");
    assert!(
        s.contains("2.36 ms against the lab client's 0.42 ms"),
        "{s}"
    );
    assert!(s.contains("reads/s"), "{s}");
    let t = a
        .tables
        .iter()
        .find(|t| t.title.contains("two clients"))
        .expect("the clients' table");
    assert!(t.columns.iter().any(|c| c.contains("Juju's client (Go")));
    assert_eq!(t.rows[0][4], "2.36");
    assert!(a
        .details
        .iter()
        .any(|d| d.contains("1.06 ms") && d.contains("1.21x")));
    assert!(a.calibrated_on.iter().any(|c| c.contains("client_us")));
    assert!(a.sentences.len() <= 3);
    // Why the Go client's K = 2 gains: the churn of its pools without a gate, from its
    // cells' connects/s; and the seed's two setups told apart.
    let churn = a
        .details
        .iter()
        .find(|d| d.contains("connections/s"))
        .expect("the churn detail");
    assert!(
        churn.contains("745 connections/s") && churn.contains("3 at K = 2"),
        "{churn}"
    );
    assert!(churn.contains("three-app branch"), "{churn}");
}

#[test]
fn local_sqlite_and_cell_intervals_never_decide() {
    // Cells whose intervals are far apart, no pairs: every part inconclusive.
    let cells = records(true);
    let seeds = seeds();
    let claims = claims_of(&plan(true, 2));
    let ms: Vec<Measured> = claims.into_iter().map(Measured::new).collect();
    let a = answer(&Run {
        cells: &cells,
        seeds: &seeds,
        comparisons: &ms,
    })
    .unwrap();
    assert_eq!(a.verdict, Verdict::CannotTell);
    assert!(a.parts.iter().all(|p| p.outcome == Outcome::Inconclusive));
}

#[test]
fn a_run_of_the_clients_file_alone_answers_with_both_clients_side_by_side() {
    // A quick run of sqlmix-libdqlite-go.toml: its cells, no pairs declared.
    let cells: Vec<CellRecord> = records(true)
        .into_iter()
        .filter(|c| c.file() == REAL_GO)
        .collect();
    let seeds = BTreeMap::new();
    let a = answer(&Run {
        cells: &cells,
        seeds: &seeds,
        comparisons: &[],
    })
    .expect("the Go client's cells bear on the question");
    assert_eq!(a.verdict, Verdict::CannotTell);
    let s = a.sentences.join(" ");
    assert!(!s.contains("did not run here, so"), "the node ran: {s}");
    assert!(
        s.contains("2.36 ms against the lab client's 0.42 ms"),
        "{s}"
    );
    assert!(a.tables.iter().any(|t| t.title.contains("two clients")));
    assert!(a.sentences.len() <= 3, "{s}");
}
