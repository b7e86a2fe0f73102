//! What the hot paths' tests of their parts share: pairs made up to give a chosen ratio
//! ([`synthetic_pairs`]), pairs measured for real through a hot path in this process
//! ([`measured_pairs`], [`measured_until_decided`]), a part's control and treatment run
//! through its own comparison ([`expect_outcome`], [`rewrite_cells`]), the conformance
//! check of a registry of parts against a plan and an answer ([`parts_conformance`]), and
//! the check that every deciding part names its two controls ([`controls_conformance`]),
//! and a part looked up by name in claims and answers ([`claim`], [`part`], [`sentence`]).
//!
//! Not here: the pairs `lab matrix` measures (in child processes, under a budget).

use crate::decide::{interval, CellRef, Claim, Measured, Outcome, Part, Planned};
use crate::findings::Answer;
use crate::registry::Registry;
use harness::testing::{params, settings};
use harness::HotPath;

/// The claim of part `name` among `claims`; a test that asks for a part the registry
/// lacks fails there, naming the parts it has.
pub fn claim<'c>(claims: &'c [Claim], name: &str) -> &'c Claim {
    claims.iter().find(|c| c.part == name).unwrap_or_else(|| {
        let names: Vec<&str> = claims.iter().map(|c| c.part.as_str()).collect();
        panic!("no part `{name}` among {names:?}")
    })
}

/// Part `name` of `answer`, failing the test when the answer lacks it.
pub fn part<'a>(answer: &'a Answer, name: &str) -> &'a Part {
    let names: Vec<&str> = answer.parts.iter().map(|p| p.name.as_str()).collect();
    let i = names
        .iter()
        .position(|n| *n == name)
        .unwrap_or_else(|| panic!("the answer has no part `{name}`: {names:?}"));
    &answer.parts[i]
}

/// The sentence `answer` gives part `name`.
pub fn sentence<'a>(answer: &'a Answer, name: &str) -> &'a str {
    let i = answer
        .parts
        .iter()
        .position(|p| p.name == name)
        .unwrap_or_else(|| panic!("the answer has no part `{name}`"));
    &answer.sentences[i]
}

/// `claim` measured as `n` synthetic pairs whose ratio (as the claim's comparison reads
/// it, scale included) is `ratio`, each pair moved by up to `spread` either way in a
/// fixed pattern, while the machine's speed moves every cell of a pair alike: what the
/// hot paths' tests feed their answers to make a part shown, contradicted or
/// inconclusive. No randomness, so a test's outcome is fixed.
pub fn synthetic_pairs(claim: &Claim, ratio: f64, spread: f64, n: usize) -> Measured {
    let (cells, scale) = claim
        .comparison
        .as_ref()
        .map_or((0, 1.0), |c| (c.cells().len(), c.scale));
    let pairs = (0..n)
        .map(|i| {
            let wobble = 1.0 + spread * (((i * 3) % 5) as f64 - 2.0) / 2.0;
            let machine = 1e4 * (1.0 + 0.2 * (i % 4) as f64);
            let mut p = vec![machine; cells];
            if let Some(first) = p.first_mut() {
                *first *= ratio * wobble / scale;
            }
            p
        })
        .collect();
    Measured {
        claim: claim.clone(),
        pairs,
        seconds: 2.0 * n as f64,
        stopped: if n >= 192 { "most pairs" } else { "decided" }.to_owned(),
        slices: 1,
        looks: interval::Looks::All,
        precision: crate::decide::PRECISION,
        busy: Vec::new(),
    }
}

/// `claim` measured for real: `n` pairs, each running every cell of its comparison once
/// through `hot_path` in this process (in order, reversed on odd pairs, as `lab` does),
/// each cell with the hot path's defaults overridden by the cell's parameters, its own
/// threads, `warmup_ms` of warm-up and a `window_ms` window. What a hot path's test uses
/// to run its real workload, small, to a part's outcome (a contradicted one, say) through
/// the same comparison and interval the matrix uses. Panics on a cell that fails or
/// lacks the figure, a mistake in the test.
pub fn measured_pairs(
    hot_path: &dyn HotPath,
    claim: &Claim,
    n: usize,
    warmup_ms: u64,
    window_ms: u64,
) -> Measured {
    Measured {
        claim: claim.clone(),
        pairs: pairs_from(hot_path, claim, 0..n, warmup_ms, window_ms),
        seconds: 0.0,
        stopped: String::new(),
        slices: 1,
        // The strictest level, whatever the part: a test's outcome then holds at any.
        looks: interval::Looks::All,
        precision: crate::decide::PRECISION,
        busy: Vec::new(),
    }
}

