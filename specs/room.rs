//! The keyed channel's room (`src/keyed/room.rs`), a component on its own:
//! the capacity's two counts, the senders asleep for room, and whether the
//! receiver is gone. Its models (`models/keyed/room.rs`) check
//! their histories against this.
//!
//! State: messages taken and not received, sleeping senders counted, and
//! closed. `try_take` takes room while fewer than `capacity` messages are
//! taken and not received, else answers `Full` (exact: the channel was
//! full at its linearization point) and, for a would-be sleeper, counts it
//! asleep; once closed it answers `Closed`. `free` (a receive) gives one
//! back and answers whether to wake a sender: `true` whenever a sleeper is
//! counted (no lost wake-up), and otherwise `false`, but for the one
//! nondeterminism, with its reason checked on the history
//! (`Spec::needs_overlap`): a sender about to sleep counts itself before
//! it looks and uncounts itself if it finds room, so a receive that
//! overlaps such a `try_take` may wake for nobody (a needless wake-up,
//! never a lost one). A `true` with no sleeper counted and no would-be
//! sleeper's `try_take` overlapping fails the history.
//! `taken_not_received` and `close` answer the count.
//!
//! Contract with its callers (kept by `keyed/mod.rs`, and by the models'
//! subject): the receiver alone frees, counts and closes, once; it frees
//! only messages taken; a sender uncounts itself once per `Full` that
//! counted it.

use crate::harness::linearizability::{Overlap, Spec};

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Room {
    pub capacity: usize,
    pub queued: usize,
    pub sleepers: usize,
    pub closed: bool,
}

impl Room {
    pub fn new(capacity: usize) -> Self {
        Room {
            capacity,
            queued: 0,
            sleepers: 0,
            closed: false,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum Op {
    /// `try_take`, as a would-be sleeper or not.
    TryTake { as_sleeper: bool },
    UncountSleeper,
    Free,
    TakenNotReceived,
    Close,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Ret {
    Taken,
    Full,
    Closed,
    Unit,
    /// `free`: wake a sender.
    Wake(bool),
    Count(usize),
}

impl Spec for Room {
    type Op = Op;
    type Ret = Ret;

    fn outcomes(&self, op: &Op) -> Vec<(Ret, Self)> {
        let mut next = self.clone();
        match *op {
            Op::TryTake { .. } if self.closed => vec![(Ret::Closed, next)],
            Op::TryTake { as_sleeper } => {
                if self.queued < self.capacity {
                    next.queued += 1;
                    vec![(Ret::Taken, next)]
                } else {
                    next.sleepers += usize::from(as_sleeper);
                    vec![(Ret::Full, next)]
                }
            }
            // Only after the `Full` that counted the sleeper.
            Op::UncountSleeper if self.sleepers == 0 => Vec::new(),
            Op::UncountSleeper => {
                next.sleepers -= 1;
                vec![(Ret::Unit, next)]
            }
            // Only after the take of the message received.
            Op::Free if self.queued == 0 => Vec::new(),
            Op::Free => {
                next.queued -= 1;
                if self.sleepers > 0 {
                    vec![(Ret::Wake(true), next)]
                } else {
                    vec![(Ret::Wake(false), next.clone()), (Ret::Wake(true), next)]
                }
            }
            Op::TakenNotReceived => vec![(Ret::Count(self.queued), next)],
            Op::Close => {
                next.closed = true;
                vec![(Ret::Count(self.queued), next)]
            }
        }
    }

    /// `try_take`'s `Full` and `Closed` and `taken_not_received`'s count
    /// are exact in real time: they answer `try_send`'s `Full` and
    /// `Disconnected` and `try_recv`'s `Empty`, which the channel promises
    /// in real time (`specs/keyed.rs`).
    fn real_time(op: &Op) -> bool {
        matches!(op, Op::TryTake { .. } | Op::TakenNotReceived)
    }

    fn needs_overlap(&self, op: &Op, ret: &Ret, _next: &Self) -> Option<Overlap<Op, Ret>> {
        match (op, ret) {
            (Op::Free, Ret::Wake(true)) if self.sleepers == 0 => Some(Overlap::new(
                "a would-be sleeper's try_take (it counts itself before it looks)",
                |other, _| matches!(other, Op::TryTake { as_sleeper: true }),
            )),
            _ => None,
        }
    }
}
