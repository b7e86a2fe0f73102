//! Criterion benchmarks of every lease store at a few thread counts: the team's time per
//! operation (mostly extends by the holder), 500 applications x 3 units.

use std::time::Duration;

use criterion::{criterion_main, Criterion};
use harness::bench;
use harness::{HotPath, Params, RunSettings};
use lease::LeaseHotPath;

/// Criterion times a fixed number of operations; the lease workload owns its stores and
/// clock, so each sample runs one short harness window and reports time per operation.
fn extends(c: &mut Criterion) {
    let params = Params::defaults(LeaseHotPath.params());
    for variant in LeaseHotPath.variants() {
        let group = format!("lease/{}", variant.name);
        bench::thread_group(c, &group, &[1, 2, 4], |threads| {
            let params = params.clone();
            Box::new(move |iters| {
                let settings = RunSettings {
                    threads,
                    warmup: Duration::ZERO,
                    duration: Duration::from_millis(100),
                };
                let m = LeaseHotPath
                    .measure(variant.name, &params, settings)
                    .expect("lease run");
                let per_op = m.window.as_secs_f64() / m.ops.max(1) as f64;
                Duration::from_secs_f64(per_op * iters as f64)
            })
        });
    }
}

fn config() -> Criterion {
    Criterion::default()
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(2))
        .sample_size(10)
}

/// Every benchmark of this file under [`config`], which criterion's command-line flags
/// may override. Written out rather than through `criterion_group!`, whose function has
/// no documentation.
fn benches() {
    let mut criterion = config().configure_from_args();
    extends(&mut criterion);
}
criterion_main!(benches);
