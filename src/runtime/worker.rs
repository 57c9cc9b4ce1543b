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
//! the inject queue, then other workers' rings. After a poll, the task the
//! poll woke or spawned last (in the LIFO slot) runs at once, at most 3
//! times in a row; then it goes to the back of the ring, so that two tasks
//! waking each other cannot starve the rest.
//!
//! A task that yields (`yield_now`) is set aside, not queued: it
//! waits in the worker's `yielded` list until the worker has found nothing
//! else to run in any of the places above, or until the next 61st tick,
//! and then goes to the back of the ring. So a yield lets every other queue
//! go first, the inject queue and other workers' rings included, and a
//! worker that never runs out of work still runs its yielded tasks within
//! 61 ticks. A task woken during its own poll by anything but its own
//! yield goes to the back of the ring at once, as before.

use std::cell::{Cell, RefCell};
use std::fmt;
use std::future::Future;
use std::ptr;
use std::task::Waker;

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
    /// Tasks that yielded, in order, each with its queue reference: back
    /// to the ring when the worker finds nothing else to run or every
    /// 61st tick.
    yielded: Vec<Notified>,
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
    #[allow(clippy::missing_const_for_thread_local)]
    static CONTEXT: Context = Context {
        runtime: RefCell::new(None),
        driving: Cell::new(false),
        depth: Cell::new(0),
    };
    /// Set by `yield_now` during a poll, cleared by a worker before each
    /// poll: the task the poll requeues for waking itself yielded. Read
    /// only by a worker, on its own thread.
    #[allow(clippy::missing_const_for_thread_local)]
    static POLL_YIELDED: Cell<bool> = Cell::new(false);
    /// The address of the waker the task polled on this thread was given
    /// (0 between polls): a yield counts only if polled with that very
    /// waker, which lives on the poll's stack for the whole poll, so no
    /// other waker shares its address meanwhile.
    #[allow(clippy::missing_const_for_thread_local)]
    static POLLED_WAKER: Cell<usize> = Cell::new(0);
}

/// The runtime context of a thread. Every access goes through `try_with`:
/// a runtime may be dropped, or a waker woken, in another thread-local's
/// destructor, after this one is gone (tokio's `runtime_in_thread_local`);
/// the thread then counts as in no context.
struct Context {
    /// The runtime whose context this thread is in (a worker, inside
    /// `block_on`, or under an `enter` guard): `spawn` and
    /// `Handle::current` use it.
    runtime: RefCell<Option<Arc<Shared>>>,
    /// Whether this thread drives a runtime's tasks (a worker, or inside
    /// `block_on`), where blocking could block the tasks it drives. An
    /// `enter` guard alone does not set it, as tokio's does not.
    driving: Cell<bool>,
    /// How many guards are entered on this thread, so that a guard left
    /// out of order is caught (as tokio's are).
    depth: Cell<usize>,
}

/// Leaves the context when dropped, restoring the one it replaced.
pub(super) struct ContextGuard {
    previous: Option<Arc<Shared>>,
    was_driving: bool,
    /// Its place among the guards entered on this thread; `None` if the
    /// context was already destroyed when it was made.
    depth: Option<usize>,
}

impl Drop for ContextGuard {
    fn drop(&mut self) {
        let Some(depth) = self.depth else { return };
        let _ = CONTEXT.try_with(|context| {
            if context.depth.get() != depth {
                if std::thread::panicking() {
                    // Leaves the context as it is, as tokio's does.
                    return;
                }
                panic!(
                    "`EnterGuard` values dropped out of order. Guards returned by \
                     `modelsync::runtime::Handle::enter()` (or `Runtime::enter()`) must be \
                     dropped in the reverse order as they were acquired."
                );
            }
            *context.runtime.borrow_mut() = self.previous.take();
            context.driving.set(self.was_driving);
            context.depth.set(depth - 1);
        });
    }
}

/// Enters `shared`'s context on this thread: `spawn` and
/// `Handle::current` reach it until the guard is dropped.
pub(super) fn enter(shared: &Arc<Shared>) -> ContextGuard {
    CONTEXT
        .try_with(|context| {
            let depth = context.depth.get() + 1;
            context.depth.set(depth);
            ContextGuard {
                previous: context.runtime.borrow_mut().replace(shared.clone()),
                was_driving: context.driving.get(),
                depth: Some(depth),
            }
        })
        .unwrap_or(ContextGuard {
            previous: None,
            was_driving: false,
            depth: None,
        })
}

/// Enters `shared`'s context as a thread that drives its tasks (a worker,
/// or `block_on`).
pub(super) fn enter_driving(shared: &Arc<Shared>) -> ContextGuard {
    let guard = enter(shared);
    let _ = CONTEXT.try_with(|context| context.driving.set(true));
    guard
}

/// The runtime whose context this thread is in.
pub(super) fn current() -> Option<Arc<Shared>> {
    try_current().ok().flatten()
}

/// `current`, or `Err` if this thread's context was already destroyed
/// (a call from another thread-local's destructor).
pub(super) fn try_current() -> Result<Option<Arc<Shared>>, ()> {
    CONTEXT
        .try_with(|context| context.runtime.borrow().clone())
        .map_err(drop)
}

/// Whether this thread drives a runtime's tasks (see `Context::driving`).
pub(super) fn is_driving() -> bool {
    CONTEXT
        .try_with(|context| context.driving.get())
        .unwrap_or(false)
}

