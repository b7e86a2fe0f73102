//! Part (d), where the time goes: the server functions whose share of the server's own
//! on-CPU samples grows most from 1 thread to the most threads, from the folded stacks of
//! the two profiled cells on the most CPUs.
//!
//! The folded stacks of a cell hold the lab's own clients too (rooted at the cell frame
//! `<hot path>/<variant>` and the lab's thread names); only stacks rooted at one of the
//! server's thread names (perf's comm, which many servers do not rename: `ns-slapd`,
//! `nginx`, `memcached`) are the server's. A function's share is inclusive: the share of
//! the server's samples whose stack holds it, so exported library functions count even
//! where the leaf above them is `[unknown]` (a server without debug symbols). Not here:
//! off-CPU time, pairs, wording of the other parts.

use std::collections::{BTreeMap, BTreeSet};

use harness::decide::{Outcome, Part};
use harness::findings::Run;
use harness::RunRecord;

use super::claims::WHERE_TIME_GOES;
/// A frame perf could not name.
pub const UNKNOWN: &str = "[unknown]";
/// Growth of a function's share, in points of the server's samples, that counts as time
/// going somewhere: 5 points is well beyond the sampling noise of a few thousand samples
/// (about 1 point) and a change a profile reader would act on.
pub const SHOWN_GROWTH: f64 = 0.05;
/// No function growing by more than 2 points is a profile that does not shift.
pub const CONTRADICTED_GROWTH: f64 = 0.02;
/// Fewer server samples than this at either end give shares too coarse to compare.
pub const MIN_SAMPLES: u64 = 200;

/// The server's share of each function in one profile.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Shares {
    /// Samples of the server's stacks.
    pub samples: u64,
    /// Of which the innermost frame is `[unknown]`.
    pub unresolved: u64,
    /// Samples whose stack holds each named function (once per stack).
    pub by_function: BTreeMap<String, u64>,
    /// Samples of other roots (the lab's client, its helpers).
    pub other: u64,
}

impl Shares {
    /// Reads folded stacks (`root;frame;frame count` a line); the server's stacks are
    /// those rooted at one of `roots`.
    pub fn of_folded(text: &str, roots: &[&str]) -> Shares {
        let mut s = Shares::default();
        for line in text.lines() {
            let Some((stack, count)) = line.rsplit_once(' ') else {
                continue;
            };
            let Ok(count) = count.trim().parse::<u64>() else {
                continue;
            };
            let frames: Vec<&str> = stack.split(';').collect();
            // A prefix: perf names a thread by its name, which servers number (`mc-worker-3`
            // folds to `mc-worker`, but not every folding strips the number).
            if !roots.iter().any(|r| frames[0].starts_with(r)) {
                s.other += count;
                continue;
            }
            s.samples += count;
            if frames.len() < 2 || frames[frames.len() - 1] == UNKNOWN {
                s.unresolved += count;
            }
            let named: BTreeSet<&str> = frames[1..]
                .iter()
                .copied()
                .filter(|f| *f != UNKNOWN)
                .collect();
            for f in named {
                *s.by_function.entry(f.to_owned()).or_default() += count;
            }
        }
        s
    }

    /// A function's share of the server's samples.
    pub fn share(&self, f: &str) -> f64 {
        let n = self.by_function.get(f).copied().unwrap_or(0);
        n as f64 / self.samples.max(1) as f64
    }

    /// The unresolved share.
    pub fn unresolved_share(&self) -> f64 {
        self.unresolved as f64 / self.samples.max(1) as f64
    }
}

/// Functions by growth of their share from `one` to `most`, largest first.
pub fn growth(one: &Shares, most: &Shares) -> Vec<(String, f64, f64)> {
    let names: BTreeSet<&String> = one
        .by_function
        .keys()
        .chain(most.by_function.keys())
        .collect();
    let mut v: Vec<(String, f64, f64)> = names
        .into_iter()
        .map(|f| (f.clone(), one.share(f), most.share(f)))
        .collect();
    v.sort_by(|a, b| (b.2 - b.1).total_cmp(&(a.2 - a.1)).then(a.0.cmp(&b.0)));
    v
}

