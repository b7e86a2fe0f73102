//! Group commit for the `batched` store, led by the callers: whoever finds no commit in
//! progress commits everything queued so far; callers that arrive meanwhile queue and
//! wait. Not here: the other SQLite stores, the busy handler (the parent module).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use parking_lot::{Condvar, Mutex};
use rusqlite::{params, Connection, TransactionBehavior};

use super::sql;

/// One extend waiting in the group-commit queue.
struct Extend {
    id: u64,
    lease: String,
    holder: String,
    expiry: i64,
}

#[derive(Default)]
struct GroupState {
    queue: Vec<Extend>,
    committing: bool,
    next_id: u64,
    done: HashMap<u64, Result<bool, String>>,
}

/// Group commit without a committer thread (leader and followers): a caller that finds
/// nobody committing commits at once, itself, everything queued so far (alone: just its
/// own extend, with no hand-off to another thread); callers that arrive meanwhile queue
/// and wait, and the next of them to find the commit finished leads the next group.
pub(super) struct GroupCommit {
    state: Mutex<GroupState>,
    finished: Condvar,
    conn: Mutex<Connection>,
    batches: Arc<AtomicU64>,
    extends: Arc<AtomicU64>,
}

/// Most extends in one group.
const GROUP_MAX: usize = 512;

impl GroupCommit {
    /// A group committer over `conn`, counting groups in `batches` and the extends they
    /// carried in `extends`.
    pub(super) fn new(
        conn: Connection,
        batches: Arc<AtomicU64>,
        extends: Arc<AtomicU64>,
    ) -> GroupCommit {
        GroupCommit {
            state: Mutex::new(GroupState::default()),
            finished: Condvar::new(),
            conn: Mutex::new(conn),
            batches,
            extends,
        }
    }

    /// Extends `lease` for `holder` to `expiry` in the next group; whether it did.
    pub(super) fn extend(&self, lease: &str, holder: &str, expiry: i64) -> Result<bool, String> {
        let mut st = self.state.lock();
        st.next_id += 1;
        let id = st.next_id;
        st.queue.push(Extend {
            id,
            lease: lease.to_owned(),
            holder: holder.to_owned(),
            expiry,
        });
        loop {
            if let Some(result) = st.done.remove(&id) {
                return result;
            }
            if st.committing {
                let start = Instant::now();
                self.finished.wait(&mut st);
                // Queued behind the group being committed: blocked, off CPU.
                crate::store::note_wait(start.elapsed());
                continue;
            }
            st.committing = true;
            let take = st.queue.len().min(GROUP_MAX);
            let group: Vec<Extend> = st.queue.drain(..take).collect();
            drop(st);
            // The committer's role is the store's single writer: one group at a time.
            let writer = harness::locks::thread_acquired(crate::store::lock_ids::WRITER, None);
            let outcome = commit_group(&mut self.conn.lock(), &group);
            drop(writer);
            self.batches.fetch_add(1, Ordering::Relaxed);
            self.extends
                .fetch_add(group.len() as u64, Ordering::Relaxed);
            st = self.state.lock();
            match outcome {
                Ok(results) => {
                    for (e, ok) in group.iter().zip(results) {
                        st.done.insert(e.id, Ok(ok));
                    }
                }
                Err(err) => {
                    let message = sql(err);
                    for e in &group {
                        st.done.insert(e.id, Err(message.clone()));
                    }
                }
            }
            st.committing = false;
            self.finished.notify_all();
        }
    }
}

/// Applies a group of extends in one IMMEDIATE transaction; each extend's answer.
fn commit_group(conn: &mut Connection, group: &[Extend]) -> rusqlite::Result<Vec<bool>> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let mut results = Vec::with_capacity(group.len());
    {
        let mut update =
            tx.prepare_cached("UPDATE lease SET expiry = ?1 WHERE uuid = ?2 AND holder = ?3")?;
        for e in group {
            results.push(update.execute(params![e.expiry, e.lease, e.holder])? == 1);
        }
    }
    tx.commit()?;
    Ok(results)
}
