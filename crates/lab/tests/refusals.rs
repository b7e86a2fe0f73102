//! Refusals as a user meets them: one line on stderr that leads with the input it refuses
//! (the file and its key, or the setting) and then the reason, short enough to read, and
//! no results file; and a run refuses only the scenario files it would run, a broken file
//! elsewhere in `benches/` being one warning line.

use std::path::Path;

mod common;

use common::{lab, results_files, scratch_root};

/// The longest refusal line, in characters: a reason behind every parameter's value, or
/// every name a hot path accepts, is not read.
const SHORT_LINE: usize = 200;

/// `lab` with `args` in `root` refuses them in one short line holding `expected`, and
/// writes no results file; the line, for further checks.
fn assert_bad_input(root: &Path, args: &[&str], expected: &str) -> String {
    let out = lab(root, args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
    assert_eq!(
        stderr.lines().count(),
        1,
        "{args:?} should give one line: {stderr}"
    );
    assert!(stderr.starts_with("error:"), "{args:?}: {stderr}");
    let line = stderr.trim_end();
    assert!(
        line.chars().count() <= SHORT_LINE,
        "{args:?}: {} characters: {line}",
        line.chars().count()
    );
    assert!(
        stderr.contains(expected),
        "{args:?}: expected {expected:?} in {stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(
        results_files(root).is_empty(),
        "{args:?} left a results file"
    );
    line.to_owned()
}

#[test]
fn bad_matrix_settings_are_refused_before_anything_runs() {
    let root = scratch_root();
    let r = root.path();
    let too_many = (harness::affinity::allowed_cpus().len() + 1).to_string();
    let too_many_cores = format!("cores={too_many}");
    let nproc = harness::affinity::allowed_cpus().len();
    let cores_zero = format!("cores=\"0\": expected a comma-separated list of integers in 1..={nproc} (this machine has {nproc} CPU(s) available)");
    let cases: &[(&[&str], &str)] = &[
        (
            &["matrix", "threads=1", "threads=2"],
            "threads=2: threads is given twice",
        ),
        (
            &["matrix", "scenarios=lookup", "clients=100"],
            "clients=100: no selected scenario file has a clients axis (lookup threads)",
        ),
        (
            &["matrix", "scenarios=lookup", "sqlmix-slots.threads=8"],
            "sqlmix-slots.threads=8: sqlmix-slots is not among the selected scenario files",
        ),
        (
            &["matrix", "scenarios=noop", "timeout=1ms"],
            "timeout=1ms: shorter than warm-up",
        ),
        (
            &["matrix", "threads=0"],
            "threads=\"0\": expected a comma-separated list of integers in 1..=4096",
        ),
        (&["matrix", "threads=abc"], "threads=\"abc\""),
        (&["matrix", "threads=1,,2"], "threads=\"1,,2\""),
        (&["matrix", "threads=100000"], "threads=\"100000\""),
        (
            &["matrix", "scenarios=nope"],
            "scenarios=\"nope\": unknown scenario file; accepted: ",
        ),
        (
            &["matrix", "scenarios=lokup"],
            "scenarios=\"lokup\": unknown scenario file; did you mean lookup?",
        ),
        (
            &["matrix", "variants=impl2"],
            "variants=\"impl2\": unknown variant; accepted: ",
        ),
        (
            &["matrix", "colour=red"],
            "colour=...: unknown setting or parameter; accepted: ",
        ),
        (
            &["matrix", "scenarios=pool", "conections=3"],
            "conections=...: unknown setting or parameter; did you mean connections?",
        ),
        (
            &["matrix", "write_pct=150"],
            "write_pct=\"150\": expected an integer in 0..=100",
        ),
        (&["matrix", "cores=0"], &cores_zero),
        (
            &["matrix", "scenarios=pool-seed-batch", "heap_points=1000000"],
            "pool-seed-batch.toml: heap_points=1000000: 1000 clients x batch 5000 = 5000000 datapoints held would fill it",
        ),
        (&["matrix", &too_many_cores], "this machine has"),
        (&["matrix", "quick"], "expected key=value"),
        (
            &["run", "--scenario", "lookup", "--variant", "nope"],
            "unknown variant \"nope\" of lookup",
        ),
        (
            &["run", "--hot-path", "nope", "--variant", "x"],
            "unknown hot path \"nope\"",
        ),
        (
            &[
                "run",
                "--scenario",
                "lookup",
                "--variant",
                "lmdb",
                "--threads",
                "0",
            ],
            "--threads \"0\"",
        ),
        (
            &[
                "run",
                "--scenario",
                "lookup",
                "--variant",
                "lmdb",
                "--param",
                "users=0",
            ],
            "users=\"0\": expected an integer in 1..=",
        ),
        (
            &[
                "run",
                "--scenario",
                "lookup",
                "--variant",
                "lmdb",
                "--cores",
                &too_many,
            ],
            "--cores",
        ),
        (&["matrix", "--bogus"], "unexpected argument"),
        (
            &["matrix", "scenarios=lease", "applications=0"],
            "applications=\"0\": expected an integer in 1..=",
        ),
        (&["matrix", "scenarios=lease", "units=0"], "units=\"0\""),
        (
            &["matrix", "scenarios=lease", "lease_s=10"],
            "lease_s=10 with extend_s=30: a lease must last longer",
        ),
        (
            &["matrix", "scenarios=lease", "data_dir=/proc/nope"],
            "data_dir=\"/proc/nope\": cannot create a temporary folder",
        ),
        (
            &["matrix", "scenarios=pool-clients", "clients=0"],
            "clients=\"0\": expected a comma-separated list of integers in 1..=4096",
        ),
        (
            &["matrix", "scenarios=pool-clients", "clients=5000"],
            "clients=\"5000\"",
        ),
        (
            &["matrix", "scenarios=pool", "connections=0"],
            "connections=\"0\": expected an integer in 1..=1000",
        ),
        (
            &["matrix", "scenarios=pool", "max_requests=0"],
            "max_requests=\"0\"",
        ),
        (&["matrix", "scenarios=pool", "batch=0"], "batch=\"0\""),
        (
            &[
                "matrix",
                "scenarios=pool",
                "connections=1000",
                "max_requests=100000",
            ],
            "accepted up to 1000000 leases",
        ),
        (
            &["matrix", "scenarios=sqlmix", "journal_mode=fast"],
            "journal_mode=\"fast\": expected one of wal, delete",
        ),
        (
            &["matrix", "scenarios=sqlmix", "slots=0"],
            "slots=\"0\": expected an integer in 1..=65536 or one of nproc",
        ),
        (
            &["matrix", "scenarios=sqlmix", "read_pct=101"],
            "read_pct=\"101\": expected an integer in 0..=100",
        ),
        (&["matrix", "scenarios=sqlmix", "shards=0"], "shards=\"0\""),
        (&["matrix", "scenarios=sqlmix", "models=0"], "models=\"0\""),
        (
            &["matrix", "scenarios=sqlmix", "data_dir=/nonexistent/place"],
            "data_dir=\"/nonexistent/place\": cannot create a temporary folder",
        ),
    ];
    for (args, expected) in cases {
        let _ = assert_bad_input(r, args, expected);
    }
}

/// A scratch root whose `benches/` holds `files` (name, text) and nothing else.
fn root_with(files: &[(&str, &str)]) -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(root.path().join("benches")).unwrap();
    for (name, text) in files {
        std::fs::write(root.path().join("benches").join(name), text).unwrap();
    }
    root
}