/// Pairs `range` of a sequence (the order of the sides alternates with the pair's index).
fn pairs_from(
    hot_path: &dyn HotPath,
    claim: &Claim,
    range: std::ops::Range<usize>,
    warmup_ms: u64,
    window_ms: u64,
) -> Vec<Vec<f64>> {
    let comparison = claim
        .comparison
        .as_ref()
        .expect("a claim with a comparison");
    let cells = comparison.cells();
    let mut pairs = Vec::with_capacity(range.len());
    for i in range {
        let mut figures = vec![0.0; cells.len()];
        let mut order: Vec<usize> = (0..cells.len()).collect();
        if i % 2 == 1 {
            order.reverse();
        }
        for slot in order {
            let cell = cells[slot];
            // The delay experiment's cells carry their delay as a parameter: the switch,
            // not the hot path, reads it.
            let delay = cell.params.get(harness::locks::delay::PARAM).map(|v| {
                harness::locks::delay::Delay::parse(v.as_str().unwrap_or_default())
                    .unwrap_or_else(|e| panic!("{}: {e}", cell.text()))
            });
            harness::locks::delay::set(delay);
            let set: Vec<(String, String)> = cell
                .params
                .iter()
                .filter(|(k, _)| k.as_str() != harness::locks::delay::PARAM)
                .map(|(k, v)| {
                    let text = match v {
                        serde_json::Value::String(s) => s.clone(),
                        v => v.to_string(),
                    };
                    (k.clone(), text)
                })
                .collect();
            let set: Vec<(&str, &str)> =
                set.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
            let params = params(hot_path, &set);
            let m = hot_path
                .measure(
                    &cell.variant,
                    &params,
                    settings(cell.threads, warmup_ms, window_ms),
                )
                .unwrap_or_else(|f| panic!("{}: {}", cell.text(), f.reason));
            harness::locks::delay::set(None);
            let key = harness::schema::CellKey {
                hot_path: hot_path.name().to_owned(),
                variant: cell.variant.clone(),
                params: params.to_map(),
                threads: cell.threads,
                cores: cell.cores,
            };
            let record = harness::Repetition::from_measurement(&key, "", &m).0;
            figures[slot] = comparison.figure_of(&record).unwrap_or_else(|| {
                // An unusable record has no figure: say why it is unusable.
                panic!(
                    "{}: no {} (verify: {:?}, failure: {:?})",
                    cell.text(),
                    comparison.figure,
                    record.verify_error,
                    record.failure
                )
            });
        }
        pairs.push(figures);
    }
    pairs
}

/// `claim` measured for real as [`measured_pairs`] does, a look at a time (9, 16, 24, ...
/// pairs, as `lab` looks) until it decides or `most` pairs are measured: what a test that
/// asks for an outcome uses, so that a noisy window on a shared machine costs more pairs
/// rather than a failed test.
pub fn measured_until_decided(
    hot_path: &dyn HotPath,
    claim: &Claim,
    most: usize,
    warmup_ms: u64,
    window_ms: u64,
) -> Measured {
    // Two tests of one binary measuring at once would each be the other's noise on a
    // small machine: pairs run one test at a time.
    let _one_at_a_time = MEASURING.lock().unwrap_or_else(|e| e.into_inner());
    let mut m = Measured {
        claim: claim.clone(),
        pairs: Vec::new(),
        seconds: 0.0,
        stopped: String::new(),
        slices: 1,
        looks: interval::Looks::All,
        precision: crate::decide::PRECISION,
        busy: Vec::new(),
    };
    while let Some(look) = interval::next_look(m.pairs.len()).filter(|&n| n <= most) {
        let range = m.pairs.len()..look;
        m.pairs
            .extend(pairs_from(hot_path, claim, range, warmup_ms, window_ms));
        if m.outcome() != Outcome::Inconclusive {
            m.stopped = "decided".to_owned();
            break;
        }
    }
    if m.stopped.is_empty() {
        m.stopped = "most pairs".to_owned();
    }
    m
}

