//! The lock library in a real server: which of its pthread mutexes and rwlocks its
//! threads wait on, how long they are held, and the delay experiment on one of them.
//!
//! The library (`locks/lablocks.c`, built by `build.rs`, its bytes in this binary) is
//! preloaded into the server ([`Preload`], through [`crate::process::Running::start`] when
//! `harness::locks::preload_on`); it keeps a table in a file of the server's folder,
//! which the lab reads at a window's edges with the threads' schedstat
//! ([`crate::procstat::Snapshot`]): a window's figures are the difference of two reads
//! ([`rows`]). What the library can and cannot see is said at the top of its source.
//!
//! Not here: which server runs, when the edges are, or what a lock's figures mean for a
//! verdict (the report and the hot paths read `extra.locks`).

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use serde_json::{json, Value};

/// The library, built from `locks/lablocks.c`.
pub const LIBRARY: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/liblablocks.so"));

/// The library's file name in a server's folder.
pub const LIBRARY_FILE: &str = "liblablocks.so";

/// The table's file name in a server's folder.
pub const TABLE_FILE: &str = "locks.table";

/// The rows a record keeps, the most waited-on first.
pub const ROWS: usize = 12;

const MAGIC: u64 = 0x736b_636f_6c62_616c;
const VERSION: u32 = 2;
const HEADER: usize = 48;
const SLOT: usize = 64;
const CLASS: usize = 1112;
const TEXT: usize = 160;
const WAIT_SITES: usize = 4;
const WAIT_SITE: usize = 192;
/// Where a class's wait sites start: after key, ready, kind, name, site, wait_sampled.
const WAIT_SITES_AT: usize = 16 + 2 * TEXT + 8;

/// What a server's command needs to run under the library.
#[derive(Debug, Clone)]
pub struct Preload {
    /// Environment variables to set on the server's command.
    pub env: Vec<(String, String)>,
    /// Where its table will be.
    pub table: PathBuf,
}

impl Preload {
    /// Writes the library into `folder` and says how to load it: `wrappers`, symbol
    /// prefixes of the server's own lock functions (389 DS's `slapi_lock_mutex`), are
    /// skipped when a lock is named by its call site; `delay` (`NAME=NS[:outside]`)
    /// lengthens one lock's holds.
    pub fn into(folder: &Path, wrappers: &[&str], delay: Option<&str>) -> Result<Preload, String> {
        let library = folder.join(LIBRARY_FILE);
        std::fs::write(&library, LIBRARY).map_err(|e| format!("{}: {e}", library.display()))?;
        let table = folder.join(TABLE_FILE);
        // Ahead of any library the caller's environment preloads, which keeps its place.
        let preload = match std::env::var("LD_PRELOAD") {
            Ok(old) if !old.trim().is_empty() => format!("{} {old}", library.display()),
            _ => library.display().to_string(),
        };
        let mut env = vec![
            ("LD_PRELOAD".to_owned(), preload),
            ("LAB_LOCKS_FILE".to_owned(), table.display().to_string()),
            ("LAB_LOCKS_WRAPPERS".to_owned(), wrappers.join(",")),
        ];
        if let Some(d) = delay {
            env.push(("LAB_LOCK_DELAY".to_owned(), d.to_owned()));
        }
        Ok(Preload { env, table })
    }
}

/// One class of locks (those the library names alike) summed over its lock objects.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Counts {
    /// Lock objects seen.
    pub objects: u64,
    /// Acquisitions that found the lock taken.
    pub waits: u64,
    /// Nanoseconds those waited.
    pub wait_ns: u64,
    /// Sampled acquisitions (every `sample_every`-th of a thread).
    pub sampled: u64,
    /// Sampled holds timed to their release.
    pub holds: u64,
    /// Nanoseconds those were held.
    pub hold_ns: u64,
}

/// Where a class's sampled waits came from (one wait in 8 per thread names its call site
/// before it blocks).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WaitSites {
    /// Sampled waits, whether or not one of `sites` took them (the library keeps four).
    pub sampled: u64,
    /// (the first two functions outside the lock wrappers, sampled waits from there).
    pub sites: Vec<(String, u64)>,
}

