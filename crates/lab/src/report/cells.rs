//! Picking and comparing the cells of a run: the scenario file a cell came from, its
//! interval, and whether two cells differ by more than the noise. Shared by `findings`
//! and `batch_gain`, which word what these compare; nothing here words a finding.

use harness::RunRecord;

use crate::table::si;

/// Usable cells of one scenario file.
pub(super) fn of_file<'a>(cells: &'a [RunRecord], file: &str) -> Vec<&'a RunRecord> {
    cells
        .iter()
        .filter(|c| c.usable() && file_of(c) == file)
        .collect()
}

/// The scenario file a record came from (older results carry none: the hot path's name).
fn file_of(r: &RunRecord) -> &str {
    if r.scenario_file.is_empty() {
        &r.scenario
    } else {
        &r.scenario_file
    }
}

/// The interval a record carries for its median: the confidence interval where the
/// record has one, else the min-max of its repetitions.
pub(super) fn interval(r: &RunRecord) -> (f64, f64) {
    r.ops_ci()
}

pub(super) fn with_interval(value: f64, r: &RunRecord, scale: f64) -> String {
    let (low, high) = interval(r);
    if !has_interval(r) {
        // The finding's closing note says these cells have no interval.
        return si(value * scale);
    }
    format!(
        "{} [{}–{}]",
        si(value * scale),
        si(low * scale),
        si(high * scale)
    )
}

/// Whether `r` has an interval at all: one repetition gives none (its ends coincide), and a
/// comparison with it cannot be judged.
pub(super) fn has_interval(r: &RunRecord) -> bool {
    let (low, high) = interval(r);
    high > low
}

/// Why a difference between `a` and `b` may not be real: "" when their intervals are
/// apart or cannot be judged (the finding's closing note says so once), else that they
/// overlap.
pub(super) fn noise(a: &RunRecord, b: &RunRecord) -> &'static str {
    if !(has_interval(a) && has_interval(b)) || apart(a, b) {
        ""
    } else {
        "intervals overlap: within the noise"
    }
}

/// Whether two cells' intervals are apart, so a difference between them is not noise.
pub(super) fn apart(a: &RunRecord, b: &RunRecord) -> bool {
    if !(has_interval(a) && has_interval(b)) {
        return false;
    }
    let (al, ah) = interval(a);
    let (bl, bh) = interval(b);
    ah < bl || bh < al
}

pub(super) fn ratio(a: f64, b: f64) -> f64 {
    if b > 0.0 {
        a / b
    } else {
        f64::NAN
    }
}

pub(super) fn extra(r: &RunRecord, key: &str) -> Option<f64> {
    r.extra.get(key).and_then(|v| v.as_f64())
}

pub(super) fn param_text(r: &RunRecord, key: &str) -> String {
    match r.params.get(key) {
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(v) => v.to_string(),
        None => "-".to_owned(),
    }
}
