//! One registry of a hot path's parts: each part is one [`Entry`], declared once in its
//! hot path's crate, with its name (read by scripts), its claim in the user's words, how
//! its two sides are found among a plan's cells, its weight and basis, and what its
//! outcome says in a sentence. The claims `lab` measures as pairs
//! ([`Registry::claims`]), the answer's parts ([`Registry::parts`], read back by name,
//! never by position) and the tests all read the same entries, so a part cannot be
//! declared under one name and answered under another.
//!
//! Why entries hold closures rather than data: where a part's sides lie depends on the
//! plan (the most CPUs planned, the seed's knee) and some hot paths ask the same part of
//! several files (lease on SQLite and PostgreSQL, a server per scenario file), so an entry
//! is built by its crate's one `registry` function with whatever it needs captured.
//!
//! Not here: measuring pairs (`lab`), turning pairs into an interval ([`crate::decide`]),
//! the answer's verdict and wording beyond one part's clause (each hot path).

use crate::decide::{Claim, Comparison, Outcome, Part, Planned};
use crate::findings::Run;

/// What an entry finds among a plan's cells: the comparison that decides its part, and
/// the words the plan adds to the claim where it chose the sides ("per thread at 6
/// threads against at the seed's knee of 4 threads").
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    /// The comparison that decides the part.
    pub comparison: Comparison,
    /// Added to the claim after a colon; empty when the claim says it all.
    pub detail: String,
}

impl From<Comparison> for Found {
    fn from(comparison: Comparison) -> Found {
        Found {
            comparison,
            detail: String::new(),
        }
    }
}

impl Found {
    /// The comparison with words the plan adds to the claim.
    pub fn with_detail(comparison: Comparison, detail: impl Into<String>) -> Found {
        Found {
            comparison,
            detail: detail.into(),
        }
    }
}

/// How an entry finds its sides among a plan's cells, or why this plan cannot decide it.
pub type Sides<'a> = Box<dyn Fn(&Planned<'_>) -> Result<Found, String> + 'a>;

/// One part of a hot path's question, declared once.
pub struct Entry<'a> {
    /// The part's name, e.g. `plateau` or `postgres/busy_time_leases` (read by scripts).
    pub name: String,
    /// What the part claims, in the user's words.
    pub claim: String,
    /// How its sides are found in a plan.
    pub sides: Sides<'a>,
    /// A measurement of size only (see [`Claim::size_only`]).
    pub size_only: bool,
    /// What its sides run on where it differs from its hot path's (`real`, `lab`,
    /// `model`); empty: the hot path's.
    pub basis: String,
    /// What a shown outcome means, in a clause ("a plateau like the seed's").
    pub shown: String,
    /// What a contradicted outcome means ("no lift worth reporting").
    pub contradicted: String,
    /// Whether pairs decide it; `false` for a part its answer decides otherwise (from
    /// profiles, say), whose claim says how and carries no comparison.
    pub by_pairs: bool,
    /// The tests that show it can come out either way; a part that decides a verdict
    /// without them fails [`crate::testing::controls_conformance`].
    pub controls: Option<Controls>,
}

/// The two tests, in the hot path's crate, that show a deciding part can go either way:
/// each runs the hot path's own workload, small, through the part's comparison and rule,
/// once with the seed's cause taken away (the part must come out contradicted) and once
/// with it present (shown). Without both a part is a size, not a verdict: a lab that built
/// its two sides so that the outcome follows would pass neither.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Controls {
    /// The test with the cause taken away: the part comes out contradicted.
    pub contradicted: &'static str,
    /// The test with the cause present: the part comes out shown.
    pub shown: &'static str,
}

impl<'a> Entry<'a> {
    /// A part named `name` claiming `claim`, whose sides `sides` finds.
    pub fn new(
        name: impl Into<String>,
        claim: impl Into<String>,
        sides: impl Fn(&Planned<'_>) -> Result<Found, String> + 'a,
    ) -> Entry<'a> {
        Entry {
            name: name.into(),
            claim: claim.into(),
            sides: Box::new(sides),
            size_only: false,
            basis: String::new(),
            shown: "shown".to_owned(),
            contradicted: "contradicted".to_owned(),
            by_pairs: true,
            controls: None,
        }
    }

    /// A part its answer decides otherwise than by pairs (from profiles, say): `how`
    /// says how, in the claim's `missing`, and `lab` measures no pairs for it.
    pub fn otherwise(
        name: impl Into<String>,
        claim: impl Into<String>,
        how: impl Into<String>,
    ) -> Entry<'a> {
        let how = how.into();
        Entry {
            by_pairs: false,
            ..Entry::new(name, claim, move |_: &Planned<'_>| Err(how.clone()))
        }
    }

