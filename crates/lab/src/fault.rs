//! Test-only faults: make a child `lab run` hang or abort on purpose, so the fault-injection
//! tests (`crates/lab/tests/faults.rs`) can check what a matrix keeps when a cell misbehaves.
//!
//! A fault is asked for with the environment variable [`FAULT_ENV`], never with a setting,
//! a scenario or a variant: it does not appear in `lab list`, the scenario files or the
//! default matrix, and a user who never sets the variable never meets it. Its value is an
//! action and selectors, e.g. `hang,threads=2,round=1`:
//!
//! - actions: `hang` (sleep until killed), `abort` (SIGABRT);
//! - selectors (all must match; none means every cell): `variant=`, `threads=`, `cores=`,
//!   `round=` (the 0-based repetition `lab matrix` passes in [`crate::children::ROUND_ENV`]).
//!
//! Not a chaos tool for real runs: a malformed value is reported on stderr and ignored.

use std::time::Duration;

/// The environment variable holding a test fault. Test-only.
pub const FAULT_ENV: &str = "CONTENTION_LAB_TEST_FAULT";

/// What a fault does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Action {
    Hang,
    Abort,
}

/// Acts on the fault in [`FAULT_ENV`] when it selects this cell; returns otherwise.
pub fn inject(variant: &str, threads: usize, cores: usize) {
    let Some(spec) = std::env::var_os(FAULT_ENV) else {
        return;
    };
    let round = std::env::var(crate::children::ROUND_ENV).ok();
    match parse(
        &spec.to_string_lossy(),
        variant,
        threads,
        cores,
        round.as_deref(),
    ) {
        Ok(Some(Action::Hang)) => loop {
            std::thread::sleep(Duration::from_secs(3600));
        },
        Ok(Some(Action::Abort)) => std::process::abort(),
        Ok(None) => {}
        Err(e) => eprintln!("note: {FAULT_ENV} ignored: {e}"),
    }
}

/// The action `spec` asks of this cell, if it selects it.
fn parse(
    spec: &str,
    variant: &str,
    threads: usize,
    cores: usize,
    round: Option<&str>,
) -> Result<Option<Action>, String> {
    let mut parts = spec.split(',').map(str::trim);
    let action = match parts.next() {
        Some("hang") => Action::Hang,
        Some("abort") => Action::Abort,
        other => return Err(format!("unknown action {other:?}; accepted hang, abort")),
    };
    let mut selected = true;
    for part in parts {
        let Some((key, value)) = part.split_once('=') else {
            return Err(format!("{part:?}: expected key=value"));
        };
        selected &= match key {
            "variant" => value == variant,
            "threads" => value == threads.to_string(),
            "cores" => value == cores.to_string(),
            "round" => Some(value) == round,
            _ => {
                return Err(format!(
                    "unknown selector {key:?}; accepted variant, threads, cores, round"
                ))
            }
        };
    }
    Ok(selected.then_some(action))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn faults_select_cells() {
        assert_eq!(parse("hang", "x", 1, 1, None), Ok(Some(Action::Hang)));
        assert_eq!(
            parse("abort,threads=2", "x", 2, 1, None),
            Ok(Some(Action::Abort))
        );
        assert_eq!(parse("abort,threads=2", "x", 1, 1, None), Ok(None));
        assert_eq!(
            parse("hang,threads=2,round=1", "x", 2, 1, Some("1")),
            Ok(Some(Action::Hang))
        );
        assert_eq!(parse("hang,round=1", "x", 2, 1, Some("0")), Ok(None));
        assert_eq!(parse("hang,round=1", "x", 2, 1, None), Ok(None));
        assert_eq!(
            parse("hang,variant=noop", "noop", 2, 1, None),
            Ok(Some(Action::Hang))
        );
        assert!(parse("explode", "x", 1, 1, None).is_err());
        assert!(parse("hang,colour=red", "x", 1, 1, None).is_err());
    }
}
