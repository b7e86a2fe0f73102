use std::collections::BTreeMap;

use verdict::decide::{CellRef, Measured, Planned};

use super::*;
use verdict::testing::{claim, part};

/// Part (d) on profiles drawn at random from one workload.
mod profile;

fn plan(
    file: &str,
    default: serde_json::Value,
    threads: &[usize],
    cores: &[usize],
) -> Vec<CellRef> {
    let mut cells = Vec::new();
    for &c in cores {
        for &t in threads {
            let mut r = CellRef::new(file, VARIANT, t, c);
            r.params
                .insert("server_command".into(), "memcached -t {threads}".into());
            r.params
                .insert("server_default_threads".into(), default.clone());
            cells.push(r);
        }
    }
    cells
}

#[test]
fn every_server_file_gets_its_four_parts_against_its_own_default() {
    let mut cells = plan("server-memcached", 4.into(), &[1, 2, 4, 8, 16], &[1, 2]);
    cells.extend(plan(
        "server-nginx",
        "nproc".into(),
        &[1, 2, 4, 16],
        &[1, 2],
    ));
    let seeds = BTreeMap::new();
    let planned = Planned {
        cells: &cells,
        seeds: &seeds,
    };
    let claims = claims_on(&planned, 2);
    let names: Vec<&str> = claims.iter().map(|c| c.part.as_str()).collect();
    assert_eq!(
        names,
        [
            "server-memcached/threads_past_cpus",
            "server-memcached/recommendation",
            "server-memcached/per_thread_with_cpus_free",
            "server-memcached/where_time_goes",
            "server-nginx/threads_past_cpus",
            "server-nginx/recommendation",
            "server-nginx/per_thread_with_cpus_free",
            "server-nginx/where_time_goes",
        ]
    );
    // memcached on 2 CPUs: threads = CPUs against its own 4; the most threads other
    // than 4 against 2.
    let rec = claim(&claims, "server-memcached/recommendation");
    assert!(
        rec.claim.ends_with(
            ": threads = CPUs (2) against the server's own default of 4 threads on 2 CPUs"
        ),
        "{}",
        rec.claim
    );
    let rec = rec.comparison.as_ref().expect("decided by pairs");
    assert_eq!(
        (rec.a.cell.threads, rec.b.cell.threads, rec.a.cell.cores),
        (2, 4, 2)
    );
    let past = claim(&claims, "server-memcached/threads_past_cpus");
    let past = past.comparison.as_ref().expect("decided by pairs");
    assert_eq!((past.a.cell.threads, past.b.cell.threads), (16, 2));
    // nginx's default is one per CPU: threads = CPUs is the default, nothing to compare.
    let nginx = claim(&claims, "server-nginx/recommendation");
    assert!(nginx.comparison.is_none());
    assert!(nginx.missing.contains("own default"), "{nginx:?}");
    assert_eq!(nginx.claim, CLAIMS.recommendation);
    // 2 CPUs leave none free for part (c).
    let free = claim(&claims, "server-memcached/per_thread_with_cpus_free");
    assert!(free.comparison.is_none());
}

/// Usable cells of `file` on 8 CPUs at 1, 2, 4, 8 and 16 threads, the server's parameters
/// on every one, and the plan that named them.
fn cells_of(file: &str) -> (Vec<CellRecord>, Vec<CellRef>) {
    let params = [
        (
            "server_command",
            serde_json::json!("memcached -t {threads}"),
        ),
        ("server_default_threads", serde_json::json!(4)),
    ];
    let mut cells = Vec::new();
    for cores in [4, 8] {
        for threads in [1, 2, 4, 8, 16] {
            let ops = 1e4 * threads.min(cores) as f64;
            cells.push(harness::testing::synthetic_cell(
                "server", file, VARIANT, &params, threads, cores, ops, 100.0, 5,
            ));
        }
    }
    let planned = plan(file, 4.into(), &[1, 2, 4, 8, 16], &[4, 8]);
    (cells, planned)
}

