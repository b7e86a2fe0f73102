//! Plans of the repository's scenario files: which setting reaches which file, the
//! seed's columns, smoke sizes, relative sizes on other machines, the budget.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use super::params::combinations;
use super::*;
use crate::scenario_file::{ParamSweep, ScenarioFile};

/// Plans under a budget and on other machines.
mod budget;

fn args(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

#[test]
fn paired_parameters_advance_together_and_the_rest_cross() {
    let hot_path = crate::catalog::hot_path("pool").unwrap();
    let sweeps: Vec<ParamSweep> = vec![
        ("connections".into(), vec![Value::from(1), Value::from(10)]),
        (
            "max_requests".into(),
            vec![Value::from(1024), Value::from(5000)],
        ),
        (
            "batch".into(),
            vec![Value::from(1), Value::from(10), Value::from(100)],
        ),
    ];
    let paired = vec!["connections".to_owned(), "max_requests".to_owned()];
    let sets = combinations(hot_path, &sweeps, &paired).unwrap();
    assert_eq!(sets.len(), 2 * 3);
    let shapes: std::collections::BTreeSet<String> = sets
        .iter()
        .map(|p| {
            format!(
                "{}x{}",
                p.to_map()["connections"],
                p.to_map()["max_requests"]
            )
        })
        .collect();
    assert_eq!(
        shapes.into_iter().collect::<Vec<_>>(),
        ["10x5000", "1x1024"]
    );
    assert_eq!(combinations(hot_path, &sweeps, &[]).unwrap().len(), 12);
    let uneven = vec![
        sweeps[0].clone(),
        ("max_requests".into(), vec![Value::from(8)]),
    ];
    let err = combinations(hot_path, &uneven, &paired)
        .unwrap_err()
        .to_string();
    assert!(err.contains("as many values"), "{err}");
}

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

pub(super) fn repo_files() -> Vec<ScenarioFile> {
    scenario_file::load_all(&repo_root().join("benches")).unwrap()
}

/// A project root with the repository's scenario files and no results: the costs are
/// the files' own estimates, whatever runs this checkout has measured.
fn fresh_root() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("benches")).unwrap();
    for f in std::fs::read_dir(repo_root().join("benches")).unwrap() {
        let path = f.unwrap().path();
        std::fs::copy(
            &path,
            dir.path().join("benches").join(path.file_name().unwrap()),
        )
        .unwrap();
    }
    dir
}

/// The plan of `list` over the repository's scenario files, with no budget unless `list`
/// gives one, so that cells do not depend on measured costs; for a machine of this one's
/// CPUs unless `list` names others (`cpus=`, with `plan=true`), so that the files do not
/// depend on which packages this machine has installed.
pub(super) fn plan(list: &[&str]) -> anyhow::Result<MatrixPlan> {
    let mut list: Vec<String> = list.iter().map(|s| s.to_string()).collect();
    if !list.iter().any(|a| a.starts_with("budget=")) {
        list.push("budget=none".to_owned());
    }
    if !list.iter().any(|a| a.starts_with("cpus=")) {
        list.push(format!("cpus={}", nproc()));
        list.push("plan=true".to_owned());
    }
    let list: Vec<&str> = list.iter().map(String::as_str).collect();
    let root = fresh_root();
    MatrixPlan::build(&Settings::parse(&args(&list))?, root.path())
}

fn nproc() -> usize {
    harness::affinity::allowed_cpus().len()
}

fn own_threads(file: &ScenarioFile) -> Vec<usize> {
    file.normal
        .threads
        .resolve(nproc(), scenario_file::max_threads(), false)
}

/// `scenarios=` naming every scenario file in benches/.
fn every_file() -> String {
    let names: Vec<String> = repo_files().into_iter().map(|f| f.name).collect();
    format!("scenarios={}", names.join(","))
}

pub(super) fn counts<'p>(plan: &'p MatrixPlan, file: &str) -> &'p [usize] {
    &plan
        .scenarios
        .iter()
        .find(|s| s.file == file)
        .unwrap_or_else(|| panic!("{file} is not planned"))
        .threads
}

