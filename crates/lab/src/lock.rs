//! One matrix at a time on a machine: two matrices measuring at once would each measure
//! the other, so a second `lab matrix` is refused in one line while one is measuring,
//! unless `force=true`.
//!
//! The lock is an `flock` on `contention-lab.matrix.lock` in the system's temporary folder
//! (`$TMPDIR`, else `/tmp`), holding the holder's pid for the message. The kernel releases
//! an `flock` when its holder dies, however it dies, so a `kill -9`'d matrix never blocks
//! the next one; the file it leaves is reused. A holder that ends normally removes the
//! file while it still holds the lock, and a newcomer that locked a file which is no
//! longer the one at the path tries again, so two matrices never hold two different files.
//!
//! Not a queue: a refused matrix does not wait. Nothing but `lab matrix` takes it (`lab
//! run`, reports and comparisons measure nothing beside a matrix).

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, Write};
use std::os::unix::fs::MetadataExt;
use std::os::unix::io::AsRawFd;
use std::path::PathBuf;

use anyhow::bail;

/// The lock file's name in the temporary folder. Not `contention-lab-...`: that prefix
/// belongs to scratch folders, which are swept.
pub const LOCK_FILE: &str = "contention-lab.matrix.lock";

/// A held lock; released (and its file removed) when dropped.
#[derive(Debug)]
pub struct MatrixLock {
    file: File,
    path: PathBuf,
}

/// Where the lock lives.
pub fn path() -> PathBuf {
    std::env::temp_dir().join(LOCK_FILE)
}

/// Takes the machine's matrix lock, or refuses in one line naming the holder. With
/// `force`, a held lock is passed by with a note on stderr and `None` is returned.
pub fn acquire(force: bool) -> anyhow::Result<Option<MatrixLock>> {
    let path = path();
    // A file replaced under us (its holder ended between our open and our lock) is tried
    // again; a few tries are plenty, since each replacement needs a whole matrix to end.
    for _ in 0..8 {
        let file = match OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
        {
            Ok(file) => file,
            // Another user's lock file: it can still be locked and read, not written.
            Err(_) => match File::open(&path) {
                Ok(file) => file,
                Err(e) => {
                    eprintln!(
                        "note: cannot open {} ({e}); not checking for another lab matrix",
                        path.display()
                    );
                    return Ok(None);
                }
            },
        };
        // SAFETY: flock on a descriptor we own.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
            let holder = holder(&file);
            if force {
                eprintln!(
                    "note: force=true: running beside another lab matrix ({holder}); both measure each other"
                );
                return Ok(None);
            }
            bail!(
                "another lab matrix ({holder}) is measuring on this machine and each would measure the other; wait for it to end, or add force=true to run beside it (lock {})",
                path.display()
            );
        }
        let same = match (file.metadata(), std::fs::metadata(&path)) {
            (Ok(ours), Ok(now)) => ours.dev() == now.dev() && ours.ino() == now.ino(),
            _ => false,
        };
        if !same {
            continue;
        }
        let mut lock = MatrixLock { file, path };
        lock.record_holder();
        return Ok(Some(lock));
    }
    eprintln!(
        "note: {} keeps changing; not checking for another lab matrix",
        path.display()
    );
    Ok(None)
}

/// Who holds the lock, as the file says.
fn holder(file: &File) -> String {
    let mut text = String::new();
    let mut file = file;
    let _ = file.read_to_string(&mut text);
    let text = text.trim();
    if text.is_empty() {
        "pid unknown".to_owned()
    } else {
        text.to_owned()
    }
}

impl MatrixLock {
    fn record_holder(&mut self) {
        let started = humantime::format_rfc3339_seconds(std::time::SystemTime::now());
        let _ = self.file.set_len(0);
        let _ = self.file.rewind();
        let _ = write!(self.file, "pid {}, started {started}", std::process::id());
        let _ = self.file.flush();
    }
}

impl Drop for MatrixLock {
    fn drop(&mut self) {
        // Removed while still locked: whoever opened this file meanwhile finds, once it
        // has the lock, that it is not the file at the path any more, and tries again.
        let _ = std::fs::remove_file(&self.path);
        // Closing the descriptor (after this) releases the lock.
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_holder_is_named_from_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("lock");
        std::fs::write(&p, "pid 42, started 2026-12-01T10:00:00Z\n").unwrap();
        assert_eq!(
            holder(&File::open(&p).unwrap()),
            "pid 42, started 2026-12-01T10:00:00Z"
        );
        std::fs::write(&p, "").unwrap();
        assert_eq!(holder(&File::open(&p).unwrap()), "pid unknown");
    }
}
