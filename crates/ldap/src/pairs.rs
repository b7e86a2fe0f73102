//! A block of pairs measured in one process ([`harness::HotPath::measure_pairs`]): every
//! cell's server started once, side by side on the cell's CPUs, then windows taken in
//! turn (the cells' order for an even pair, reversed for an odd one: a, b then b, a; a
//! chain's a, b, c then c, b, a), each window as a repetition measures its one
//! ([`crate::window`]).
//!
//! Why: a 389 DS start costs about 1.3 s here against a 0.4 s window, and it applies a
//! changed `nsslapd-threadnumber` only at a restart, so a comparison of two thread counts
//! would pay a start per window. Resident together, the two servers pay two starts per
//! block, and `lab` keeps a block to a few pairs (`plan::parts::pairs_per_start`) so that
//! an instance's own speed, fixed at its start, is spread over the pairs. Only the
//! measured server runs: the others are stopped (SIGSTOP) for the whole window, because an
//! idle ns-slapd is not asleep (its main thread wakes every 1 ms, about 2% of a CPU
//! here), and their CPU time over the window is recorded (`other_server_cpu_s`, 0 when
//! stopped) so that a record shows they took none.
//!
//! Not here: how many pairs, or what they decide (`lab`, `verdict::decide`).

use harness::hotpath::PairSide;
use harness::{Measurement, RunSettings};
use serde_json::json;

use crate::procstat::{ServerAccount, Snapshot};
use crate::window::{Cpus, Resident};
use crate::Design;

/// Why two sides cannot be one block: another server, or other parameters (the
/// directory's size, the clients) than the thread count. `None` when they can.
pub fn mismatch(a: &PairSide<'_>, b: &PairSide<'_>) -> Option<String> {
    if a.variant != b.variant {
        return Some(format!(
            "the two sides run different servers ({} and {}): a block of pairs compares two thread counts of one server; measure these as separate repetitions",
            a.variant, b.variant
        ));
    }
    let (pa, pb) = (a.params.to_map(), b.params.to_map());
    let differ: Vec<String> = pa
        .keys()
        .chain(pb.keys().filter(|k| !pa.contains_key(*k)))
        .filter(|k| pa.get(*k) != pb.get(*k))
        .map(|k| {
            let show = |v: Option<&serde_json::Value>| v.map_or("-".into(), |v| v.to_string());
            format!("{k} ({} and {})", show(pa.get(k)), show(pb.get(k)))
        })
        .collect();
    (!differ.is_empty()).then(|| {
        format!(
            "the two sides differ in {}: a block of pairs keeps one directory and one load, only the server's threads may differ",
            differ.join(", ")
        )
    })
}

