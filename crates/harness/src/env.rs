//! Environment capture: the machine and build a run was measured on, so that a reader
//! can tell whether two result files are comparable. Best effort: a fact that cannot be
//! read is recorded as `unknown`, never an error.

use std::process::Command;

use serde::{Deserialize, Serialize};

use crate::affinity;

/// The machine and build behind a results file (`env` in the schema).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct EnvInfo {
    /// CPU model name from /proc/cpuinfo.
    pub cpu_model: String,
    /// CPUs this process may use.
    pub nproc: usize,
    /// Kernel release.
    pub kernel: String,
    /// The compiler that built the measuring code.
    pub rustc: String,
    /// `git rev-parse --short HEAD`, with `-dirty` when the tree has uncommitted changes.
    pub git_commit: String,
    /// Host name.
    pub hostname: String,
    /// The CPUs the run was allowed to use (cells narrow it further, see `affinity` in each
    /// record).
    pub affinity: String,
    /// Whether this is a debug build (figures from one are not worth quoting).
    #[serde(default)]
    pub debug_build: bool,
    /// The cost of one clock read (`Instant::now()`) in nanoseconds when the run started,
    /// median of a few thousand back-to-back pairs; each record has its own
    /// `clock_read_ns`, measured under the cell's affinity.
    #[serde(default)]
    pub clock_read_ns: f64,
    /// The reference measurement `lab matrix` takes once per round (a fixed single-thread
    /// loop), so that `lab compare` can tell two machines, or one machine at two speeds,
    /// apart; null for files written before it and outside a matrix.
    #[serde(default)]
    pub reference: Option<Reference>,
    /// The cost of a child process beyond its warm-up and window (start to record on
    /// stdout), seconds, median over the run's counted repetitions; null where unmeasured.
    #[serde(default)]
    pub run_overhead_s: Option<f64>,
    /// The load (other processes' CPU plus steal, in CPUs) above which a repetition was
    /// retaken (`interference=` of `lab matrix`); null where retakes were off or before
    /// they existed.
    #[serde(default)]
    pub interference_threshold: Option<f64>,
    /// How fast the machine ran during the run's kept repetitions, by the canary timed
    /// beside each (`harness::canary`); null before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine_speed: Option<MachineSpeed>,
}

/// The machine's speed over a run's kept repetitions (`env.machine_speed`): each one's
/// usual canary over its own, 1.0 = the run's usual speed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MachineSpeed {
    /// What the canary runs.
    pub work: String,
    /// The run's usual canary, milliseconds (the median of all it took).
    pub usual_canary_ms: f64,
    /// How far from 1.0 a kept repetition's speed may be before it is retaken; null where
    /// speeds were recorded but not judged (`machine_speed=off`).
    pub tolerance: Option<f64>,
    /// The 10th percentile of the kept repetitions' speeds.
    pub p10: f64,
    /// Their median.
    pub p50: f64,
    /// Their 90th percentile.
    pub p90: f64,
    /// Kept repetitions with a speed.
    pub repetitions: usize,
}

/// A fixed amount of single-thread work timed once per round (`env.reference`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Reference {
    /// What was run and how it was timed.
    pub work: String,
    /// Milliseconds the work took in each round, in the order of the rounds.
    pub per_round_ms: Vec<f64>,
    /// The median of `per_round_ms`.
    pub median_ms: f64,
}

impl EnvInfo {
    /// Reads the environment of the current process.
    pub fn capture() -> EnvInfo {
        let cpus = affinity::allowed_cpus();
        EnvInfo {
            cpu_model: cpu_model().unwrap_or_else(unknown),
            nproc: cpus.len(),
            kernel: read_trimmed("/proc/sys/kernel/osrelease").unwrap_or_else(unknown),
            rustc: env!("HARNESS_RUSTC_VERSION").to_owned(),
            git_commit: git_commit().unwrap_or_else(unknown),
            hostname: read_trimmed("/proc/sys/kernel/hostname").unwrap_or_else(unknown),
            affinity: affinity::format_cpu_list(&cpus),
            debug_build: cfg!(debug_assertions),
            clock_read_ns: crate::sampler::clock_read_ns(),
            reference: None,
            run_overhead_s: None,
            interference_threshold: None,
            machine_speed: None,
        }
    }
}

fn unknown() -> String {
    "unknown".to_owned()
}

fn read_trimmed(path: &str) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_owned())
}

fn cpu_model() -> Option<String> {
    let info = std::fs::read_to_string("/proc/cpuinfo").ok()?;
    info.lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.trim().to_owned())
}

fn git_commit() -> Option<String> {
    let run = |args: &[&str]| {
        Command::new("git")
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
    };
    let commit = run(&["rev-parse", "--short", "HEAD"])?;
    let dirty =
        run(&["status", "--porcelain", "--untracked-files=no"]).is_some_and(|s| !s.is_empty());
    Some(if dirty {
        format!("{commit}-dirty")
    } else {
        commit
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capture_fills_what_linux_always_has() {
        let env = EnvInfo::capture();
        assert!(env.nproc >= 1);
        assert_eq!(
            affinity::parse_cpu_list(&env.affinity).unwrap().len(),
            env.nproc
        );
        assert!(env.rustc.starts_with("rustc "), "{}", env.rustc);
        assert_ne!(env.kernel, "unknown");
    }
}
