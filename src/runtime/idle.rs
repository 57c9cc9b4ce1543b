//! Which workers are searching for work and which sleep, and the handshake
//! that keeps a worker from sleeping through work pushed as it goes to
//! sleep.
//!
//! Reached from outside the crate only through the hidden
//! `modelsync::internals`, so that the counters can be property-tested
//! against a reference of worker states (`proptests/runtime.rs`); not an
//! API for users.
//!
//! One word packs the number of searching workers (low 16 bits) and of
//! unparked workers (above); the sleepers' indices are a list under a
//! lock, changed together with the unparked count.
//!
//! # The handshake
//!
//! A pusher pushes its task, then reads the word with a read-modify-write
//! (`fetch_add(0)`), never a plain load. A worker going to sleep decrements
//! the word (another read-modify-write), then, if no worker searches after
//! its decrement, checks every queue once more. Read-modify-writes of one
//! word are totally ordered and each reads the latest value, so one of the
//! two comes first: if the pusher's, the sleeper's decrement acquires it (a
//! release sequence) and its check sees the push; if the sleeper's, the
//! pusher sees the sleeper and wakes one. A plain load could read a stale
//! word and miss the sleeper while the sleeper misses the push. tokio's
//! scheduler had that lost wake-up, found by loom (a `SeqCst` load does not
//! synchronise with a `Release` push; Carl Lerche, "Making the Tokio
//! scheduler 10x faster", tokio.rs blog, 2019); tokio's `Idle` reads the word
//! with `fetch_add(0, SeqCst)` since.
//!
//! The check is not only the last searcher's (R-7; the seeded
//! `runtime-refused-searcher-sleeps-without-a-check`). A worker refused a
//! search by the cap (another worker searched) is awake, not searching, and
//! goes to sleep without searching; tokio's parks it without a check. But a
//! push that sees a searcher wakes nobody, and the searcher, when it finds
//! work as the last searcher, wakes a sleeper only if one sleeps: if the
//! refused worker was still counted awake, between its look at the queues and
//! its decrement, nobody was woken, and it then slept without looking again.
//! The work then waited for a worker to come back to its queues, forever if
//! that worker's task blocked its thread (loom:
//! `runtime::blocking_task_waits_for_a_task_spawned_after_it`,
//! `runtime::tasks_pushed_while_a_worker_is_blocked`). So a last searcher
//! that stops while every worker is awake, and so can wake nobody, marks a
//! hand-off owed (a bit of the word, set in the same read-modify-write as
//! its decrement); a worker that parks without searching checks when its
//! decrement finds the bit set and no worker searching, and clears it. Its
//! decrement comes after the mark in the word's order, and the mark after
//! the read-modify-write of every push that saw the searcher and woke
//! nobody, so the decrement acquires those pushes (a release sequence) and
//! its check sees them. If a worker does search after the decrement, that
//! searcher takes the duty over: it parks through a later decrement and
//! checks, or finds work and, as the last searcher, wakes this one.
//!
//! Every other way to sleep without searching goes through the mark. A
//! worker is refused only by a searcher it saw counted; a push that saw no
//! searcher and every worker awake woke nobody either, but the searcher that
//! refuses a worker afterwards started after that push in the word's order,
//! so it parks as the last searcher and checks (acquiring the push), or
//! stops on finding work and marks the hand-off or wakes a sleeper. An
//! earlier version checked whenever a worker parked leaving no searcher:
//! correct, but on tasks pushed from outside onto idle workers it checked
//! and woke a worker far more often than work was owed
//! (`runtime/spawn_many_remote_idle` 0.81 to 0.88 of tokio, BENCHMARKS.md).

//! # Specification and contract
//!
//! As a component on its own (`specs/idle.rs`, checked by the
//! `runtime::idle_*` models and `runtime::push_racing_worker_going_to_sleep`,
//! and by the property test `runtime::idle_counters_match_reference`):
//! each worker runs, searches or sleeps. Starting to search is a look
//! that allows it while fewer than half of the workers search, then the
//! count's increment, so workers that look at once may all start (R-8's
//! cap is on contention, not exact). A searcher that stops is told whether
//! it was the last searcher, and marks a hand-off owed if every worker
//! was awake; a worker that parks, whether it must check every queue (it
//! was the last searcher, or it did not search, none does and a hand-off
//! was owed, which it then pays); `worker_to_notify`
//! wakes the newest sleeper, which then counts as searching, exactly when
//! no worker searches.
//!
//! What it assumes of its callers (`worker.rs` keeps it): a worker changes
//! only its own stage, starts searching only while running, stops only
//! while searching, parks only while awake, and says truly whether it was
//! searching when it parks; a pusher calls `worker_to_notify` after its
//! push, and the worker it names was sleeping.

use std::fmt;

use crate::sync::atomic::{AtomicUsize, Ordering::*};
use crate::sync::Mutex;

const SEARCHING_MASK: usize = (1 << 15) - 1;
/// The most workers the packed counters hold: `Builder::build` refuses
/// more with an error, before `Idle::new` would panic.
pub(crate) const MAX_WORKERS: usize = SEARCHING_MASK - 1;
/// Set by the last searcher to stop when every worker was awake, so that it
/// woke nobody; cleared by the next worker that parks leaving no searcher
/// and checks the queues for it.
const HANDOFF_OWED: usize = 1 << 15;
const UNPARKED_ONE: usize = 1 << 16;

/// The searching and sleeping workers of one runtime.
pub struct Idle {
    state: AtomicUsize,
    sleepers: Mutex<Vec<usize>>,
    workers: usize,
}

