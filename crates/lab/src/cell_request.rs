//! One cell as a typed request, and its form as `lab run` arguments.
//!
//! `lab matrix` builds a [`CellRequest`] per repetition and turns it into the arguments of
//! a child `lab run` ([`CellRequest::to_args`]); the child parses them back with clap
//! ([`RunArgs`]) and checks them into the same request ([`CellRequest::from_run_args`]).
//! Both directions live here so the flags cannot drift apart. Resolving the hot path,
//! variant and parameters against the catalog is `run_cell`'s job, not this module's.

use std::time::Duration;

use anyhow::{bail, Context};
use clap::Args;
use harness::affinity;

use crate::scenario_file::{max_threads, parse_duration};

/// Arguments of `lab run`, as clap parses them (text, checked by
/// [`CellRequest::from_run_args`]).
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Hot path, e.g. lookup.
    #[arg(long = "hot-path", visible_alias = "scenario", value_name = "HOT_PATH")]
    pub hot_path: String,
    /// Variant, e.g. global-mutex.
    #[arg(long)]
    pub variant: String,
    /// Worker threads.
    #[arg(long, default_value = "1")]
    pub threads: String,
    /// Restrict the process to the first N allowed CPUs (default: all).
    #[arg(long)]
    pub cores: Option<String>,
    /// Measured window per repetition, e.g. 1s or 500ms (a bare number is seconds).
    #[arg(long, default_value = "1s")]
    pub duration: String,
    /// Warm-up before each window.
    #[arg(long, default_value = "300ms")]
    pub warmup: String,
    /// Repetitions; the record holds their median and spread.
    #[arg(long, default_value = "1")]
    pub repeats: String,
    /// A hot-path parameter as name=value (repeatable).
    #[arg(long = "param", value_name = "NAME=VALUE")]
    pub params: Vec<String>,
    /// Profile the measured window: on-CPU (perf, or pprof where perf cannot run) to
    /// PREFIX.folded and PREFIX.svg, waits to PREFIX.offcpu.folded and PREFIX.offcpu.svg
    /// (use one repetition; the figures of a profiled run are perturbed by the sampler).
    #[arg(long, value_name = "PREFIX")]
    pub profile: Option<String>,
    /// The lock table's instrument: on, off for the uninstrumented figure (no lock
    /// table), or true for on and every real server started under the lock library
    /// (its pthread locks in `extra.locks`); `lab matrix locks=off|true` passes it.
    #[arg(long, value_name = "on|off|true", default_value = "on")]
    pub locks: String,
    /// The delay experiment: spend NS nanoseconds in every hold of the named lock, just
    /// before its release, or just after it with `:outside` (the control), e.g. `--lock-delay
    /// "entry cache=200"`; the lock must be one the hot path's lock table names, or with
    /// `--locks true` one a real server's `extra.locks` names.
    #[arg(long = "lock-delay", value_name = "NAME=NS[:outside]")]
    pub lock_delay: Option<String>,
}

/// One cell to measure in one process, with every number checked.
#[derive(Debug, Clone, PartialEq)]
pub struct CellRequest {
    /// Hot path name, e.g. `lookup`.
    pub hot_path: String,
    /// Variant name.
    pub variant: String,
    /// Worker threads.
    pub threads: usize,
    /// CPUs to narrow the process to; `None` keeps every allowed CPU.
    pub cores: Option<usize>,
    /// Measured window per repetition.
    pub duration: Duration,
    /// Warm-up before each window.
    pub warmup: Duration,
    /// Repetitions in this process.
    pub repeats: usize,
    /// Hot-path parameters as `(name, value)` text, checked by the hot path's specs later.
    pub params: Vec<(String, String)>,
    /// Profile prefix: on-CPU and off-CPU profiles of the window go to `PREFIX.*`.
    pub profile: Option<String>,
    /// Measure with the lock table's instrument off (`--locks off`).
    pub locks_off: bool,
    /// Start real servers under the lock library (`--locks true`).
    pub lock_library: bool,
    /// The delay experiment's lock, amount and place (`--lock-delay`).
    pub lock_delay: Option<harness::locks::delay::Delay>,
}

/// Most repetitions one `lab run` accepts.
pub const MAX_REPEATS: usize = 100;

fn count(name: &str, text: &str, max: usize) -> anyhow::Result<usize> {
    match text.trim().parse::<usize>() {
        Ok(n) if (1..=max).contains(&n) => Ok(n),
        _ => bail!("--{name} {text:?}: expected an integer in 1..={max}"),
    }
}

