//! Reports as a reader meets them: rendered from a small fixture results file, every
//! table, chart and flamegraph link is present and resolves; bad input leaves the existing
//! report as it was; an interrupted matrix still leaves a report marked incomplete.

use std::path::{Path, PathBuf};
use std::process::Command;

mod common;

use common::lab;

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// A scratch project root with the fixture run and the repository's scenario files.
fn fixture_root() -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    copy_dir(&here.join("tests/fixtures/small-run"), root.path());
    common::copy_benches(root.path());
    root
}

/// Every `src="..."` and `href="..."` of a page.
fn links(html: &str) -> Vec<String> {
    let mut out = Vec::new();
    for attr in ["src=\"", "href=\""] {
        for (i, _) in html.match_indices(attr) {
            let rest = &html[i + attr.len()..];
            out.push(rest[..rest.find('"').unwrap()].to_owned());
        }
    }
    out
}

fn assert_links_resolve(page: &Path) -> Vec<String> {
    let html = std::fs::read_to_string(page).unwrap();
    let found = links(&html);
    for link in &found {
        assert!(
            !link.starts_with("http"),
            "{link}: the report must not fetch from the network"
        );
        if let Some(anchor) = link.strip_prefix('#') {
            assert!(
                html.contains(&format!("id=\"{anchor}\"")),
                "{link}: no such anchor"
            );
            continue;
        }
        let target: PathBuf = page.parent().unwrap().join(link);
        assert!(
            target.is_file(),
            "{} links to {link}, which does not exist",
            page.display()
        );
    }
    found
}

