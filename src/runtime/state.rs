//! The task state word: every transition of a task's life is one atomic
//! read-modify-write of this word, so the parties that race on a task (the
//! worker polling it, wakers on any thread, its `JoinHandle`, `abort`, the
//! runtime's shutdown) agree on who does what next.
//!
//! Reached from outside the crate only through the hidden
//! `modelsync::internals`, so that the state machine can be model-checked
//! and property-tested on its own (`models/runtime/task_state.rs`,
//! `proptests/runtime.rs`); it is not an API for users, and changes with
//! the runtime.
//!
//! | bit            | set while                                                   |
//! |----------------|-------------------------------------------------------------|
//! | `RUNNING`      | one party owns the future: it is being polled or cancelled  |
//! | `COMPLETE`     | the future is gone and the output (or error) is stored      |
//! | `NOTIFIED`     | the task is queued to run, or must be queued again after the poll in progress |
//! | `JOIN_INTEREST`| the `JoinHandle` exists                                     |
//! | `JOIN_WAKER`   | the trailer's join waker is set and owned by the runtime (R-4) |
//! | `CANCELLED`    | `abort` or shutdown asked for the future to be dropped      |
//!
//! The bits above `CANCELLED` count references: the queued `Notified` (at
//! most one, R-2), the `JoinHandle`, the runtime's list of live tasks, and
//! every waker. The last reference frees the task's one allocation.
//!
//! # Shutdown
//!
//! The runtime shuts down only after every worker has stopped
//! (`Runtime::drop` joins them first), so shutdown never runs beside a
//! poll, and a completed task has already left the live-task list that
//! shutdown takes its tasks from: shutdown finds every task it takes idle,
//! and takes its future. The references still queued are dropped, never
//! run. tokio's shutdown runs beside its workers and so has transitions
//! for a queued task whose future shutdown took, and for a poll whose
//! reference turns out to be the last; here those are assertions
//! (`transition_to_running`, `transition_to_idle`,
//! `transition_to_shutdown`), checked by every model and test that runs a
//! task, rather than code no schedule can reach.
//!
//! # Specification and contract
//!
//! As a component on its own (`specs/task_state.rs`, stepped beside the
//! word by the property test `runtime::task_state_matches_reference` and
//! checked against the histories of `runtime::task_state_generated_scenarios`):
//! the stage bits and the holders of references; each transition is made
//! by the party holding the reference it needs, and the count is always
//! the holders'. What it assumes of its callers (`task.rs`, `worker.rs`):
//! a worker runs a task only with its queued reference; the completer
//! gives the join waker back after waking it and drops its references
//! last; shutdown runs only after every worker stopped.
//!
//! Orderings: every transition that hands the future, the output or the
//! join waker from one party to another is `AcqRel` (it releases what this
//! party wrote and acquires what the previous owner wrote), and the loads
//! that decide to read the output are `Acquire`; taking a reference is
//! `Relaxed` (the party already holds one, so nothing is handed over).

use std::fmt;

use crate::sync::atomic::{AtomicUsize, Ordering::*};

/// The future is owned by a poll or a cancellation in progress.
pub const RUNNING: usize = 0b00_0001;
/// The output is stored; the future is gone.
pub const COMPLETE: usize = 0b00_0010;
/// Queued, or to be queued again when the poll in progress ends.
pub const NOTIFIED: usize = 0b00_0100;
/// The `JoinHandle` is alive.
pub const JOIN_INTEREST: usize = 0b00_1000;
/// The join waker is stored and belongs to the runtime.
pub const JOIN_WAKER: usize = 0b01_0000;
/// The future must be dropped instead of polled.
pub const CANCELLED: usize = 0b10_0000;
/// One reference, in the count above the flags.
pub const REF_ONE: usize = 0b100_0000;

/// A copy of the word.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Snapshot(pub usize);

