//! The blocking flavour: senders and the receiver wait on condition
//! variables of the channel's lock.

use std::fmt;
use std::hash::Hash;
use std::time::{Duration, Instant};

use super::core::dedup;
use super::error::{RecvError, RecvTimeoutError, SendError, TryRecvError, TrySendError};
use super::{Message, Shared, Wake};
use crate::sync::{thread, Arc, Condvar};

/// How often a blocked `send` yields its thread and looks again before it
/// sleeps on the condition variable. A full channel usually gains a slot
/// within a few time slices of the receiver; sleeping and being signalled
/// costs two system calls and a context switch per message. (Measured on
/// the keyed benchmark's full channel: see BENCHMARKS.md.) One under the
/// models, so the path is explored without multiplying the schedules.
const YIELDS_BEFORE_SLEEP: u32 = if cfg!(any(loom, shuttle)) { 1 } else { 128 };

/// A keyed channel for threads, holding at most `capacity` messages sent
/// and not yet received. See the [module documentation](super).
///
/// # Panics
/// If `capacity` is 0.
pub fn sync_channel<K: Eq + Hash + Clone, V>(
    capacity: usize,
) -> (SyncSender<K, V>, SyncReceiver<K, V>) {
    let shared = Shared::new(
        capacity,
        Wake::Blocking {
            ready: Condvar::new(),
            space: Condvar::new(),
        },
    );
    (
        SyncSender {
            shared: shared.clone(),
        },
        SyncReceiver { shared },
    )
}

/// Sends keyed messages, blocking while the channel is full. `Clone`.
pub struct SyncSender<K: Eq + Hash + Clone, V> {
    shared: Arc<Shared<K, V>>,
}

/// Receives keyed messages, blocking while none is deliverable. There is
/// one; it may hand the [`Message`]s it receives to any number of threads.
pub struct SyncReceiver<K: Eq + Hash + Clone, V> {
    shared: Arc<Shared<K, V>>,
}

fn condvars<K, V>(shared: &Shared<K, V>) -> (&Condvar, &Condvar) {
    match &shared.wake {
        Wake::Blocking { ready, space } => (ready, space),
        Wake::Async { .. } => unreachable!("a sync handle on an async channel"),
    }
}

impl<K: Eq + Hash + Clone, V> SyncSender<K, V> {
    /// Sends `value` under `keys` (any iterable; duplicates count once, and
    /// no keys never conflict), blocking while the channel is full. Fails,
    /// giving the value back, if the receiver is gone.
    pub fn send(&self, keys: impl IntoIterator<Item = K>, value: V) -> Result<(), SendError<V>> {
        let keys = dedup(keys);
        let (_, space) = condvars(&self.shared);
        let mut state = self.shared.state.lock();
        let mut yields = 0;
        loop {
            if !state.receiver_alive {
                return Err(SendError(value));
            }
            if state.core.len() < state.capacity {
                self.shared.push_and_wake(state, keys, value);
                return Ok(());
            }
            if yields < YIELDS_BEFORE_SLEEP {
                yields += 1;
                drop(state);
                thread::yield_now();
                state = self.shared.state.lock();
                continue;
            }
            state.senders_sleeping += 1;
            state = space.wait(state);
            state.senders_sleeping -= 1;
        }
    }

    /// Sends without blocking: `Full` if the channel holds `capacity`
    /// messages not yet received, `Disconnected` if the receiver is gone;
    /// either gives the value back.
    pub fn try_send(
        &self,
        keys: impl IntoIterator<Item = K>,
        value: V,
    ) -> Result<(), TrySendError<V>> {
        self.shared.try_send(dedup(keys), value)
    }
}

impl<K: Eq + Hash + Clone, V> SyncReceiver<K, V> {
    /// Receives the next deliverable message, blocking while there is none
    /// (nothing queued, or everything queued waits for a key). Fails only
    /// when every sender is gone and nothing is queued.
    pub fn recv(&mut self) -> Result<Message<K, V>, RecvError> {
        self.recv_until(None).map_err(|_| RecvError)
    }

    /// As [`recv`](Self::recv), for at most `timeout`.
    pub fn recv_timeout(&mut self, timeout: Duration) -> Result<Message<K, V>, RecvTimeoutError> {
        // A timeout too large for `Instant` is no timeout.
        self.recv_until(Instant::now().checked_add(timeout))
    }

    fn recv_until(&mut self, deadline: Option<Instant>) -> Result<Message<K, V>, RecvTimeoutError> {
        let (ready, _) = condvars(&self.shared);
        let mut state = self.shared.state.lock();
        loop {
            state = match Shared::pop(&self.shared, state) {
                Ok(message) => return Ok(message),
                Err(state) => state,
            };
            if state.why_empty() == TryRecvError::Disconnected {
                return Err(RecvTimeoutError::Disconnected);
            }
            state.receiver_sleeping = true;
            state = match deadline {
                None => ready.wait(state),
                Some(deadline) => {
                    let now = Instant::now();
                    if now >= deadline {
                        state.receiver_sleeping = false;
                        return Err(RecvTimeoutError::Timeout);
                    }
                    ready.wait_timeout(state, deadline - now).0
                }
            };
            state.receiver_sleeping = false;
        }
    }

    /// Receives without blocking: `Empty` if nothing is queued,
    /// `Conflicted` if everything queued waits for a key, `Disconnected`
    /// if every sender is gone and nothing is queued.
    pub fn try_recv(&mut self) -> Result<Message<K, V>, TryRecvError> {
        Shared::try_pop(&self.shared)
    }

    /// Keys the channel keeps bookkeeping for (held or waited for). A
    /// diagnostic for tests: 0 whenever nothing is queued or held.
    #[doc(hidden)]
    pub fn tracked_keys(&self) -> usize {
        self.shared.tracked_keys()
    }
}

impl<K: Eq + Hash + Clone, V> Clone for SyncSender<K, V> {
    fn clone(&self) -> Self {
        self.shared.add_sender();
        SyncSender {
            shared: self.shared.clone(),
        }
    }
}

impl<K: Eq + Hash + Clone, V> Drop for SyncSender<K, V> {
    fn drop(&mut self) {
        self.shared.drop_sender();
    }
}

impl<K: Eq + Hash + Clone, V> Drop for SyncReceiver<K, V> {
    fn drop(&mut self) {
        self.shared.drop_receiver();
    }
}

impl<K: Eq + Hash + Clone, V> fmt::Debug for SyncSender<K, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SyncSender").finish_non_exhaustive()
    }
}

impl<K: Eq + Hash + Clone, V> fmt::Debug for SyncReceiver<K, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SyncReceiver").finish_non_exhaustive()
    }
}