#[test]
fn fixture_report_has_every_table_chart_and_link() {
    let root = fixture_root();
    let out = lab(root.path(), &["report", "reports/data/fixture.json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let page = root.path().join("reports/fixture/index.html");
    let html = std::fs::read_to_string(&page).unwrap();

    // One matrix table per variant; two charts (throughput, per-thread) per core count.
    assert_eq!(html.matches("<table class=\"matrix\"").count(), 2);
    assert_eq!(html.matches("<img ").count(), 4);
    assert_eq!(html.matches("<table class=\"usl\"").count(), 1);
    // 16 cells, one failed and unprofiled: 15 flamegraphs; a diff per variant and core count.
    assert_eq!(html.matches("class=\"flamegraph\"").count(), 15);
    assert_eq!(html.matches("class=\"diff\"").count(), 4);
    // The failed cell shows its reason, never numbers; the USL fit says when it cannot fit.
    assert!(html.contains("failed: timed out after 30s (killed)"));
    assert!(html.contains("no fit: too few points to fit: 3 thread count(s)"));
    assert!(html.contains("worker thread"), "a recommendation is given");
    assert!(html.contains("Reproduce: <code>just matrix scenarios=lookup"));
    assert!(!html.contains("<script"), "static page");

    let found = assert_links_resolve(&page);
    assert!(found.iter().any(|l| l.ends_with("t1-c2.svg")));
    assert_links_resolve(&root.path().join("reports/index.html"));

    let summary = std::fs::read_to_string(root.path().join("reports/fixture/summary.md")).unwrap();
    assert!(
        summary.contains("**arc-swap-snapshot**") && summary.contains("FAILED"),
        "{summary}"
    );
    assert!(
        summary.contains("| cores \\ threads | 1 | 2 | 4 | 6 |"),
        "{summary}"
    );

    // The cells as a table for pandas: a header and one row per cell.
    let csv = std::fs::read_to_string(root.path().join("reports/fixture/cells.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + 16, "{csv}");
    assert!(csv
        .lines()
        .next()
        .unwrap()
        .starts_with("run_id,scenario_file,scenario,variant"));
}

#[test]
fn results_from_two_machines_go_side_by_side() {
    let root = fixture_root();
    let r = root.path();
    let text = std::fs::read_to_string(r.join("reports/data/fixture.json")).unwrap();
    let mut other: serde_json::Value = serde_json::from_str(&text).unwrap();
    other["run_id"] = "bigger".into();
    other["env"]["hostname"] = "sixteen-cores".into();
    other["env"]["nproc"] = 16.into();
    for cell in other["cells"].as_array_mut().unwrap() {
        let ops = cell["ops_per_sec"].as_f64().unwrap();
        cell["ops_per_sec"] = (ops * 2.0).into();
    }
    std::fs::write(
        r.join("bigger.json"),
        serde_json::to_string(&other).unwrap(),
    )
    .unwrap();
    let out = lab(r, &["report", "reports/data/fixture.json", "bigger.json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let page = r.join("reports/multi-fixture-bigger/index.html");
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("<h2>Side by side</h2>"));
    assert!(html.contains("bigger (sixteen-cores, 16 CPUs)"));
    assert!(html.contains("(2.00x)"), "ratios to the first machine");
    // Each machine keeps its own section with its own charts.
    assert_eq!(html.matches("<section class=\"machine\">").count(), 2);
    assert_links_resolve(&page);
}

#[test]
fn bad_report_input_leaves_the_existing_report_alone() {
    let root = fixture_root();
    let r = root.path();
    assert!(lab(r, &["report", "reports/data/fixture.json"])
        .status
        .success());
    let index = r.join("reports/index.html");
    let before = std::fs::read(&index).unwrap();

    let good = std::fs::read_to_string(r.join("reports/data/fixture.json")).unwrap();
    std::fs::write(r.join("truncated.json"), &good[..good.len() / 2]).unwrap();
    std::fs::write(
        r.join("newer.json"),
        good.replacen("\"schema\": 1", "\"schema\": 7", 1),
    )
    .unwrap();
    let cases = [
        ("missing.json", "missing.json: cannot read"),
        ("truncated.json", "truncated.json: not valid JSON"),
        (
            "newer.json",
            "newer.json: schema 7 is newer than this build reads",
        ),
    ];
    for (file, expected) in cases {
        let out = lab(r, &["report", file]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{file}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(stderr.contains(expected), "{file}: {stderr}");
        assert_eq!(
            std::fs::read(&index).unwrap(),
            before,
            "{file} changed the report"
        );
    }
}

#[test]
fn compare_refuses_different_scenarios_and_passes_identical_runs() {
    let root = fixture_root();
    let r = root.path();
    let same = lab(
        r,
        &[
            "compare",
            "reports/data/fixture.json",
            "reports/data/fixture.json",
        ],
    );
    assert!(
        same.status.success(),
        "{}",
        String::from_utf8_lossy(&same.stderr)
    );
    assert!(String::from_utf8_lossy(&same.stdout).contains("15 cell(s) compared, 0 regressed"));

    let good = std::fs::read_to_string(r.join("reports/data/fixture.json")).unwrap();
    std::fs::write(
        r.join("other.json"),
        good.replace("\"scenario\": \"lookup\"", "\"scenario\": \"noop\""),
    )
    .unwrap();
    let out = lab(r, &["compare", "reports/data/fixture.json", "other.json"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("compare runs of the same scenarios"),
        "{stderr}"
    );
}

#[test]
fn interrupted_matrix_leaves_a_report_marked_incomplete() {
    let root = fixture_root();
    let r = root.path();
    std::fs::remove_dir_all(r.join("reports")).unwrap();
    let child = Command::new(env!("CARGO_BIN_EXE_lab"))
        .args([
            "matrix",
            "scenarios=lookup",
            "threads=1,2",
            "cores=1",
            "duration=100ms",
            "warmup=10ms",
            "repeats=20",
            "users=200",
            "groups=10",
            "profile=false",
        ])
        .env("LAB_ROOT", r)
        .current_dir(r)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(2500));
    // SAFETY: sending SIGINT to our own child process.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let data: Vec<PathBuf> = std::fs::read_dir(r.join("reports/data"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(
        data.len(),
        1,
        "one whole results file, no temporary left: {data:?}"
    );
    let results =
        harness::schema::ResultsFile::from_json(&std::fs::read_to_string(&data[0]).unwrap())
            .unwrap();
    assert!(!results.complete);
    assert!(!results.cells.is_empty(), "cells that finished are kept");
    assert!(results.cells.len() < 7 * 2 * 20);
    let html = std::fs::read_to_string(r.join("reports/index.html")).unwrap();
    assert!(html.contains("Incomplete"));
}
