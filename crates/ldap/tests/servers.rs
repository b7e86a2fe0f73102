//! Real servers, started and stopped: the conformance test, a server that leaves no
//! process, folder or port behind, a wrong answer caught, slapd's minimum refused, and a
//! block of pairs from two resident servers that leaves none behind either.
//!
//! Each test needs the servers' packages; where they are missing it says so and passes
//! without checking (CI installs them with `scripts/setup.sh`, so there they run).

use std::time::Duration;

use harness::testing::{self, Case};
use harness::HotPath;
use ldap::server;
use ldap::workload::LdapWorkload;
use ldap::{Design, LdapHotPath};

const SMALL: &[(&str, &str)] = &[("users", "300"), ("groups", "100"), ("connections", "3")];

/// The designs installed here; prints why each missing one is skipped.
fn installed() -> Vec<Design> {
    [Design::Ds389, Design::OpenLdap]
        .into_iter()
        .filter(|k| match k.available() {
            Ok(()) => true,
            Err(why) => {
                eprintln!("skipped {k:?}: {why}; install with {}", ldap::INSTALL);
                false
            }
        })
        .collect()
}

/// Whether 389 DS is missing here; prints why its test is skipped.
fn ds389_missing() -> bool {
    let missing = Design::Ds389.available().is_err();
    if missing {
        eprintln!(
            "skipped: 389 DS is not installed; install with {}",
            ldap::INSTALL
        );
    }
    missing
}

#[test]
fn every_variant_measures_and_verifies_against_a_real_server() {
    if let Some(m) = LdapHotPath.missing(&testing::params(&LdapHotPath, &[])) {
        eprintln!(
            "skipped: {} ({}); install with {}",
            m.what,
            m.reason,
            ldap::INSTALL
        );
        return;
    }
    let runs = testing::conformance(
        &LdapHotPath,
        &[Case::every_variant(SMALL).window(Duration::from_millis(200))],
    );
    for run in &runs {
        let m = &run.measurement;
        let share = m.server_time_share.expect("the server's account is read");
        assert!(share.on_cpu > 0.0, "{}: {share:?}", run.variant);
        let sum = share.on_cpu + share.run_queue.unwrap_or(0.0) + share.other;
        assert!((0.99..=1.01).contains(&sum), "{}: {share:?}", run.variant);
        for key in [
            "server_cpu_util",
            "client_cpu_util",
            "server_cpus",
            "client_cpus",
        ] {
            assert!(m.extra.contains_key(key), "{}: no {key}", run.variant);
        }
        assert_eq!(m.extra["server_threads"], serde_json::json!(2));
        // Three client connections, whatever the server's threads.
        assert_eq!(m.threads, 3);
    }
}

#[test]
fn a_server_started_for_a_cell_leaves_no_process_folder_or_port() {
    for design in installed() {
        let image = design.image(300, 100).unwrap();
        let parent = tempfile::tempdir().unwrap();
        let folder =
            harness::scratch::private_folder(Some(parent.path()), "contention-lab-t-").unwrap();
        let cpus = harness::affinity::allowed_cpus();
        let mut running = design.start(&image, folder.path(), 2, &cpus, 400).unwrap();
        let (pid, port) = (running.pid, running.port);
        assert!(running.alive() && server::port_in_use(port), "{design:?}");
        // Listening on the loopback address only.
        let listens: Vec<String> = std::fs::read_to_string("/proc/net/tcp")
            .unwrap()
            .lines()
            .filter(|l| l.split_whitespace().nth(3) == Some("0A"))
            .filter_map(|l| l.split_whitespace().nth(1).map(str::to_owned))
            .filter(|a| a.ends_with(&format!(":{port:04X}")))
            .collect();
        assert_eq!(listens, vec![format!("0100007F:{port:04X}")], "{design:?}");
        running.stop();
        assert!(
            !std::path::Path::new(&format!("/proc/{pid}")).exists(),
            "{design:?}: pid {pid} left"
        );
        assert!(
            !server::port_in_use(port),
            "{design:?}: port {port} still held"
        );
        drop(folder);

        // A whole cell through the hot path: its folder goes with it.
        let variant = match design {
            Design::Ds389 => "389-ds",
            Design::OpenLdap => "openldap",
        };
        let dir = parent.path().to_string_lossy().into_owned();
        let mut set = SMALL.to_vec();
        set.push(("data_dir", &dir));
        let params = testing::params(&LdapHotPath, &set);
        let m = LdapHotPath
            .measure(variant, &params, testing::settings(2, 50, 100))
            .unwrap();
        assert!(m.verified.is_ok(), "{design:?}: {:?}", m.verified);
        let left: Vec<_> = std::fs::read_dir(parent.path()).unwrap().collect();
        assert!(left.is_empty(), "{design:?}: {left:?} left in data_dir");
    }
}

