//! `Notify`'s sequential specification (`src/notify.rs`), tokio's
//! contract as a state machine: the property tests step it beside the
//! real `Notify` (`proptests/notify.rs`), and the models' histories are
//! checked against it (`models/notify.rs`).
//!
//! State: the permit (at most one, N-1); the generation, which
//! `notify_waiters` advances and every future records when it is created
//! (N-3); the registered waiters, oldest first, which `notify_one` takes
//! from the front and `notify_last` from the back (N-2); each future's
//! stage (created, waiting, done), the notification it was chosen for, and
//! the waker it registered last (N-5); and how often each waker was woken.
//!
//! A future registers at its first poll or `enable`, not when it is
//! created: a `notify_one` before that stores the permit instead. A
//! future created before a `notify_waiters` began is completed by it,
//! polled or not, and checks that before the permit (N-3). A future chosen
//! by `notify_one` or `notify_last` and dropped before it completed passes
//! the notification on, by the same strategy, to the next waiter or into
//! the permit (N-4).
//!
//! Order: happens-before, not real time, as tokio's (whose `notified()`
//! reads the generation with a load too). A `Notified` records the
//! generation with a load when it is created, so one created after a
//! `notify_waiters` returned on another thread by the clock, with nothing
//! ordering the two, may still be completed by it; one created after the
//! call happens-before it never is (N-3). The weak-memory pass checks
//! histories in happens-before order, the real-time pass (every access a
//! read-modify-write) in real time (L-5).
//!
//! Deterministic: one outcome per operation. Only `Await` blocks (a
//! wait given up is checked with it: the specification must have it wait
//! then, or a wake-up was lost); otherwise a wait is a sequence of polls,
//! each an operation whose return (ready or not) the specification
//! decides.

use std::collections::{BTreeMap, VecDeque};

use crate::harness::linearizability::Spec;

/// Wakers a history may use: one per thread of a scenario, or the property
/// tests' three.
pub const WAKERS: usize = 4;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Stage {
    Created,
    Waiting,
    Done,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Notification {
    Fifo,
    Lifo,
    All,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Future {
    /// The generation when it was created.
    pub generation: usize,
    pub stage: Stage,
    /// The waker its last `Pending` poll registered.
    pub waker: Option<usize>,
    pub notified: Option<Notification>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Notify {
    pub permit: bool,
    pub generation: usize,
    /// Registered and not yet notified, oldest first.
    pub waiters: VecDeque<u64>,
    pub futures: BTreeMap<u64, Future>,
    pub wakes: [usize; WAKERS],
}

#[derive(Clone, Debug, PartialEq)]
pub enum Op {
    /// `notified()` (or `notified_owned()`), as future `id`.
    Create(u64),
    /// `enable()`: ready or not.
    Enable(u64),
    /// A poll with waker `waker`: ready or not.
    Poll(u64, usize),
    /// The future polled with waker `waker` until ready: an `.await`.
    /// Ready at once if a poll now would be; otherwise it waits (no
    /// outcome). Models record it only to give a wait up (the harness's
    /// give-up check): a wait given up where this would be ready lost a
    /// wake-up.
    Await(u64, usize),
    /// The future dropped.
    Drop(u64),
    NotifyOne,
    NotifyLast,
    NotifyWaiters,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Ret {
    Unit,
    /// A poll's or `enable`'s answer.
    Ready(bool),
}

impl Notify {
    /// Ready or not; `waker` is `None` for `enable`.
    fn poll(&mut self, id: u64, waker: Option<usize>) -> bool {
        let generation = self.generation;
        let f = self.futures.get_mut(&id).expect("a future polled before it was created");
        match f.stage {
            Stage::Done => true,
            Stage::Created => {
                // N-3: the generation first, then the permit.
                if f.generation != generation {
                    f.stage = Stage::Done;
                } else if self.permit {
                    self.permit = false;
                    f.stage = Stage::Done;
                } else {
                    f.stage = Stage::Waiting;
                    f.waker = waker;
                    self.waiters.push_back(id);
                }
                f.stage == Stage::Done
            }
            Stage::Waiting => {
                if f.notified.is_some() {
                    f.stage = Stage::Done;
                    f.waker = None;
                    return true;
                }
                if waker.is_some() {
                    f.waker = waker; // N-5: the latest waker replaces
                }
                false
            }
        }
    }

    fn notify(&mut self, lifo: bool) {
        let chosen = if lifo {
            self.waiters.pop_back()
        } else {
            self.waiters.pop_front()
        };
        match chosen {
            None => self.permit = true,
            Some(id) => {
                let f = self.futures.get_mut(&id).expect("a waiter is a live future");
                f.notified = Some(if lifo {
                    Notification::Lifo
                } else {
                    Notification::Fifo
                });
                if let Some(w) = f.waker.take() {
                    self.wakes[w] += 1;
                }
            }
        }
    }

    fn notify_waiters(&mut self) {
        self.generation += 1;
        for id in std::mem::take(&mut self.waiters) {
            let f = self.futures.get_mut(&id).expect("a waiter is a live future");
            f.notified = Some(Notification::All);
            if let Some(w) = f.waker.take() {
                self.wakes[w] += 1;
            }
        }
    }

    fn drop_future(&mut self, id: u64) {
        let f = self.futures.remove(&id).expect("a future dropped before it was created");
        if f.stage != Stage::Waiting {
            return;
        }
        match f.notified {
            None => self.waiters.retain(|&w| w != id),
            // N-4: a chosen, unconsumed notification is passed on.
            Some(Notification::Fifo) => self.notify(false),
            Some(Notification::Lifo) => self.notify(true),
            Some(Notification::All) => {}
        }
    }
}

impl Spec for Notify {
    type Op = Op;
    type Ret = Ret;

    fn outcomes(&self, op: &Op) -> Vec<(Ret, Self)> {
        let mut next = self.clone();
        let ret = match *op {
            Op::Create(id) => {
                next.futures.insert(
                    id,
                    Future {
                        generation: self.generation,
                        stage: Stage::Created,
                        waker: None,
                        notified: None,
                    },
                );
                Ret::Unit
            }
            Op::Enable(id) => Ret::Ready(next.poll(id, None)),
            Op::Poll(id, waker) => Ret::Ready(next.poll(id, Some(waker))),
            Op::Await(id, waker) => {
                // A wait blocks where its future does not exist yet (the
                // checker may try a blocked call anywhere).
                if !next.futures.contains_key(&id) || !next.poll(id, Some(waker)) {
                    return vec![];
                }
                Ret::Ready(true)
            }
            Op::Drop(id) => {
                next.drop_future(id);
                Ret::Unit
            }
            Op::NotifyOne => {
                next.notify(false);
                Ret::Unit
            }
            Op::NotifyLast => {
                next.notify(true);
                Ret::Unit
            }
            Op::NotifyWaiters => {
                next.notify_waiters();
                Ret::Unit
            }
        };
        vec![(ret, next)]
    }
}