impl Snapshot {
    /// The task is being polled or cancelled.
    pub fn is_running(self) -> bool {
        self.0 & RUNNING != 0
    }
    /// The output is stored.
    pub fn is_complete(self) -> bool {
        self.0 & COMPLETE != 0
    }
    /// Neither running nor complete: a poll may start.
    pub fn is_idle(self) -> bool {
        self.0 & (RUNNING | COMPLETE) == 0
    }
    /// Queued or to be queued again.
    pub fn is_notified(self) -> bool {
        self.0 & NOTIFIED != 0
    }
    /// The `JoinHandle` is alive.
    pub fn is_join_interested(self) -> bool {
        self.0 & JOIN_INTEREST != 0
    }
    /// The join waker is stored and the runtime owns it.
    pub fn has_join_waker(self) -> bool {
        self.0 & JOIN_WAKER != 0
    }
    /// `abort` or shutdown asked for the future to be dropped.
    pub fn is_cancelled(self) -> bool {
        self.0 & CANCELLED != 0
    }
    /// The number of references.
    pub fn ref_count(self) -> usize {
        self.0 / REF_ONE
    }
    fn ref_inc(&mut self) {
        assert!(
            self.0 <= isize::MAX as usize,
            "task reference count overflow"
        );
        self.0 += REF_ONE;
    }
    fn ref_dec(&mut self) {
        assert!(self.ref_count() > 0, "task reference count underflow");
        self.0 -= REF_ONE;
    }
}

impl fmt::Debug for Snapshot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names = [
            (RUNNING, "RUNNING"),
            (COMPLETE, "COMPLETE"),
            (NOTIFIED, "NOTIFIED"),
            (JOIN_INTEREST, "JOIN_INTEREST"),
            (JOIN_WAKER, "JOIN_WAKER"),
            (CANCELLED, "CANCELLED"),
        ];
        let set: Vec<&str> = names
            .iter()
            .filter(|(bit, _)| self.0 & bit != 0)
            .map(|&(_, name)| name)
            .collect();
        write!(f, "{}|refs={}", set.join("|"), self.ref_count())
    }
}

/// What the worker that dequeued a task does next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ToRunning {
    /// Poll the future.
    Success,
    /// Drop the future and complete with a cancellation.
    Cancelled,
}

/// What the worker does after a poll returned `Pending`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ToIdle {
    /// Nothing: a waker will queue the task.
    Ok,
    /// Woken during the poll: queue it again, with the poller's reference.
    OkNotified,
    /// Aborted during the poll: drop the future and complete.
    Cancelled,
}

/// What a wake does next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ToNotified {
    /// Already queued, running (it will be queued after the poll) or
    /// complete.
    DoNothing,
    /// Queue the task; the caller's reference is now the queue's.
    Submit,
    /// The waker's reference was the last: free the task.
    Dealloc,
}

/// What a dropped `JoinHandle` must clean up itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JoinHandleDropped {
    /// The task completed: the output is the handle's to drop.
    pub drop_output: bool,
    /// The join waker is the handle's to drop.
    pub drop_waker: bool,
}

/// The atomic word.
pub struct State {
    word: AtomicUsize,
}

impl State {
    /// A new task: queued once (`NOTIFIED`), with its `JoinHandle`, and
    /// three references (the queue's, the handle's, the task list's).
    pub fn new() -> Self {
        State {
            word: AtomicUsize::new(NOTIFIED | JOIN_INTEREST | (3 * REF_ONE)),
        }
    }

    /// The current word.
    pub fn load(&self) -> Snapshot {
        // Acquire: synchronises with `transition_to_complete`'s release, so
        // a caller that sees COMPLETE may read the output.
        Snapshot(self.word.load(Acquire))
    }

    /// One compare-exchange loop for every conditional transition: `f`
    /// returns the caller's result and, if the word is to change, the new
    /// word.
    fn update<R>(&self, mut f: impl FnMut(Snapshot) -> (R, Option<Snapshot>)) -> R {
        // Acquire: some transitions decide without writing (COMPLETE seen:
        // read the output), so the load must already see the completer's
        // writes, as `load` does.
        let mut current = Snapshot(self.word.load(Acquire));
        loop {
            let (result, next) = f(current);
            let Some(next) = next else { return result };
            // AcqRel: a transition hands the future, the output or the join
            // waker between parties; it publishes this party's writes and
            // takes the previous party's. Failure: Acquire, for the same
            // reason as the load above.
            match self
                .word
                .compare_exchange_weak(current.0, next.0, AcqRel, Acquire)
            {
                Ok(_) => return result,
                Err(actual) => current = Snapshot(actual),
            }
        }
    }

