//! One place starts real servers: what every hot path that measures a real server
//! process needs, below the hot paths and knowing none of them.
//!
//! - [`death`]: a child that dies with the thread that started it (`PR_SET_PDEATHSIG`),
//!   and a child pinned to a set of CPUs, as `pre_exec` steps.
//! - [`cache`]: a server's data folder prepared once and kept between runs.
//! - [`process`]: any server as one foreground process of a cell, started, readied,
//!   pinned and killed with everything it started; [`procstat`]: its threads' time
//!   account from `/proc`; [`locks`]: the lock library preloaded into a server, its
//!   table of waits and holds per lock, and the delay experiment on one lock.
//! - [`postgres`]: the lab's own PostgreSQL in a scratch folder, on a free port.
//!
//! It does not measure anything, and it has no scenario parameters: a hot path decides
//! what to start and what to ask the server.

pub mod cache;
pub mod death;
pub mod locks;
pub mod postgres;
pub mod process;
pub mod procstat;
