//! The live-task list: every task spawned and not yet complete, so that
//! shutdown can drop the futures of those still alive. Sharded by
//! address to spread the lock; each shard is a set behind one mutex, with
//! a flag that refuses inserts once shutdown has closed it.
//!
//! As a component on its own (specification `specs/live_tasks.rs`,
//! checked by the `runtime::live_tasks_*` models, which run it with two
//! shards, and by the property test `runtime::live_tasks_match_reference`),
//! one shard at a time, each call on a shard one atomic step under its
//! lock:
//! - [`insert`](LiveTasks::insert) lists a task and answers true, or
//!   answers false once the task's shard is closed: the caller keeps the
//!   reference it offered and shuts the task down itself.
//! - [`remove`](LiveTasks::remove) answers whether the task was listed,
//!   unlisting it: true hands the caller the list's reference.
//! - [`close_and_take_all`](LiveTasks::close_and_take_all) closes the
//!   shards one after another, taking every task each lists. It is not one
//!   step over the whole list: while it runs, an insert into a shard it has
//!   not reached yet succeeds (and that task is taken) after an insert into
//!   one it has closed was refused. The runtime needs no more than each
//!   shard's answer: every task is either refused, or listed and then given
//!   up exactly once, by `remove` or by the close.
//!
//! Contract with its callers (kept by `worker.rs` and `task.rs`): a task
//! is inserted once, by its spawner, before anything can complete it;
//! `remove` is called only after that insert returned (by the completer);
//! the list's reference is used by whichever of `remove` (true) and the
//! close took the task, and by nobody else.

use crate::sync::{Mutex, UnsafeCell};

/// What the list holds: a task, or in the component's own tests a
/// stand-in for one ([`Entries`]).
pub trait Listed: Clone + Eq {
    /// A number that spreads entries over the shards: a task's address.
    fn shard_key(&self) -> usize;
    /// The entry's index in its shard. The list writes and reads it only
    /// under that shard's lock; nothing else touches it.
    fn slot(&self) -> &UnsafeCell<usize>;
}

/// The list: see the module's documentation.
pub struct LiveTasks<T> {
    shards: Box<[Mutex<Shard<T>>]>,
}

impl<T> std::fmt::Debug for LiveTasks<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LiveTasks")
            .field("shards", &self.shards.len())
            .finish_non_exhaustive()
    }
}

struct Shard<T> {
    slots: Vec<Option<T>>,
    free: Vec<usize>,
    closed: bool,
}

impl<T: Listed> LiveTasks<T> {
    /// An empty list of `shards` shards.
    ///
    /// # Panics
    /// If `shards` is 0.
    pub fn new(shards: usize) -> Self {
        assert!(shards > 0, "a live-task list needs at least one shard");
        LiveTasks {
            shards: (0..shards)
                .map(|_| {
                    Mutex::new(Shard {
                        slots: Vec::new(),
                        free: Vec::new(),
                        closed: false,
                    })
                })
                .collect(),
        }
    }

    /// The shard that lists `task`: always the same one for a task.
    pub fn shard_of(&self, task: &T) -> usize {
        // The multiply mixes the key's higher bits into the ones kept.
        let hash = task
            .shard_key()
            .wrapping_mul(0x9E37_79B9_7F4A_7C15_u64 as usize);
        (hash >> 8) % self.shards.len()
    }

    /// Lists `task` (taking the list's reference); false once its shard is
    /// closed.
    pub fn insert(&self, task: T) -> bool {
        let mut shard = self.shards[self.shard_of(&task)].lock();
        if shard.closed {
            return false;
        }
        let slot = shard.free.pop().unwrap_or(shard.slots.len());
        // SAFETY: a task's slot index is accessed only under the lock of
        // the shard that lists it, which this thread holds.
        task.slot().with_mut(|s| unsafe { *s = slot });
        if slot == shard.slots.len() {
            shard.slots.push(Some(task));
        } else {
            shard.slots[slot] = Some(task);
        }
        true
    }

    /// Unlists `task`; true if it was listed (the caller now holds the
    /// list's reference), false if it never was or the close took it.
    pub fn remove(&self, task: &T) -> bool {
        let mut shard = self.shards[self.shard_of(task)].lock();
        // SAFETY: as in `insert`: this thread holds the shard's lock.
        let slot = task.slot().with(|s| unsafe { *s });
        if shard.slots.get(slot).and_then(Option::as_ref) != Some(task) {
            return false;
        }
        shard.slots[slot] = None;
        shard.free.push(slot);
        true
    }

    /// Closes every shard, one after another, and returns every task they
    /// listed, with the list's references.
    pub fn close_and_take_all(&self) -> Vec<T> {
        let mut tasks = Vec::new();
        for shard in self.shards.iter() {
            let mut shard = shard.lock();
            shard.closed = true;
            shard.free.clear();
            tasks.extend(shard.slots.drain(..).flatten());
        }
        tasks
    }

    /// Each shard's situation, as models name it: (tasks listed, free
    /// slots waiting for reuse, closed). A diagnostic for a scope's
    /// regimes: it takes each shard's lock in turn, so it is one shard's
    /// snapshot at a time.
    #[doc(hidden)]
    pub fn internals(&self) -> Vec<(usize, usize, bool)> {
        self.shards
            .iter()
            .map(|shard| {
                let shard = shard.lock();
                let listed = shard.slots.iter().filter(|slot| slot.is_some()).count();
                (listed, shard.free.len(), shard.closed)
            })
            .collect()
    }
}

/// Stand-ins for tasks, for the list's own models and property tests:
/// which shard lists an entry is the same in every run (with two shards,
/// entry `i` is in shard `i % 2`).
#[derive(Clone, Debug)]
pub struct Entries(std::sync::Arc<[UnsafeCell<usize>]>);

// SAFETY: the cells hold plain indices, and reaching one takes an
// `unsafe` dereference inside `with`/`with_mut`, which only the list makes,
// under the lock of the shard that lists the entry (`Listed::slot`): no
// two threads touch a cell at once.
unsafe impl Send for Entries {}
// SAFETY: as for `Send`.
unsafe impl Sync for Entries {}

impl Entries {
    /// Entries `0..n`.
    pub fn new(n: usize) -> Self {
        Entries((0..n).map(|_| UnsafeCell::new(usize::MAX)).collect())
    }

    /// Entry `index`.
    ///
    /// # Panics
    /// If `index` is not below the count given to `new`.
    pub fn get(&self, index: usize) -> Entry {
        assert!(index < self.0.len(), "entry {index} of {}", self.0.len());
        Entry {
            cells: self.clone(),
            index,
        }
    }
}

/// One of [`Entries`], which it keeps alive.
#[derive(Clone)]
pub struct Entry {
    cells: Entries,
    index: usize,
}

impl Entry {
    /// Its index in its [`Entries`].
    pub fn index(&self) -> usize {
        self.index
    }
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        std::sync::Arc::ptr_eq(&self.cells.0, &other.cells.0) && self.index == other.index
    }
}

impl Eq for Entry {}

impl std::fmt::Debug for Entry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Entry({})", self.index)
    }
}

impl Listed for Entry {
    fn shard_key(&self) -> usize {
        // Times 256, so that the hash's kept bits are the index's times an
        // odd number: with 2 shards, shard `index % 2`.
        self.index << 8
    }

    fn slot(&self) -> &UnsafeCell<usize> {
        &self.cells.0[self.index]
    }
}
