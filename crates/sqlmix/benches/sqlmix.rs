//! Criterion benchmarks of every sqlmix variant at a few thread counts: the team's time
//! per transaction (95% reads, 20 models), threads started outside the timed region.

use std::sync::Arc;
use std::time::Duration;

use criterion::{criterion_main, Criterion};
use harness::bench;
use harness::team::ThreadTeam;
use harness::{HotPath, Params};
use sqlmix::runner::TxnRunner;
use sqlmix::workload::SqlmixWorkload;
use sqlmix::SqlmixHotPath;

fn transactions(c: &mut Criterion) {
    let params = Params::defaults(SqlmixHotPath.params());
    for variant in SqlmixHotPath.variants() {
        let group = format!("sqlmix/{}", variant.name);
        bench::thread_group(c, &group, &[1, 2, 4], |threads| {
            let config = sqlmix::config(variant.name, &params).expect("default config");
            let runner = Arc::new(TxnRunner::new(&config).expect("databases"));
            let workload = SqlmixWorkload::new(runner, config.models, config.units, 95);
            bench::team(ThreadTeam::for_workload(&workload, threads))
        });
    }
}

fn config() -> Criterion {
    Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .sample_size(20)
}

/// Every benchmark of this file under [`config`], which criterion's command-line flags
/// may override. Written out rather than through `criterion_group!`, whose function has
/// no documentation.
fn benches() {
    let mut criterion = config().configure_from_args();
    transactions(&mut criterion);
}
criterion_main!(benches);
