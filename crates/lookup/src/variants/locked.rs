//! The directory as one hash map behind one lock: `global-mutex`, `rwlock-std` and
//! `rwlock-parking-lot`. The three differ only in the lock, which is the point: the same
//! map and the same copy-out, so any difference in the report is the lock's.

use std::collections::HashMap;
use std::marker::PhantomData;

use harness::locks::LockSet;
use harness::OpCtx;

use crate::directory::lock_ids::{DIRECTORY, DIRECTORY_READ};
use crate::directory::{Directory, DirectoryData, Entry};

type Users = HashMap<String, Entry>;

/// A kind of lock that can guard the user map.
pub trait LockFamily: Send + Sync + 'static {
    /// The lock with the map inside.
    type Lock: Send + Sync;
    /// Wraps the map.
    fn new(users: Users) -> Self::Lock;
    /// The lock as the lock table names it.
    fn locks() -> LockSet;
    /// Runs `f` with shared access, accounting any wait to `ctx`.
    fn read<R>(lock: &Self::Lock, ctx: &mut OpCtx, f: impl FnOnce(&Users) -> R) -> R;
    /// Runs `f` with exclusive access, accounting any wait to `ctx`.
    fn write<R>(lock: &Self::Lock, ctx: &mut OpCtx, f: impl FnOnce(&mut Users) -> R) -> R;
}

/// One `std::sync::Mutex`: readers exclude each other too.
pub struct GlobalMutex;
/// `std::sync::RwLock` (futex-based on Linux).
pub struct StdRwLock;
/// `parking_lot::RwLock` (eventually fair, writer-preferring).
pub struct ParkingLotRwLock;

impl LockFamily for GlobalMutex {
    type Lock = std::sync::Mutex<Users>;
    fn new(users: Users) -> Self::Lock {
        std::sync::Mutex::new(users)
    }
    fn locks() -> LockSet {
        LockSet::new().with(DIRECTORY, "directory mutex", 1)
    }
    fn read<R>(lock: &Self::Lock, ctx: &mut OpCtx, f: impl FnOnce(&Users) -> R) -> R {
        Self::write(lock, ctx, |users| f(users))
    }
    fn write<R>(lock: &Self::Lock, ctx: &mut OpCtx, f: impl FnOnce(&mut Users) -> R) -> R {
        let mut guard = ctx.lock(
            DIRECTORY,
            || lock.try_lock().ok(),
            || lock.lock().expect("directory mutex poisoned"),
        );
        f(&mut guard)
    }
}

impl LockFamily for StdRwLock {
    type Lock = std::sync::RwLock<Users>;
    fn new(users: Users) -> Self::Lock {
        std::sync::RwLock::new(users)
    }
    fn locks() -> LockSet {
        rw_locks()
    }
    fn read<R>(lock: &Self::Lock, ctx: &mut OpCtx, f: impl FnOnce(&Users) -> R) -> R {
        let guard = ctx.lock(
            DIRECTORY_READ,
            || lock.try_read().ok(),
            || lock.read().expect("directory lock poisoned"),
        );
        f(&guard)
    }
    fn write<R>(lock: &Self::Lock, ctx: &mut OpCtx, f: impl FnOnce(&mut Users) -> R) -> R {
        let mut guard = ctx.lock(
            DIRECTORY,
            || lock.try_write().ok(),
            || lock.write().expect("directory lock poisoned"),
        );
        f(&mut guard)
    }
}

impl LockFamily for ParkingLotRwLock {
    type Lock = parking_lot::RwLock<Users>;
    fn new(users: Users) -> Self::Lock {
        parking_lot::RwLock::new(users)
    }
    fn locks() -> LockSet {
        rw_locks()
    }
    fn read<R>(lock: &Self::Lock, ctx: &mut OpCtx, f: impl FnOnce(&Users) -> R) -> R {
        let guard = ctx.lock(DIRECTORY_READ, || lock.try_read(), || lock.read());
        f(&guard)
    }
    fn write<R>(lock: &Self::Lock, ctx: &mut OpCtx, f: impl FnOnce(&mut Users) -> R) -> R {
        let mut guard = ctx.lock(DIRECTORY, || lock.try_write(), || lock.write());
        f(&mut guard)
    }
}

/// A reader-writer lock's two sides: readers share (no ceiling), a writer excludes.
fn rw_locks() -> LockSet {
    LockSet::new()
        .shared(DIRECTORY_READ, "directory lock (read)")
        .with(DIRECTORY, "directory lock (write)", 1)
}

/// The user map behind one lock of family `F`. Groups are held too (a directory holds
/// them) but the search never touches them.
pub struct LockedDirectory<F: LockFamily> {
    users: F::Lock,
    _groups: Vec<crate::directory::Group>,
    _family: PhantomData<F>,
}

impl<F: LockFamily> LockedDirectory<F> {
    /// Loads `data`.
    pub fn new(data: &DirectoryData) -> Self {
        let users = data
            .users
            .iter()
            .map(|u| (u.uid.clone(), u.clone()))
            .collect();
        LockedDirectory {
            users: F::new(users),
            _groups: data.groups.clone(),
            _family: PhantomData,
        }
    }
}

impl<F: LockFamily> Directory for LockedDirectory<F> {
    fn search(&self, uid: &str, _thread: usize, ctx: &mut OpCtx) -> Option<Entry> {
        F::read(&self.users, ctx, |users| users.get(uid).cloned())
    }

    fn modify(&self, uid: &str, ctx: &mut OpCtx) -> bool {
        F::write(&self.users, ctx, |users| match users.get_mut(uid) {
            Some(entry) => {
                entry.revision += 1;
                true
            }
            None => false,
        })
    }

    fn locks(&self) -> LockSet {
        F::locks()
    }

    fn total_revisions(&self) -> u64 {
        F::read(&self.users, &mut OpCtx::default(), |users| {
            users.values().map(|e| e.revision).sum()
        })
    }
}
