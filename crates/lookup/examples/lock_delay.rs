//! The delay experiment on one lookup cell, in this process (issue 52's first step): is
//! the busiest lock the lock table names the one that limits throughput?
//!
//! It measures the cell once for its lock table, takes the lock with the highest
//! utilization (or `--lock NAME`), and then, for added delays of half, one and two mean
//! holds, measures pairs of windows adjacent in time: the cell as it is against the cell
//! with the delay spent inside that lock (its hold grows), and against the same delay
//! spent just after the release (the control: the same CPU time, no lock held). Each
//! ratio is printed with its interval beside two predictions from the first window's
//! figures: where the lock limits, throughput X falls to 1 / (hold + added); where the
//! CPUs limit, to cores / (CPU per operation + added). The lock limits when the inside
//! ratios follow the first and the outside ones do not fall as far.
//!
//!     cargo run --release -p lookup --example lock_delay -- --variant entry-cache --threads 2
//!
//! Options: `--variant V`, `--threads N`, `--pairs N` (16), `--window-ms MS` (200),
//! `--lock NAME`, `--param NAME=VALUE` (repeatable). Pin it with `taskset` to choose the
//! cores. Not a benchmark: the figures are ratios of windows a few hundred ms apart.

use harness::locks::delay::{self, Delay, Place};
use harness::schema::CellKey;
use harness::{CellRecord, HotPath, Params, Repetition, RunSettings};
use lookup::LookupHotPath;
use std::time::Duration;
use verdict::decide::interval::centre_interval;

struct Options {
    variant: String,
    threads: usize,
    pairs: usize,
    window: Duration,
    lock: Option<String>,
    params: Vec<(String, String)>,
}

fn options() -> Result<Options, String> {
    let mut o = Options {
        variant: "entry-cache".into(),
        threads: 2,
        pairs: 16,
        window: Duration::from_millis(200),
        lock: None,
        params: Vec::new(),
    };
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let value = args.next().ok_or(format!("{flag}: needs a value"))?;
        let number = |v: &str| {
            v.parse::<usize>()
                .map_err(|_| format!("{flag} {v:?}: expected a number"))
        };
        match flag.as_str() {
            "--variant" => o.variant = value,
            "--threads" => o.threads = number(&value)?.max(1),
            "--pairs" => o.pairs = number(&value)?.max(9),
            "--window-ms" => o.window = Duration::from_millis(number(&value)? as u64),
            "--lock" => o.lock = Some(value),
            "--param" => {
                let (k, v) = value
                    .split_once('=')
                    .ok_or(format!("--param {value:?}: expected NAME=VALUE"))?;
                o.params.push((k.to_owned(), v.to_owned()));
            }
            _ => {
                return Err(format!(
                    "{flag}: accepted --variant, --threads, --pairs, --window-ms, --lock, --param"
                ))
            }
        }
    }
    Ok(o)
}

fn measure(o: &Options, params: &Params, delay: Option<Delay>) -> Result<CellRecord, String> {
    delay::set(delay);
    let settings = RunSettings {
        threads: o.threads,
        warmup: o.window / 4,
        duration: o.window,
    };
    let m = LookupHotPath
        .measure(&o.variant, params, settings)
        .map_err(|e| e.to_string())?;
    let key = CellKey {
        hot_path: "lookup".into(),
        variant: o.variant.clone(),
        params: Default::default(),
        threads: o.threads,
        cores: harness::affinity::allowed_cpus().len(),
    };
    Ok(Repetition::from_measurement(&key, "", &m).0)
}

fn main() {
    if let Err(e) = run() {
        eprintln!("error: {e}");
        std::process::exit(2);
    }
}

fn run() -> Result<(), String> {
    let o = options()?;
    let set: Vec<(&str, &str)> = o
        .params
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let mut params = Params::defaults(LookupHotPath.params());
    for (k, v) in &set {
        params.set(LookupHotPath.params(), k, v)?;
    }
    let first = measure(&o, &params, None)?;
    let rows = first.locks.clone().unwrap_or_default();
    let row = match &o.lock {
        Some(name) => rows.iter().find(|r| &r.name == name),
        None => rows.iter().filter(|r| r.slots.is_some()).max_by(|a, b| {
            a.utilization
                .unwrap_or(0.0)
                .total_cmp(&b.utilization.unwrap_or(0.0))
        }),
    }
    .ok_or("no lock to delay: the lock table names none taken (or not that one)")?;
    let hold = row
        .hold_ns
        .as_ref()
        .map(|h| h.mean)
        .ok_or("the lock's hold was not sampled")?;
    let x0 = first.ops_per_sec;
    // The delay is per acquisition: per operation it weighs this many times.
    let per_op = row.acquisitions_per_op.unwrap_or(1.0);
    let cores = harness::affinity::allowed_cpus().len() as f64;
    let cpu = first
        .bounds
        .as_ref()
        .and_then(|b| b.cpu_per_op_ns)
        .unwrap_or(f64::NAN);
    println!(
        "{} at {} threads on {} CPUs: {:.3}M ops/s; lock {:?}: hold {:.0} ns, utilization {:.2}; CPU {:.0} ns an operation",
        o.variant, o.threads, cores, x0 / 1e6, row.name, hold, row.utilization.unwrap_or(f64::NAN), cpu
    );
    println!(
        "added ns | place   | measured ratio [95%]   | if the lock limits | if the CPUs limit"
    );
    for factor in [0.5, 1.0, 2.0] {
        let added = (hold * factor).round().max(1.0);
        for place in [Place::Inside, Place::Outside] {
            let delayed = Some(Delay {
                lock: row.name.clone(),
                ns: added as u64,
                place,
            });
            let mut logs = Vec::new();
            for i in 0..o.pairs {
                let (a, b) = if i % 2 == 0 {
                    let b = measure(&o, &params, None)?;
                    (measure(&o, &params, delayed.clone())?, b)
                } else {
                    let a = measure(&o, &params, delayed.clone())?;
                    (a, measure(&o, &params, None)?)
                };
                logs.push((a.ops_per_sec / b.ops_per_sec).ln());
            }
            delay::set(None);
            let (c, lo, hi) = centre_interval(&logs, 0.05).ok_or("too few pairs")?;
            let lock_limits = match place {
                Place::Inside => 1.0 / ((hold + added) * per_op * 1e-9 * x0),
                Place::Outside => 1.0 / (hold * per_op * 1e-9 * x0),
            };
            let cpus_limit = cores / ((cpu + added * per_op) * 1e-9 * x0);
            println!(
                "{added:>8.0} | {:<7} | {:.3} [{:.3}-{:.3}]    | {:>18.3} | {:>17.3}",
                if place == Place::Inside {
                    "inside"
                } else {
                    "outside"
                },
                c.exp(),
                lo.exp(),
                hi.exp(),
                lock_limits.min(1.0),
                cpus_limit.min(1.0),
            );
        }
    }
    Ok(())
}
