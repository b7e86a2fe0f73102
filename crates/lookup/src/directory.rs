//! The synthetic directory: users and groups as a directory server holds them, generated
//! deterministically, and the [`Directory`] trait every variant implements.
//!
//! Generation is deterministic (no RNG) so every variant and every run searches the same
//! data. This module does not decide how entries are locked or stored: variants do.

use harness::locks::LockSet;
use harness::OpCtx;

/// The lock table's ids of lookup's locks (one namespace for every design and dispatch).
pub mod lock_ids {
    use harness::locks::LockId;
    /// The directory's one lock, or a reader-writer lock's exclusive side.
    pub const DIRECTORY: LockId = LockId(0);
    /// A reader-writer lock's shared side.
    pub const DIRECTORY_READ: LockId = LockId(1);
    /// The entry cache's lock (its LRU list and counters).
    pub const ENTRY_CACHE: LockId = LockId(2);
    /// A single writer's lock (LMDB's, the snapshot's).
    pub const WRITER: LockId = LockId(3);
    /// A dispatching server's shared request queue.
    pub const QUEUE: LockId = LockId(4);
}

/// A user entry: the attributes the seed's search returns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The search key, e.g. `user000042`.
    pub uid: String,
    /// Common name.
    pub cn: String,
    /// Surname.
    pub sn: String,
    /// Mail address.
    pub mail: String,
    /// POSIX uid number.
    pub uid_number: u32,
    /// Common names of the groups the user belongs to.
    pub member_of: Vec<String>,
    /// How many times the entry was modified; verification sums these.
    pub revision: u64,
}

impl Entry {
    /// Encodes the entry as bytes (for stores that keep bytes, such as LMDB): fields
    /// separated by 0x1e, groups by 0x1f. Neither byte occurs in generated text.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(128);
        for field in [&self.uid, &self.cn, &self.sn, &self.mail] {
            out.extend_from_slice(field.as_bytes());
            out.push(0x1e);
        }
        out.extend_from_slice(self.uid_number.to_string().as_bytes());
        out.push(0x1e);
        out.extend_from_slice(self.revision.to_string().as_bytes());
        out.push(0x1e);
        out.extend_from_slice(self.member_of.join("\u{1f}").as_bytes());
        out
    }

    /// Decodes what [`Entry::encode`] wrote; `None` for bytes it did not write.
    pub fn decode(bytes: &[u8]) -> Option<Entry> {
        let text = std::str::from_utf8(bytes).ok()?;
        let mut fields = text.split('\u{1e}');
        let mut next = || fields.next();
        let uid = next()?.to_owned();
        let cn = next()?.to_owned();
        let sn = next()?.to_owned();
        let mail = next()?.to_owned();
        let uid_number = next()?.parse().ok()?;
        let revision = next()?.parse().ok()?;
        let groups = next()?;
        let member_of = if groups.is_empty() {
            Vec::new()
        } else {
            groups.split('\u{1f}').map(str::to_owned).collect()
        };
        Some(Entry {
            uid,
            cn,
            sn,
            mail,
            uid_number,
            member_of,
            revision,
        })
    }
}

/// A group entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Group {
    /// Common name, e.g. `group0007`.
    pub cn: String,
    /// uids of the members.
    pub members: Vec<String>,
}

/// The whole generated directory, before a variant loads it.
#[derive(Debug, Clone)]
pub struct DirectoryData {
    /// Users in uid order.
    pub users: Vec<Entry>,
    /// Groups in cn order.
    pub groups: Vec<Group>,
}

/// The uid of user number `index`.
pub fn uid_of(index: usize) -> String {
    format!("user{index:06}")
}

impl DirectoryData {
    /// Generates `users` users and `groups` groups. User `i` belongs to up to three groups
    /// chosen by fixed strides, so group sizes are uneven but reproducible.
    pub fn generate(users: usize, groups: usize) -> DirectoryData {
        let group_cn = |g: usize| format!("group{g:05}");
        let mut group_list: Vec<Group> = (0..groups)
            .map(|g| Group {
                cn: group_cn(g),
                members: Vec::new(),
            })
            .collect();
        let users = (0..users)
            .map(|i| {
                let uid = uid_of(i);
                let mut member_of = Vec::new();
                if groups > 0 {
                    for (k, stride) in [1usize, 7, 13].iter().enumerate().take(i % 4) {
                        let g = (i * stride + k * 3) % groups;
                        if !member_of.contains(&group_cn(g)) {
                            member_of.push(group_cn(g));
                            group_list[g].members.push(uid.clone());
                        }
                    }
                }
                Entry {
                    cn: format!("Test User {i}"),
                    sn: format!("User{i}"),
                    mail: format!("{uid}@example.com"),
                    uid_number: 10_000 + i as u32,
                    member_of,
                    revision: 0,
                    uid,
                }
            })
            .collect();
        DirectoryData {
            users,
            groups: group_list,
        }
    }
}

/// A directory that can be searched and modified by many threads at once.
///
/// Implementations measure their own waiting through `ctx` at the point where they block
/// (see [`harness::OpCtx::acquire`]).
pub trait Directory: Send + Sync + 'static {
    /// `(uid=<uid>)`: a copy of the matching entry, or `None`. `thread` is the caller's
    /// worker index, for designs that keep per-thread state.
    fn search(&self, uid: &str, thread: usize, ctx: &mut OpCtx) -> Option<Entry>;

    /// Modifies the entry (bumps its revision); false if there is no such entry.
    fn modify(&self, uid: &str, ctx: &mut OpCtx) -> bool;

    /// The sum of every user's revision: equals the number of successful modifications if
    /// none was lost.
    fn total_revisions(&self) -> u64;

    /// The locks this design names for the lock table (ids from [`lock_ids`]), and what
    /// it takes without naming; by default, that it names none.
    fn locks(&self) -> LockSet {
        LockSet::new().unnamed("this design's locks (it names none)")
    }

    /// Design-specific figures for the record's `extra` (e.g. a cache hit ratio).
    fn extra(&self) -> serde_json::Map<String, serde_json::Value> {
        serde_json::Map::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generation_is_deterministic_and_consistent() {
        let a = DirectoryData::generate(6000, 4000);
        let b = DirectoryData::generate(6000, 4000);
        assert_eq!(a.users, b.users);
        assert_eq!(a.users.len(), 6000);
        assert_eq!(a.groups.len(), 4000);
        assert_eq!(a.users[42].uid, "user000042");
        // memberOf and members agree in both directions.
        let memberships: usize = a.users.iter().map(|u| u.member_of.len()).sum();
        let members: usize = a.groups.iter().map(|g| g.members.len()).sum();
        assert_eq!(memberships, members);
        assert!(memberships > 6000, "most users belong to a group");
        let g = &a.groups[1];
        for uid in &g.members {
            let user = &a.users[uid[4..].parse::<usize>().unwrap()];
            assert!(user.member_of.contains(&g.cn));
        }
    }

    #[test]
    fn no_groups_means_no_memberships() {
        let d = DirectoryData::generate(10, 0);
        assert!(d.users.iter().all(|u| u.member_of.is_empty()));
    }

    #[test]
    fn entries_survive_encoding() {
        let d = DirectoryData::generate(8, 5);
        for mut user in d.users {
            user.revision = 17;
            assert_eq!(Entry::decode(&user.encode()), Some(user));
        }
        assert_eq!(Entry::decode(b"garbage"), None);
    }
}
