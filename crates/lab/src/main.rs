//! `lab`: the thin command on top of contention-lab's crates. It parses the command line,
//! hands the work to a module and turns any error into one line on stderr and a non-zero
//! exit (2 for bad input, 1 for a run whose cells failed), never a backtrace.
//!
//! Everything is in the library (`lib.rs`); this file only calls it.

use std::process::ExitCode;

fn main() -> ExitCode {
    lab::main()
}
