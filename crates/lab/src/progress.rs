//! Progress of a matrix: a progress bar on a terminal, and in a log (stderr redirected to a
//! file, as CI does) one line per finished round instead, since a bar there prints nothing.
//!
//! Not the results: those are written by `matrix` after every round.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// A progress bar over `total` runs, drawn only when stderr is a terminal.
pub fn bar(total: usize) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(Some(total as u64), draw_target()).with_style(
        ProgressStyle::with_template(
            "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} ETA {eta} {msg}",
        )
        .expect("valid progress template"),
    );
    bar.enable_steady_tick(Duration::from_millis(250));
    bar
}

fn draw_target() -> ProgressDrawTarget {
    if std::io::stderr().is_terminal() {
        ProgressDrawTarget::stderr()
    } else {
        ProgressDrawTarget::hidden()
    }
}

/// In a log, one line for a finished round: runs done of the total and the time left,
/// estimated from the pace so far.
pub fn round_done(bar: &ProgressBar, round: usize, rounds: usize) {
    if std::io::stderr().is_terminal() {
        return;
    }
    eprintln!(
        "{}",
        round_line(
            round,
            rounds,
            bar.position(),
            bar.length().unwrap_or(0),
            bar.elapsed()
        )
    );
}

/// In a log, one line when a phase other than the rounds begins.
pub fn phase(bar: &ProgressBar, what: &str) {
    if !std::io::stderr().is_terminal() {
        let left = bar.length().unwrap_or(0).saturating_sub(bar.position());
        eprintln!("{what} ({left} runs)");
    }
}

/// `round 2/5: 40/100 cell runs done, about 1m 30s left`.
fn round_line(round: usize, rounds: usize, done: u64, total: u64, elapsed: Duration) -> String {
    let left = if done == 0 {
        "time left unknown".to_owned()
    } else {
        let secs = elapsed.as_secs_f64() * total.saturating_sub(done) as f64 / done as f64;
        format!(
            "about {} left",
            humantime::format_duration(Duration::from_secs(secs.round() as u64))
        )
    };
    format!("round {round}/{rounds}: {done}/{total} cell runs done, {left}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_lines_say_what_is_done_and_left() {
        assert_eq!(
            round_line(1, 4, 25, 100, Duration::from_secs(30)),
            "round 1/4: 25/100 cell runs done, about 1m 30s left"
        );
        assert_eq!(
            round_line(4, 4, 100, 100, Duration::from_secs(30)),
            "round 4/4: 100/100 cell runs done, about 0s left"
        );
        assert_eq!(
            round_line(1, 1, 0, 0, Duration::ZERO),
            "round 1/1: 0/0 cell runs done, time left unknown"
        );
    }
}
