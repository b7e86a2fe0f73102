//! The canary: a fixed walk through memory, timed on every CPU of a cell just before its
//! threads start and just after they end, so that `lab` can tell a repetition measured
//! while the machine itself ran slow from one the code made slow.
//!
//! Why a canary and not only `/proc/stat` ([`crate::interference`]): on a shared virtual
//! machine the largest disturbance is invisible to the guest. A neighbour of the host
//! that shares a physical core (SMT) or the last-level cache slows a memory-bound loop by
//! 0.5-0.9x in phases of 0.1-1 s, while this guest's `/proc/stat` shows no other process
//! and no steal. Measured on the 2-core machine this was written on: a 4 MiB random walk
//! in 50 ms windows ranged 0.17-1.38x of its mean on an idle guest, a register-only loop
//! in the same minutes within 2%. The only witness of such a phase is the speed of work
//! like the cells' own, so the canary is a dependent pointer chase through 1 MiB (beyond
//! a core's L2, inside the L3), timed by the wall clock: preemption slows it too.
//!
//! It is measured with the cell idle (its workers not yet started, or joined), on a thread
//! pinned to each CPU of the cell's mask in turn, so it measures the machine and not the
//! cell. This module measures; the baseline a canary is compared with, and what a slow
//! one costs a repetition (a retake), are `lab`'s (`crates/lab/src/retake.rs`).
//!
//! Not the reference (`lab`'s `reference.rs`): that one takes the fastest of a few blocks
//! of register-only work by thread CPU time, so that it shows the machine's *kind* (model,
//! clock) and ignores load; the canary shows the machine's *state* and ignores nothing.

use std::sync::OnceLock;
use std::time::Instant;

use crate::affinity;

/// What the canary runs, as `env.machine_speed.work` records it.
pub const WORK: &str =
    "a dependent walk of 32 Ki steps through 1 MiB, by wall clock, on each CPU of the cell";

/// Entries of the walk: 256 Ki `u32`, 1 MiB (twice a core's L2 here, inside the L3).
const ENTRIES: usize = 1 << 18;

/// Steps timed on each CPU: about 0.6 ms on the machine this was written on (about 20 ns
/// a step): with the warm steps and the walk's shuffle, the canary adds about 5 ms to a
/// 2-core repetition. A witness, not a benchmark: a longer walk costs every repetition
/// of the matrix.
const STEPS: usize = 1 << 15;

/// Steps walked before the timed ones, to bring the buffer into this core's caches.
const WARM_STEPS: usize = 1 << 13;

/// A single cycle through every entry (Sattolo's shuffle), built once per process: a
/// dependent walk that no prefetcher can guess.
fn walk() -> &'static [u32] {
    static WALK: OnceLock<Vec<u32>> = OnceLock::new();
    WALK.get_or_init(|| {
        let mut next: Vec<u32> = (0..ENTRIES as u32).collect();
        let mut x: u64 = 0x2545_F491_4F6C_DD1D;
        for i in (1..ENTRIES).rev() {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let j = (x % i as u64) as usize;
            next.swap(i, j);
        }
        next
    })
}

fn chase(walk: &[u32], steps: usize) -> u32 {
    let mut at = std::hint::black_box(0u32);
    for _ in 0..steps {
        at = walk[at as usize];
    }
    std::hint::black_box(at)
}

/// Milliseconds of the timed walk on the calling thread, wherever it runs.
pub fn measure_here() -> f64 {
    let walk = walk();
    chase(walk, WARM_STEPS);
    let start = Instant::now();
    chase(walk, STEPS);
    start.elapsed().as_secs_f64() * 1e3
}

/// The canary on each CPU the calling thread may use, one after the other, each on a
/// thread of its own pinned to that CPU (the caller's mask is left as it is). Returns the
/// milliseconds per CPU, in the order of [`affinity::allowed_cpus`].
pub fn measure() -> Vec<f64> {
    affinity::allowed_cpus()
        .into_iter()
        .map(|cpu| {
            std::thread::spawn(move || {
                // Where pinning fails the walk still runs, on whichever allowed CPU.
                let _ = affinity::pin_to(cpu);
                measure_here()
            })
            .join()
            .unwrap_or(f64::NAN)
        })
        .filter(|ms| ms.is_finite())
        .collect()
}

/// One repetition's canary: the readings before its threads started and after they ended,
/// per CPU, in milliseconds.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Readings {
    /// Before the workers started.
    pub before: Vec<f64>,
    /// After they were joined.
    pub after: Vec<f64>,
}

impl Readings {
    /// The repetition's canary: the mean of all its readings (ms), `None` without any.
    pub fn mean_ms(&self) -> Option<f64> {
        let all: Vec<f64> = self.before.iter().chain(&self.after).copied().collect();
        (!all.is_empty()).then(|| all.iter().sum::<f64>() / all.len() as f64)
    }

    /// The slowest reading over the fastest: how much the machine's speed moved across
    /// the repetition and its CPUs (1.0 = not at all).
    pub fn spread(&self) -> Option<f64> {
        let all = self.before.iter().chain(&self.after);
        let (lo, hi) = all.fold((f64::INFINITY, 0.0f64), |(lo, hi), &x| {
            (lo.min(x), hi.max(x))
        });
        (hi > 0.0 && lo.is_finite() && lo > 0.0).then(|| hi / lo)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_walk_visits_every_entry_once_before_it_returns() {
        let walk = walk();
        let mut at = 0u32;
        let mut steps = 0;
        loop {
            at = walk[at as usize];
            steps += 1;
            if at == 0 {
                break;
            }
            assert!(steps <= ENTRIES, "the walk has a cycle that misses entry 0");
        }
        assert_eq!(steps, ENTRIES, "one cycle through every entry");
    }

    #[test]
    fn a_canary_is_timed_on_every_allowed_cpu() {
        let ms = measure();
        assert_eq!(ms.len(), affinity::allowed_cpus().len());
        assert!(ms.iter().all(|&m| m > 0.0 && m.is_finite()), "{ms:?}");
    }

    #[test]
    fn readings_summarise_as_their_mean_and_their_spread() {
        let r = Readings {
            before: vec![3.0, 4.0],
            after: vec![3.0, 6.0],
        };
        assert_eq!(r.mean_ms(), Some(4.0));
        assert_eq!(r.spread(), Some(2.0));
        assert_eq!(Readings::default().mean_ms(), None);
        assert_eq!(Readings::default().spread(), None);
    }
}