#[test]
fn the_seed_columns_change_thread_axes_only() {
    let every = every_file();
    let plan = plan(&["threads=1,2,4,6,12", &every]).unwrap();
    let files = repo_files();
    assert_eq!(plan.scenarios.len(), files.len());
    for file in &files {
        let expected: &[usize] = match file.axis {
            Axis::Threads => &[1, 2, 4, 6, 12],
            Axis::Clients | Axis::Fixed => &own_threads(file),
        };
        assert_eq!(counts(&plan, &file.name), expected, "{}", file.name);
    }
    assert_eq!(counts(&plan, "pool-clients"), [100, 1000, 2000, 3000]);
    assert_eq!(counts(&plan, "pool-batch"), [1000]);
    assert_eq!(counts(&plan, "sqlmix-slots"), [16]);
    assert_eq!(counts(&plan, "sqlmix-writes"), [16]);
    assert_eq!(counts(&plan, "pool"), [1, 2, 4, 6, 12]);
    // One line a file, and the line that says the plan assumes what `just setup` installs.
    let lines: Vec<String> = plan
        .settings_lines()
        .into_iter()
        .filter(|l| !l.starts_with("cpus="))
        .collect();
    assert_eq!(lines.len(), files.len());
    let line = |file: &str| {
        lines
            .iter()
            .find(|l| l.starts_with(&format!("{file}.toml ")))
            .unwrap()
            .clone()
    };
    assert!(
        line("lookup").contains("set here threads=1,2,4,6,12;"),
        "{lines:?}"
    );
    assert!(
        line("pool-clients").contains("set here none; as the file has them: clients 100,1000,2000,3000 (threads= not for this axis; pool-clients.clients= sets it)"),
        "{lines:?}"
    );
    assert!(
        line("sqlmix-slots").contains("fixed at threads 16"),
        "{lines:?}"
    );
}

#[test]
fn the_default_matrix_already_has_the_seed_columns() {
    let cells = |plan: &MatrixPlan| {
        plan.cells()
            .iter()
            .map(|c| {
                (
                    c.file.file.clone(),
                    c.variant,
                    c.param_index,
                    c.threads,
                    c.cores,
                )
            })
            .collect::<Vec<_>>()
    };
    let default = plan(&[]).unwrap();
    let seed = plan(&["threads=1,2,4,6,12"]).unwrap();
    let (default, seed) = (cells(&default), cells(&seed));
    assert!(seed.iter().all(|c| default.contains(c)));
    // The extra columns: pool's acquisition-only file also runs 8 threads, as many as it
    // has slots, the point where its designs are compared (issue 15); 389 DS also runs
    // 16, its own autotuned count on up to 16 CPUs and the seed's 16 (issue 34).
    let extra: Vec<_> = default.iter().filter(|c| !seed.contains(c)).collect();
    assert!(
        extra
            .iter()
            .all(|c| (c.0 == "pool" && c.3 == 8) || (c.0 == "389ds" && c.3 == 16)),
        "{extra:?}"
    );
}

#[test]
fn clients_and_one_files_point_are_set_apart() {
    let every = every_file();
    let plan = plan(&["clients=100,1000", "sqlmix-slots.threads=8", &every]).unwrap();
    for file in repo_files() {
        let expected: Vec<usize> = match (file.axis, file.name.as_str()) {
            (_, "sqlmix-slots") => vec![8],
            (Axis::Clients, _) => vec![100, 1000],
            _ => own_threads(&file),
        };
        assert_eq!(counts(&plan, &file.name), expected, "{}", file.name);
    }
    assert_eq!(counts(&plan, "sqlmix-writes"), [16]);
    let lines = plan.settings_lines().join("\n");
    assert!(
        lines.contains("sqlmix-slots.toml (fixed axis): set here sqlmix-slots.threads=8"),
        "{lines}"
    );
    assert!(
        lines.contains("pool-batch.toml (clients axis): set here clients=100,1000"),
        "{lines}"
    );
}

#[test]
fn settings_that_reach_no_selected_file_are_refused() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["clients=100", "scenarios=lookup"],
            "clients=100: no selected scenario file has a clients axis (lookup threads)",
        ),
        (
            &["threads=1,2", "scenarios=pool-clients,sqlmix-slots"],
            "threads=1,2: no selected scenario file has a threads axis (pool-clients clients, sqlmix-slots fixed)",
        ),
        (
            &["sqlmix-slots.threads=8", "scenarios=lookup"],
            "sqlmix-slots.threads=8: sqlmix-slots is not among the selected scenario files (lookup)",
        ),
        (&["nope.threads=8"], "nope.threads=8: unknown scenario file \"nope\"; accepted"),
        (&["scenarios=nope"], "scenarios=\"nope\": unknown scenario file; accepted"),
        (
            &["scenarios=lookup", "timeout=1s", "duration=200ms", "warmup=50ms"],
            "timeout=1s: shorter than warm-up 50ms + duration 200ms + 1s to start a cell of lookup; accepted at least 1s 250ms",
        ),
        (
            &["smoke=true", "scenarios=sqlmix-slots"],
            "scenarios=sqlmix-slots: sqlmix-slots.toml has no [smoke] table; smoke=true accepts ",
        ),
    ];
    for (list, expected) in cases {
        let err = format!("{:#}", plan(list).unwrap_err());
        assert!(err.contains(expected), "{list:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
    }
    assert!(plan(&[
        "scenarios=lookup",
        "timeout=1250ms",
        "duration=200ms",
        "warmup=50ms"
    ])
    .is_ok());
}

