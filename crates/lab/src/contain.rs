//! A cgroup for every child `lab run`, so that whatever a cell starts is gone when the
//! cell is, even a server that daemonizes (forks, calls setsid and lets its first process
//! exit), which leaves both the process group and the parent-death signal behind.
//!
//! Why a cgroup: membership is inherited by every fork and cannot be left by a process
//! that is not root-privileged in the hierarchy, so the group's `cgroup.kill` (cgroup v2,
//! Linux 5.14) reaches everything the cell started, and `cgroup.events` says when the last
//! of them is gone, which is when lab may go on (and return: nothing it started is left).
//!
//! Layout: `<cgroup2 mount>/contention-lab/lab-<lab pid>/cell-<n>`. A watchdog process,
//! started once per lab, holds the read end of a pipe whose write end only lab holds:
//! when lab ends however it ends (`kill -9` included) the watchdog reads end-of-file,
//! kills `lab-<pid>` whole and removes it. A normal exit waits for the watchdog
//! ([`finish`]). Folders of labs that died with their watchdog are swept on start.
//!
//! Where no cgroup2 hierarchy is writable (not root, no mount) nothing is contained
//! beyond the process group and the death signal, and [`Cell::new`] says why once.
//!
//! This module does not decide when a cell ends: `children` does.

use std::ffi::CString;
use std::io::Write;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// How long lab waits for a killed cell's processes to be gone (they are SIGKILLed; only
/// a process stuck in the kernel, in uninterruptible sleep, takes longer).
const GONE_WITHIN: Duration = Duration::from_secs(10);

