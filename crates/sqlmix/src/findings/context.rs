//! Cell figures that give the parts their context and decide nothing: the real node's
//! setup and its client's time per transaction, the dqlite model's same comparisons (with
//! what it was calibrated on), the model's sensitivity, local SQLite as a control, and the
//! sweep table.
//!
//! Every comparison here is between cells at the same threads and cores (a file's widest
//! point), never the luckiest cell of each side. Medians and intervals are per cell
//! ([`Est`]); only [`super::claims`]'s paired comparisons decide.

use harness::findings::Table;
use harness::judge::{param_text, times, values_of, widest, Est};
use harness::RunRecord;

use crate::runner::Design;

/// One backend's cells of the question at one point (threads, cores).
pub struct Backend<'a> {
    /// `real (libdqlite)` or `model (dqlite-model)`.
    pub name: &'static str,
    /// The K sweep, pool, apps and client-time cells, all at `at`.
    pub cells: Vec<&'a RunRecord>,
    /// (threads, cores) of the cells: the sweep's widest point.
    pub at: Option<(usize, usize)>,
}

impl<'a> Backend<'a> {
    /// The cells of `rows` at the widest point of `sweep` (the most cores, then the most
    /// threads), so every figure of this backend compares cells at one threads and cores.
    pub fn new(name: &'static str, sweep: &[&'a RunRecord], rows: Vec<&'a RunRecord>) -> Self {
        let at = widest(sweep).map(|(cores, threads)| (*threads.last().unwrap_or(&1), cores));
        let cells = rows
            .into_iter()
            .filter(|c| at == Some((c.threads, c.cores)))
            .collect();
        Backend { name, cells, at }
    }

    fn find(&self, variant: &str, key: &str, value: &str, client: bool) -> Option<&'a RunRecord> {
        self.cells.iter().copied().find(|c| {
            c.variant == variant
                && param_text(c, key) == value
                && matches!(param_text(c, "client_us").as_str(), "-" | "0") != client
        })
    }

    /// The semaphore cell at K = `slots`, the client at its own speed.
    pub fn semaphore(&self, slots: &str) -> Option<&'a RunRecord> {
        self.find(Design::Semaphore.name(), "slots", slots, false)
    }

    /// The semaphore cell at K = `slots` with the client slowed (`client_us` > 0).
    pub fn slowed(&self, slots: &str) -> Option<&'a RunRecord> {
        self.find(Design::Semaphore.name(), "slots", slots, true)
    }

    /// The pool cell of `size` connections, no semaphore.
    pub fn pool(&self, size: &str) -> Option<&'a RunRecord> {
        self.find(Design::Pool.name(), "pool_size", size, false)
    }

    /// The sharded cell over `apps` apps.
    pub fn apps(&self, apps: &str) -> Option<&'a RunRecord> {
        self.find(Design::Sharded.name(), "shards", apps, false)
    }
}

/// The client's time per transaction inside the gate, in ms, from a K = `slots` cell
/// whose gate is always full (48 threads against 2 permits): K / txn/s.
pub fn hold_ms(cell: &RunRecord) -> Option<f64> {
    let k: f64 = param_text(cell, "slots").parse().ok()?;
    (cell.ops_per_sec > 0.0).then(|| k / cell.ops_per_sec * 1e3)
}

/// "one node in the cell's process, its Raft log on tmpfs (/dev/shm), one database per
/// model, an abstract Unix socket": what "real" means for `cell`.
pub fn setup(cell: &RunRecord) -> String {
    let log = match param_text(cell, "data_dir").as_str() {
        "-" | "" => "its Raft log on this machine's disk (the cell's scratch folder)".to_owned(),
        d if d.starts_with("/dev/shm") || d.starts_with("/run") => {
            format!("its Raft log on tmpfs ({d})")
        }
        d => format!("its Raft log in {d}"),
    };
    let nodes = match param_text(cell, "shards").as_str() {
        n if cell.variant == Design::Sharded.name() && n != "1" => format!("{n} nodes"),
        _ => "one node".to_owned(),
    };
    let databases = match param_text(cell, "databases").as_str() {
        "per-app" => "one database per app",
        _ => "one database per model (Juju's layout)",
    };
    let bind = match param_text(cell, "dqlite_bind").as_str() {
        "loopback" => "a loopback TCP port",
        _ => "an abstract Unix socket",
    };
    format!(
        "{nodes} in the cell's process, {log}, {databases}, on {bind}, {} threads on {} CPU{}",
        cell.threads,
        cell.cores,
        if cell.cores == 1 { "" } else { "s" }
    )
}

/// The model's (or another backend's) K = 2 against none, pool of 2 against K = 2 and 3
/// apps against 1, as cell medians at one point.
pub fn side_figures(b: &Backend<'_>) -> Option<String> {
    let (t, c) = b.at?;
    let mut parts = Vec::new();
    if let (Some(k2), Some(none)) = (b.semaphore("2"), b.semaphore("unlimited")) {
        parts.push(format!(
            "K = 2 {} txn/s against {} without a semaphore, {}",
            Est::of(k2).text(),
            Est::of(none).text(),
            times(k2, none, "")
        ));
        if let Some(p) = b.pool("2") {
            parts.push(format!("a pool of 2 without one {}", times(p, k2, "K = 2")));
        }
    }
    if let (Some(k24), Some(none)) = (b.semaphore("24"), b.semaphore("unlimited")) {
        parts.push(format!(
            "Juju's K = 24 {}",
            times(k24, none, "no semaphore")
        ));
    }
    if let (Some(three), Some(one)) = (b.apps("3"), b.apps("1")) {
        parts.push(format!("3 apps {}", times(three, one, "1")));
    }
    (!parts.is_empty()).then(|| {
        format!(
            "The {} at {t} threads on {c} CPUs (cell medians, deciding nothing): {}.",
            b.name,
            parts.join("; ")
        )
    })
}

