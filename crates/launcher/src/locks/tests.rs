//! The lock library under a small C program of known locks (`locks/lockdemo.c`): the lock
//! every thread wants is named by its symbol and waited on, the ones only one thread takes
//! never are, and the delay experiment lengthens the named lock's holds and no other's.
//! Nothing here asserts a speed: only what the table counts.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use super::*;

const DEMO: &str = concat!(env!("OUT_DIR"), "/lockdemo");

/// Runs the demo under the library in `folder` and reads its table.
fn run_demo(folder: &Path, threads: usize, delay: Option<&str>) -> Table {
    run_demo_with(folder, &[&threads.to_string(), "0.3"], delay)
}

/// Runs the demo with `args` under the library in `folder` and reads its table.
fn run_demo_with(folder: &Path, args: &[&str], delay: Option<&str>) -> Table {
    let preload = Preload::into(folder, &[], delay).expect("library written");
    let status = Command::new(DEMO)
        .args(args)
        .envs(preload.env.iter().map(|(k, v)| (k, v)))
        .stdout(std::process::Stdio::null())
        .status()
        .expect("demo runs");
    assert!(status.success(), "{status}");
    Table::read(&preload.table).expect("the demo made its table")
}

fn empty() -> Table {
    Table {
        pid: 0,
        sample_every: 64,
        full: 0,
        delayed: 0,
        delay_class: None,
        classes: BTreeMap::new(),
        counts: BTreeMap::new(),
        wait_sites: BTreeMap::new(),
    }
}

#[test]
fn the_contended_lock_is_named_by_its_symbol_and_waited_on_the_others_are_not() {
    let dir = tempfile::tempdir().unwrap();
    let table = run_demo(dir.path(), 4, None);
    let rows = rows(&empty(), &table, Duration::from_millis(300));
    let row = |name: &str| {
        rows.iter()
            .find(|r| r.name == name)
            .unwrap_or_else(|| panic!("no {name} in {rows:?}"))
    };
    let hot = row("lockdemo!hot_lock");
    assert!(hot.waits_per_s > 0.0 && hot.wait_ms_per_s > 0.0, "{hot:?}");
    assert!(hot.hold_ns.is_some_and(|h| h > 0.0), "{hot:?}");
    assert_eq!(hot.kind, "mutex");
    // Every wait is the demo's `work` taking it: one site (the demo exports no symbols,
    // so an offset in it), most of the sampled waits.
    let (site, share) = hot
        .wait_sites
        .first()
        .expect("some waits sampled for their site");
    assert!(site.starts_with("lockdemo"), "{hot:?}");
    assert!(*share > 0.5 && *share <= 1.0, "{hot:?}");
    let quiet = row("lockdemo!quiet_lock");
    assert_eq!(quiet.waits_per_s, 0.0, "{quiet:?}");
    assert!(quiet.wait_sites.is_empty(), "{quiet:?}");
    assert!(quiet.acquisitions_per_s > 0.0, "{quiet:?}");
    // The heap mutex is named by where it was first taken (the demo's `work`).
    let heap = rows
        .iter()
        .find(|r| r.name.starts_with("mutex in lockdemo"))
        .unwrap_or_else(|| panic!("no heap mutex in {rows:?}"));
    assert_eq!(heap.waits_per_s, 0.0, "{heap:?}");
    assert_eq!(
        rows[0].name, "lockdemo!hot_lock",
        "the most waited-on first"
    );
    assert!(table.delay_class.is_none() && table.delayed == 0);
}

#[test]
fn a_condition_wait_is_not_counted_as_holding_its_lock() {
    // The waiter holds `wait_lock` only around a 1 ms condition wait, which releases it:
    // counted as a hold, every sampled hold would be 1 ms or more.
    let dir = tempfile::tempdir().unwrap();
    let table = run_demo_with(dir.path(), &["1", "0.5", "wait"], None);
    let rows = rows(&empty(), &table, Duration::from_millis(500));
    let wait = rows
        .iter()
        .find(|r| r.name == "lockdemo!wait_lock")
        .unwrap_or_else(|| panic!("no wait_lock in {rows:?}"));
    let hold = wait.hold_ns.expect("some holds of wait_lock sampled");
    assert!(hold < 1e6, "{wait:?}");
}

#[test]
fn one_thread_waits_on_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let table = run_demo(dir.path(), 1, None);
    let rows = rows(&empty(), &table, Duration::from_millis(300));
    assert!(!rows.is_empty());
    assert!(rows.iter().all(|r| r.waits_per_s == 0.0), "{rows:?}");
}

