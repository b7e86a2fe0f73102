//! The answer from records: the verdict follows the parts, a missing profile or a server
//! that never started is inconclusive with its reason, and the model and OpenLDAP sit
//! beside the parts.

use super::*;
use verdict::testing::part;

fn with_profile(mut r: CellRecord, path: &std::path::Path, repeat: &std::path::Path) -> CellRecord {
    r.profile = Some(ProfileRef {
        svg: String::new(),
        folded: path.to_string_lossy().into_owned(),
        samples: 1000,
        sampler: "perf".to_owned(),
        rate_hz: 997,
        off_cpu: None,
        repeats: vec![repeat.to_string_lossy().into_owned()],
        server_off_cpu: None,
        server_off_cpu_absent: None,
        run_overhead_s: None,
    });
    r
}

/// Cells on 1 and 2 CPUs; the 1- and 16-thread cells on 2 CPUs profiled twice from `dir`.
fn matrix(dir: Option<&std::path::Path>, grow: f64) -> Vec<CellRecord> {
    let mut out = Vec::new();
    for cores in [1, 2] {
        for t in [1, 2, 4, 6, 12, 16] {
            let mut r = cell(FILE, VARIANT, t, cores, 10_000.0 * cores as f64, 5);
            if let (Some(d), 2, 1 | 16) = (dir, cores, t) {
                let (path, repeat) = (
                    d.join(format!("t{t}.folded")),
                    d.join(format!("t{t}.r1.folded")),
                );
                for p in [&path, &repeat] {
                    std::fs::write(p, folded(1000, if t == 1 { 0.2 } else { grow })).unwrap();
                }
                r = with_profile(r, &path, &repeat);
            }
            if t == 16 {
                r.extra.insert("nsslapd_threadnumber".into(), "-1".into());
                r.extra.insert("threadnumber_read_back".into(), 16.into());
            }
            out.push(r);
        }
    }
    out
}

/// The answer to `cells` with part (a) measured at `past` and (b) at `rec`.
fn answer_with(cells: &[CellRecord], [past, rec]: [f64; 2]) -> Answer {
    let c = claims_of(&plan(2), 2);
    // As lab keeps them: every claim, those that cannot be compared with no pairs.
    let comparisons: Vec<Measured> = c
        .iter()
        .map(|c| match c.part.as_str() {
            THREADS_PAST_CPUS => measured(c, past, 24),
            RECOMMENDATION => measured(c, rec, 24),
            _ => Measured::new(c.clone()),
        })
        .collect();
    let seeds = BTreeMap::new();
    answer(&Run {
        cells,
        seeds: &seeds,
        comparisons: &comparisons,
    })
    .unwrap()
}

#[test]
fn the_verdict_follows_the_parts() {
    let dir = tempfile::tempdir().unwrap();
    let cells = matrix(Some(dir.path()), 0.4);
    // Cost past the CPUs, recommendation beats the default, time goes to a function;
    // per-thread cannot be told on 2 CPUs: partly.
    let a = answer_with(&cells, [0.85, 1.2]);
    let words: Vec<(&str, &str)> = a
        .parts
        .iter()
        .map(|p| (p.name.as_str(), p.outcome.word()))
        .collect();
    assert_eq!(
        words,
        [
            (THREADS_PAST_CPUS, "shown"),
            (RECOMMENDATION, "shown"),
            (PER_THREAD_WITH_CPUS_FREE, "inconclusive"),
            (WHERE_TIME_GOES, "shown")
        ],
        "{:?}",
        a.parts
    );
    assert_eq!(a.verdict, Verdict::Partly);
    assert_eq!(a.basis, Basis::Real);
    assert!(a.sentences.len() <= 3);
    assert!(
        a.sentences[0].contains("0.8")
            && a.sentences[0].contains("12 against 2 threads on 2 CPU(s)"),
        "{}",
        a.sentences[0]
    );
    assert!(
        a.sentences[1].contains("needs at least 7"),
        "{}",
        a.sentences[1]
    );
    assert!(
        a.figure.starts_with("threads_past_cpus: 0.8"),
        "{}",
        a.figure
    );
    assert!(
        a.details
            .iter()
            .any(|d| d.contains("resolved nsslapd-threadnumber: -1 to 16")),
        "{:?}",
        a.details
    );
    assert_eq!(a.tables[0].rows.len(), 12);
    // The figures: no cost past the CPUs, the default as good: not reproduced.
    let cells = matrix(Some(dir.path()), 0.205);
    let a = answer_with(&cells, [1.02, 0.95]);
    assert_eq!(a.verdict, Verdict::NotReproduced, "{:?}", a.parts);
    // Nothing measured and no profiles: cannot tell, every part still listed.
    let cells = matrix(None, 0.0);
    let seeds = BTreeMap::new();
    let a = answer(&Run {
        cells: &cells,
        seeds: &seeds,
        comparisons: &[],
    })
    .unwrap();
    assert_eq!(a.verdict, Verdict::CannotTell);
    assert_eq!(names_of(&a), ALL);
    let time = part(&a, WHERE_TIME_GOES);
    assert!(time.why.contains("no profile"), "{}", time.why);
}

