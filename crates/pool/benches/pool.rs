//! Criterion benchmarks of every pool design in acquisition-only mode (service time 0,
//! HikariCP's "connection cycle"): the team's time per acquire + release, threads started
//! outside the timed region.

use std::sync::Arc;
use std::time::Duration;

use criterion::{criterion_main, Criterion};
use harness::bench;
use harness::team::ThreadTeam;
use pool::pools::{DriverV3, LockFreeBag, Pool, R2d2Pool, SemaphorePool};
use pool::workload::{PoolWorkload, RequestShape};

const SHAPE: RequestShape = RequestShape::acquisition_only(Duration::from_secs(5));

fn team<P: Pool>(pool: P, threads: usize) -> ThreadTeam {
    let workload = PoolWorkload::new(Arc::new(pool), 1, 8, SHAPE);
    ThreadTeam::for_workload(&workload, threads)
}

fn cycles(c: &mut Criterion) {
    for variant in ["driver-v3", "semaphore", "lock-free", "r2d2"] {
        let group = format!("pool/{variant}");
        bench::thread_group(c, &group, &[1, 2, 4, 8], |threads| {
            // One connection of 8 slots: 8 threads just fill it, so waiting starts past 8.
            bench::team(match variant {
                "driver-v3" => team(DriverV3::new(1, 8), threads),
                "semaphore" => team(SemaphorePool::new(1, 8), threads),
                "lock-free" => team(LockFreeBag::new(1, 8), threads),
                _ => team(R2d2Pool::new(1, 8).expect("r2d2 pool"), threads),
            })
        });
    }
}

fn config() -> Criterion {
    Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
}

/// Every benchmark of this file under [`config`], which criterion's command-line flags
/// may override. Written out rather than through `criterion_group!`, whose function has
/// no documentation.
fn benches() {
    let mut criterion = config().configure_from_args();
    cycles(&mut criterion);
}
criterion_main!(benches);