/// The part from two profiles' shares, at 1 and at `most` threads on `cores` CPUs, for a
/// server whose stacks are rooted at `roots`; `claim` is the part's sentence.
pub fn judge(
    one: &Shares,
    most: &Shares,
    (most_threads, cores): (usize, usize),
    roots: &[&str],
    claim: &str,
) -> Part {
    let part = |o, why: String| Part::other(WHERE_TIME_GOES, claim, o, why);
    let roots_text = roots.join("`, `");
    for (s, t) in [(one, 1), (most, most_threads)] {
        if s.samples < MIN_SAMPLES {
            let hint = if s.samples == 0 && s.other > 0 {
                format!("; the profile has {} samples, none rooted at `{roots_text}` (the folded stacks must keep the server's process name as their root)", s.other)
            } else {
                String::new()
            };
            return part(
                Outcome::Inconclusive,
                format!(
                    "{} samples of the server's own stacks at {t} thread(s) on {cores} CPU(s), fewer than {MIN_SAMPLES}{hint}",
                    s.samples
                ),
            );
        }
    }
    let rows = growth(one, most);
    let pct = |v: f64| format!("{:.1}%", 100.0 * v);
    let named = |r: &(String, f64, f64)| {
        format!(
            "`{}` {} -> {} ({:+.1} points)",
            r.0,
            pct(r.1),
            pct(r.2),
            100.0 * (r.2 - r.1)
        )
    };
    let tail = format!(
        "from 1 to {most_threads} threads on {cores} CPU(s), of the server's on-CPU samples ({} and {}; the lab's client's stacks left out); unresolved (`[unknown]` innermost frame, no debug symbols): {} and {}",
        one.samples,
        most.samples,
        pct(one.unresolved_share()),
        pct(most.unresolved_share())
    );
    let top = rows.first().map_or(0.0, |r| r.2 - r.1);
    let growing: Vec<String> = rows
        .iter()
        .take_while(|r| r.2 - r.1 > CONTRADICTED_GROWTH)
        .take(4)
        .map(named)
        .collect();
    if top >= SHOWN_GROWTH {
        part(Outcome::Shown, format!("{} {tail}", growing.join(", ")))
    } else if top <= CONTRADICTED_GROWTH {
        let largest = rows.first().map_or("none".to_owned(), named);
        part(
            Outcome::Contradicted,
            format!(
                "no server function's share grows by more than {:.0} points (largest: {largest}) {tail}",
                100.0 * CONTRADICTED_GROWTH
            ),
        )
    } else {
        part(
            Outcome::Inconclusive,
            format!(
                "the largest growth is under {:.0} points: {} {tail}",
                100.0 * SHOWN_GROWTH,
                growing.join(", ")
            ),
        )
    }
}

/// Which server's profiles part (d) reads.
pub struct Profiled<'a> {
    /// The scenario file.
    pub file: &'a str,
    /// The variant.
    pub variant: &'a str,
    /// The server, in words.
    pub server: &'a str,
    /// Its stacks' root frames.
    pub roots: &'a [&'a str],
    /// The part's sentence.
    pub claim: &'a str,
}

/// The profiled cells on the most CPUs: at 1 thread and at the most threads.
fn profiled<'a>(
    run: &Run<'a>,
    q: &Profiled<'_>,
) -> Option<(usize, Option<&'a RunRecord>, Option<&'a RunRecord>)> {
    let cells: Vec<&RunRecord> = run
        .of_file(q.file)
        .into_iter()
        .filter(|c| c.variant == q.variant)
        .collect();
    let cores = cells.iter().map(|c| c.cores).max()?;
    let with = |c: &&RunRecord| c.cores == cores && c.profile.is_some();
    let one = cells.iter().copied().filter(with).find(|c| c.threads == 1);
    let most = cells
        .iter()
        .copied()
        .filter(with)
        .filter(|c| c.threads > 1)
        .max_by_key(|c| c.threads);
    Some((cores, one, most))
}

/// Part (d) for `run`; folded paths are relative to the current directory (the project
/// root when `lab report` runs).
pub fn where_time_goes(run: &Run<'_>, q: &Profiled<'_>) -> Part {
    let part = |why: String| Part::other(WHERE_TIME_GOES, q.claim, Outcome::Inconclusive, why);
    let Some((cores, one, most)) = profiled(run, q) else {
        return part(format!("the run has no {} cell", q.server));
    };
    let (Some(one), Some(most)) = (one, most) else {
        return part(format!(
            "the run has no profile of {} at 1 thread and at more threads on {cores} CPU(s) (profile=false, or profiles left out for the budget)",
            q.server
        ));
    };
    let read = |r: &RunRecord| {
        let path = &r.profile.as_ref().expect("profiled").folded;
        std::fs::read_to_string(path)
            .map(|t| Shares::of_folded(&t, q.roots))
            .map_err(|e| format!("cannot read the profile {path}: {e}"))
    };
    match (read(one), read(most)) {
        (Ok(a), Ok(b)) => judge(&a, &b, (most.threads, cores), q.roots, q.claim),
        (Err(e), _) | (_, Err(e)) => part(e),
    }
}
