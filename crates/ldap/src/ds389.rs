//! The `389-ds` variant: 389 Directory Server (`ns-slapd`), laid out by hand in a folder
//! the lab owns, without `dscreate`.
//!
//! Why by hand: `dscreate` puts an instance under `/etc/dirsrv`, `/var/lib/dirsrv` and
//! `/run`, and calls systemctl whatever its `.inf` says (lib389 reads `with_systemd = 1`
//! from the package's defaults). Its first step is what the server needs: `dse.ldif` from
//! the package's `template-dse.ldif` with its `%key%` paths filled in, the backend from
//! `template-suffix-db.ldif`, the collation and certmap files. Here every path points
//! into the image's folder (rewritten to the cell's on copy), the data is imported
//! offline (`ns-slapd ldif2db`), the server listens on 127.0.0.1 only, the access log is
//! off (it grows by 0.1 GB a minute under load), the size limit is lifted (the cache
//! warm-up reads every entry), and the entry cache holds the whole directory, as on the
//! seed's warmed-up server. Per cell only the port, `nsslapd-threadnumber` (`-1` where the
//! server's autotuning gives the cell's count; the cell reads back the count the server
//! runs from cn=monitor) and the config folder's name (named for the port: see [`start`])
//! change.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::data;
use crate::image;
use crate::server::{self, Running};

/// The package's data folder.
const DATA: &str = "/usr/share/dirsrv/data";
/// The files of an instance that hold absolute paths.
const CONFIG_FILES: &[&str] = &["config/dse.ldif"];

/// `ns-slapd`, or why it cannot run here.
pub fn program() -> Result<PathBuf, String> {
    let bin = server::find_program("ns-slapd").ok_or("ns-slapd (389-ds-base) is not installed")?;
    for f in ["template-dse.ldif", "template-suffix-db.ldif"] {
        if !Path::new(DATA).join(f).is_file() {
            return Err(format!("{DATA}/{f} (389-ds-base) is missing"));
        }
    }
    Ok(bin)
}

/// The image for `users` and `groups`, built if needed.
pub fn image(users: usize, groups: usize) -> Result<PathBuf, String> {
    let bin = program()?;
    let name = format!(
        "389-ds-{}{}-u{users}-g{groups}",
        image::fingerprint(&bin),
        image::LAYOUT
    );
    image::ensure("389-ds", &name, |dir| build(&bin, dir, users, groups))
}

/// The fewest and the most worker threads 389 DS 2.3's autotuning gives
/// (`util_get_hardware_threads` calls `util_get_capped_hardware_threads(16, 512)`: checked
/// in the installed libslapd, 2.3.1).
pub const AUTOTUNE_RANGE: (usize, usize) = (16, 512);

/// What `nsslapd-threadnumber: -1` resolves to for a server pinned to `cpus` CPUs: the
/// CPUs of its affinity mask (`sched_getaffinity`, so the cell's cores, not the machine's)
/// held to [`AUTOTUNE_RANGE`]. 16 on 1 to 16 CPUs.
pub fn autotuned_threads(cpus: usize) -> usize {
    cpus.clamp(AUTOTUNE_RANGE.0, AUTOTUNE_RANGE.1)
}

/// The `nsslapd-threadnumber` a cell of `threads` on `cpus` CPUs writes: `-1` (the
/// server's own autotuning) where that resolves to `threads`, so the cell at the
/// autotuned count is the server's default as shipped, not a number that happens to
/// match it; the number otherwise.
pub fn threadnumber_setting(threads: usize, cpus: usize) -> String {
    if threads == autotuned_threads(cpus) {
        "-1".to_owned()
    } else {
        threads.to_string()
    }
}

/// How many more threads cn=monitor's `threads` counts than the worker pool: 4 at
/// `nsslapd-threadnumber: 3` and 17 at `-1` on 1 CPU (16 workers), 389 DS 2.3.1 here.
pub const MONITOR_EXTRA_THREADS: usize = 1;

/// The server's worker threads as it reports them itself: cn=monitor's `threads` (which
/// anonymous clients may read, unlike cn=config, which needs the manager's bind, and no
/// client here has one: there is no root password) less [`MONITOR_EXTRA_THREADS`].
/// Returns (workers, the monitor's figure).
pub fn read_threadnumber(url: &str) -> Result<(usize, usize), String> {
    use ldap3::{LdapConn, LdapConnSettings, Scope, SearchEntry};
    let settings = LdapConnSettings::new().set_conn_timeout(std::time::Duration::from_secs(5));
    let mut conn = LdapConn::with_settings(settings, url).map_err(|e| e.to_string())?;
    let (entries, _) = conn
        .with_timeout(std::time::Duration::from_secs(5))
        .search(
            "cn=monitor",
            Scope::Base,
            "(objectClass=*)",
            vec!["threads"],
        )
        .and_then(|r| r.success())
        .map_err(|e| format!("reading cn=monitor: {e}"))?;
    let entry = entries
        .into_iter()
        .next()
        .map(SearchEntry::construct)
        .ok_or("cn=monitor: no entry returned")?;
    let value = entry
        .attrs
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("threads"))
        .and_then(|(_, v)| v.first())
        .ok_or("cn=monitor: no threads returned")?;
    let seen: usize = value
        .trim()
        .parse()
        .map_err(|e| format!("cn=monitor: threads {value:?}: {e}"))?;
    Ok((seen.saturating_sub(MONITOR_EXTRA_THREADS), seen))
}