/// Held while a test measures pairs ([`measured_until_decided`]).
static MEASURING: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Every cell of `claim`'s comparison (both sides, numerators and denominators) rewritten
/// by `f`: how a control moves a part's own sides to where the seed's cause is absent (or
/// present) while keeping its comparison, figure and rule.
///
/// # Panics
/// When the claim has no comparison, a mistake in the test.
pub fn rewrite_cells(claim: &mut Claim, f: impl Fn(CellRef) -> CellRef) {
    let part = claim.part.clone();
    let cmp = claim
        .comparison
        .as_mut()
        .unwrap_or_else(|| panic!("part `{part}` has no comparison to rewrite"));
    for side in [&mut cmp.a, &mut cmp.b] {
        side.cell = f(side.cell.clone());
        side.per = side.per.take().map(&f);
    }
}

/// `claim` measured for real ([`measured_until_decided`], up to `most` pairs) and checked
/// to come out `expected`; a control's or a treatment's assertion. Returns the pairs for
/// any further check. Panics with the interval and the rule otherwise.
///
/// An inconclusive outcome is measured again, up to [`ATTEMPTS`] times in all: on a
/// shared 2-CPU machine a burst of other work can widen one measurement's interval past
/// a threshold (a CI run here gave `limiting_lock`'s never-taken lock 0.990 [0.948-1.028]
/// over 192 pairs against the rule's 0.95), which says the instrument could not tell, not
/// that it told wrong. The opposite outcome fails at once. The last of [`ATTEMPTS`]
/// inconclusive ones passes only where its ratio lies where `expected` would be decided
/// ([`noise_kept_undecided`]): the host's noise, not the ratio, kept it undecided.
pub fn expect_outcome(
    hot_path: &dyn HotPath,
    claim: &Claim,
    expected: Outcome,
    most: usize,
    warmup_ms: u64,
    window_ms: u64,
) -> Measured {
    let rule = claim.comparison.as_ref().map(|c| c.rule);
    let m = decided_in_attempts(hot_path, claim, expected, most, warmup_ms, window_ms);
    let said = m
        .interval()
        .map_or_else(|| "no interval".to_owned(), |i| i.to_string());
    if m.outcome() != expected && noise_kept_undecided(&m, expected) {
        eprintln!(
            "part `{}`: {said} over {} pairs, undecided in {ATTEMPTS} attempts by this \
             host's noise; its ratio lies where {expected:?} is decided",
            claim.part,
            m.pairs.len()
        );
        return m;
    }
    assert_eq!(
        m.outcome(),
        expected,
        "part `{}`: {said} over {} pairs against {rule:?}",
        claim.part,
        m.pairs.len()
    );
    m
}

/// `claim` measured for real ([`measured_until_decided`], up to `most` pairs), again
/// while it comes out inconclusive and `expected` is not, [`ATTEMPTS`] times at most; the
/// last attempt's pairs. For a control that judges the outcome itself.
pub fn decided_in_attempts(
    hot_path: &dyn HotPath,
    claim: &Claim,
    expected: Outcome,
    most: usize,
    warmup_ms: u64,
    window_ms: u64,
) -> Measured {
    let mut attempt = 1;
    loop {
        let m = measured_until_decided(hot_path, claim, most, warmup_ms, window_ms);
        eprintln!(
            "{}: {} over {} pairs (attempt {attempt})",
            claim.part,
            m.interval()
                .map_or_else(|| "no interval".to_owned(), |i| i.to_string()),
            m.pairs.len()
        );
        if m.outcome() != Outcome::Inconclusive
            || expected == Outcome::Inconclusive
            || attempt == ATTEMPTS
        {
            return m;
        }
        attempt += 1;
    }
}

/// Whether `m` is inconclusive only because its interval is wide: its ratio, taken as an
/// interval of no width, comes out `expected` under its rule. A lab that got the sides
/// wrong by construction moves the ratio itself to the other side of the rule's threshold
/// and is still caught.
pub fn noise_kept_undecided(m: &Measured, expected: Outcome) -> bool {
    let (Some(i), Some(c)) = (m.interval(), m.claim.comparison.as_ref()) else {
        return false;
    };
    m.outcome() == Outcome::Inconclusive
        && expected != Outcome::Inconclusive
        && c.rule.outcome(i.ratio, i.ratio) == expected
}

