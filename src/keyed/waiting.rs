//! The waiting of the two flavours: a sender waiting for room, the
//! receiver waiting for something to receive, and the wake-ups that end
//! those waits. The one component of the channel that sleeps; the room
//! (`room.rs`) and the receiver's side (`Inbox`, over the slot list and
//! the release stack) only answer "wait" or "wake", and this acts on the
//! answers.
//!
//! # The two flavours
//!
//! - **Sync**: the receiver parks on its `Parker`; senders sleep on a
//!   condition variable. A sender counts itself asleep in the room in the
//!   same step that finds the channel full (`Room::try_take(true)`), while
//!   holding the condition variable's lock until it waits; the receive
//!   that frees room with a sleeper counted signals under that lock, so
//!   the signal cannot fall between the count and the wait.
//! - **Async**: both sides wait on a `Notify`. A sender registers
//!   (`Notified::enable`) before it counts itself asleep, so the receive's
//!   `notify_one` reaches it or a later registrant (who passes it on when
//!   cancelled: `Notify`'s N-4). The receiver announces before it waits;
//!   a notification that comes first is kept as the `Notify`'s permit.
//!
//! # Specification and contract
//!
//! As a component (`specs/waiting.rs`, checked by the `keyed::waiting_*`
//! models over the real room and slot list: [`WaitingChannel`]): with
//! those two it is a bounded first-in first-out channel whose `send`
//! waits while `capacity` values are sent and not received and returns
//! `Err` once the receiver closed, and whose `recv` waits while nothing
//! is there. No wake-up is lost: a blocked operation the specification
//! lets return is never left asleep (sync: loom reports the deadlock;
//! async: the scenario harness's give-up check).
//!
//! What it assumes of its neighbours: the room answers `Full` only with
//! the sleeper counted when asked to, and `free` answers "wake" whenever a
//! sleeper is counted (`room.rs`); the receiver's side answers
//! "waits" (`announce_waiting` true) only when whoever makes something
//! receivable afterwards will call [`Wake::receiver`] (slot list, release
//! stack, last sender); a sender counted asleep uncounts itself once
//! after it wakes, which the loops below do.

use std::time::Instant;

use super::core::KeySet;
use super::error::{RecvTimeoutError, TryRecvError};
use super::room::{Refused, Room};
use super::slots::{Reader, Slots};
use crate::notify::Notify;
use crate::park::{Parker, Unparker};
use crate::sync::{thread, Condvar, Mutex};

/// How often a blocked sync `send` yields its thread and looks again before
/// it sleeps on the condition variable. A full channel usually gains a
/// slot within a few time slices of the receiver; sleeping and being
/// signalled costs two system calls and a context switch per message.
/// (Measured on the keyed benchmark's full channel: see BENCHMARKS.md.)
/// One under the models, so the path is explored without multiplying the
/// schedules.
const YIELDS_BEFORE_SLEEP: u32 = if cfg!(any(loom, shuttle)) { 1 } else { 128 };

/// The receiver is gone: a send takes no room.
pub(super) struct Closed;

/// How a flavour's waiters wait: the sync receiver on a `Parker`, sync
/// senders on a condition variable, the async ones on `Notify`s.
// One per channel, inside its `Arc`: boxing the larger variant (loom's
// `Notify` is) would only add an indirection to every wake.
#[allow(clippy::large_enum_variant)]
pub(super) enum Wake {
    Blocking {
        receiver: Unparker,
        /// Guards nothing but the condition variable's sleep.
        space_lock: Mutex<()>,
        space: Condvar,
    },
    Async {
        ready: Notify,
        space: Notify,
    },
}

/// What the receiver's waiting needs of its side of the channel.
pub(super) trait Receivable {
    type Item;
    /// The next item, or why there is none now.
    fn try_recv(&mut self) -> Result<Self::Item, TryRecvError>;
    /// Says that the receiver is about to wait; false if something became
    /// receivable meanwhile (look again instead).
    fn announce_waiting(&mut self) -> bool;
    /// The channel's wake-ups (the async flavour waits on its `ready`).
    fn wake(&self) -> &Wake;
}

impl Wake {
    pub(super) fn blocking(receiver: Unparker) -> Self {
        Wake::Blocking {
            receiver,
            space_lock: Mutex::new(()),
            space: Condvar::new(),
        }
    }

    pub(super) fn asynchronous() -> Self {
        Wake::Async {
            ready: Notify::new(),
            space: Notify::new(),
        }
    }

