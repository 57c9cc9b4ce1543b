//! The keyed channel's release stack (`src/keyed/intake.rs`), a component
//! on its own: dropped messages' envelopes pushed by any thread, taken
//! all at once by the one receiver. Its models (`models/keyed/release_stack.rs`) check their histories against this.
//!
//! State: what was pushed and not taken, oldest first; whether the taker
//! announced that it waits; whether it closed the stack. A push onto a
//! closed stack fails and hands its value back (`Closed`); a push that
//! finds the announcement withdraws it and must wake the taker
//! (`WakeTaker`), and only that push: the next one is `Queued`. An
//! announcement succeeds only on an empty stack. `take_all` and `close`
//! return everything pushed, in push order (the order of the pushes'
//! linearization points, so per pusher its own order, and in real time
//! across pushers), and withdraw an announcement.
//!
//! Contract with its callers (not checked here, kept by `keyed/mod.rs`):
//! one thread announces, takes and closes; it closes once, and takes
//! nothing after. Deterministic: one outcome per operation; nothing
//! blocks.

use crate::harness::linearizability::Spec;

#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct ReleaseStack {
    /// Pushed and not taken, oldest first.
    pub pushed: Vec<usize>,
    pub announced: bool,
    pub closed: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Op {
    /// Pushes item `item`.
    Push(usize),
    AnnounceWaiting,
    TakeAll,
    Close,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Ret {
    Queued,
    WakeTaker,
    /// The push failed: the value is the pusher's again.
    Closed,
    Announced(bool),
    /// What `take_all` or `close` took, oldest first.
    Taken(Vec<usize>),
}

impl Spec for ReleaseStack {
    type Op = Op;
    type Ret = Ret;

    fn outcomes(&self, op: &Op) -> Vec<(Ret, Self)> {
        let mut next = self.clone();
        let ret = match *op {
            Op::Push(_) if self.closed => Ret::Closed,
            Op::Push(item) => {
                next.pushed.push(item);
                next.announced = false;
                if self.announced {
                    Ret::WakeTaker
                } else {
                    Ret::Queued
                }
            }
            Op::AnnounceWaiting => {
                assert!(!self.closed, "announced after closing");
                let empty = self.pushed.is_empty() && !self.announced;
                next.announced |= empty;
                Ret::Announced(empty)
            }
            Op::TakeAll | Op::Close => {
                assert!(!self.closed, "taken from after closing");
                next.announced = false;
                next.closed = *op == Op::Close;
                Ret::Taken(std::mem::take(&mut next.pushed))
            }
        };
        vec![(ret, next)]
    }
}