/// The watchdog: reads until lab's end, then kills and removes lab's folder. `$1` is it.
const WATCHDOG: &str = r#"while read -r _; do :; done
echo 1 > "$1/cgroup.kill" 2>/dev/null
i=0
while [ $i -lt 100 ]; do
  for d in "$1"/*/; do [ -d "$d" ] && rmdir "$d" 2>/dev/null; done
  rmdir "$1" 2>/dev/null && exit 0
  [ -d "$1" ] || exit 0
  sleep 0.05
  i=$((i+1))
done"#;

struct Lab {
    folder: PathBuf,
    watchdog: Mutex<Option<(Child, ChildStdin)>>,
}

static LAB: OnceLock<Result<Lab, String>> = OnceLock::new();
static NEXT: AtomicUsize = AtomicUsize::new(0);

/// The cgroup of one child, made before it starts and removed, with everything in it,
/// by [`Cell::end`].
pub struct Cell {
    folder: PathBuf,
    procs: CString,
}

impl Cell {
    /// A new, empty cgroup for a child; `Err` says why none can be made here.
    pub fn new() -> Result<Cell, String> {
        let lab = lab()?;
        let n = NEXT.fetch_add(1, Ordering::SeqCst);
        let folder = lab.folder.join(format!("cell-{n}"));
        std::fs::create_dir(&folder).map_err(|e| format!("{}: {e}", folder.display()))?;
        let procs = CString::new(folder.join("cgroup.procs").as_os_str().as_encoded_bytes())
            .map_err(|e| e.to_string())?;
        Ok(Cell { folder, procs })
    }

    /// Moves the calling process into this cgroup. Called between fork and exec, so it
    /// makes only async-signal-safe calls (open, write, close) on a path built before.
    ///
    /// # Safety
    /// Only between fork and exec (or in a single-threaded process).
    pub unsafe fn enter(procs: &CString) -> std::io::Result<()> {
        let fd = libc::open(procs.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // "0" is the writing process itself, in cgroup v1 and v2 alike.
        let written = libc::write(fd, b"0".as_ptr().cast(), 1);
        libc::close(fd);
        if written != 1 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    }

    /// The path [`Cell::enter`] writes to.
    pub fn procs(&self) -> CString {
        self.procs.clone()
    }

    /// Kills every process in the cgroup, waits until none is left and removes it.
    /// `Err` names what is still there after [`GONE_WITHIN`].
    pub fn end(self) -> Result<(), String> {
        kill_and_remove(&self.folder)
    }
}

impl Drop for Cell {
    fn drop(&mut self) {
        if self.folder.exists() {
            let _ = kill_and_remove(&self.folder);
        }
    }
}

fn kill_and_remove(folder: &Path) -> Result<(), String> {
    let deadline = Instant::now() + GONE_WITHIN;
    loop {
        let _ = std::fs::write(folder.join("cgroup.kill"), "1");
        if !populated(folder) && std::fs::remove_dir(folder).is_ok() {
            return Ok(());
        }
        if !folder.exists() {
            return Ok(());
        }
        if Instant::now() >= deadline {
            let left = std::fs::read_to_string(folder.join("cgroup.procs")).unwrap_or_default();
            return Err(format!(
                "processes {} of a finished cell would not die within {} s",
                left.split_whitespace().collect::<Vec<_>>().join(", "),
                GONE_WITHIN.as_secs()
            ));
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Whether any process is still in the cgroup or below it.
fn populated(folder: &Path) -> bool {
    std::fs::read_to_string(folder.join("cgroup.events"))
        .map(|t| t.lines().any(|l| l.trim() == "populated 1"))
        .unwrap_or(false)
}

fn lab() -> Result<&'static Lab, String> {
    LAB.get_or_init(make_lab).as_ref().map_err(Clone::clone)
}

fn make_lab() -> Result<Lab, String> {
    let mount = cgroup2_mount().ok_or("no cgroup2 hierarchy is mounted")?;
    let top = mount.join("contention-lab");
    std::fs::create_dir_all(&top).map_err(|e| format!("{}: {e}", top.display()))?;
    sweep(&top);
    let folder = top.join(format!("lab-{}", std::process::id()));
    std::fs::create_dir(&folder).map_err(|e| format!("{}: {e}", folder.display()))?;
    if !folder.join("cgroup.kill").exists() {
        let _ = std::fs::remove_dir(&folder);
        return Err("the kernel has no cgroup.kill (Linux 5.14 or later)".to_owned());
    }
    // Its own process group: a Ctrl-C to lab's group must not end it before lab.
    let started = Command::new("sh")
        .args(["-c", WATCHDOG, "contention-lab-watchdog"])
        .arg(&folder)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn();
    let mut child = match started {
        Ok(child) => child,
        Err(e) => {
            let _ = std::fs::remove_dir(&folder);
            return Err(format!("cannot start the cgroup watchdog (sh): {e}"));
        }
    };
    let stdin = child.stdin.take().expect("piped");
    Ok(Lab {
        folder,
        watchdog: Mutex::new(Some((child, stdin))),
    })
}

/// Where the cgroup2 hierarchy is mounted (`/sys/fs/cgroup`, or `/sys/fs/cgroup/unified`
/// beside cgroup v1 controllers).
fn cgroup2_mount() -> Option<PathBuf> {
    let mounts = std::fs::read_to_string("/proc/self/mounts").ok()?;
    mounts
        .lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let (_, at, kind) = (f.next()?, f.next()?, f.next()?);
            (kind == "cgroup2").then(|| PathBuf::from(at))
        })
        .next()
}

/// Kills and removes the folders of labs that are gone (a lab killed with its watchdog).
fn sweep(top: &Path) {
    for entry in std::fs::read_dir(top).into_iter().flatten().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(pid) = name
            .strip_prefix("lab-")
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        if Path::new(&format!("/proc/{pid}")).exists() {
            continue;
        }
        let lab = entry.path();
        for cell in std::fs::read_dir(&lab).into_iter().flatten().flatten() {
            if cell.path().is_dir() {
                let _ = kill_and_remove(&cell.path());
            }
        }
        let _ = kill_and_remove(&lab);
    }
}

/// Ends the watchdog and waits for it, so that lab returns with nothing of its own left
/// running. Called once, at the end of `main`.
pub fn finish() {
    let Some(Ok(lab)) = LAB.get() else {
        return;
    };
    let taken = lab.watchdog.lock().ok().and_then(|mut w| w.take());
    if let Some((mut child, mut stdin)) = taken {
        let _ = stdin.flush();
        drop(stdin);
        let _ = child.wait();
    }
}