#[test]
fn a_search_answered_with_another_users_entry_fails_verification() {
    for design in installed() {
        let image = design.image(300, 100).unwrap();
        let folder = harness::scratch::private_folder(None, "contention-lab-t-").unwrap();
        let cpus = harness::affinity::allowed_cpus();
        let running = design.start(&image, folder.path(), 2, &cpus, 400).unwrap();
        let workload = LdapWorkload::mislabelled(ldap::server::url(running.port), running.pid, 300);
        let m = harness::runner::run(&workload, testing::settings(2, 10, 100)).unwrap();
        let err = m.verified.unwrap_err();
        assert!(
            err.contains("answered with the wrong entry"),
            "{design:?}: {err}"
        );
        // The same server and clients that expect the right entry verify.
        let right = LdapWorkload::new(ldap::server::url(running.port), running.pid, 300, 7);
        let m = harness::runner::run(&right, testing::settings(2, 10, 100)).unwrap();
        assert_eq!(m.verified, Ok(()), "{design:?}");
        running.stop();
    }
}

#[test]
fn slapd_at_one_thread_is_refused_with_its_reason() {
    if !installed().contains(&Design::OpenLdap) {
        return;
    }
    let params = testing::params(&LdapHotPath, SMALL);
    let err = LdapHotPath
        .measure("openldap", &params, testing::settings(1, 10, 50))
        .unwrap_err();
    assert!(err.reason.contains("minimum is 2"), "{err}");
}

#[test]
fn the_autotuned_thread_number_reads_back_from_cn_monitor() {
    if ds389_missing() {
        return;
    }
    let image = Design::Ds389.image(300, 100).unwrap();
    let cpus = harness::affinity::allowed_cpus();
    let auto = ldap::ds389::autotuned_threads(1);
    // One CPU: the autotuned count is written as -1 and the server resolves it itself;
    // another count is written as that number.
    for threads in [3, auto] {
        let parent = tempfile::tempdir().unwrap();
        let folder =
            harness::scratch::private_folder(Some(parent.path()), "contention-lab-t-").unwrap();
        let running = Design::Ds389
            .start(&image, folder.path(), threads, &cpus[..1], 400)
            .unwrap();
        let config = ldap::ds389::config_folder(folder.path(), running.port);
        let dse = std::fs::read_to_string(config.join("dse.ldif")).unwrap();
        let written = if threads == auto {
            "-1".to_owned()
        } else {
            threads.to_string()
        };
        assert!(
            dse.contains(&format!("nsslapd-threadnumber: {written}")),
            "threads {threads}"
        );
        assert_eq!(
            ldap::ds389::read_threadnumber(&ldap::server::url(running.port)).map(|(n, _)| n),
            Ok(threads),
            "threads {threads}"
        );
        running.stop();
    }
}

/// The ns-slapd processes whose configuration lies under `dir`.
fn servers_under(dir: &std::path::Path) -> Vec<u32> {
    let dir = dir.to_string_lossy().into_owned();
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            let cmd = String::from_utf8_lossy(&cmd);
            cmd.contains("ns-slapd") && cmd.contains(&dir)
        })
        .collect()
}