    /// Something for the receiver: a message or a release after it
    /// announced it waits, or the last sender gone.
    pub(super) fn receiver(&self) {
        match self {
            Wake::Blocking { receiver, .. } => receiver.unpark(),
            Wake::Async { ready, .. } => ready.notify_one(),
        }
    }

    /// Writes a message into the place its send claimed, and wakes the
    /// receiver if it announced that it waits for that place.
    pub(super) fn push<K, V>(&self, slots: &Slots<K, V>, message: (KeySet<K>, V)) {
        if slots.push(message) {
            self.receiver();
        }
    }

    /// Frees the room of a message received, waking a sender if the room
    /// counts one asleep.
    pub(super) fn free_room(&self, room: &Room) {
        if room.free() {
            self.one_sender();
        }
    }

    /// A slot was freed and a sender sleeps for one.
    fn one_sender(&self) {
        match self {
            // Under the lock: a sleeper holds it from counting itself to
            // waiting, so the signal cannot fall between.
            Wake::Blocking {
                space_lock, space, ..
            } => {
                let _asleep = space_lock.lock();
                space.notify_one();
            }
            // A sleeper registered with the `Notify` before counting
            // itself, so the notification reaches it (or a sender that
            // registered later and takes the slot instead, passing the
            // notification on if it does not: N-4).
            Wake::Async { space, .. } => space.notify_one(),
        }
    }

    /// The receiver left.
    pub(super) fn all_senders(&self) {
        match self {
            Wake::Blocking {
                space_lock, space, ..
            } => {
                let _asleep = space_lock.lock();
                space.notify_all();
            }
            Wake::Async { space, .. } => space.notify_waiters(),
        }
    }

    /// A sync sender's wait for room: takes it, or answers `Closed`.
    pub(super) fn take_room_blocking(&self, room: &Room) -> Result<(), Closed> {
        let Wake::Blocking {
            space_lock, space, ..
        } = self
        else {
            unreachable!("a sync handle on an async channel")
        };
        let mut yields = 0;
        loop {
            match room.try_take(false) {
                Ok(()) => return Ok(()),
                Err(Refused::Closed) => return Err(Closed),
                Err(Refused::Full) if yields < YIELDS_BEFORE_SLEEP => {
                    yields += 1;
                    thread::yield_now();
                    continue;
                }
                Err(Refused::Full) => {}
            }
            // Counted as a sleeper in the same step that finds the channel
            // full, and under the lock until the wait: a receive after the
            // count signals, and cannot signal before the wait.
            let asleep = space_lock.lock();
            match room.try_take(true) {
                Ok(()) => return Ok(()),
                Err(Refused::Closed) => return Err(Closed),
                Err(Refused::Full) => {}
            }
            drop(space.wait(asleep));
            room.uncount_sleeper();
        }
    }

    /// An async sender's wait for room: takes it, or answers `Closed`.
    /// Cancelled, it has taken nothing, and a notification it was chosen
    /// for goes to the next sender waiting (N-4).
    pub(super) async fn take_room(&self, room: &Room) -> Result<(), Closed> {
        let Wake::Async { space, .. } = self else {
            unreachable!("an async handle on a sync channel")
        };
        loop {
            match room.try_take(false) {
                Ok(()) => return Ok(()),
                Err(Refused::Closed) => return Err(Closed),
                Err(Refused::Full) => {}
            }
            // Registered first, then counted as a sleeper in the same step
            // that finds the channel still full: a receive after the count
            // notifies, and the registration catches it.
            let mut freed = std::pin::pin!(space.notified());
            freed.as_mut().enable();
            match room.try_take(true) {
                Ok(()) => return Ok(()),
                Err(Refused::Closed) => return Err(Closed),
                Err(Refused::Full) => {}
            }
            let _counted = Sleeper(room);
            freed.await;
        }
    }