/// How many times [`expect_outcome`] measures a claim that comes out inconclusive.
pub const ATTEMPTS: usize = 3;

/// Checks that every part of `registry` that decides a verdict names its two controls
/// ([`crate::registry::Controls`]) and that each is a `#[test]` function in `tests` (the
/// crate's test sources, as `include_str!` gives them), and that no part decided
/// otherwise than by pairs (from profiles, say) weighs in a verdict: a verdict rests on
/// paired parts. `Err` lists every part that breaks a rule.
pub fn controls_conformance(registry: &Registry<'_>, tests: &[&str]) -> Result<(), String> {
    let is_test = |name: &str| {
        tests.iter().any(|t| {
            let lines: Vec<&str> = t.lines().map(str::trim).collect();
            lines
                .windows(2)
                .any(|w| w[0] == "#[test]" && w[1].starts_with(&format!("fn {name}(")))
        })
    };
    let mut broken = Vec::new();
    for e in registry.entries() {
        if !e.by_pairs && !e.size_only {
            broken.push(format!(
                "part `{}` is decided otherwise than by pairs: weigh it as a size (`sized`)",
                e.name
            ));
            continue;
        }
        if !e.decides() {
            continue;
        }
        let Some(c) = e.controls else {
            broken.push(format!(
                "part `{}` decides a verdict but names no controls (`controlled`): add the \
                 test that takes its cause away and the one that puts it back, or weigh it as \
                 a size",
                e.name
            ));
            continue;
        };
        for name in [c.contradicted, c.shown] {
            if !is_test(name) {
                broken.push(format!(
                    "part `{}`: its control `{name}` is not a #[test] fn in the sources given",
                    e.name
                ));
            }
        }
    }
    if broken.is_empty() {
        Ok(())
    } else {
        Err(broken.join("\n"))
    }
}

