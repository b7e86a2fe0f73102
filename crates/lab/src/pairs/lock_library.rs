//! What the lock library costs a real server, as parts of the lab's own (issue 52): with
//! `locks=true`, the same cell with its server under the library against the same cell
//! without it, as pairs, at the fewest and at the most threads the question compares.
//!
//! Why pairs and not a figure per acquisition, as the lab's own lock table states its
//! cost: the library's cost is the server's (a trylock and a counter per acquisition, two
//! clock reads per wait, a stack walk per new lock), and where it lands (a hot lock held a
//! little longer, a cache line more) is what only the server's throughput can say. Each
//! is a size (no verdict rests on it), shown beside the question's parts, within 5% or
//! saying how much; each side's server starts in a child of its own, since the preload is
//! the process's.
//!
//! Not here: the library (`launcher::locks`), running the pairs (`pairs`).

use verdict::decide::{CellRef, Claim, Comparison, Measured, Rule, Side};

use super::super::plan::parts::{cell_ref, position};
use crate::plan::CellSpec;

pub use crate::results::{LOCK_LIBRARY_COST, LOCK_LIBRARY_COST_FEWEST};

/// Shown (the library costs at most 5%) when the interval lies within 0.95-1.05 of the
/// server's throughput without it; contradicted when it lies wholly outside.
pub const RULE: Rule = Rule::Within {
    low: 0.95,
    high: 1.05,
};

const CLAIM: &str = "the lock library costs the server at most 5% of its throughput \
                     (with it against without it)";

/// The two parts, where any of `claims` is decided by pairs and their cells run under the
/// library: on the most and on the fewest threaded of their cells (the most cores, then
/// the first), each against itself until [`resolve`] adds the cell without the library.
pub fn declare(claims: &[Claim], cells: &[CellSpec<'_>], refs: &[CellRef]) -> Vec<Claim> {
    let compared: Vec<usize> = claims
        .iter()
        .filter(|c| !c.placebo)
        .filter_map(|c| c.comparison.as_ref())
        .flat_map(|c| c.cells())
        .filter_map(|r| position(r, refs))
        .filter(|&i| cells[i].file.lock_library && cells[i].lock_delay.is_none())
        .collect();
    let key = |&i: &usize| (cells[i].threads, cells[i].cores, usize::MAX - i);
    let most = compared.iter().copied().max_by_key(key);
    let fewest = compared
        .iter()
        .copied()
        .min_by_key(|&i| (cells[i].threads, usize::MAX - cells[i].cores, i));
    let mut out = Vec::new();
    for (part, i) in [
        (LOCK_LIBRARY_COST, most),
        (LOCK_LIBRARY_COST_FEWEST, fewest),
    ] {
        let Some(i) = i else { continue };
        if part == LOCK_LIBRARY_COST_FEWEST
            && Some(cells[i].threads) == most.map(|m| cells[m].threads)
        {
            continue;
        }
        let side = || Side::cell(refs[i].clone());
        let mut claim =
            Claim::decided_by(part, CLAIM, Comparison::throughput(side(), side(), RULE));
        claim.size_only = true;
        out.push(claim);
    }
    out
}

/// Before the pairs: each cost part of `parts` gets its other side, the same cell with its
/// server started without the library (a resumed run's parts have it already). Returns
/// the cells their pairs need beyond `cells`, which the caller appends: the parts' sides
/// name them.
pub fn resolve<'a>(parts: &mut [Measured], cells: &[CellSpec<'a>]) -> Vec<CellSpec<'a>> {
    let refs: Vec<CellRef> = cells.iter().map(cell_ref).collect();
    let mut extra: Vec<CellSpec<'a>> = Vec::new();
    for m in parts.iter_mut() {
        if m.claim.part != LOCK_LIBRARY_COST && m.claim.part != LOCK_LIBRARY_COST_FEWEST {
            continue;
        }
        let Some(comparison) = m.claim.comparison.as_mut() else {
            continue;
        };
        let Some(i) = position(&comparison.a.cell, &refs) else {
            continue;
        };
        let without = CellSpec {
            without_lock_library: true,
            ..cells[i].clone()
        };
        let b = cell_ref(&without);
        if comparison.b.cell != b {
            m.claim.claim = format!("{CLAIM}: {}", refs[i].text());
            *comparison = Comparison::throughput(Side::cell(refs[i].clone()), Side::cell(b), RULE);
        }
        if !extra.iter().any(|e| cell_ref(e) == cell_ref(&without)) {
            extra.push(without);
        }
    }
    extra
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{MatrixPlan, Settings};

    fn plan(locks: &str) -> MatrixPlan {
        let args: Vec<String> = ["scenarios=server-tiny", "threads=1,2,4,8", "cores=1", locks]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        MatrixPlan::build(&Settings::parse(&args).unwrap(), &root).unwrap()
    }

    #[test]
    fn with_the_library_its_cost_is_asked_at_the_fewest_and_most_threads_against_a_cell_without_it()
    {
        let plan = plan("locks=true");
        let cells = plan.cells();
        let mut parts = crate::pairs::declare(&plan, &cells);
        let cost =
            |parts: &[Measured], name: &str| parts.iter().find(|m| m.claim.part == name).cloned();
        let most = cost(&parts, LOCK_LIBRARY_COST).expect("declared");
        let fewest = cost(&parts, LOCK_LIBRARY_COST_FEWEST).expect("declared");
        assert!(most.claim.size_only && fewest.claim.size_only);
        let threads = |m: &Measured| m.claim.comparison.as_ref().unwrap().a.cell.threads;
        assert_eq!((threads(&fewest), threads(&most)), (1, 8));

        let extra = resolve(&mut parts, &cells);
        assert_eq!(extra.len(), 2);
        for e in &extra {
            assert!(e.without_lock_library && e.file.lock_library);
            let request = e.request(e.file.duration, None);
            assert!(
                !request.lock_library,
                "its server starts without the library"
            );
            assert!(
                cells.iter().all(|c| cell_ref(c) != cell_ref(e)),
                "a cell of its own"
            );
        }
        let most = cost(&parts, LOCK_LIBRARY_COST).unwrap();
        let c = most.claim.comparison.as_ref().unwrap();
        assert_eq!(c.a.cell.params.get("lock_library"), None);
        assert_eq!(c.b.cell.params.get("lock_library"), Some(&"off".into()));
        assert_eq!((c.a.cell.threads, c.b.cell.threads), (8, 8));
        // Resolving again (a resumed run) adds the same cells and keeps the sides.
        let again = resolve(&mut parts, &cells);
        assert_eq!(again.len(), 2);
        assert_eq!(cost(&parts, LOCK_LIBRARY_COST).unwrap().claim, most.claim);
    }

    #[test]
    fn without_the_library_nothing_is_asked() {
        for locks in ["locks=on", "locks=off"] {
            let plan = plan(locks);
            let cells = plan.cells();
            let parts = crate::pairs::declare(&plan, &cells);
            assert!(
                parts.iter().all(|m| !crate::results::LAB_PARTS[1..]
                    .contains(&m.claim.part.as_str())
                    && m.claim.part != crate::pairs::lock_delay::LIMITING_LOCK),
                "{locks}"
            );
        }
    }
}