    /// The same entry, saying `shown` and `contradicted` of its two outcomes.
    pub fn says(mut self, shown: impl Into<String>, contradicted: impl Into<String>) -> Self {
        self.shown = shown.into();
        self.contradicted = contradicted.into();
        self
    }

    /// The same entry with the tests that take its cause away (`contradicted`) and put
    /// it back (`shown`), named as their functions are ([`Controls`]).
    pub fn controlled(mut self, contradicted: &'static str, shown: &'static str) -> Self {
        self.controls = Some(Controls {
            contradicted,
            shown,
        });
        self
    }

    /// Whether the part decides a verdict: measured by pairs and not a size.
    pub fn decides(&self) -> bool {
        self.by_pairs && !self.size_only
    }

    /// The same entry as a measurement of size only.
    pub fn sized(mut self) -> Self {
        self.size_only = true;
        self
    }

    /// The same entry on `basis` (`real`, `lab`, `model`).
    pub fn on(mut self, basis: &str) -> Self {
        self.basis = basis.to_owned();
        self
    }

    /// The claim `lab` measures for this part in `planned`.
    pub fn claim_in(&self, planned: &Planned<'_>) -> Claim {
        let claim = match (self.sides)(planned) {
            Ok(found) => {
                let words = if found.detail.is_empty() {
                    self.claim.clone()
                } else {
                    format!("{}: {}", self.claim, found.detail)
                };
                Claim::decided_by(&self.name, words, found.comparison)
            }
            Err(why) => Claim::cannot(&self.name, self.claim.clone(), why),
        };
        Claim {
            size_only: self.size_only,
            basis: self.basis.clone(),
            ..claim
        }
    }

    /// The part's clause in a sentence: "1.93x [1.85-2.01], 32 pairs: a plateau like the
    /// seed's", or "not decided (why)".
    pub fn said(&self, p: &Part) -> String {
        match (p.outcome, p.ratio) {
            (Outcome::Shown, _) => format!("{}: {}", p.figure(), self.shown),
            (Outcome::Contradicted, _) => format!("{}: {}", p.figure(), self.contradicted),
            (Outcome::Inconclusive, Some(_)) => {
                format!("{}: not decided ({})", p.figure(), p.why)
            }
            (Outcome::Inconclusive, None) => format!("not decided ({})", p.why),
        }
    }
}

/// A hot path's parts, in the order its answer shows them.
pub struct Registry<'a> {
    entries: Vec<Entry<'a>>,
}

impl<'a> Registry<'a> {
    /// The registry of `entries`.
    ///
    /// # Panics
    /// When two entries share a name: a part is declared once.
    pub fn new(entries: Vec<Entry<'a>>) -> Registry<'a> {
        for (i, e) in entries.iter().enumerate() {
            assert!(
                entries[..i].iter().all(|o| o.name != e.name),
                "part `{}` is declared twice",
                e.name
            );
        }
        Registry { entries }
    }

    /// The entries, in order.
    pub fn entries(&self) -> &[Entry<'a>] {
        &self.entries
    }

    /// The parts' names, in order.
    pub fn names(&self) -> Vec<&str> {
        self.entries.iter().map(|e| e.name.as_str()).collect()
    }

    /// The entry named `name`.
    ///
    /// # Panics
    /// When no entry has that name: the caller names a part its crate never declared.
    pub fn entry(&self, name: &str) -> &Entry<'a> {
        self.entries
            .iter()
            .find(|e| e.name == name)
            .unwrap_or_else(|| panic!("no part `{name}` in this registry"))
    }

    /// Every part's claim in `planned`, in order: what [`crate::HotPath::claims`] returns.
    pub fn claims(&self, planned: &Planned<'_>) -> Vec<Claim> {
        self.entries.iter().map(|e| e.claim_in(planned)).collect()
    }

    /// Whether `run` declared any of these parts.
    pub fn declared_in(&self, run: &Run<'_>) -> bool {
        run.comparisons
            .iter()
            .any(|m| self.entries.iter().any(|e| e.name == m.claim.part))
    }

    /// Every part as `run` measured it, in order; a part the run did not declare is
    /// inconclusive and says so, with its entry's weight and basis.
    pub fn parts(&self, run: &Run<'_>) -> Parts<'_, 'a> {
        let parts = self
            .entries
            .iter()
            .map(|e| {
                let declared = run.comparisons.iter().any(|m| m.claim.part == e.name);
                let mut p = run.part(&e.name, &e.claim);
                if !declared {
                    p.weight = if e.size_only {
                        crate::decide::SIZE_ONLY
                    } else {
                        crate::decide::DECIDES
                    }
                    .to_owned();
                    p.basis = e.basis.clone();
                }
                p
            })
            .collect();
        Parts {
            registry: self,
            parts,
        }
    }
}