#[test]
fn smoke_runs_each_files_own_smoke_sizes() {
    let plan = plan(&["smoke=true"]).unwrap();
    let with_smoke: Vec<String> = repo_files()
        .into_iter()
        .filter(|f| f.smoke.is_some())
        .map(|f| f.name)
        .collect();
    let planned: Vec<String> = plan.scenarios.iter().map(|s| s.file.clone()).collect();
    assert_eq!(planned, with_smoke);
    assert!(plan.quick, "smoke profiles with the quick window");
    for s in &plan.scenarios {
        let own = repo_files().into_iter().find(|f| f.name == s.file).unwrap();
        let smoke = own.smoke.unwrap();
        let threads = smoke
            .threads
            .resolve(nproc(), scenario_file::max_threads(), false);
        assert_eq!(s.threads, threads, "{}", s.file);
        assert_eq!(s.duration, smoke.duration, "{}", s.file);
        assert_eq!(s.repeats, smoke.repeats, "{}", s.file);
    }
}

#[test]
fn a_cell_request_carries_the_cell() {
    let plan = plan(&["scenarios=lookup", "threads=2", "cores=1", "users=300"]).unwrap();
    let cells = plan.cells();
    let request = cells[0].request(Duration::from_millis(70), Some("p".into()));
    assert_eq!(request.hot_path, "lookup");
    assert_eq!(
        (request.threads, request.cores, request.repeats),
        (2, Some(1), 1)
    );
    assert_eq!(request.duration, Duration::from_millis(70));
    assert!(request
        .params
        .contains(&("users".to_owned(), "300".to_owned())));
    assert_eq!(request.profile.as_deref(), Some("p"));
    assert!(!request.locks_off && !request.to_args().contains(&"--locks".to_owned()));
}

#[test]
fn pairs_measure_at_the_files_pair_window_in_a_normal_run_only() {
    let ms = Duration::from_millis;
    let windows = |list: &[&str]| {
        let plan = plan(list).unwrap();
        let file = &plan.scenarios[0];
        (
            file.duration,
            file.pair_window(),
            file.settings_line.clone(),
        )
    };
    let (round, pair, line) = windows(&["scenarios=sqlmix-libdqlite"]);
    assert_eq!((round, pair), (ms(300), ms(1000)));
    assert!(line.contains("pair_duration 1s"), "{line}");
    // Quick runs keep their short window for both, and `duration=` asks one window.
    let (round, pair, _) = windows(&["scenarios=sqlmix-libdqlite", "quick=true"]);
    assert_eq!((round, pair), (ms(200), ms(200)));
    let (round, pair, _) = windows(&["scenarios=sqlmix-libdqlite", "duration=500ms"]);
    assert_eq!((round, pair), (ms(500), ms(500)));
    // A file without its own pair window pairs at its window, as the budget trims it.
    let (round, pair, _) = windows(&["scenarios=lookup"]);
    assert_eq!(round, pair);
    let trimmed = plan(&["scenarios=lease-seed-load", "budget=1m"]).unwrap();
    let file = &trimmed.scenarios[0];
    assert!(
        file.trimmed.iter().any(|t| t.starts_with("windows")),
        "{:?}",
        file.trimmed
    );
    assert_eq!(file.pair_window(), file.duration);

    // The pairs' children are asked the pair window, and the plan prices them at it.
    let plan = plan(&["scenarios=sqlmix-libdqlite"]).unwrap();
    let cells = plan.cells();
    let sides = [&cells[0], &cells[1]];
    let request = crate::pairs::child::PairsRequest::of(&sides, 1, 0, 1);
    for side in &request.cells {
        let at = side
            .iter()
            .position(|a| a == "--duration")
            .expect("--duration");
        assert_eq!(side[at + 1], "1s", "{side:?}");
    }
    let file = &plan.scenarios[0];
    assert_eq!(
        crate::plan::parts::pairs_cost(&sides, 1, 1),
        (file.run_cost(cells[0].threads) + ms(700)) * 2
    );
}

