//! The runtime's task state word (`src/runtime/state.rs`), a component on
//! its own: the task's stage as the parties that race on it see it, and
//! who holds its references. The property test
//! `runtime::task_state_matches_reference` steps it beside the real word;
//! the models' histories are checked against it (`models/runtime/task_state.rs`).
//!
//! State: the stage bits (running, complete, notified, cancelled, join
//! interest, join waker) and the holders of references: the queue (at
//! most one queued reference, R-2), the poller, the wakers, the
//! `JoinHandle`, the live-task list. The word's count is always the
//! holders', and the task is freed exactly when the last goes.
//!
//! Each operation is one transition of the word, made by the party that
//! holds the reference it needs: an operation whose party holds none in
//! this state has no outcome (the history must order it after what gave
//! the party its reference: a wake's `Submit` before the worker's
//! `ToRunning`). Deterministic: one outcome per operation.
//!
//! Contract with its callers (kept by `task.rs` and `worker.rs`): a
//! worker runs a task only with its queued reference; the completer
//! unsets the join waker after it woke it, and drops its own and the
//! list's references last; shutdown runs only once every worker has
//! stopped.

use crate::harness::linearizability::Spec;
use modelsync::internals::runtime::{State, ToIdle, ToNotified, ToRunning};

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TaskState {
    pub running: bool,
    pub complete: bool,
    pub notified: bool,
    pub cancelled: bool,
    pub join_interest: bool,
    pub join_waker: bool,
    /// Holders of references.
    pub queued: usize,
    pub poller: bool,
    pub wakers: usize,
    pub handle: bool,
    pub listed: bool,
    /// The workers have stopped (shutdown): nothing is polled any more.
    pub stopped: bool,
    pub freed: bool,
}

impl TaskState {
    /// A task just spawned: queued once, with its handle, listed; and
    /// `wakers` wakers cloned from it (each a reference).
    pub fn new(wakers: usize) -> Self {
        TaskState {
            running: false,
            complete: false,
            notified: true,
            cancelled: false,
            join_interest: true,
            join_waker: false,
            queued: 1,
            poller: false,
            wakers,
            handle: true,
            listed: true,
            stopped: false,
            freed: false,
        }
    }

    pub fn holders(&self) -> usize {
        self.queued
            + usize::from(self.poller)
            + self.wakers
            + usize::from(self.handle)
            + usize::from(self.listed)
    }

    /// After a reference is dropped: freed if it was the last.
    fn release(&mut self) -> bool {
        self.freed = self.holders() == 0;
        self.freed
    }
}

