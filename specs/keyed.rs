//! The keyed channel's sequential specification (`src/keyed/`), both
//! flavours as one object. The property tests step it beside the real
//! channel (`proptests/keyed.rs`), and the models' histories are checked
//! against it (`models/keyed.rs`).
//!
//! State: the messages sent and not yet received, in the order they
//! entered the channel (their sends' linearization order); the messages
//! received and not yet released, with their keys; the capacity; how many
//! senders are alive; whether the receiver is.
//!
//! - A queued message is *deliverable* when none of its keys is held by a
//!   received message not yet released (K-1) and no message queued before
//!   it shares a key with it (K-2, multi-key messages included).
//! - `try_send` answers `Full` exactly when `capacity` messages are queued
//!   (received ones do not count: K-7), `Disconnected` when the receiver is
//!   gone; a blocking `send` waits while the channel is full.
//! - `try_recv` takes a deliverable message; otherwise `Conflicted` if
//!   anything is queued, `Disconnected` if nothing is and every sender is
//!   gone, `Empty` if nothing is (K-3, K-10); a blocking `recv` waits while
//!   nothing is deliverable, unless nothing is queued and every sender is
//!   gone.
//! - Releasing a message frees its keys; the receiver's drop drops every
//!   queued message, and later sends fail (K-4).
//! - A sender's clone and drop count the senders alive, which decide
//!   `Disconnected` for a receive.
//! - A send whose keys include one whose `Hash` panics, or a repeated one
//!   whose `Eq` panics, panics, in every state (full and closed too: the
//!   sender hashes its keys and drops repeats before it looks at the
//!   channel), and leaves the channel as if it had not been called: it
//!   takes no capacity and queues nothing, and its value and keys are
//!   dropped once as the panic unwinds (K-4, K-5, K-7).
//!
//! Nondeterministic exactly where the contract is: which deliverable
//! message a receive takes ("Not promised: any order between messages with
//! no key in common"); the return names it. Blocking operations that did
//! not return took no effect: a cancelled send sent nothing, a cancelled
//! receive took nothing (K-4).
//!
//! A single poll of the async flavour's futures (`SendPolledOnce`,
//! `RecvPolledOnce`: what a task that polls once and moves on sees) is the
//! blocking operation answering `Pending` where it would wait. It may
//! also answer `Pending` where it would not, in one case each, which
//! concurrency explains and the history must show (L-6,
//! `Spec::needs_overlap`), as in the waiting's specification
//! (`specs/waiting.rs`), whose room and slots the channel uses:
//! - a receive's poll with a message deliverable only if the send of a
//!   message still queued overlaps it (a send takes its place before it
//!   writes it, and the receiver files places in order, so an unwritten
//!   place stops it even before a later written one);
//! - a send's poll with room only if a receive that took a message
//!   overlaps it (its room not yet freed when the send looked).
//!
//! P-compositionality: messages with no key in common are independent, so
//! a history splits by connected sets of keys, but only when nothing in it
//! depends on the whole channel: no `Full`, `Empty`, `Conflicted` or
//! `Disconnected`, no drop of a handle, and no more sends than the
//! capacity.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Debug;
use std::hash::Hash;