impl Idle {
    /// `workers` workers, all awake, none searching.
    ///
    /// # Panics
    /// If `workers` is 0 or does not fit the packed counters.
    pub fn new(workers: usize) -> Self {
        assert!(
            workers > 0 && workers <= MAX_WORKERS,
            "a runtime has between 1 and {MAX_WORKERS} workers, not {workers}"
        );
        Idle {
            state: AtomicUsize::new(workers * UNPARKED_ONE),
            sleepers: Mutex::new(Vec::with_capacity(workers)),
            workers,
        }
    }

    fn should_wake(&self, state: usize) -> bool {
        state & SEARCHING_MASK == 0 && state / UNPARKED_ONE < self.workers
    }

    /// New work was pushed: the worker to wake, if none is searching and
    /// one sleeps. The woken worker counts as unparked and searching from
    /// now on, so that the next push does not wake another.
    pub fn worker_to_notify(&self) -> Option<usize> {
        // Release, and a read-modify-write: the handshake above. It
        // publishes the caller's push to the worker whose decrement in
        // `transition_worker_to_parked` reads this or a later value.
        if !self.should_wake(self.state.fetch_add(0, Release)) {
            return None;
        }
        let mut sleepers = self.sleepers.lock();
        // Relaxed: the unparked count changes only under this lock, which
        // orders it; the searching count is a hint here.
        if !self.should_wake(self.state.load(Relaxed)) {
            return None;
        }
        let worker = sleepers.pop()?;
        // Relaxed: under the lock; the woken worker learns of its state
        // through its parker's permit.
        self.state.fetch_add(UNPARKED_ONE | 1, Relaxed);
        Some(worker)
    }

    /// An idle worker starts searching; false (it sleeps instead) when half
    /// of the workers already search.
    pub fn transition_worker_to_searching(&self) -> bool {
        // Relaxed: a cap on contention, not a synchronisation; a stale
        // value lets one worker too many search, or one too few.
        let state = self.state.load(Relaxed);
        if 2 * (state & SEARCHING_MASK) >= self.workers {
            return false;
        }
        // Relaxed: a count only; the searcher's decrement (below, or in
        // `transition_worker_to_parked`) is what synchronises with pushers.
        self.state.fetch_add(1, Relaxed);
        true
    }

    /// A searching worker found work; true if it was the last searcher,
    /// which must then wake another worker.
    pub fn transition_worker_from_searching(&self) -> bool {
        // Relaxed: a pusher that saw this worker searching woke nobody, and
        // this worker may not see that push; the worker it wakes (if it
        // was the last searcher) need not either: that one searches, and
        // if it finds nothing it parks through the acquiring decrement of
        // `transition_worker_to_parked` as the last searcher, which does
        // see the push (the handshake) and wakes a worker for it. If it
        // wakes none, every worker is awake: each one not searching either
        // comes back to the queues or parks through that decrement, after
        // this one, and checks them if no searcher is left: the hand-off
        // marked here. The failure ordering is Relaxed too: a
        // failed exchange only reads the word again for the next try.
        let workers = self.workers;
        let prev = self
            .state
            .fetch_update(Relaxed, Relaxed, |state| {
                let searching = state & SEARCHING_MASK;
                let all_awake = state / UNPARKED_ONE == workers;
                let owed = if searching == 1 && all_awake {
                    HANDOFF_OWED
                } else {
                    0
                };
                (searching > 0).then(|| (state - 1) | owed)
            })
            .expect("no worker was searching");
        prev & SEARCHING_MASK == 1
    }

    /// Worker `worker` goes to sleep; true if it must check every queue
    /// once more before it parks: it was the last searcher, or it did
    /// not search, none does, and a hand-off was owed (the module
    /// documentation says why a worker that did not search checks then).
    pub fn transition_worker_to_parked(&self, worker: usize, is_searching: bool) -> bool {
        let mut sleepers = self.sleepers.lock();
        let must_check = |state: usize| {
            let searching = state & SEARCHING_MASK;
            if is_searching {
                searching == 1
            } else {
                searching == 0 && state & HANDOFF_OWED != 0
            }
        };
        // Acquire: the handshake above; reads every pusher's release that
        // precedes it, so the queue check that follows sees their pushes. A
        // failed exchange only retries: Relaxed.
        let prev = self
            .state
            .fetch_update(Acquire, Relaxed, |state| {
                let counted =
                    state / UNPARKED_ONE > 0 && (!is_searching || state & SEARCHING_MASK > 0);
                let next = state - UNPARKED_ONE - usize::from(is_searching);
                counted.then(|| {
                    if must_check(state) {
                        next & !HANDOFF_OWED
                    } else {
                        next
                    }
                })
            })
            .expect("a parking worker is counted awake, and searching if it says so");
        sleepers.push(worker);
        must_check(prev)
    }

    /// The number of searching workers at the moment of the call.
    pub fn num_searching(&self) -> usize {
        // Relaxed: a snapshot for tests and Debug.
        self.state.load(Relaxed) & SEARCHING_MASK
    }

    /// The number of unparked workers at the moment of the call.
    pub fn num_unparked(&self) -> usize {
        // Relaxed: a snapshot for tests and Debug.
        self.state.load(Relaxed) / UNPARKED_ONE
    }

    /// Whether a hand-off is owed at the moment of the call (see the module
    /// documentation). A diagnostic for models, which start scenarios
    /// from it.
    pub fn handoff_owed(&self) -> bool {
        // Relaxed: a snapshot for tests.
        self.state.load(Relaxed) & HANDOFF_OWED != 0
    }

    /// The sleeping workers, in the order they went to sleep.
    pub fn sleepers(&self) -> Vec<usize> {
        self.sleepers.lock().clone()
    }
}

impl fmt::Debug for Idle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Idle")
            .field("workers", &self.workers)
            .field("searching", &self.num_searching())
            .field("unparked", &self.num_unparked())
            .finish()
    }
}
