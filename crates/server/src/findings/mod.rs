//! Seed 002's question asked of any server a scenario file of the `server` hot path
//! names: (a) more worker threads than CPUs cost throughput, (b) threads = CPUs against
//! the server's own default (the file's `default_threads`), (c) per-thread decline while
//! CPUs are free, (d) where the server's time goes as threads grow. The four parts are one
//! registry per file (declared by [`claims::AskedOf::registry`]) that the claims and the
//! answer both read, by name. Parts (a)-(c) are comparisons measured as pairs adjacent in
//! time, (d) is read from the server's own profiles ([`profile`]); the verdict follows
//! from the parts alone. Every file gets the four parts, named `<file>/<part>`, so one run
//! of several servers keeps each server's parts apart; the ldap hot path asks the same
//! question of 389 DS with its own words. Per-thread figures (X/N) are shown as the
//! seed's arithmetic and decide nothing: past the CPUs they fall for any server.
//!
//! This module measures nothing and renders nothing: `lab` lays the [`Answer`] out.

pub mod claims;
mod failed;
pub mod profile;

pub use failed::all_failed;
use failed::failed_parts;

use std::collections::BTreeMap;

use harness::CellRecord;
use verdict::decide::{Claim, Outcome, Part, Planned};
use verdict::findings::{Answer, Basis, Chart, Run, Table, Verdict};
use verdict::judge::{self, si, Est};
use verdict::registry::{Parts, Registry};

use claims::{
    Against, AskedOf, Claims, PER_THREAD_WITH_CPUS_FREE, RECOMMENDATION, THREADS_PAST_CPUS,
    WHERE_TIME_GOES,
};
use profile::Profiled;

/// The seed's question as `lab` asks it of a user's own server: its words, its parts and its answer.
pub const QUESTION: verdict::Question = verdict::Question {
    hot_path: &crate::ServerHotPath,
    words: "Do more worker threads than CPUs cost your server throughput, does threads = CPUs beat the server's own default, does per-thread throughput fall while CPUs are free, and where does the server's time go as threads grow?",
    claims,
    answer,
};

/// The variant every part compares.
pub const VARIANT: &str = crate::VARIANT;

/// The four parts' claims.
pub const CLAIMS: Claims<'static> = Claims {
    threads_past_cpus: "more worker threads than CPUs cost total throughput: X at the most threads is below X at threads = CPUs",
    recommendation: "threads = CPUs does more than the server's own default thread count",
    per_thread_with_cpus_free: "per-thread throughput falls as threads rise past the knee while CPUs are free (threads below the server's CPUs, the clients on other CPUs)",
    where_time_goes: "some server functions take a growing share of the server's on-CPU time from 1 thread to the most threads (its own differential profile)",
};

/// What one file's cells say of their server: its name in words, its stacks' roots and
/// its default thread count per CPU count.
struct FileFacts {
    server: String,
    roots: Vec<String>,
    default: Option<Option<usize>>,
    setting: Option<String>,
}

fn facts(file: &str, params: &BTreeMap<String, serde_json::Value>) -> FileFacts {
    let text = |k: &str| {
        params
            .get(k)
            .and_then(|v| v.as_str())
            .unwrap_or("")
            .trim()
            .to_owned()
    };
    let program = Some(text("server_program"))
        .filter(|p| !p.is_empty())
        .unwrap_or_else(|| {
            text("server_command")
                .split_whitespace()
                .next()
                .unwrap_or("server")
                .to_owned()
        });
    // A command starting with a variable (`{lab} tiny-server ...`) names no program:
    // the file's name does.
    let server = match program.rsplit('/').next().unwrap_or(&program) {
        p if p.starts_with('{') => file.strip_prefix("server-").unwrap_or(file).to_owned(),
        p => p.to_owned(),
    };
    let comm = text("server_comm");
    let roots = if comm.is_empty() {
        vec![server.chars().take(15).collect()]
    } else {
        comm.split(',')
            .map(|s| s.trim().to_owned())
            .filter(|s| !s.is_empty())
            .collect()
    };
    let default = match params.get("server_default_threads") {
        Some(serde_json::Value::String(w)) if w == "nproc" => Some(None),
        Some(v) => v.as_u64().map(|n| Some(n as usize)),
        None => None,
    };
    let setting = Some(text("server_default_setting")).filter(|s| !s.is_empty());
    FileFacts {
        server,
        roots,
        default,
        setting,
    }
}

