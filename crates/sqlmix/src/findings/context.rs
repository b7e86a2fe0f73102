//! Cell figures that give the parts their context and decide nothing: the real node's
//! setup and its client's time per transaction, the dqlite model's same comparisons (with
//! what it was calibrated on), the model's sensitivity, local SQLite as a control, and the
//! sweep table.
//!
//! Every comparison here is between cells at the same threads and cores (a file's widest
//! point), never the luckiest cell of each side. Medians and intervals are per cell
//! ([`Est`]); only [`super::claims`]'s paired comparisons decide.

use harness::CellRecord;
use verdict::findings::Table;
use verdict::judge::{param_text, si, times, values_of, widest, Est};

use crate::libdqlite::go::{GO, LAB};
use crate::runner::Design;

/// One backend's cells of the question at one point (threads, cores).
pub struct Backend<'a> {
    /// `real (libdqlite)` or `model (dqlite-model)`.
    pub name: &'static str,
    /// The K sweep, pool, apps and client-time cells, all at `at`.
    pub cells: Vec<&'a CellRecord>,
    /// (threads, cores) of the cells: the sweep's widest point.
    pub at: Option<(usize, usize)>,
}

impl<'a> Backend<'a> {
    /// The cells of `rows` at the widest point of `sweep` (the most cores, then the most
    /// threads), so every figure of this backend compares cells at one threads and cores.
    pub fn new(name: &'static str, sweep: &[&'a CellRecord], rows: Vec<&'a CellRecord>) -> Self {
        let at = widest(sweep).map(|(cores, threads)| (*threads.last().unwrap_or(&1), cores));
        let cells = rows
            .into_iter()
            .filter(|c| at == Some((c.threads, c.cores)))
            .collect();
        Backend { name, cells, at }
    }

    fn find(&self, variant: &str, key: &str, value: &str, client: bool) -> Option<&'a CellRecord> {
        self.cells.iter().copied().find(|c| {
            c.variant == variant
                && param_text(c, key) == value
                && matches!(param_text(c, "client_us").as_str(), "-" | "0") != client
        })
    }

    /// The semaphore cell at K = `slots`, the client at its own speed.
    pub fn semaphore(&self, slots: &str) -> Option<&'a CellRecord> {
        self.find(Design::Semaphore.name(), "slots", slots, false)
    }

    /// The semaphore cell at K = `slots` with the client slowed (`client_us` > 0).
    pub fn slowed(&self, slots: &str) -> Option<&'a CellRecord> {
        self.find(Design::Semaphore.name(), "slots", slots, true)
    }

    /// The pool cell of `size` connections, no semaphore.
    pub fn pool(&self, size: &str) -> Option<&'a CellRecord> {
        self.find(Design::Pool.name(), "pool_size", size, false)
    }

    /// The sharded cell over `apps` apps.
    pub fn apps(&self, apps: &str) -> Option<&'a CellRecord> {
        self.find(Design::Sharded.name(), "shards", apps, false)
    }
}

/// The client's time per transaction inside the gate, in ms, from a K = `slots` cell
/// whose gate is always full (48 threads against 2 permits): K / txn/s.
pub fn hold_ms(cell: &CellRecord) -> Option<f64> {
    let k: f64 = param_text(cell, "slots").parse().ok()?;
    (cell.ops_per_sec > 0.0).then(|| k / cell.ops_per_sec * 1e3)
}

