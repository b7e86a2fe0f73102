//! The delay experiment as a part of the lab's own, `limiting_lock` (issue 52): does the
//! busiest lock of one holder that a hot path names limit its throughput?
//!
//! A lock table names each lock with its hold and its ceiling, but a busy lock is not
//! proof that it limits. The experiment spends a known delay (one mean hold) in every hold
//! of that lock, just before its release, and, on the other side of each pair, the same
//! delay just after the release: the same CPU time either way, so only the lock tells the
//! two sides apart. Where the lock limits, the inside side falls towards 1 / (hold +
//! delay) while the outside side keeps its throughput; where it does not, the two sides
//! run alike. Shown when the inside side keeps at most 0.9 of the outside side's
//! throughput, contradicted at 0.95 and above.
//!
//! Like the placebo it is the lab's, declared for every hot path whose locks of one holder
//! are all taken through `OpCtx::lock` (`HotPath::guards_locks`), and with `locks=true` for
//! every hot path whose real server runs under the lock library (`HotPath::preloads_locks`:
//! the server's mutexes from `extra.locks`, the delay spent by the library, each side's
//! server in a child of its own), weighed as a size (no
//! verdict rests on it) and shown beside the question's parts. Which lock, how long a
//! delay and on which cell are known only after the rounds (the lock table is a
//! measurement), so the plan declares it on the hot path's most threaded compared cell
//! against itself (what the budget costs) and [`resolve`] moves it after the rounds.
//!
//! Not here: the switch that spends the delay (`harness::locks::delay`), running the
//! pairs (`pairs`).

use harness::locks::delay::{Delay, Place};
use harness::CellRecord;
use verdict::decide::{CellRef, Claim, Comparison, Measured, Rule, Side};

use super::super::plan::parts::{cell_ref, position};
use crate::plan::CellSpec;

pub use crate::results::LIMITING_LOCK;

/// Shown at 0.9 and below (the lock costs the inside side a tenth or more of the outside
/// side's throughput), contradicted at 0.95 and above (they run alike: two identical
/// sides' pairs here, sd 0.1 of their log ratio, narrow to +-5% within 64 pairs, not to
/// +-3%).
pub const RULE: Rule = Rule::Below {
    shown: 0.9,
    contradicted: 0.95,
};

const CLAIM: &str = "the busiest lock of one holder limits throughput: the same delay \
                     spent inside it costs at least 10% more than spent just after its release";

/// The part as the plan declares it, where any of `claims` is decided by pairs: on the
/// most threaded of their cells (the most cores, then the first), against itself, until
/// [`resolve`] moves it to the lock the rounds found busiest.
pub fn declare(claims: &[Claim], cells: &[CellSpec<'_>], refs: &[CellRef]) -> Option<Claim> {
    let i = claims
        .iter()
        .filter(|c| !c.placebo)
        .filter_map(|c| c.comparison.as_ref())
        .flat_map(|c| c.cells())
        .filter_map(|r| position(r, refs))
        .max_by_key(|&i| (cells[i].threads, cells[i].cores, usize::MAX - i))?;
    let side = || Side::cell(refs[i].clone());
    let mut claim = Claim::decided_by(
        LIMITING_LOCK,
        CLAIM,
        Comparison::throughput(side(), side(), RULE),
    );
    claim.size_only = true;
    Some(claim)
}

/// After the rounds: each `limiting_lock` part of `parts` not yet measured is moved to the
/// hot path's cell whose lock of one holder was the most used in `records` (its
/// utilization), with a delay of that lock's mean hold, inside against outside; or says
/// why it cannot be asked. Returns the cells its pairs need beyond `cells` (the plan's),
/// which the caller appends in this order: the parts' sides name them.
pub fn resolve<'a>(
    parts: &mut [Measured],
    cells: &[CellSpec<'a>],
    records: &[CellRecord],
) -> Vec<CellSpec<'a>> {
    let mut extra: Vec<CellSpec<'a>> = Vec::new();
    for m in parts.iter_mut() {
        if m.claim.part != LIMITING_LOCK || !m.pairs.is_empty() {
            continue;
        }
        let resolved = busiest(&m.claim.hot_path, records).and_then(|(r, lock, hold, use_)| {
            let i = cells
                .iter()
                .position(|c| c.lock_delay.is_none() && cell_ref(c).matches_record(r))?;
            Some((i, lock, hold, use_))
        });
        let Some((i, lock, hold, utilization)) = resolved else {
            m.claim.comparison = None;
            m.claim.missing = "no cell of this hot path sampled a lock of one holder".into();
            continue;
        };
        let ns = hold.round().max(1.0) as u64;
        let delayed = |place| CellSpec {
            lock_delay: Some(Delay {
                lock: lock.clone(),
                ns,
                place,
            }),
            ..cells[i].clone()
        };
        let (inside, outside) = (delayed(Place::Inside), delayed(Place::Outside));
        // Where the lock limits, the inside side runs at 1 / (hold + delay) = 1 / (2 hold)
        // and the outside side at what the cell did, utilization / hold.
        let predicted = (1.0 / (2.0 * utilization)).min(1.0);
        m.claim.claim = format!(
            "{CLAIM}: `{lock}` on {} (utilization {utilization:.2}, hold {ns} ns), {ns} ns \
             added; predicted {predicted:.2} where it limits, 1.0 where it does not",
            cell_ref(&cells[i]).text()
        );
        m.claim.comparison = Some(Comparison::throughput(
            Side::cell(cell_ref(&inside)),
            Side::cell(cell_ref(&outside)),
            RULE,
        ));
        m.claim.missing.clear();
        extra.push(inside);
        extra.push(outside);
    }
    extra
}

