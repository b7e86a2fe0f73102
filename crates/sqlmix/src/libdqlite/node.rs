//! A real dqlite node in this process, as Juju embeds one: `libdqlite.so.0` is loaded at
//! run time (libloading), so the workspace builds and runs everything else on a machine
//! without it, and the node is created, bound, started, stopped and destroyed through the
//! C API of `dqlite.h`.
//!
//! This module starts and stops nodes; it does not speak to them (that is
//! [`super::client`]). A node listens on an abstract Unix socket (`@...`, nothing on disk,
//! and dqlite then accepts connections from this process only) or on a loopback TCP port,
//! and keeps its Raft log and snapshots in a folder the caller owns (inside the cell's
//! scratch folder). Every node is node 1 of a cluster of its own, which dqlite bootstraps
//! on first start, so it elects itself leader.
//!
//! The node's threads (its event loop, libuv's and Raft's workers) are created from a
//! thread of ours named `dqlite-node-N`; Linux copies a thread's name to the threads it
//! creates, so profiles show them under that name.

use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

/// The shared library a node needs at run time.
pub const LIBRARY: &str = "libdqlite.so.0";
/// The Debian package that installs [`LIBRARY`] (`scripts/setup.sh` installs it).
pub const PACKAGE: &str = "libdqlite0";
/// Names another file to load instead of [`LIBRARY`] (a build of one's own; a name that
/// does not exist shows what a machine without libdqlite does).
pub const LIBRARY_ENV: &str = "CONTENTION_LAB_LIBDQLITE";

type NodeCreate =
    unsafe extern "C" fn(u64, *const c_char, *const c_char, *mut *mut c_void) -> c_int;
type NodeSetBind = unsafe extern "C" fn(*mut c_void, *const c_char) -> c_int;
type NodeGetBind = unsafe extern "C" fn(*mut c_void) -> *const c_char;
type NodeCall = unsafe extern "C" fn(*mut c_void) -> c_int;
type NodeDestroy = unsafe extern "C" fn(*mut c_void);
type NodeErrmsg = unsafe extern "C" fn(*mut c_void) -> *const c_char;
type Version = unsafe extern "C" fn() -> c_int;

/// The functions of `dqlite.h` this module calls.
struct Api {
    create: NodeCreate,
    set_bind_address: NodeSetBind,
    get_bind_address: NodeGetBind,
    start: NodeCall,
    stop: NodeCall,
    destroy: NodeDestroy,
    errmsg: NodeErrmsg,
    version: Version,
    // Kept loaded for the life of the process: a node's threads run its code, and
    // unloading libuv under them is never safe.
    _library: libloading::Library,
}

fn load() -> Result<Api, String> {
    // SAFETY: loading libdqlite runs its (and libuv's, libraft's) initialisers, which
    // have no preconditions; the symbols are read with the signatures dqlite.h declares.
    unsafe {
        let file = std::env::var_os(LIBRARY_ENV).unwrap_or_else(|| LIBRARY.into());
        let library = libloading::Library::new(&file).map_err(|e| {
            format!(
                "cannot load {} ({e}); install {PACKAGE} (`just setup`)",
                file.to_string_lossy()
            )
        })?;
        fn sym<T: Copy>(library: &libloading::Library, name: &str) -> Result<T, String> {
            // SAFETY: the caller names a function of dqlite.h with its declared type.
            unsafe {
                library
                    .get::<T>(name.as_bytes())
                    .map(|s| *s)
                    .map_err(|e| format!("{LIBRARY} has no {name} ({e})"))
            }
        }
        Ok(Api {
            create: sym(&library, "dqlite_node_create")?,
            set_bind_address: sym(&library, "dqlite_node_set_bind_address")?,
            get_bind_address: sym(&library, "dqlite_node_get_bind_address")?,
            start: sym(&library, "dqlite_node_start")?,
            stop: sym(&library, "dqlite_node_stop")?,
            destroy: sym(&library, "dqlite_node_destroy")?,
            errmsg: sym(&library, "dqlite_node_errmsg")?,
            version: sym(&library, "dqlite_version_number")?,
            _library: library,
        })
    }
}