    /// A worker dequeued the task and holds the queue's reference. The
    /// task is idle (see "Shutdown" above).
    pub fn transition_to_running(&self) -> ToRunning {
        self.update(|mut s| {
            assert!(
                s.is_notified() && s.is_idle(),
                "a queued task is NOTIFIED and idle: {s:?}"
            );
            s.0 = (s.0 | RUNNING) & !NOTIFIED;
            let action = if s.is_cancelled() {
                ToRunning::Cancelled
            } else {
                ToRunning::Success
            };
            (action, Some(s))
        })
    }

    /// A poll returned `Pending`; the poller holds one reference, never
    /// the last (see "Shutdown" above).
    pub fn transition_to_idle(&self) -> ToIdle {
        self.update(|mut s| {
            assert!(s.is_running(), "only the poller leaves RUNNING: {s:?}");
            if s.is_cancelled() {
                return (ToIdle::Cancelled, None);
            }
            s.0 &= !RUNNING;
            let action = if s.is_notified() {
                // The poller's reference becomes the queue's.
                ToIdle::OkNotified
            } else {
                s.ref_dec();
                assert!(
                    s.ref_count() > 0,
                    "the live-task list holds a reference until completion: {s:?}"
                );
                ToIdle::Ok
            };
            (action, Some(s))
        })
    }

    /// The future is gone and the output stored: RUNNING -> COMPLETE.
    /// Returns the word before the change.
    pub fn transition_to_complete(&self) -> Snapshot {
        // AcqRel: releases the stored output to the JoinHandle and
        // acquires the join waker the handle stored.
        let prev = Snapshot(self.word.fetch_xor(RUNNING | COMPLETE, AcqRel));
        assert!(
            prev.is_running() && !prev.is_complete(),
            "complete from {prev:?}"
        );
        prev
    }

    /// The completer woke the join waker and gives up its ownership of it.
    /// Returns the word before the change: if JOIN_INTEREST is gone, the
    /// handle was dropped meanwhile and the completer drops the waker.
    pub fn unset_waker_after_complete(&self) -> Snapshot {
        // AcqRel: releases the completer's use of the waker to the handle
        // that takes it over, and acquires the handle's drop of interest.
        let prev = Snapshot(self.word.fetch_and(!JOIN_WAKER, AcqRel));
        assert!(
            prev.is_complete() && prev.has_join_waker(),
            "unset waker from {prev:?}"
        );
        prev
    }

    /// Drops `count` references after completion; true if they were the
    /// last (free the task).
    pub fn transition_to_terminal(&self, count: usize) -> bool {
        // AcqRel: release this party's last accesses; the party that drops
        // the last reference acquires every other party's before freeing.
        let prev = Snapshot(self.word.fetch_sub(count * REF_ONE, AcqRel));
        assert!(
            prev.ref_count() >= count,
            "dropping {count} refs from {prev:?}"
        );
        prev.ref_count() == count
    }

    /// `Waker::wake` (consumes the waker's reference).
    pub fn transition_to_notified_by_val(&self) -> ToNotified {
        self.update(|mut s| {
            if s.is_running() {
                // The poller queues it again (ToIdle::OkNotified).
                s.0 |= NOTIFIED;
                s.ref_dec();
                assert!(s.ref_count() > 0, "the poller holds a reference");
                (ToNotified::DoNothing, Some(s))
            } else if s.is_complete() || s.is_notified() {
                s.ref_dec();
                let action = if s.ref_count() == 0 {
                    ToNotified::Dealloc
                } else {
                    ToNotified::DoNothing
                };
                (action, Some(s))
            } else {
                s.0 |= NOTIFIED;
                (ToNotified::Submit, Some(s))
            }
        })
    }

    /// `Waker::wake_by_ref`: a new reference for the queue if it submits.
    pub fn transition_to_notified_by_ref(&self) -> ToNotified {
        self.update(|mut s| {
            if s.is_complete() || s.is_notified() {
                (ToNotified::DoNothing, None)
            } else if s.is_running() {
                s.0 |= NOTIFIED;
                (ToNotified::DoNothing, Some(s))
            } else {
                s.0 |= NOTIFIED;
                s.ref_inc();
                (ToNotified::Submit, Some(s))
            }
        })
    }

