//! A bounded channel whose messages carry keys: a received message holds
//! its keys until it is dropped, and a message that shares a key with a
//! live one waits, so that no two live messages ever share a key.
//!
//! It lets a single receiver hand messages to any number of workers while
//! everything about one key (an account, a file, a connection) is
//! processed one message at a time and in the order it was sent. It comes
//! in two flavours with one [`Message`] type: [`sync_channel`] (blocking
//! threads) and [`channel`] (async tasks, which wait on
//! [`Notify`](crate::notify::Notify)).
//!
//! ```
//! # if modelsync::sync::BACKEND != "std" { return; }
//! use modelsync::keyed::{error::TryRecvError, sync_channel};
//!
//! let (tx, mut rx) = sync_channel::<&str, u32>(8);
//! tx.send(["alice"], 1).unwrap();
//! tx.send(["alice", "bob"], 2).unwrap(); // waits for `alice`
//! tx.send(["carol"], 3).unwrap(); // unrelated: not delayed
//! let first = rx.recv().unwrap();
//! assert_eq!((first.keys(), *first.value()), (&["alice"][..], 1));
//! assert_eq!(*rx.recv().unwrap().value(), 3);
//! assert_eq!(rx.try_recv().unwrap_err(), TryRecvError::Conflicted);
//! drop(first); // releases `alice`
//! assert_eq!(*rx.recv().unwrap().value(), 2);
//! ```
//!
//! # Synchronization
//!
//! What a user may rely on (the IDs are VERIFICATION.md's):
//!
//! - **Exclusion**: at no moment do two live [`Message`]s share a key (K-1).
//!   A message holds its keys from the moment it could be received until it
//!   is dropped (or [`into_value`](Message::into_value)).
//! - **Per-key FIFO**: messages sharing a key are received in the order
//!   they entered the channel, multi-key messages included: a message
//!   waiting for keys A and B keeps later A-messages and later B-messages
//!   behind it, and releasing A alone lets neither through (K-2).
//! - **Progress**: `recv` waits only while nothing is deliverable; waiting
//!   on one key never delays messages on unrelated keys (K-3).
//! - **A message carries its writes**: everything a sender did before
//!   `send` happens-before the receiver obtains the message, and
//!   everything done before dropping a message happens-before the next
//!   message on any of its keys is received (K-9).
//! - **Nothing lost or doubled**: every value sent is received exactly once
//!   or handed back in an error; dropping the receiver drops every queued
//!   value exactly once and later sends fail with their value; a `Message`
//!   may outlive every handle of its channel (K-4). Cancelling an async
//!   `send` or `recv` loses no message and leaks no capacity.
//! - **No value code under the lock**: a value's `Drop` and wakers never
//!   run under the channel's lock (K-5). Keys' `Hash`, `Eq`, `Clone` and
//!   `Drop` do (the key table needs them), so they must not call back into
//!   the channel.
//! - **Cost**: a send, a receive and a release each cost O(keys of the
//!   message) expected (a release also pays for the messages it makes
//!   ready), never a scan of the queue; memory is O(queued messages + held
//!   keys): a key's bookkeeping is freed when nothing holds or waits for it
//!   (K-6).
//!
//! Not promised: any order between messages with no key in common, beyond
//! "ready first, received first"; fairness among senders blocked on a full
//! channel (sync senders wake in the condition variable's order).
//!
//! A blocked sync `send` yields its thread up to 128 times, looking for a
//! free slot each time, before it sleeps: on a full channel a slot usually
//! frees within a few time slices, and sleeping costs a context switch per
//! message. A sync `recv` sleeps at once. Async waits never spin.
//!
//! `capacity` bounds the messages sent and not yet received; received
//! messages that still hold their keys do not count. A capacity of 0
//! panics.

mod blocking;
mod core;
pub mod error;
mod future;

use std::fmt;
use std::hash::Hash;

use self::core::Core;
use crate::notify::Notify;
use crate::sync::{Arc, Condvar, Mutex, MutexGuard};