#[test]
fn a_missing_profile_file_is_inconclusive_with_its_reason() {
    let dir = tempfile::tempdir().unwrap();
    let cells = matrix(Some(dir.path()), 0.4);
    std::fs::remove_file(dir.path().join("t16.folded")).unwrap();
    let a = answer_with(&cells, [0.85, 1.2]);
    let time = part(&a, WHERE_TIME_GOES);
    assert_eq!(time.outcome, Outcome::Inconclusive);
    assert!(time.why.contains("cannot read the profile"), "{}", time.why);
}

#[test]
fn no_389_cells_no_answer_and_the_model_and_openldap_sit_beside_it() {
    let seeds = BTreeMap::new();
    assert!(answer(&Run {
        cells: &[],
        seeds: &seeds,
        comparisons: &[]
    })
    .is_none());
    let mut cells = matrix(None, 0.0);
    for t in [2, 4, 6, 12] {
        cells.push(cell("openldap", "openldap", t, 2, 5000.0, 5));
    }
    for (v, most) in [("global-mutex", 0.5), ("dashmap", 3.0)] {
        cells.push(cell("lookup", v, 1, 2, 1e6, 5));
        cells.push(cell("lookup", v, 16, 2, 1e6 * most, 5));
    }
    let a = answer(&Run {
        cells: &cells,
        seeds: &seeds,
        comparisons: &[],
    })
    .unwrap();
    assert!(
        a.details.iter().any(|d| d.starts_with("OpenLDAP:")),
        "{:?}",
        a.details
    );
    // 389 DS on 2 cores is flat (1.0x): nearer the mutex's 0.5x than dashmap's 3x.
    assert!(
        a.details
            .iter()
            .any(|d| d.contains("nearest model design is global-mutex")),
        "{:?}",
        a.details
    );
    assert_eq!(a.tables.len(), 2);
}

#[test]
fn a_389_ds_that_never_started_leaves_four_inconclusive_parts_with_the_failure() {
    let seeds = BTreeMap::new();
    let cells: Vec<CellRecord> = matrix(None, 0.0)
        .into_iter()
        .map(|mut c| {
            c.status = harness::schema::CellStatus::Failed;
            c.failure = Some("ns-slapd exited before listening: status 1\nlog tail".to_owned());
            c
        })
        .collect();
    let a = answer(&Run {
        cells: &cells,
        seeds: &seeds,
        comparisons: &[],
    })
    .expect("the failed server stays in the findings");
    assert_eq!(names_of(&a), ALL);
    assert!(a.parts.iter().all(|p| p.outcome == Outcome::Inconclusive
        && p.why.contains("ns-slapd exited before listening")
        && !p.why.contains("log tail")));
    assert_eq!(a.verdict, Verdict::CannotTell);
}

fn names_of(a: &Answer) -> Vec<&str> {
    a.parts.iter().map(|p| p.name.as_str()).collect()
}

#[test]
fn the_registry_conforms_to_a_plan_with_every_parts_cells_and_to_its_answer() {
    // 9 CPUs and the server on up to 8: every comparison finds its sides in the plan
    // (part (c) at 6 threads against the knee's 4 on 8 CPUs, one CPU left for clients).
    let planned = plan(8);
    let seeds = seeds();
    let plan = Planned {
        cells: &planned,
        seeds: &seeds,
    };
    let full = registry_on(9);
    let claims = full.claims(&plan);
    let comparisons: Vec<Measured> = claims
        .iter()
        .map(|c| match c.comparison {
            Some(_) => measured(c, 1.0, 24),
            None => Measured::new(c.clone()),
        })
        .collect();
    let cells: Vec<CellRecord> = planned
        .iter()
        .map(|p| cell(FILE, VARIANT, p.threads, p.cores, 1e4 * p.cores as f64, 5))
        .collect();
    let a = answer(&Run {
        cells: &cells,
        seeds: &seeds,
        comparisons: &comparisons,
    })
    .expect("an answer");
    // Part (d) is read from profiles: declared without sides, as the claims say.
    assert!(claim(&claims, WHERE_TIME_GOES).missing.contains("profiles"));
    verdict::testing::parts_conformance(&full, &plan, Some(&a)).unwrap();
}