impl CellRequest {
    /// Checks parsed `lab run` arguments; an error names the flag and what is accepted.
    pub fn from_run_args(args: &RunArgs) -> anyhow::Result<CellRequest> {
        let cores = match &args.cores {
            Some(text) => {
                let nproc = affinity::allowed_cpus().len();
                Some(
                    count("cores", text, nproc)
                        .with_context(|| format!("this machine has {nproc} CPU(s) available"))?,
                )
            }
            None => None,
        };
        let params = args
            .params
            .iter()
            .map(|param| match param.split_once('=') {
                Some((name, value)) => Ok((name.trim().to_owned(), value.to_owned())),
                None => bail!("--param {param:?}: expected NAME=VALUE, e.g. --param users=6000"),
            })
            .collect::<anyhow::Result<_>>()?;
        Ok(CellRequest {
            hot_path: args.hot_path.clone(),
            variant: args.variant.clone(),
            threads: count("threads", &args.threads, max_threads())?,
            cores,
            duration: parse_duration(&args.duration)
                .map_err(|m| anyhow::anyhow!("--duration {m}"))?,
            warmup: parse_duration(&args.warmup).map_err(|m| anyhow::anyhow!("--warmup {m}"))?,
            repeats: count("repeats", &args.repeats, MAX_REPEATS)?,
            params,
            profile: args.profile.clone(),
            locks_off: args.locks.trim() == "off",
            lock_library: match args.locks.trim() {
                "on" | "off" => false,
                "true" => true,
                other => bail!("--locks {other:?}: expected on, off or true"),
            },
            lock_delay: args
                .lock_delay
                .as_deref()
                .map(harness::locks::delay::Delay::parse)
                .transpose()
                .map_err(|e| anyhow::anyhow!("--lock-delay {e}"))?,
        })
    }

    /// The arguments of the `lab run` that measures this request (after the program name).
    pub fn to_args(&self) -> Vec<String> {
        // humantime's text parses back to the same nanosecond, unlike a float of seconds.
        let duration = |d: Duration| humantime::format_duration(d).to_string();
        let mut args = vec![
            "run".to_owned(),
            "--hot-path".to_owned(),
            self.hot_path.clone(),
            "--variant".to_owned(),
            self.variant.clone(),
            "--threads".to_owned(),
            self.threads.to_string(),
        ];
        if let Some(cores) = self.cores {
            args.extend(["--cores".to_owned(), cores.to_string()]);
        }
        args.extend([
            "--duration".to_owned(),
            duration(self.duration),
            "--warmup".to_owned(),
            duration(self.warmup),
            "--repeats".to_owned(),
            self.repeats.to_string(),
        ]);
        for (name, value) in &self.params {
            args.extend(["--param".to_owned(), format!("{name}={value}")]);
        }
        if let Some(prefix) = &self.profile {
            args.extend(["--profile".to_owned(), prefix.clone()]);
        }
        // Only when off, so that a child's command line reads as before by default.
        if self.locks_off {
            args.extend(["--locks".to_owned(), "off".to_owned()]);
        } else if self.lock_library {
            args.extend(["--locks".to_owned(), "true".to_owned()]);
        }
        if let Some(d) = &self.lock_delay {
            let place = match d.place {
                harness::locks::delay::Place::Inside => "",
                harness::locks::delay::Place::Outside => ":outside",
            };
            args.extend([
                "--lock-delay".to_owned(),
                format!("{}={}{place}", d.lock, d.ns),
            ]);
        }
        args
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    /// `lab run`'s arguments alone, as the real command line nests them.
    #[derive(Debug, Parser)]
    struct Run {
        #[command(flatten)]
        args: RunArgs,
    }

    fn parse(args: &[String]) -> anyhow::Result<CellRequest> {
        assert_eq!(args[0], "run");
        let run = Run::try_parse_from(
            std::iter::once("lab").chain(args[1..].iter().map(|s| s.as_str())),
        )?;
        CellRequest::from_run_args(&run.args)
    }

    #[test]
    fn a_request_survives_the_trip_through_child_arguments() {
        let requests = [
            CellRequest {
                hot_path: "lookup".into(),
                variant: "dashmap".into(),
                threads: 12,
                cores: Some(1),
                duration: Duration::from_nanos(1_234_567_891),
                warmup: Duration::from_millis(300),
                repeats: 1,
                params: vec![
                    ("users".into(), "6000".into()),
                    ("keys".into(), "zipf".into()),
                    ("data_dir".into(), String::new()),
                ],
                profile: Some("profiles/run/lookup/dashmap/p0/t12-c1".into()),
                locks_off: true,
                lock_library: false,
                lock_delay: Some(harness::locks::delay::Delay {
                    lock: "entry cache".into(),
                    ns: 250,
                    place: harness::locks::delay::Place::Outside,
                }),
            },
            CellRequest {
                hot_path: "noop".into(),
                variant: "noop".into(),
                threads: 1,
                cores: None,
                duration: Duration::from_millis(1),
                warmup: Duration::from_secs(3600),
                repeats: MAX_REPEATS,
                params: Vec::new(),
                profile: None,
                locks_off: false,
                lock_library: true,
                lock_delay: None,
            },
        ];
        for request in requests {
            assert_eq!(parse(&request.to_args()).unwrap(), request);
        }
    }

    #[test]
    fn the_old_flag_name_still_parses() {
        let args: Vec<String> = ["run", "--scenario", "lookup", "--variant", "lmdb"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let request = parse(&args).unwrap();
        assert_eq!(request.hot_path, "lookup");
        assert_eq!(request.threads, 1);
        assert!(!request.locks_off, "the instrument is on by default");
    }

    #[test]
    fn a_misspelt_locks_flag_is_refused() {
        let args: Vec<String> = [
            "run",
            "--hot-path",
            "noop",
            "--variant",
            "noop",
            "--locks",
            "of",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let err = format!("{:#}", parse(&args).unwrap_err());
        assert_eq!(err, "--locks \"of\": expected on, off or true");
    }
}