/// Fills `into` (empty) with a 389 DS instance holding `users` and `groups`, every path
/// pointing into it, listening on port 389 with `nsslapd-threadnumber` as built: what a
/// scenario file of the server hot path prepares (`lab ldap-image 389-ds ...`), whose
/// start command then sets the port and threads itself.
pub fn prepare_into(users: usize, groups: usize, into: &Path) -> Result<(), String> {
    let image = image(users, groups)?;
    image::copy_into(&image, into, CONFIG_FILES)
}

/// Starts a copy of `image` in `folder` with `threads` worker threads on `cpus`
/// (written as `-1` where the server's autotuning gives that many: [`threadnumber_setting`]).
pub fn start(
    image: &Path,
    folder: &Path,
    threads: usize,
    cpus: &[usize],
) -> Result<Running, String> {
    let bin = program()?;
    image::copy_into(image, folder, CONFIG_FILES)?;
    let port = server::free_port()?;
    // ns-slapd names its statistics semaphore after its config folder ("/<name>.stats",
    // its snmp_collator.c), shared by every instance whose folder has that name, and
    // exits at start when it cannot unlink one it finds. Two instances starting and
    // stopping side by side (the pairs' two servers, tests in parallel) then race for one
    // name: each instance gets a config folder named for its port, unique while it lives.
    let config = config_folder(folder, port);
    std::fs::rename(folder.join("config"), &config).map_err(|e| e.to_string())?;
    let dse = config.join("dse.ldif");
    let text = std::fs::read_to_string(&dse).map_err(|e| e.to_string())?;
    let text = text.replace(
        &folder.join("config").to_string_lossy().into_owned(),
        &config.to_string_lossy(),
    );
    let text = set_attrs(
        &text,
        "cn=config",
        &[
            ("nsslapd-port", port.to_string()),
            (
                "nsslapd-threadnumber",
                threadnumber_setting(threads, cpus.len()),
            ),
        ],
    );
    std::fs::write(&dse, text).map_err(|e| e.to_string())?;
    let mut command = Command::new(bin);
    command
        .arg("-D")
        .arg(&config)
        .arg("-i")
        .arg(folder.join("run/ns-slapd.pid"))
        // Foreground: with a debug level given, ns-slapd neither forks nor detaches.
        .args(["-d", "0"]);
    sweep_semaphores();
    server::start(command, folder, port, cpus, &[semaphore(port)])
}

/// The statistics semaphore of the instance on `port`, which ns-slapd unlinks only on a
/// clean stop (a SIGKILL is not one): the lab removes it once the server is gone.
pub fn semaphore(port: u16) -> PathBuf {
    PathBuf::from(format!("{SEMAPHORES}/sem.{CONFIG_PREFIX}{port}.stats"))
}

/// The start of an instance's config folder's name, and so of its semaphore's.
const CONFIG_PREFIX: &str = "slapd-cl";

/// Where POSIX named semaphores live.
const SEMAPHORES: &str = "/dev/shm";

