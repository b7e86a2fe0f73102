//! The `lab` binary as a user meets it: bad input is one error line and no results file;
//! a small matrix writes a complete, verified results file; a cell that cannot finish is
//! recorded as failed while the matrix goes on. Correctness only, no speeds.

use std::path::{Path, PathBuf};

use harness::schema::CellStatus;
use lab::results::ResultsFile;

mod common;

use common::{lab, results_files, scratch_root};

/// The scenario files in the repository's benches/ by name, with their contents, in the
/// order `lab` reads them.
fn scenario_files() -> Vec<(String, toml::Table)> {
    let benches = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../benches");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(benches)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    // By file name, as lab orders them (`pool-batch.toml` before `pool.toml`).
    paths.sort();
    paths
        .into_iter()
        .map(|p| {
            let table = std::fs::read_to_string(&p).unwrap().parse().unwrap();
            (p.file_stem().unwrap().to_string_lossy().into_owned(), table)
        })
        .collect()
}

#[test]
fn small_matrix_writes_verified_results_with_spread_and_efficiency() {
    let root = scratch_root();
    let out = lab(
        root.path(),
        &[
            "matrix",
            "scenarios=lookup",
            "threads=1,2",
            "cores=1",
            "duration=30ms",
            "warmup=10ms",
            "repeats=2",
            "users=300",
            "groups=40",
            "cache_entries=100",
            "profile=false",
        ],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("lookup / entry-cache"), "{stdout}");
    assert!(
        stdout.contains('*'),
        "threads=2 on one core is marked: {stdout}"
    );
    let files = results_files(root.path());
    assert_eq!(files.len(), 1);
    assert!(stdout.contains(files[0].file_name().unwrap().to_str().unwrap()));
    let results = ResultsFile::from_json(&std::fs::read_to_string(&files[0]).unwrap()).unwrap();
    assert!(results.complete);
    assert!(
        results.command.contains("threads=1,2"),
        "{}",
        results.command
    );
    assert_eq!(results.settings_by_file.len(), 1, "one scenario file");
    let line = &results.settings_by_file[0];
    assert!(
        line.starts_with("lookup.toml (threads axis): set here threads=1,2, cores=1"),
        "{line}"
    );
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(line.as_str()),
        "printed before the run"
    );
    assert_eq!(results.cells.len(), 7 * 2);
    for cell in &results.cells {
        assert_eq!(cell.status, CellStatus::Ok, "{cell:?}");
        assert!(cell.verified, "{cell:?}");
        assert_eq!(cell.repeats, 2);
        assert_eq!(
            cell.affinity,
            harness::affinity::format_cpu_list(&harness::affinity::allowed_cpus()[..1])
        );
        assert!(
            cell.ops_per_sec_min <= cell.ops_per_sec && cell.ops_per_sec <= cell.ops_per_sec_max
        );
        assert_eq!(cell.params["users"], 300);
        let eff = cell.efficiency.expect("threads=1 is in the matrix");
        if cell.threads == 1 {
            assert_eq!(eff, 1.0);
        }
    }
}