#[test]
fn a_trio_of_389_ds_thread_counts_shares_one_start_and_leaves_nothing() {
    if ds389_missing() {
        return;
    }
    // As in a lab child: this thread's mask is the cell's one core; the clients get the rest.
    let before = harness::affinity::allowed_cpus();
    ldap::procstat::set_thread_cpus(&before[..1]).unwrap();
    let parent = tempfile::tempdir().unwrap();
    let dir = parent.path().to_string_lossy().into_owned();
    let mut set = SMALL.to_vec();
    set.push(("data_dir", &dir));
    let params = testing::params(&LdapHotPath, &set);
    let side = |threads| harness::PairSide {
        variant: "389-ds",
        params: &params,
        threads,
    };
    assert!(LdapHotPath.pairs_in_one_process());
    let started = std::time::Instant::now();
    let pairs = LdapHotPath
        .measure_pairs(
            &[side(1), side(2), side(3)],
            2,
            testing::settings(1, 50, 200),
        )
        .expect("389 DS measures pairs in one process");
    let took = started.elapsed().as_secs_f64();
    ldap::procstat::set_thread_cpus(&before).unwrap();
    let pairs = pairs.unwrap();
    assert_eq!(pairs.len(), 2);
    let mut once = 0.0;
    for (i, pair) in pairs.iter().enumerate() {
        assert_eq!(pair.len(), 3, "pair {i}");
        for (k, m) in pair.iter().enumerate() {
            let threads = k + 1;
            // In the sides' order on even pairs, reversed on odd ones.
            let position = if i % 2 == 0 { k } else { 2 - k };
            assert!(m.verified.is_ok(), "pair {i}: {:?}", m.verified);
            assert!(m.ops > 0, "pair {i}");
            assert_eq!(m.extra["server_threads"], serde_json::json!(threads));
            assert_eq!(
                m.extra["threadnumber_read_back"],
                serde_json::json!(threads)
            );
            assert_eq!(m.extra["pair_position"], serde_json::json!(position));
            assert_eq!(
                m.extra["server_cpus"],
                serde_json::json!(before[0].to_string())
            );
            assert!(m.server_time_share.is_some(), "pair {i}");
            // The other two servers were stopped throughout the window.
            let idle = m.extra["other_server_cpu_s"].as_f64().unwrap();
            assert!(idle < 0.001, "pair {i}: the idle servers ran {idle} s");
            let others: Vec<usize> = (1..=3).filter(|&t| t != threads).collect();
            assert_eq!(m.extra["other_server_threads"], serde_json::json!(others));
        }
        if i == 0 {
            once = pair
                .iter()
                .map(|m| {
                    m.extra["server_start_s"].as_f64().unwrap()
                        + m.extra["server_warm_s"].as_f64().unwrap()
                })
                .sum();
        }
    }
    let rates: Vec<String> = pairs
        .iter()
        .map(|pair| {
            let rates: Vec<String> = pair
                .iter()
                .map(|m| format!("{:.0}", m.ops_per_sec()))
                .collect();
            rates.join("/")
        })
        .collect();
    eprintln!(
        "searches/s at 1/2/3 threads, pair by pair: {}",
        rates.join(", ")
    );
    eprintln!(
        "2 trios of 200 ms windows in {took:.2} s, of which {once:.2} s the three starts and warm-ups: {:.2} s a trio",
        (took - once) / 2.0
    );
    assert!(servers_under(parent.path()).is_empty(), "a server is left");
    let left: Vec<_> = std::fs::read_dir(parent.path()).unwrap().collect();
    assert!(left.is_empty(), "{left:?} left in data_dir");
}

#[test]
fn two_389_ds_side_by_side_keep_their_own_statistics_semaphore() {
    if ds389_missing() {
        return;
    }
    // ns-slapd exits at start when it cannot unlink a semaphore of its name that another
    // instance's stop has just unlinked: side by side, each instance needs its own name.
    let image = Design::Ds389.image(300, 100).unwrap();
    let cpus = harness::affinity::allowed_cpus();
    let folders: Vec<_> = (0..2)
        .map(|_| harness::scratch::private_folder(None, "contention-lab-t-").unwrap())
        .collect();
    let mut running: Vec<_> = folders
        .iter()
        .map(|f| {
            Design::Ds389
                .start(&image, f.path(), 2, &cpus, 400)
                .unwrap()
        })
        .collect();
    let sems: Vec<_> = running
        .iter()
        .map(|r| ldap::ds389::semaphore(r.port))
        .collect();
    assert_ne!(sems[0], sems[1]);
    assert!(sems.iter().all(|s| s.exists()), "{sems:?}");
    running.remove(0).stop();
    assert!(!sems[0].exists(), "{:?} left", sems[0]);
    assert!(sems[1].exists(), "{:?} went with the other server", sems[1]);
    running.remove(0).stop();
    assert!(!sems[1].exists(), "{:?} left", sems[1]);
}

#[test]
fn a_semaphore_left_by_a_killed_instance_goes_at_the_next_start() {
    if ds389_missing() {
        return;
    }
    // What a lab killed with SIGKILL leaves: its server's semaphore, which nobody maps.
    let stale = std::path::PathBuf::from("/dev/shm/sem.slapd-cl1.stats");
    std::fs::write(&stale, [0u8; 32]).unwrap();
    let image = Design::Ds389.image(300, 100).unwrap();
    let cpus = harness::affinity::allowed_cpus();
    let folder = harness::scratch::private_folder(None, "contention-lab-t-").unwrap();
    let running = Design::Ds389
        .start(&image, folder.path(), 2, &cpus, 400)
        .unwrap();
    let own = ldap::ds389::semaphore(running.port);
    assert!(!stale.exists(), "the stale semaphore is still there");
    assert!(own.exists(), "{own:?}: its own went too");
    running.stop();
    assert!(!own.exists(), "{own:?} left");
}
