//! The conformance test every hot path runs: each variant, built from small parameters the
//! hot path supplies, measures a short window and verifies, and every figure that
//! [`HotPath::charted_extras`] promises a chart appears as a number in some record's
//! `extra` (a report would otherwise draw an empty chart without saying why).
//!
//! A hot-path crate calls [`conformance`] from one test and adds its own checks on the
//! runs it returns. This module is for tests only: it panics on failure and times
//! nothing that a result should quote. It is not a benchmark and says nothing about speed.

use std::collections::BTreeSet;
use std::time::Duration;

use crate::hotpath::HotPath;
use crate::params::Params;
use crate::runner::{Measurement, RunSettings};

/// One set of small parameters and the variants that run with it.
///
/// Most hot paths need one case; a second one covers figures that only some settings
/// produce (a backend, an acquisition-only mode) or variants that refuse a setting.
#[derive(Debug, Clone, Copy)]
pub struct Case<'a> {
    /// `name=value` overrides of the hot path's defaults, e.g. `("users", "300")`.
    pub set: &'a [(&'a str, &'a str)],
    /// The variants that run with it; empty means every variant.
    pub only: &'a [&'a str],
    /// Worker threads (several, so that the variants' sharing is exercised).
    pub threads: usize,
    /// The measured window (after a 10 ms warm-up).
    pub window: Duration,
}

impl<'a> Case<'a> {
    /// Every variant with these overrides, 2 threads and a 100 ms window.
    pub const fn every_variant(set: &'a [(&'a str, &'a str)]) -> Case<'a> {
        Case {
            set,
            only: &[],
            threads: 2,
            window: Duration::from_millis(100),
        }
    }

    /// The same case run by only these variants.
    pub const fn only(self, variants: &'a [&'a str]) -> Case<'a> {
        Case {
            only: variants,
            ..self
        }
    }

    /// The same case with this many threads.
    pub const fn threads(self, threads: usize) -> Case<'a> {
        Case { threads, ..self }
    }

    /// The same case with this measured window.
    pub const fn window(self, window: Duration) -> Case<'a> {
        Case { window, ..self }
    }

    /// The hot path's defaults with this case's overrides.
    pub fn params(&self, hot_path: &dyn HotPath) -> Result<Params, String> {
        with_overrides(hot_path, self.set)
    }

    fn runs(&self, variant: &str) -> bool {
        self.only.is_empty() || self.only.contains(&variant)
    }
}

/// `hot_path`'s defaults with `set` applied, or the first refused pair.
fn with_overrides(hot_path: &dyn HotPath, set: &[(&str, &str)]) -> Result<Params, String> {
    let specs = hot_path.params();
    let mut params = Params::defaults(specs);
    for (name, value) in set {
        params.set(specs, name, value)?;
    }
    Ok(params)
}

/// `hot_path`'s defaults with `set` applied, for a test's own measurements; panics naming
/// a refused pair, which is a mistake in the test.
pub fn params(hot_path: &dyn HotPath, set: &[(&str, &str)]) -> Params {
    with_overrides(hot_path, set).unwrap_or_else(|e| panic!("{}: {e}", hot_path.name()))
}

/// Run settings for a test: `threads` workers, `warmup_ms` of warm-up, then a
/// `window_ms` measured window.
pub fn settings(threads: usize, warmup_ms: u64, window_ms: u64) -> RunSettings {
    RunSettings {
        threads,
        warmup: Duration::from_millis(warmup_ms),
        duration: Duration::from_millis(window_ms),
    }
}

/// One verified measurement made by the conformance test, for the caller's own checks.
#[derive(Debug)]
pub struct Run {
    /// The variant measured.
    pub variant: &'static str,
    /// The index of its case in the list given to [`conformance`].
    pub case: usize,
    /// What the harness measured.
    pub measurement: Measurement,
}

