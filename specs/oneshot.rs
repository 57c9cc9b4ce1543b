//! The oneshot channel's sequential specification (`src/oneshot.rs`),
//! tokio's contract as a state machine: the property tests step it beside
//! the real channel (`proptests/oneshot.rs`), and every model's history is
//! checked against it (`models/oneshot.rs`).
//!
//! State: the value sent and not yet taken, whether the sender is done
//! (sent or dropped), whether the receiver closed (or was dropped), whether
//! it has completed (took the value, or saw `Closed`), and, for the
//! property tests, which waker each side registered last and how often
//! each was woken.
//!
//! Deterministic: every operation has one outcome. Blocking: `Recv` (the
//! receiver awaited) returns only once a value is there or the channel is
//! closed; `Closed` (the sender's `closed()` awaited) only once the
//! receiver closed or went. An operation that never returned took no
//! effect: an abandoned `Recv` leaves the value to be received (O-2).
//!
//! Order: happens-before, not real time, as tokio's. A query (`try_recv`,
//! `is_empty`, `is_closed`) reads the state word with a load, so it need
//! not see a `send` or `close` that returned on another thread by the
//! clock but does not happen-before it: `try_recv` may answer `Empty`
//! after such a `send` returned. Users learn of the event through the
//! channel itself (the receiver's wake, `closed()`), which synchronises;
//! a caller that must see it by the clock synchronises with the other
//! thread first. The weak-memory pass checks histories in happens-before
//! order, the real-time pass (every access a read-modify-write) in real
//! time (L-5).

use crate::harness::linearizability::Spec;

/// A side's waker slot and wake counts (wakers `0` and `1`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Wakers {
    /// The waker registered by the last `Pending` poll, if any.
    pub waiting: Option<usize>,
    pub wakes: [usize; 2],
}

impl Wakers {
    fn wake(&mut self) {
        if let Some(w) = self.waiting {
            self.wakes[w] += 1;
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Oneshot {
    /// The value sent (an item id), until the receiver takes it.
    pub value: Option<usize>,
    /// The sender sent or was dropped.
    pub sender_done: bool,
    /// The receiver closed the channel or was dropped.
    pub closed: bool,
    /// The receiver completed: took the value, or saw the channel closed.
    pub terminated: bool,
    /// A value was ever sent (a close after it leaves it receivable).
    pub sent: bool,
    pub rx: Wakers,
    pub tx: Wakers,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Op {
    /// `send(item)`.
    Send(usize),
    DropSender,
    /// `poll_closed` with waker 0 or 1: ready iff closed.
    PollClosed(usize),
    /// `closed().await`: waits for the receiver to close or go.
    Closed,
    IsClosed,
    TryRecv,
    /// `poll` with waker 0 or 1 (not after the receiver completed: that
    /// panics, O-5).
    PollRecv(usize),
    /// The receiver awaited (or `blocking_recv`): waits for a value or
    /// the close.
    Recv,
    Close,
    DropReceiver,
    IsEmpty,
    IsTerminated,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Ret {
    Unit,
    Bool(bool),
    /// `send`: `Ok`, or the item handed back.
    Sent(Result<(), usize>),
    /// `try_recv`: the item, or `Empty` / `Closed`.
    TryRecv(Result<usize, TryRecv>),
    /// A poll or await of the receiver: `None` pending; `Some(Ok(item))`,
    /// `Some(Err(()))` closed.
    Recv(Option<Result<usize, ()>>),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TryRecv {
    Empty,
    Closed,
}

impl Oneshot {
    /// What the receiver gets now, and the state after, if it completes.
    fn take(&self) -> Option<(Result<usize, ()>, Self)> {
        let mut next = self.clone();
        let got = if let Some(item) = next.value.take() {
            Ok(item)
        } else if self.sender_done || self.closed {
            Err(())
        } else {
            return None;
        };
        next.terminated = true;
        next.rx.waiting = None;
        Some((got, next))
    }

    /// The receiver closes (or goes): a sender waiting for that is woken,
    /// unless the channel already completed.
    fn close(&self) -> Self {
        let mut next = self.clone();
        if !(self.terminated || self.sent || self.sender_done || self.closed) {
            next.tx.wake();
        }
        next.closed = true;
        next
    }
}

impl Spec for Oneshot {
    type Op = Op;
    type Ret = Ret;

    fn outcomes(&self, op: &Op) -> Vec<(Ret, Self)> {
        let mut next = self.clone();
        let ret = match *op {
            Op::Send(item) => {
                next.sender_done = true;
                if self.closed {
                    Ret::Sent(Err(item))
                } else {
                    next.value = Some(item);
                    next.sent = true;
                    next.rx.wake();
                    Ret::Sent(Ok(()))
                }
            }
            Op::DropSender => {
                if !self.sender_done && !self.closed {
                    next.rx.wake();
                }
                next.sender_done = true;
                Ret::Unit
            }
            Op::PollClosed(w) => {
                if !self.closed {
                    next.tx.waiting = Some(w);
                }
                Ret::Bool(self.closed)
            }
            Op::Closed => {
                if !self.closed {
                    return Vec::new(); // waits
                }
                Ret::Unit
            }
            Op::IsClosed => Ret::Bool(self.closed),
            Op::TryRecv => {
                if self.terminated {
                    Ret::TryRecv(Err(TryRecv::Closed))
                } else {
                    match self.take() {
                        Some((got, after)) => {
                            next = after;
                            Ret::TryRecv(got.map_err(|()| TryRecv::Closed))
                        }
                        None => Ret::TryRecv(Err(TryRecv::Empty)),
                    }
                }
            }
            Op::PollRecv(w) => {
                assert!(!self.terminated, "polled after completion: a panic, not an outcome");
                match self.take() {
                    Some((got, after)) => {
                        next = after;
                        Ret::Recv(Some(got))
                    }
                    None => {
                        next.rx.waiting = Some(w);
                        Ret::Recv(None)
                    }
                }
            }
            Op::Recv => match self.take() {
                Some((got, after)) => {
                    next = after;
                    Ret::Recv(Some(got))
                }
                None => return Vec::new(), // waits
            },
            Op::Close => {
                if !self.terminated {
                    next = self.close();
                }
                Ret::Unit
            }
            Op::DropReceiver => {
                if !self.terminated {
                    next = self.close();
                }
                Ret::Unit
            }
            // A value is waiting iff it was sent and not taken.
            Op::IsEmpty => Ret::Bool(self.value.is_none() || self.terminated),
            Op::IsTerminated => Ret::Bool(self.terminated),
        };
        vec![(ret, next)]
    }

    /// Only the awaits block, and an await that did not return took
    /// nothing.
    fn unreturned(&self, _op: &Op) -> Vec<Self> {
        Vec::new()
    }
}