/// `yield_now`'s request, during a poll, with the waker it was polled
/// with: if that is the waker this thread's task poll gave its future,
/// the task the poll requeues for waking itself is set aside. A
/// yield polled with another executor's waker (a future's own `block_on`
/// inside a task) or a combinator's own waker wakes that at once and
/// leaves this task's poll as it was: a later wake of this task by itself
/// in the same poll is no yield, and goes to its worker's queue, where
/// another worker may take it.
pub(super) fn note_yield(waker: &Waker) {
    let polled = POLLED_WAKER.try_with(Cell::get).unwrap_or(0);
    if polled != 0 && polled == waker as *const Waker as usize {
        let _ = POLL_YIELDED.try_with(|yielded| yielded.set(true));
    }
}

/// Names the waker a task's poll on this thread gives its future (`None`
/// once the poll returned), for `note_yield`. A context passed down
/// unchanged, or rebuilt around the same waker, keeps its address.
pub(super) fn polling_with(waker: Option<&Waker>) {
    let address = waker.map_or(0, |waker| waker as *const Waker as usize);
    let _ = POLLED_WAKER.try_with(|polled| polled.set(address));
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
        // `try_with`: a waker may be woken in a thread-local's destructor,
        // after `WORKER` is gone; the task then goes to the inject queue.
        let mut task = Some(task);
        let _ = WORKER.try_with(|worker| {
            // SAFETY: the pointer is set by `Worker::run` on this thread
            // for the time the worker lives on its stack, and cleared
            // before it returns.
            let Some(worker) = (unsafe { worker.get().as_ref() }) else {
                return;
            };
            if !ptr::eq(&*worker.shared, self) {
                return;
            }
            let Ok(mut core) = worker.core.try_borrow_mut() else {
                return;
            };
            if core.stopped {
                return;
            }
            let Some(task) = task.take() else { return };
            let core = &mut *core;
            let yielded = is_yield && POLL_YIELDED.try_with(Cell::take).unwrap_or(false);
            let notify_others = if yielded {
                // Set aside: no other worker may take it, so none is woken.
                core.yielded.push(task);
                false
            } else if is_yield {
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
                yielded: Vec::new(),
            }),
        };
        let _context = enter_driving(&worker.shared);
        WORKER.with(|w| w.set(&worker));
        while !worker.shared.is_shutdown() {
            if let Some(task) = worker.next_task().or_else(|| worker.steal_work()) {
                worker.run_task(task);
            } else if !worker.requeue_yielded() {
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
            drop(core);
            // A yielded task waits 61 ticks at most, also on a worker that
            // never runs out of work.
            self.requeue_yielded();
            if let Some(task) = self.shared.inject.pop() {
                return Some(task);
            }
            core = self.core.borrow_mut();
        }
        if let Some(task) = core.lifo.take().or_else(|| core.local.pop()) {
            return Some(task);
        }
        drop(core);
        self.shared.inject.pop()
    }

    /// Searches the other workers' rings (from a random one), then the
    /// inject queue; at most half of the workers search at once.
    ///
    /// A worker holding yielded tasks is not idle: it only looks at the
    /// other rings, as any worker may, without counting as a searcher, and
    /// takes its yielded tasks back if they hold nothing. The
    /// searcher's duties (the cap, and the last searcher's wake or check of
    /// every queue before it sleeps, R-7, R-8) are an idle worker's; this
    /// one does not sleep.
    fn steal_work(&self) -> Option<Notified> {
        let mut core = self.core.borrow_mut();
        if !core.yielded.is_empty() {
            return self.steal_from_other_rings(&mut core);
        }
        if !core.searching {
            if !self.shared.idle.transition_worker_to_searching() {
                return None;
            }
            core.searching = true;
        }
        if let Some(task) = self.steal_from_other_rings(&mut core) {
            return Some(task);
        }
        drop(core);
        self.shared.inject.pop()
    }

    /// Steals half of the first non-empty ring among the other workers',
    /// tried from a random one, into this worker's ring.
    fn steal_from_other_rings(&self, core: &mut Core) -> Option<Notified> {
        let workers = self.shared.remotes.len();
        core.rng = xorshift32(core.rng);
        victims(core.rng as usize, workers, self.index).find_map(|victim| {
            self.shared.remotes[victim]
                .steal
                .steal_into(&mut core.local)
        })
    }

    /// Puts the yielded tasks at the back of the ring, in the order they
    /// yielded; false if there were none.
    fn requeue_yielded(&self) -> bool {
        let mut core = self.core.borrow_mut();
        if core.yielded.is_empty() {
            return false;
        }
        let core = &mut *core;
        for task in core.yielded.drain(..) {
            core.local.push_back(task, &self.shared.inject);
        }
        true
    }

    /// Polls `task`, with `yield_now`'s flag cleared for it.
    fn poll(&self, task: Notified) {
        POLL_YIELDED.with(|yielded| yielded.set(false));
        task.run();
    }

    fn run_task(&self, task: Notified) {
        let was_searching = std::mem::replace(&mut self.core.borrow_mut().searching, false);
        if was_searching && self.shared.idle.transition_worker_from_searching() {
            // The last searcher found work: another worker takes over the
            // search, for work that may remain.
            self.shared.notify_parked();
        }
        self.poll(task);
        for _ in 0..MAX_LIFO_POLLS {
            let Some(task) = self.core.borrow_mut().lifo.take() else {
                return;
            };
            self.poll(task);
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
                core.lifo
                    .take()
                    .or_else(|| core.local.pop())
                    .or_else(|| core.yielded.pop())
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
