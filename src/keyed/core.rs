//! The keyed channel's bookkeeping, single-threaded (the receiver owns
//! it): which messages are queued, which keys are held, and which message
//! waits for which key.
//!
//! # Rules
//!
//! - A key is *held* from the moment a message carrying it becomes ready
//!   (not when it is received) until that message is dropped. Reserving at
//!   promotion is what keeps two live messages from sharing a key (K-1):
//!   a later message on the key finds it held and waits.
//! - A message that cannot be ready at once joins the waiting queue of
//!   *every* one of its keys, so that it keeps later messages on each of
//!   them behind it even while some of its keys are free (K-2).
//! - `blocked` counts the keys of a waiting message where it is not yet
//!   at the head of a free key. Only a release of a key can lower it (the
//!   key's head becomes head of a free key), so a release costs the
//!   released message's keys plus the keys of the messages it promotes
//!   (K-6), and no scan of the queue is ever needed.
//! - A key's entry exists exactly while it is held or waited for (K-6).

use std::collections::{HashMap, VecDeque};
use std::hash::Hash;

/// What the core queues: anything that knows its (deduplicated) keys.
pub(crate) trait Keyed<K> {
    fn keys(&self) -> &[K];
}

/// A queued (sent, not yet received) message.
struct Queued<M> {
    message: M,
    /// Keys where this message is not the head of a free key's queue;
    /// 0 once it is ready.
    blocked: usize,
}

#[derive(Default)]
struct KeyState {
    held: bool,
    /// Queued messages waiting for this key, oldest first.
    waiting: VecDeque<usize>,
}

/// Queued messages in a slab, addressed by index; freed slots are reused.
struct Slab<T> {
    slots: Vec<Option<T>>,
    free: Vec<usize>,
    len: usize,
}

impl<T> Slab<T> {
    fn new() -> Self {
        Slab {
            slots: Vec::new(),
            free: Vec::new(),
            len: 0,
        }
    }

    fn insert(&mut self, value: T) -> usize {
        self.len += 1;
        match self.free.pop() {
            Some(index) => {
                self.slots[index] = Some(value);
                index
            }
            None => {
                self.slots.push(Some(value));
                self.slots.len() - 1
            }
        }
    }

    fn remove(&mut self, index: usize) -> T {
        let value = self.slots[index].take().expect("a queued message");
        self.free.push(index);
        self.len -= 1;
        value
    }

    fn get_mut(&mut self, index: usize) -> &mut T {
        self.slots[index].as_mut().expect("a queued message")
    }
}

/// The channel's bookkeeping. See the module documentation for its rules.
pub(crate) struct Core<K, M> {
    queued: Slab<Queued<M>>,
    /// Messages ready to be received, in the order they became ready.
    ready: VecDeque<usize>,
    keys: HashMap<K, KeyState>,
}

/// A message's keys, without repeats, in first-seen order (K-8). One key,
/// the common case, is kept inline: no allocation.
pub(crate) enum KeySet<K> {
    One(K),
    Many(Box<[K]>),
}

impl<K> KeySet<K> {
    pub(crate) fn as_slice(&self) -> &[K] {
        match self {
            KeySet::One(key) => std::slice::from_ref(key),
            KeySet::Many(keys) => keys,
        }
    }
}

/// `keys` without repeats, in first-seen order (K-8).
pub(crate) fn dedup<K: Eq>(keys: impl IntoIterator<Item = K>) -> KeySet<K> {
    let mut keys = keys.into_iter();
    let Some(first) = keys.next() else {
        return KeySet::Many(Box::new([])); // no allocation
    };
    let Some(second) = keys.next() else {
        return KeySet::One(first);
    };
    let mut unique = Vec::with_capacity(2 + keys.size_hint().0);
    unique.push(first);
    for key in std::iter::once(second).chain(keys) {
        if !unique.contains(&key) {
            unique.push(key);
        }
    }
    if unique.len() == 1 {
        return KeySet::One(unique.pop().expect("one key"));
    }
    KeySet::Many(unique.into_boxed_slice())
}