    /// The sync receiver's wait: the next item, `Disconnected`, or, at
    /// `deadline`, `Timeout`. `parker` is the one whose unparker this
    /// `Wake` holds.
    pub(super) fn recv_blocking<R: Receivable>(
        receivable: &mut R,
        parker: &Parker,
        deadline: Option<Instant>,
    ) -> Result<R::Item, RecvTimeoutError> {
        loop {
            match receivable.try_recv() {
                Ok(item) => return Ok(item),
                Err(TryRecvError::Disconnected) => return Err(RecvTimeoutError::Disconnected),
                Err(TryRecvError::Empty | TryRecvError::Conflicted) => {}
            }
            // After the announcement, the next push or release, and the
            // last sender's drop, unpark: the permit ends the park (P-1).
            if !receivable.announce_waiting() {
                continue; // something arrived meanwhile
            }
            match deadline {
                None => parker.park(),
                Some(deadline) => {
                    if crate::sync::deadline_passed(deadline) {
                        return Err(RecvTimeoutError::Timeout);
                    }
                    parker.park_deadline(deadline);
                }
            }
        }
    }

    /// The async receiver's wait: the next item, or `None` when every
    /// sender is gone and nothing is left; and whether it waited (the
    /// receiver's budget counts the receives that did not).
    pub(super) async fn recv<R: Receivable>(receivable: &mut R) -> (Option<R::Item>, bool) {
        let mut waited = false;
        loop {
            match receivable.try_recv() {
                Ok(item) => return (Some(item), waited),
                Err(TryRecvError::Disconnected) => return (None, waited),
                Err(TryRecvError::Empty | TryRecvError::Conflicted) => {}
            }
            // After the announcement, the next push or release, and the
            // last sender's drop, notify; a notification that comes before
            // the wait below begins is kept as the `Notify`'s permit.
            if !receivable.announce_waiting() {
                continue; // something arrived meanwhile
            }
            waited = true;
            receivable.wake().ready().notified().await;
        }
    }

    /// The async flavour's receiver `Notify`.
    pub(super) fn ready(&self) -> &Notify {
        match self {
            Wake::Async { ready, .. } => ready,
            Wake::Blocking { .. } => unreachable!("an async handle on a sync channel"),
        }
    }
}

/// A sender counted asleep in the room; uncounted when it wakes or its
/// `send` is cancelled.
struct Sleeper<'a>(&'a Room);

impl Drop for Sleeper<'_> {
    fn drop(&mut self) {
        self.0.uncount_sleeper();
    }
}

/// The waiting of one flavour over the real room and slot list, carrying
/// values with no keys: a bounded channel made of the parts the keyed
/// channel waits with, which the waiting's models run
/// (`modelsync::internals::keyed`). Senders share it; [`WaitingReceiver`]
/// is its one receiver. Not a channel for users: it has no key table, no
/// release stack and no sender count.
pub struct WaitingChannel<V> {
    wake: Wake,
    room: Room,
    slots: Slots<u8, V>,
}

impl<V> std::fmt::Debug for WaitingChannel<V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WaitingChannel").finish_non_exhaustive()
    }
}

impl<V> std::fmt::Debug for WaitingReceiver<V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WaitingReceiver").finish_non_exhaustive()
    }
}

/// [`WaitingReceiver::internals`]: the situation of the waiting's parts.
#[doc(hidden)]
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WaitingInternals {
    /// The room's two words (`RoomCounts::internals`).
    pub room: (u64, u64, bool, bool, bool),
    /// The slot list (`SlotReader::internals`).
    pub slots: (usize, usize, bool),
    /// The receiver's announcement stands: its next place is marked
    /// waited for and not written (left by a receive that waited, or was
    /// polled once and dropped).
    pub receiver_announced: bool,
    /// A wake-up kept for the receiver: the sync flavour's parker permit,
    /// the async flavour's `ready` permit.
    pub receiver_permit: bool,
    /// A notification kept for the senders (async flavour: `space`'s
    /// permit; the sync flavour's condition variable keeps none).
    pub sender_permit: bool,
}

impl WaitingInternals {
    /// The situation of the waiting's parts, whichever receiver holds
    /// them (`parker`: the sync receiver's, whose permit `wake` does not
    /// hold).
    pub(super) fn of<K, V>(
        room: &Room,
        slots: &Slots<K, V>,
        reader: &Reader<K, V>,
        wake: &Wake,
        parker: Option<&Parker>,
    ) -> Self {
        let (receiver_permit, sender_permit) = match wake {
            Wake::Blocking { .. } => (parker.is_some_and(Parker::has_permit), false),
            Wake::Async { ready, space } => (ready.has_permit(), space.has_permit()),
        };
        WaitingInternals {
            room: room.situation(),
            slots: slots.situation(reader),
            receiver_announced: reader.announced(),
            receiver_permit,
            sender_permit,
        }
    }
}