/// Checks a hot path's registry of parts against a plan that holds every part's cells
/// and, where given, the answer to a run of it: the names are well formed (lower case,
/// `_`, `-`, `/`), the claims are the registry's entries in its order, every part
/// decided by pairs finds its sides among the planned cells, and the answer
/// shows every part, none dropped, none added, in the same order. Returns what is wrong.
pub fn parts_conformance(
    registry: &Registry<'_>,
    planned: &Planned<'_>,
    answer: Option<&Answer>,
) -> Result<(), String> {
    let names = registry.names();
    for n in &names {
        let ok = !n.is_empty()
            && n.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "_-/".contains(c));
        if !ok {
            return Err(format!(
                "part name `{n}`: lower case, digits, `_`, `-`, `/` only"
            ));
        }
    }
    let claims = registry.claims(planned);
    let declared: Vec<&str> = claims.iter().map(|c| c.part.as_str()).collect();
    if declared != names {
        return Err(format!(
            "claims {declared:?} are not the registry's {names:?}"
        ));
    }
    for (c, e) in claims.iter().zip(registry.entries()) {
        if !e.by_pairs {
            continue;
        }
        let Some(cmp) = &c.comparison else {
            return Err(format!(
                "part `{}` finds no sides in a plan with all its cells: {}",
                c.part, c.missing
            ));
        };
        for cell in cmp.cells() {
            let planned_cell = planned
                .cells
                .iter()
                .any(|p| cell.matches(&p.file, &p.variant, p.threads, p.cores, &p.params));
            if !planned_cell {
                return Err(format!("part `{}`: {} is not planned", c.part, cell.text()));
            }
        }
    }
    if let Some(a) = answer {
        let shown: Vec<&str> = a.parts.iter().map(|p| p.name.as_str()).collect();
        if shown != names {
            return Err(format!(
                "the answer shows {shown:?}, the registry has {names:?}"
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod pair_tests {
    use crate::decide::{CellRef, Claim, Comparison, Rule, Side};

    #[test]
    fn synthetic_pairs_give_the_asked_ratio_whatever_the_sides() {
        let cell = |v: &str, t: usize| CellRef::new("f", v, t, 2);
        let rule = Rule::Below {
            shown: 0.9,
            contradicted: 0.97,
        };
        for comparison in [
            Comparison::throughput(Side::cell(cell("a", 2)), Side::cell(cell("b", 2)), rule),
            Comparison {
                scale: 0.5,
                ..Comparison::throughput(
                    Side::ratio(cell("a", 2), cell("a", 1)),
                    Side::ratio(cell("b", 2), cell("b", 1)),
                    rule,
                )
            },
        ] {
            let m = super::synthetic_pairs(&Claim::decided_by("p", "c", comparison), 0.7, 0.02, 16);
            let i = m.interval().unwrap();
            assert!((i.ratio - 0.7).abs() < 0.01, "{}", i.ratio);
            assert!(i.low < 0.7 && i.high > 0.7);
        }
    }

    #[test]
    fn only_a_ratio_on_the_expected_side_is_undecided_by_noise() {
        use crate::decide::Outcome::{Contradicted, Inconclusive, Shown};
        let cell = |v: &str| Side::cell(CellRef::new("f", v, 2, 2));
        let rule = Rule::Below {
            shown: 0.9,
            contradicted: 0.97,
        };
        let claim = Claim::decided_by("p", "c", Comparison::throughput(cell("a"), cell("b"), rule));
        let noisy = |ratio| super::synthetic_pairs(&claim, ratio, 0.3, 9);
        // No effect, measured on a noisy host: undecided, its ratio where contradicted is.
        let m = noisy(1.05);
        assert_eq!(m.outcome(), Inconclusive);
        assert!(super::noise_kept_undecided(&m, Contradicted));
        assert!(!super::noise_kept_undecided(&m, Shown));
        // A lab that moved the ratio (a delay on one side only) is not excused by noise.
        let m = noisy(0.8);
        assert_eq!(m.outcome(), Inconclusive);
        assert!(!super::noise_kept_undecided(&m, Contradicted));
        assert!(super::noise_kept_undecided(&m, Shown));
        // Inside the grey band between the thresholds, neither.
        assert!(!super::noise_kept_undecided(&noisy(0.95), Contradicted));
        // A decided outcome is not undecided.
        let quiet = super::synthetic_pairs(&claim, 1.0, 0.01, 16);
        assert_eq!(quiet.outcome(), Contradicted);
        assert!(!super::noise_kept_undecided(&quiet, Contradicted));
    }
}

#[cfg(test)]
mod controls_tests {
    use super::controls_conformance;
    use crate::decide::{CellRef, Comparison, Rule, Side};
    use crate::registry::{Entry, Registry};

    fn deciding(name: &str) -> Entry<'static> {
        Entry::new(name, "a claim", |_| {
            let cell = |v: &str| Side::cell(CellRef::new("f", v, 2, 2));
            Ok(Comparison::throughput(
                cell("a"),
                cell("b"),
                Rule::Above {
                    shown: 1.1,
                    contradicted: 1.02,
                },
            )
            .into())
        })
    }

    const TESTS: &str = "#[test]\nfn takes_it_away() {}\n\n#[test]\nfn puts_it_back() {}\n";

    #[test]
    fn a_deciding_part_needs_both_controls_as_tests() {
        let without = Registry::new(vec![deciding("p")]);
        let err = controls_conformance(&without, &[TESTS]).unwrap_err();
        assert!(
            err.contains("part `p` decides a verdict but names no controls"),
            "{err}"
        );

        let with = Registry::new(vec![
            deciding("p").controlled("takes_it_away", "puts_it_back")
        ]);
        controls_conformance(&with, &[TESTS]).unwrap();

        // A name that is not a test (or not there at all) is refused.
        let elsewhere = Registry::new(vec![deciding("p").controlled("takes_it_away", "gone")]);
        let err = controls_conformance(&elsewhere, &[TESTS, "fn gone() {}"]).unwrap_err();
        assert!(
            err.contains("its control `gone` is not a #[test] fn"),
            "{err}"
        );
    }

    #[test]
    fn a_size_needs_none_and_a_part_decided_otherwise_must_be_one() {
        let sized = Registry::new(vec![deciding("p").sized()]);
        controls_conformance(&sized, &[]).unwrap();
        let profiles = Registry::new(vec![Entry::otherwise("w", "a claim", "from profiles")]);
        let err = controls_conformance(&profiles, &[]).unwrap_err();
        assert!(
            err.contains("part `w` is decided otherwise than by pairs"),
            "{err}"
        );
        let context = Registry::new(vec![
            Entry::otherwise("w", "a claim", "from profiles").sized()
        ]);
        controls_conformance(&context, &[]).unwrap();
    }
}
