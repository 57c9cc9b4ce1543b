//! The async flavour: senders and the receiver wait on
//! [`Notify`](crate::notify::Notify)s. A wait registers (`enable`) and
//! checks the channel again before it sleeps, so a wake-up between the
//! first check and the wait is never lost, and a cancelled wait passes a
//! wake-up it was chosen for on to the next waiter (`Notify`'s N-4).

use std::fmt;
use std::hash::Hash;
use std::pin::pin;

use super::core::dedup;
use super::error::{RecvError, SendError, TryRecvError, TrySendError};
use super::{Message, Shared, Wake};
use crate::notify::Notify;
use crate::sync::Arc;

/// A keyed channel for async tasks, holding at most `capacity` messages
/// sent and not yet received. See the [module documentation](super).
///
/// # Panics
/// If `capacity` is 0.
pub fn channel<K: Eq + Hash + Clone, V>(capacity: usize) -> (Sender<K, V>, Receiver<K, V>) {
    let shared = Shared::new(
        capacity,
        Wake::Async {
            ready: Notify::new(),
            space: Notify::new(),
        },
    );
    (
        Sender {
            shared: shared.clone(),
        },
        Receiver { shared },
    )
}

/// Sends keyed messages, waiting while the channel is full. `Clone`.
pub struct Sender<K: Eq + Hash + Clone, V> {
    shared: Arc<Shared<K, V>>,
}

/// Receives keyed messages, waiting while none is deliverable. There is
/// one; it may hand the [`Message`]s it receives to any number of tasks.
pub struct Receiver<K: Eq + Hash + Clone, V> {
    shared: Arc<Shared<K, V>>,
}

fn notifies<K, V>(shared: &Shared<K, V>) -> (&Notify, &Notify) {
    match &shared.wake {
        Wake::Async { ready, space } => (ready, space),
        Wake::Blocking { .. } => unreachable!("an async handle on a sync channel"),
    }
}

impl<K: Eq + Hash + Clone, V> Sender<K, V> {
    /// Sends `value` under `keys` (any iterable; duplicates count once, and
    /// no keys never conflict), waiting while the channel is full. Fails,
    /// giving the value back, if the receiver is gone. Cancelling it sends
    /// nothing and takes no capacity.
    pub async fn send(
        &self,
        keys: impl IntoIterator<Item = K>,
        value: V,
    ) -> Result<(), SendError<V>> {
        let (_, space) = notifies(&self.shared);
        let (mut keys, mut value) = (dedup(keys), value);
        loop {
            // Registered before the second attempt, so that a slot freed
            // after it is not missed; not before the first, which usually
            // succeeds.
            let mut freed = pin!(space.notified());
            for attempt in 0..2 {
                match self.shared.try_push(keys, value) {
                    Ok(()) => return Ok(()),
                    Err((_, value, true)) => return Err(SendError(value)),
                    Err((k, v, false)) => (keys, value) = (k, v),
                }
                if attempt == 0 {
                    freed.as_mut().enable();
                }
            }
            freed.await;
        }
    }

    /// Sends without waiting: `Full` if the channel holds `capacity`
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

impl<K: Eq + Hash + Clone, V> Receiver<K, V> {
    /// Receives the next deliverable message, waiting while there is none
    /// (nothing queued, or everything queued waits for a key). Fails only
    /// when every sender is gone and nothing is queued. Cancelling it
    /// receives nothing.
    pub async fn recv(&mut self) -> Result<Message<K, V>, RecvError> {
        let (ready, _) = notifies(&self.shared);
        loop {
            // As in `send`: registered before the second attempt only.
            let mut woken = pin!(ready.notified());
            for attempt in 0..2 {
                match Shared::try_pop(&self.shared) {
                    Ok(message) => return Ok(message),
                    Err(TryRecvError::Disconnected) => return Err(RecvError),
                    Err(TryRecvError::Empty | TryRecvError::Conflicted) => {}
                }
                if attempt == 0 {
                    woken.as_mut().enable();
                }
            }
            woken.await;
        }
    }

    /// Receives without waiting: `Empty` if nothing is queued,
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

impl<K: Eq + Hash + Clone, V> Clone for Sender<K, V> {
    fn clone(&self) -> Self {
        self.shared.add_sender();
        Sender {
            shared: self.shared.clone(),
        }
    }
}

impl<K: Eq + Hash + Clone, V> Drop for Sender<K, V> {
    fn drop(&mut self) {
        self.shared.drop_sender();
    }
}

impl<K: Eq + Hash + Clone, V> Drop for Receiver<K, V> {
    fn drop(&mut self) {
        self.shared.drop_receiver();
    }
}

impl<K: Eq + Hash + Clone, V> fmt::Debug for Sender<K, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sender").finish_non_exhaustive()
    }
}

impl<K: Eq + Hash + Clone, V> fmt::Debug for Receiver<K, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Receiver").finish_non_exhaustive()
    }
}