use crate::harness::linearizability::{Overlap, Spec};

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Keyed<K: Ord> {
    pub capacity: usize,
    /// (item, its keys without repeats, in first-seen order), oldest first.
    pub queue: Vec<(usize, Vec<K>)>,
    /// Received and not released: item -> keys.
    pub live: BTreeMap<usize, Vec<K>>,
    pub senders: usize,
    pub receiver: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Op<K> {
    /// A blocking `send` (either flavour) of `item` under `keys`.
    Send(Vec<K>, usize),
    TrySend(Vec<K>, usize),
    /// A blocking `recv` (either flavour).
    Recv,
    TryRecv,
    /// One poll of the async `send` future, dropped after it.
    SendPolledOnce(Vec<K>, usize),
    /// Any send of `item` (`send`, `try_send`, a poll of the async `send`)
    /// whose keys include one whose `Hash` panics, or a repeated one whose
    /// `Eq` panics. Its other keys do not matter: it sends nothing.
    SendKeyPanics(usize),
    /// One poll of the async `recv` future, dropped after it.
    RecvPolledOnce,
    /// The message carrying `item` dropped (or its value taken).
    Release(usize),
    /// A sender cloned: one more sender alive.
    CloneSender,
    DropSender,
    DropReceiver,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SendErr {
    Full,
    Disconnected,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecvErr {
    Empty,
    Conflicted,
    Disconnected,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Ret {
    Unit,
    /// `Err` hands the item back.
    Sent(Result<(), SendErr>),
    Received(Result<usize, RecvErr>),
    /// A single poll's: not ready.
    Pending,
    /// The call panicked (with the key's panic).
    Panicked,
}

/// `keys` without repeats, in first-seen order (K-8).
pub fn unique<K: PartialEq + Clone>(keys: &[K]) -> Vec<K> {
    let mut out: Vec<K> = Vec::new();
    for k in keys {
        if !out.contains(k) {
            out.push(k.clone());
        }
    }
    out
}

impl<K: Ord + Clone + Debug + Hash> Keyed<K> {
    pub fn new(capacity: usize, senders: usize) -> Self {
        Keyed {
            capacity,
            queue: Vec::new(),
            live: BTreeMap::new(),
            senders,
            receiver: true,
        }
    }

    /// Keys held by received messages not yet released.
    pub fn held(&self) -> BTreeSet<K> {
        self.live.values().flatten().cloned().collect()
    }

    /// The items of the deliverable messages, oldest first.
    pub fn deliverable(&self) -> Vec<usize> {
        // A message is deliverable when no key of it is held and no earlier
        // queued message shares a key with it: `blocked` gathers both.
        let mut blocked = self.held();
        let mut found = Vec::new();
        for (item, keys) in &self.queue {
            if keys.iter().all(|k| !blocked.contains(k)) {
                found.push(*item);
            }
            blocked.extend(keys.iter().cloned());
        }
        found
    }

    /// Each receive the specification allows, as the return it gives and
    /// the state after it (`Recv` and `TryRecv` alike).
    fn received_outcomes(&self) -> Vec<(Ret, Self)> {
        self.receives()
            .into_iter()
            .map(|(item, next)| (Ret::Received(Ok(item)), next))
            .collect()
    }

    /// Every receive of a deliverable message, as (item, state after).
    fn receives(&self) -> Vec<(usize, Self)> {
        self.deliverable()
            .into_iter()
            .map(|item| {
                let mut next = self.clone();
                let at = next.queue.iter().position(|(i, _)| *i == item).expect("queued");
                let (_, keys) = next.queue.remove(at);
                next.live.insert(item, keys);
                (item, next)
            })
            .collect()
    }

    fn sent(&self, keys: &[K], item: usize) -> Self {
        let mut next = self.clone();
        next.queue.push((item, unique(keys)));
        next
    }
}

impl<K: Ord + Clone + Debug + Hash> Spec for Keyed<K> {
    type Op = Op<K>;
    type Ret = Ret;

    fn outcomes(&self, op: &Op<K>) -> Vec<(Ret, Self)> {
        let same = |ret| vec![(ret, self.clone())];
        match op {
            Op::Send(keys, item) => {
                if !self.receiver {
                    same(Ret::Sent(Err(SendErr::Disconnected)))
                } else if self.queue.len() < self.capacity {
                    vec![(Ret::Sent(Ok(())), self.sent(keys, *item))]
                } else {
                    Vec::new() // waits for room
                }
            }
            Op::SendPolledOnce(keys, item) => {
                if !self.receiver {
                    same(Ret::Sent(Err(SendErr::Disconnected)))
                } else if self.queue.len() < self.capacity {
                    // `Pending` here only with a reason (`needs_overlap`).
                    vec![
                        (Ret::Sent(Ok(())), self.sent(keys, *item)),
                        (Ret::Pending, self.clone()),
                    ]
                } else {
                    same(Ret::Pending)
                }
            }
            Op::RecvPolledOnce => {
                let mut got = self.received_outcomes();
                if got.is_empty() && self.queue.is_empty() && self.senders == 0 {
                    got.push((Ret::Received(Err(RecvErr::Disconnected)), self.clone()));
                } else {
                    // With a message deliverable, only with a reason
                    // (`needs_overlap`).
                    got.push((Ret::Pending, self.clone()));
                }
                got
            }
            Op::TrySend(keys, item) => {
                if !self.receiver {
                    same(Ret::Sent(Err(SendErr::Disconnected)))
                } else if self.queue.len() < self.capacity {
                    vec![(Ret::Sent(Ok(())), self.sent(keys, *item))]
                } else {
                    same(Ret::Sent(Err(SendErr::Full)))
                }
            }
            Op::SendKeyPanics(_) => same(Ret::Panicked),
            Op::Recv => {
                let got = self.received_outcomes();
                if !got.is_empty() {
                    got
                } else if self.queue.is_empty() && self.senders == 0 {
                    same(Ret::Received(Err(RecvErr::Disconnected)))
                } else {
                    Vec::new() // waits
                }
            }
            Op::TryRecv => {
                let got = self.received_outcomes();
                if !got.is_empty() {
                    got
                } else if !self.queue.is_empty() {
                    same(Ret::Received(Err(RecvErr::Conflicted)))
                } else if self.senders == 0 {
                    same(Ret::Received(Err(RecvErr::Disconnected)))
                } else {
                    same(Ret::Received(Err(RecvErr::Empty)))
                }
            }
            Op::Release(item) => {
                let mut next = self.clone();
                next.live.remove(item);
                vec![(Ret::Unit, next)]
            }
            Op::CloneSender => {
                let mut next = self.clone();
                next.senders += 1;
                vec![(Ret::Unit, next)]
            }
            Op::DropSender => {
                let mut next = self.clone();
                next.senders -= 1;
                vec![(Ret::Unit, next)]
            }
            Op::DropReceiver => {
                let mut next = self.clone();
                next.receiver = false;
                next.queue.clear();
                vec![(Ret::Unit, next)]
            }
        }
    }

    /// A receive of a named message: only that message's state.
    fn after(&self, op: &Op<K>, ret: &Ret) -> Vec<Self> {
        match (op, ret) {
            (Op::Recv | Op::TryRecv | Op::RecvPolledOnce, Ret::Received(Ok(item))) => {
                if !self.deliverable().contains(item) {
                    return Vec::new();
                }
                let mut next = self.clone();
                let at = next.queue.iter().position(|(i, _)| i == item).expect("queued");
                let (_, keys) = next.queue.remove(at);
                next.live.insert(*item, keys);
                vec![next]
            }
            _ => self
                .outcomes(op)
                .into_iter()
                .filter(|(allowed, _)| allowed == ret)
                .map(|(_, state)| state)
                .collect(),
        }
    }

    /// Every answer that says what the channel holds is exact in real
    /// time (K-11): `try_recv`'s `Empty` and `Conflicted` ("Exact: ...
    /// only if no message whose send returned before this call began
    /// could be received"), `try_send`'s `Full` (the channel held
    /// `capacity` messages not yet received) and `Disconnected`, which a
    /// send or receive answers once the other side's drop has returned.
    /// A handle's clone or drop, a release and a send whose key panics
    /// answer nothing.
    fn real_time(op: &Op<K>) -> bool {
        !matches!(
            op,
            Op::Release(_)
                | Op::CloneSender
                | Op::DropSender
                | Op::DropReceiver
                | Op::SendKeyPanics(_)
        )
    }

    /// A send or receive that did not return took no effect (K-4).
    fn unreturned(&self, _op: &Op<K>) -> Vec<Self> {
        Vec::new()
    }

    fn needs_overlap(&self, op: &Op<K>, ret: &Ret, _next: &Self) -> Option<Overlap<Op<K>, Ret>> {
        match (op, ret) {
            (Op::RecvPolledOnce, Ret::Pending) if !self.deliverable().is_empty() => {
                let there: Vec<usize> = self.queue.iter().map(|(item, _)| *item).collect();
                Some(Overlap::new(
                    format!("the send of one of {there:?}, its place not yet written"),
                    move |other, ret| match other {
                        Op::Send(_, item) | Op::TrySend(_, item) | Op::SendPolledOnce(_, item) => {
                            there.contains(item) && matches!(ret, Some(Ret::Sent(Ok(()))))
                        }
                        _ => false,
                    },
                ))
            }
            (Op::SendPolledOnce(..), Ret::Pending)
                if self.receiver && self.queue.len() < self.capacity =>
            {
                Some(Overlap::new(
                    "a receive that took a message, its room not yet freed",
                    |other, ret| {
                        matches!(other, Op::Recv | Op::TryRecv | Op::RecvPolledOnce)
                            && matches!(ret, Some(Ret::Received(Ok(_))))
                    },
                ))
            }
            _ => None,
        }
    }

    fn partition(&self, ops: &[(&Op<K>, Option<&Ret>)]) -> Option<Vec<Vec<usize>>> {
        if !(self.queue.is_empty() && self.live.is_empty()) {
            return None;
        }
        let mut keys_of: BTreeMap<usize, Vec<K>> = BTreeMap::new();
        let mut sends = 0;
        for (op, ret) in ops {
            match (op, ret) {
                (Op::Send(keys, item) | Op::TrySend(keys, item), Some(Ret::Sent(Ok(())))) => {
                    sends += 1;
                    keys_of.insert(*item, unique(keys));
                }
                (Op::Send(..), None) => sends += 1,
                (
                    Op::Recv | Op::TryRecv | Op::RecvPolledOnce,
                    Some(Ret::Received(Ok(_))),
                )
                | (Op::Release(_), _) => {}
                // A receive that never returned took nothing, and a send
                // whose key panicked sent nothing: each on its own.
                (Op::Recv, None) | (Op::SendKeyPanics(_), _) => {}
                _ => return None, // depends on the whole channel
            }
        }
        if sends > self.capacity {
            return None;
        }
        // Union-find over the items, joined by shared keys.
        let items: Vec<usize> = keys_of.keys().copied().collect();
        let mut parent: BTreeMap<usize, usize> = items.iter().map(|&i| (i, i)).collect();
        fn root(parent: &mut BTreeMap<usize, usize>, i: usize) -> usize {
            let p = parent[&i];
            if p == i {
                return i;
            }
            let r = root(parent, p);
            parent.insert(i, r);
            r
        }
        for (a, ka) in &keys_of {
            for (b, kb) in &keys_of {
                if a < b && ka.iter().any(|k| kb.contains(k)) {
                    let (ra, rb) = (root(&mut parent, *a), root(&mut parent, *b));
                    parent.insert(ra, rb);
                }
            }
        }
        let mut parts: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
        let mut alone = Vec::new();
        for (i, (op, ret)) in ops.iter().enumerate() {
            let item = match (op, ret) {
                (Op::Send(_, item) | Op::TrySend(_, item), _) => Some(*item),
                (_, Some(Ret::Received(Ok(item)))) => Some(*item),
                (Op::Release(item), _) => Some(*item),
                _ => None,
            };
            match item.filter(|i| parent.contains_key(i)) {
                Some(item) => {
                    let r = root(&mut parent, item);
                    parts.entry(r).or_default().push(i);
                }
                None => alone.push(vec![i]),
            }
        }
        let mut all: Vec<Vec<usize>> = parts.into_values().collect();
        all.extend(alone);
        Some(all)
    }
}
