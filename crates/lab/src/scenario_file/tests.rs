//! Reading scenario files: sweeps, mode tables, relative sizes and malformed input.

use std::path::PathBuf;

use super::*;

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn reads_a_scenario_with_sweeps_and_quick_overrides() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(
        dir.path(),
        "lookup.toml",
        r#"
hot_path = "lookup"
axis = "threads"
variants = ["dashmap", "lmdb"]
threads = [1, 2, 4, 6]
duration = "2s"
[params]
users = 1000
write_pct = [0, 10]
[quick]
threads = [1, 2]
[quick.params]
users = 100
"#,
    );
    let s = load(&path).unwrap();
    assert_eq!(s.name, "lookup");
    assert_eq!(s.normal.variants, vec!["dashmap", "lmdb"]);
    assert_eq!(s.normal.threads, Sizes::counts(&[1, 2, 4, 6]));
    assert_eq!(s.normal.duration, Duration::from_secs(2));
    assert_eq!(s.normal.repeats, DEFAULT_REPEATS);
    assert_eq!(s.normal.params.len(), 2);
    assert_eq!(s.quick.threads, Sizes::counts(&[1, 2]));
    assert_eq!(s.quick.repeats, 1);
    let users = s.quick.params.iter().find(|(n, _)| n == "users").unwrap();
    assert_eq!(users.1, vec![Value::from(100)]);
    assert!(s.quick.params.iter().any(|(n, _)| n == "write_pct"));
}

#[test]
fn a_smoke_table_overrides_the_quick_mode() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(
        dir.path(),
        "lookup.toml",
        r#"
hot_path = "lookup"
axis = "threads"
threads = [1, 2, 4, 6, 12]
cores = [2]
[params]
users = 6000
groups = 4000
[quick]
threads = [1, 2, 4]
duration = "200ms"
[smoke]
threads = [1, 2]
cores = [1]
warmup = "50ms"
[smoke.params]
users = 2000
"#,
    );
    let s = load(&path).unwrap();
    assert_eq!(s.axis, Axis::Threads);
    assert_eq!(s.normal.cores, Some(Sizes::counts(&[2])));
    let smoke = s.smoke.expect("a [smoke] table");
    assert_eq!(smoke.threads, Sizes::counts(&[1, 2]));
    assert_eq!(smoke.cores, Some(Sizes::counts(&[1])));
    assert_eq!(smoke.duration, Duration::from_millis(200), "from [quick]");
    assert_eq!(smoke.warmup, Duration::from_millis(50));
    assert_eq!(smoke.repeats, 1);
    let value = |name: &str| {
        smoke
            .params
            .iter()
            .find(|(n, _)| n == name)
            .unwrap()
            .1
            .clone()
    };
    assert_eq!(value("users"), vec![Value::from(2000)]);
    assert_eq!(value("groups"), vec![Value::from(4000)]);
}

#[test]
fn malformed_files_name_the_file_line_and_problem() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            "hot_path = \"lookup\"\naxis = \"threads\"\nthreads = [1, 2\n",
            "bad.toml:",
        ),
        ("hot_path = \"lookup\"\nthread = [1]\n", "unknown field"),
        (
            "hot_path = \"nope\"\naxis = \"threads\"\nthreads = [1]\n",
            "unknown hot path",
        ),
        (
            "hot_path = \"lookup\"\naxis = \"users\"\nthreads = [1]\n",
            "axis: \"users\" is not accepted: expected threads, clients or fixed",
        ),
        (
            "hot_path = \"lookup\"\nthreads = [1]\n",
            "missing field `axis`",
        ),
        (
            "hot_path = \"lookup\"\naxis = \"threads\"\nthreads = [1]\nprofile_at = \"all\"\n",
            "profile_at: \"all\" is not accepted: expected sweep or most",
        ),
        (
            "hot_path = \"lookup\"\naxis = \"threads\"\nthreads = [1]\n[smoke]\ncores = [0]\n",
            "smoke.cores: 0 is not accepted",
        ),
        (
            "hot_path = \"lookup\"\naxis = \"threads\"\nthreads = [0]\n",
            "threads: 0 is not accepted",
        ),
        (
            "hot_path = \"lookup\"\naxis = \"threads\"\nthreads = [1]\nvariants = [\"impl2\"]\n",
            "unknown variant",
        ),
        (
            "hot_path = \"lookup\"\naxis = \"threads\"\nthreads = [1]\n[params]\nwrite_pct = 200\n",
            "expected an integer in 0..=100",
        ),
        (
            "hot_path = \"lookup\"\naxis = \"threads\"\nthreads = [1]\nduration = \"soon\"\n",
            "duration",
        ),
        (
            "hot_path = \"lookup\"\naxis = \"threads\"\nthreads = [1]\npair_duration = \"0s\"\n",
            "pair_duration: \"0s\" is not accepted",
        ),
    ];
    for (text, expected) in cases {
        let path = write(dir.path(), "bad.toml", text);
        let err = load(&path).unwrap_err();
        assert!(err.contains(expected), "{text:?} gave {err:?}");
        assert!(err.contains("bad.toml"), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
    }
}

