//! The `openldap` variant: OpenLDAP's `slapd` with a generated `slapd.conf` and the mdb
//! backend, holding the same entries as the 389 DS variant.
//!
//! The image is a database loaded offline (`slapadd -q`); a cell copies it and writes
//! its own `slapd.conf` with `threads` set (slapd's worker pool; it refuses fewer than 2,
//! so a cell at 1 thread fails with that reason rather than quietly running 2). The
//! configuration is a file rather than `cn=config` because nothing changes at run time.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::data;
use crate::image;
use crate::server::{self, Running};

const SCHEMAS: &[&str] = &["core", "cosine", "inetorgperson", "nis"];
const SCHEMA_DIR: &str = "/etc/ldap/schema";
const MODULE_DIR: &str = "/usr/lib/ldap";

/// The fewest worker threads slapd accepts.
pub const MIN_THREADS: usize = 2;

/// `slapd` and `slapadd`, or why they cannot run here.
pub fn programs() -> Result<(PathBuf, PathBuf), String> {
    let slapd = server::find_program("slapd").ok_or("slapd (OpenLDAP) is not installed")?;
    let slapadd = server::find_program("slapadd").ok_or("slapadd (OpenLDAP) is not installed")?;
    for s in SCHEMAS {
        let f = Path::new(SCHEMA_DIR).join(format!("{s}.schema"));
        if !f.is_file() {
            return Err(format!("{} (slapd) is missing", f.display()));
        }
    }
    Ok((slapd, slapadd))
}

/// The image for `users` and `groups`, built if needed.
pub fn image(users: usize, groups: usize) -> Result<PathBuf, String> {
    let (slapd, slapadd) = programs()?;
    let name = format!(
        "openldap-{}{}-u{users}-g{groups}",
        image::fingerprint(&slapd),
        image::LAYOUT
    );
    image::ensure("openldap", &name, |dir| {
        std::fs::create_dir_all(dir.join("db")).map_err(|e| e.to_string())?;
        let conf = dir.join("slapd.conf");
        std::fs::write(&conf, config(dir, MIN_THREADS, users + groups))
            .map_err(|e| e.to_string())?;
        let ldif = dir.join("data.ldif");
        std::fs::write(&ldif, data::ldif(users, groups, false)).map_err(|e| e.to_string())?;
        let out = Command::new(slapadd)
            .arg("-q")
            .arg("-f")
            .arg(&conf)
            .arg("-l")
            .arg(&ldif)
            .output()
            .map_err(|e| format!("cannot run slapadd: {e}"))?;
        if !out.status.success() {
            let said = String::from_utf8_lossy(&out.stderr);
            let last: Vec<&str> = said.lines().rev().take(2).collect();
            return Err(format!(
                "slapadd failed ({}): {}",
                out.status,
                last.join(" / ")
            ));
        }
        std::fs::remove_file(&ldif).map_err(|e| e.to_string())
    })
}

/// Starts a copy of `image` in `folder` with `threads` worker threads on `cpus`.
pub fn start(
    image: &Path,
    folder: &Path,
    threads: usize,
    cpus: &[usize],
    entries: usize,
) -> Result<Running, String> {
    if threads < MIN_THREADS {
        return Err(format!(
            "slapd refuses threads={threads} (its minimum is {MIN_THREADS}): no such OpenLDAP cell"
        ));
    }
    let (slapd, _) = programs()?;
    image::copy_into(image, folder, &[])?;
    let conf = folder.join("slapd.conf");
    std::fs::write(&conf, config(folder, threads, entries)).map_err(|e| e.to_string())?;
    let port = server::free_port()?;
    let mut command = Command::new(slapd);
    command
        .arg("-f")
        .arg(&conf)
        .arg("-h")
        .arg(format!("ldap://127.0.0.1:{port}/"))
        // Foreground: with a debug level given, slapd does not fork.
        .args(["-d", "0"]);
    server::start(command, folder, port, cpus, &[])
}

/// `slapd.conf` for a database in `dir/db`.
fn config(dir: &Path, threads: usize, entries: usize) -> String {
    let mut out = String::new();
    for s in SCHEMAS {
        out.push_str(&format!("include {SCHEMA_DIR}/{s}.schema\n"));
    }
    if Path::new(MODULE_DIR).join("back_mdb.so").exists() {
        out.push_str(&format!("modulepath {MODULE_DIR}\nmoduleload back_mdb\n"));
    }
    // The map's size bounds the file a cell copies: room for the entries, no more.
    let maxsize = entries as u64 * 4096 + (32 << 20);
    out.push_str(&format!(
        "pidfile {dir}/slapd.pid\nthreads {threads}\nloglevel 0\nsizelimit unlimited\n\
         database mdb\nsuffix \"{suffix}\"\ndirectory {dir}/db\nmaxsize {maxsize}\n\
         index objectClass eq\nindex uid eq\naccess to * by * read\n",
        dir = dir.display(),
        suffix = data::SUFFIX,
    ));
    out
}