/// The repository's scenario file `name`.
fn shipped(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../../benches/{name}.toml"));
    std::fs::read_to_string(path).unwrap()
}

/// `lab matrix scenarios=<file> plan=true` on a root holding only `text` as `<file>.toml`
/// is refused in one line that starts with `lead` (after `error: `) and is short; `lead`
/// gets `{root}` replaced by the root's path.
fn assert_file_refused(file: &str, text: &str, lead: &str) {
    let root = root_with(&[(&format!("{file}.toml"), text)]);
    let scenarios = format!("scenarios={file}");
    let lead = lead.replace("{root}", &root.path().display().to_string());
    let line = assert_bad_input(root.path(), &["matrix", &scenarios, "plan=true"], &lead);
    assert!(line.starts_with(&format!("error: {lead}")), "{line}");
}

#[test]
fn a_server_files_refusal_leads_with_the_file_the_key_and_the_reason() {
    let tiny = shipped("server-tiny");
    let command = |extra: &str| {
        tiny.replace(
            "builtin = \"line\"",
            &format!("command = \"curl -s {{host}}:{{port}}\"\nthroughput = \"{extra}\""),
        )
    };
    let cases = [
        (
            "var",
            tiny.replace("--port {port}", "--port {prt}"),
            "var.toml: server.command: unknown variable {prt}: accepted {threads}",
        ),
        (
            "conf",
            tiny.replace("comm = ", "config = \"listen {portt};\"\ncomm = "),
            "conf.toml: server.config: unknown variable {portt}: accepted {threads}",
        ),
        (
            "nogroup",
            command("Requests: [0-9]+"),
            "nogroup.toml: load.throughput=\"Requests: [0-9]+\": needs a group",
        ),
        (
            "badre",
            command("Requests: ([0-9]+"),
            "badre.toml: load.throughput=\"Requests: ([0-9]+\": not a regular expression",
        ),
        (
            "key",
            tiny.replace("comm = ", "comand = \"x\"\ncomm = "),
            "{root}/benches/key.toml: [server] comand: unknown; did you mean command?",
        ),
        (
            "param",
            tiny.replace("connections = 8", "conections = 8"),
            "{root}/benches/param.toml: params: unknown parameter \"conections\": did you mean connections?",
        ),
    ];
    for (file, text, lead) in &cases {
        assert_file_refused(file, text, lead);
    }
}

