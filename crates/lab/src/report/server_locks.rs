//! The locks inside a real server, from the lock library (`locks=true`, issue 52): per
//! variant and core count, the locks that waited most at the most threads, beside what
//! they did at the fewest threads, and by how much their wait grew. That is where a
//! reader looks for the lock a server's scaling runs into; the delay experiment
//! (`limiting_lock`) is what proves it.
//!
//! The figures are the library's, as the records' `extra.locks` keep them
//! (`launcher::locks::LockRow`); this only picks the rows and computes the growth. Not
//! here: the lab's own lock table of in-process hot paths (`locks`).

use launcher::locks::LockRow;

use super::markup::{nanos, Attrs, Block, Cell, Row, Table};
use super::Group;
use crate::words::si;

/// Locks shown per variant and core count.
const SHOWN: usize = 5;

const EXPLAIN: &str = "Each row is a class of the server's pthread locks, named by its symbol \
    where the binary exports one (else object+offset) or, for a lock on the heap, by the two \
    frames that first took it; \"waits from\" names the two call sites most of its waits came \
    from, with their share of the sampled waits. Wait is summed over threads: 1000 ms/s is one thread waiting \
    all the time. A lock that idle workers wait on (a work queue's) waits without limiting; \
    the delay experiment (`limiting_lock`) tells them apart.";

/// The rows of the section for one variant and core count: each shown lock at the
/// fewest-threads and the most-threads cell (`None` where it did not appear there).
pub struct Growth {
    /// Variant.
    pub variant: String,
    /// Core count.
    pub cores: usize,
    /// The fewest and the most threads measured under the library.
    pub threads: (usize, usize),
    /// Per lock: at the fewest threads, at the most.
    pub locks: Vec<(Option<LockRow>, LockRow)>,
}

/// Per variant and core count with two or more usable cells under the library, the
/// [`SHOWN`] locks that waited most at the most threads, with their rows at the fewest.
pub fn growth(g: &Group<'_>) -> Vec<Growth> {
    let mut out = Vec::new();
    for variant in &g.variants {
        for &cores in &g.cores {
            let cells: Vec<(usize, Vec<LockRow>)> = g
                .threads
                .iter()
                .filter_map(|&t| g.cell(variant, t, cores))
                .filter(|c| c.usable())
                .map(|c| (c.threads, LockRow::of_record(c)))
                .filter(|(_, rows)| !rows.is_empty())
                .collect();
            let (Some(few), Some(most)) = (cells.first(), cells.last()) else {
                continue;
            };
            let locks = most
                .1
                .iter()
                .take(SHOWN)
                .map(|row| {
                    let before = few
                        .1
                        .iter()
                        .find(|r| r.name == row.name && r.site == row.site);
                    (before.cloned(), row.clone())
                })
                .collect();
            out.push(Growth {
                variant: variant.clone(),
                cores,
                threads: (few.0, most.0),
                locks,
            });
        }
    }
    out
}

/// The section: a heading, how to read it and a table per variant and core count;
/// nothing when no cell ran under the lock library.
pub fn section(g: &Group<'_>) -> Vec<Block> {
    let all = growth(g);
    if all.is_empty() {
        return Vec::new();
    }
    let mut out = vec![
        Block::heading(4, "Locks inside the server"),
        Block::note(EXPLAIN),
    ];
    let sampling = g
        .cells
        .iter()
        .find_map(|c| c.extra.get("locks_sampling").and_then(|v| v.as_str()));
    out.extend(sampling.map(|s| Block::note(format!("Measured: {s}."))));
    for gr in &all {
        let (few, most) = gr.threads;
        let head = [
            format!("{} · {} cores: lock", gr.variant, gr.cores),
            "where taken".into(),
            format!("waits from, {most} threads"),
            format!("wait ms/s, {few} threads"),
            format!("wait ms/s, {most} threads"),
            "wait grew".into(),
            format!("waits/s, {most} threads"),
            format!("acquisitions/s, {most} threads"),
            format!("hold, {few} threads"),
            format!("hold, {most} threads"),
        ];
        let rows = gr
            .locks
            .iter()
            .map(|(before, now)| {
                let wait_before = before.as_ref().map_or(0.0, |b| b.wait_ms_per_s);
                let hold = |r: Option<&LockRow>| {
                    r.and_then(|r| r.hold_ns)
                        .map_or_else(|| "-".to_owned(), nanos)
                };
                Row::from(
                    [
                        lock_name(now),
                        where_taken(now),
                        waits_from(now),
                        before
                            .as_ref()
                            .map_or_else(|| "-".to_owned(), |b| ms(b.wait_ms_per_s)),
                        ms(now.wait_ms_per_s),
                        grew(wait_before, now.wait_ms_per_s),
                        si(now.waits_per_s),
                        si(now.acquisitions_per_s),
                        hold(before.as_ref()),
                        hold(Some(now)),
                    ]
                    .into_iter()
                    .map(Cell::of)
                    .collect::<Vec<_>>(),
                )
            })
            .collect();
        out.push(Block::Table(Table {
            attrs: Attrs::class("server-locks"),
            head: head.into_iter().map(Cell::head).collect(),
            rows,
        }));
    }
    out
}

