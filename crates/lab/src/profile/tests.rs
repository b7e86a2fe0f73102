//! Profiles of workloads whose answer is known: a spin in a named function, a sleep on a
//! named lock, a libc call; and the fallback when perf cannot run.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use harness::runner::{self, RunSettings};
use harness::{OpCtx, Outcome, Worker, Workload};

use super::*;

/// The probe is process-wide: one profiled run at a time.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

#[inline(never)]
fn spin_in_known_function() -> u64 {
    let start = Instant::now();
    let mut x = 1u64;
    while start.elapsed() < Duration::from_micros(200) {
        for _ in 0..1000 {
            x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
        }
    }
    x
}

#[inline(never)]
fn hold_known_lock(lock: &Mutex<()>, ctx: &mut OpCtx) {
    let _guard = ctx.acquire(|| lock.try_lock().ok(), || lock.lock().unwrap());
    // Short holds: many waits, each short beside the window, as on a real hot path.
    std::thread::sleep(Duration::from_micros(200));
}

#[inline(never)]
fn write_to_dev_null(file: &mut std::fs::File) {
    use std::io::Write;
    for _ in 0..64 {
        let _ = file.write(b"x");
    }
}

enum Kind {
    Spin,
    Lock(Mutex<()>),
    Write,
}

struct Known(Kind);
struct KnownWorker<'a>(&'a Known, Option<std::fs::File>);

impl Worker for KnownWorker<'_> {
    fn op(&mut self, ctx: &mut OpCtx) -> Outcome {
        match &self.0 .0 {
            Kind::Spin => {
                std::hint::black_box(spin_in_known_function());
            }
            Kind::Lock(lock) => hold_known_lock(lock, ctx),
            Kind::Write => write_to_dev_null(self.1.as_mut().expect("opened")),
        }
        Outcome::OK
    }
}

impl<'a> Workload for &'a Known {
    type Worker = KnownWorker<'a>;
    fn worker(&self, _index: usize, _threads: usize) -> Self::Worker {
        let file = matches!(self.0, Kind::Write).then(|| {
            std::fs::OpenOptions::new()
                .write(true)
                .open("/dev/null")
                .unwrap()
        });
        KnownWorker(self, file)
    }
    fn verify(&self, _workers: &[Self::Worker]) -> Result<(), String> {
        Ok(())
    }
    fn waits_measured(&self) -> bool {
        true
    }
}

/// Profiles `kind` on `threads` threads for `ms` and returns the profile and the blocked
/// time the runner measured.
fn profile(
    kind: Kind,
    threads: usize,
    ms: u64,
    choice: &str,
    perf: &str,
) -> (CellProfile, Duration) {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let known = Known(kind);
    let session = Session::start_with("test/known", choice, perf).unwrap();
    let m = runner::run(
        &&known,
        RunSettings {
            threads,
            warmup: Duration::from_millis(20),
            duration: Duration::from_millis(ms),
        },
    )
    .unwrap();
    (session.finish().unwrap(), m.waited)
}

/// Share of the weight of `lines` whose stack names `frame`.
fn share(lines: &[String], frame: &str) -> f64 {
    let weight = |l: &String| stacks::weight(l) as f64;
    let total: f64 = lines.iter().map(weight).sum();
    let hit: f64 = lines.iter().filter(|l| l.contains(frame)).map(weight).sum();
    hit / total.max(1.0)
}

fn perf_works() -> bool {
    std::process::Command::new("perf")
        .args(["record", "-e", "cpu-clock", "-o", "/dev/null", "--", "true"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

#[test]
fn a_spinning_function_dominates_the_cpu_profile() {
    let (p, _) = profile(Kind::Spin, 1, 400, "auto", "perf");
    assert!(p.samples > 0, "{}", p.how);
    assert!(
        p.lines
            .iter()
            .all(|l| l.starts_with("test/known;") || !l.contains("spin_in")),
        "worker stacks are rooted at the cell: {:?}",
        p.lines
    );
    // Over the cell's own stacks: where perf is refused the fallback samples the whole
    // test process, and another test on the other CPU would dilute a share of all.
    let rooted: Vec<String> = p
        .lines
        .iter()
        .filter(|l| l.starts_with("test/known;"))
        .cloned()
        .collect();
    let s = share(&rooted, "spin_in_known_function");
    assert!(
        s > 0.6,
        "spin_in_known_function has {s:.2} of {} samples ({})",
        p.samples,
        p.how
    );
    if perf_works() {
        assert_eq!((p.sampler, p.rate_hz), ("perf", perf::RATE_HZ));
    }
}

#[test]
fn a_contended_lock_dominates_the_wait_profile_and_its_total_matches() {
    let (p, measured) = profile(Kind::Lock(Mutex::new(())), 4, 400, "auto", "perf");
    let w = &p.waits;
    assert!(
        w.lines.iter().all(|l| !l.contains("trace")),
        "capture frames are cut: {:?}",
        w.lines
    );
    let s = share(&w.lines, "hold_known_lock");
    assert!(
        s > 0.9,
        "hold_known_lock has {s:.2} of the wait profile: {:?}",
        w.lines
    );
    let measured = measured.as_secs_f64();
    assert!(measured > 0.0);
    assert!(
        (w.seconds - measured).abs() <= 0.2 * measured,
        "off-CPU {:.3} s vs measured {measured:.3} s",
        w.seconds
    );
}

#[test]
fn a_libc_call_shows_in_the_cpu_profile() {
    if !perf_works() {
        eprintln!("perf cannot run here: the fallback drops libc frames by design");
        return;
    }
    let (p, _) = profile(Kind::Write, 1, 400, "perf", "perf");
    assert_eq!(p.sampler, "perf");
    let libc = share(&p.lines, "write");
    let caller = share(&p.lines, "write_to_dev_null");
    assert!(
        caller > 0.5,
        "{caller:.2}: {:?}",
        &p.lines[..p.lines.len().min(5)]
    );
    // Frames below the Rust caller: libc's write wrapper or the kernel's.
    let below: f64 = {
        let total: f64 = p.lines.iter().map(|l| stacks::weight(l) as f64).sum();
        p.lines
            .iter()
            .filter(|l| {
                l.split_once("write_to_dev_null")
                    .is_some_and(|(_, rest)| rest.contains("write") || rest.contains("_[k]"))
            })
            .map(|l| stacks::weight(l) as f64)
            .sum::<f64>()
            / total.max(1.0)
    };
    assert!(
        libc > 0.5 && below > 0.3,
        "libc/kernel frames below the caller: {below:.2}"
    );
}

#[test]
fn without_perf_the_fallback_samples_and_says_so() {
    let (p, _) = profile(Kind::Spin, 1, 300, "auto", "/nonexistent/perf");
    assert_eq!((p.sampler, p.rate_hz), ("pprof", fallback::RATE_HZ));
    assert!(p.how.contains("fallback: perf unavailable"), "{}", p.how);
    let dir = tempfile::tempdir().unwrap();
    let prefix = dir.path().join("cell").display().to_string();
    let r = write_profile(&p, &prefix, "t", None).unwrap();
    assert_eq!(r.sampler, "pprof");
    let svg = std::fs::read_to_string(&r.svg).unwrap();
    assert!(svg.contains("pprof") && svg.contains("fallback"));
    let off = r.off_cpu.unwrap();
    assert!(std::fs::read_to_string(off.svg)
        .unwrap()
        .contains("does not measure"));
}