/// Runs every case for its variants and checks the contract; returns the runs, or every
/// broken rule on its own line.
///
/// The rules: no two variants share a name; a case's parameters are accepted (by each
/// spec and by [`HotPath::check`]); each run measures, does work and verifies; every
/// variant runs in some case; every charted extra is a number in the `extra` of some run.
pub fn check_conformance(hot_path: &dyn HotPath, cases: &[Case]) -> Result<Vec<Run>, String> {
    let name = hot_path.name();
    let mut failures: Vec<String> = hot_path
        .description()
        .check_variants()
        .err()
        .into_iter()
        .collect();
    let mut runs = Vec::new();
    // Variants some case ran, whether or not they passed: the rest no case covers.
    let mut attempted = BTreeSet::new();
    for (index, case) in cases.iter().enumerate() {
        let params = match case
            .params(hot_path)
            .and_then(|p| hot_path.check(&p).map(|()| p))
        {
            Ok(p) => p,
            Err(e) => {
                failures.push(format!("{name} case {index}: parameters refused: {e}"));
                continue;
            }
        };
        for unknown in case.only.iter().filter(|v| hot_path.variant(v).is_err()) {
            failures.push(format!("{name} case {index}: no variant {unknown:?}"));
        }
        let settings = RunSettings {
            duration: case.window,
            ..settings(case.threads, 10, 0)
        };
        for variant in hot_path.variants().iter().filter(|v| case.runs(v.name)) {
            attempted.insert(variant.name);
            let what = format!("{name}/{} case {index}", variant.name);
            // A window in which a starved machine scheduled no worker is not a broken
            // contract: measure again with longer windows before calling it one.
            let mut measured = hot_path.measure(variant.name, &params, settings);
            for stretch in [4, 16] {
                match &measured {
                    Ok(m) if m.ops == 0 && m.verified.is_ok() => {
                        let longer = RunSettings {
                            duration: settings.duration * stretch,
                            ..settings
                        };
                        measured = hot_path.measure(variant.name, &params, longer);
                    }
                    _ => break,
                }
            }
            match measured {
                Err(failure) => failures.push(format!("{what}: failed: {failure}")),
                Ok(m) if m.verified.is_err() => failures.push(format!(
                    "{what}: did not verify: {}",
                    m.verified.as_ref().unwrap_err()
                )),
                Ok(m) if m.ops == 0 => failures.push(format!("{what}: did no operation")),
                Ok(m) => {
                    runs.push(Run {
                        variant: variant.name,
                        case: index,
                        measurement: m,
                    });
                }
            }
        }
    }
    for variant in hot_path.variants() {
        if !attempted.contains(variant.name) {
            failures.push(format!("{name}/{}: no case runs it", variant.name));
        }
    }
    for (key, _label) in hot_path.charted_extras() {
        let charted = runs
            .iter()
            .any(|r| r.measurement.extra.get(*key).is_some_and(|v| v.is_number()));
        if !charted {
            failures.push(format!(
                "{name}: charted extra {key:?} is a number in no run's extra"
            ));
        }
    }
    if failures.is_empty() {
        Ok(runs)
    } else {
        Err(failures.join("\n"))
    }
}

/// [`check_conformance`] for a test: panics listing every broken rule.
pub fn conformance(hot_path: &dyn HotPath, cases: &[Case]) -> Vec<Run> {
    check_conformance(hot_path, cases).unwrap_or_else(|e| panic!("{e}"))
}

/// A verified cell for tests of a hot path's question: `ops` ops/s measured `reps` times,
/// its interval `ops` ± `spread`, with parameters `params` (`name`, JSON value).
#[allow(clippy::too_many_arguments)]
pub fn synthetic_cell(
    hot_path: &str,
    file: &str,
    variant: &str,
    params: &[(&str, serde_json::Value)],
    threads: usize,
    cores: usize,
    ops: f64,
    spread: f64,
    reps: usize,
) -> crate::CellRecord {
    let key = crate::schema::CellKey {
        hot_path: hot_path.into(),
        variant: variant.into(),
        params: params
            .iter()
            .map(|(k, v)| ((*k).to_owned(), v.clone()))
            .collect(),
        threads,
        cores,
    };
    let mut r = crate::CellRecord::failed(&key, "0", "synthetic");
    r.status = crate::schema::CellStatus::Ok;
    r.failure = None;
    r.verified = true;
    r.scenario_file = file.into();
    r.repeats = reps;
    r.ops_per_sec = ops;
    r.ops_per_sec_min = ops - spread;
    r.ops_per_sec_max = ops + spread;
    r.ops_per_sec_ci = [ops - spread, ops + spread];
    r.ops_per_sec_reps = vec![ops; reps];
    r.per_thread_ops_per_sec = ops / threads.max(1) as f64;
    r.duration_s = 0.1;
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hotpath::{Description, Variant};
    use crate::noop::NoopHotPath;
    use crate::runner::CellFailure;

    #[test]
    fn the_calibration_hot_path_conforms() {
        let runs = conformance(&NoopHotPath, &[Case::every_variant(&[])]);
        assert_eq!(runs.len(), 1);
        assert_eq!((runs[0].variant, runs[0].case), ("noop", 0));
    }

    /// Noop with a promised chart it never fills and a second variant that fails.
    struct Broken;
    const BROKEN: Description = Description {
        name: "broken",
        summary: "breaks the contract",
        variants: &[
            Variant {
                name: "fine",
                summary: "measures",
                measure: |params, settings| NoopHotPath.measure("noop", params, settings),
            },
            Variant {
                name: "fails",
                summary: "refuses",
                measure: |_, _| Err(CellFailure::new("refused")),
            },
        ],
        params: &[],
        charted_extras: &[("widgets_per_sec", "widgets/s")],
    };
    impl HotPath for Broken {
        fn description(&self) -> &'static Description {
            &BROKEN
        }
    }

    #[test]
    fn a_failing_variant_and_a_missing_chart_are_both_named() {
        let err = check_conformance(&Broken, &[Case::every_variant(&[])]).unwrap_err();
        assert!(
            err.contains("broken/fails case 0: failed: refused"),
            "{err}"
        );
        assert!(err.contains("\"widgets_per_sec\""), "{err}");
        assert!(!err.contains("broken/fine"), "{err}");

        let err =
            check_conformance(&Broken, &[Case::every_variant(&[]).only(&["fine"])]).unwrap_err();
        assert!(err.contains("broken/fails: no case runs it"), "{err}");
    }

    #[test]
    fn refused_parameters_are_named() {
        let err =
            check_conformance(&NoopHotPath, &[Case::every_variant(&[("users", "3")])]).unwrap_err();
        assert!(err.contains("noop case 0: parameters refused"), "{err}");
        assert!(err.contains("\"users\""), "{err}");
    }
}
