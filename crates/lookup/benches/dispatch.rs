//! Criterion benchmarks of the dispatch modes: how long a server takes per search when
//! searches reach its threads directly, through one locked queue, through a rayon pool,
//! or in batches (the fix).
//!
//! One group per directory and dispatch, one benchmark per thread count. For `direct`
//! the threads run their own searches ([`harness::team::ThreadTeam`]); for the others a
//! [`lookup::dispatch::Server`] is started once per benchmark criterion runs (none for
//! those its filter skips), outside the timed region, and each timed call has its connection threads issue `iters` requests and waits for
//! every answer, so the figure is the time per search with its hand-off (lower is better).
//!
//! `cargo bench -p lookup --bench dispatch -- --profile-time 5` writes a flamegraph per
//! benchmark under criterion's output folder.

use std::cell::OnceCell;
use std::sync::Arc;
use std::time::Duration;

use criterion::{criterion_main, Criterion};
use harness::bench;
use harness::team::ThreadTeam;
use lookup::directory::{Directory, DirectoryData};
use lookup::dispatch::{Dispatch, DispatchConfig, Server};
use lookup::variants::{self, Design, WithDirectory};
use lookup::workload::{KeyDistribution, LookupWorkload, WorkloadShape};
use pprof::criterion::{Output, PProfProfiler};

const THREADS: &[usize] = &[1, 2, 4];
const DIRECTORIES: &[&str] = &["global-mutex", "arc-swap-snapshot"];

struct MakeBench<'a> {
    data: &'a DirectoryData,
    dispatch: Dispatch,
    threads: usize,
}

impl WithDirectory for MakeBench<'_> {
    /// Runs `iters` searches in a timed call, whatever the dispatch.
    type Output = bench::Timed;
    fn call<D: Directory>(self, dir: Arc<D>) -> bench::Timed {
        let shape = WorkloadShape {
            write_pct: 0,
            keys: KeyDistribution::Uniform,
            seed: 0x389d5,
        };
        let workload = LookupWorkload::new(dir, self.data, shape);
        if self.dispatch == Dispatch::Direct {
            return bench::team(ThreadTeam::for_workload(&workload, self.threads));
        }
        let config = DispatchConfig {
            dispatch: self.dispatch,
            threads: self.threads,
            connections: 2,
            in_flight: 128,
            batch: 16,
        };
        let server = Server::start(&workload, config).expect("starting the server");
        Box::new(move |iters| server.round(iters))
    }
}

fn dispatches(c: &mut Criterion) {
    // Generated on the first benchmark criterion runs, not for a filter that selects none.
    let data = OnceCell::new();
    for directory in DIRECTORIES {
        let name = Design::parse(directory).expect("listed variants parse");
        for dispatch in Dispatch::NAMES {
            let dispatch = Dispatch::parse(dispatch).expect("listed dispatches parse");
            let group = format!("dispatch/{directory}/{}", dispatch.name());
            bench::thread_group(c, &group, THREADS, |threads| {
                let data = data.get_or_init(|| DirectoryData::generate(6000, 4000));
                let make = MakeBench {
                    data,
                    dispatch,
                    threads,
                };
                variants::with_directory(name, data, 6000, make).expect("building the directory")
            });
        }
    }
}

fn config() -> Criterion {
    Criterion::default()
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1))
        .with_profiler(PProfProfiler::new(250, Output::Flamegraph(None)))
}

/// Every benchmark of this file under [`config`], which criterion's command-line flags
/// may override. Written out rather than through `criterion_group!`, whose function has
/// no documentation.
fn benches() {
    let mut criterion = config().configure_from_args();
    dispatches(&mut criterion);
}
criterion_main!(benches);
