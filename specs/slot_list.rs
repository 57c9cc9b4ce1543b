//! The keyed channel's slot list (`src/keyed/slots.rs`), a component on
//! its own: many writers append, one reader takes in the order the
//! writers claimed their places. Its models (`models/keyed/slot_list.rs`) check their histories against this.
//!
//! A push is two steps, each an operation of the history with the push's
//! own interval (the subject records both around the one call): `Claim`
//! takes the next place, `Write` fills it. So a place claimed and not yet
//! written is visible, as it is in the code: `pop` answers `None` when the
//! next place is claimed and unwritten, even if later places are written
//! (the channel's caller knows from its room that a message is on its way:
//! `Inbox::try_recv_exact`). Once a push returned, both its steps are
//! behind every operation that begins after it.
//!
//! State: the places from the reader's on, in claim order, each with its
//! item and whether it is written; whether the reader's next place is
//! marked as waited for. `announce_waiting` marks the reader's next place
//! unless it is written (then `false`: look again); a mark stands until
//! that place is read. The `Write` of a marked place answers `true`
//! (wake the reader), and only that one. `pop` takes the next place if it
//! is written.
//!
//! Contract with its callers (not checked here, kept by `keyed/mod.rs`):
//! one reader at a time; the reader reads every claimed place before it
//! is dropped (the channel's receiver does, and so does the
//! `SlotReader` the models use).
//!
//! One nondeterminism, conditioned (`Spec::needs_overlap`): `pop` may
//! answer `None` at a written next place while that place's `Write`
//! overlaps it in the history's order. A claim is a relaxed
//! compare-and-swap that publishes nothing, so claim order is not
//! happens-before: a writer's write, then its next claim, then another
//! thread's claim after it and that thread's `pop`, leave the pop free to
//! read the first place's state from before the write. It is the
//! queue's order (`specs/queue.rs`): happens-before, not real time. It is
//! enough for the channel: a receive that finds a claimed place unwritten
//! knows from the room, a read-modify-write, that a message is on its way
//! and looks again until it is written (`Inbox::next_ready`), so what the
//! user sees meets real time. A trial scope with three calls per thread
//! found it (the reader's pop, push and pop against a writer's three
//! pushes; too long to keep, HISTORY.md).

use std::collections::VecDeque;

use crate::harness::linearizability::{Overlap, Spec};

#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct SlotList {
    /// From the reader's next place on: (item, written).
    pub places: VecDeque<(usize, bool)>,
    /// The reader's next place is marked as waited for.
    pub marked: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Op {
    /// A push of item `item` claims its place.
    Claim(usize),
    /// The push of item `item` writes its place.
    Write(usize),
    Pop,
    AnnounceWaiting,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Ret {
    Unit,
    /// `Write`: whether the reader waits for this place (wake it).
    Wake(bool),
    Popped(Option<usize>),
    Announced(bool),
}

impl Spec for SlotList {
    type Op = Op;
    type Ret = Ret;

    fn outcomes(&self, op: &Op) -> Vec<(Ret, Self)> {
        let mut next = self.clone();
        let ret = match *op {
            Op::Claim(item) => {
                next.places.push_back((item, false));
                Ret::Unit
            }
            Op::Write(item) => {
                let Some(at) = self.places.iter().position(|&(i, _)| i == item) else {
                    return Vec::new(); // not claimed yet: the claim comes first
                };
                assert!(!self.places[at].1, "item {item} written twice");
                next.places[at].1 = true;
                let wake = at == 0 && self.marked;
                next.marked &= !wake;
                Ret::Wake(wake)
            }
            Op::Pop => match self.places.front() {
                Some(&(item, true)) => {
                    next.places.pop_front();
                    next.marked = false;
                    // Or a stale look at the place: see `needs_overlap`.
                    return vec![(Ret::Popped(Some(item)), next), (Ret::Popped(None), self.clone())];
                }
                _ => Ret::Popped(None),
            },
            Op::AnnounceWaiting => {
                let written = matches!(self.places.front(), Some(&(_, true)));
                next.marked |= !written;
                Ret::Announced(!written)
            }
        };
        vec![(ret, next)]
    }

    /// A `pop` that answers `None` at a written place: only while that
    /// place's write overlaps it (see the module documentation).
    fn needs_overlap(&self, op: &Op, ret: &Ret, _: &Self) -> Option<Overlap<Op, Ret>> {
        match (op, ret, self.places.front()) {
            (Op::Pop, Ret::Popped(None), Some(&(item, true))) => Some(Overlap::new(
                format!("the write of item {item}, the reader's next place"),
                move |other, _| *other == Op::Write(item),
            )),
            _ => None,
        }
    }
}