#[test]
fn locks_off_reaches_every_child_and_its_settings_line() {
    let plan = plan(&["scenarios=lookup", "threads=2", "cores=1", "locks=off"]).unwrap();
    assert!(
        plan.settings_lines()[0].contains("locks=off"),
        "{:?}",
        plan.settings_lines()
    );
    for cell in plan.cells() {
        let args = cell.request(Duration::from_millis(70), None).to_args();
        let at = args.iter().position(|a| a == "--locks").expect("--locks");
        assert_eq!(args[at + 1], "off", "{args:?}");
    }
}

#[test]
fn default_cores_are_powers_of_two_and_nproc() {
    assert_eq!(default_cores(1), vec![1]);
    assert_eq!(default_cores(2), vec![1, 2]);
    assert_eq!(default_cores(6), vec![1, 2, 4, 6]);
    assert_eq!(default_cores(16), vec![1, 2, 4, 8, 16]);
}

#[test]
fn files_needing_what_the_machine_lacks_are_named_in_one_line() {
    use super::file::lacking_line;
    let lib = |what: &str| harness::hotpath::Missing {
        what: what.into(),
        packages: vec!["libdqlite0".into()],
        reason: "cannot load".into(),
    };
    assert_eq!(lacking_line(&[]), None);
    let line = lacking_line(&[
        ("sqlmix-libdqlite".into(), lib("libdqlite.so.0")),
        ("sqlmix-libdqlite-pool".into(), lib("libdqlite.so.0")),
    ])
    .unwrap();
    assert_eq!(
        line,
        "skipped sqlmix-libdqlite.toml, sqlmix-libdqlite-pool.toml (this machine lacks \
         libdqlite.so.0): `just setup` installs it (Debian: libdqlite0)"
    );
    // A file without `packages` names the program to install, not an empty list.
    let bare = harness::hotpath::Missing {
        packages: Vec::new(),
        ..lib("redis-server")
    };
    let line = lacking_line(&[("redis".into(), bare.clone())]).unwrap();
    assert_eq!(
        line,
        "skipped redis.toml (this machine lacks redis-server): install redis-server"
    );
    let line = lacking_line(&[
        ("redis".into(), bare),
        ("sqlmix-libdqlite".into(), lib("libdqlite.so.0")),
    ])
    .unwrap();
    assert!(
        line.ends_with(
            ": install redis-server; `just setup` installs the rest (Debian: libdqlite0)"
        ),
        "{line}"
    );
}

#[test]
fn the_plan_says_how_each_part_is_paired() {
    let line = |plan: &MatrixPlan, part: &str| -> String {
        let notes = plan.plan_notes();
        let prefix = format!("  {part}: ");
        notes
            .into_iter()
            .find(|l| l.starts_with(&prefix))
            .unwrap_or_else(|| panic!("no plan line for {part}"))
    };
    // 389 DS keeps both sides' servers running (`pairs_in_one_process`); lookup builds
    // each side afresh, or interleaves them when asked.
    let whole = plan(&["scenarios=389ds,lookup"]).unwrap();
    let ldap = line(&whole, "ldap/threads_past_cpus");
    assert!(
        ldap.contains("windows, each side's server kept running"),
        "{ldap}"
    );
    let lookup = line(&whole, "lookup/placebo");
    assert!(
        lookup.contains("windows, each side built afresh"),
        "{lookup}"
    );
    let interleaved = plan(&["scenarios=lookup", "interleave=on"]).unwrap();
    let lookup = line(&interleaved, "lookup/placebo");
    assert!(lookup.contains("interleaved turns"), "{lookup}");
}

#[test]
fn resident_servers_are_started_afresh_every_few_pairs_and_the_plan_prices_each_start() {
    let whole = plan(&["scenarios=389ds,lookup"]).unwrap();
    let cells = whole.cells();
    let of = |file: &str| -> Vec<&CellSpec<'_>> {
        cells
            .iter()
            .filter(|c| c.file.file == file)
            .take(2)
            .collect()
    };
    let (ldap, lookup) = (of("389ds"), of("lookup"));
    let per = super::parts::pairs_per_start(&ldap, 1);
    assert!(
        per > 1 && per % 2 == 1,
        "{per}: odd, so the side started first alternates"
    );
    // Three runs of servers cost three starts: three times one run's pairs.
    let cost = |sides: &[&CellSpec<'_>], n| super::parts::pairs_cost(sides, n, 1);
    assert_eq!(cost(&ldap, 3 * per), cost(&ldap, per) * 3);
    // The pair after a run's last pays a start; the one before it does not.
    assert!(cost(&ldap, per + 1) - cost(&ldap, per) > cost(&ldap, per) - cost(&ldap, per - 1));
    // Sides rebuilt for every window need no restart.
    assert_eq!(super::parts::pairs_per_start(&lookup, 1), usize::MAX);
}

