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
    // ... and the lookup finding's own chart.
    assert_eq!(html.matches("<img ").count(), 5);
    assert_eq!(html.matches("<table class=\"usl\"").count(), 1);
    // 16 cells, one failed and unprofiled: 15 flamegraphs; a diff per variant and core count.
    assert_eq!(html.matches("class=\"flamegraph\"").count(), 15);
    assert_eq!(html.matches("class=\"diff\"").count(), 4);
    // The failed cell shows its reason, never numbers; the USL fit says when it cannot fit.
    assert!(html.contains("failed: timed out after 30s (killed)"));
    // Two in-core points on 2 cores: no USL fit, and the page says why and what to do.
    assert!(html.contains("No USL fit: 2 in-core point(s) (threads 1, 2) on this 2-core machine"));
    assert!(html.contains("`lab report a.json b.json`"));
    assert!(!html.contains("N* = "), "no USL advice from 2 points");
    // Thread advice from the measured cells, one sentence per variant and core count,
    // saying that 2 repetitions give min-max rather than a 95% interval.
    assert_eq!(html.matches("<ul class=\"thread-advice\">").count(), 1);
    assert!(html.contains("arc-swap-snapshot on 2 cores: run 2 threads:"));
    assert!(html.contains("(50% coverage, not 95%)"));
    assert!(
        html.contains("min–max 9.88M–10.1M (n = 2)"),
        "cell intervals"
    );
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
    assert!(
        summary.contains("| 9.98M [9.88M–10.1M]/9.98M |"),
        "{summary}"
    );
    assert!(
        summary.contains("- global-mutex on 2 cores: run 1 thread:"),
        "{summary}"
    );
    assert!(
        summary.contains("No USL fit: 2 in-core point(s)"),
        "{summary}"
    );

    // The cells as a table for pandas: a header and one row per cell.
    let csv = std::fs::read_to_string(root.path().join("reports/fixture/cells.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + 16, "{csv}");
    assert!(csv
        .lines()
        .next()
        .unwrap()
        .starts_with("run_id,scenario_file,hot_path,variant"));
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
fn compare_refuses_different_hot_paths_and_passes_identical_runs() {
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
    let stdout = String::from_utf8_lossy(&same.stdout);
    assert!(
        stdout.contains("15 cell(s) compared, 0 regressed"),
        "{stdout}"
    );
    // Two repetitions a side: no verdict, and no failure for it.
    assert_eq!(
        stdout.matches("inconclusive (n = 2)").count(),
        15,
        "{stdout}"
    );

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
        stderr.contains("compare runs of the same hot paths"),
        "{stderr}"
    );
}

#[test]
fn interrupted_matrix_leaves_a_report_marked_incomplete() {
    let root = fixture_root();
    let r = root.path();
    std::fs::remove_dir_all(r.join("reports")).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_lab"));
    child
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
        .env("TMPDIR", common::private_tmp(r))
        .current_dir(r)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    // lab keeps SIGINT ignored when it starts ignored (a shell's `&`), as it should; this
    // test is about a lab that hears it, wherever the test runs.
    // SAFETY: signal() is async-signal-safe, called between fork and exec.
    unsafe {
        use std::os::unix::process::CommandExt;
        child.pre_exec(|| {
            libc::signal(libc::SIGINT, libc::SIG_DFL);
            Ok(())
        });
    }
    let child = child.spawn().unwrap();
    // Once the first round is written (a busy machine takes longer than an idle one).
    let started = std::time::Instant::now();
    while std::fs::read_dir(r.join("reports/data")).map_or(true, |d| d.count() == 0)
        && started.elapsed() < std::time::Duration::from_secs(60)
    {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
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
        lab::results::ResultsFile::from_json(&std::fs::read_to_string(&data[0]).unwrap()).unwrap();
    assert!(!results.complete);
    assert!(!results.cells.is_empty(), "cells that finished are kept");
    assert!(results.cells.len() < 7 * 2 * 20);
    let html = std::fs::read_to_string(r.join("reports/index.html")).unwrap();
    assert!(html.contains("Incomplete"));
}

/// The fixture with every cell given `reps` repetitions around its median (spread 2%),
/// scaled by `factor`, written to `root/name`.
fn with_repetitions(root: &Path, name: &str, reps: usize, factor: f64) {
    let text = std::fs::read_to_string(root.join("reports/data/fixture.json")).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    for cell in v["cells"].as_array_mut().unwrap() {
        let ops = cell["ops_per_sec"].as_f64().unwrap() * factor;
        let values: Vec<f64> = (0..reps)
            .map(|i| ops * (1.0 + 0.02 * (i as f64 - (reps - 1) as f64 / 2.0) / reps as f64))
            .collect();
        cell["ops_per_sec"] = ops.into();
        cell["ops_per_sec_reps"] = values.into();
        cell["repeats"] = reps.into();
    }
    std::fs::write(root.join(name), serde_json::to_string(&v).unwrap()).unwrap();
}

#[test]
fn compare_fails_only_on_a_significant_regression_with_enough_repetitions() {
    let root = fixture_root();
    let r = root.path();
    with_repetitions(r, "base.json", 5, 1.0);
    with_repetitions(r, "same.json", 5, 1.0);
    with_repetitions(r, "slow.json", 5, 0.8);
    with_repetitions(r, "slow2.json", 2, 0.8);

    let out = lab(r, &["compare", "base.json", "same.json"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(
        stdout.contains("15 cell(s) compared, 0 regressed"),
        "{stdout}"
    );
    assert_eq!(stdout.matches("no change").count(), 15, "{stdout}");

    let out = lab(r, &["compare", "base.json", "slow.json"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert_eq!(stdout.matches("REGRESSED").count(), 15, "{stdout}");
    // A 20% slowdown passes a 25% threshold: significant, but within it.
    let out = lab(
        r,
        &["compare", "base.json", "slow.json", "--threshold", "0.25"],
    );
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).contains("slower, within threshold"));

    // The same slowdown with 2 repetitions: inconclusive, never a failed gate.
    let out = lab(r, &["compare", "base.json", "slow2.json"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert_eq!(
        stdout.matches("inconclusive (n = 2)").count(),
        15,
        "{stdout}"
    );
}

/// `name`'s `env.reference` set to a median of `ms`.
fn with_reference(root: &Path, name: &str, ms: f64) {
    let path = root.join(name);
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    v["env"]["reference"] = serde_json::json!({
        "work": "xorshift64", "per_round_ms": [ms, ms], "median_ms": ms
    });
    std::fs::write(path, serde_json::to_string(&v).unwrap()).unwrap();
}

#[test]
fn compare_of_runs_whose_reference_differs_by_30_percent_says_machine_differed() {
    let root = fixture_root();
    let r = root.path();
    with_repetitions(r, "base.json", 5, 1.0);
    with_repetitions(r, "slow.json", 5, 0.8);
    with_reference(r, "base.json", 10.0);
    with_reference(r, "slow.json", 13.0);
    // A 20% slowdown that is a regression on one machine (the test above) is not called
    // between two machines.
    let out = lab(r, &["compare", "base.json", "slow.json"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    // The parts of each run may be set side by side; no cell is judged.
    assert!(!stdout.contains("Mann-Whitney"), "{stdout}");
    assert!(
        stdout.lines().last().unwrap().starts_with("machine differed: the reference loop took 10.00 ms in base and 13.00 ms in new (30% apart"),
        "{stdout}"
    );
    assert!(!stdout.contains("REGRESSED"), "{stdout}");
    // Within 10%: judged as before.
    with_reference(r, "slow.json", 10.5);
    let out = lab(r, &["compare", "base.json", "slow.json"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("REGRESSED"));
}

#[test]
fn compare_refuses_files_without_common_cells_or_with_other_parameters() {
    let root = fixture_root();
    let r = root.path();
    let good = std::fs::read_to_string(r.join("reports/data/fixture.json")).unwrap();
    std::fs::write(
        r.join("users.json"),
        good.replace("\"users\": 500", "\"users\": 6000"),
    )
    .unwrap();
    let out = lab(r, &["compare", "reports/data/fixture.json", "users.json"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("fixture.json and users.json ran different parameters")
            && stderr.contains("users=500 in one and users=6000 in the other"),
        "{stderr}"
    );

    let mut v: serde_json::Value = serde_json::from_str(&good).unwrap();
    for cell in v["cells"].as_array_mut().unwrap() {
        cell["cores"] = 64.into();
    }
    std::fs::write(r.join("big.json"), serde_json::to_string(&v).unwrap()).unwrap();
    let out = lab(r, &["compare", "reports/data/fixture.json", "big.json"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("have no cells in common"), "{stderr}");
}

/// A results file of a 16-core machine: `peaked` follows a USL curve with a peak inside
/// the cores (σ = 0.05, κ = 0.01: N* = 9.7), `linear` scales without one; 6 repetitions
/// per cell with 2% noise.
fn sixteen_core_results(root: &Path) {
    let text = std::fs::read_to_string(root.join("reports/data/fixture.json")).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let template = v["cells"][0].clone();
    let mut cells = Vec::new();
    let mut state = 7u64;
    let mut noise = move || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((state >> 11) as f64 / (1u64 << 53) as f64 - 0.5) * 0.04
    };
    for (variant, sigma, kappa) in [("peaked", 0.05, 0.01), ("linear", 0.0, 0.0)] {
        for threads in [1usize, 2, 4, 8, 12, 16, 32] {
            let n = threads as f64;
            let x = 1e6 * n.min(16.0) / (1.0 + sigma * (n - 1.0) + kappa * n * (n - 1.0));
            let reps: Vec<f64> = (0..6).map(|_| x * (1.0 + noise())).collect();
            let mut cell = template.clone();
            cell["variant"] = variant.into();
            cell["threads"] = threads.into();
            cell["cores"] = 16.into();
            cell["ops_per_sec"] = harness::stats::median(&reps).into();
            cell["per_thread_ops_per_sec"] = (x / n).into();
            let ci = harness::stats::median_ci(&reps);
            cell["ops_per_sec_ci"] = serde_json::json!([ci.low, ci.high]);
            cell["ops_per_sec_reps"] = reps.into();
            cell["repeats"] = 6.into();
            cell["profile"] = serde_json::Value::Null;
            cells.push(cell);
        }
    }
    v["cells"] = cells.into();
    v["run_id"] = "sixteen".into();
    v["env"]["nproc"] = 16.into();
    std::fs::write(
        root.join("sixteen.json"),
        serde_json::to_string(&v).unwrap(),
    )
    .unwrap();
}

#[test]
fn usl_advice_only_where_the_fit_earns_it() {
    let root = fixture_root();
    let r = root.path();
    sixteen_core_results(r);
    let out = lab(r, &["report", "sixteen.json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let summary = std::fs::read_to_string(r.join("reports/sixteen/summary.md")).unwrap();
    let line = |variant: &str| {
        summary
            .lines()
            .find(|l| l.starts_with(&format!("| {variant} | threads <= cores")))
            .unwrap_or_else(|| panic!("no USL line for {variant}: {summary}"))
            .to_owned()
    };
    // Fitted to threads 1..16 only (32 is past the cores), with intervals; the peak
    // inside the cores gives advice.
    let peaked = line("peaked");
    assert!(peaked.contains("1, 2, 4, 8, 12, 16)"), "{peaked}");
    assert!(peaked.contains("| 9.7 ["), "N* = 9.7: {peaked}");
    assert!(
        peaked.contains("lies within the 16 core(s) measured: run about 10 worker thread(s)"),
        "{peaked}"
    );
    // No coherency penalty: N*'s interval is unbounded, so no advice, and it says so.
    let linear = line("linear");
    assert!(
        linear.contains("No advice from the USL: N*'s 95% interval"),
        "{linear}"
    );
    assert!(linear.contains("is unbounded"), "{linear}");
    // Six repetitions: cells show 95% intervals, and the charts carry error bars.
    let html = std::fs::read_to_string(r.join("reports/sixteen/index.html")).unwrap();
    assert!(html.contains("95% CI "), "cells show 95% intervals");
    assert!(!html.contains("coverage, not 95%"));
}

/// A results file `name.json` built from the fixture's first cell: lookup on 2 cores where
/// `entry-cache` does `entry_cache[i]` ops/s at threads 1, 2, 4 and `arc-swap-snapshot`
/// scales, and pool-seed-batch where the fix gains `fix_gain[i]` at batches 1, 10, 100;
/// 6 repetitions per cell within ±1%.
fn findings_results(root: &Path, name: &str, entry_cache: [f64; 3], fix_gain: [f64; 5]) {
    let text = std::fs::read_to_string(root.join("reports/data/fixture.json")).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let template = v["cells"][0].clone();
    let cell = |hot_path: &str, file: &str, variant: &str, threads: usize, ops: f64| {
        let reps: Vec<f64> = [-1.0, -0.6, -0.2, 0.2, 0.6, 1.0]
            .iter()
            .map(|d| ops * (1.0 + d / 100.0))
            .collect();
        let mut c = template.clone();
        // The fixture is a schema-1 file, which wrote the hot path as `scenario`.
        c.as_object_mut().unwrap().remove("scenario");
        c["hot_path"] = hot_path.into();
        c["scenario_file"] = file.into();
        c["variant"] = variant.into();
        c["threads"] = threads.into();
        c["cores"] = 2.into();
        c["ops_per_sec"] = harness::stats::median(&reps).into();
        c["ops_per_sec_min"] = reps[0].into();
        c["ops_per_sec_max"] = reps[5].into();
        c["per_thread_ops_per_sec"] = (ops / threads as f64).into();
        let ci = harness::stats::median_ci(&reps);
        c["ops_per_sec_ci"] = serde_json::json!([ci.low, ci.high]);
        c["ops_per_sec_reps"] = reps.into();
        c["repeats"] = 6.into();
        c["profile"] = serde_json::Value::Null;
        c["params"] = serde_json::json!({});
        c["extra"] = serde_json::json!({});
        c
    };
    let mut cells = Vec::new();
    for (i, threads) in [1usize, 2, 4].into_iter().enumerate() {
        cells.push(cell(
            "lookup",
            "lookup",
            "entry-cache",
            threads,
            entry_cache[i],
        ));
        let scaled = 1e6 * threads.min(2) as f64;
        cells.push(cell(
            "lookup",
            "lookup",
            "arc-swap-snapshot",
            threads,
            scaled,
        ));
    }
    for (i, batch) in [1u64, 10, 100, 500, 5000].into_iter().enumerate() {
        // The default is pool-bound past batch 1 with the server a third busy; the fix
        // keeps the server busy.
        let default_bound = if batch == 1 { "server" } else { "pool" };
        for (connections, max_requests, ops, bound, busy) in [
            (1, 1024, 1000.0, default_bound, 0.3),
            (10, 5000, 1000.0 * (1.0 + fix_gain[i]), "server", 1.0),
        ] {
            let mut c = cell("pool", "pool-seed-batch", "driver-v3", 1000, ops);
            c["params"] = serde_json::json!({
                "batch": batch, "connections": connections, "max_requests": max_requests
            });
            c["extra"] = serde_json::json!({
                "bound_by": bound, "server_util": busy, "statements_per_request": batch
            });
            cells.push(c);
        }
    }
    // The seed's load test: where the effect shows, the default plateaus from 1000 to 2000
    // clients at its pool's ceiling and the fix lifts it; where not, the default doubles.
    let effect = fix_gain.iter().any(|g| *g > 0.0);
    let default_2000 = if effect { 49e3 } else { 96e3 };
    for (connections, max_requests, threads, ops, bound, busy, ceiling) in [
        (1, 1024, 1000, 48e3, "pool", 0.4, 0.96),
        (1, 1024, 2000, default_2000, "pool", 0.4, 0.96),
        (
            10,
            5000,
            2000,
            if effect { 100e3 } else { 96e3 },
            "server",
            0.78,
            0.4,
        ),
        (10, 5000, 3000, 112e3, "server", 0.88, 0.45),
    ] {
        let mut c = cell("pool", "pool-clients", "driver-v3", threads, ops);
        c["params"] = serde_json::json!({
            "batch": 1, "connections": connections, "max_requests": max_requests
        });
        c["extra"] = serde_json::json!({
            "bound_by": bound, "server_util": busy, "ceiling_ratio": ceiling
        });
        c["cpu_util"] = 0.81.into();
        c["time_share"] =
            serde_json::json!({"on_cpu": 0.01, "run_queue": 0.24, "blocked": 0.0, "other": 0.75});
        cells.push(c);
    }
    v["comparisons"] = pairs_of(&cells);
    v["cells"] = cells.into();
    v["run_id"] = name.into();
    v["env"]["nproc"] = 2.into();
    v["settings_by_file"] = serde_json::json!([
        "lookup.toml (threads axis): set here none; as the file has them: threads 1,2,4",
        "pool-clients.toml (clients axis): set here none; as the file has them: clients 1000,2000,3000",
        "pool-seed-batch.toml (clients axis): set here none; as the file has them: clients 1000",
    ]);
    std::fs::write(
        root.join(format!("{name}.json")),
        serde_json::to_string(&v).unwrap(),
    )
    .unwrap();
}

/// Every part lookup and pool declare for `cells`, each with 16 pairs made of the cells'
/// own figures (the first cell of each pair up to 0.4% off, so intervals have a width),
/// as the matrix's pairs step would have measured them.
fn pairs_of(cells: &[serde_json::Value]) -> serde_json::Value {
    use verdict::decide::{CellRef, Measured, Planned};
    let refs: Vec<CellRef> = cells
        .iter()
        .map(|c| CellRef {
            file: c["scenario_file"].as_str().unwrap().to_owned(),
            variant: c["variant"].as_str().unwrap().to_owned(),
            threads: c["threads"].as_u64().unwrap() as usize,
            cores: c["cores"].as_u64().unwrap() as usize,
            params: serde_json::from_value(c["params"].clone()).unwrap(),
        })
        .collect();
    let seeds = std::collections::BTreeMap::new();
    let planned = Planned {
        cells: &refs,
        seeds: &seeds,
    };
    let figure = |r: &CellRef, key: &str| -> f64 {
        let i = refs
            .iter()
            .position(|c| r.matches(&c.file, &c.variant, c.threads, c.cores, &c.params))
            .unwrap();
        let c = &cells[i];
        let ops = c["ops_per_sec"].as_f64().unwrap();
        match key {
            "ops_per_sec" => ops,
            "datapoints_per_sec" => ops * c["params"]["batch"].as_f64().unwrap_or(1.0),
            other => c["extra"][other].as_f64().unwrap(),
        }
    };
    let mut out = Vec::new();
    let hot_paths = [lookup::findings::QUESTION, pool::findings::QUESTION];
    for h in hot_paths {
        for mut claim in (h.claims)(&planned) {
            claim.hot_path = h.name().to_owned();
            let mut m = Measured::new(claim.clone());
            if let Some(c) = &claim.comparison {
                for n in 0..16 {
                    let mut figures: Vec<f64> =
                        c.cells().iter().map(|r| figure(r, &c.figure)).collect();
                    figures[0] *= 1.0 + 0.002 * (n % 3) as f64;
                    m.pairs.push(figures);
                }
                m.stopped = "decided".to_owned();
            }
            out.push(m);
        }
    }
    serde_json::to_value(out).unwrap()
}

#[test]
fn findings_come_first_and_follow_what_was_measured() {
    let root = fixture_root();
    let r = root.path();
    // The seed's effect: entry-cache does not scale and loses past the cores; the fix
    // gains nothing at batch 1 and doubles throughput at 10 and 100.
    findings_results(r, "shows", [1e6, 1.0e6, 0.6e6], [0.0, 1.0, 2.0, 1.8, 1.3]);
    // No effect: entry-cache scales like the others; the fix changes nothing.
    findings_results(r, "absent", [1e6, 1.95e6, 1.95e6], [0.0; 5]);
    let mut summaries = Vec::new();
    for name in ["shows", "absent"] {
        let out = lab(r, &["report", &format!("{name}.json")]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let summary =
            std::fs::read_to_string(r.join(format!("reports/{name}/summary.md"))).unwrap();
        assert!(summary.starts_with("# Findings\n"), "{summary}");
        let html = std::fs::read_to_string(r.join(format!("reports/{name}/index.html"))).unwrap();
        let first_h2 = html.find("<h2>").unwrap();
        assert!(html[first_h2..].starts_with("<h2>Findings</h2>"));
        // Hot paths in order: lookup before pool.
        assert!(
            html.find("id=\"hot-path-lookup\"").unwrap()
                < html.find("id=\"hot-path-pool\"").unwrap()
        );
        summaries.push(summary);
    }
    // Verdict words from findings.json, the objects the pages lay out.
    let verdicts = |name: &str| -> Vec<(String, String, String)> {
        let text =
            std::fs::read_to_string(r.join(format!("reports/{name}/findings.json"))).unwrap();
        let list: Vec<serde_json::Value> = serde_json::from_str(&text).unwrap();
        list.iter()
            .map(|f| {
                (
                    f["hot_path"].as_str().unwrap().to_owned(),
                    f["verdict"].as_str().unwrap().to_owned(),
                    f["basis"].as_str().unwrap().to_owned(),
                )
            })
            .collect()
    };
    let word = |name: &str, hot_path: &str| {
        verdicts(name)
            .into_iter()
            .find(|(h, _, _)| h == hot_path)
            .map(|(_, v, b)| (v, b))
            .unwrap()
    };
    // Every part of lookup's question is a size (issue 51: each follows from how the lab
    // builds its designs), so whatever its parts show, lookup cannot tell.
    assert_eq!(
        word("shows", "lookup"),
        ("cannot_tell".into(), "measured".into())
    );
    assert_eq!(
        word("absent", "lookup"),
        ("cannot_tell".into(), "measured".into())
    );
    // The pool's "no change at batch 1" cannot be asked in the default plan and stays in
    // the verdict, unasked: partly, never reproduced.
    assert_eq!(word("shows", "pool"), ("partly".into(), "model".into()));
    assert_ne!(word("absent", "pool").0, "reproduced");
    // `lab compare` sets the two runs' parts side by side and names those that differ.
    let out = lab(r, &["compare", "shows.json", "absent.json"]);
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains("pool: verdict partly -> not_reproduced  (verdict differs)"),
        "{said}"
    );
    assert!(
        said.lines()
            .any(|l| l.contains("loss_past_cores") && l.contains("DECIDED DIFFERENTLY")),
        "{said}"
    );
    assert!(said.contains("decided differently"), "{said}");
    // The first screen: the verdict table, one row per finding, each finding with a chart.
    let html = std::fs::read_to_string(r.join("reports/shows/index.html")).unwrap();
    assert!(html.contains("<table id=\"verdicts\">"));
    for hot_path in ["lookup", "pool"] {
        assert!(html.contains(&format!("<tr data-hot-path=\"{hot_path}\">")));
        let at = html
            .find(&format!(
                "<section class=\"finding\" data-hot-path=\"{hot_path}\""
            ))
            .unwrap();
        let end = html[at..].find("</section>").unwrap();
        assert!(
            html[at..at + end].contains("<img "),
            "{hot_path} has its chart"
        );
    }
    // At a glance: the Findings section outside its <details> holds the verdicts and
    // each part's outcome, ratio, pairs and weight, and at most 400 words; the claims,
    // sides and reasons are one click away.
    let (in_view, folded) = findings_in_view(&html);
    let words = in_view.split_whitespace().count();
    assert!(words <= 400, "{words} words in view:\n{in_view}");
    assert!(in_view.contains("weight") && in_view.contains("large_batch_gain"));
    assert!(!in_view.contains("sides, and why"), "{in_view}");
    assert!(folded.contains("sides, and why"));
    assert!(folded.contains("The question:"));
    // The model names what it was fitted to, and pool's thread counts get no advice.
    let shows = std::fs::read_to_string(r.join("reports/shows/summary.md")).unwrap();
    assert!(
        shows.contains("fitted to the seed's gains at batch 10, 100, 5000; out of sample: 1, 500"),
        "{shows}"
    );
    assert!(shows.contains("base_us = 20000"), "{shows}");
    // Every finding lays out its parts, each with its pairs and thresholds.
    assert!(shows.contains("| `large_batch_gain` |"), "{shows}");
    assert!(shows.contains("| `short_of_linear` |"), "{shows}");
    let text = std::fs::read_to_string(r.join("reports/shows/findings.json")).unwrap();
    let list: Vec<serde_json::Value> = serde_json::from_str(&text).unwrap();
    let pool = list.iter().find(|f| f["hot_path"] == "pool").unwrap();
    assert!(
        pool["tables"]
            .as_array()
            .unwrap()
            .iter()
            .all(|t| !t["title"].as_str().unwrap().starts_with("Thread advice")),
        "no thread advice for client axes"
    );
    let lookup = list.iter().find(|f| f["hot_path"] == "lookup").unwrap();
    assert!(lookup["tables"]
        .as_array()
        .unwrap()
        .iter()
        .any(|t| t["title"].as_str().unwrap().starts_with("Thread advice")));
}

/// The Findings section of `html` as text: what is in view (outside `<details>`, tags
/// dropped) and what is folded.
fn findings_in_view(html: &str) -> (String, String) {
    let start = html.find("<section class=\"findings\"").unwrap();
    let end = start
        + html[start..]
            .find("<section class=\"machine\"")
            .unwrap_or(html.len() - start);
    let mut section = &html[start..end];
    let (mut view, mut folded) = (String::new(), String::new());
    while let Some(open) = section.find("<details") {
        view.push_str(&section[..open]);
        let close = open + section[open..].find("</details>").unwrap() + "</details>".len();
        folded.push_str(&section[open..close]);
        section = &section[close..];
    }
    view.push_str(section);
    let strip = |s: &str| {
        let mut out = String::new();
        let mut in_tag = false;
        for c in s.chars() {
            match c {
                '<' => in_tag = true,
                '>' => {
                    in_tag = false;
                    out.push(' ');
                }
                c if !in_tag => out.push(c),
                _ => {}
            }
        }
        out
    };
    (strip(&view), strip(&folded))
}