/// In how many of the sensitivity file's perturbations the model's K = `slots` beats none,
/// each perturbation's two cells at the same threads and cores.
pub fn sensitivity(rows: &[&RunRecord], slots: &str) -> Option<String> {
    let key = |c: &RunRecord| {
        let mut k: Vec<String> = ["serve_us", "rtt_us", "commit_us"]
            .iter()
            .map(|p| format!("{p}={}", param_text(c, p)))
            .collect();
        k.push(format!("{}t{}c", c.threads, c.cores));
        k.join(" ")
    };
    let mut perturbations: Vec<String> = Vec::new();
    for c in rows {
        let k = key(c);
        if !perturbations.contains(&k) {
            perturbations.push(k);
        }
    }
    let (mut shown, mut judged) = (0, 0);
    for p in &perturbations {
        let at = |s: &str| {
            rows.iter()
                .copied()
                .find(|c| key(c) == *p && param_text(c, "slots") == s)
        };
        if let (Some(k), Some(none)) = (at(slots), at("unlimited")) {
            if let Some(helps) = Est::of(k).above(&Est::of(none)) {
                judged += 1;
                shown += usize::from(helps);
            }
        }
    }
    (judged > 0).then(|| {
        format!(
            "Sensitivity of the model: K = {slots} beats none (cell intervals apart) in {shown} \
             of {judged} perturbations of its chosen parameters (each at half and double: {}).",
            perturbations.join("; ")
        )
    })
}

/// Local SQLite (no serving thread) as a control: every K against none at one point.
pub fn control(rows: &[&RunRecord]) -> Option<String> {
    let (cores, threads) = widest(rows)?;
    let t = *threads.last()?;
    let at: Vec<&RunRecord> = rows
        .iter()
        .copied()
        .filter(|c| c.variant == Design::Semaphore.name() && c.threads == t && c.cores == cores)
        .collect();
    let none = at
        .iter()
        .copied()
        .find(|c| param_text(c, "slots") == "unlimited")?;
    let ks: Vec<String> = values_of(&at, "slots")
        .into_iter()
        .filter(|s| s != "unlimited")
        .filter_map(|s| {
            let k = at.iter().copied().find(|c| param_text(c, "slots") == s)?;
            Some(format!("K = {s} {}", times(k, none, "")))
        })
        .collect();
    (!ks.is_empty()).then(|| {
        format!(
            "Control on local SQLite (no serving thread), {t} threads on {cores} CPUs, each K \
             against no semaphore: {}.",
            ks.join(", ")
        )
    })
}

/// txn/s per runner on the real node and on the model, each at its own widest point.
pub fn sweep_table(real: &Backend<'_>, model: &Backend<'_>, client_us: &str) -> Table {
    let mut slots = values_of(&model.cells, "slots");
    for s in values_of(&real.cells, "slots") {
        if !slots.contains(&s) {
            slots.push(s);
        }
    }
    let cell = |c: Option<&RunRecord>| c.map_or("-".to_owned(), |c| Est::of(c).text());
    let mut rows: Vec<Vec<String>> = slots
        .iter()
        .filter(|s| *s != "-")
        .filter(|s| real.semaphore(s).is_some() || model.semaphore(s).is_some())
        .map(|s| {
            vec![
                format!("semaphore K = {s}"),
                cell(real.semaphore(s)),
                cell(model.semaphore(s)),
            ]
        })
        .collect();
    for s in ["2", "unlimited"] {
        if real.slowed(s).is_some() {
            rows.push(vec![
                format!("semaphore K = {s}, client +{client_us} us per statement"),
                cell(real.slowed(s)),
                "-".into(),
            ]);
        }
    }
    for size in ["2", "3", "64"] {
        if real.pool(size).is_some() || model.pool(size).is_some() {
            rows.push(vec![
                format!("no semaphore, pool {size}"),
                cell(real.pool(size)),
                cell(model.pool(size)),
            ]);
        }
    }
    for apps in ["1", "3", "6"] {
        if real.apps(apps).is_some() || model.apps(apps).is_some() {
            rows.push(vec![
                format!("{apps} app(s), K = 2 each"),
                cell(real.apps(apps)),
                cell(model.apps(apps)),
            ]);
        }
    }
    let at = |b: &Backend<'_>| {
        b.at.map_or("-".to_owned(), |(t, c)| format!("{t} threads on {c} CPUs"))
    };
    Table {
        title: format!(
            "txn/s, 80% reads: the real node ({}) against the model ({}); medians per cell",
            at(real),
            at(model)
        ),
        columns: vec![
            "runner".into(),
            "real (libdqlite)".into(),
            "model (dqlite-model)".into(),
        ],
        rows,
    }
}
