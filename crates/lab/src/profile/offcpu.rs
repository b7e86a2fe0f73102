//! Off-CPU (wait) stacks from inside the process: every wait a hot path measures
//! ([`harness::OpCtx::record_wait`]) during the profiling repetition's window may capture
//! its call stack, weighted by blocked time.
//!
//! Capturing on every wait would cost more than the waits on a busy lock, so waits are
//! sampled as Go's block profile does: a wait of at least [`EVERY_NS`] is always kept with
//! its own duration; a shorter one is kept with probability `waited / EVERY_NS` and
//! weight `EVERY_NS`. The expected total is the measured blocked time, at most about
//! five captures per millisecond of blocking per thread. Stacks are raw addresses while the
//! window is open and are symbolized once at the end. This module sees only waits that a
//! hot path measures: it is not a scheduler trace.

use std::cell::Cell;
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use super::stacks::{tidy, Stacks};

/// The sampling period of blocked time, in nanoseconds.
pub const EVERY_NS: u64 = 200_000;

/// Frames deeper than this are cut (the runner's frames sit near the root anyway).
const MAX_FRAMES: usize = 96;

struct Captured {
    id: std::thread::ThreadId,
    thread: String,
    ips: Vec<usize>,
    ns: u64,
}

/// Wait stacks captured so far.
#[derive(Default)]
pub struct WaitStacks {
    captured: Mutex<Vec<Captured>>,
}

/// Folded wait stacks, weighted in microseconds of blocked time.
pub struct WaitProfile {
    /// Folded lines, sorted.
    pub lines: Vec<String>,
    /// Blocked time the lines cover.
    pub seconds: f64,
    /// Stacks captured.
    pub stacks: u64,
}

thread_local! {
    static RNG: Cell<u64> = const { Cell::new(0) };
}

/// A fast per-thread random number (xorshift), seeded from the thread's address space.
fn next_random() -> u64 {
    RNG.with(|r| {
        let mut x = r.get();
        if x == 0 {
            x = (r as *const _ as u64) | 1;
        }
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        r.set(x);
        x
    })
}

impl WaitStacks {
    /// Accounts one measured wait of the calling thread.
    pub fn waited(&self, waited: Duration) {
        let ns = waited.as_nanos() as u64;
        let weight = if ns >= EVERY_NS {
            ns
        } else if ns > 0 && next_random() % EVERY_NS < ns {
            EVERY_NS
        } else {
            return;
        };
        let mut ips = Vec::with_capacity(48);
        // SAFETY: on Unix the unwinder behind `trace_unsynchronized` is thread-safe; the
        // synchronized `trace` would add a process-wide lock to every capture.
        unsafe {
            backtrace::trace_unsynchronized(|frame| {
                ips.push(frame.ip() as usize);
                ips.len() < MAX_FRAMES
            })
        };
        let current = std::thread::current();
        let thread = current.name().unwrap_or("").to_owned();
        self.captured
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(Captured {
                id: current.id(),
                thread,
                ips,
                ns: weight,
            });
    }

    /// Forgets the calling thread's captures: its measured figures were reset.
    pub fn thread_reset(&self) {
        let id = std::thread::current().id();
        self.captured
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|c| c.id != id);
    }

    /// Symbolizes and folds what was captured; worker stacks get `cell` as their root.
    pub fn finish(&self, cell: &str) -> WaitProfile {
        let captured =
            std::mem::take(&mut *self.captured.lock().unwrap_or_else(|e| e.into_inner()));
        let mut names: HashMap<usize, Vec<String>> = HashMap::new();
        let mut stacks = Stacks::default();
        let mut total_ns = 0u64;
        for c in &captured {
            // Leaf first, inlined frames innermost first, as the unwinder gives them.
            let mut frames: Vec<String> = Vec::new();
            for (i, &ip) in c.ips.iter().enumerate() {
                // A return address points after the call: look up the call itself.
                let at = if i == 0 { ip } else { ip.saturating_sub(1) };
                let symbols = names.entry(at).or_insert_with(|| symbolize(at));
                frames.extend(symbols.iter().cloned());
            }
            frames.reverse();
            // Drop the capture machinery: everything above `record_wait` (inlined frames
            // carry short names, hence the two spellings).
            if let Some(cut) = frames
                .iter()
                .position(|f| f == "record_wait" || f.ends_with("::record_wait"))
            {
                frames.truncate(cut + 1);
            } else if let Some(cut) = frames.iter().position(|f| f.contains("harness::probe::")) {
                frames.truncate(cut);
            }
            total_ns += c.ns;
            stacks.add(&tidy(&c.thread, &frames, cell), c.ns.div_ceil(1000));
        }
        let (lines, _) = stacks.into_lines();
        WaitProfile {
            lines,
            seconds: total_ns as f64 / 1e9,
            stacks: captured.len() as u64,
        }
    }
}

fn symbolize(ip: usize) -> Vec<String> {
    let mut out = Vec::new();
    backtrace::resolve(ip as *mut std::ffi::c_void, |symbol| {
        out.push(match symbol.name() {
            Some(name) => format!("{name:#}"),
            None => format!("{ip:#x}"),
        });
    });
    if out.is_empty() {
        out.push(format!("{ip:#x}"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sampled_short_waits_add_up_to_their_total() {
        let stacks = WaitStacks::default();
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    for i in 0..50_000u64 {
                        stacks.waited(Duration::from_nanos(1_000 + (i % 40) * 1_000));
                    }
                });
            }
        });
        // 4 x 50,000 waits of 1..40 µs: 4.1 s in all.
        let p = stacks.finish("c");
        assert!((p.seconds - 4.1).abs() < 0.1 * 4.1, "{} s", p.seconds);
    }
}