pub use blocking::{sync_channel, SyncReceiver, SyncSender};
pub use future::{channel, Receiver, Sender};

/// What both flavours share: the bookkeeping under one lock, and how the
/// waiting sides are woken.
struct Shared<K, V> {
    state: Mutex<State<K, V>>,
    wake: Wake,
}

struct State<K, V> {
    core: Core<K, V>,
    capacity: usize,
    senders: usize,
    receiver_alive: bool,
    /// The blocking flavour's sleepers, counted under the lock so that a
    /// condition variable is signalled only when somebody waits on it
    /// (signalling is a system call). The async flavour leaves both at
    /// zero: a `Notify` with nobody registered stores a permit with one
    /// atomic operation, and its waiters may be cancelled at any time.
    receiver_sleeping: bool,
    senders_sleeping: usize,
}

/// How a flavour's waiters wait: the sync one on condition variables, the
/// async one on `Notify`s. Each method is called after the lock is
/// released (K-5), with what the caller saw under it.
// One per channel, inside its `Arc`: boxing the larger variant (loom's
// `Notify` is) would only add an indirection to every wake.
#[allow(clippy::large_enum_variant)]
enum Wake {
    Blocking {
        /// A message became ready, or the last sender left.
        ready: Condvar,
        /// A slot was freed, or the receiver left.
        space: Condvar,
    },
    Async {
        ready: Notify,
        space: Notify,
    },
}

impl Wake {
    /// A message became ready, or the last sender left.
    fn receiver(&self, receiver_sleeping: bool) {
        match self {
            Wake::Blocking { ready, .. } if receiver_sleeping => ready.notify_one(),
            Wake::Blocking { .. } => {}
            Wake::Async { ready, .. } => ready.notify_one(),
        }
    }

    /// A slot was freed.
    fn one_sender(&self, senders_sleeping: usize) {
        match self {
            Wake::Blocking { space, .. } if senders_sleeping > 0 => space.notify_one(),
            Wake::Blocking { .. } => {}
            Wake::Async { space, .. } => space.notify_one(),
        }
    }

    /// The receiver left.
    fn all_senders(&self) {
        match self {
            Wake::Blocking { space, .. } => space.notify_all(),
            Wake::Async { space, .. } => space.notify_waiters(),
        }
    }
}

impl<K: Eq + Hash + Clone, V> State<K, V> {
    /// Why nothing could be received just now.
    fn why_empty(&self) -> error::TryRecvError {
        if self.core.len() > 0 {
            error::TryRecvError::Conflicted
        } else if self.senders == 0 {
            error::TryRecvError::Disconnected
        } else {
            error::TryRecvError::Empty
        }
    }
}

impl<K: Eq + Hash + Clone, V> Shared<K, V> {
    fn new(capacity: usize, wake: Wake) -> Arc<Self> {
        assert!(
            capacity > 0,
            "a keyed channel needs a capacity of at least 1, got 0"
        );
        Arc::new(Shared {
            state: Mutex::new(State {
                core: Core::new(),
                capacity,
                senders: 1,
                receiver_alive: true,
                receiver_sleeping: false,
                senders_sleeping: 0,
            }),
            wake,
        })
    }

    /// Queues `value` if there is room; gives it back otherwise, with
    /// whether the receiver is gone.
    fn try_push(&self, keys: Box<[K]>, value: V) -> Result<(), (Box<[K]>, V, bool)> {
        let state = self.state.lock();
        if !state.receiver_alive {
            return Err((keys, value, true));
        }
        if state.core.len() >= state.capacity {
            return Err((keys, value, false));
        }
        self.push_and_wake(state, keys, value);
        Ok(())
    }

    /// Both flavours' `try_send`.
    fn try_send(&self, keys: Box<[K]>, value: V) -> Result<(), error::TrySendError<V>> {
        self.try_push(keys, value).map_err(|(_, value, gone)| {
            if gone {
                error::TrySendError::Disconnected(value)
            } else {
                error::TrySendError::Full(value)
            }
        })
    }

