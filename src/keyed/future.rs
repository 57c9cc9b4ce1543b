//! The async flavour: senders and the receiver wait on
//! [`Notify`](crate::notify::Notify)s. A wait registers (`enable`) and
//! checks the channel again before it sleeps, so a wake-up between the
//! first check and the wait is never lost, and a cancelled wait passes a
//! wake-up it was chosen for on to the next waiter (`Notify`'s N-4).

use std::fmt;
use std::hash::Hash;
use std::pin::pin;

use super::error::{RecvError, SendError, TryRecvError, TrySendError};
use super::{Exclusive, Inbox, Message, SendInFlight, Shared, Wake};
use crate::park::Parker;
use crate::sync::Arc;

/// A keyed channel for async tasks, holding at most `capacity` messages
/// sent and not yet received. See the [module documentation](super).
///
/// # Panics
/// If `capacity` is 0.
pub fn channel<K: Eq + Hash + Clone, V>(capacity: usize) -> (Sender<K, V>, Receiver<K, V>) {
    let (shared, reader) = Shared::new(capacity, Wake::asynchronous());
    (
        Sender {
            shared: shared.clone(),
        },
        Receiver {
            inbox: Exclusive(Inbox::new(shared, reader)),
            streak: 0,
        },
    )
}

/// Sends keyed messages, waiting while the channel is full. `Clone`.
pub struct Sender<K: Eq + Hash + Clone, V> {
    shared: Arc<Shared<K, V>>,
}

/// Receives keyed messages, waiting while none is deliverable. There is
/// one; it may hand the [`Message`]s it receives to any number of tasks.
pub struct Receiver<K: Eq + Hash + Clone, V> {
    inbox: Exclusive<Inbox<K, V>>,
    /// `recv`s completed in a row without waiting (see `RECV_BUDGET`).
    streak: u32,
}

/// How many `recv`s complete in a row without waiting before one yields to
/// the executor first. A receiver that always finds a message never
/// returns `Pending`, so senders it wakes for the slots it frees could
/// not run on its thread: on a full channel every message would cost a
/// sender's wake-up on another thread (measured: 6x the time of the
/// benchmark's run, BENCHMARKS.md). tokio's own channels yield the same
/// way (its cooperative budget is 128 operations).
const RECV_BUDGET: u32 = 128;

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
        let keys = self.shared.key_set(keys);
        if self.shared.wake.take_room(&self.shared.room).await.is_err() {
            return Err(SendError(value));
        }
        self.shared.push(keys, value);
        Ok(())
    }

    /// Sends without waiting: `Full` if the channel holds `capacity`
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

impl<K: Eq + Hash + Clone, V> Receiver<K, V> {
    /// Receives the next deliverable message, waiting while there is none
    /// (nothing queued, or everything queued waits for a key). Fails only
    /// when every sender is gone and nothing is queued. Cancelling it
    /// receives nothing.
    pub async fn recv(&mut self) -> Result<Message<K, V>, RecvError> {
        if self.streak >= RECV_BUDGET {
            self.streak = 0;
            crate::runtime::yield_now().await;
        }
        let (received, waited) = Wake::recv(self.inbox.get_mut()).await;
        if waited {
            self.streak = 0;
        }
        let message = received.ok_or(RecvError)?;
        self.streak += 1;
        Ok(message)
    }

    /// Receives without waiting: `Empty` if nothing is queued,
    /// `Conflicted` if everything queued waits for a key, `Disconnected`
    /// if every sender is gone and nothing is queued.
    ///
    /// Exact: `Empty` or `Conflicted` only if no message whose send
    /// returned before this call began (or that another sender's `Full`
    /// counted) could be received. A send in progress that this answer
    /// depends on is waited for, parking this thread until its writer
    /// wakes the receiver, as tokio's mpsc `try_recv` does (a task's send
    /// does not suspend between taking room and writing, so this waits
    /// only for a thread preempted there).
    pub fn try_recv(&mut self) -> Result<Message<K, V>, TryRecvError> {
        let inbox = self.inbox.get_mut();
        loop {
            match inbox.try_recv_exact() {
                Ok(answer) => return answer,
                Err(SendInFlight) => {
                    // After the announcement, the writer of the next place
                    // (or a release) notifies; a notification before the
                    // wait is kept as the `Notify`'s permit.
                    if !inbox.announce_waiting() {
                        continue;
                    }
                    wait_on_this_thread(pin!(inbox.shared.wake.ready().notified()));
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
        self.inbox.get_mut().internals(None)
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

/// Polls `future` to completion on this thread, parking it in between.
/// A fresh parker each time: this runs only while a send is in progress,
/// and a parker shared with `block_on` would make a `try_recv` inside
/// `block_on` look like a nested `block_on`.
fn wait_on_this_thread<F: std::future::Future<Output = ()>>(future: std::pin::Pin<&mut F>) {
    let parker = Parker::new();
    crate::block_on::poll_parked(future, &parker, &crate::block_on::unparking_waker(&parker));
}
