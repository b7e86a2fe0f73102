//! Where PostgreSQL is installed, how to run its programs as the `postgres` user, and its
//! data folder prepared once by `initdb` and kept in the lab's cache.
//!
//! Why a cached data folder: `initdb` takes seconds (it writes and fsyncs the catalogue),
//! a cell's window is under a second, and every server must start from the same empty
//! database. Each server copies the image into its own folder. This module does not
//! start a server; [`super::Postgres`] does.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::cache;

/// The user PostgreSQL runs as when the lab runs as root (PostgreSQL refuses root).
pub const USER: &str = "postgres";
/// The cache shelf its images are kept on.
const SHELF: &str = "postgres";

/// The folder holding `postgres` and `initdb`, with `pg_stat_statements` installed beside
/// them; else a one-line reason naming what is missing and how to install it.
pub fn bin_dir() -> Result<PathBuf, String> {
    let mut found: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let version = e.file_name().to_string_lossy().parse::<u32>().ok()?;
            let bin = e.path().join("bin");
            bin.join("postgres").is_file().then_some((version, bin))
        })
        .collect();
    // The newest installed; 15 is what Debian 12 ships and what the lab was built on.
    found.sort();
    let Some((_, bin)) = found.pop() else {
        return Err("PostgreSQL is not installed (no /usr/lib/postgresql/<version>/bin/postgres): `just setup` installs it (Debian packages postgresql, postgresql-contrib)".to_owned());
    };
    let library = bin.with_file_name("lib").join("pg_stat_statements.so");
    if !library.is_file() {
        return Err(format!(
            "PostgreSQL's pg_stat_statements is not installed ({} is missing): install postgresql-contrib",
            library.display()
        ));
    }
    Ok(bin)
}

/// The `postgres` user's ids when this process runs as root (its programs must run as
/// that user); `None` when it does not (they run as this process's user).
pub fn run_as() -> Result<Option<(u32, u32)>, String> {
    // SAFETY: geteuid has no memory effects.
    if unsafe { libc::geteuid() } != 0 {
        return Ok(None);
    }
    let name = std::ffi::CString::new(USER).expect("no NUL");
    // SAFETY: getpwnam returns a pointer into static storage or null; read at once.
    unsafe {
        let pw = libc::getpwnam(name.as_ptr());
        if pw.is_null() {
            return Err(format!(
                "PostgreSQL refuses to run as root and there is no user {USER:?} to run it as: install Debian's postgresql package, which creates it"
            ));
        }
        Ok(Some(((*pw).pw_uid, (*pw).pw_gid)))
    }
}

/// A command running `program` (in `bin`) as the `postgres` user when this process is
/// root: through `setpriv`, which sets the parent-death signal again after it changes
/// user (the kernel clears it then), so a server it starts still dies with the lab.
pub fn command(bin: &Path, program: &str, user: Option<(u32, u32)>) -> Command {
    let program = bin.join(program);
    match user {
        None => Command::new(program),
        Some(_) => {
            let mut c = Command::new("setpriv");
            c.args([
                &format!("--reuid={USER}"),
                &format!("--regid={USER}"),
                "--init-groups",
                "--pdeathsig",
                "KILL",
                "--",
            ])
            .arg(program);
            c
        }
    }
}

/// Gives `path` and everything under it to `user` (a no-op when `None`).
pub fn chown_tree(path: &Path, user: Option<(u32, u32)>) -> Result<(), String> {
    let Some((uid, gid)) = user else {
        return Ok(());
    };
    let mut stack = vec![path.to_path_buf()];
    while let Some(p) = stack.pop() {
        std::os::unix::fs::lchown(&p, Some(uid), Some(gid))
            .map_err(|e| format!("cannot give {} to {USER}: {e}", p.display()))?;
        if p.is_dir() && !p.is_symlink() {
            for entry in std::fs::read_dir(&p).map_err(|e| format!("{}: {e}", p.display()))? {
                stack.push(entry.map_err(|e| e.to_string())?.path());
            }
        }
    }
    Ok(())
}

/// The image holding an empty cluster in `data/` (user `postgres`, trust
/// authentication, UTF-8, C locale), built by `initdb` the first time.
pub fn image(bin: &Path, user: Option<(u32, u32)>) -> Result<PathBuf, String> {
    let postgres = bin.join("postgres");
    let version = bin
        .parent()
        .and_then(|p| p.file_name())
        .map_or("pg".to_owned(), |v| format!("pg{}", v.to_string_lossy()));
    let name = format!(
        "{version}-{}-{}-u0",
        cache::fingerprint(&postgres),
        cache::LAYOUT
    );
    cache::ensure(SHELF, &version, &name, |into| {
        // The cache lies in this user's home, which the postgres user may not enter:
        // initdb writes into a folder of its own in the temporary folder, copied after.
        let work = harness::scratch::private_folder(
            Some(&std::env::temp_dir()),
            "contention-lab-initdb-",
        )?;
        chown_tree(work.path(), user)?;
        let data = work.path().join("data");
        let out = command(bin, "initdb", user)
            .arg("-D")
            .arg(&data)
            .args([
                "-U",
                "postgres",
                "--auth=trust",
                "-E",
                "UTF8",
                "--locale=C",
                "--no-sync",
            ])
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("cannot run initdb: {e}"))?;
        if !out.status.success() {
            let text = String::from_utf8_lossy(&out.stderr);
            let last: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
            return Err(format!(
                "initdb failed ({}): {}",
                out.status,
                last[last.len().saturating_sub(2)..].join(" / ")
            ));
        }
        std::fs::create_dir(into.join("data")).map_err(|e| e.to_string())?;
        cache::copy_tree(&data, &into.join("data"))
            .map_err(|e| format!("cannot copy the new cluster into the cache: {e}"))
    })
}
