//! The keyed channel's waiting (`src/keyed/waiting.rs`), a component on its
//! own, run over the real room and slot list (`WaitingChannel`): with
//! them, a bounded first-in first-out channel of one receiver. Its models
//! (`models/keyed/waiting.rs`) check their histories against this.
//!
//! State: the values sent and not received, in the order their sends
//! linearized; the capacity; whether the receiver closed. `Send` waits
//! while `capacity` values are there and returns `Sent` once it has room
//! (taking it: the value joins the back), or `Closed` once the receiver
//! closed, whatever the room. `Recv` waits while nothing is there and
//! returns the front value. Deterministic. A blocked operation that never
//! returned (given up and cancelled: the async flavour) took no effect:
//! a cancelled send takes no room, a cancelled receive loses no value.
//!
//! A single poll of the async flavour's futures (`SendPolledOnce`,
//! `RecvPolledOnce`: what a task that polls once and moves on sees) is
//! the same operation answering `Pending` where the blocking one would
//! wait, and taking no effect then (the future is dropped: cancelled).
//! `Pending` is also allowed in one more case each, which concurrency
//! alone explains, and the history must show the reason
//! (`Spec::needs_overlap`): a send takes its room before it writes its
//! place, and a receive reads its place before it frees the room, so
//! - a receive's poll may answer `Pending` with a value there only if
//!   the send of a value still there overlapped it (its place claimed,
//!   not yet written);
//! - a send's poll may answer `Pending` with room there only if a
//!   receive that took a value overlapped it (its value read, its room
//!   not yet freed).
//!
//! A poll that answers `Pending` with no such call in flight fails the
//! history.
//!
//! That nothing waits for good while the specification lets it return is
//! the component's one promise beyond the room's and the slot list's (no
//! lost wake-up): the sync flavour shows a lost one as a deadlock (loom
//! reports it), the async one as a give-up the history cannot place.
//!
//! Contract with its callers (kept by the channel, and by the models'
//! subject): one receiver, which alone receives and closes (once).

use std::collections::VecDeque;

use crate::harness::linearizability::{Overlap, Spec};

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Waiting {
    pub capacity: usize,
    pub queued: VecDeque<usize>,
    pub closed: bool,
}

impl Waiting {
    pub fn new(capacity: usize) -> Self {
        Waiting {
            capacity,
            queued: VecDeque::new(),
            closed: false,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum Op {
    /// A blocking send of the item.
    Send(usize),
    /// A blocking receive.
    Recv,
    Close,
    /// One poll of an async send, then dropped if pending.
    SendPolledOnce(usize),
    /// One poll of an async receive, then dropped if pending.
    RecvPolledOnce,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Ret {
    Sent,
    /// The send gave its value back: the receiver closed.
    Closed,
    Received(usize),
    Unit,
    /// A single poll found the channel full (a send) or empty (a receive).
    Pending,
}

impl Spec for Waiting {
    type Op = Op;
    type Ret = Ret;

    fn outcomes(&self, op: &Op) -> Vec<(Ret, Self)> {
        let mut next = self.clone();
        match *op {
            // Pending where the blocking call would wait, and (with a
            // reason: `needs_overlap`) where it would not.
            Op::SendPolledOnce(item) => {
                let mut outcomes = self.outcomes(&Op::Send(item));
                if !self.closed {
                    outcomes.push((Ret::Pending, next));
                }
                outcomes
            }
            Op::RecvPolledOnce => {
                let mut outcomes = self.outcomes(&Op::Recv);
                outcomes.push((Ret::Pending, next));
                outcomes
            }
            Op::Send(_) if self.closed => vec![(Ret::Closed, next)],
            Op::Send(item) if self.queued.len() < self.capacity => {
                next.queued.push_back(item);
                vec![(Ret::Sent, next)]
            }
            Op::Send(_) => Vec::new(), // waits for room
            Op::Recv => match next.queued.pop_front() {
                Some(item) => vec![(Ret::Received(item), next)],
                None => Vec::new(), // waits
            },
            Op::Close => {
                next.closed = true;
                vec![(Ret::Unit, next)]
            }
        }
    }

    /// A send or receive that did not return was cancelled before it
    /// took effect (a send pushes only once it has room, and then
    /// returns; a receive returns what it took).
    fn unreturned(&self, _op: &Op) -> Vec<Self> {
        Vec::new()
    }

    fn needs_overlap(&self, op: &Op, ret: &Ret, _next: &Self) -> Option<Overlap<Op, Ret>> {
        match (op, ret) {
            (Op::RecvPolledOnce, Ret::Pending) if !self.queued.is_empty() => {
                let there = self.queued.clone();
                Some(Overlap::new(
                    format!("the send of one of {there:?}, its place not yet written"),
                    move |other, ret| match other {
                        Op::Send(item) | Op::SendPolledOnce(item) => {
                            there.contains(item) && !matches!(ret, Some(Ret::Closed | Ret::Pending))
                        }
                        _ => false,
                    },
                ))
            }
            (Op::SendPolledOnce(_), Ret::Pending) if self.queued.len() < self.capacity => {
                Some(Overlap::new(
                    "a receive that took a value, its room not yet freed",
                    |other, ret| {
                        matches!(other, Op::Recv | Op::RecvPolledOnce)
                            && matches!(ret, Some(Ret::Received(_)))
                    },
                ))
            }
            _ => None,
        }
    }
}
