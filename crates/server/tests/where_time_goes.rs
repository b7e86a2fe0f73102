//! `where_time_goes` on a real workload: the tiny test server (`lab-tiny-server`) at one
//! thread count, loaded the same way four times and profiled by `perf` each time, read as
//! two profiles a side, must not show a frame growing: the two sides are the same workload,
//! so any growth is noise, and the noise floor is what keeps it out. Without a `perf` that
//! may record the server the test says why and passes; it asserts no speed.

use std::io::{BufRead, BufReader};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use server::findings::profile::{judge, Shares};
use verdict::decide::Outcome;

const BIN: &str = env!("CARGO_BIN_EXE_lab-tiny-server");
/// The server's thread names (perf's comm), the roots of its stacks.
const ROOTS: [&str; 2] = ["tiny-worker", "tiny-conn"];

/// A child killed and reaped when dropped, so a failing assertion leaves no process.
struct Reaped(Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    TcpListener::bind(("127.0.0.1", 0))
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// Why perf cannot record here, if it cannot: `perf` missing, or refused.
fn perf_refused(dir: &std::path::Path) -> Option<String> {
    let out = Command::new("perf")
        .args(["record", "-e", "cpu-clock", "-o"])
        .arg(dir.join("probe.data"))
        .args(["--", "true"])
        .stdout(Stdio::null())
        .output();
    match out {
        Err(e) => Some(format!("cannot run perf: {e}")),
        Ok(o) if !o.status.success() => Some(format!(
            "perf record refused: {}",
            String::from_utf8_lossy(&o.stderr)
                .lines()
                .next()
                .unwrap_or("")
        )),
        Ok(_) => None,
    }
}

/// Folds `perf script -F comm,tid,time,event,ip,sym,dso` output: each sample a stack
/// rooted at its thread's name, outermost frame first, one count a sample.
fn fold(script: &str) -> String {
    let mut stacks: std::collections::BTreeMap<String, u64> = Default::default();
    let mut frames: Vec<String> = Vec::new();
    let mut comm: Option<String> = None;
    let mut flush = |comm: &mut Option<String>, frames: &mut Vec<String>| {
        if let Some(c) = comm.take() {
            let mut stack = vec![c];
            stack.extend(frames.drain(..).rev());
            *stacks.entry(stack.join(";")).or_default() += 1;
        }
        frames.clear();
    };
    for line in script.lines() {
        if line.trim().is_empty() {
            flush(&mut comm, &mut frames);
        } else if line.starts_with(char::is_whitespace) {
            // "    55d0c1 sym+0x12 (/path)": the symbol without its offset.
            let rest = line.trim().split_once(' ').map_or("", |(_, r)| r);
            let sym = rest.rsplit_once(" (").map_or(rest, |(s, _)| s);
            let sym = sym.rsplit_once("+0x").map_or(sym, |(s, _)| s);
            frames.push(sym.replace(';', ":"));
        } else {
            flush(&mut comm, &mut frames);
            comm = line.split_whitespace().next().map(str::to_owned);
        }
    }
    flush(&mut comm, &mut frames);
    stacks
        .into_iter()
        .map(|(s, n)| format!("{s} {n}\n"))
        .collect()
}

/// One run: a tiny server at `threads` threads under the tiny load, perf on the server
/// for 1.2 s of it; the server's shares.
fn profile(dir: &std::path::Path, run: usize, threads: usize) -> Shares {
    let port = free_port().to_string();
    let server = Reaped(
        Command::new(BIN)
            .args(["--threads", &threads.to_string(), "--port", &port])
            .args(["--spin-us", "20"])
            .stdout(Stdio::null())
            .spawn()
            .expect("the tiny server starts"),
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    while TcpStream::connect(("127.0.0.1", port.parse::<u16>().unwrap())).is_err() {
        assert!(Instant::now() < deadline, "the tiny server never listened");
        std::thread::sleep(Duration::from_millis(10));
    }
    let load = Reaped(
        Command::new(BIN)
            .args([
                "--client",
                "--clients",
                "4",
                "--seconds",
                "1.2",
                "--port",
                &port,
            ])
            .stdout(Stdio::piped())
            .spawn()
            .expect("the tiny load starts"),
    );
    // Past the load's start-up.
    std::thread::sleep(Duration::from_millis(200));
    let data = dir.join(format!("run{run}.data"));
    let status = Command::new("perf")
        .args([
            "record",
            "-e",
            "cpu-clock",
            "-F",
            "2000",
            "--call-graph",
            "dwarf",
        ])
        .args(["--no-buildid", "-p", &server.0.id().to_string(), "-o"])
        .arg(&data)
        .args(["--", "sleep", "1.2"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("perf record runs");
    assert!(status.success(), "perf record on the tiny server: {status}");
    let mut load = load;
    let out = BufReader::new(load.0.stdout.take().unwrap());
    let said: Vec<String> = out.lines().map_while(Result::ok).collect();
    assert!(
        said.iter()
            .any(|l| l.starts_with("requests: ") && l != "requests: 0"),
        "the load was answered: {said:?}"
    );
    drop(server);
    let script = Command::new("perf")
        .args([
            "script",
            "--no-inline",
            "-F",
            "comm,tid,time,event,ip,sym,dso",
            "-i",
        ])
        .arg(&data)
        .stderr(Stdio::null())
        .output()
        .expect("perf script runs");
    let s = Shares::of_folded(&fold(&String::from_utf8_lossy(&script.stdout)), &ROOTS);
    println!(
        "run {run}: {} server samples, {} others",
        s.samples, s.other
    );
    s
}

#[test]
fn two_equal_thread_counts_show_no_frame_growing() {
    let dir = tempfile::tempdir().unwrap();
    if let Some(why) = perf_refused(dir.path()) {
        println!("skipped: {why}");
        return;
    }
    // Interleaved, as the matrix takes its profiles: A B A B, all at 2 threads.
    let runs: Vec<Shares> = (0..4).map(|i| profile(dir.path(), i, 2)).collect();
    let (a, b) = (
        [runs[0].clone(), runs[2].clone()],
        [runs[1].clone(), runs[3].clone()],
    );
    let p = judge(&a, &b, (2, 2), &ROOTS, "the tiny server's time shifts");
    println!("{:?}: {}", p.outcome, p.why);
    assert_ne!(p.outcome, Outcome::Shown, "{}", p.why);
    // The profiles were read, not skipped for want of samples.
    assert!(
        !p.why.contains("fewer than"),
        "too few samples to judge: {}",
        p.why
    );
}