/// What a class is called.
#[derive(Debug, Clone, PartialEq)]
pub struct Class {
    /// Its object and symbol for a lock in a shared object's data, else `mutex in SITE`.
    pub name: String,
    /// Where it was first taken: the first two functions outside the lock wrappers.
    pub site: String,
    /// `mutex` or `rwlock`.
    pub kind: &'static str,
}

/// The library's table at one instant.
#[derive(Debug, Clone)]
pub struct Table {
    /// The process that made it (the server's pid).
    pub pid: i32,
    /// One acquisition in this many per thread is sampled for its hold.
    pub sample_every: u32,
    /// Lock objects not counted because the table was full.
    pub full: u32,
    /// Holds the delay experiment lengthened so far.
    pub delayed: u64,
    /// The delayed lock's class, once the library has seen it.
    pub delay_class: Option<String>,
    /// Classes by index.
    pub classes: BTreeMap<u32, Class>,
    /// Counts by class index.
    pub counts: BTreeMap<u32, Counts>,
    /// Where each class's sampled waits came from, by class index.
    pub wait_sites: BTreeMap<u32, WaitSites>,
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

fn text_at(b: &[u8], at: usize) -> String {
    let field = &b[at..at + TEXT];
    let end = field.iter().position(|&c| c == 0).unwrap_or(TEXT);
    String::from_utf8_lossy(&field[..end]).into_owned()
}

impl Table {
    /// Reads the table at `path`; `Err` when the library has not made it there.
    pub fn read(path: &Path) -> Result<Table, String> {
        let b = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
        Table::parse(&b).ok_or_else(|| format!("{}: not a lock table", path.display()))
    }

    fn parse(b: &[u8]) -> Option<Table> {
        if b.len() < HEADER || u64_at(b, 0) != MAGIC || u32_at(b, 8) != VERSION {
            return None;
        }
        let (slots, classes) = (u32_at(b, 16) as usize, u32_at(b, 20) as usize);
        if b.len() < HEADER + slots * SLOT + classes * CLASS {
            return None;
        }
        let mut table = Table {
            pid: u32_at(b, 24) as i32,
            sample_every: u32_at(b, 12),
            full: u32_at(b, 28),
            delayed: u64_at(b, 32),
            delay_class: None,
            classes: BTreeMap::new(),
            counts: BTreeMap::new(),
            wait_sites: BTreeMap::new(),
        };
        let class_base = HEADER + slots * SLOT;
        for i in 0..classes {
            let at = class_base + i * CLASS;
            if u64_at(b, at) == 0 || u32_at(b, at + 8) == 0 {
                continue;
            }
            table.classes.insert(
                i as u32,
                Class {
                    name: text_at(b, at + 16),
                    site: text_at(b, at + 16 + TEXT),
                    kind: if u32_at(b, at + 12) == 2 {
                        "rwlock"
                    } else {
                        "mutex"
                    },
                },
            );
            let sites = (0..WAIT_SITES)
                .map(|k| at + WAIT_SITES_AT + k * WAIT_SITE)
                .filter(|&w| u64_at(b, w) != 0 && u32_at(b, w + 8) != 0)
                .map(|w| (text_at(b, w + 32), u64_at(b, w + 16)))
                .collect();
            table.wait_sites.insert(
                i as u32,
                WaitSites {
                    sampled: u64_at(b, at + 16 + 2 * TEXT),
                    sites,
                },
            );
        }
        for i in 0..slots {
            let at = HEADER + i * SLOT;
            if u64_at(b, at) == 0 || u32_at(b, at + 12) == 0 {
                continue;
            }
            let c = table.counts.entry(u32_at(b, at + 8)).or_default();
            c.objects += 1;
            c.waits += u64_at(b, at + 16);
            c.wait_ns += u64_at(b, at + 24);
            c.sampled += u64_at(b, at + 32);
            c.holds += u64_at(b, at + 40);
            c.hold_ns += u64_at(b, at + 48);
        }
        let delay_class = u32_at(b, 40) as i32;
        if delay_class >= 0 {
            table.delay_class = table
                .classes
                .get(&(delay_class as u32))
                .map(|c| c.name.clone());
        }
        Some(table)
    }
}

/// One lock class over a window: what a record's `extra.locks` lists.
#[derive(Debug, Clone, PartialEq)]
pub struct LockRow {
    /// What the library names it.
    pub name: String,
    /// Where it was first taken.
    pub site: String,
    /// `mutex` or `rwlock`.
    pub kind: &'static str,
    /// Lock objects of this class.
    pub objects: u64,
    /// Acquisitions that waited, per second.
    pub waits_per_s: f64,
    /// Milliseconds waited per second (summed over threads).
    pub wait_ms_per_s: f64,
    /// Acquisitions per second, estimated from the sampled ones.
    pub acquisitions_per_s: f64,
    /// Mean hold in nanoseconds, where holds were sampled in the window.
    pub hold_ns: Option<f64>,
    /// Where its waits came from in the window: call sites with their share of the
    /// sampled waits, the most first (what is left was from sites the library did not
    /// keep).
    pub wait_sites: Vec<(String, f64)>,
}

impl LockRow {
    /// The row as `extra.locks` keeps it.
    pub fn to_json(&self) -> Value {
        json!({
            "name": self.name,
            "site": self.site,
            "kind": self.kind,
            "objects": self.objects,
            "waits_per_s": self.waits_per_s,
            "wait_ms_per_s": self.wait_ms_per_s,
            "acquisitions_per_s": self.acquisitions_per_s,
            "hold_ns": self.hold_ns,
            "wait_sites": self
                .wait_sites
                .iter()
                .map(|(site, share)| json!({"site": site, "share": share}))
                .collect::<Vec<_>>(),
        })
    }

