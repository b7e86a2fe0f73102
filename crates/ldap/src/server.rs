//! One directory server process for one cell, on top of [`launcher::process`] (which says
//! why nothing outlives the cell): ready once it answers a search, its output and 389
//! DS's error log quoted when it fails. This module does not know either server's
//! configuration: [`crate::ds389`] and [`crate::openldap`] build the command.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

pub use launcher::process::{find_program, free_port, port_in_use, user_name, Running};

/// The two servers' own lock functions, which the lock library looks past when it names
/// a lock by where it is taken: 389 DS's slapi wrappers of NSPR's locks, OpenLDAP's
/// `ldap_pvt_thread` ones.
pub const LOCK_WRAPPERS: &[&str] = &[
    "slapi_lock_mutex",
    "slapi_unlock_mutex",
    "slapi_rwlock_",
    "ldap_pvt_thread_mutex_",
    "ldap_pvt_thread_rdwr_",
];

/// How long a server may take to answer its first search.
pub const START_TIMEOUT: Duration = Duration::from_secs(20);

/// Starts `command` (which must stay in the foreground) with its output in
/// `folder/server.log`, on `cpus`, and waits until a search on `port` is answered.
/// `leftovers`: files the server makes outside `folder`, removed once it is gone.
pub fn start(
    command: Command,
    folder: &Path,
    port: u16,
    cpus: &[usize],
    leftovers: &[PathBuf],
) -> Result<Running, String> {
    let start = launcher::process::Start {
        folder,
        port,
        cpus,
        leftovers,
        // 389 DS writes its reasons to its own error log rather than to the terminal.
        logs: &["log/errors"],
        timeout: START_TIMEOUT,
        lock_wrappers: Some(LOCK_WRAPPERS),
    };
    Running::start(command, start, |r| {
        Ok(port_in_use(r.port) && crate::workload::probe_search(&url(r.port)).is_ok())
    })
}

/// `ldap://127.0.0.1:<port>`.
pub fn url(port: u16) -> String {
    format!("ldap://127.0.0.1:{port}")
}