#[test]
fn the_placebo_is_a_cell_of_a_part_that_decides_where_one_does() {
    let placebo_file = |list: &[&str]| -> String {
        let plan = plan(list).unwrap();
        let parts = super::parts::declare(&plan, &plan.cells());
        let placebo = parts.iter().find(|m| m.claim.placebo).expect("a placebo");
        let c = placebo.claim.comparison.as_ref().unwrap();
        assert_eq!(c.cells()[0], c.cells()[1], "a cell against itself");
        c.cells()[0].file.clone()
    };
    // The writes file's cells (a size's, 300 ms windows) cost less a pair than the K
    // sweep's (a deciding part's, 1 s windows): the placebo still takes the K sweep's.
    let both = placebo_file(&["scenarios=sqlmix-libdqlite,sqlmix-libdqlite-writes"]);
    assert_eq!(both, "sqlmix-libdqlite");
    // With sizes alone, a size's cell.
    let sizes = placebo_file(&["scenarios=sqlmix-libdqlite-writes"]);
    assert_eq!(sizes, "sqlmix-libdqlite-writes");
    // As dear a pair as the parts, it is planned its first look.
    let plan = plan(&["scenarios=sqlmix-libdqlite"]).unwrap();
    let planned = plan.parts.iter().find(|p| p.name == "sqlmix/placebo");
    assert_eq!(
        planned.map(|p| p.pairs),
        Some(super::parts::PLACEBO_PAIRS),
        "{planned:?}"
    );
}

#[test]
fn a_budget_narrows_the_deciding_parts_and_the_placebos_looks_and_sizes_are_looked_at_once() {
    use verdict::decide::interval::Looks;
    let looks = |list: &[&str]| -> Vec<(bool, Looks)> {
        let plan = plan(list).unwrap();
        super::parts::declare(&plan, &plan.cells())
            .iter()
            .filter(|m| m.claim.comparison.is_some())
            .map(|m| (!m.claim.size_only || m.claim.placebo, m.looks))
            .collect()
    };
    for (list, deciding_looks) in [
        (
            &[
                "scenarios=sqlmix-libdqlite,sqlmix-libdqlite-writes",
                "budget=15m",
            ][..],
            Looks::Budgeted,
        ),
        (
            &["scenarios=sqlmix-libdqlite,sqlmix-libdqlite-writes"][..],
            Looks::All,
        ),
    ] {
        let parts = looks(list);
        assert!(parts.iter().any(|&(deciding, _)| deciding), "{list:?}");
        assert!(parts.iter().any(|&(deciding, _)| !deciding), "{list:?}");
        for (deciding, l) in parts {
            let want = if deciding {
                deciding_looks
            } else {
                Looks::Once
            };
            assert_eq!(l, want, "{list:?}");
        }
    }
    // The plan never keeps time for pairs past a budgeted part's last look.
    assert_eq!(super::parts::MOST_PLANNED, Looks::Budgeted.last());
}

