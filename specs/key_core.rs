//! The keyed channel's core (`src/keyed/core.rs`) with its key table
//! (`src/keyed/table.rs`), a component on its own: the receiver's
//! single-threaded bookkeeping of which messages are ready, which wait,
//! and which keys are held. The property test
//! `keyed::core_matches_its_specification` steps it beside the real core
//! (through the hidden `modelsync::internals::keyed::CoreOfIds`).
//!
//! State: the ready messages in the order they became ready, the waiting
//! messages in the order they were pushed, the received messages not yet
//! released, and the held keys.
//!
//! - A pushed message is ready at once, and holds its keys (K-1), when
//!   none of them is held and no waiting message shares one (K-2);
//!   otherwise it waits.
//! - The receiver takes the oldest ready message; its keys stay held until
//!   it is released.
//! - A release frees the message's keys one by one, in their order; after
//!   each, the oldest waiting message on that key becomes ready, holding
//!   its keys, if every one of its keys is free and it is the oldest
//!   waiting message on each (K-2: nothing overtakes an earlier message
//!   that shares a key with it). So the order in which a release's
//!   promotions become ready follows the released keys' order.
//! - A key is tracked (the table holds an entry for it) exactly while it is
//!   held or a waiting message carries it (K-6).
//!
//! Deterministic. The channel's own specification (`specs/keyed.rs`)
//! leaves open which of several deliverable messages a receive takes; this
//! one fixes the core's choice, which the channel's composes with the
//! slot list's order (VERIFICATION.md, the keyed channel's composition).
//!
//! Contract with its caller (the receiver, `keyed/mod.rs`): one thread; it
//! releases only a message it received, and each once.

use std::collections::{BTreeSet, VecDeque};

/// A message: its id and its keys, without repeats, in first-seen order.
pub type Message = (usize, Vec<u8>);

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KeyCore {
    pub ready: VecDeque<Message>,
    pub waiting: Vec<Message>,
    pub received: Vec<Message>,
    pub held: BTreeSet<u8>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Op {
    /// Message `id` with these keys (repeats allowed: they are dropped).
    Push(usize, Vec<u8>),
    PopReady,
    /// A received message released.
    Release(usize),
}

impl KeyCore {
    /// Whether a message with `keys`, with the waiting messages before
    /// `before` ahead of it, may hold its keys now.
    fn may_hold(&self, keys: &[u8], before: usize) -> bool {
        keys.iter().all(|k| !self.held.contains(k))
            && self.waiting[..before]
                .iter()
                .all(|(_, other)| !other.iter().any(|k| keys.contains(k)))
    }

    fn hold(&mut self, message: Message) {
        self.held.extend(message.1.iter().copied());
        self.ready.push_back(message);
    }

    /// `op`'s outcome: what `PopReady` returns (`None` for the others), and
    /// the state after; `None` if the contract rules `op` out (a release of
    /// a message not received).
    pub fn step(&self, op: &Op) -> Option<(Option<usize>, Self)> {
        let mut next = self.clone();
        let ret = match op {
            Op::Push(id, keys) => {
                let keys = crate::specs::keyed::unique(keys);
                if next.may_hold(&keys, next.waiting.len()) {
                    next.hold((*id, keys));
                } else {
                    next.waiting.push((*id, keys));
                }
                None
            }
            Op::PopReady => {
                let message = next.ready.pop_front();
                let id = message.as_ref().map(|(id, _)| *id);
                next.received.extend(message);
                id
            }
            Op::Release(id) => {
                let at = next.received.iter().position(|(m, _)| m == id)?;
                let (_, keys) = next.received.remove(at);
                for key in keys {
                    next.held.remove(&key);
                    let Some(head) = next.waiting.iter().position(|(_, k)| k.contains(&key))
                    else {
                        continue;
                    };
                    if next.may_hold(&next.waiting[head].1.clone(), head) {
                        let message = next.waiting.remove(head);
                        next.hold(message);
                    }
                }
                None
            }
        };
        Some((ret, next))
    }

    /// Keys held or carried by a waiting message (K-6).
    pub fn tracked_keys(&self) -> usize {
        let mut keys = self.held.clone();
        for (_, k) in &self.waiting {
            keys.extend(k.iter().copied());
        }
        keys.len()
    }
}
