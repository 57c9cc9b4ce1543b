//! The workers: where a task is queued, which task runs next, how idle
//! workers find work or sleep, and shutdown.
//!
//! Each worker owns a `Core`: its `Local` ring, the LIFO slot and its tick.
//! The core lives on the worker's stack, reachable from the thread through
//! the `WORKER` thread-local so that a waker called during a poll on that
//! thread queues locally. Other threads reach a worker only through its
//! `Steal` handle and its `Unparker`.
//!
//! Which task runs next: every 61st tick the inject queue first, so
//! remote spawns cannot starve; otherwise the LIFO slot, then the ring, then
//! the inject queue. After a poll, the task the poll woke or spawned last
//! (in the LIFO slot) runs at once, at most 3 times in a row; then it goes
//! to the back of the ring, so that two tasks waking each other cannot
//! starve the rest.

use std::cell::{Cell, RefCell};
use std::fmt;
use std::future::Future;
use std::ptr;

use super::idle::Idle;
use super::live::LiveTasks;
use super::task::{JoinHandle, Notified, RawTask};
use crate::park::{Parker, Unparker};
use crate::queue::{Inject, Local, Steal};
use crate::sync::atomic::{AtomicBool, Ordering::*};
use crate::sync::{thread_local, Arc};

/// Ticks between two checks of the inject queue first (tokio's value).
const INJECT_INTERVAL: u32 = 61;
/// LIFO polls in a row before the LIFO task yields to the ring.
const MAX_LIFO_POLLS: usize = 3;

/// The capacity of each worker's ring: small under the models, so that
/// overflow and stealing are reached with a handful of tasks.
const LOCAL_CAPACITY: usize = if cfg!(any(loom, shuttle)) { 4 } else { 256 };

pub(super) struct Remote {
    steal: Steal<Notified>,
    unparker: Unparker,
}

/// What every worker, handle, task and waker of one runtime shares.
pub(super) struct Shared {
    remotes: Box<[Remote]>,
    inject: Inject<Notified>,
    idle: Idle,
    owned: LiveTasks<RawTask>,
    shutdown: AtomicBool,
}

/// The worker-private state.
pub(super) struct Core {
    local: Local<Notified>,
    lifo: Option<Notified>,
    tick: u32,
    searching: bool,
    rng: u32,
    /// Set when the worker stops: later wakes on its thread go to the
    /// inject queue, which shutdown drains.
    stopped: bool,
}

/// A running worker, on its thread's stack.
pub(super) struct Worker {
    shared: Arc<Shared>,
    index: usize,
    core: RefCell<Core>,
}

thread_local! {
    // loom's and shuttle's `thread_local!` do not accept `const { .. }`.
    #[allow(clippy::missing_const_for_thread_local)]
    /// The worker running on this thread, if any.
    static WORKER: Cell<*const Worker> = Cell::new(ptr::null());
    /// The runtime whose context this thread is in (a worker, or inside
    /// `Runtime::block_on`): `spawn` uses it.
    #[allow(clippy::missing_const_for_thread_local)]
    static CONTEXT: RefCell<Option<Arc<Shared>>> = RefCell::new(None);
}

/// Leaves the context when dropped.
pub(super) struct ContextGuard {
    previous: Option<Arc<Shared>>,
}

impl Drop for ContextGuard {
    fn drop(&mut self) {
        let previous = self.previous.take();
        CONTEXT.with(|context| *context.borrow_mut() = previous);
    }
}

/// Enters `shared`'s context on this thread.
pub(super) fn enter(shared: &Arc<Shared>) -> ContextGuard {
    let previous = CONTEXT.with(|context| context.borrow_mut().replace(shared.clone()));
    ContextGuard { previous }
}

/// The runtime whose context this thread is in.
pub(super) fn current() -> Option<Arc<Shared>> {
    CONTEXT.with(|context| context.borrow().clone())
}