#[test]
fn a_cell_whose_requests_outlast_its_window_ends_with_the_window() {
    // One 5 s request cannot end inside a 50 ms window: the pool client completes the
    // request under way in simulated time at the close (a cell that truly hangs is killed
    // at its timeout: tests/faults.rs), so the cell ends well before its 3 s timeout.
    let root = scratch_root();
    let out = lab(
        root.path(),
        &[
            "matrix",
            "scenarios=pool",
            "variants=driver-v3",
            "threads=2",
            "cores=1",
            "duration=50ms",
            "warmup=10ms",
            "base_us=5000000",
            "timeout=3s",
            "repeats=2",
            "profile=false",
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let files = results_files(root.path());
    let results = ResultsFile::from_json(&std::fs::read_to_string(&files[0]).unwrap()).unwrap();
    assert_eq!(results.cells.len(), 1);
    assert_eq!(results.cells[0].status, CellStatus::Ok);
    assert!(results.cells[0].verified);
}

#[test]
fn run_prints_one_record_for_one_cell() {
    let root = scratch_root();
    let out = lab(
        root.path(),
        &[
            "run",
            "--hot-path",
            "lookup",
            "--variant",
            "dashmap",
            "--threads",
            "2",
            "--cores",
            "1",
            "--duration",
            "300ms",
            "--warmup",
            "5ms",
            "--param",
            "users=200",
            "--profile",
            "profiles/one/cell",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(stdout.lines().count(), 1);
    let record: harness::Repetition = serde_json::from_str(stdout.trim()).unwrap();
    assert_eq!(
        (record.hot_path.as_str(), record.variant.as_str()),
        ("lookup", "dashmap")
    );
    assert_eq!((record.threads, record.cores), (2, 1));
    assert!(record.verified && record.ops_per_sec > 0.0);
    assert!(record.oversubscribed());
    let profile = record.0.profile.expect("--profile was given");
    assert_eq!(profile.svg, "profiles/one/cell.svg");
    let folded = std::fs::read_to_string(root.path().join(&profile.folded)).unwrap();
    assert!(
        folded.lines().any(|l| l.starts_with("lookup/dashmap;")),
        "worker stacks are rooted at the cell: {folded}"
    );
    assert!(matches!(profile.sampler.as_str(), "perf" | "pprof"));
    assert!(profile.rate_hz >= 997);
    let off = profile
        .off_cpu
        .expect("an off-CPU profile beside the CPU one");
    assert!(root.path().join(&off.svg).is_file() && root.path().join(&off.folded).is_file());
    assert!(std::fs::read_to_string(root.path().join(&profile.svg))
        .unwrap()
        .contains("<svg"));
}

#[test]
fn list_names_every_variant_and_scenario_file() {
    let root = scratch_root();
    let out = lab(root.path(), &["list"]);
    assert!(out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout);
    for name in [
        "global-mutex",
        "rwlock-std",
        "rwlock-parking-lot",
        "dashmap",
        "lmdb",
        "entry-cache",
        "arc-swap-snapshot",
        "write_pct",
        "noop",
    ] {
        assert!(stdout.contains(name), "{name} missing from:\n{stdout}");
    }
    for (name, _) in scenario_files() {
        assert!(stdout.contains(&name), "{name} missing from:\n{stdout}");
    }
}

#[test]
fn the_old_scenario_flag_of_run_still_works() {
    let root = scratch_root();
    let out = lab(
        root.path(),
        &[
            "run",
            "--scenario",
            "noop",
            "--variant",
            "noop",
            "--duration",
            "20ms",
            "--warmup",
            "5ms",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let record: harness::Repetition =
        serde_json::from_str(String::from_utf8_lossy(&out.stdout).trim()).unwrap();
    assert_eq!(record.hot_path, "noop");
}

#[test]
fn a_profiled_runs_own_time_is_recorded_and_prices_the_next_plans_profiles() {
    let root = scratch_root();
    let args = [
        "matrix",
        "scenarios=noop",
        "threads=1",
        "cores=1",
        "duration=30ms",
        "warmup=10ms",
        "repeats=1",
        "budget=none",
        // One thread count draws no differential, so only `all` profiles it.
        "profile=all",
    ];
    let out = lab(root.path(), &args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let files = results_files(root.path());
    let results = ResultsFile::from_json(&std::fs::read_to_string(&files[0]).unwrap()).unwrap();
    let cell = &results.cells[0];
    let profile = cell
        .profile
        .as_ref()
        .expect("profile=all profiles its cell");
    // A child's start and perf's are never free; the counted run keeps its own figure.
    assert!(
        profile.run_overhead_s.is_some_and(|s| s > 0.0),
        "{profile:?}"
    );
    assert!(cell.run_overhead_s.is_some_and(|s| s > 0.0), "{cell:?}");
    let mut plan = args.to_vec();
    plan.push("plan=true");
    let out = lab(root.path(), &plan);
    let said = String::from_utf8_lossy(&out.stderr);
    // The recorded seconds less one thread's part, in whole milliseconds (to one: the
    // plan rounds a Duration, this a float).
    let ms = (profile.run_overhead_s.unwrap() - 250e-6) * 1000.0;
    let priced: f64 = said
        .split("a profiled run ")
        .nth(1)
        .and_then(|rest| rest.split("ms").next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("the plan prices profiles at the measured time: {said}"));
    assert!(
        (priced - ms).abs() <= 1.0,
        "{priced} ms against {ms}: {said}"
    );
}
