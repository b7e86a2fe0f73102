//! What a lease run is checked and accounted with once its window closes: the
//! read-back of every held lease, and the figures of `extra` (extends, rows and bytes per
//! extend, busy time per table). Not here: the workers' steps (the parent module).

use std::sync::atomic::Ordering;
use std::time::Duration;

use super::{bytes_written, lease_name, unit_name, AppState, LeaseWorker, LeaseWorkload};
use crate::store::LeaseStore;

impl<S: LeaseStore> LeaseWorkload<S> {
    /// [`harness::Workload::verify`]: no non-holder accepted; every lease a worker holds is
    /// stored with that holder and at least the acknowledged expiry (unless swept since).
    pub(super) fn check_workers(&self, workers: &[LeaseWorker<S>]) -> Result<(), String> {
        let accepted: u64 = workers.iter().map(|w| w.non_holder_accepted).sum();
        if accepted > 0 {
            return Err(format!(
                "a non-holder's extend was accepted {accepted} times"
            ));
        }
        let stored = self.store.read_back()?;
        let swept_up_to = self.last_sweep.load(Ordering::Acquire);
        let mut checked = 0u64;
        for w in workers {
            for &(app, state) in &w.apps {
                let AppState::Held { unit, acked } = state else {
                    continue;
                };
                if acked < swept_up_to {
                    continue; // It may have expired and been swept since; nothing to check.
                }
                checked += 1;
                let name = lease_name(app);
                let holder = unit_name(app, unit);
                match stored.get(&name) {
                    None => {
                        return Err(format!(
                            "{name}: extend to {acked} acknowledged but the lease is gone"
                        ))
                    }
                    Some(l) if l.holder != holder => {
                        return Err(format!(
                            "{name}: held by {holder} but the store says {}: two holders",
                            l.holder
                        ))
                    }
                    Some(l) if l.expiry < acked => {
                        return Err(format!(
                            "{name}: extend to {acked} acknowledged but {} stored",
                            l.expiry
                        ))
                    }
                    Some(_) => {}
                }
            }
        }
        self.leases_checked.store(checked, Ordering::Relaxed);
        if checked == 0 {
            return Err(
                "no acknowledged lease was read back (all lapsed before the last sweep): nothing was checked"
                    .to_owned(),
            );
        }
        Ok(())
    }

    /// [`harness::Workload::extra`]: the window's extends, rows, bytes and busy time per table.
    pub(super) fn window_figures(
        &self,
        workers: &[LeaseWorker<S>],
        window: Duration,
    ) -> serde_json::Map<String, serde_json::Value> {
        let account = self.store.server_account(window);
        let extends: u64 = workers.iter().map(|w| w.window.extends).sum();
        let per = |x: f64| if extends > 0 { x / extends as f64 } else { 0.0 };
        let mut rows = self.store.background_rows();
        let mut tables: std::collections::BTreeMap<&str, (f64, f64)> = Default::default();
        for w in workers {
            let stats = self.store.stats(&w.session);
            rows += stats.rows_written;
            for (table, t) in &stats.tables {
                let e = tables.entry(table).or_default();
                e.0 += t.read.as_secs_f64() * 1000.0;
                e.1 += t.write.as_secs_f64() * 1000.0;
            }
        }
        let mut bytes = bytes_written().saturating_sub(self.wchar_at_open.load(Ordering::Relaxed));
        let mut extra = self.store.extra();
        // A database server's own account replaces the lab's: its time per table, the
        // bytes it wrote (this process only sent them over a socket).
        match &account {
            Some(Ok(a)) => {
                tables = a.tables.iter().map(|(t, v)| (t.as_str(), *v)).collect();
                bytes = a.bytes;
                extra.extend(a.extra.clone());
                extra.insert(
                    "wal_bytes_per_extend".into(),
                    serde_json::json!(per(bytes as f64)),
                );
                extra.extend(crate::postgres_stores::table_figures(&a.tables, window));
                if let Some(ms) = a.extra.get("server_cpu_ms").and_then(|v| v.as_f64()) {
                    extra.insert(
                        "server_cpu_us_per_extend".into(),
                        serde_json::json!(per(ms * 1000.0)),
                    );
                }
            }
            Some(Err(e)) => {
                extra.insert("server_account_error".into(), serde_json::json!(e));
            }
            None => {}
        }
        extra.insert(
            "leases_checked".into(),
            serde_json::json!(self.leases_checked.load(Ordering::Relaxed)),
        );
        extra.insert("durable".into(), serde_json::json!(self.store.durable()));
        extra.insert(
            "extends_per_sec".into(),
            serde_json::json!(harness::stats::rate(extends, window)),
        );
        extra.insert(
            "writes_per_extend".into(),
            serde_json::json!(per(rows as f64)),
        );
        extra.insert(
            "bytes_per_extend".into(),
            serde_json::json!(per(bytes as f64)),
        );
        extra.insert(
            "claims".into(),
            serde_json::json!(workers.iter().map(|w| w.window.claims).sum::<u64>()),
        );
        extra.insert(
            "lost_leases".into(),
            serde_json::json!(workers.iter().map(|w| w.window.lost).sum::<u64>()),
        );
        // Busy time per table and per seed collection (`juju.leases`, `juju.txns`).
        extra.extend(crate::busy::figures(&tables, window));
        if self.shape.rate > 0 {
            extra.insert(
                "paced_ops_per_sec".into(),
                serde_json::json!(self.shape.rate),
            );
        }
        extra
    }
}
