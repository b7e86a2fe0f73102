//! Turns raw stacks (from perf, pprof or a captured backtrace) into the frames a reader
//! wants to see: the hot path's own frames on top of one frame named after the cell.
//!
//! Thread-start, closure and runner frames below `harness::runner::worker_loop` are the
//! same in every cell and only push the interesting frames up the graph; they are replaced
//! by one frame (`lookup/global-mutex`) that carries no thread count, so that profiles of
//! different thread counts line up frame for frame in a differential. Helper threads keep
//! their (folded) name as the root. This module does not sample.

use std::collections::BTreeMap;

/// The frame that runs every worker; everything below it is runner scaffolding.
/// (perf names it `harness::runner::worker_loop`, an inlined copy `worker_loop<...>`).
const WORKER_LOOP: &str = "worker_loop";
/// Where std starts a spawned thread's closure; everything below it is thread start.
const THREAD_START: &str = "__rust_begin_short_backtrace";

/// The root frame of a cell's worker stacks: `hot_path/variant`.
pub fn cell_frame(hot_path: &str, variant: &str) -> String {
    format!("{hot_path}/{variant}")
}

/// `worker-12` -> `worker`, `lease-committer` unchanged, `` -> `unnamed`: thread names
/// without their index, so that many workers fold into one root.
pub fn fold_thread(name: &str) -> String {
    let name = name.trim();
    let base = match name.rsplit_once('-') {
        Some((base, n)) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => base,
        _ => name,
    };
    if base.is_empty() {
        "unnamed".to_owned()
    } else {
        base.to_owned()
    }
}

/// One stack, root first, as the frames to fold: the cell frame and the frames above the
/// worker loop for a worker; the thread's folded name and the frames above thread start
/// for any other thread.
pub fn tidy(thread: &str, frames: &[String], cell: &str) -> Vec<String> {
    let clean = |f: &String| f.replace(';', ":");
    if let Some(i) = frames.iter().rposition(|f| f.contains(WORKER_LOOP)) {
        let mut out = vec![cell.to_owned()];
        out.extend(frames[i + 1..].iter().map(clean));
        return out;
    }
    let from = frames
        .iter()
        .rposition(|f| f.contains(THREAD_START))
        .map_or(0, |i| i + 1);
    let mut out = vec![fold_thread(thread)];
    out.extend(frames[from..].iter().map(clean));
    out
}

/// Folded stacks being built: `frame;frame;frame` -> weight.
#[derive(Debug, Default, Clone)]
pub struct Stacks {
    counts: BTreeMap<String, u64>,
}

impl Stacks {
    /// Adds `weight` to one stack (root first).
    pub fn add(&mut self, frames: &[String], weight: u64) {
        if weight > 0 && !frames.is_empty() {
            *self.counts.entry(frames.join(";")).or_default() += weight;
        }
    }

    /// Sorted folded lines and their total weight.
    pub fn into_lines(self) -> (Vec<String>, u64) {
        let total = self.counts.values().sum();
        let lines = self
            .counts
            .into_iter()
            .map(|(stack, n)| format!("{stack} {n}"))
            .collect();
        (lines, total)
    }
}

/// The weight of a folded line (its last space-separated field).
#[cfg(test)]
pub fn weight(line: &str) -> u64 {
    line.rsplit(' ')
        .next()
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frames(text: &str) -> Vec<String> {
        text.split(';').map(str::to_owned).collect()
    }

    #[test]
    fn thread_names_lose_their_index() {
        assert_eq!(fold_thread("worker-11"), "worker");
        assert_eq!(fold_thread("worker"), "worker");
        assert_eq!(fold_thread("lease-committer"), "lease-committer");
        assert_eq!(fold_thread(""), "unnamed");
    }

    #[test]
    fn runner_frames_collapse_into_the_cell() {
        let stack = frames(
            "clone3;start_thread;std::sys::backtrace::__rust_begin_short_backtrace;\
             {closure#0};harness::runner::worker_loop;Worker::op;search;lock",
        );
        assert_eq!(
            tidy("worker-3", &stack, "lookup/global-mutex"),
            frames("lookup/global-mutex;Worker::op;search;lock")
        );
        let helper = frames("clone3;start_thread;__rust_begin_short_backtrace;committer;fsync");
        assert_eq!(
            tidy("lease-committer", &helper, "x"),
            frames("lease-committer;committer;fsync")
        );
        assert_eq!(
            tidy("lab", &frames("main;run"), "x"),
            frames("lab;main;run")
        );
    }

    #[test]
    fn stacks_fold_and_sum() {
        let mut s = Stacks::default();
        s.add(&frames("a;b"), 2);
        s.add(&frames("a;b"), 3);
        s.add(&frames("a;c"), 1);
        s.add(&frames("a;d"), 0);
        let (lines, total) = s.into_lines();
        assert_eq!(lines, vec!["a;b 5".to_owned(), "a;c 1".to_owned()]);
        assert_eq!(total, 6);
        assert_eq!(weight("x;y z 12"), 12);
    }
}
