//! The reference measurement: a fixed amount of single-thread integer work that `lab
//! matrix` times once per round (`env.reference`), so that two results files can be told
//! to come from comparable machines, or from one machine at one speed (`comparable`).
//!
//! It measures the speed of one core when it runs, not the load: it is timed by the
//! thread's own CPU clock, and the fastest of a few blocks counts, so a block that another
//! process preempted does not make the machine look slower (the load is `interference`'s
//! business). What moves it: another CPU model, another clock frequency (a power-saving
//! governor, thermal throttling, turbo), another build, or a hypervisor's neighbours
//! sharing the core's caches.
//!
//! Not a benchmark of anything the hot paths do.

use std::time::Duration;

use harness::env::{EnvInfo, Reference};

/// Steps of the loop per block in a release build: about 8 ms (2 ns a step) on the
/// 2-core machine this was written on, so a round's reference takes about 40 ms.
const STEPS: u64 = 1 << 22;

/// A debug build runs the same loop some 30 times slower: fewer steps keep a round's
/// reference short there (the figures of a debug build are not compared anyway).
const DEBUG_STEPS: u64 = 1 << 17;

/// Blocks per round; the fastest counts.
const BLOCKS: usize = 5;

fn steps() -> u64 {
    if cfg!(debug_assertions) {
        DEBUG_STEPS
    } else {
        STEPS
    }
}

/// What the reference runs, as recorded in `env.reference.work`.
pub fn work() -> String {
    format!(
        "xorshift64, {} steps, fastest of {BLOCKS} blocks by thread CPU time{}",
        steps(),
        if cfg!(debug_assertions) {
            " (debug build)"
        } else {
            ""
        }
    )
}

/// The calling thread's CPU time so far.
fn thread_cpu() -> Duration {
    // SAFETY: clock_gettime only writes into the struct we pass.
    let ts = unsafe {
        let mut ts: libc::timespec = std::mem::zeroed();
        libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts);
        ts
    };
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// `steps` dependent xorshift steps: no closed form, nothing to vectorise, no memory.
fn spin(steps: u64) -> u64 {
    let mut x = std::hint::black_box(0x9E37_79B9_7F4A_7C15u64);
    for _ in 0..steps {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
    }
    std::hint::black_box(x)
}

/// Times the reference once: milliseconds of its fastest block.
pub fn measure() -> f64 {
    let steps = steps();
    (0..BLOCKS)
        .map(|_| {
            let start = thread_cpu();
            spin(steps);
            (thread_cpu() - start).as_secs_f64() * 1e3
        })
        .fold(f64::INFINITY, f64::min)
}

/// The environment of a matrix run with the instrument's own figures: the reference of
/// each round so far, the median cost of a child beyond its warm-up and window, and the
/// retake threshold.
pub fn env(per_round_ms: &[f64], overheads_s: &[f64], threshold: Option<f64>) -> EnvInfo {
    EnvInfo {
        reference: summary(per_round_ms),
        run_overhead_s: (!overheads_s.is_empty()).then(|| harness::stats::median(overheads_s)),
        interference_threshold: threshold,
        ..EnvInfo::capture()
    }
}

/// The reference of a run from its per-round figures.
pub fn summary(per_round_ms: &[f64]) -> Option<Reference> {
    (!per_round_ms.is_empty()).then(|| Reference {
        work: work(),
        per_round_ms: per_round_ms.to_vec(),
        median_ms: harness::stats::median(per_round_ms),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reference_takes_some_time_and_is_summarised() {
        let ms = measure();
        assert!(ms.is_finite() && ms > 0.0, "{ms}");
        let r = summary(&[10.0, 12.0, 11.0]).unwrap();
        assert_eq!(r.median_ms, 11.0);
        assert_eq!(r.per_round_ms.len(), 3);
        assert!(r.work.contains("xorshift64"));
        assert!(summary(&[]).is_none());
    }
}
