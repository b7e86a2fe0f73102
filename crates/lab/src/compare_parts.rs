//! `lab compare`'s second half: the findings' parts of two runs side by side, so that two
//! runs of one commit can be checked to give the same verdicts (each part's outcome in
//! both, and those decided differently). Each run's parts are its own pairs, judged as its
//! report judges them (every hot path's `answer`), so two machines' runs may be set side
//! by side here even where their cells may not be compared.
//!
//! Not here: the cells' regression gate (`compare`); nothing here changes the exit status.

use crate::results::ResultsFile;
use verdict::decide::{Outcome, Part};
use verdict::findings::{Finding, Run, Verdict};

use crate::catalog;

/// Each hot path's verdict and parts in `results`, in catalog order.
pub fn of(results: &ResultsFile) -> Vec<(String, Verdict, Vec<Part>)> {
    let mut out = Vec::new();
    for h in catalog::questions() {
        if !results.cells.iter().any(|c| c.hot_path == h.name()) {
            continue;
        }
        let own = crate::report::findings::own_parts(results, h.name());
        let run = Run {
            cells: &results.cells,
            seeds: &results.seeds,
            comparisons: &own,
        };
        if let Some(answer) = (h.answer)(&run) {
            // The verdict as the report gives it (`Finding::new`: deciding parts only),
            // so that `lab compare` and the report never disagree.
            let finding = Finding::new(h.name(), h.words, answer);
            out.push((h.name().to_owned(), finding.verdict, finding.parts));
        }
    }
    out
}

/// The lines `lab compare` prints for the parts of `base` and `new`: one per hot path
/// with both verdicts, one per part with both outcomes, and a total.
pub fn lines(base: &ResultsFile, new: &ResultsFile) -> Vec<String> {
    let (b, n) = (of(base), of(new));
    let mut out = Vec::new();
    let (mut both, mut same, mut differ, mut one) = (0, 0, 0, 0);
    for (hot_path, nv, nparts) in &n {
        let Some((_, bv, bparts)) = b.iter().find(|(h, _, _)| h == hot_path) else {
            continue;
        };
        out.push(format!(
            "{hot_path}: verdict {} -> {}{}",
            bv.word(),
            nv.word(),
            if bv == nv { "" } else { "  (verdict differs)" }
        ));
        for p in nparts {
            let Some(q) = bparts.iter().find(|q| q.name == p.name) else {
                continue;
            };
            both += 1;
            let decided = |o: Outcome| o != Outcome::Inconclusive;
            let mark = match (decided(q.outcome), decided(p.outcome)) {
                _ if q.outcome == p.outcome => {
                    same += 1;
                    ""
                }
                (true, true) => {
                    differ += 1;
                    "  DECIDED DIFFERENTLY"
                }
                _ => {
                    one += 1;
                    "  (decided in one run only)"
                }
            };
            out.push(format!("  {:<28} {} -> {}{mark}", p.name, text(q), text(p)));
        }
    }
    if both > 0 {
        out.push(format!(
            "parts: {both} in both runs: {same} with the same outcome, {differ} decided differently, {one} decided in one run only"
        ));
    }
    out
}

/// "shown 1.93x [1.85-2.01] (32 pairs)", or the outcome alone.
fn text(p: &Part) -> String {
    match (p.ratio, p.low, p.high) {
        (Some(r), Some(l), Some(h)) => format!(
            "{} {r:.3}x [{l:.3}-{h:.3}] ({} pairs)",
            p.outcome.word(),
            p.pairs
        ),
        _ => p.outcome.word().to_owned(),
    }
}