impl FileFacts {
    fn against(&self, cores: usize) -> Option<(usize, String)> {
        let d = self.default?.unwrap_or(cores);
        let how = match &self.setting {
            Some(s) => format!(" ({{threads}} written as {s}, as the server ships)"),
            None => String::new(),
        };
        (d != cores).then(|| {
            (
                d,
                format!("the server's own default of {d} threads on {cores} CPUs{how}"),
            )
        })
    }
}

/// The server files among `cells` (those whose parameters name a server command), each
/// with the parameters of its first cell.
fn files<'a, I>(cells: I) -> Vec<(String, BTreeMap<String, serde_json::Value>)>
where
    I: IntoIterator<Item = (&'a str, &'a BTreeMap<String, serde_json::Value>)>,
{
    let mut out: Vec<(String, BTreeMap<String, serde_json::Value>)> = Vec::new();
    for (file, params) in cells {
        if params.contains_key("server_command") && !out.iter().any(|(f, _)| f == file) {
            out.push((file.to_owned(), params.clone()));
        }
    }
    out
}

/// Seed 002's question asked of `file`'s server: its four parts, each named
/// `<file>/<part>`, part (c) asked on a machine of `nproc` CPUs; `against` is what
/// threads = CPUs is compared against (the file's default, [`FileFacts::against`]).
fn registry<'a>(
    file: &'a str,
    f: &'a FileFacts,
    against: &'a Against<'a>,
    nproc: usize,
) -> Registry<'a> {
    AskedOf {
        file,
        variant: VARIANT,
        server: &f.server,
        claims: CLAIMS,
        against,
        named_by_file: true,
    }
    .registry(nproc)
}

/// The parts every server file of the plan declares, on a machine of `nproc` CPUs.
pub fn claims_on(planned: &Planned<'_>, nproc: usize) -> Vec<Claim> {
    let mut all = Vec::new();
    for (file, params) in files(planned.cells.iter().map(|c| (c.file.as_str(), &c.params))) {
        let f = facts(&file, &params);
        let against = |_: &Planned<'_>, cores| f.against(cores);
        all.extend(registry(&file, &f, &against, nproc).claims(planned));
    }
    all
}

/// The parts on the CPUs of the machine `planned` is for.
pub fn claims(planned: &Planned<'_>) -> Vec<Claim> {
    claims_on(planned, plan_cpus(planned))
}

/// The CPUs of the machine a plan is for: this one's, or more where its cells run on more
/// (`plan=true cpus=64` plans for a machine of 64, whose cells go up to 64 cores).
pub fn plan_cpus(planned: &Planned<'_>) -> usize {
    let widest = planned.cells.iter().map(|c| c.cores).max().unwrap_or(0);
    crate::procstat::machine_cpus().len().max(widest)
}

/// One core count's curve: its cells by thread count, ascending.
#[derive(Debug, Clone)]
pub struct Curve<'a> {
    /// CPUs the server was pinned to.
    pub cores: usize,
    /// The cells, by thread count.
    pub cells: Vec<&'a CellRecord>,
}

impl<'a> Curve<'a> {
    /// The cell at the fewest threads.
    pub fn first(&self) -> &'a CellRecord {
        self.cells[0]
    }
    /// The cell at the most threads.
    pub fn last(&self) -> &'a CellRecord {
        self.cells[self.cells.len() - 1]
    }
    /// The cell with the highest throughput (context only: the luckiest cell decides
    /// nothing).
    pub fn best(&self) -> &'a CellRecord {
        judge::best_of(self.cells.iter().copied()).expect("a curve has cells")
    }
}

