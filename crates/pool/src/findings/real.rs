//! The real pools (`pool-postgres.toml`: deadpool, bb8, r2d2-postgres on PostgreSQL) in
//! the pool finding, and the line that labels the seed-004 cells a model. Context only:
//! cell medians of `acquire_share` and the acquisition percentiles, no part, nothing the
//! verdict rests on (the seed's question is about the driver's per-connection cap, which
//! these cells cannot reproduce; see [`MODEL`]).

use harness::CellRecord;
use verdict::judge::{extra, find, variants_of, widest};

/// The scenario file of the real pools.
pub const FILE: &str = "pool-postgres";

/// Why the seed-004 cells run on the simulated server.
pub const MODEL: &str = "The seed-004 cells (pool-clients, pool-seed-batch) run on the lab's \
     simulated server, a model: a per-connection cap that binds before the server's CPU \
     needs network latency this machine cannot make (its kernel has no netem, Debian has no \
     toxiproxy), so no real server here reproduces the seed's plateau.";

/// The client counts the real pools are reported at: one client, two, and the most.
fn reported_threads(threads: &[usize]) -> Vec<usize> {
    let mut at: Vec<usize> = threads.iter().copied().filter(|t| *t <= 2).collect();
    at.extend(threads.last().copied().filter(|t| *t > 2));
    at
}

fn percent(share: f64) -> String {
    if share < 0.001 {
        format!("{:.2}%", share * 100.0)
    } else if share < 0.1 {
        format!("{:.1}%", share * 100.0)
    } else {
        format!("{:.0}%", share * 100.0)
    }
}

fn ms(ns: f64) -> String {
    if ns < 1e6 {
        format!("{:.0} us", ns / 1e3)
    } else {
        format!("{:.1} ms", ns / 1e6)
    }
}

/// Sentences on the real pools' cells: per pool, the share of request time spent
/// acquiring at 1, 2 and the most clients, with the acquisition p99 at the most; a pool
/// that left clients without an answer in a window is named (its low share is then over
/// the clients it served). Empty without cells.
pub fn details(rows: &[&CellRecord]) -> Vec<String> {
    let Some((cores, threads)) = widest(rows) else {
        return Vec::new();
    };
    let at = reported_threads(&threads);
    let connections = rows
        .first()
        .and_then(|c| c.params.get("connections"))
        .map_or_else(|| "?".to_owned(), |v| v.to_string());
    let mut per_pool = Vec::new();
    let mut starved = Vec::new();
    for variant in variants_of(rows) {
        let shares: Vec<String> = at
            .iter()
            .map(|t| {
                find(rows, variant, *t, cores)
                    .and_then(|c| extra(c, "acquire_share"))
                    .map_or_else(|| "-".to_owned(), percent)
            })
            .collect();
        let most = at.last().and_then(|t| find(rows, variant, *t, cores));
        let p99 = most
            .and_then(|c| extra(c, "acquire_p99_ns"))
            .map_or_else(String::new, |ns| format!(" (acquisition p99 {})", ms(ns)));
        per_pool.push(format!("`{variant}` {}{p99}", shares.join(" / ")));
        for c in rows
            .iter()
            .filter(|c| c.variant == variant && c.cores == cores)
        {
            if let Some(n) = extra(c, "clients_starved").filter(|n| *n > 0.0) {
                starved.push(format!("`{variant}` at {} clients: {n:.0}", c.threads));
            }
        }
    }
    let clients: Vec<String> = at.iter().map(usize::to_string).collect();
    let mut out = vec![format!(
        "Real pools on PostgreSQL ({FILE}.toml, {connections} connections, a primary-key read \
         or a durable write per request; cell medians): the share of a request's time spent \
         acquiring its connection at {} clients: {}.",
        clients.join(" / "),
        per_pool.join("; ")
    )];
    if !starved.is_empty() {
        out.push(format!(
            "Clients that got no answer in a window while others were served (a pool that \
             lets a returning client take its connection back ahead of those waiting): {}; \
             those pools' shares are over the clients they served.",
            starved.join(", ")
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use harness::testing::synthetic_cell;
    use serde_json::json;

    use super::*;

    fn cell(variant: &str, threads: usize, share: f64, starved: u64) -> CellRecord {
        let mut c = synthetic_cell(
            "pool",
            FILE,
            variant,
            &[("connections", json!(4)), ("server", json!("postgres"))],
            threads,
            1,
            1000.0,
            10.0,
            5,
        );
        c.extra.insert("acquire_share".into(), json!(share));
        c.extra.insert("acquire_p99_ns".into(), json!(2_500_000));
        c.extra.insert("clients_starved".into(), json!(starved));
        c
    }

    #[test]
    fn each_pool_gets_its_share_at_one_two_and_the_most_clients() {
        let cells = [
            cell("deadpool", 1, 0.0004, 0),
            cell("deadpool", 2, 0.003, 0),
            cell("deadpool", 6, 0.2, 0),
            cell("deadpool", 12, 0.67, 0),
            cell("bb8", 1, 0.0005, 0),
            cell("bb8", 12, 0.01, 8),
        ];
        let rows: Vec<&CellRecord> = cells.iter().collect();
        let out = details(&rows);
        assert!(out[0].contains("at 1 / 2 / 12 clients"), "{}", out[0]);
        assert!(
            out[0].contains("`deadpool` 0.04% / 0.3% / 67% (acquisition p99 2.5 ms)"),
            "{}",
            out[0]
        );
        // A cell not run reads as a dash, never as 0.
        assert!(out[0].contains("`bb8` 0.05% / - / 1.0%"), "{}", out[0]);
        assert!(out[0].contains("4 connections"));
        assert!(out[1].contains("`bb8` at 12 clients: 8"), "{}", out[1]);
        assert!(!out[1].contains("deadpool"));
    }

    #[test]
    fn without_cells_nothing_is_said_and_one_thread_alone_is_reported_once() {
        assert!(details(&[]).is_empty());
        assert_eq!(reported_threads(&[1]), [1]);
        assert_eq!(reported_threads(&[1, 2, 4, 6, 12]), [1, 2, 12]);
        assert_eq!(reported_threads(&[4, 8]), [8]);
    }
}