#[test]
fn the_delay_lengthens_the_named_lock_only() {
    let dir = tempfile::tempdir().unwrap();
    let table = run_demo(dir.path(), 2, Some("lockdemo!quiet_lock=2000"));
    assert_eq!(table.delay_class.as_deref(), Some("lockdemo!quiet_lock"));
    assert!(table.delayed > 0);
    let rows = rows(&empty(), &table, Duration::from_millis(300));
    let hold = |name: &str| {
        rows.iter()
            .find(|r| r.name == name)
            .and_then(|r| r.hold_ns)
            .unwrap_or_else(|| panic!("no hold of {name} in {rows:?}"))
    };
    // Every hold of the delayed lock spins 2000 ns inside it.
    assert!(hold("lockdemo!quiet_lock") >= 2000.0, "{rows:?}");
    let dir = tempfile::tempdir().unwrap();
    let outside = run_demo(dir.path(), 2, Some("lockdemo!quiet_lock=2000:outside"));
    assert!(outside.delayed > 0);
    let rows = super::rows(&empty(), &outside, Duration::from_millis(300));
    let quiet = rows
        .iter()
        .find(|r| r.name == "lockdemo!quiet_lock")
        .unwrap();
    assert!(quiet.hold_ns.is_some_and(|h| h < 2000.0), "{quiet:?}");
}

#[test]
fn a_delay_on_a_lock_the_program_lacks_is_applied_to_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let table = run_demo(dir.path(), 2, Some("no such lock=500"));
    assert!(table.delay_class.is_none());
    assert_eq!(table.delayed, 0);
}

#[test]
fn a_file_the_library_did_not_make_is_not_a_table() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(TABLE_FILE);
    std::fs::write(&path, vec![0u8; 4096]).unwrap();
    assert!(Table::read(&path).is_err());
    assert!(Table::read(&dir.path().join("absent")).is_err());
}

#[test]
fn a_window_s_rows_are_the_difference_of_its_two_reads() {
    let mut open = empty();
    open.classes.insert(
        3,
        Class {
            name: "a".into(),
            site: "f < g".into(),
            kind: "mutex",
        },
    );
    let mut close = open.clone();
    open.counts.insert(
        3,
        Counts {
            objects: 1,
            waits: 10,
            wait_ns: 1_000_000,
            sampled: 5,
            holds: 5,
            hold_ns: 500,
        },
    );
    close.counts.insert(
        3,
        Counts {
            objects: 2,
            waits: 30,
            wait_ns: 3_000_000,
            sampled: 7,
            holds: 7,
            hold_ns: 900,
        },
    );
    let rows = rows(&open, &close, Duration::from_millis(500));
    assert_eq!(rows.len(), 1);
    let r = &rows[0];
    assert_eq!((r.waits_per_s, r.wait_ms_per_s), (40.0, 4.0));
    assert_eq!(r.acquisitions_per_s, 2.0 * 64.0 / 0.5);
    assert_eq!(r.hold_ns, Some(200.0));
    assert_eq!(r.objects, 2);
}

#[test]
fn a_row_reads_back_as_written_and_a_foreign_one_is_skipped() {
    let row = LockRow {
        name: "ns-slapd+0x70980".into(),
        site: "ns-slapd+0x1b1bd < ns-slapd+0x1f2e3".into(),
        kind: "rwlock",
        objects: 3,
        waits_per_s: 1120.0,
        wait_ms_per_s: 4456.5,
        acquisitions_per_s: 47_000.0,
        hold_ns: None,
        wait_sites: vec![("get_work_q < worker".into(), 0.75)],
    };
    assert_eq!(LockRow::from_json(&row.to_json()), Some(row.clone()));
    let mut older = row.to_json();
    older.as_object_mut().unwrap().remove("wait_sites");
    assert_eq!(
        LockRow::from_json(&older).map(|r| r.wait_sites),
        Some(Vec::new()),
        "a row written before wait sites reads with none"
    );
    let mut foreign = row.to_json();
    foreign["kind"] = "spinlock".into();
    assert_eq!(LockRow::from_json(&foreign), None);
    let mut record =
        harness::testing::synthetic_cell("ldap", "389ds", "389-ds", &[], 16, 1, 1e4, 0.0, 1);
    assert!(LockRow::of_record(&record).is_empty());
    record.extra.insert(
        "locks".into(),
        serde_json::json!([row.to_json(), foreign, {"name": 1}]),
    );
    assert_eq!(LockRow::of_record(&record), vec![row]);
}

#[test]
fn a_window_s_wait_sites_are_shares_of_its_sampled_waits() {
    let mut open = empty();
    open.wait_sites.insert(
        3,
        WaitSites {
            sampled: 10,
            sites: vec![("a < b".into(), 6), ("c".into(), 4)],
        },
    );
    let mut close = open.clone();
    close.wait_sites.insert(
        3,
        WaitSites {
            sampled: 30,
            sites: vec![("a < b".into(), 10), ("c".into(), 19)],
        },
    );
    // 20 sampled waits in the window: 15 from c, 4 from a < b, 1 from a site not kept.
    assert_eq!(
        wait_sites(open.wait_sites.get(&3), close.wait_sites.get(&3)),
        vec![("c".to_owned(), 0.75), ("a < b".to_owned(), 0.2)]
    );
    assert!(wait_sites(close.wait_sites.get(&3), close.wait_sites.get(&3)).is_empty());
}