/// A heap lock's name already says its kind (`mutex in f < g`); a static one's does not.
fn lock_name(r: &LockRow) -> String {
    if r.name.starts_with(r.kind) {
        r.name.clone()
    } else {
        format!("{} ({})", r.name, r.kind)
    }
}

/// The site, unless the name is made of it (a heap lock's).
fn where_taken(r: &LockRow) -> String {
    if r.name.ends_with(&r.site) {
        "(in its name)".into()
    } else {
        r.site.clone()
    }
}

/// The two call sites most of its sampled waits came from, with their shares.
fn waits_from(r: &LockRow) -> String {
    if r.wait_sites.is_empty() {
        return "-".into();
    }
    r.wait_sites
        .iter()
        .take(2)
        .map(|(site, share)| format!("{site} ({:.0}%)", share * 100.0))
        .collect::<Vec<_>>()
        .join("; ")
}

fn ms(v: f64) -> String {
    if v >= 10.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    }
}

/// How much a wait grew, as a ratio, or that it was not there (or was nothing) before.
fn grew(before: f64, now: f64) -> String {
    if before > 0.0 {
        let x = now / before;
        if x >= 100.0 {
            format!("{}x", si(x))
        } else {
            format!("{x:.1}x")
        }
    } else if now > 0.0 {
        "new".into()
    } else {
        "-".into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use harness::CellRecord;

    use super::super::markup::{Format, Markdown};

    fn row(name: &str, wait: f64) -> LockRow {
        LockRow {
            name: name.into(),
            site: "f < g".into(),
            kind: "mutex",
            objects: 1,
            waits_per_s: wait * 10.0,
            wait_ms_per_s: wait,
            acquisitions_per_s: 1e4,
            hold_ns: Some(500.0),
            wait_sites: vec![("f < g".into(), 0.9)],
        }
    }

    fn cell(threads: usize, rows: &[LockRow]) -> CellRecord {
        let mut r = harness::testing::synthetic_cell(
            "ldap",
            "389ds",
            "389-ds",
            &[],
            threads,
            1,
            1e4,
            0.0,
            1,
        );
        if !rows.is_empty() {
            launcher::locks::keep(&mut r.extra, rows);
        }
        r
    }

    #[test]
    fn the_most_threads_rank_the_locks_and_the_fewest_show_what_grew() {
        let few = cell(1, &[row("queue", 2.0), row("cache", 1.0)]);
        let mid = cell(4, &[row("other", 900.0)]);
        let most = cell(
            16,
            &[row("cache", 40.0), row("table", 30.0), row("queue", 1.0)],
        );
        let source = super::super::Source::of_cells(vec![few, mid, most]);
        let groups = super::super::group::group_cells(&source, 0);
        let g = &groups[0];
        let all = growth(g);
        assert_eq!(all.len(), 1);
        let gr = &all[0];
        assert_eq!(gr.threads, (1, 16));
        let names: Vec<&str> = gr.locks.iter().map(|(_, r)| r.name.as_str()).collect();
        assert_eq!(names, ["cache", "table", "queue"]);
        assert_eq!(gr.locks[1].0, None);
        let md = Markdown.blocks(&section(g));
        assert!(
            md.contains("| cache (mutex) | f < g | f < g (90%) | 1.00 | 40 | 40.0x |"),
            "{md}"
        );
        assert!(
            md.contains("| table (mutex) | f < g | f < g (90%) | - | 30 | new |"),
            "{md}"
        );
        assert!(
            md.contains("| queue (mutex) | f < g | f < g (90%) | 2.00 | 1.00 | 0.5x |"),
            "{md}"
        );
    }

    #[test]
    fn a_group_without_the_library_has_no_section() {
        let source = super::super::Source::of_cells(vec![cell(1, &[]), cell(16, &[])]);
        let groups = super::super::group::group_cells(&source, 0);
        assert!(section(&groups[0]).is_empty());
    }
}