/// [`WaitingChannel`]'s receiver: receives, and closes the channel.
pub struct WaitingReceiver<V> {
    channel: std::sync::Arc<WaitingChannel<V>>,
    reader: Reader<u8, V>,
    /// The sync flavour's: the `Parker` whose unparker `Wake` holds.
    parker: Option<Parker>,
}

impl<V> WaitingChannel<V> {
    /// The sync flavour, holding at most `capacity` values sent and not
    /// received.
    pub fn sync(capacity: usize) -> (std::sync::Arc<Self>, WaitingReceiver<V>) {
        let parker = Parker::new();
        Self::with(
            capacity,
            Wake::blocking(parker.unparker().clone()),
            Some(parker),
        )
    }

    /// The async flavour, holding at most `capacity` values sent and not
    /// received.
    pub fn asynchronous(capacity: usize) -> (std::sync::Arc<Self>, WaitingReceiver<V>) {
        Self::with(capacity, Wake::asynchronous(), None)
    }

    fn with(
        capacity: usize,
        wake: Wake,
        parker: Option<Parker>,
    ) -> (std::sync::Arc<Self>, WaitingReceiver<V>) {
        let (slots, reader) = super::slots::new();
        let channel = std::sync::Arc::new(WaitingChannel {
            wake,
            room: Room::new(capacity),
            slots,
        });
        let receiver = WaitingReceiver {
            channel: channel.clone(),
            reader,
            parker,
        };
        (channel, receiver)
    }

    /// The sync flavour's send: waits for room; gives `value` back if
    /// the receiver closed.
    pub fn send_blocking(&self, value: V) -> Result<(), V> {
        match self.wake.take_room_blocking(&self.room) {
            Ok(()) => {
                self.push(value);
                Ok(())
            }
            Err(Closed) => Err(value),
        }
    }

    /// The async flavour's send: waits for room; gives `value` back if
    /// the receiver closed. Cancelled, it takes nothing.
    pub async fn send(&self, value: V) -> Result<(), V> {
        match self.wake.take_room(&self.room).await {
            Ok(()) => {
                self.push(value);
                Ok(())
            }
            Err(Closed) => Err(value),
        }
    }

    fn push(&self, value: V) {
        self.wake.push(&self.slots, (KeySet::empty(), value));
    }
}

impl<V> Receivable for WaitingReceiver<V> {
    type Item = V;

    fn try_recv(&mut self) -> Result<V, TryRecvError> {
        let (_, value) = self
            .reader
            .pop(&self.channel.slots)
            .ok_or(TryRecvError::Empty)?;
        self.channel.wake.free_room(&self.channel.room);
        Ok(value)
    }

    fn announce_waiting(&mut self) -> bool {
        self.reader.announce_waiting()
    }

    fn wake(&self) -> &Wake {
        &self.channel.wake
    }
}

impl<V> WaitingReceiver<V> {
    /// The sync flavour's receive: waits for the next value.
    pub fn recv_blocking(&mut self) -> V {
        let parker = self.parker.take().expect("a sync flavour's receiver");
        let received = Wake::recv_blocking(self, &parker, None);
        self.parker = Some(parker);
        match received {
            Ok(value) => value,
            Err(_) => unreachable!("no sender count, no deadline"),
        }
    }

    /// The async flavour's receive: waits for the next value. Cancelled,
    /// it takes nothing.
    pub async fn recv(&mut self) -> V {
        match Wake::recv(self).await.0 {
            Some(value) => value,
            None => unreachable!("no sender count"),
        }
    }

    /// The waiting's situation, as models name it (a diagnostic for a
    /// scope's regimes: it synchronises with nothing).
    #[doc(hidden)]
    pub fn internals(&self) -> WaitingInternals {
        let channel = &*self.channel;
        WaitingInternals::of(
            &channel.room,
            &channel.slots,
            &self.reader,
            &channel.wake,
            self.parker.as_ref(),
        )
    }

    /// Refuses every later send and wakes the senders waiting for room,
    /// as the keyed receiver's drop does.
    pub fn close(&mut self) {
        self.channel.room.close();
        self.channel.wake.all_senders();
    }
}

impl<V> Drop for WaitingReceiver<V> {
    /// Reads (and drops) what is left: the reader must read every claimed
    /// place before its block is freed, as the keyed receiver does. Every
    /// send has returned by now (the models drop it last).
    fn drop(&mut self) {
        while self.reader.pop(&self.channel.slots).is_some() {}
    }
}