#[test]
fn a_part_on_another_parts_cell_is_priced_as_one_window_a_pair_resident_servers_too() {
    let part = |list: &[&str], name: &str| {
        let plan = plan(list).unwrap();
        let p = plan.parts.iter().find(|p| p.name == name).cloned();
        (plan, p.unwrap_or_else(|| panic!("no {name}")))
    };
    // sqlmix's placebo is `k2_beats_unlimited`'s K = 2 cell: it rides in its trio and pays
    // for its own window only, half of what a pair of its cell costs.
    let (plan, placebo) = part(&["scenarios=sqlmix-libdqlite"], "sqlmix/placebo");
    assert!(
        placebo
            .how
            .contains("in a trio with sqlmix/k2_beats_unlimited"),
        "{}",
        placebo.how
    );
    // Every cell of the file costs the same a window (one thread count, one window).
    let cells = plan.cells();
    let cell = &cells[0];
    let pair = super::parts::pairs_cost(&[cell, cell], placebo.pairs, 1);
    assert_eq!(placebo.cost, pair / 2);
    // 389 DS keeps its servers resident, three side by side for a trio: its 2-against-16
    // thread part rides with the 12-against-2 one and pays for its 16-thread server's
    // start and windows only.
    let (plan, rides) = part(&["scenarios=389ds"], "ldap/recommendation");
    assert!(
        rides.how.contains("in a trio with ldap/threads_past_cpus"),
        "{}",
        rides.how
    );
    let cells = plan.cells();
    let sixteen = cells.iter().find(|c| c.threads == 16).unwrap();
    assert_eq!(
        rides.cost,
        super::parts::pairs_cost(&[sixteen], rides.pairs, 1)
    );
    let host = plan
        .parts
        .iter()
        .find(|p| p.name == "ldap/threads_past_cpus")
        .unwrap();
    assert!(!host.how.contains("trio"), "{}", host.how);
    // Its placebo on 2 threads splits the 2-thread window the two share: it pays for one
    // more 2-thread window a pair, a block of four.
    let placebo = plan
        .parts
        .iter()
        .find(|p| p.name == "ldap/placebo")
        .unwrap();
    assert!(
        placebo
            .how
            .contains("in a block of 4 windows with ldap/threads_past_cpus"),
        "{}",
        placebo.how
    );
    let two = cells.iter().find(|c| c.threads == 2).unwrap();
    assert_eq!(
        placebo.cost,
        super::parts::pairs_cost(&[two], placebo.pairs, 1)
    );
}

#[test]
fn a_chain_puts_each_shared_cell_between_the_parts_that_compare_it() {
    use super::parts::Chain;
    let join = |c: Chain, j: usize, theirs: &[usize]| c.joined(j, theirs).map(|(c, _)| c);
    let of = |cells: &[usize]| Chain::of(0, cells).unwrap();
    let shape = |c: &Chain| {
        let at: Vec<[usize; 2]> = c.members.iter().map(|(_, at)| *at).collect();
        (c.cells.clone(), at)
    };
    // A deciding part (cells 4, 7) and the placebo of its cell 7: 4, 7, 7, the new window
    // the placebo's.
    let (c, added) = of(&[4, 7]).joined(1, &[7, 7]).unwrap();
    assert_eq!(shape(&c), (vec![4, 7, 7], vec![[0, 1], [1, 2]]));
    assert_eq!(added, 7);
    // Picked the other way round, and sharing the first cell.
    let c = join(of(&[7, 7]), 1, &[7, 4]).unwrap();
    assert_eq!(shape(&c), (vec![7, 7, 4], vec![[0, 1], [1, 2]]));
    let (c, added) = of(&[3, 4]).joined(1, &[3, 9]).unwrap();
    assert_eq!(shape(&c), (vec![9, 3, 4], vec![[1, 2], [1, 0]]));
    assert_eq!(added, 9);
    // 389 DS: 12 against 2 threads and 2 against 16 share the 2-thread window; the
    // placebo on 2 threads splits it, so each deciding part has a 2-thread window of its
    // own and the placebo compares the two. The same whichever joins first.
    let trio = join(of(&[12, 2]), 1, &[2, 16]).unwrap();
    assert_eq!(shape(&trio), (vec![12, 2, 16], vec![[0, 1], [1, 2]]));
    let (four, added) = trio.joined(2, &[2, 2]).unwrap();
    assert_eq!(
        shape(&four),
        (vec![12, 2, 2, 16], vec![[0, 1], [2, 3], [1, 2]])
    );
    assert_eq!(added, 2);
    let four = join(join(of(&[12, 2]), 1, &[2, 2]).unwrap(), 2, &[2, 16]).unwrap();
    assert_eq!(
        shape(&four),
        (vec![12, 2, 2, 16], vec![[0, 1], [1, 2], [2, 3]])
    );
    // Nothing shared at an end, the same cells, or other than two cells: no chain.
    assert_eq!(join(of(&[1, 2]), 1, &[3, 4]), None);
    assert_eq!(join(of(&[1, 2]), 1, &[2, 1]), None);
    assert_eq!(join(of(&[1, 2]), 1, &[1, 4, 5]), None);
    assert_eq!(Chain::of(0, &[1, 2, 3]), None);
    let trio = join(of(&[1, 2]), 1, &[2, 3]).unwrap();
    assert_eq!(join(trio, 2, &[2, 5]), None, "2 ends neither 1, 2, 3");
}