    /// A row of a record's `extra.locks` as [`LockRow::to_json`] wrote it; `None` for
    /// anything else (a results file from another version).
    pub fn from_json(v: &Value) -> Option<LockRow> {
        let number = |k: &str| v.get(k).and_then(Value::as_f64);
        Some(LockRow {
            name: v.get("name")?.as_str()?.to_owned(),
            site: v.get("site")?.as_str()?.to_owned(),
            kind: match v.get("kind")?.as_str()? {
                "mutex" => "mutex",
                "rwlock" => "rwlock",
                _ => return None,
            },
            objects: v.get("objects")?.as_u64()?,
            waits_per_s: number("waits_per_s")?,
            wait_ms_per_s: number("wait_ms_per_s")?,
            acquisitions_per_s: number("acquisitions_per_s")?,
            hold_ns: number("hold_ns"),
            // Absent in results written before the library named where waits came from.
            wait_sites: v
                .get("wait_sites")
                .and_then(Value::as_array)
                .map(|sites| {
                    sites
                        .iter()
                        .filter_map(|w| {
                            Some((
                                w.get("site")?.as_str()?.to_owned(),
                                w.get("share")?.as_f64()?,
                            ))
                        })
                        .collect()
                })
                .unwrap_or_default(),
        })
    }

    /// The rows of `record`'s `extra.locks`, the most waited-on first; empty where the
    /// record has none (a server not run under the library).
    pub fn of_record(record: &harness::CellRecord) -> Vec<LockRow> {
        record
            .extra
            .get("locks")
            .and_then(Value::as_array)
            .map(|rows| rows.iter().filter_map(LockRow::from_json).collect())
            .unwrap_or_default()
    }
}

/// The classes active between `open` and `close` (`window` apart), the most waited-on
/// first (then the most taken), at most [`ROWS`].
pub fn rows(open: &Table, close: &Table, window: Duration) -> Vec<LockRow> {
    let secs = window.as_secs_f64().max(1e-9);
    let mut rows: Vec<LockRow> = close
        .counts
        .iter()
        .filter_map(|(index, now)| {
            let before = open.counts.get(index).cloned().unwrap_or_default();
            let d = |a: u64, b: u64| a.saturating_sub(b);
            let (waits, wait_ns) = (d(now.waits, before.waits), d(now.wait_ns, before.wait_ns));
            let (sampled, holds) = (d(now.sampled, before.sampled), d(now.holds, before.holds));
            let hold_ns = d(now.hold_ns, before.hold_ns);
            if waits == 0 && sampled == 0 {
                return None;
            }
            let class = close.classes.get(index)?;
            Some(LockRow {
                name: class.name.clone(),
                site: class.site.clone(),
                kind: class.kind,
                objects: now.objects,
                waits_per_s: waits as f64 / secs,
                wait_ms_per_s: wait_ns as f64 / 1e6 / secs,
                acquisitions_per_s: (sampled * u64::from(close.sample_every)) as f64 / secs,
                hold_ns: (holds > 0).then(|| hold_ns as f64 / holds as f64),
                wait_sites: wait_sites(open.wait_sites.get(index), close.wait_sites.get(index)),
            })
        })
        .collect();
    rows.sort_by(|a, b| {
        b.wait_ms_per_s
            .total_cmp(&a.wait_ms_per_s)
            .then(b.acquisitions_per_s.total_cmp(&a.acquisitions_per_s))
    });
    rows.truncate(ROWS);
    rows
}

/// The call sites a class's sampled waits came from between two reads, each with its
/// share of them, the most first.
fn wait_sites(open: Option<&WaitSites>, close: Option<&WaitSites>) -> Vec<(String, f64)> {
    let Some(close) = close else {
        return Vec::new();
    };
    let empty = WaitSites::default();
    let open = open.unwrap_or(&empty);
    let sampled = close.sampled.saturating_sub(open.sampled);
    if sampled == 0 {
        return Vec::new();
    }
    let mut out: Vec<(String, f64)> = close
        .sites
        .iter()
        .filter_map(|(site, now)| {
            let before = open
                .sites
                .iter()
                .find(|(s, _)| s == site)
                .map_or(0, |s| s.1);
            let waits = now.saturating_sub(before);
            (waits > 0).then(|| (site.clone(), waits as f64 / sampled as f64))
        })
        .collect();
    out.sort_by(|a, b| b.1.total_cmp(&a.1));
    out
}

/// Writes `rows` into a record's `extra` as `locks`: the one place their key and shape
/// are written ([`LockRow::of_record`] reads them back).
pub fn keep(extra: &mut serde_json::Map<String, Value>, rows: &[LockRow]) {
    extra.insert(
        "locks".into(),
        Value::Array(rows.iter().map(LockRow::to_json).collect()),
    );
}

/// Writes a window's lock figures into `m`'s extras: `locks` (the rows), how they were
/// sampled, and, in a delay experiment, the holds lengthened; a delay whose lock the
/// library never saw makes the window unverified, naming the locks it did see.
pub fn record_window(m: &mut harness::Measurement, open: &Table, close: &Table) {
    let rows = rows(open, close, m.window);
    keep(&mut m.extra, &rows);
    let extra = &mut m.extra;
    extra.insert(
        "locks_sampling".into(),
        json!(format!(
            "the server's pthread mutexes and rwlocks through the preloaded lock library: every wait timed, one acquisition in {} per thread timed to its release",
            close.sample_every
        )),
    );
    if close.full > 0 {
        extra.insert("locks_not_counted".into(), json!(close.full));
    }
    if let Some(asked) = harness::locks::delay::asked() {
        extra.insert("lock_delay".into(), json!(asked.text()));
        extra.insert(
            "lock_delay_holds".into(),
            json!(close.delayed.saturating_sub(open.delayed)),
        );
        if close.delay_class.is_none() && m.verified.is_ok() {
            let names: Vec<&str> = rows.iter().take(5).map(|r| r.name.as_str()).collect();
            m.verified = Err(format!(
                "lock delay: the server has no lock {:?}; its lock table names {}",
                asked.lock,
                if names.is_empty() {
                    "none".to_owned()
                } else {
                    names.join(", ")
                }
            ));
        }
    }
}

/// Tables of servers now running under the library, by pid (the first process of the
/// server's command): how a snapshot of a pid finds its table.
static TABLES: Mutex<Option<HashMap<u32, PathBuf>>> = Mutex::new(None);

/// Says `pid` keeps its table at `path` until [`forget`].
pub fn register(pid: u32, path: PathBuf) {
    TABLES
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get_or_insert_with(HashMap::new)
        .insert(pid, path);
}

/// Forgets `pid`'s table (its server is gone).
pub fn forget(pid: u32) {
    if let Some(map) = TABLES.lock().unwrap_or_else(|e| e.into_inner()).as_mut() {
        map.remove(&pid);
    }
}

/// `pid`'s table now, if it runs under the library.
pub fn table_of(pid: u32) -> Option<Table> {
    let path = TABLES
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .as_ref()?
        .get(&pid)?
        .clone();
    Table::read(&path).ok()
}

#[cfg(test)]
mod tests;