    /// Queues a message into a channel known to have room, releases the
    /// lock and wakes the receiver if the message is ready.
    fn push_and_wake(&self, mut state: MutexGuard<'_, State<K, V>>, keys: Box<[K]>, value: V) {
        let ready = state.core.push(keys, value);
        let receiver_sleeping = state.receiver_sleeping;
        drop(state);
        if ready {
            self.wake.receiver(receiver_sleeping);
        }
    }

    /// Pops the oldest ready message, if any, releases the lock, wakes a
    /// sender for the freed slot and hands the message out; gives the
    /// lock back if there is none. (Associated functions, not methods:
    /// loom's `Arc` cannot be a receiver.)
    fn pop<'a>(
        this: &'a Arc<Self>,
        mut state: MutexGuard<'a, State<K, V>>,
    ) -> Result<Message<K, V>, MutexGuard<'a, State<K, V>>> {
        let Some((keys, value)) = state.core.pop_ready() else {
            return Err(state);
        };
        let senders_sleeping = state.senders_sleeping;
        drop(state);
        this.wake.one_sender(senders_sleeping);
        Ok(Message {
            keys,
            value: Some(value),
            shared: this.clone(),
        })
    }

    /// Takes a ready message, if any; otherwise says why not.
    fn try_pop(this: &Arc<Self>) -> Result<Message<K, V>, error::TryRecvError> {
        Self::pop(this, this.state.lock()).map_err(|state| state.why_empty())
    }

    fn add_sender(&self) {
        self.state.lock().senders += 1;
    }

    fn drop_sender(&self) {
        let mut state = self.state.lock();
        state.senders -= 1;
        let last = state.senders == 0;
        let receiver_sleeping = state.receiver_sleeping;
        drop(state);
        if last {
            self.wake.receiver(receiver_sleeping); // a waiting `recv` may be done
        }
    }

    fn drop_receiver(&self) {
        let mut state = self.state.lock();
        state.receiver_alive = false;
        let queued = state.core.clear();
        drop(state);
        self.wake.all_senders();
        drop(queued); // values' `Drop` outside the lock (K-5)
    }

    fn tracked_keys(&self) -> usize {
        self.state.lock().core.tracked_keys()
    }
}

/// A received message: its keys, held until it is dropped, and its value.
///
/// `Send` when the keys and the value are. Dropping it (or taking its value
/// with [`into_value`](Self::into_value)) releases its keys and wakes a
/// receiver waiting for them. It may outlive every handle of its channel.
pub struct Message<K: Eq + Hash + Clone, V> {
    keys: Box<[K]>,
    /// `None` only inside `into_value`.
    value: Option<V>,
    shared: Arc<Shared<K, V>>,
}

impl<K: Eq + Hash + Clone, V> Message<K, V> {
    /// The value.
    pub fn value(&self) -> &V {
        self.value
            .as_ref()
            .expect("a message holds its value until into_value")
    }

    /// The value, mutably.
    pub fn value_mut(&mut self) -> &mut V {
        self.value
            .as_mut()
            .expect("a message holds its value until into_value")
    }

    /// The keys the message holds: deduplicated, in first-seen order.
    pub fn keys(&self) -> &[K] {
        &self.keys
    }

    /// Takes the value, releasing the keys.
    pub fn into_value(mut self) -> V {
        self.value
            .take()
            .expect("a message holds its value until into_value")
    }
}

impl<K: Eq + Hash + Clone, V> Drop for Message<K, V> {
    fn drop(&mut self) {
        let mut state = self.shared.state.lock();
        let promoted = state.core.release(&self.keys);
        let receiver_sleeping = state.receiver_sleeping;
        drop(state);
        if promoted > 0 {
            self.shared.wake.receiver(receiver_sleeping);
        }
        // The value (if still here) and the keys drop after this, outside
        // the lock (K-5).
    }
}

impl<K: Eq + Hash + Clone + fmt::Debug, V: fmt::Debug> fmt::Debug for Message<K, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Message")
            .field("keys", &self.keys)
            .field("value", &self.value)
            .finish()
    }
}