/// A run's parts, one per entry of a [`Registry`], read by name.
pub struct Parts<'r, 'a> {
    registry: &'r Registry<'a>,
    parts: Vec<Part>,
}

impl Parts<'_, '_> {
    fn index(&self, name: &str) -> usize {
        self.parts
            .iter()
            .position(|p| p.name == name)
            .unwrap_or_else(|| panic!("no part `{name}` in this registry"))
    }

    /// Part `name`.
    ///
    /// # Panics
    /// When the registry has no such part.
    pub fn get(&self, name: &str) -> &Part {
        &self.parts[self.index(name)]
    }

    /// Part `name`, to change what the pairs alone cannot say (a part decided by
    /// profiles, or one that counts only beside an effect).
    pub fn get_mut(&mut self, name: &str) -> &mut Part {
        let i = self.index(name);
        &mut self.parts[i]
    }

    /// Part `name`'s clause in a sentence ([`Entry::said`]).
    pub fn said(&self, name: &str) -> String {
        self.registry.entry(name).said(self.get(name))
    }

    /// Every part, in the registry's order.
    pub fn all(&self) -> &[Part] {
        &self.parts
    }

    /// The outcomes of the parts a verdict rests on (`Part::decides`), in order: what
    /// `Verdict::of_outcomes` reads, never a size, placebo or profile.
    pub fn deciding_outcomes(&self) -> Vec<Outcome> {
        self.parts
            .iter()
            .filter(|p| p.decides())
            .map(|p| p.outcome)
            .collect()
    }

    /// The parts, for the answer.
    pub fn into_vec(self) -> Vec<Part> {
        self.parts
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::decide::{CellRef, Measured, Rule, Side};

    fn registry() -> Registry<'static> {
        Registry::new(vec![
            Entry::new("gain", "a beats b", |p: &Planned<'_>| {
                let a = p.find("f", "a", 2, 2).ok_or("no a")?;
                let b = p.find("f", "b", 2, 2).ok_or("no b")?;
                Ok(Comparison::throughput(
                    Side::cell(a.clone()),
                    Side::cell(b.clone()),
                    Rule::Above {
                        shown: 1.05,
                        contradicted: 1.02,
                    },
                )
                .into())
            })
            .says("a is faster", "a is no faster"),
            Entry::new("bytes", "a writes less", |_: &Planned<'_>| {
                Err("never in a plan".to_owned())
            })
            .sized()
            .on("lab"),
        ])
    }

    #[test]
    fn claims_follow_the_entries_and_parts_are_read_by_name() {
        let cells = vec![CellRef::new("f", "a", 2, 2), CellRef::new("f", "b", 2, 2)];
        let seeds = BTreeMap::new();
        let planned = Planned {
            cells: &cells,
            seeds: &seeds,
        };
        let r = registry();
        let claims = r.claims(&planned);
        assert_eq!(
            claims.iter().map(|c| c.part.as_str()).collect::<Vec<_>>(),
            r.names()
        );
        assert!(claims[0].comparison.is_some());
        assert_eq!(claims[1].missing, "never in a plan");
        assert!(claims[1].size_only && claims[1].basis == "lab");

        let mut m = Measured::new(claims[0].clone());
        m.pairs = (0..9).map(|i| vec![1.2 + 0.001 * i as f64, 1.0]).collect();
        m.stopped = "decided".to_owned();
        let comparisons = vec![m];
        let run = Run {
            cells: &[],
            seeds: &seeds,
            comparisons: &comparisons,
        };
        let parts = r.parts(&run);
        assert_eq!(parts.get("gain").outcome, Outcome::Shown);
        assert!(
            parts.said("gain").ends_with(": a is faster"),
            "{}",
            parts.said("gain")
        );
        // Not declared in the run: inconclusive, with the entry's weight and basis.
        let bytes = parts.get("bytes");
        assert_eq!(bytes.outcome, Outcome::Inconclusive);
        assert_eq!(
            (bytes.weight.as_str(), bytes.basis.as_str()),
            ("size_only", "lab")
        );
    }

    #[test]
    #[should_panic(expected = "declared twice")]
    fn a_part_is_declared_once() {
        let e = || Entry::new("x", "x", |_: &Planned<'_>| Err(String::new()));
        Registry::new(vec![e(), e()]);
    }

    #[test]
    #[should_panic(expected = "no part `nope`")]
    fn reading_an_undeclared_part_panics() {
        let seeds = BTreeMap::new();
        let run = Run {
            cells: &[],
            seeds: &seeds,
            comparisons: &[],
        };
        registry().parts(&run).get("nope");
    }
}
