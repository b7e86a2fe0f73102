//! The measuring instrument of contention-lab.
//!
//! A hot path (a crate such as `lookup`) describes one contended operation by implementing
//! [`Workload`]: it hands out one [`Worker`] per thread (made outside the timed loop, with
//! its own connection, RNG and key list), each worker performs one operation at a time and
//! reports an [`Outcome`], and after the run [`Workload::verify`] checks the invariants.
//! [`runner::run`] starts exactly `threads` OS threads with `std::thread::scope`, releases
//! them together behind a barrier, excludes a warm-up, counts operations in per-thread
//! tallies (never a shared counter in the hot loop, which would itself be a contention
//! point), records latency in per-thread HDR histograms, and returns a [`Measurement`].
//!
//! The harness also owns what every hot path shares: the result schema that `lab` writes
//! and users parse ([`schema`]), statistics over repetitions ([`stats`]), CPU affinity
//! ([`affinity`]), environment capture ([`mod@env`]), typed scenario parameters
//! ([`params`]), what else the machine did during a window ([`interference`]) and how fast it ran around
//! it ([`canary`]), the [`HotPath`] description that `lab` uses to enumerate and run a hot
//! path, a calibration workload ([`noop`]), a persistent thread team for criterion
//! benchmarks ([`team`]) and, with the `criterion` feature, their shared group (`bench`),
//! private folders and the `data_dir` parameter ([`scratch`]), the conformance test
//! every hot path runs ([`testing`]), and the conductor of resident sides that alternate
//! in short turns within one process ([`slices`]).
//!
//! It holds no verdict: what a seed's question asks and what the cells answer is the
//! `verdict` crate's, which sits on top of this one. It is not a command-line tool and
//! renders nothing: `lab` runs cells in child processes,
//! pins them to cores, profiles them (through the hooks in [`probe`]) and writes reports.
//!
//! Why plain scoped threads rather than a rayon pool: a cell must have exactly `threads`
//! workers that each own their state for the whole window, and a worker that panics must
//! end only its own thread; scoped threads give both with the least machinery.

pub mod account;
pub mod affinity;
#[cfg(feature = "criterion")]
pub mod bench;
pub mod canary;
pub mod env;
pub mod hotpath;
pub mod interference;
pub mod lock_table;
pub mod locks;
pub mod noop;
pub mod params;
pub mod probe;
pub mod runner;
pub mod sampler;
pub mod schema;
pub mod scratch;
pub mod slices;
pub mod stats;
pub mod team;
pub mod testing;
pub mod usl;
pub mod workload;

pub use hotpath::{HotPath, PairSide, Variant};
pub use params::{ParamKind, ParamSpec, Params};
pub use runner::{CellFailure, Measurement, RunSettings};
pub use schema::{CellRecord, Repetition};
pub use workload::{OpCtx, Outcome, Status, Worker, Workload};