#[test]
fn each_comparison_part_can_be_shown_contradicted_or_inconclusive() {
    let (cells, planned) = cells_of("server-memcached");
    let seeds = BTreeMap::new();
    let claims = claims_on(
        &Planned {
            cells: &planned,
            seeds: &seeds,
        },
        9,
    );
    let outcome = |name: &str, ratio: f64| {
        let m = [verdict::testing::synthetic_pairs(
            claim(&claims, name),
            ratio,
            0.04,
            24,
        )];
        let run = Run {
            cells: &cells,
            seeds: &seeds,
            comparisons: &m,
        };
        let a = answer(&run).expect("an answer from usable cells");
        part(&a, name).outcome
    };
    use Outcome::*;
    for (name, shown, contradicted, between) in [
        // 16 against 8 threads on 8 CPUs; threads = CPUs (8) against the default 4; per
        // thread at 4 threads on 8 CPUs against 1 (9 CPUs: one left for the clients).
        ("server-memcached/threads_past_cpus", 0.85, 1.05, 0.96),
        ("server-memcached/recommendation", 1.20, 0.90, 1.035),
        (
            "server-memcached/per_thread_with_cpus_free",
            0.70,
            1.00,
            0.925,
        ),
    ] {
        assert_eq!(outcome(name, shown), Shown, "{name}");
        assert_eq!(outcome(name, contradicted), Contradicted, "{name}");
        assert_eq!(outcome(name, between), Inconclusive, "{name}");
    }
    // Without pairs every part is inconclusive, and so the verdict cannot tell.
    let run = Run {
        cells: &cells,
        seeds: &seeds,
        comparisons: &[],
    };
    let a = answer(&run).unwrap();
    assert!(a.parts.iter().all(|p| p.outcome == Inconclusive));
    assert_eq!(a.verdict, verdict::findings::Verdict::CannotTell);
}

#[test]
fn a_file_whose_cells_all_failed_keeps_its_four_parts_inconclusive_with_the_failure() {
    let (mut cells, planned) = cells_of("server-memcached");
    let (failed, _) = cells_of("server-nginx");
    cells.extend(failed.into_iter().map(|mut c| {
        c.status = harness::schema::CellStatus::Failed;
        c.failure = Some("nginx: command not found\n(the second line)".to_owned());
        c
    }));
    let seeds = BTreeMap::new();
    let claims = claims_on(
        &Planned {
            cells: &planned,
            seeds: &seeds,
        },
        9,
    );
    // memcached's three comparison parts shown.
    let m: Vec<_> = [
        ("server-memcached/threads_past_cpus", 0.85),
        ("server-memcached/recommendation", 1.20),
        ("server-memcached/per_thread_with_cpus_free", 0.70),
    ]
    .into_iter()
    .map(|(name, r)| verdict::testing::synthetic_pairs(claim(&claims, name), r, 0.04, 24))
    .collect();
    let run = Run {
        cells: &cells,
        seeds: &seeds,
        comparisons: &m,
    };
    let a = answer(&run).expect("an answer");
    let nginx: Vec<&Part> = a
        .parts
        .iter()
        .filter(|p| p.name.starts_with("server-nginx/"))
        .collect();
    assert_eq!(nginx.len(), 4, "{:?}", a.parts);
    for p in &nginx {
        assert_eq!(p.outcome, Outcome::Inconclusive);
        assert!(p.why.contains("nginx: command not found"), "{}", p.why);
        assert!(!p.why.contains("second line"), "{}", p.why);
    }
    assert!(a.sentences[0].contains("server-nginx"), "{:?}", a.sentences);
    assert_eq!(
        a.chart,
        Some(verdict::findings::Chart::Throughput {
            file: "server-memcached".to_owned()
        })
    );
    assert_eq!(all_failed(&cells, "server-memcached"), None);
}