/// "one node in the cell's process, its Raft log on tmpfs (/dev/shm), one database per
/// model, an abstract Unix socket": what "real" means for `cell`.
pub fn setup(cell: &CellRecord) -> String {
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
pub fn sensitivity(rows: &[&CellRecord], slots: &str) -> Option<String> {
    let key = |c: &CellRecord| {
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
pub fn control(rows: &[&CellRecord]) -> Option<String> {
    let (cores, threads) = widest(rows)?;
    let t = *threads.last()?;
    let at: Vec<&CellRecord> = rows
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
    let cell = |c: Option<&CellRecord>| c.map_or("-".to_owned(), |c| Est::of(c).text());
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

/// A figure of a record's `extra`, if it is a number.
fn extra_f64(cell: &CellRecord, key: &str) -> Option<f64> {
    cell.extra.get(key).and_then(serde_json::Value::as_f64)
}

/// The two clients' cells on the real node (`sqlmix-libdqlite-go*`): the lab's Rust
/// client and the Go one (Juju's stack), at one threads and cores.
pub struct Clients<'a> {
    cells: Vec<&'a CellRecord>,
}

impl<'a> Clients<'a> {
    /// The cells of `rows` at their widest point (the most cores, then the most threads).
    pub fn new(rows: &[&'a CellRecord]) -> Self {
        let at = widest(rows).map(|(cores, threads)| (*threads.last().unwrap_or(&1), cores));
        Clients {
            cells: rows
                .iter()
                .copied()
                .filter(|c| at == Some((c.threads, c.cores)))
                .collect(),
        }
    }

    fn find(&self, client: &str, variant: &str, key: &str, value: &str) -> Option<&'a CellRecord> {
        self.cells.iter().copied().find(|c| {
            c.variant == variant && param_text(c, key) == value && param_text(c, "client") == client
        })
    }

    fn k2(&self, client: &str) -> Option<&'a CellRecord> {
        self.find(client, Design::Semaphore.name(), "slots", "2")
    }

    /// Each client's time in the gate per transaction at K = 2 (`gate_ms_per_txn`), lab's
    /// then Go's; `None` when neither ran.
    pub fn gate_at_k2(&self) -> Option<(Option<f64>, Option<f64>)> {
        let gate = |client| {
            self.k2(client)
                .and_then(|c| extra_f64(c, "gate_ms_per_txn"))
        };
        let (lab, go) = (gate(LAB), gate(GO));
        (lab.is_some() || go.is_some()).then_some((lab, go))
    }

    /// The Go client's connections opened per second at K = 2 and without a semaphore
    /// (`connects_per_sec`), where both ran.
    pub fn go_connects(&self) -> Option<(f64, f64)> {
        let sem = Design::Semaphore.name();
        let of = |slots| {
            self.find(GO, sem, "slots", slots)
                .and_then(|c| extra_f64(c, "connects_per_sec"))
        };
        Some((of("2")?, of("unlimited")?))
    }

    /// Both clients side by side: txn/s and time in the gate per transaction for K = 2, no
    /// semaphore and a pool of 2 (cell medians).
    pub fn table(&self) -> Option<Table> {
        let sem = Design::Semaphore.name();
        let rows_of = [
            ("semaphore K = 2", sem, "slots", "2"),
            ("no semaphore", sem, "slots", "unlimited"),
            (
                "no semaphore, pool of 2",
                Design::Pool.name(),
                "pool_size",
                "2",
            ),
        ];
        let figures = |c: Option<&CellRecord>| match c {
            Some(c) => [
                Est::of(c).text(),
                extra_f64(c, "gate_ms_per_txn").map_or("-".to_owned(), |v| format!("{v:.2}")),
            ],
            None => ["-".to_owned(), "-".to_owned()],
        };
        let rows: Vec<Vec<String>> = rows_of
            .iter()
            .filter_map(|(name, variant, key, value)| {
                let lab = self.find(LAB, variant, key, value);
                let go = self.find(GO, variant, key, value);
                (lab.is_some() || go.is_some()).then(|| {
                    let mut row = vec![(*name).to_owned()];
                    row.extend(figures(lab));
                    row.extend(figures(go));
                    row
                })
            })
            .collect();
        let first = self.cells.first()?;
        (!rows.is_empty()).then(|| Table {
            title: format!(
                "The two clients on one real node (loopback TCP, {} threads on {} CPUs, 80% \
                 reads): txn/s and time in the gate per transaction (ms), medians per cell; \
                 Juju's is the Go client",
                first.threads, first.cores
            ),
            columns: vec![
                "runner".into(),
                "lab's client (Rust) txn/s".into(),
                "lab's client gate ms/txn".into(),
                "Juju's client (Go, go-dqlite) txn/s".into(),
                "Juju's client gate ms/txn".into(),
            ],
            rows,
        })
    }
}

/// Reads/s at 50% writes against all reads (cell medians), deciding nothing.
pub fn writes_figures(rows: &[&CellRecord]) -> Option<String> {
    let at = |pct: &str| {
        rows.iter()
            .copied()
            .find(|c| param_text(c, "read_pct") == pct)
            .and_then(|c| extra_f64(c, "reads_per_sec").map(|r| (c, r)))
    };
    let ((half, r50), (_, r100)) = (at("50")?, at("100")?);
    Some(format!(
        "Reads on the real node ({} threads on {} CPUs, K = {}): {} reads/s with half the \
         transactions writing against {} with none, {:.2}x (cell medians; the mix alone \
         leaves 0.5x).",
        half.threads,
        half.cores,
        param_text(half, "slots"),
        si(r50),
        si(r100),
        r50 / r100
    ))
}

/// The seed-shaped load's two sides (`sqlmix-libdqlite-go-seed`) in one sentence: what
/// each delivered of the offered rate, how many of its steps started late, and a
/// transaction's mean time; `None` unless both ran.
pub fn seed_load_figures(rows: &[&CellRecord]) -> Option<String> {
    let side = |slots: &str| {
        rows.iter()
            .copied()
            .find(|c| param_text(c, "slots") == slots)
    };
    let (k2, none) = (side("2")?, side("unlimited")?);
    let text = |c: &CellRecord| {
        format!(
            "{} txn/s, {:.0}% of steps late, {:.1} ms a transaction",
            Est::of(c).text(),
            extra_f64(c, "late_step_share").unwrap_or(0.0) * 100.0,
            extra_f64(c, "txn_ms_mean").unwrap_or(f64::NAN)
        )
    };
    Some(format!(
        "At the seed's load shape ({} step workers and {} change streams offering {} \
         transactions/s, {} CPUs): K = 2 {}; no semaphore {} (cell medians; the streams' \
         polls and watchers' reads count as transactions, as Juju's runner counts them).",
        k2.threads,
        param_text(k2, "models"),
        param_text(k2, "rate"),
        k2.cores,
        text(k2),
        text(none)
    ))
}