/// Removes the statistics semaphores of instances gone without a clean stop and without
/// the lab's clean-up (the lab itself killed): named for their port, they would pile up
/// rather than be reused. A semaphore is in use while a process maps it (ns-slapd maps its
/// own from `sem_open` on, before the name exists). glibc maps it under a temporary name
/// and links it in place, so the maps name the file by its inode, not its name.
fn sweep_semaphores() {
    use std::os::unix::fs::MetadataExt;
    let Ok(entries) = std::fs::read_dir(SEMAPHORES) else {
        return;
    };
    let ours: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
                n.starts_with(&format!("sem.{CONFIG_PREFIX}")) && n.ends_with(".stats")
            })
        })
        .collect();
    if ours.is_empty() {
        return;
    }
    // `address perms offset dev inode path`, for every mapping of a file in /dev/shm.
    let mapped: std::collections::HashSet<u64> = std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .bytes()
                .all(|b| b.is_ascii_digit())
        })
        .filter_map(|e| std::fs::read_to_string(e.path().join("maps")).ok())
        .flat_map(|maps| {
            maps.lines()
                .filter(|l| l.contains(SEMAPHORES))
                .filter_map(|l| l.split_whitespace().nth(4)?.parse().ok())
                .collect::<Vec<u64>>()
        })
        .collect();
    for path in ours {
        if std::fs::metadata(&path).is_ok_and(|m| !mapped.contains(&m.ino())) {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// The config folder of the instance started in `folder` on `port`: `slapd-cl<port>`, so
/// that its statistics semaphore (named after this folder) is its own.
pub fn config_folder(folder: &Path, port: u16) -> PathBuf {
    folder.join(format!("{CONFIG_PREFIX}{port}"))
}

fn build(bin: &Path, dir: &Path, users: usize, groups: usize) -> Result<(), String> {
    for sub in [
        "config/schema",
        "db",
        "log",
        "run",
        "lock",
        "tmp",
        "bak",
        "ldif",
    ] {
        std::fs::create_dir_all(dir.join(sub)).map_err(|e| e.to_string())?;
    }
    let p = |sub: &str| dir.join(sub).to_string_lossy().into_owned();
    let fill: Vec<(&str, String)> = vec![
        ("schema_dir", p("config/schema")),
        ("lock_dir", p("lock")),
        ("tmp_dir", p("tmp")),
        ("cert_dir", p("config")),
        ("ldif_dir", p("ldif")),
        ("bak_dir", p("bak")),
        ("run_dir", p("run")),
        ("inst_dir", p("")),
        ("log_dir", p("log")),
        ("fqdn", "localhost".into()),
        ("ds_port", "389".into()),
        ("ds_user", server::user_name()),
        ("rootdn", "cn=Directory Manager".into()),
        ("ldapi_enabled", "off".into()),
        ("ldapi", p("run/ldapi")),
        ("ldapi_autobind", "off".into()),
        ("ds_suffix", data::SUFFIX.into()),
        ("config_dir", p("config")),
        ("db_dir", p("db")),
        // In the instance rather than /dev/shm, so that it goes with the cell's folder.
        ("db_home_dir", p("db")),
        ("db_lib", "bdb".into()),
        ("ds_bename", "userRoot".into()),
    ];
    let read = |f: &str| {
        std::fs::read_to_string(Path::new(DATA).join(f)).map_err(|e| format!("{DATA}/{f}: {e}"))
    };
    let mut dse = substitute(&read("template-dse.ldif")?, &fill);
    // No root password: nothing binds as the manager (the clients are anonymous, the data
    // is imported offline), and ns-slapd refuses one in clear text.
    dse = dse
        .lines()
        .filter(|l| !l.starts_with("nsslapd-rootpw:"))
        .collect::<Vec<_>>()
        .join("\n");
    // One blank line between entries: ns-slapd reads two as an entry without a DN.
    dse.truncate(dse.trim_end().len());
    dse.push_str("\n\n");
    let suffix = substitute(&read("template-suffix-db.ldif")?, &fill);
    dse.push_str(
        &suffix
            .lines()
            .filter(|l| !l.starts_with('#'))
            .collect::<Vec<_>>()
            .join("\n"),
    );
    dse.push('\n');
    let dse = set_attrs(
        &dse,
        "cn=config",
        &[
            ("nsslapd-listenhost", "127.0.0.1".into()),
            ("nsslapd-accesslog-logging-enabled", "off".into()),
            ("nsslapd-sizelimit", "-1".into()),
        ],
    );
    let dse = set_attrs(
        &dse,
        "cn=config,cn=ldbm database,cn=plugins,cn=config",
        &[
            ("nsslapd-cache-autosize", "0".into()),
            // The warm-up's one search reads every entry: no look-through limit (5000).
            ("nsslapd-lookthroughlimit", "-1".into()),
            ("nsslapd-dbcachesize", "33554432".into()),
        ],
    );
    let entry_cache = (users + groups) as u64 * 8192 + (64 << 20);
    let dse = set_attrs(
        &dse,
        "cn=userRoot,cn=ldbm database,cn=plugins,cn=config",
        &[("nsslapd-cachememsize", entry_cache.to_string())],
    );
    std::fs::write(dir.join("config/dse.ldif"), dse).map_err(|e| e.to_string())?;
    for (from, to) in [
        (
            "/etc/dirsrv/config/slapd-collations.conf",
            "config/slapd-collations.conf",
        ),
        ("/etc/dirsrv/config/certmap.conf", "config/certmap.conf"),
        (
            "/etc/dirsrv/schema/99user.ldif",
            "config/schema/99user.ldif",
        ),
    ] {
        if Path::new(from).is_file() {
            std::fs::copy(from, dir.join(to)).map_err(|e| format!("{from}: {e}"))?;
        }
    }
    let ldif = dir.join("ldif/data.ldif");
    std::fs::write(&ldif, data::ldif(users, groups, true)).map_err(|e| e.to_string())?;
    let out = Command::new(bin)
        .arg("ldif2db")
        .arg("-D")
        .arg(dir.join("config"))
        .args(["-n", "userRoot", "-i"])
        .arg(&ldif)
        .output()
        .map_err(|e| format!("cannot run ns-slapd ldif2db: {e}"))?;
    let imported = dir.join("db/userRoot/id2entry.db").is_file();
    if !out.status.success() || !imported {
        let errors = std::fs::read_to_string(dir.join("log/errors")).unwrap_or_default();
        let last: Vec<&str> = errors
            .lines()
            .filter(|l| l.contains("ERR"))
            .take(2)
            .collect();
        return Err(format!(
            "ns-slapd ldif2db failed ({}): {}",
            out.status,
            last.join(" / ")
        ));
    }
    let _ = std::fs::remove_file(&ldif);
    // Every log file and its rotation state: ns-slapd dies at start, silently, when a
    // log's `.rotationinfo` is there without the log.
    if let Ok(logs) = std::fs::read_dir(dir.join("log")) {
        for log in logs.flatten() {
            let _ = std::fs::remove_file(log.path());
        }
    }
    Ok(())
}

/// Replaces every `%key%` of `fill` in `text`.
fn substitute(text: &str, fill: &[(&str, String)]) -> String {
    let mut out = text.to_owned();
    for (key, value) in fill {
        out = out.replace(&format!("%{key}%"), value);
    }
    out
}

/// `dn` without spaces after commas, lower case: how two spellings of one DN compare.
fn norm_dn(dn: &str) -> String {
    dn.split(',')
        .map(|p| p.trim().to_ascii_lowercase())
        .collect::<Vec<_>>()
        .join(",")
}

/// Sets attributes of the entry `dn` in LDIF text: existing values of each (with their
/// folded continuation lines) are replaced by the one given.
pub fn set_attrs(ldif: &str, dn: &str, attrs: &[(&str, String)]) -> String {
    let want = norm_dn(dn);
    let mut entries: Vec<String> = Vec::new();
    for block in ldif.split("\n\n") {
        let is_it = block
            .lines()
            .find(|l| !l.starts_with('#') && !l.trim().is_empty())
            .and_then(|l| l.strip_prefix("dn:"))
            .is_some_and(|d| norm_dn(d) == want);
        if !is_it {
            entries.push(block.to_owned());
            continue;
        }
        let mut kept: Vec<&str> = Vec::new();
        let mut dropping = false;
        for line in block.lines() {
            if line.starts_with(' ') {
                if !dropping {
                    kept.push(line);
                }
                continue;
            }
            let name = line.split(':').next().unwrap_or("").trim();
            dropping = attrs.iter().any(|(a, _)| a.eq_ignore_ascii_case(name));
            if !dropping {
                kept.push(line);
            }
        }
        let mut out = kept.join("\n");
        for (a, v) in attrs {
            out.push_str(&format!("\n{a}: {v}"));
        }
        entries.push(out);
    }
    entries.join("\n\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_autotuned_count_is_the_cpus_held_to_16_512_and_written_as_minus_one() {
        assert_eq!(autotuned_threads(1), 16);
        assert_eq!(autotuned_threads(2), 16);
        assert_eq!(autotuned_threads(64), 64);
        assert_eq!(autotuned_threads(1000), 512);
        assert_eq!(threadnumber_setting(16, 2), "-1");
        assert_eq!(threadnumber_setting(12, 2), "12");
        assert_eq!(threadnumber_setting(16, 64), "16");
        assert_eq!(threadnumber_setting(64, 64), "-1");
    }

    #[test]
    fn attributes_are_replaced_in_their_entry_only() {
        let ldif = "dn: cn=config\ncn: config\nnsslapd-port: 389\nnsslapd-x: long\n  folded\n\n\
                    dn: cn=other, cn=config\nnsslapd-port: 1\n";
        let out = set_attrs(
            ldif,
            "cn=config",
            &[("nsslapd-port", "4000".into()), ("nsslapd-x", "y".into())],
        );
        assert_eq!(
            out,
            "dn: cn=config\ncn: config\nnsslapd-port: 4000\nnsslapd-x: y\n\n\
             dn: cn=other, cn=config\nnsslapd-port: 1\n"
        );
        let out = set_attrs(ldif, "cn=other,cn=config", &[("nsslapd-port", "2".into())]);
        assert!(
            out.contains("dn: cn=other, cn=config\nnsslapd-port: 2"),
            "{out}"
        );
        assert!(out.contains("nsslapd-port: 389"), "{out}");
    }
}
