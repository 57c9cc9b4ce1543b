//! The blocking flavour: the receiver waits on a `Parker`, senders on a
//! condition variable.

use std::fmt;
use std::hash::Hash;
use std::time::{Duration, Instant};

use super::error::{RecvError, RecvTimeoutError, SendError, TryRecvError, TrySendError};
use super::{Exclusive, Inbox, Message, SendInFlight, Shared, Wake};
use crate::park::Parker;
use crate::sync::Arc;

/// A keyed channel for threads, holding at most `capacity` messages sent
/// and not yet received. See the [module documentation](super).
///
/// # Panics
/// If `capacity` is 0.
pub fn sync_channel<K: Eq + Hash + Clone, V>(
    capacity: usize,
) -> (SyncSender<K, V>, SyncReceiver<K, V>) {
    let parker = Parker::new();
    let (shared, reader) = Shared::new(capacity, Wake::blocking(parker.unparker().clone()));
    (
        SyncSender {
            shared: shared.clone(),
        },
        SyncReceiver {
            inbox: Exclusive(Inbox::new(shared, reader)),
            parker: Exclusive(parker),
        },
    )
}

/// Sends keyed messages, blocking while the channel is full. `Clone`.
pub struct SyncSender<K: Eq + Hash + Clone, V> {
    shared: Arc<Shared<K, V>>,
}

/// Receives keyed messages, blocking while none is deliverable. There is
/// one; it may hand the [`Message`]s it receives to any number of threads.
pub struct SyncReceiver<K: Eq + Hash + Clone, V> {
    inbox: Exclusive<Inbox<K, V>>,
    parker: Exclusive<Parker>,
}

impl<K: Eq + Hash + Clone, V> SyncSender<K, V> {
    /// Sends `value` under `keys` (any iterable; duplicates count once, and
    /// no keys never conflict), blocking while the channel is full. Fails,
    /// giving the value back, if the receiver is gone.
    pub fn send(&self, keys: impl IntoIterator<Item = K>, value: V) -> Result<(), SendError<V>> {
        let keys = self.shared.key_set(keys);
        if self
            .shared
            .wake
            .take_room_blocking(&self.shared.room)
            .is_err()
        {
            return Err(SendError(value));
        }
        self.shared.push(keys, value);
        Ok(())
    }

    /// Sends without blocking: `Full` if the channel holds `capacity`
    /// messages not yet received, `Disconnected` if the receiver is gone;
    /// either gives the value back.
    pub fn try_send(
        &self,
        keys: impl IntoIterator<Item = K>,
        value: V,
    ) -> Result<(), TrySendError<V>> {
        self.shared.try_send(self.shared.key_set(keys), value)
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
        Wake::recv_blocking(self.inbox.get_mut(), self.parker.get_mut(), deadline)
    }

    /// Receives without blocking: `Empty` if nothing is queued,
    /// `Conflicted` if everything queued waits for a key, `Disconnected`
    /// if every sender is gone and nothing is queued.
    ///
    /// Exact: `Empty` or `Conflicted` only if no message whose send
    /// returned before this call began (or that another sender's `Full`
    /// counted) could be received. A send in progress that this answer
    /// depends on is waited for (parked, until its writer wakes the
    /// receiver), as tokio's mpsc `try_recv` waits.
    pub fn try_recv(&mut self) -> Result<Message<K, V>, TryRecvError> {
        loop {
            match self.inbox.get_mut().try_recv_exact() {
                Ok(answer) => return answer,
                // After the announcement, the writer of the next place
                // (or a release) unparks; a stale permit only looks again.
                Err(SendInFlight) => {
                    if self.inbox.get_mut().announce_waiting() {
                        self.parker.get_mut().park();
                    }
                }
            }
        }
    }

    /// Keys the channel keeps bookkeeping for (held or waited for), after
    /// taking in every release so far. A diagnostic for tests: 0 whenever
    /// nothing is queued or held.
    #[doc(hidden)]
    pub fn tracked_keys(&mut self) -> usize {
        self.inbox.get_mut().tracked_keys()
    }

    /// Places in the key table's array (in use or free). A diagnostic for
    /// tests: 64 until more than 32 keys are tracked at once.
    #[doc(hidden)]
    pub fn key_table_places(&mut self) -> usize {
        self.inbox.get_mut().key_places()
    }

    /// The channel's situation, changing nothing: a diagnostic for the
    /// models' regimes (`ChannelInternals`).
    #[doc(hidden)]
    pub fn internals(&mut self) -> super::ChannelInternals {
        let parker = &*self.parker.get_mut();
        self.inbox.get_mut().internals(Some(parker))
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