impl<K: Eq + Hash + Clone, M: Keyed<K>> Core<K, M> {
    pub(crate) fn new() -> Self {
        Core {
            queued: Slab::new(),
            ready: VecDeque::new(),
            keys: HashMap::new(),
        }
    }

    /// Messages sent and not yet received.
    pub(crate) fn len(&self) -> usize {
        self.queued.len
    }

    /// Whether a message is ready to be received.
    pub(crate) fn has_ready(&self) -> bool {
        !self.ready.is_empty()
    }

    /// Keys with an entry: held or waited for. A diagnostic (K-6).
    pub(crate) fn tracked_keys(&self) -> usize {
        self.keys.len()
    }

    /// Queues a message; returns whether it is ready at once.
    pub(crate) fn push(&mut self, message: M) -> bool {
        // One lookup per key when the message is ready at once (the common
        // case): a free key is reserved on sight, a taken one waited on.
        // Only if some key was taken are the reserved ones turned into
        // waits, so that the message waits on every key (K-2).
        let index = self.queued.insert(Queued {
            message,
            blocked: 0,
        });
        let queued = self.queued.get_mut(index);
        let mut reserved = 0;
        for key in queued.message.keys() {
            let state = self.keys.entry(key.clone()).or_default();
            if state.held || !state.waiting.is_empty() {
                state.waiting.push_back(index);
                queued.blocked += 1;
            } else {
                state.held = true; // reserved (K-1)
                reserved += 1;
            }
        }
        if queued.blocked == 0 {
            self.ready.push_back(index);
            return true;
        }
        if reserved > 0 {
            for key in queued.message.keys() {
                let state = self.keys.get_mut(key).expect("entered above");
                if state.held && state.waiting.is_empty() {
                    // Reserved above: free, and this message heads its queue.
                    state.held = false;
                    state.waiting.push_back(index);
                }
            }
        }
        false
    }

    /// Removes the oldest ready message, whose keys stay held until the
    /// caller releases them.
    pub(crate) fn pop_ready(&mut self) -> Option<M> {
        let index = self.ready.pop_front()?;
        Some(self.queued.remove(index).message)
    }

    /// Releases the keys a received message held; returns how many waiting
    /// messages became ready.
    pub(crate) fn release(&mut self, keys: &[K]) -> usize {
        let mut promoted = 0;
        for key in keys {
            // Removed at once (one lookup): with nobody waiting the key is
            // done (K-6); otherwise it goes back, free, for its waiters.
            let Some((key, mut state)) = self.keys.remove_entry(key) else {
                continue;
            };
            debug_assert!(state.held, "released a key nobody held");
            let Some(&head) = state.waiting.front() else {
                continue;
            };
            state.held = false;
            self.keys.insert(key, state);
            let head_message = self.queued.get_mut(head);
            head_message.blocked -= 1;
            if head_message.blocked == 0 {
                self.promote(head);
                promoted += 1;
            }
        }
        promoted
    }

    /// Makes the waiting message `index`, at the head of every one of its
    /// keys' queues with every key free, ready: it takes its keys.
    fn promote(&mut self, index: usize) {
        let queued = self.queued.slots[index].as_ref().expect("a queued message");
        for key in queued.message.keys() {
            let state = self.keys.get_mut(key).expect("a waiting message's key");
            let head = state.waiting.pop_front();
            debug_assert_eq!(head, Some(index), "promoted a message not at the head");
            debug_assert!(!state.held, "promoted onto a held key");
            state.held = true; // reserved before it is received (K-1)
        }
        self.ready.push_back(index);
    }

    /// Empties the core (its receiver is gone): returns every queued
    /// message and forgets every key.
    pub(crate) fn clear(&mut self) -> Vec<M> {
        self.ready.clear();
        self.keys.clear();
        let messages = self
            .queued
            .slots
            .drain(..)
            .flatten()
            .map(|q| q.message)
            .collect();
        self.queued = Slab::new();
        messages
    }
}