#[test]
fn per_thread_is_asked_past_the_knee_the_files_seed_table_names() {
    let cells = plan(
        "server-memcached",
        4.into(),
        &[1, 2, 4, 6, 8, 16],
        &[2, 4, 8],
    );
    let seeds = BTreeMap::from([(
        "server-memcached".to_owned(),
        serde_json::json!({"knee_threads": 4}),
    )]);
    let planned = Planned {
        cells: &cells,
        seeds: &seeds,
    };
    const FREE: &str = "server-memcached/per_thread_with_cpus_free";
    // 9 CPUs: the server on 8, 6 threads past the knee of 4 against 4, per thread.
    let claims = claims_on(&planned, 9);
    let c = claim(&claims, FREE);
    let cmp = c.comparison.as_ref().expect("decided by pairs");
    assert_eq!(
        (cmp.a.cell.threads, cmp.b.cell.threads, cmp.a.cell.cores),
        (6, 4, 8)
    );
    assert_eq!(cmp.scale, 4.0 / 6.0);
    assert_eq!(
        c.claim,
        format!(
            "{}: per thread at 6 threads against at the seed's knee of 4 threads (knee_threads in benches/server-memcached.toml)",
            CLAIMS.per_thread_with_cpus_free
        )
    );
    // 2 CPUs (this machine): too few, and the reason says how many it needs.
    let claims = claims_on(&planned, 2);
    let c = claim(&claims, FREE);
    assert!(c.comparison.is_none());
    assert!(
        c.missing.contains("has 2 CPU(s)") && c.missing.contains("needs at least 7"),
        "{}",
        c.missing
    );
    // Without a knee in the file the part is asked from 1 thread, and says so.
    let none = BTreeMap::new();
    let claims = claims_on(
        &Planned {
            cells: &cells,
            seeds: &none,
        },
        9,
    );
    let c = claim(&claims, FREE);
    let cmp = c.comparison.as_ref().expect("decided by pairs");
    assert_eq!((cmp.a.cell.threads, cmp.b.cell.threads), (6, 1));
    assert!(c.claim.contains("names no knee_threads"), "{}", c.claim);
}

#[test]
fn the_registry_conforms_to_a_plan_with_every_parts_cells_and_to_its_answer() {
    let (cells, planned) = cells_of("server-memcached");
    let file = "server-memcached";
    let f = facts(file, &planned[0].params);
    let against = |_: &Planned<'_>, cores| f.against(cores);
    let seeds = BTreeMap::new();
    let plan = Planned {
        cells: &planned,
        seeds: &seeds,
    };
    // 9 CPUs: every comparison finds its sides (see the test above).
    let full = registry(file, &f, &against, 9);
    let claims = full.claims(&plan);
    assert_eq!(claims, claims_on(&plan, 9));
    let comparisons: Vec<Measured> = claims
        .iter()
        .map(|c| match c.comparison {
            Some(_) => verdict::testing::synthetic_pairs(c, 1.0, 0.04, 24),
            None => Measured::new(c.clone()),
        })
        .collect();
    let run = Run {
        cells: &cells,
        seeds: &seeds,
        comparisons: &comparisons,
    };
    let a = answer(&run).expect("an answer");
    let time = format!("{file}/{WHERE_TIME_GOES}");
    // Part (d) is read from profiles: declared without sides, as the claims say.
    assert!(claim(&claims, &time).missing.contains("profiles"));
    verdict::testing::parts_conformance(&full, &plan, Some(&a)).unwrap();
}

#[test]
fn every_deciding_part_names_its_two_controls() {
    let (_, planned) = cells_of("server-memcached");
    let file = "server-memcached";
    let f = facts(file, &planned[0].params);
    let against = |_: &Planned<'_>, cores| f.against(cores);
    verdict::testing::controls_conformance(
        &registry(file, &f, &against, 9),
        &[include_str!("../../tests/controls.rs")],
    )
    .unwrap();
}