#[test]
fn durations() {
    assert_eq!(parse_duration("300ms").unwrap(), Duration::from_millis(300));
    assert_eq!(parse_duration("1.5").unwrap(), Duration::from_millis(1500));
    assert_eq!(parse_duration("2s").unwrap(), Duration::from_secs(2));
    for bad in ["0", "-1", "2h", "abc", "", "NaN"] {
        assert!(parse_duration(bad).is_err(), "{bad}");
    }
}

#[test]
fn sizes_may_be_relative_to_the_cpus() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(
        dir.path(),
        "lease.toml",
        r#"
hot_path = "lease"
axis = "threads"
threads = [1, 12, "nproc", "2nproc"]
cores = ["powers of two", "nproc"]
overhead = "250ms"
keep_cores = true
[quick]
threads = [1, "2nproc"]
cores = ["nproc"]
"#,
    );
    let s = load(&path).unwrap();
    assert_eq!(s.normal.threads.resolve(4, 4096, false), [1, 4, 8, 12]);
    assert_eq!(
        s.normal
            .cores
            .as_ref()
            .unwrap()
            .resolve(4, usize::MAX, true),
        [1, 2, 4]
    );
    assert_eq!(s.quick.threads.resolve(4, 4096, false), [1, 8]);
    assert_eq!(s.quick.cores.unwrap().resolve(4, usize::MAX, true), [4]);
    assert_eq!(s.overhead, Some(Duration::from_millis(250)));
    assert_eq!(s.pair_duration, None, "without one, pairs use the window");
    assert!(s.keep_cores);
    assert_eq!(s.normal.repeats, DEFAULT_REPEATS);
}

#[test]
fn a_table_named_like_a_prefix_of_the_hot_paths_parameters_sets_them() {
    let dir = tempfile::tempdir().unwrap();
    let good = "hot_path = \"server\"\naxis = \"threads\"\nthreads = [1, 2]\n[server]\ncommand = \"memcached -t {threads} -p {port}\"\ndefault_threads = 4\n[load]\nbuiltin = \"memcached\"\n";
    let file = load(&write(dir.path(), "mc.toml", good)).unwrap();
    let value = |name: &str| {
        file.normal
            .params
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
    };
    assert_eq!(
        value("server_command"),
        Some(vec![Value::from("memcached -t {threads} -p {port}")])
    );
    assert_eq!(value("server_default_threads"), Some(vec![Value::from(4)]));
    assert_eq!(value("load_builtin"), Some(vec![Value::from("memcached")]));
    let bad = good.replace("default_threads", "default_thread");
    let err = load(&write(dir.path(), "bad.toml", &bad)).unwrap_err();
    assert!(
        err.ends_with("[server] default_thread: unknown; did you mean default_threads?"),
        "{err}"
    );
    let not_a_group =
        "hot_path = \"lookup\"\naxis = \"threads\"\nthreads = [1]\n[server]\ncommand = \"x\"\n";
    let err = load(&write(dir.path(), "bad2.toml", not_a_group)).unwrap_err();
    assert!(err.contains("bad2.toml:4: unknown field `server`"), "{err}");
}
