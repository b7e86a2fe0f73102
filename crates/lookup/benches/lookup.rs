//! Criterion benchmarks of every lookup variant at several thread counts.
//!
//! One group per variant, one benchmark per thread count, so criterion's report draws
//! each variant's time per search against threads. Threads are started once per
//! benchmark, outside the timed region ([`harness::team::ThreadTeam`]); each timed call
//! splits `iters` searches over them, so the figure is the team's time per search
//! (lower is better; perfect scaling halves it when threads double, up to the cores).
//!
//! `cargo bench -p lookup -- --profile-time 5` writes a flamegraph per benchmark under
//! criterion's output folder (`<benchmark>/profile/flamegraph.svg`).

use std::cell::OnceCell;
use std::sync::Arc;
use std::time::Duration;

use criterion::{criterion_main, Criterion};
use harness::bench;
use harness::team::ThreadTeam;
use lookup::directory::{Directory, DirectoryData};
use lookup::variants::{self, Design, WithDirectory};
use lookup::workload::{KeyDistribution, LookupWorkload, WorkloadShape};
use pprof::criterion::{Output, PProfProfiler};

const THREADS: &[usize] = &[1, 2, 4, 8];

struct MakeTeam<'a> {
    data: &'a DirectoryData,
    threads: usize,
}

impl WithDirectory for MakeTeam<'_> {
    type Output = ThreadTeam;
    fn call<D: Directory>(self, dir: Arc<D>) -> ThreadTeam {
        let shape = WorkloadShape {
            write_pct: 0,
            keys: KeyDistribution::Uniform,
            seed: 0x389d5,
        };
        let workload = LookupWorkload::new(dir, self.data, shape);
        ThreadTeam::for_workload(&workload, self.threads)
    }
}

fn searches(c: &mut Criterion) {
    // Generated on the first benchmark criterion runs, not for a filter that selects none.
    let data = OnceCell::new();
    for variant in lookup::registry::VARIANTS {
        let name = Design::parse(variant.name).expect("listed variants parse");
        let group = format!("lookup/{}", variant.name);
        bench::thread_group(c, &group, THREADS, |threads| {
            let data = data.get_or_init(|| DirectoryData::generate(6000, 4000));
            let make = MakeTeam { data, threads };
            let team = variants::with_directory(name, data, 6000, make);
            bench::team(team.expect("building the directory"))
        });
    }
}

fn config() -> Criterion {
    Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .with_profiler(PProfProfiler::new(250, Output::Flamegraph(None)))
}

/// Every benchmark of this file under [`config`], which criterion's command-line flags
/// may override. Written out rather than through `criterion_group!`, whose function has
/// no documentation.
fn benches() {
    let mut criterion = config().configure_from_args();
    searches(&mut criterion);
}
criterion_main!(benches);
