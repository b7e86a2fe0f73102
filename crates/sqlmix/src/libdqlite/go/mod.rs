//! `client=go`: the real node driven by Juju's own client stack instead of the lab's.
//!
//! The cell starts its node and creates the databases as for the lab's client (the same
//! [`crate::runner::TxnRunner`]), then runs `sqlmix-go-client` (`crates/sqlmix/go-client`,
//! go-dqlite's driver under Go's `database/sql`, one pool per model database, Juju's gate
//! of K slots around each attempt with busy errors backed off outside it) against the
//! node's address for the warm-up and the window, reads back its figures, and checks what
//! the node stores against the writes the program reported, as the lab's workers are
//! checked ([`crate::workload::check_stored`]). Its record carries the lab client's
//! figure names where they mean the same (`reads_per_sec`, `gate_ms_per_txn`, ...).
//!
//! The program is built from Debian's packages (`golang-go`,
//! `golang-github-canonical-go-dqlite-dev`; GOPATH mode, nothing downloaded) by
//! `scripts/build-go-client.sh` into the cargo target folder; [`binary`] builds it on
//! demand when it is missing or older than its source. Here: the program, its build and
//! the cell's rules; [`run`] one repetition. Not here: the lab's own client
//! ([`super::client`]) or the node ([`super::node`]).

mod run;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

pub use run::{measure, Options, Report, ReportedUnit};

/// `client` value: the lab's own Rust wire client ([`super::client`]).
pub const LAB: &str = "lab";
/// `client` value: the Go program on go-dqlite and `database/sql` (Juju's stack).
pub const GO: &str = "go";
/// Accepted `client` values.
pub const CLIENTS: &[&str] = &[LAB, GO];

/// Accepted `retry` values, the Go program's `-retry` flag: Juju's runner's policy (a
/// retry every 1 ms) and the lab's Rust runner's (doubling from 1 ms to 100 ms).
pub const RETRIES: &[&str] = &["juju", "doubling"];
/// `load` value: `threads` goroutines running transactions back to back.
pub const CLOSED: &str = "closed";
/// `load` value: a Juju controller's shape, change streams and paced step workers.
pub const SEED: &str = "seed";
/// Accepted `load` values, the Go program's `-load` flag.
pub const LOADS: &[&str] = &[CLOSED, SEED];
/// The program's file name under `<target>/go/`.
pub const BINARY: &str = "sqlmix-go-client";
/// Names the program to run instead of the one built into the target folder.
pub const BINARY_ENV: &str = "CONTENTION_LAB_GO_CLIENT";
/// The Debian packages it is built from (`scripts/setup.sh` installs them).
pub const PACKAGES: &[&str] = &["golang-go", "golang-github-canonical-go-dqlite-dev"];
/// The one line that says how to build it by hand.
pub const HOW_TO_BUILD: &str =
    "scripts/build-go-client.sh (after `just setup`: golang-go, golang-github-canonical-go-dqlite-dev)";

fn source() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("go-client/main.go")
}

/// The cargo target folder this program runs from (the ancestor of the executable that
/// cargo marked with CACHEDIR.TAG), else `CARGO_TARGET_DIR`, else the workspace's.
fn target_dir() -> PathBuf {
    let from_exe = std::env::current_exe().ok().and_then(|exe| {
        exe.ancestors()
            .find(|d| d.join("CACHEDIR.TAG").is_file())
            .map(Path::to_path_buf)
    });
    from_exe
        .or_else(|| std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from))
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target"))
}

fn modified(p: &Path) -> Option<std::time::SystemTime> {
    p.metadata().and_then(|m| m.modified()).ok()
}

fn build(target: &Path) -> Result<(), String> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/build-go-client.sh");
    if !script.is_file() {
        return Err(format!(
            "{BINARY} is not built and this lab has no {} to build it: run {HOW_TO_BUILD}",
            script.display()
        ));
    }
    let out = Command::new("bash")
        .arg(&script)
        .env("CARGO_TARGET_DIR", target)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("running {}: {e}", script.display()))?;
    if out.status.success() {
        return Ok(());
    }
    let said = String::from_utf8_lossy(&out.stderr);
    Err(format!(
        "building {BINARY} failed ({}): {}",
        out.status,
        said.lines().last().unwrap_or("no message")
    ))
}

/// The Go client's program: [`BINARY_ENV`] if set, else `<target>/go/sqlmix-go-client`,
/// built first (once per process) when it is missing or older than its source. `Err`
/// says what is missing and how to build it, in one line.
pub fn binary() -> Result<PathBuf, String> {
    if let Some(p) = std::env::var_os(BINARY_ENV) {
        let p = PathBuf::from(p);
        return if p.is_file() {
            Ok(p)
        } else {
            Err(format!("{BINARY_ENV}={}: no such file", p.display()))
        };
    }
    static BUILT: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            let target = target_dir();
            let path = target.join("go").join(BINARY);
            let stale = match (modified(&path), modified(&source())) {
                (Some(built), Some(src)) => src > built,
                (None, _) => true,
                (Some(_), None) => false,
            };
            if !stale {
                return Ok(path);
            }
            match build(&target) {
                Ok(()) => Ok(path),
                // An older build still runs the same mix; a rebuild that cannot happen here
                // (no go) is no reason to refuse it.
                Err(_) if path.is_file() => Ok(path),
                Err(e) => Err(e),
            }
        })
        .clone()
}

/// The rules `client=go` adds to a cell's parameters: a real node on a loopback TCP port
/// (dqlite serves an abstract socket to its own process only), one database per model
/// (the program opens one pool per model), and no `client_us` (that slows the lab's
/// client only).
pub fn check(params: &harness::Params) -> Result<(), String> {
    if params.word("client") != GO {
        return match params.word("load") {
            SEED => Err(format!(
                "load=seed with client={}: the seed's load is the Go client's; accepted with load=seed: client=go",
                params.word("client")
            )),
            _ => Ok(()),
        };
    }
    if params.word("load") == SEED && params.int("rate") == 0 {
        return Err(
            "load=seed with rate=0: the step workers need a pace; accepted with load=seed: rate >= 1 (transactions/s in all)"
                .to_owned(),
        );
    }
    if params.word("backend") != "libdqlite" {
        return Err(format!(
            "client=go with backend={}: the Go client drives a real node; accepted with client=go: backend=libdqlite",
            params.word("backend")
        ));
    }
    if params.word("databases") != "per-model" {
        return Err(
            "client=go with databases=per-app: the Go client opens one database per model (Juju's layout); accepted with client=go: databases=per-model"
                .to_owned(),
        );
    }
    if params.word("dqlite_bind") != "loopback" {
        return Err(
            "client=go with dqlite_bind=abstract: dqlite takes connections on an abstract socket from its own process only, and the Go client is another; accepted with client=go: dqlite_bind=loopback"
                .to_owned(),
        );
    }
    if params.int("client_us") != 0 {
        return Err(
            "client=go with client_us > 0: client_us slows the lab's client only; accepted with client=go: client_us=0"
                .to_owned(),
        );
    }
    Ok(())
}