/// Creates the shared state for `workers` workers, returning each worker's
/// ring and parker for its thread.
pub(super) fn create(workers: usize) -> (Arc<Shared>, Vec<(Local<Notified>, Parker)>) {
    let mut remotes = Vec::with_capacity(workers);
    let mut cores = Vec::with_capacity(workers);
    for _ in 0..workers {
        let local = Local::with_capacity(LOCAL_CAPACITY);
        let parker = Parker::new();
        remotes.push(Remote {
            steal: local.stealer(),
            unparker: parker.unparker().clone(),
        });
        cores.push((local, parker));
    }
    let shared = Arc::new(Shared {
        remotes: remotes.into_boxed_slice(),
        inject: Inject::new(),
        idle: Idle::new(workers),
        owned: LiveTasks::new(live_task_shards(workers)),
        shutdown: AtomicBool::new(false),
    });
    (shared, cores)
}

impl Shared {
    /// Spawns `future`; called by `Runtime::spawn` and `spawn`.
    pub(super) fn spawn<F>(this: &Arc<Self>, future: F) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        let raw = RawTask::new(future, this.clone());
        // SAFETY: `raw` was created for `F`; the handle's reference passes.
        let handle = unsafe { JoinHandle::new(raw) };
        // SAFETY: `State::new` counts the queue's reference and sets
        // NOTIFIED for it.
        let notified = unsafe { Notified::from_raw(raw) };
        if this.owned.insert(raw) {
            this.schedule(notified, false);
        } else {
            // The runtime is shutting down: the task never runs. `shutdown`
            // drops the future and uses the reference the list would have
            // held; then the queue's reference goes.
            raw.shutdown();
            drop(notified);
        }
        handle
    }

    /// Queues a task: on this thread's worker of the same runtime, into the
    /// LIFO slot (or the back of the ring if `is_yield`); from elsewhere,
    /// into the inject queue. Wakes a sleeping worker when the task can be
    /// taken by another one.
    pub(super) fn schedule(&self, task: Notified, is_yield: bool) {
        let task = WORKER.with(|worker| {
            // SAFETY: the pointer is set by `Worker::run` on this thread
            // for the time the worker lives on its stack, and cleared
            // before it returns.
            let Some(worker) = (unsafe { worker.get().as_ref() }) else {
                return Some(task);
            };
            if !ptr::eq(&*worker.shared, self) {
                return Some(task);
            }
            let Ok(mut core) = worker.core.try_borrow_mut() else {
                return Some(task);
            };
            if core.stopped {
                return Some(task);
            }
            let core = &mut *core;
            let notify_others = if is_yield {
                core.local.push_back(task, &self.inject);
                true
            } else {
                match core.lifo.replace(task) {
                    Some(previous) => {
                        core.local.push_back(previous, &self.inject);
                        true
                    }
                    None => false,
                }
            };
            if notify_others {
                self.notify_parked();
            }
            None
        });
        if let Some(task) = task {
            self.inject.push(task);
            if self.is_shutdown() {
                // `drop_tasks` may have drained the queue already: a
                // reference left there would keep the task, and through it
                // this runtime, alive forever. If its last drain
                // took the lock after this push, it dropped the reference;
                // if before, the shutdown store happens-before this load
                // (through the lock), so this load sees it and drains.
                self.drain_inject();
            } else {
                self.notify_parked();
            }
        }
    }

    fn drain_inject(&self) {
        while let Some(task) = self.inject.pop() {
            drop(task);
        }
    }

    /// Wakes one sleeping worker if no worker searches.
    fn notify_parked(&self) {
        if let Some(index) = self.idle.worker_to_notify() {
            self.remotes[index].unparker.unpark();
        }
    }

    /// A worker going to sleep that `Idle` says must check looks at every
    /// queue once more, and wakes a worker if one holds work.
    fn notify_if_work_pending(&self) {
        let pending = self.remotes.iter().any(|r| !r.steal.is_empty()) || !self.inject.is_empty();
        if pending {
            self.notify_parked();
        }
    }

    fn is_shutdown(&self) -> bool {
        // Relaxed: the flag only needs to be seen eventually; the unpark
        // that follows its store carries it to a sleeping worker.
        self.shutdown.load(Relaxed)
    }

    /// Takes a completed task out of the live-task list; true if it was
    /// listed (its list reference is then released by the caller).
    pub(super) fn remove_task(&self, task: RawTask) -> bool {
        self.owned.remove(&task)
    }

    /// Shutdown, after every worker has stopped: tasks still alive have
    /// their futures dropped on this thread; queued references are dropped.
    pub(super) fn shut_down(&self) {
        // Relaxed: the unparks below carry it (see `is_shutdown`).
        self.shutdown.store(true, Relaxed);
        for remote in self.remotes.iter() {
            remote.unparker.unpark();
        }
    }

    /// After the worker threads are joined.
    pub(super) fn drop_tasks(this: &Arc<Self>) {
        let _context = enter(this);
        for task in this.owned.close_and_take_all() {
            task.shutdown();
        }
        // References queued by wakes during the shutdowns above; a wake
        // that queues after this drains the queue itself (`schedule`).
        this.drain_inject();
    }
}

