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
//! `SlotReader` the models use). Deterministic: one outcome per step.

use std::collections::VecDeque;

use crate::harness::linearizability::Spec;

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
                    Ret::Popped(Some(item))
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
}
