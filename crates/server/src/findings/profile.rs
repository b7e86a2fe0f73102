//! Part (d), where the time goes: the server functions whose share of the server's own
//! on-CPU samples grows most from 1 thread to the most threads, from the folded stacks of
//! the two profiled cells on the most CPUs, against a noise floor: what two profiles of
//! the same cell differ by (each of the two cells is profiled twice).
//!
//! The folded stacks of a cell hold the lab's own clients too (rooted at the cell frame
//! `<hot path>/<variant>` and the lab's thread names); only stacks rooted at one of the
//! server's thread names (perf's comm, which many servers do not rename: `ns-slapd`,
//! `nginx`, `memcached`) are the server's. A function's share is inclusive: the share of
//! the server's samples whose stack holds it, so exported library functions count even
//! where the leaf above them is `[unknown]` (a server without debug symbols). Not here:
//! off-CPU time (drawn by `lab` from the scheduler, not judged here), pairs, wording of
//! the other parts.

use std::collections::{BTreeMap, BTreeSet};

use harness::CellRecord;
use verdict::decide::{Outcome, Part};
use verdict::findings::Run;

use super::claims::WHERE_TIME_GOES;
/// A frame perf could not name.
pub const UNKNOWN: &str = "[unknown]";
/// Growth of a function's share, in points of the server's samples, that a profile
/// reader would act on: below it a growth is not shown even when it clears the noise
/// floor, and a floor at or above it leaves the part without the power to contradict.
pub const SHOWN_GROWTH: f64 = 0.05;
/// Growth within 2 points is no shift, whatever the floor.
pub const CONTRADICTED_GROWTH: f64 = 0.02;
/// Fewer server samples than this in any profile give shares too coarse to compare.
pub const MIN_SAMPLES: u64 = 200;
/// Profiles each side needs: two at one thread count give the noise floor.
pub const PROFILES_PER_SIDE: usize = 2;

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

    /// Several profiles of one cell as one: their samples summed.
    pub fn pooled(profiles: &[Shares]) -> Shares {
        let mut s = Shares::default();
        for p in profiles {
            s.samples += p.samples;
            s.unresolved += p.unresolved;
            s.other += p.other;
            for (f, n) in &p.by_function {
                *s.by_function.entry(f.clone()).or_default() += n;
            }
        }
        s
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

/// The noise floor: the largest difference in any function's share between two profiles
/// of the same cell, over every such pair of `sides`, with the function and the thread
/// count of its side; `None` where no side has two profiles.
pub fn noise_floor(sides: &[(&[Shares], usize)]) -> Option<(f64, String, usize)> {
    let mut floor: Option<(f64, String, usize)> = None;
    for (profiles, threads) in sides {
        for (i, a) in profiles.iter().enumerate() {
            for b in &profiles[i + 1..] {
                for (f, x, y) in growth(a, b) {
                    if floor.as_ref().is_none_or(|m| (y - x).abs() > m.0) {
                        floor = Some(((y - x).abs(), f, *threads));
                    }
                }
            }
        }
    }
    floor
}

/// The part from the profiles at 1 thread (`one`) and at `most_threads` (`most`) on
/// `cores` CPUs, for a server whose stacks are rooted at `roots`; `claim` is the part's
/// sentence.
///
/// The rule: each side's profiles are pooled and a function's growth is its pooled share
/// at the most threads less at 1 thread. The noise floor is the largest difference in any
/// function's share between two profiles of the same cell ([`noise_floor`]). Why that
/// floor: if threads changed nothing, the four profiles would be alike, and a difference of
/// two pooled pairs varies about half as much (in variance) as a difference of two single
/// profiles, so the floor, a maximum over every function of both sides, is what noise makes
/// of the growth at its worst, run-to-run variation included (each profile is its own
/// child run). Shown: the largest growth clears the floor and is at least
/// [`SHOWN_GROWTH`]. Contradicted: it does not clear the floor (or is within
/// [`CONTRADICTED_GROWTH`]) and the floor is under [`SHOWN_GROWTH`], so a shift a reader
/// would act on would have shown. Otherwise inconclusive, with the floor in the reason;
/// and so with fewer than [`PROFILES_PER_SIDE`] profiles a side.
pub fn judge(
    one: &[Shares],
    most: &[Shares],
    (most_threads, cores): (usize, usize),
    roots: &[&str],
    claim: &str,
) -> Part {
    let part = |o, why: String| Part::other(WHERE_TIME_GOES, claim, o, why);
    let roots_text = roots.join("`, `");
    for (side, t) in [(one, 1), (most, most_threads)] {
        for s in side {
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
    }
    let (a, b) = (Shares::pooled(one), Shares::pooled(most));
    let rows = growth(&a, &b);
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
        "from 1 to {most_threads} threads on {cores} CPU(s), of the server's on-CPU samples ({} and {} in {} and {} profile(s); the lab's client's stacks left out); unresolved (`[unknown]` innermost frame, no debug symbols): {} and {}",
        a.samples,
        b.samples,
        one.len(),
        most.len(),
        pct(a.unresolved_share()),
        pct(b.unresolved_share())
    );
    let top = rows.first().map_or(0.0, |r| r.2 - r.1);
    let largest = rows.first().map_or("none".to_owned(), named);
    if one.len() < PROFILES_PER_SIDE || most.len() < PROFILES_PER_SIDE {
        return part(
            Outcome::Inconclusive,
            format!(
                "no noise floor: {} profile(s) at 1 thread and {} at {most_threads}, and the floor needs {PROFILES_PER_SIDE} at each (the plan's repeat profile left out for the budget, or an older run); largest growth {largest} {tail}",
                one.len(),
                most.len()
            ),
        );
    }
    let (floor, f_name, f_threads) =
        noise_floor(&[(one, 1), (most, most_threads)]).expect("two profiles a side");
    let floor_text = format!(
        "noise floor {:.1} points (`{f_name}` between two profiles at {f_threads} thread(s))",
        100.0 * floor
    );
    let growing: Vec<String> = rows
        .iter()
        .take_while(|r| r.2 - r.1 > floor.max(CONTRADICTED_GROWTH))
        .take(4)
        .map(named)
        .collect();
    if top > floor && top >= SHOWN_GROWTH {
        part(
            Outcome::Shown,
            format!("{} over a {floor_text} {tail}", growing.join(", ")),
        )
    } else if (top <= floor || top <= CONTRADICTED_GROWTH) && floor < SHOWN_GROWTH {
        part(
            Outcome::Contradicted,
            format!(
                "no server function's share grows beyond the {floor_text} (largest: {largest}) {tail}"
            ),
        )
    } else if top > floor {
        part(
            Outcome::Inconclusive,
            format!(
                "the growth clears the {floor_text} but is under {:.0} points: {largest} {tail}",
                100.0 * SHOWN_GROWTH
            ),
        )
    } else {
        part(
            Outcome::Inconclusive,
            format!(
                "the {floor_text} is {:.0} points or more, too wide to tell a shift from noise (largest growth {largest}) {tail}",
                100.0 * SHOWN_GROWTH
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
) -> Option<(usize, Option<&'a CellRecord>, Option<&'a CellRecord>)> {
    let cells: Vec<&CellRecord> = run
        .of_file(q.file)
        .into_iter()
        .filter(|c| c.variant == q.variant)
        .collect();
    let cores = cells.iter().map(|c| c.cores).max()?;
    let with = |c: &&CellRecord| c.cores == cores && c.profile.is_some();
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
    // Every profile of the cell: the first and its repeats.
    let read = |r: &CellRecord| -> Result<Vec<Shares>, String> {
        let p = r.profile.as_ref().expect("profiled");
        std::iter::once(&p.folded)
            .chain(&p.repeats)
            .map(|path| {
                std::fs::read_to_string(path)
                    .map(|t| Shares::of_folded(&t, q.roots))
                    .map_err(|e| format!("cannot read the profile {path}: {e}"))
            })
            .collect()
    };
    match (read(one), read(most)) {
        (Ok(a), Ok(b)) => judge(&a, &b, (most.threads, cores), q.roots, q.claim),
        (Err(e), _) | (_, Err(e)) => part(e),
    }
}