impl Worker {
    /// The worker's loop, on its own thread, until shutdown.
    pub(super) fn run(shared: Arc<Shared>, index: usize, local: Local<Notified>, parker: Parker) {
        let worker = Worker {
            shared,
            index,
            core: RefCell::new(Core {
                local,
                lifo: None,
                tick: 0,
                searching: false,
                rng: rng_seed(index),
                stopped: false,
            }),
        };
        let _context = enter(&worker.shared);
        WORKER.with(|w| w.set(&worker));
        while !worker.shared.is_shutdown() {
            if let Some(task) = worker.next_task().or_else(|| worker.steal_work()) {
                worker.run_task(task);
            } else {
                worker.park(&parker);
            }
        }
        worker.stop();
        WORKER.with(|w| w.set(ptr::null()));
    }

    fn next_task(&self) -> Option<Notified> {
        let mut core = self.core.borrow_mut();
        core.tick = core.tick.wrapping_add(1);
        if core.tick % INJECT_INTERVAL == 0 {
            if let Some(task) = self.shared.inject.pop() {
                return Some(task);
            }
        }
        if let Some(task) = core.lifo.take().or_else(|| core.local.pop()) {
            return Some(task);
        }
        drop(core);
        self.shared.inject.pop()
    }

    /// Searches the other workers' rings (from a random one), then the
    /// inject queue; at most half of the workers search at once.
    fn steal_work(&self) -> Option<Notified> {
        let mut core = self.core.borrow_mut();
        if !core.searching {
            if !self.shared.idle.transition_worker_to_searching() {
                return None;
            }
            core.searching = true;
        }
        let workers = self.shared.remotes.len();
        core.rng = xorshift32(core.rng);
        for victim in victims(core.rng as usize, workers, self.index) {
            if let Some(task) = self.shared.remotes[victim]
                .steal
                .steal_into(&mut core.local)
            {
                return Some(task);
            }
        }
        drop(core);
        self.shared.inject.pop()
    }

    fn run_task(&self, task: Notified) {
        let was_searching = std::mem::replace(&mut self.core.borrow_mut().searching, false);
        if was_searching && self.shared.idle.transition_worker_from_searching() {
            // The last searcher found work: another worker takes over the
            // search, for work that may remain.
            self.shared.notify_parked();
        }
        task.run();
        for _ in 0..MAX_LIFO_POLLS {
            let Some(task) = self.core.borrow_mut().lifo.take() else {
                return;
            };
            task.run();
        }
        let mut core = self.core.borrow_mut();
        if let Some(task) = core.lifo.take() {
            // the LIFO slot is given up; the task waits its turn.
            core.local.push_back(task, &self.shared.inject);
            drop(core);
            self.shared.notify_parked();
        }
    }