/// The curves of one variant, one per core count, ascending.
pub fn curves<'a>(cells: &[&'a CellRecord], variant: &str) -> Vec<Curve<'a>> {
    let mut cores: Vec<usize> = cells
        .iter()
        .filter(|c| c.variant == variant)
        .map(|c| c.cores)
        .collect();
    cores.sort_unstable();
    cores.dedup();
    cores
        .into_iter()
        .map(|k| {
            let mut row: Vec<&CellRecord> = cells
                .iter()
                .copied()
                .filter(|c| c.variant == variant && c.cores == k)
                .collect();
            row.sort_by_key(|c| c.threads);
            Curve {
                cores: k,
                cells: row,
            }
        })
        .filter(|c| !c.cells.is_empty())
        .collect()
}

/// "on CPU 42%, waiting for a CPU 3%, asleep 55%" of a cell's server, or why not.
pub fn server_time(r: &CellRecord) -> String {
    match r.server_time_share {
        Some(s) => format!(
            "on CPU {:.0}%, waiting for a CPU {:.0}%, asleep {:.0}%",
            100.0 * s.on_cpu,
            100.0 * s.run_queue.unwrap_or(0.0),
            100.0 * s.other
        ),
        None => "not read".to_owned(),
    }
}

/// A share as a whole percentage, `-` where there is none.
pub fn pct(v: Option<f64>) -> String {
    v.map_or("-".to_owned(), |v| format!("{:.0}%", 100.0 * v))
}