/// Held across every `dqlite_node_create`, so that no two run at once in this process.
///
/// libdqlite names each node's SQLite VFS `dqlite-<serial>` from a process-wide counter
/// that `config__init` reads and then bumps with no lock (1.11.1's `src/config.c`:
/// "TODO: make this thread safe"; upstream made it atomic only in 2025,
/// canonical/dqlite#830, and Debian's libdqlite0 predates that). Two nodes created at
/// the same moment from two threads can therefore get the same name; SQLite then
/// resolves that name to one of the two VFSes for both nodes, so the second node keeps
/// its databases in the first node's memory, serves the first node's tables, and, when
/// the first node is destroyed and frees that memory, reads and frees through dangling
/// pointers (issue 41's `free(): invalid pointer`). Tests start nodes from parallel test
/// threads, and nothing stops a caller from starting apps from several threads. Only the
/// create takes the lock: it is the only call that reads or writes the counter.
static CREATING: parking_lot::Mutex<()> = parking_lot::Mutex::new(());

fn api() -> Result<&'static Api, String> {
    static API: OnceLock<Result<Api, String>> = OnceLock::new();
    API.get_or_init(load).as_ref().map_err(Clone::clone)
}

/// Whether nodes can start on this machine: `Err` says what is missing and what installs
/// it, in one line.
pub fn available() -> Result<(), String> {
    api().map(drop)
}

/// libdqlite's version number (major * 10000 + minor * 100 + release), when it loads.
pub fn version() -> Option<i32> {
    // SAFETY: dqlite_version_number takes nothing and returns a number.
    api().ok().map(|a| unsafe { (a.version)() })
}

/// Where a node listens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Bind {
    /// A fresh abstract Unix socket, `@contention-lab-dqlite-p<pid>-<n>` (Juju's choice).
    Abstract,
    /// A free TCP port on 127.0.0.1.
    Loopback,
    /// This address as given (tests use it for addresses that cannot work).
    Exactly(String),
}

/// Accepted `dqlite_bind` values.
pub const BINDS: &[&str] = &["abstract", "loopback"];

impl Bind {
    /// Parses a `dqlite_bind` value.
    pub fn parse(word: &str) -> Result<Bind, String> {
        match word {
            "abstract" => Ok(Bind::Abstract),
            "loopback" => Ok(Bind::Loopback),
            _ => Err(format!(
                "dqlite_bind={word:?}: accepted {}",
                BINDS.join(", ")
            )),
        }
    }

    fn address(&self) -> Result<String, String> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        Ok(match self {
            Bind::Abstract => format!(
                "@contention-lab-dqlite-p{}-{}",
                std::process::id(),
                NEXT.fetch_add(1, Ordering::Relaxed)
            ),
            Bind::Loopback => {
                // The port is free now; the node binds it a moment later (a race only
                // another process binding the same port in between could lose).
                let probe = std::net::TcpListener::bind("127.0.0.1:0")
                    .map_err(|e| format!("finding a free loopback port: {e}"))?;
                let port = probe.local_addr().map_err(|e| e.to_string())?.port();
                format!("127.0.0.1:{port}")
            }
            Bind::Exactly(a) => a.clone(),
        })
    }
}

struct Handle(*mut c_void);
// SAFETY: a dqlite_node is driven by its own thread; the calls made here (stop, destroy,
// get_bind_address, errmsg) are the ones dqlite.h documents for the owning application.
unsafe impl Send for Handle {}
// SAFETY: as above; `Node` never calls into the node from two threads at once.
unsafe impl Sync for Handle {}

/// A started node. Dropping it stops and destroys it; its folder belongs to the caller.
pub struct Node {
    api: &'static Api,
    handle: Handle,
    address: String,
    dir: PathBuf,
}

impl std::fmt::Debug for Node {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "dqlite node at {}", self.address)
    }
}