    fn park(&self, parker: &Parker) {
        let is_searching = std::mem::replace(&mut self.core.borrow_mut().searching, false);
        // The last searcher checks; so does a worker refused a search when
        // the last searcher stopped while every worker was awake and woke
        // nobody (a hand-off owed: `idle.rs`, R-7).
        let must_check = self
            .shared
            .idle
            .transition_worker_to_parked(self.index, is_searching);
        if must_check {
            self.shared.notify_if_work_pending();
        }
        parker.park();
        // Woken by `notify_parked`, which counted this worker as searching
        // (or by shutdown, after which the count no longer matters).
        self.core.borrow_mut().searching = true;
    }

    /// Drops every reference this worker queued; the tasks stay in the
    /// live-task list for `drop_tasks`.
    fn stop(&self) {
        self.core.borrow_mut().stopped = true;
        loop {
            let task = {
                let mut core = self.core.borrow_mut();
                core.lifo.take().or_else(|| core.local.pop())
            };
            match task {
                Some(task) => drop(task),
                None => break,
            }
        }
    }
}

/// A worker's first random state: non-zero (xorshift never leaves zero)
/// and different for each worker, so that searchers start apart.
fn rng_seed(index: usize) -> u32 {
    0x9E37_79B9 ^ (index as u32).wrapping_mul(0x85EB_CA6B) | 1
}

/// One step of Marsaglia's xorshift32: from any non-zero state it visits
/// every non-zero `u32` before it repeats.
fn xorshift32(mut x: u32) -> u32 {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    x
}

/// Shards of the live-task list: four per worker, to spread the lock, and
/// one under the models (loom and shuttle), where a whole runtime's state
/// space is the limit. The list's own models run it with two shards, so
/// that closing one shard while an insert reaches another is checked
/// there (`src/sync/mod.rs`, "Model-build constants").
fn live_task_shards(workers: usize) -> usize {
    if cfg!(any(loom, shuttle)) {
        1
    } else {
        (workers * 4).next_power_of_two()
    }
}

/// The workers a searcher tries, in order: every worker but itself, once
/// each, from worker `random % workers` on, wrapping around.
fn victims(random: usize, workers: usize, me: usize) -> impl Iterator<Item = usize> {
    let start = random % workers;
    (start..workers)
        .chain(0..start)
        .filter(move |&victim| victim != me)
}

impl fmt::Debug for Shared {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Shared")
            .field("workers", &self.remotes.len())
            .field("idle", &self.idle)
            .field("inject", &self.inject.len())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A searcher tries every other worker exactly once, from the one the
    /// random number picks: no worker's ring is skipped.
    #[test]
    fn victims_are_every_other_worker_once() {
        for workers in 1..=8 {
            for me in 0..workers {
                for random in [0, 1, 2, 5, 7, 64, 1_000_003, u32::MAX as usize] {
                    let order: Vec<usize> = victims(random, workers, me).collect();
                    let mut seen = order.clone();
                    seen.sort_unstable();
                    let others: Vec<usize> = (0..workers).filter(|&w| w != me).collect();
                    assert_eq!(seen, others, "{workers} workers, me {me}, random {random}");
                    let start = random % workers;
                    let first = if start == me {
                        (start + 1) % workers
                    } else {
                        start
                    };
                    assert!(order.first().map_or(true, |&v| v == first));
                }
            }
        }
    }

    /// xorshift32 is Marsaglia's (the known answers below are from his
    /// generator), and the seeds are non-zero and apart.
    #[test]
    fn xorshift32_from_distinct_non_zero_seeds() {
        assert_eq!(xorshift32(1), 270_369);
        assert_eq!(xorshift32(2_463_534_242), 723_471_715);
        let seeds: Vec<u32> = (0..64).map(rng_seed).collect();
        assert!(seeds.iter().all(|&s| s != 0));
        let mut distinct = seeds.clone();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(distinct.len(), seeds.len(), "two workers share a seed");
    }
}
