//! A block of pairs measured in one process ([`harness::HotPath::measure_pairs`]): both
//! cells' servers started once, side by side on the cell's CPUs, then windows alternated
//! between them (a, b for an even pair, b, a for an odd one), each window as a
//! repetition measures its one ([`crate::window`]).
//!
//! Why: a 389 DS start costs about 1.3 s here against a 0.4 s window, and it applies a
//! changed `nsslapd-threadnumber` only at a restart, so a comparison of two thread counts
//! would pay a start per window. Resident together, the two servers pay two starts per
//! block, and `lab` keeps a block to a few pairs (`plan::parts::pairs_per_start`) so that
//! an instance's own speed, fixed at its start, is spread over the pairs. Only the measured server runs: the other is stopped (SIGSTOP) for the whole
//! window, because an idle ns-slapd is not asleep (its main thread wakes every 1 ms, about
//! 2% of a CPU here), and its CPU time over the window is recorded (`other_server_cpu_s`,
//! 0 when stopped) so that a record shows it took none.
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

/// `pairs` pairs of windows of `a` and `b` (same server, same parameters, threads may
/// differ), each element (a's window, b's window). Both servers are started on this
/// thread's CPUs (the cell's cores) and killed, their folders removed, however this ends.
pub fn measure_pairs(
    a: PairSide<'_>,
    b: PairSide<'_>,
    pairs: usize,
    settings: RunSettings,
) -> Result<Vec<[Measurement; 2]>, String> {
    if let Some(why) = mismatch(&a, &b) {
        return Err(why);
    }
    let design = Design::parse(a.variant)?;
    design
        .available()
        .map_err(|e| format!("{e}; install with {}", crate::INSTALL))?;
    if pairs == 0 {
        return Ok(Vec::new());
    }
    let cpus = Cpus::of_cell();
    // One at a time, each stopped once warm: a start and a warm-up compete with nothing.
    let mut servers: [Resident; 2] = [start(design, &a, &cpus)?, start(design, &b, &cpus)?];
    let mut out = Vec::with_capacity(pairs);
    for pair in 0..pairs {
        let order = if pair % 2 == 0 { [0, 1] } else { [1, 0] };
        let mut got: [Option<Measurement>; 2] = [None, None];
        for (position, &side) in order.iter().enumerate() {
            let [first, second] = &mut servers;
            let (this, other) = if side == 0 {
                (first, second)
            } else {
                (second, first)
            };
            let mut m = one_window(this, other, &cpus, settings, pair)?;
            m.extra.insert("pair".into(), json!(pair));
            m.extra.insert("pair_position".into(), json!(position));
            got[side] = Some(m);
        }
        let [Some(ma), Some(mb)] = got else {
            unreachable!("each side measured once a pair")
        };
        out.push([ma, mb]);
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

/// One window of `this` while `other` stays stopped; `Err` when `this` died (its later
/// windows could not be measured).
fn one_window(
    this: &mut Resident,
    other: &Resident,
    cpus: &Cpus,
    settings: RunSettings,
    pair: usize,
) -> Result<Measurement, String> {
    this.resume()?;
    let idle_open = Snapshot::read(other.pid());
    let m = this.window(cpus, settings);
    let idle_close = Snapshot::read(other.pid());
    if !this.alive() {
        return Err(format!(
            "pair {pair}: the server at {} threads died during its window: {}",
            this.threads,
            this.log_tail()
        ));
    }
    this.pause()?;
    let mut m = m.map_err(|e| format!("pair {pair}, {} threads: {e}", this.threads))?;
    if let (Some(open), Some(close)) = (idle_open, idle_close) {
        let idle = ServerAccount::between(&open, &close);
        m.extra.insert(
            "other_server_cpu_s".into(),
            json!(idle.on_cpu_ns as f64 / 1e9),
        );
    }
    m.extra
        .insert("other_server_threads".into(), json!(other.threads));
    Ok(m)
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
            side("389-ds", &small, 1),
            side("389-ds", &other_size, 2),
            2,
            testing::settings(1, 10, 10),
        )
        .unwrap_err();
        assert!(err.contains("users"), "{err}");
    }
}