fn message(api: &Api, node: *mut c_void, rc: c_int, what: &str) -> String {
    // SAFETY: `node` is a node dqlite_node_create returned; errmsg returns a string the
    // node owns (or NULL), read before the node is destroyed.
    let text = unsafe {
        let m = (api.errmsg)(node);
        if m.is_null() {
            String::new()
        } else {
            CStr::from_ptr(m).to_string_lossy().into_owned()
        }
    };
    if text.is_empty() {
        format!("{what} failed (code {rc})")
    } else {
        format!("{what} failed (code {rc}): {text}")
    }
}

impl Node {
    /// Creates the node's folder `dir`, then creates, binds and starts node `index` on a
    /// thread named `dqlite-node-<index>`. On any failure nothing is left: the node is
    /// destroyed and `dir` removed, and the error says which step failed and why.
    pub fn start(index: usize, dir: &Path, bind: &Bind) -> Result<Node, String> {
        let api = api()?;
        let address = bind.address()?;
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("dqlite node data folder {}: {e}", dir.display()))?;
        let started = {
            let (address, dir) = (address.clone(), dir.to_path_buf());
            std::thread::Builder::new()
                .name(format!("dqlite-node-{index}"))
                .spawn(move || Self::create_and_start(api, &address, &dir))
                .map_err(|e| format!("starting dqlite-node-{index}: {e}"))?
                .join()
                .unwrap_or_else(|_| Err("the starting thread panicked".to_owned()))
        };
        match started {
            Ok(handle) => {
                // SAFETY: a started node; the returned string is the node's own.
                let bound = unsafe {
                    let a = (api.get_bind_address)(handle.0);
                    if a.is_null() {
                        address.clone()
                    } else {
                        CStr::from_ptr(a).to_string_lossy().into_owned()
                    }
                };
                Ok(Node {
                    api,
                    handle,
                    address: bound,
                    dir: dir.to_path_buf(),
                })
            }
            Err(e) => {
                let _ = std::fs::remove_dir_all(dir);
                Err(format!("dqlite node {index} at {address}: {e}"))
            }
        }
    }

    fn create_and_start(api: &Api, address: &str, dir: &Path) -> Result<Handle, String> {
        let c_address = CString::new(address).map_err(|_| "address holds a NUL".to_owned())?;
        let c_dir = CString::new(dir.as_os_str().as_encoded_bytes())
            .map_err(|_| "folder holds a NUL".to_owned())?;
        let mut node: *mut c_void = std::ptr::null_mut();
        // SAFETY: the strings outlive the calls (dqlite copies them); `node` is only used
        // after create has set it, and destroyed exactly once on every failure path, as
        // go-dqlite does. Create runs under CREATING (see there: it is not thread-safe).
        unsafe {
            let rc = {
                let _one_at_a_time = CREATING.lock();
                (api.create)(1, c_address.as_ptr(), c_dir.as_ptr(), &mut node)
            };
            if rc != 0 {
                if node.is_null() {
                    return Err(format!("dqlite_node_create failed (code {rc})"));
                }
                let e = message(api, node, rc, "dqlite_node_create");
                (api.destroy)(node);
                return Err(e);
            }
            let rc = (api.set_bind_address)(node, c_address.as_ptr());
            if rc != 0 {
                let e = message(api, node, rc, "dqlite_node_set_bind_address");
                (api.destroy)(node);
                return Err(e);
            }
            let rc = (api.start)(node);
            if rc != 0 {
                let e = message(api, node, rc, "dqlite_node_start");
                (api.destroy)(node);
                return Err(e);
            }
        }
        Ok(Handle(node))
    }

    /// The address clients connect to (`@name` for an abstract socket, `host:port`).
    pub fn address(&self) -> &str {
        &self.address
    }

    /// The node's data folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        // SAFETY: the node was started by `start` and is stopped and destroyed once, here.
        unsafe {
            (self.api.stop)(self.handle.0);
            (self.api.destroy)(self.handle.0);
        }
    }
}
