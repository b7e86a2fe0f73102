//! A cell of the real-server hot path (`ldap`) killed in the middle of its window leaves
//! nothing: no server process, no instance folder, no port held. The child `lab run` is
//! killed with SIGKILL from outside (no destructor runs), as a crash or an OOM kill
//! would; its server must die with it (parent-death signal) and lab must remove the
//! child's scratch folder. Skipped, saying why, where the servers are not installed.

use std::path::PathBuf;
use std::time::Duration;

use harness::HotPath;

mod common;

use common::{processes_of as processes, wait_until};

/// The port a running server listens on: slapd's from its `-h` URL, ns-slapd's from the
/// `dse.ldif` in its `-D` folder.
fn port_of(args: &[String]) -> u16 {
    if let Some(url) = args.iter().find(|a| a.starts_with("ldap://")) {
        return url
            .trim_end_matches('/')
            .rsplit(':')
            .next()
            .unwrap()
            .parse()
            .unwrap();
    }
    let dir = args
        .windows(2)
        .find(|w| w[0] == "-D")
        .map(|w| PathBuf::from(&w[1]))
        .unwrap();
    let dse = std::fs::read_to_string(dir.join("dse.ldif")).unwrap();
    dse.lines()
        .find_map(|l| l.strip_prefix("nsslapd-port: "))
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

fn kill_mid_window_and_check(file: &str, server: &str) {
    let root = tempfile::tempdir().unwrap();
    common::copy_benches(root.path());
    let tmp = root.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let mut lab = common::job(root.path(), &tmp, &common::LONG_MATRIX)
        .arg(format!("scenarios={file}"))
        .args(["threads=2", "users=300", "groups=100", "connections=2"])
        .spawn()
        .unwrap();
    let mut found = None;
    wait_until("the server to start", Duration::from_secs(90), || {
        found = processes(&tmp)
            .into_iter()
            .find(|(_, args)| args.first().is_some_and(|a| a.ends_with(server)));
        found.is_some()
    });
    let (server_pid, server_args) = found.unwrap();
    let port = port_of(&server_args);
    let child = processes(&tmp)
        .into_iter()
        .find(|(_, args)| args.get(1).is_some_and(|a| a == "run"))
        .expect("the child lab run");
    // Inside the window: the server answers, the clients search.
    std::thread::sleep(Duration::from_millis(500));
    // SAFETY: signalling a process this test started (through lab).
    unsafe { libc::kill(child.0, libc::SIGKILL) };
    let status = lab.wait().unwrap();
    assert_eq!(status.code(), Some(1), "the killed cell is a failed cell");
    common::assert_server_gone(&tmp, server_pid, port);
}

#[test]
fn a_real_server_cell_killed_mid_window_leaves_no_process_folder_or_port() {
    let defaults = harness::testing::params(&ldap::LdapHotPath, &[]);
    if let Some(m) = ldap::LdapHotPath.missing(&defaults) {
        eprintln!(
            "skipped: {} ({}); install with {}",
            m.what,
            m.reason,
            ldap::INSTALL
        );
        return;
    }
    kill_mid_window_and_check("openldap", "slapd");
    kill_mid_window_and_check("389ds", "ns-slapd");
}
