//! The results file's tests: a round trip through JSON, and the refusals.

use std::collections::BTreeMap;

use harness::env::EnvInfo;
use harness::schema::{CellKey, CellRecord, CellStatus, OffCpuRef, ProfileRef, Repetition};

use super::*;

fn record(threads: usize, cores: usize, ops: f64) -> CellRecord {
    let key = CellKey {
        hot_path: "lookup".into(),
        variant: "global-mutex".into(),
        params: BTreeMap::new(),
        threads,
        cores,
    };
    let mut r = CellRecord::failed(&key, "0", "placeholder");
    r.status = CellStatus::Ok;
    r.failure = None;
    r.verified = true;
    r.ops_per_sec = ops;
    r
}

#[test]
fn results_round_trip_through_json() {
    let mut failed = CellRecord::failed(&record(4, 2, 0.0).key(), "0-1", "timed out after 30 s");
    failed.profile = Some(ProfileRef {
        svg: "profiles/x.svg".into(),
        folded: "profiles/x.folded".into(),
        samples: 12,
        sampler: "perf".into(),
        rate_hz: 2000,
        off_cpu: Some(OffCpuRef {
            svg: "profiles/x.offcpu.svg".into(),
            folded: "profiles/x.offcpu.folded".into(),
            seconds: 0.5,
            measured_seconds: Some(0.55),
            samples: 500,
        }),
        repeats: vec!["profiles/x.r1.folded".into()],
        server_off_cpu: None,
        server_off_cpu_absent: None,
        run_overhead_s: Some(1.5),
    });
    let file = ResultsFile {
        schema: SCHEMA_VERSION,
        run_id: "20261130T120000Z".into(),
        started: "2026-11-30T12:00:00Z".into(),
        finished: "2026-11-30T12:01:00Z".into(),
        command: "just matrix".into(),
        complete: false,
        settings_by_file: vec![
            "lookup.toml (threads axis): set here threads=1,2; as the file has them: cores 1,2"
                .into(),
        ],
        seeds: BTreeMap::new(),
        env: EnvInfo::default(),
        cells: vec![record(1, 1, 1000.0), failed],
        plan: None,
        comparisons: Vec::new(),
        order_seed: 42,
        resume: Some(ResumeState {
            settings: vec!["threads=1,2".into()],
            repetitions: vec![Repetition(record(1, 1, 1000.0))],
        }),
    };
    let text = serde_json::to_string_pretty(&file).unwrap();
    assert!(text.contains("\"ops_per_sec_min\""));
    assert!(text.contains("\"status\": \"failed\""));
    assert_eq!(ResultsFile::from_json(&text).unwrap(), file);
}

#[test]
fn newer_schema_and_garbage_are_refused() {
    let err = ResultsFile::from_json(r#"{"schema": 99, "cells": []}"#).unwrap_err();
    assert!(err.contains("schema 99 is newer"), "{err}");
    assert!(ResultsFile::from_json("{\"schema\": 1, \"run_")
        .unwrap_err()
        .contains("not valid JSON"));
    assert!(ResultsFile::from_json("{}")
        .unwrap_err()
        .contains("no \"schema\""));
}