#[test]
fn a_missing_program_without_packages_says_to_install_it() {
    let text =
        shipped("server-tiny").replace("{lab} tiny-server", "/nonexistent/contention-lab-server");
    let root = root_with(&[("gone.toml", &text)]);
    let _ = assert_bad_input(
        root.path(),
        &["matrix", "scenarios=gone", "plan=true"],
        "skipped gone.toml (this machine lacks /nonexistent/contention-lab-server): \
         install /nonexistent/contention-lab-server; nothing else was selected",
    );
}

#[test]
fn a_broken_file_stops_only_the_runs_that_would_run_it() {
    // A file whose TOML does not parse (so in the default matrix, as files are unless
    // they say otherwise), beside one that runs.
    let broken = "hot_path = \"lookup\"\nthreads = [1,\n";
    let root = root_with(&[("noop.toml", &shipped("noop")), ("broken.toml", broken)]);
    let r = root.path();
    // Named, or in the default selection: refused with its own error.
    let named = assert_bad_input(
        r,
        &["matrix", "scenarios=broken", "plan=true"],
        "broken.toml:",
    );
    assert!(
        named.starts_with(&format!("error: {}", r.display())),
        "{named}"
    );
    let _ = assert_bad_input(r, &["matrix", "plan=true"], "broken.toml:");
    // Another file's run goes on, and the broken one is one warning line.
    let run = [
        "matrix",
        "scenarios=noop",
        "threads=1",
        "cores=1",
        "duration=20ms",
        "warmup=5ms",
        "repeats=1",
        "profile=false",
    ];
    let out = lab(r, &run);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let said: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("broken.toml"))
        .collect();
    assert_eq!(said.len(), 1, "{stderr}");
    assert!(said[0].starts_with("warning: "), "{stderr}");
    assert!(said[0].chars().count() <= SHORT_LINE, "{}", said[0]);
    assert_eq!(results_files(r).len(), 1);
    // A file without a [smoke] table is not in a smoke run.
    let apart = "hot_path = \"lookup\"\nthred = [1]\n";
    std::fs::write(r.join("benches/broken.toml"), apart).unwrap();
    let out = lab(r, &["matrix", "smoke=true", "plan=true"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.starts_with("warning: "), "{stderr}");
}