/// The record of `hot_path` among `records` (usable ones) whose lock of one holder was the
/// most used, with that lock's name, mean hold in ns and utilization.
fn busiest<'r>(
    hot_path: &str,
    records: &'r [CellRecord],
) -> Option<(&'r CellRecord, String, f64, f64)> {
    // A lock can limit only where two threads can want it at once: on one CPU the holder
    // runs until it is preempted and the CPU is the limit (a default run here chose
    // `global-mutex` at 4 threads on 1 CPU and found, rightly, no limit). Cells with two
    // threads on two CPUs or more come first.
    let contended = |r: &CellRecord| r.threads >= 2 && r.cores >= 2;
    let any = records
        .iter()
        .any(|r| r.hot_path == hot_path && r.usable() && contended(r));
    records
        .iter()
        .filter(|r| r.hot_path == hot_path && r.usable())
        .filter(move |r| !any || contended(r))
        .flat_map(|r| {
            let own = r.locks.iter().flatten().filter_map(move |row| {
                let hold = row.hold_ns.as_ref()?.mean;
                let utilization = row.utilization?;
                (row.slots == Some(1) && hold > 0.0 && utilization > 0.0)
                    .then(|| (r, row.name.clone(), hold, utilization))
            });
            own.chain(server_locks(r))
        })
        .max_by(|a, b| a.3.total_cmp(&b.3))
}

/// A real server's mutexes under the lock library (`extra.locks`), each with its mean
/// hold and utilization per object: the share of the window one object of the class was
/// held, acquisitions times mean hold spread over the class's objects (a class of many
/// objects, a lock per connection, is not one queue). An rwlock admits many readers and
/// is left out, as the lab's own locks of many holders are.
fn server_locks(r: &CellRecord) -> impl Iterator<Item = (&CellRecord, String, f64, f64)> {
    launcher::locks::LockRow::of_record(r)
        .into_iter()
        .filter_map(move |row| {
            let hold = row.hold_ns?;
            let utilization = row.acquisitions_per_s * hold * 1e-9 / row.objects.max(1) as f64;
            (row.kind == "mutex" && hold > 0.0 && utilization > 0.0).then_some((
                r,
                row.name,
                hold,
                utilization,
            ))
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use launcher::locks::LockRow;

    fn server_cell(threads: usize, cores: usize, rows: &[LockRow]) -> CellRecord {
        let mut r = harness::testing::synthetic_cell(
            "ldap",
            "389ds",
            "389-ds",
            &[],
            threads,
            cores,
            1e4,
            0.0,
            1,
        );
        launcher::locks::keep(&mut r.extra, rows);
        r
    }

    fn row(name: &str, kind: &'static str, objects: u64, per_s: f64, hold: f64) -> LockRow {
        LockRow {
            name: name.into(),
            site: "f < g".into(),
            kind,
            objects,
            waits_per_s: 0.0,
            wait_ms_per_s: 0.0,
            acquisitions_per_s: per_s,
            hold_ns: Some(hold),
            wait_sites: Vec::new(),
        }
    }

    #[test]
    fn a_server_s_busiest_mutex_is_its_most_held_object_of_one_holder() {
        let rows = [
            // Held 0.9 of the time, but by readers that share it.
            row("tree", "rwlock", 1, 90_000.0, 10_000.0),
            // 0.8 of the time over 16 objects: 0.05 each.
            row("mutex in conn_new", "mutex", 16, 80_000.0, 10_000.0),
            // 0.3 of the time, one object.
            row("ns-slapd+0x70980", "mutex", 1, 30_000.0, 10_000.0),
        ];
        let records = [
            server_cell(16, 1, &[row("on one cpu", "mutex", 1, 99_000.0, 10_000.0)]),
            server_cell(16, 2, &rows),
        ];
        let (r, name, hold, utilization) = busiest("ldap", &records).unwrap();
        assert_eq!(
            (r.cores, name.as_str(), hold),
            (2, "ns-slapd+0x70980", 10_000.0)
        );
        assert!((utilization - 0.3).abs() < 1e-9, "{utilization}");
        assert!(busiest("lookup", &records).is_none());
    }
}