/// `pairs` pairs of windows of `sides` (same server, same parameters, threads may
/// differ), each element one window a side in `sides`' order. Every server is started on
/// this thread's CPUs (the cell's cores) and killed, its folder removed, however this
/// ends.
pub fn measure_pairs(
    sides: &[PairSide<'_>],
    pairs: usize,
    settings: RunSettings,
) -> Result<Vec<Vec<Measurement>>, String> {
    let (first, rest) = match sides {
        [first, rest @ ..] if !rest.is_empty() => (first, rest),
        _ => return Err("a block of pairs needs two sides or more".to_owned()),
    };
    if let Some(why) = rest.iter().find_map(|side| mismatch(first, side)) {
        return Err(why);
    }
    let design = Design::parse(first.variant)?;
    design
        .available()
        .map_err(|e| format!("{e}; install with {}", crate::INSTALL))?;
    if pairs == 0 {
        return Ok(Vec::new());
    }
    let cpus = Cpus::of_cell();
    // One at a time, each stopped once warm: a start and a warm-up compete with nothing.
    let mut servers: Vec<Resident> = sides
        .iter()
        .map(|side| start(design, side, &cpus))
        .collect::<Result<_, _>>()?;
    let mut out = Vec::with_capacity(pairs);
    for pair in 0..pairs {
        let mut order: Vec<usize> = (0..sides.len()).collect();
        if pair % 2 == 1 {
            order.reverse();
        }
        let mut got: Vec<Option<Measurement>> = sides.iter().map(|_| None).collect();
        for (position, &side) in order.iter().enumerate() {
            let mut m = one_window(&mut servers, side, &cpus, settings, pair)?;
            m.extra.insert("pair".into(), json!(pair));
            m.extra.insert("pair_position".into(), json!(position));
            got[side] = Some(m);
        }
        out.push(got.into_iter().flatten().collect());
    }
    for server in servers {
        server.stop();
    }
    Ok(out)
}

/// Starts one side's server, warm and stopped.
fn start(design: Design, side: &PairSide<'_>, cpus: &Cpus) -> Result<Resident, String> {
    let server = Resident::start(design, side.params, side.threads, cpus)
        .map_err(|e| format!("{} at {} threads: {e}", side.variant, side.threads))?;
    server.pause()?;
    Ok(server)
}

/// One window of server `which` while the others stay stopped; `Err` when it died (its
/// later windows could not be measured).
fn one_window(
    servers: &mut [Resident],
    which: usize,
    cpus: &Cpus,
    settings: RunSettings,
    pair: usize,
) -> Result<Measurement, String> {
    let snapshots = |servers: &[Resident]| -> Vec<Option<Snapshot>> {
        others(servers, which)
            .map(|s| Snapshot::read(s.pid()))
            .collect()
    };
    servers[which].resume()?;
    let idle_open = snapshots(servers);
    let this = &mut servers[which];
    let m = this.window(cpus, settings);
    if !this.alive() {
        return Err(format!(
            "pair {pair}: the server at {} threads died during its window: {}",
            this.threads,
            this.log_tail()
        ));
    }
    let idle_close = snapshots(servers);
    let this = &mut servers[which];
    this.pause()?;
    let mut m = m.map_err(|e| format!("pair {pair}, {} threads: {e}", this.threads))?;
    // The others' CPU time over the window, summed: 0 when every one stayed stopped.
    let idle: Option<u64> = idle_open
        .iter()
        .zip(&idle_close)
        .map(|(open, close)| match (open, close) {
            (Some(open), Some(close)) => Some(ServerAccount::between(open, close).on_cpu_ns),
            _ => None,
        })
        .sum();
    if let Some(ns) = idle {
        m.extra
            .insert("other_server_cpu_s".into(), json!(ns as f64 / 1e9));
    }
    let other_threads: Vec<usize> = others(servers, which).map(|s| s.threads).collect();
    m.extra.insert(
        "other_server_threads".into(),
        match other_threads.as_slice() {
            [one] => json!(one),
            many => json!(many),
        },
    );
    Ok(m)
}

/// Every server but `which`.
fn others(servers: &[Resident], which: usize) -> impl Iterator<Item = &Resident> {
    servers
        .iter()
        .enumerate()
        .filter(move |&(i, _)| i != which)
        .map(|(_, s)| s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use harness::testing;

    #[test]
    fn sides_of_one_server_and_directory_pair_and_others_say_why_not() {
        let hp = &crate::LdapHotPath;
        let small = testing::params(hp, &[("users", "300")]);
        let other_size = testing::params(hp, &[("users", "400")]);
        let side = |variant, params, threads| PairSide {
            variant,
            params,
            threads,
        };
        assert_eq!(
            mismatch(&side("389-ds", &small, 1), &side("389-ds", &small, 2)),
            None
        );
        let why = mismatch(&side("389-ds", &small, 1), &side("openldap", &small, 2)).unwrap();
        assert!(why.contains("different servers"), "{why}");
        let why = mismatch(&side("389-ds", &small, 1), &side("389-ds", &other_size, 1)).unwrap();
        assert!(why.contains("users (300 and 400)"), "{why}");
        let err = measure_pairs(
            &[side("389-ds", &small, 1), side("389-ds", &other_size, 2)],
            2,
            testing::settings(1, 10, 10),
        )
        .unwrap_err();
        assert!(err.contains("users"), "{err}");
    }
}