    /// `JoinHandle::abort`: true if the caller must queue the task (with a
    /// new reference) so that a worker cancels it.
    pub fn transition_to_notified_and_cancel(&self) -> bool {
        self.update(|mut s| {
            if s.is_cancelled() || s.is_complete() {
                (false, None)
            } else if s.is_running() {
                // The poller sees CANCELLED when the poll ends.
                s.0 |= NOTIFIED | CANCELLED;
                (false, Some(s))
            } else if s.is_notified() {
                // The queued reference runs into CANCELLED.
                s.0 |= CANCELLED;
                (false, Some(s))
            } else {
                s.0 |= NOTIFIED | CANCELLED;
                s.ref_inc();
                (true, Some(s))
            }
        })
    }

    /// Shutdown takes the future of a task still in the live-task list
    /// (RUNNING) and marks it CANCELLED; the caller cancels it. The task is
    /// idle (see "Shutdown" above).
    pub fn transition_to_shutdown(&self) {
        // Relaxed: the future's last poller ran on a worker that has been
        // joined (or, for a task spawned during shutdown, the future was
        // written by this thread), which orders its writes before this;
        // nothing written before this is read by another party before the
        // completion, which releases. (An Acquire here survived every
        // runtime model as an ordering mutant.)
        let prev = Snapshot(self.word.fetch_or(RUNNING | CANCELLED, Relaxed));
        assert!(
            prev.is_idle(),
            "shutdown finds every listed task idle: {prev:?}"
        );
    }

    /// A `JoinHandle` stores a waker it wrote to the trailer. Fails (the
    /// waker stays the handle's) if the task completed meanwhile.
    pub fn set_join_waker(&self) -> Result<Snapshot, Snapshot> {
        self.update(|mut s| {
            assert!(
                s.is_join_interested() && !s.has_join_waker(),
                "set join waker from {s:?}"
            );
            if s.is_complete() {
                return (Err(s), None);
            }
            s.0 |= JOIN_WAKER;
            (Ok(s), Some(s))
        })
    }

    /// A `JoinHandle` takes the join waker back to replace it. Fails if the
    /// task completed (the runtime owns the waker until it unsets it).
    pub fn unset_join_waker(&self) -> Result<Snapshot, Snapshot> {
        self.update(|mut s| {
            assert!(s.is_join_interested(), "unset join waker from {s:?}");
            // COMPLETE first: once complete, the completer may already have
            // woken the waker and cleared its bit (`unset_waker_after_complete`)
            // since the handle saw it set (as tokio's `unset_join_waker`).
            if s.is_complete() {
                return (Err(s), None);
            }
            // Not complete: only the handle clears the bit before then.
            assert!(s.has_join_waker(), "unset join waker from {s:?}");
            s.0 &= !JOIN_WAKER;
            (Ok(s), Some(s))
        })
    }

    /// The `JoinHandle` is dropped.
    pub fn transition_to_join_handle_dropped(&self) -> JoinHandleDropped {
        self.update(|mut s| {
            assert!(s.is_join_interested(), "drop join handle from {s:?}");
            s.0 &= !JOIN_INTEREST;
            let drop_output = s.is_complete();
            if !drop_output {
                // The task has not taken the waker over: it is the handle's.
                s.0 &= !JOIN_WAKER;
            }
            let dropped = JoinHandleDropped {
                drop_output,
                drop_waker: !s.has_join_waker(),
            };
            (dropped, Some(s))
        })
    }

    /// A waker is cloned, or `abort` queues the task: one more reference.
    pub fn ref_inc(&self) {
        // Relaxed: the caller already holds a reference, so the task cannot
        // be freed concurrently and nothing is handed over (as `Arc::clone`).
        let prev = self.word.fetch_add(REF_ONE, Relaxed);
        assert!(prev <= isize::MAX as usize, "task reference count overflow");
    }

    /// Drops one reference; true if it was the last (free the task).
    pub fn ref_dec(&self) -> bool {
        // AcqRel: as `transition_to_terminal`.
        let prev = Snapshot(self.word.fetch_sub(REF_ONE, AcqRel));
        assert!(prev.ref_count() >= 1, "task reference count underflow");
        prev.ref_count() == 1
    }
}

impl Default for State {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for State {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.load().fmt(f)
    }
}