/// The table of one variant: a row per (cores, threads).
pub fn table(title: &str, curves: &[Curve<'_>]) -> Table {
    let mut rows = Vec::new();
    for curve in curves {
        for c in &curve.cells {
            let s = c.server_time_share;
            rows.push(vec![
                c.cores.to_string(),
                c.threads.to_string(),
                Est::of(c).text(),
                Est::per_thread(c).text(),
                pct(s.map(|s| s.on_cpu)),
                pct(s.and_then(|s| s.run_queue)),
                pct(s.map(|s| s.other)),
                pct(judge::extra(c, "server_cpu_util")),
                pct(judge::extra(c, "client_cpu_util")),
            ]);
        }
    }
    Table {
        title: title.to_owned(),
        columns: [
            "cores",
            "threads",
            "ops/s",
            "per-thread ops/s (X/N)",
            "server on CPU",
            "server run queue",
            "server asleep",
            "server CPU use",
            "client CPU use",
        ]
        .map(str::to_owned)
        .to_vec(),
        rows,
    }
}

/// One line on a curve's per-thread arithmetic, from the fewest threads to the most.
pub fn curve_sentence(curve: &Curve<'_>) -> String {
    let (first, last) = (curve.first(), curve.last());
    format!(
        "on {} core(s) per-thread {} at {} thread(s) to {} at {}",
        curve.cores,
        si(first.per_thread_ops_per_sec),
        first.threads,
        si(last.per_thread_ops_per_sec),
        last.threads
    )
}

/// "shown: 0.91x [0.88-0.94], 16 pairs (12 against 2 threads on 2 CPUs)" or the outcome
/// and its reason.
pub fn said(run: &Run<'_>, p: &Part) -> String {
    let sides = run
        .comparisons
        .iter()
        .find(|m| m.claim.part == p.name)
        .and_then(|m| m.claim.comparison.as_ref())
        .map_or(String::new(), |c| {
            let (a, b) = (&c.a.cell, &c.b.cell);
            if a.cores == b.cores {
                format!(
                    " ({} against {} threads on {} CPU(s))",
                    a.threads, b.threads, a.cores
                )
            } else {
                format!(" ({} against {})", a.text(), b.text())
            }
        });
    format!("{}: {}{sides}", p.outcome.word(), p.figure())
}

/// [`said`] where the part has a figure, else its outcome alone (its reason is in the
/// parts table and the details, not repeated in every sentence).
fn brief(run: &Run<'_>, p: &Part) -> String {
    if p.ratio.is_some() {
        said(run, p)
    } else {
        p.outcome.word().to_owned()
    }
}

/// One file's four parts as `run` measured them, part (d) read from the profiles.
fn parts_of<'r, 'a>(
    registry: &'r Registry<'a>,
    run: &Run<'_>,
    file: &str,
    f: &FileFacts,
) -> Parts<'r, 'a> {
    let mut parts = registry.parts(run);
    let roots: Vec<&str> = f.roots.iter().map(String::as_str).collect();
    let time = parts.get_mut(&format!("{file}/{WHERE_TIME_GOES}"));
    // The profiles decide its outcome; its name and weight (context, never the verdict's
    // reason) are the registry's.
    *time = Part {
        name: std::mem::take(&mut time.name),
        weight: std::mem::take(&mut time.weight),
        ..profile::where_time_goes(
            run,
            &Profiled {
                file,
                variant: VARIANT,
                server: &f.server,
                roots: &roots,
                claim: CLAIMS.where_time_goes,
            },
        )
    };
    parts
}

/// The answer for `run`: every server file's parts, those of a file whose cells all
/// failed inconclusive with the failure; `None` where the run has no server cell.
pub fn answer(run: &Run<'_>) -> Option<Answer> {
    let found = files(
        run.cells
            .iter()
            .map(|c| (verdict::findings::file_of(c), &c.params)),
    );
    let mut parts = Vec::new();
    let (mut sentences, mut details, mut tables) = (Vec::new(), Vec::new(), Vec::new());
    // The machine's CPUs only matter to part (c)'s sides, which the answer does not ask.
    let nproc = crate::procstat::machine_cpus().len();
    for (file, params) in &found {
        let f = facts(file, params);
        let against = |_: &Planned<'_>, cores| f.against(cores);
        let registry = registry(file, &f, &against, nproc);
        if let Some(why) = all_failed(run.cells, file) {
            // First, so that keeping three sentences never hides a server that never ran.
            sentences.insert(0, format!("{} ({file}): {why}.", f.server));
            parts.extend(failed_parts(&registry, &why));
            continue;
        }
        let cells = run.of_file(file);
        let curves = curves(&cells, VARIANT);
        if curves.is_empty() {
            continue;
        }
        let p = parts_of(&registry, run, file, &f);
        let part = |name: &str| p.get(&format!("{file}/{name}"));
        sentences.push(format!(
            "{} ({file}): more threads than CPUs, {}; threads = CPUs over its default, {}; where its time goes, {}.",
            f.server,
            brief(run, part(THREADS_PAST_CPUS)),
            brief(run, part(RECOMMENDATION)),
            part(WHERE_TIME_GOES).outcome.word()
        ));
        details.push(format!(
            "{}: per-thread figures, the seed's arithmetic X/N (they fall past the CPUs for any server, so they decide nothing): {}; per-thread while CPUs are free, {}; where the time goes: {}.",
            f.server,
            curves.iter().map(curve_sentence).collect::<Vec<_>>().join("; "),
            said(run, part(PER_THREAD_WITH_CPUS_FREE)),
            part(WHERE_TIME_GOES).why
        ));
        tables.push(table(
            &format!("{} ({file}), threads = its worker-thread setting", f.server),
            &curves,
        ));
        parts.extend(p.into_vec());
    }
    if parts.is_empty() {
        return None;
    }
    let outcomes: Vec<Outcome> = parts.iter().map(|p| p.outcome).collect();
    let figure = parts
        .iter()
        .find(|p| p.outcome != Outcome::Inconclusive && p.ratio.is_some())
        .map(|p| format!("{}: {}", p.name, p.figure()))
        .unwrap_or_default();
    sentences.truncate(3);
    details.push("Server time is each server thread's schedstat over the window (every process the server started), over the threads that ran at least 1% of it; asleep covers waiting for work, for a lock or for I/O alike.".to_owned());
    Some(Answer {
        verdict: Verdict::of_outcomes(&outcomes),
        parts,
        basis: Basis::Real,
        calibrated_on: Vec::new(),
        figure,
        sentences,
        details,
        tables,
        chart: found
            .iter()
            .find(|(file, _)| all_failed(run.cells, file).is_none())
            .map(|(file, _)| Chart::Throughput { file: file.clone() }),
    })
}

#[cfg(test)]
mod tests;