/// Who drops a reference with `RefDec`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Holder {
    /// A queued reference dropped without running (a stopped worker's
    /// queue, the inject queue drained at shutdown).
    Queued,
    Waker,
    /// The `JoinHandle`, after `ToJoinHandleDropped`.
    Handle,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Op {
    /// A worker takes the queued reference and starts the poll.
    ToRunning,
    /// The poll returned `Pending`.
    ToIdle,
    /// The poll returned `Ready` (or the cancellation finished).
    ToComplete,
    /// The completer gives the join waker back, after waking it.
    UnsetWakerAfterComplete,
    /// The completer drops its reference and the list's.
    ToTerminal,
    /// A waker (or the poll's context) is cloned.
    CloneWaker,
    WakeByVal,
    WakeByRef,
    /// `JoinHandle::abort`.
    Abort,
    SetJoinWaker,
    UnsetJoinWaker,
    ToJoinHandleDropped,
    RefDec(Holder),
    /// Shutdown takes the future with the list's reference.
    ToShutdown,
    /// The references counted (a load).
    RefCount,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Ret {
    Unit,
    Running(ToRunning),
    Idle(ToIdle),
    Notified(ToNotified),
    /// `Abort`: queue the task (with the new reference).
    Submit(bool),
    /// `ToComplete`: the join waker was set, the handle was alive.
    Completed {
        join_waker: bool,
        join_interest: bool,
    },
    /// `UnsetWakerAfterComplete`: the handle was alive.
    JoinInterest(bool),
    /// A reference dropped: it was the last.
    Freed(bool),
    /// `SetJoinWaker`, `UnsetJoinWaker`: done (not complete).
    Done(bool),
    HandleDropped {
        drop_output: bool,
        drop_waker: bool,
    },
    Count(usize),
}

impl TaskState {
    /// `op`'s outcome, or `None` if its party holds no reference for it
    /// in this state.
    fn step(&self, op: &Op) -> Option<(Ret, Self)> {
        if self.freed && *op != Op::RefCount {
            return None;
        }
        let mut s = self.clone();
        let ret = match *op {
            Op::ToRunning if s.queued == 1 && !s.stopped => {
                s.queued = 0;
                s.running = true;
                s.notified = false;
                s.poller = true;
                Ret::Running(if s.cancelled {
                    ToRunning::Cancelled
                } else {
                    ToRunning::Success
                })
            }
            Op::ToIdle if s.poller && s.running => {
                if s.cancelled {
                    Ret::Idle(ToIdle::Cancelled)
                } else {
                    s.running = false;
                    s.poller = false;
                    if s.notified {
                        // The poller's reference becomes the queue's.
                        s.queued = 1;
                        Ret::Idle(ToIdle::OkNotified)
                    } else {
                        s.release();
                        Ret::Idle(ToIdle::Ok)
                    }
                }
            }
            Op::ToComplete if s.poller && s.running => {
                s.running = false;
                s.complete = true;
                Ret::Completed {
                    join_waker: s.join_waker,
                    join_interest: s.join_interest,
                }
            }
            Op::UnsetWakerAfterComplete if s.poller && s.complete && s.join_waker => {
                s.join_waker = false;
                Ret::JoinInterest(s.join_interest)
            }
            Op::ToTerminal if s.poller && s.complete && !s.join_waker => {
                s.poller = false;
                s.listed = false;
                Ret::Freed(s.release())
            }
            Op::CloneWaker if s.wakers > 0 || s.poller => {
                s.wakers += 1;
                Ret::Unit
            }
            Op::WakeByVal if s.wakers > 0 => {
                s.wakers -= 1;
                Ret::Notified(if s.running {
                    s.notified = true;
                    ToNotified::DoNothing
                } else if s.complete || s.notified {
                    if s.release() {
                        ToNotified::Dealloc
                    } else {
                        ToNotified::DoNothing
                    }
                } else {
                    s.notified = true;
                    s.queued = 1; // the waker's reference is the queue's
                    ToNotified::Submit
                })
            }
            Op::WakeByRef if s.wakers > 0 => Ret::Notified(if s.complete || s.notified {
                ToNotified::DoNothing
            } else if s.running {
                s.notified = true;
                ToNotified::DoNothing
            } else {
                s.notified = true;
                s.queued = 1; // a new reference
                ToNotified::Submit
            }),
            Op::Abort if s.handle => Ret::Submit(if s.cancelled || s.complete {
                false
            } else if s.running {
                // The poller cancels when the poll ends.
                s.notified = true;
                s.cancelled = true;
                false
            } else if s.notified {
                // The queued reference runs into the cancellation.
                s.cancelled = true;
                false
            } else {
                s.notified = true;
                s.cancelled = true;
                s.queued = 1; // a new reference
                true
            }),
            Op::SetJoinWaker if s.handle && s.join_interest && !s.join_waker => {
                if s.complete {
                    Ret::Done(false)
                } else {
                    s.join_waker = true;
                    Ret::Done(true)
                }
            }
            Op::UnsetJoinWaker if s.handle && s.join_interest => {
                if s.complete {
                    Ret::Done(false)
                } else if s.join_waker {
                    s.join_waker = false;
                    Ret::Done(true)
                } else {
                    return None; // only the handle clears it before then
                }
            }
            Op::ToJoinHandleDropped if s.handle && s.join_interest => {
                s.join_interest = false;
                let drop_output = s.complete;
                if !s.complete {
                    s.join_waker = false;
                }
                Ret::HandleDropped {
                    drop_output,
                    drop_waker: !s.join_waker,
                }
            }
            Op::RefDec(Holder::Queued) if s.queued == 1 => {
                s.queued = 0;
                Ret::Freed(s.release())
            }
            Op::RefDec(Holder::Waker) if s.wakers > 0 => {
                s.wakers -= 1;
                Ret::Freed(s.release())
            }
            Op::RefDec(Holder::Handle) if s.handle && !s.join_interest => {
                s.handle = false;
                Ret::Freed(s.release())
            }
            Op::ToShutdown if s.listed && !s.poller && !s.running && !s.complete => {
                s.stopped = true;
                s.cancelled = true;
                s.running = true;
                // The list's reference is the canceller's now.
                s.listed = false;
                s.poller = true;
                Ret::Unit
            }
            Op::RefCount => Ret::Count(s.holders()),
            _ => return None,
        };
        Some((ret, s))
    }
}

impl Spec for TaskState {
    type Op = Op;
    type Ret = Ret;

    fn outcomes(&self, op: &Op) -> Vec<(Ret, Self)> {
        self.step(op).into_iter().collect()
    }
}

/// Runs `op` on the real word (the property test and the models share
/// this); `listed`: whether the completer also drops the live-task
/// list's reference (a worker's completion does, shutdown's has already
/// taken it).
pub fn run_on(op: &Op, state: &State, listed: bool) -> Ret {
    match *op {
        Op::ToRunning => Ret::Running(state.transition_to_running()),
        Op::ToIdle => Ret::Idle(state.transition_to_idle()),
        Op::ToComplete => {
            let prev = state.transition_to_complete();
            Ret::Completed {
                join_waker: prev.has_join_waker(),
                join_interest: prev.is_join_interested(),
            }
        }
        Op::UnsetWakerAfterComplete => {
            Ret::JoinInterest(state.unset_waker_after_complete().is_join_interested())
        }
        Op::ToTerminal => Ret::Freed(state.transition_to_terminal(1 + usize::from(listed))),
        Op::CloneWaker => {
            state.ref_inc();
            Ret::Unit
        }
        Op::WakeByVal => Ret::Notified(state.transition_to_notified_by_val()),
        Op::WakeByRef => Ret::Notified(state.transition_to_notified_by_ref()),
        Op::Abort => Ret::Submit(state.transition_to_notified_and_cancel()),
        Op::SetJoinWaker => Ret::Done(state.set_join_waker().is_ok()),
        Op::UnsetJoinWaker => Ret::Done(state.unset_join_waker().is_ok()),
        Op::ToJoinHandleDropped => {
            let dropped = state.transition_to_join_handle_dropped();
            Ret::HandleDropped {
                drop_output: dropped.drop_output,
                drop_waker: dropped.drop_waker,
            }
        }
        Op::RefDec(_) => Ret::Freed(state.ref_dec()),
        Op::ToShutdown => {
            state.transition_to_shutdown();
            Ret::Unit
        }
        Op::RefCount => Ret::Count(state.load().ref_count()),
    }
}
