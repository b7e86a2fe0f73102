//! The criterion group every hot path's benchmarks share: one group per variant (or
//! variant and mode), one benchmark per thread count, each timing `iters` operations of
//! something built once per thread count, outside the timed region.
//!
//! What a benchmark times is built only when criterion runs that benchmark (inside its
//! closure, which criterion calls only for benchmarks its filter selects) and dropped
//! when it is done, so `cargo bench -p <crate> -- <filter>` starts no threads or servers
//! for the benchmarks it skips.
//!
//! Only with the `criterion` feature, which the hot-path crates turn on for their
//! benchmarks alone: matrix cells never link criterion. This module builds and times
//! nothing itself; the closure a benchmark hands in decides what one operation is.

use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput};

use crate::team::ThreadTeam;

/// Runs `iters` operations and returns the time they took in all.
pub type Timed = Box<dyn FnMut(u64) -> Duration>;

/// One criterion group called `name` with a benchmark per entry of `threads`; `make`
/// builds what a benchmark times (started threads, a server) before its timed calls, and
/// only for a benchmark criterion runs. Each element is one operation, so criterion
/// reports operations per second as well.
pub fn thread_group(
    c: &mut Criterion,
    name: &str,
    threads: &[usize],
    mut make: impl FnMut(usize) -> Timed,
) {
    let mut group = c.benchmark_group(name);
    group.throughput(Throughput::Elements(1));
    for &n in threads {
        // Criterion calls the closure once per warm-up and measurement (and never for a
        // benchmark its filter skips): build on the first call, keep it for the rest.
        let mut timed: Option<Timed> = None;
        group.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, _| {
            let timed = timed.get_or_insert_with(|| make(n));
            b.iter_custom(timed)
        });
        // Dropped here, before the next benchmark builds its own.
        drop(timed);
    }
    group.finish();
}

/// What a [`ThreadTeam`] benchmark times: `iters` operations split over its threads.
pub fn team(team: ThreadTeam) -> Timed {
    Box::new(move |iters| team.run(iters))
}
