//! The `extra` figures of a real pool's cell, from its clients' tallies of the window:
//! `acquire_share` (the share of request time spent acquiring a connection), the
//! acquisition-time percentiles `acquire_p50_ns`, `acquire_p90_ns`, `acquire_p99_ns`,
//! `acquire_max_ns` and mean `acquire_mean_ns`, `waited_share` (requests that waited
//! for a connection) with `wait_p50_ns` and `wait_p99_ns` over those that did (absent
//! when none did, never a 0 that reads as "instant"), `request_mean_ns`,
//! `reads_per_sec`, `writes_per_sec`, `timeouts`, `connections`, and
//! `clients_starved`: clients that finished no request in the window. A pool that lets a
//! returning client take its connection back ahead of those already waiting (barging)
//! shows few waits and a small `acquire_share` among the requests that finished, while
//! the waiters it passed over finish none: their waits never reach the tallies, and this
//! count is what says so.

use std::time::Duration;

use serde_json::{json, Map, Value};

use super::timing::AcquireTally;

/// What the clients of a cell counted in its window, added up.
#[derive(Debug, Default)]
pub struct CellTally {
    /// Every client's request times.
    pub times: AcquireTally,
    /// Reads answered.
    pub reads: u64,
    /// Writes answered.
    pub writes: u64,
    /// Requests that gave up waiting for a connection.
    pub timeouts: u64,
    /// Clients that finished no request.
    pub starved: u64,
}

/// The figures of a window of `window` over every client's tallies, `t`.
pub fn extra(t: &CellTally, connections: usize, window: Duration) -> Map<String, Value> {
    let CellTally {
        times,
        reads,
        writes,
        timeouts,
        starved,
    } = t;
    let mut m = Map::new();
    let secs = window.as_secs_f64().max(1e-9);
    m.insert("connections".into(), json!(connections));
    m.insert("reads_per_sec".into(), json!(*reads as f64 / secs));
    m.insert("writes_per_sec".into(), json!(*writes as f64 / secs));
    m.insert("timeouts".into(), json!(timeouts));
    m.insert("clients_starved".into(), json!(starved));
    if let Some(share) = times.acquire_share() {
        m.insert("acquire_share".into(), json!(share));
    }
    if let Some(share) = times.waited_share() {
        m.insert("waited_share".into(), json!(share));
        let mean = |d: Duration| d.as_nanos() as f64 / times.requests as f64;
        m.insert("acquire_mean_ns".into(), json!(mean(times.acquire)));
        m.insert("request_mean_ns".into(), json!(mean(times.request)));
    }
    for (key, q) in [
        ("acquire_p50_ns", 0.5),
        ("acquire_p90_ns", 0.9),
        ("acquire_p99_ns", 0.99),
    ] {
        if let Some(ns) = times.acquire_at(q) {
            m.insert(key.into(), json!(ns));
        }
    }
    if let Some(ns) = times.acquire_max() {
        m.insert("acquire_max_ns".into(), json!(ns));
    }
    for (key, q) in [("wait_p50_ns", 0.5), ("wait_p99_ns", 0.99)] {
        if let Some(ns) = times.wait_at(q) {
            m.insert(key.into(), json!(ns));
        }
    }
    m
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use super::super::timing::Timing;
    use super::*;

    #[test]
    fn the_share_and_percentiles_come_from_the_tallied_times() {
        let base = Instant::now();
        let us = |n: u64| base + Duration::from_micros(n);
        let mut t = AcquireTally::default();
        for _ in 0..3 {
            t.record(&Timing {
                start: base,
                waited_from: None,
                got: us(20),
                end: us(100),
            });
        }
        t.record(&Timing {
            start: base,
            waited_from: Some(us(5)),
            got: us(605),
            end: us(700),
        });
        let cell = CellTally {
            times: t,
            reads: 3,
            writes: 1,
            ..CellTally::default()
        };
        let m = extra(&cell, 2, Duration::from_secs(2));
        let f = |k: &str| m[k].as_f64().unwrap();
        assert!((f("acquire_share") - 665.0 / 1000.0).abs() < 1e-12);
        assert_eq!(f("waited_share"), 0.25);
        assert_eq!(f("reads_per_sec"), 1.5);
        assert!((f("acquire_mean_ns") - 166_250.0).abs() < 1e-6);
        // Histograms of 2 significant digits: within 1%.
        let near = |k: &str, want: f64| (f(k) - want).abs() <= want * 0.01;
        assert!(near("acquire_p50_ns", 20_000.0));
        assert!(near("acquire_max_ns", 605_000.0));
        assert!(near("wait_p50_ns", 600_000.0));
    }

    #[test]
    fn without_waits_there_are_no_wait_percentiles_and_without_requests_no_share() {
        let m = extra(&CellTally::default(), 1, Duration::from_secs(1));
        for key in [
            "acquire_share",
            "waited_share",
            "wait_p50_ns",
            "acquire_p50_ns",
        ] {
            assert!(!m.contains_key(key), "{key}");
        }
        let base = Instant::now();
        let mut t = AcquireTally::default();
        t.record(&Timing {
            start: base,
            waited_from: None,
            got: base + Duration::from_micros(1),
            end: base + Duration::from_micros(9),
        });
        let cell = CellTally {
            times: t,
            reads: 1,
            starved: 2,
            ..CellTally::default()
        };
        let m = extra(&cell, 1, Duration::from_secs(1));
        assert_eq!(m["clients_starved"].as_u64(), Some(2));
        assert_eq!(m["waited_share"].as_f64(), Some(0.0));
        assert!(!m.contains_key("wait_p50_ns"));
    }
}
