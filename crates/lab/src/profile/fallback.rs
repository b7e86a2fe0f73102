//! On-CPU sampling with pprof-rs, for where perf events are not allowed.
//!
//! pprof samples with `setitimer(ITIMER_PROF)` (this kernel delivers roughly 100-250
//! samples per CPU-second whatever is asked) and unwinds inside a signal handler, which is
//! not safe inside libc, libgcc or the vdso: those samples are dropped (the blocklist),
//! so this profile understates time in the C library and shows no kernel frames. Every
//! flamegraph it makes says so. It is a fallback, not the default.

use std::fmt::Write as _;

use super::stacks::{tidy, Stacks};

/// Frequency asked of the sampler (the kernel delivers less; see the module doc).
pub const RATE_HZ: u32 = 997;

/// Libraries in which unwinding from a signal handler is not safe (pprof-rs README).
const BLOCKLIST: &[&str] = &["libc", "libgcc", "pthread", "vdso"];

/// A running pprof sampler.
pub struct PprofSampler {
    guard: pprof::ProfilerGuard<'static>,
}

impl PprofSampler {
    /// Starts sampling every thread of the process.
    pub fn start() -> Result<PprofSampler, String> {
        pprof::ProfilerGuardBuilder::default()
            .frequency(RATE_HZ as i32)
            .blocklist(BLOCKLIST)
            .build()
            .map(|guard| PprofSampler { guard })
            .map_err(|e| format!("cannot start pprof: {e}"))
    }

    /// Stops sampling and folds what was seen; worker stacks get `cell` as their root.
    pub fn finish(self, cell: &str) -> Result<(Vec<String>, u64), String> {
        let report = self
            .guard
            .report()
            .build()
            .map_err(|e| format!("cannot build the pprof profile: {e}"))?;
        let mut stacks = Stacks::default();
        for (frames, count) in &report.data {
            let mut names = Vec::new();
            for frame in frames.frames.iter().rev() {
                for symbol in frame.iter().rev() {
                    let mut name = String::new();
                    let _ = write!(name, "{symbol}");
                    names.push(name);
                }
            }
            stacks.add(
                &tidy(&frames.thread_name, &names, cell),
                (*count).max(0) as u64,
            );
        }
        Ok(stacks.into_lines())
    }
}
