//! The result schema's tests: round trips, refusals, merging repetitions, efficiency.

use std::collections::BTreeMap;

use super::*;

fn key(threads: usize, cores: usize) -> CellKey {
    let mut params = BTreeMap::new();
    params.insert("users".to_owned(), serde_json::json!(6000));
    CellKey {
        hot_path: "lookup".into(),
        variant: "global-mutex".into(),
        params,
        threads,
        cores,
    }
}

fn record(threads: usize, cores: usize, ops: f64) -> CellRecord {
    let mut r = CellRecord::failed(&key(threads, cores), "0", "placeholder");
    r.status = CellStatus::Ok;
    r.failure = None;
    r.verified = true;
    r.repeats = 1;
    r.ops_per_sec = ops;
    r.ops_per_sec_min = ops;
    r.ops_per_sec_max = ops;
    r.extra
        .insert("reads_per_sec".into(), serde_json::json!(ops / 2.0));
    r
}

/// [`record`] as one child's repetition, for merging.
fn rep(threads: usize, cores: usize, ops: f64) -> Repetition {
    Repetition(record(threads, cores, ops))
}

#[test]
fn repetitions_merge_to_median_and_spread() {
    let reps = [rep(2, 2, 300.0), rep(2, 2, 100.0), rep(2, 2, 200.0)];
    let m = CellRecord::merge_repetitions(&reps).unwrap();
    assert_eq!(m.ops_per_sec, 200.0);
    assert_eq!((m.ops_per_sec_min, m.ops_per_sec_max), (100.0, 300.0));
    assert_eq!(m.per_thread_ops_per_sec, 100.0);
    assert_eq!(m.repeats, 3);
    assert_eq!(m.ops_per_sec_reps, vec![300.0, 100.0, 200.0]);
    assert_eq!(m.ops_per_sec_ci, [100.0, 300.0], "3 values: min-max");
    assert_eq!(m.ops_ci_coverage(), 0.75);
    assert_eq!(m.extra["reads_per_sec"], serde_json::json!(100.0));
    assert!(m.verified);
}

#[test]
fn a_label_in_extra_is_what_most_repetitions_said() {
    let labelled = |label: &str| {
        let mut r = rep(2, 2, 100.0);
        r.extra
            .insert("bound_by".into(), serde_json::json!(label.to_owned()));
        r
    };
    let m = CellRecord::merge_repetitions(&[
        labelled("clients"),
        labelled("server"),
        labelled("server"),
    ])
    .unwrap();
    assert_eq!(m.extra["bound_by"], serde_json::json!("server"));
    // On a tie, the earliest.
    let m = CellRecord::merge_repetitions(&[labelled("pool"), labelled("server")]).unwrap();
    assert_eq!(m.extra["bound_by"], serde_json::json!("pool"));
}

#[test]
fn merged_records_keep_every_repetition_and_a_95_percent_interval() {
    // Ten single repetitions, then merged again (a cell of `lab run --repeats`).
    let reps: Vec<Repetition> = [5.0, 9.0, 1.0, 7.0, 3.0, 10.0, 2.0, 8.0, 4.0, 6.0]
        .iter()
        .map(|&ops| {
            let mut r = rep(2, 2, ops);
            r.ops_per_sec_reps = vec![ops];
            r
        })
        .collect();
    let (a, b) = reps.split_at(4);
    let twice = CellRecord::merge_repetitions(&[
        Repetition(CellRecord::merge_repetitions(a).unwrap()),
        Repetition(CellRecord::merge_repetitions(b).unwrap()),
    ])
    .unwrap();
    assert_eq!(twice.ops_per_sec_reps.len(), 10);
    assert_eq!(twice.ops_per_sec, 5.5);
    // n = 10: P(B <= 1) = 11/1024 < 2.5%, P(B <= 2) = 56/1024 > 2.5%: 2nd to 9th.
    assert_eq!(twice.ops_per_sec_ci, [2.0, 9.0]);
    assert_eq!(twice.ops_ci(), (2.0, 9.0));
    assert!(twice.ops_ci_coverage() >= 0.95);
    let text = serde_json::to_string(&twice).unwrap();
    assert!(text.contains("\"ops_per_sec_ci\":[2.0,9.0]"), "{text}");

    // A record from before the fields existed reads with min-max as its interval.
    let mut old: serde_json::Value = serde_json::to_value(record(1, 1, 50.0)).unwrap();
    let obj = old.as_object_mut().unwrap();
    obj.remove("ops_per_sec_ci");
    obj.remove("ops_per_sec_reps");
    obj.insert("ops_per_sec_min".into(), serde_json::json!(40.0));
    obj.insert("ops_per_sec_max".into(), serde_json::json!(60.0));
    let old: CellRecord = serde_json::from_value(old).unwrap();
    assert_eq!(old.ops_ci(), (40.0, 60.0));
    assert!(old.ops_per_sec_reps.is_empty());
}

#[test]
fn one_failed_or_unverified_repetition_taints_the_cell() {
    let mut bad = rep(2, 2, 100.0);
    bad.verified = false;
    bad.verify_error = Some("lost 3 modifications".into());
    let m = CellRecord::merge_repetitions(&[rep(2, 2, 50.0), bad]).unwrap();
    assert!(!m.verified);
    assert_eq!(m.verify_error.as_deref(), Some("lost 3 modifications"));

    let crashed = Repetition::failed(&key(2, 2), "0-1", "exit status 101");
    let m = CellRecord::merge_repetitions(&[rep(2, 2, 50.0), crashed]).unwrap();
    assert_eq!(m.status, CellStatus::Failed);
    assert_eq!(m.repeats, 2);
    assert!(CellRecord::merge_repetitions(&[]).is_none());
}

#[test]
fn efficiency_uses_the_single_thread_cell_of_the_same_cores() {
    let mut cells = vec![
        record(1, 1, 100.0),
        record(2, 1, 90.0),
        record(1, 2, 110.0),
        record(4, 2, 165.0),
    ];
    let mut other = record(8, 2, 50.0);
    other.variant = "dashmap".into();
    cells.push(other);
    fill_efficiency(&mut cells);
    assert_eq!(cells[0].efficiency, Some(1.0));
    assert_eq!(cells[1].efficiency, Some(0.9));
    assert_eq!(cells[3].efficiency, Some(0.75));
    assert_eq!(cells[4].efficiency, None, "no threads=1 cell for dashmap");
}

#[test]
fn the_hot_path_is_written_hot_path_and_schema_1_scenario_still_reads() {
    let r = record(2, 1, 10.0);
    let mut v = serde_json::to_value(&r).unwrap();
    assert_eq!(v["hot_path"], r.hot_path.as_str());
    assert!(v.get("scenario").is_none(), "{v}");
    let obj = v.as_object_mut().unwrap();
    let name = obj.remove("hot_path").unwrap();
    obj.insert("scenario".into(), name);
    let old: CellRecord = serde_json::from_value(v).unwrap();
    assert_eq!(old, r);
}

#[test]
fn a_repetition_is_written_as_its_record() {
    let r = rep(2, 1, 10.0);
    let text = serde_json::to_string(&r).unwrap();
    assert_eq!(text, serde_json::to_string(&r.0).unwrap());
    let back: Repetition = serde_json::from_str(&text).unwrap();
    assert_eq!(back, r);
}
