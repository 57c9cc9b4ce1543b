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
//!   everything done before dropping a message (its value's `Drop`
//!   included) happens-before the next message on any of its keys is
//!   received (K-9).
//! - **Nothing lost or doubled**: every value sent is received exactly once
//!   or handed back in an error; dropping the receiver drops every queued
//!   value exactly once and later sends fail with their value; a `Message`
//!   may outlive every handle of its channel (K-4). Cancelling an async
//!   `send` or `recv` loses no message and leaks no capacity.
//! - **No lock around user code**: sends, receives and releases take no
//!   lock, except the condition variable's in the sync flavour, which a
//!   sender going to sleep for room takes, and so does a receive or the
//!   receiver's drop that signals it; a value's `Drop` and wakers run with
//!   no lock of the channel held, so either may use the channel (K-5). A
//!   key's `Hash` runs once, on its sender's thread inside `send` or
//!   `try_send` (as does `Eq` between the keys of one message); its `Eq`
//!   against other messages' keys, its `Clone` and its `Drop` run on the
//!   receiver's thread, inside its calls (`recv`, `try_recv`, `recv_timeout`,
//!   dropping it), except that a message dropped after its receiver drops
//!   its own keys. A `Hash` that panics, or an `Eq` that panics between
//!   two keys of one message, panics in the send (`send`, `try_send`, the
//!   async `send`'s first poll) before it looks at the channel, whether
//!   the channel has room, is full or has lost its receiver: no capacity
//!   is taken and nothing is sent, so the channel is as if the send had
//!   not been made, and the value and the keys are dropped once, by the
//!   unwinding. An `Eq` or `Clone` that panics panics in the
//!   receiver's call and leaves the channel consistent: exclusion and
//!   per-key order hold, nothing is lost or doubled, and dropping the
//!   receiver still drops every queued value once. If it panicked while
//!   the call filed a message, that message alone is dropped with its
//!   value and its slot freed, and nothing else changes. If it panicked
//!   while the call took in a release, the released message's keys from
//!   the one that panicked on stay held, and so do those of a message the
//!   release was making ready (which stays queued); messages waiting for
//!   them then wait until the receiver is dropped, as a `HashMap` whose
//!   `Eq` panics is left valid but unspecified. Every other key works as
//!   before.
//! - **Cost**: a send, a receive and a release each cost O(keys of the
//!   message) expected (a release also pays for the messages it makes
//!   ready), never a scan of the queue, however many keys a message has
//!   (a send drops repeated keys by their hashes); memory is O(queued messages + held
//!   keys), plus at most a bounded amount kept for reuse (a key table
//!   array below 65,536 places, 1,024 envelopes): a key's bookkeeping is
//!   freed when nothing holds or waits for it, and a key table array of
//!   65,536 places or more at most a sixteenth full is shrunk, at the
//!   receiver's next call after the releases (K-6).
//!
//! # How it works
//!
//! Only the receiver touches the key table (`core.rs`), so it needs no
//! lock; senders hash their keys (with the channel's own `RandomState`)
//! before they send, so the receiver, which every message goes through,
//! never hashes. A sender takes the next place in a linked list of blocks
//! of slots and writes its message there (`slots.rs`: no allocation per
//! message, and the receiver reads consecutive slots); a dropped `Message`
//! pushes its emptied envelope onto a lock-free stack (`intake.rs`). Each
//! receive takes the whole stack and releases those keys, then hands out
//! the oldest ready message; if none is ready, it files written messages
//! (in the order they took their places) until one is, or until none is
//! left to file. So a receive reads no further than it must, and the key
//! table (`table.rs`) holds the keys of messages held, ready or waiting,
//! not of every message queued. A message leaves in an envelope kept from
//! a released message when there is one. The capacity is two counts on
//! two cache lines (`room.rs`): senders count what they send, the
//! receiver what it receives and the senders asleep for room, and senders
//! read the receiver's count only when their last look at it says the
//! channel is full. A receiver about to sleep announces it on the stack
//! and on the slot it waits for; the next release, or the writer of that
//! slot, wakes it. A receive wakes a sender waiting for room. A
//! `Message` holds no reference count of the channel: the receiver counts
//! the messages out and keeps the channel alive for them, and when it
//! leaves hands its reference to an orphan count that the last of them
//! brings to zero (`Channel`).
//!
//! Not promised: any order between messages with no key in common (a
//! receive hands out the oldest message it has made ready, as above, but
//! when a message is made ready depends on when the receiver files sends
//! and takes releases, so no order follows from the order of the sends
//! and drops; the specification lets a receive take any deliverable
//! message); fairness among senders blocked on a full channel (sync
//! senders wake in the condition variable's order).
//!
//! A blocked sync `send` yields its thread up to 128 times, looking for a
//! free slot each time, before it sleeps: on a full channel a slot usually
//! frees within a few time slices, and sleeping costs a context switch per
//! message. A sync `recv` sleeps at once. Async waits never spin; an
//! async `recv` that has completed 128 times in a row without waiting
//! yields to the executor once (as tokio's channels do under its
//! cooperative budget), so that senders it woke can run on its thread.
//! Dropping the receiver waits (yielding) for sends that took a slot and
//! have not yet written their message, so that it drops every queued
//! value itself. One more short wait, in either flavour: once per 31
//! messages, the sender that takes a block's last place installs the next
//! block, and a sender that arrives meanwhile yields its thread until
//! that is done (a few instructions, unless the installing thread is
//! preempted), as crossbeam-channel's senders do.
//!
//! `capacity` bounds the messages sent and not yet received; received
//! messages that still hold their keys do not count. A capacity of 0
//! panics; one above 2^31 - 1 acts as 2^31 - 1 (the counts share their
//! words with other fields). Nothing is allocated up front: memory follows
//! the messages queued, whatever the capacity.

mod blocking;
pub(crate) mod core;
pub mod error;
mod future;
pub(crate) mod intake;
pub(crate) mod room;
pub(crate) mod slots;
mod table;
pub(crate) mod waiting;

use std::collections::hash_map::RandomState;
use std::fmt;
use std::hash::Hash;
use std::mem::ManuallyDrop;
use std::ptr::NonNull;

use self::core::{Core, KeySet, Keyed};
use self::intake::{Envelope, Pushed, Stack};
use self::room::{Refused, Room};
use self::slots::{Reader, Slots};
use self::waiting::Wake;
use crate::sync::atomic::{AtomicUsize, Ordering::*};
use crate::sync::{thread, Arc, CachePadded};

pub use blocking::{sync_channel, SyncReceiver, SyncSender};
pub use future::{channel, Receiver, Sender};

/// What both flavours share. Senders and releasers only append and count;
/// the key table belongs to the receiver (`Inbox`).
///
/// The words every message writes (the room's two counts, the slots'
/// `tail`, the release stack's head) sit on cache lines of their own,
/// apart from each other, from the `Arc`'s counts (which the receiver
/// writes per message) and from the fields every sender only reads.
struct Shared<K, V> {
    /// Messages sent and not received, against the capacity; sleeping
    /// senders; whether the receiver is gone.
    room: Room,
    /// Live sender handles.
    senders: AtomicUsize,
    /// Sent messages, in the order they took their places, for the
    /// receiver to file.
    slots: Slots<K, V>,
    /// Envelopes of dropped messages, for the receiver to release their
    /// keys.
    released: CachePadded<Stack<K, V>>,
    /// Messages still out once the receiver has gone, counted by
    /// additions that wrap: the receiver's drop adds how many it left out,
    /// each of those messages adds -1 as it goes, in either order; whoever
    /// brings it to zero drops the receiver's reference to the channel,
    /// which they own together (`Shared::settle`).
    orphans: AtomicUsize,
    wake: Wake,
    /// Hashes every key once, on its sender's thread (`KeySet::new`);
    /// random per channel, so that nobody can choose keys that collide.
    hasher: RandomState,
}

/// How many times the user's `try_recv` looks again for a send in
/// progress before it sleeps (none under the models, where each look is a
/// scheduling point: the sleep is the path they check).
const IN_FLIGHT_SPINS: u32 = if cfg!(any(loom, shuttle)) { 0 } else { 100 };

/// A send that took room has not yet written its message
/// (`Inbox::try_recv_exact`).
struct SendInFlight;

impl<K: Eq + Hash + Clone, V> Shared<K, V> {
    /// The shared state, and the receiver's side of its slots.
    fn new(capacity: usize, wake: Wake) -> (Arc<Self>, Reader<K, V>) {
        assert!(
            capacity > 0,
            "a keyed channel needs a capacity of at least 1, got 0"
        );
        let (slots, reader) = slots::new();
        let shared = Arc::new(Shared {
            room: Room::new(capacity),
            senders: AtomicUsize::new(1),
            slots,
            released: CachePadded(Stack::new()),
            orphans: AtomicUsize::new(0),
            wake,
            hasher: RandomState::new(),
        });
        (shared, reader)
    }

    /// Takes room for a message (`Room::try_take`).
    fn try_reserve(&self, as_sleeper: bool) -> Result<(), Refused> {
        self.room.try_take(as_sleeper)
    }

    /// A message's keys, deduplicated and hashed, ready to send.
    fn key_set(&self, keys: impl IntoIterator<Item = K>) -> KeySet<K> {
        KeySet::new(keys, &self.hasher)
    }

    /// Sends into a slot taken by `try_reserve`.
    fn push(&self, keys: KeySet<K>, value: V) {
        self.wake.push(&self.slots, (keys, value));
    }

    /// Both flavours' `try_send`.
    fn try_send(&self, keys: KeySet<K>, value: V) -> Result<(), error::TrySendError<V>> {
        match self.try_reserve(false) {
            Ok(()) => {
                self.push(keys, value);
                Ok(())
            }
            Err(Refused::Full) => Err(error::TrySendError::Full(value)),
            Err(Refused::Closed) => Err(error::TrySendError::Disconnected(value)),
        }
    }

    fn add_sender(&self) {
        // Relaxed: the new handle comes from an existing one, which keeps
        // the count above zero meanwhile (as `Arc::clone`).
        self.senders.fetch_add(1, Relaxed);
    }

    fn drop_sender(&self) {
        // Release: the receiver's Acquire load that sees 0 then sees every
        // push of every sender, so "gone and nothing queued" is final.
        if self.senders.fetch_sub(1, Release) == 1 {
            self.wake.receiver(); // a waiting `recv` may be done
        }
    }

    /// Frees the room of a message just received (or lost: `Inbox::
    /// next_ready`), waking a sender that waits for room.
    fn free_slot(&self) {
        self.wake.free_room(&self.room);
    }
}

/// The channel as a received [`Message`] sees it: without a reference
/// count of its own, so that receiving and releasing a message touch no
/// counter but the room's. The channel stays alive for the message
/// because the receiver counts the messages it hands out and the
/// envelopes that come back (`Inbox::out`), and keeps its own reference
/// while any is out: until it leaves, and then through the orphan count
/// (`Shared::settle`), which the message's release settles instead.
struct Channel<K, V>(NonNull<Shared<K, V>>);

// SAFETY: a `Channel` is a shared reference to the channel, kept valid as
// its documentation says; it may cross threads exactly when an `Arc` of
// the channel may.
unsafe impl<K, V> Send for Channel<K, V> where Arc<Shared<K, V>>: Send {}
// SAFETY: as above.
unsafe impl<K, V> Sync for Channel<K, V> where Arc<Shared<K, V>>: Sync {}

impl<K: Eq + Hash + Clone, V> Channel<K, V> {
    /// Hands a received message's envelope, value gone, back to the
    /// receiver, waking it if it waits; or, if it has left, frees the
    /// envelope here and gives up the message's share of the channel. The
    /// message's last use of the channel.
    fn release(&self, mut envelope: Box<Envelope<K, V>>) {
        envelope.released = true;
        // SAFETY: the message is out (its envelope has not come back), so
        // the receiver or the orphan count keeps the channel alive.
        let shared = unsafe { self.0.as_ref() };
        // Once the envelope is pushed the receiver may take it and leave,
        // freeing the channel; the push that must wake the receiver keeps
        // the channel alive for that with a reference taken before.
        let mut keep_alive = None;
        let pushed = shared.released.push(envelope, || {
            if keep_alive.is_none() {
                keep_alive = Some(self.counted());
            }
        });
        match pushed {
            Pushed::Queued => {}
            Pushed::WakeTaker => keep_alive
                .as_ref()
                .expect("taken before replacing the announcement")
                .wake
                .receiver(),
            Pushed::Closed(envelope) => {
                // Its keys go here; the value went with the message.
                drop(envelope);
                // SAFETY: the receiver has left this message out, so it
                // owns a share of the receiver's reference, and it does
                // not touch the channel again.
                unsafe { Shared::settle(self.0, 0usize.wrapping_sub(1)) };
            }
        }
    }

    /// A counted reference to the channel.
    fn counted(&self) -> Arc<Shared<K, V>> {
        // SAFETY: the pointer is the receiver's `Arc::as_ptr`, and the
        // channel is alive while the message is out (see `release`).
        unsafe {
            Arc::increment_strong_count(self.0.as_ptr());
            Arc::from_raw(self.0.as_ptr())
        }
    }
}

impl<K, V> Shared<K, V> {
    /// Adds `shares` to the orphan count: the receiver's drop the messages
    /// it left out, each of those messages -1 (`usize::MAX`) as it goes.
    /// Only the receiver adds more than nothing, so until it has the count
    /// is negative and after it falls to zero only with the last message:
    /// whichever addition makes it zero is the last, in any order, and
    /// drops the receiver's reference.
    ///
    /// # Safety
    /// `this` is the channel's `Arc::as_ptr`; the caller is the receiver's
    /// drop, whose `Arc` it hands over, or a message the receiver left out;
    /// it does not touch the channel afterwards.
    unsafe fn settle(this: NonNull<Self>, shares: usize) {
        // SAFETY: the receiver's reference, which the caller shares, keeps
        // the channel alive until the count reaches zero, and whoever
        // brings it there alone takes the reference back.
        unsafe {
            // AcqRel: Release so that this party's uses of the channel
            // happen-before its drop; Acquire, for the last, to see every
            // other party's (each addition continues the release sequence).
            let before = this.as_ref().orphans.fetch_add(shares, AcqRel);
            if before.wrapping_add(shares) == 0 {
                drop(Arc::from_raw(this.as_ptr()));
            }
        }
    }
}

impl<K, V> Keyed<K> for Box<Envelope<K, V>> {
    fn keys(&self) -> &KeySet<K> {
        &self.keys
    }
}

/// Spare envelopes kept beyond one for each message the receiver holds
/// (filed or out): enough that a receiver taking back a batch of releases
/// and filing as many new messages allocates nothing, so that a channel
/// whose held messages stay below this many allocates nothing once warmed
/// up.
const SPARE_BEYOND_HELD: usize = 1024;

/// The receiver's half: the key table and the reading end of the slots,
/// which nobody else touches. Both flavours' receivers wrap one.
struct Inbox<K: Eq + Hash + Clone, V> {
    /// Dropped by `Inbox::drop`, or handed to the orphans.
    shared: ManuallyDrop<Arc<Shared<K, V>>>,
    /// Messages handed out whose envelopes have not come back: while one
    /// is out, the receiver keeps the channel alive for it (`Channel`).
    out: usize,
    core: Core<K, Box<Envelope<K, V>>>,
    reader: Reader<K, V>,
    /// Messages read from the slots and not yet received: filed in the
    /// core. Every slot taken and not received holds one of these or a
    /// message not yet read (`Inbox::drop` waits for those).
    filed: usize,
    /// Released envelopes, emptied, for the next messages filed. One is
    /// allocated only when none is spare; at most `SPARE_BEYOND_HELD` more
    /// than the messages filed and out are kept, so that what the receiver
    /// keeps follows what it holds, not its peak (K-6).
    spare: Vec<Box<Envelope<K, V>>>,
}

impl<K: Eq + Hash + Clone, V> Inbox<K, V> {
    fn new(shared: Arc<Shared<K, V>>, reader: Reader<K, V>) -> Self {
        Inbox {
            shared: ManuallyDrop::new(shared),
            out: 0,
            core: Core::new(),
            reader,
            filed: 0,
            spare: Vec::new(),
        }
    }

    /// The channel, as its messages reach it (`Channel`): the `Arc`'s own
    /// pointer, which `Arc::from_raw` takes back.
    fn channel(&self) -> NonNull<Shared<K, V>> {
        NonNull::new(Arc::as_ptr(&self.shared).cast_mut()).expect("an `Arc` points somewhere")
    }

    /// Takes in every release so far: frees their keys (which may make
    /// waiting messages ready) and keeps their envelopes for new messages.
    fn take_releases(&mut self) {
        let batch = self.shared.released.take_all();
        // Counted back as taken: a batch given up part way (a key's `Eq`
        // panicked) frees the rest, which no message uses either.
        self.out -= batch.len;
        if batch.len == 0 {
            return;
        }
        for mut envelope in batch {
            self.core.release(&envelope.keys);
            // Its value went with its `Message`; its keys go now, and the
            // envelope carries the next message.
            envelope.empty_keys();
            self.spare.push(envelope);
        }
        self.core.shrink_if_sparse();
        // Spare envelopes beyond what the receiver holds are freed (K-6).
        let keep = self.out + self.filed + SPARE_BEYOND_HELD;
        if self.spare.len() > keep {
            self.spare.truncate(keep);
            if self.spare.capacity() > 4 * keep {
                self.spare.shrink_to(keep);
            }
        }
    }

    /// The oldest ready message, if any; otherwise files written messages,
    /// in the order they took their places, until one is ready. A receive
    /// that finds a message ready reads no further slots, so the key table
    /// holds the keys of messages held, ready or waiting, not of the whole
    /// queue. Returns `None` only once every written message is filed.
    fn next_ready(&mut self) -> Option<Box<Envelope<K, V>>> {
        loop {
            if let Some(envelope) = self.core.pop_ready() {
                return Some(envelope);
            }
            let (keys, value) = self.reader.pop(&self.shared.slots)?;
            let envelope = match self.spare.pop() {
                Some(mut envelope) => {
                    envelope.refill(keys, value);
                    envelope
                }
                None => Envelope::new(keys, value),
            };
            // Filing runs the keys' `Eq` and `Clone`. If one panics, the
            // message is lost (its envelope drops its value on the way out)
            // and its slot is freed as if it had been received.
            let lost_on_panic = FreeSlotOnDrop(&self.shared);
            self.core.push(envelope);
            std::mem::forget(lost_on_panic);
            self.filed += 1;
        }
    }

    /// Receives the oldest deliverable message written so far, if any;
    /// otherwise says why not. A blocking receive's look: if the answer is
    /// no, it sleeps until a writer or a release wakes it.
    fn try_recv(&mut self) -> Result<Message<K, V>, error::TryRecvError> {
        // Releases first: a message on a key just released is then ready
        // as it is filed rather than promoted; either way it is ready.
        self.take_releases();
        let mut next = self.next_ready();
        if next.is_none() {
            // Acquire: if every sender is gone, every message they sent is
            // written by now (`drop_sender`), so look once more before
            // calling it final. A read-modify-write, which reads the
            // latest count: a load could read a sender a drop that returned
            // before this call already took away.
            if self.shared.senders.fetch_add(0, Acquire) != 0 {
                return Err(self.why_empty(false));
            }
            next = self.next_ready();
        }
        match next {
            Some(envelope) => {
                self.filed -= 1;
                self.shared.free_slot();
                self.out += 1;
                Ok(Message {
                    envelope: ManuallyDrop::new(envelope),
                    channel: Channel(self.channel()),
                })
            }
            None => Err(self.why_empty(true)),
        }
    }

    /// The user's `try_recv`: as `try_recv`, but where the answer would be
    /// `Empty` or `Conflicted` while a send that took room has not yet
    /// written its message, `Err(SendInFlight)`: the flavour then waits
    /// for the writer, as a blocking receive does (`announce_waiting`),
    /// and asks again, so that the answer is exact. The queue is in the
    /// order sends took room, so answering "nothing" there would leave a
    /// message whose send has returned (or whose room made another
    /// sender's `try_send` answer `Full`) unreceived behind a slower one:
    /// not linearizable (`keyed::sync_try_recv_finds_its_own_send`,
    /// `keyed::async_room_taken_before_full_is_received`). tokio's mpsc
    /// `try_recv` waits in the same way for a send in progress, parking
    /// the thread. The window is a sender's few instructions between taking
    /// room and writing its place, unless its thread is preempted there;
    /// sleeping rather than yielding leaves the CPU to it (yielding cost the
    /// sync conflict benchmark, where the receiver reads up to the senders'
    /// tail, 12 times its time: BENCHMARKS.md).
    fn try_recv_exact(
        &mut self,
    ) -> Result<Result<Message<K, V>, error::TryRecvError>, SendInFlight> {
        let mut looks_left = IN_FLIGHT_SPINS;
        loop {
            match self.try_recv() {
                Err(error::TryRecvError::Empty | error::TryRecvError::Conflicted)
                    if self.shared.room.taken_not_received() > self.filed =>
                {
                    // A sender that is running writes within a few hundred
                    // cycles: look again a few times before sleeping.
                    if looks_left > 0 {
                        looks_left -= 1;
                        crate::sync::spin_loop();
                        continue;
                    }
                    return Err(SendInFlight);
                }
                answer => return Ok(answer),
            }
        }
    }

    fn why_empty(&self, senders_gone: bool) -> error::TryRecvError {
        if !self.core.is_empty() {
            error::TryRecvError::Conflicted
        } else if senders_gone {
            error::TryRecvError::Disconnected
        } else {
            error::TryRecvError::Empty
        }
    }

    /// Announces that the receiver is about to wait; false if something
    /// arrived since its last look (then it looks again instead). After a
    /// true answer, the next release and the writer of the next message
    /// wake it. (If only the first announcement holds, it stands until the
    /// next look withdraws it: at worst one needless wake-up.)
    fn announce_waiting(&self) -> bool {
        self.shared.released.announce_waiting() && self.reader.announce_waiting()
    }

    /// Keys with an entry: held or waited for (by messages filed so far).
    /// A diagnostic (K-6).
    fn tracked_keys(&mut self) -> usize {
        self.take_releases();
        self.core.tracked_keys()
    }

    /// Places in the key table's array. A diagnostic (K-6).
    fn key_places(&self) -> usize {
        self.core.key_places()
    }

    /// The channel's situation as the receiver sees it, changing nothing
    /// (no release taken in); `parker` is the sync receiver's.
    fn internals(&self, parker: Option<&crate::park::Parker>) -> ChannelInternals {
        let shared = &*self.shared;
        let (ready, waiting) = self.core.queued();
        ChannelInternals {
            waiting_parts: waiting::WaitingInternals::of(
                &shared.room,
                &shared.slots,
                &self.reader,
                &shared.wake,
                parker,
            ),
            releases: shared.released.situation(),
            ready,
            waiting,
            out: self.out,
            tracked_keys: self.core.tracked_keys(),
            // Relaxed: a snapshot; nothing is read on its basis.
            senders: shared.senders.load(Relaxed),
        }
    }
}

/// A receiver's `internals`: the situation of the channel's parts, as the
/// models' regimes name it. A diagnostic: read with relaxed loads, it
/// synchronises with nothing.
#[doc(hidden)]
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChannelInternals {
    /// The parts the channel shares with its waiting component, read as
    /// the waiting's scope reads them (`WaitingInternals`): the room, the
    /// slots, the receiver's announcement, the wake-ups kept.
    pub waiting_parts: waiting::WaitingInternals,
    /// The release stack's head (`ReleaseStack::internals`): `"empty"`,
    /// `"announced"`, `"holding"` (releases not taken in) or `"closed"`.
    pub releases: &'static str,
    /// Messages filed and ready.
    pub ready: usize,
    /// Messages filed and waiting for a key.
    pub waiting: usize,
    /// Messages handed out whose envelopes the receiver has not taken
    /// back (held, or released and not taken in).
    pub out: usize,
    /// Keys with an entry in the key table (held or waited for).
    pub tracked_keys: usize,
    /// Live sender handles.
    pub senders: usize,
}

/// The receiver's side as the flavours' waiting sees it (`waiting.rs`).
impl<K: Eq + Hash + Clone, V> waiting::Receivable for Inbox<K, V> {
    type Item = Message<K, V>;

    fn try_recv(&mut self) -> Result<Message<K, V>, error::TryRecvError> {
        Inbox::try_recv(self)
    }

    fn announce_waiting(&mut self) -> bool {
        Inbox::announce_waiting(self)
    }

    fn wake(&self) -> &Wake {
        &self.shared.wake
    }
}

impl<K: Eq + Hash + Clone, V> Drop for Inbox<K, V> {
    fn drop(&mut self) {
        // Senders asleep are woken below (`all_senders`).
        let taken = self.shared.room.close();
        // Every slot taken holds a message filed in the core or one not
        // yet read; wait for the unread ones still being written, so that
        // every queued value is dropped here, exactly once (K-4), and the
        // reader frees its last block with no writer left in it.
        let unread = taken - self.filed;
        let mut written = Vec::with_capacity(unread);
        while written.len() < unread {
            match self.reader.pop(&self.shared.slots) {
                Some(message) => written.push(message),
                None => thread::yield_now(), // a sender between its slot and its write
            }
        }
        self.shared.wake.all_senders();
        // The filed messages go with `self.core`, as the fields drop.
        // Closing the release stack takes the envelopes pushed so far; the
        // messages still out will find it closed and settle instead, and
        // the receiver's reference goes to them.
        let back = self.shared.released.close();
        let left_out = self.out - back.len;
        // SAFETY: the pointer is the `Arc`'s, handed over here, and not
        // used again: what drops after this (the values read above, the
        // envelopes that came back, the core's envelopes, the reader's
        // block, the spare envelopes) does not reach the channel, so a
        // value's `Drop` that panics cannot leak it.
        unsafe { Shared::settle(self.channel(), left_out) };
        drop(written);
        drop(back);
    }
}

/// Frees a message's slot when dropped (`Shared::free_slot`): forgotten
/// once the message is filed, run only if filing panicked.
struct FreeSlotOnDrop<'a, K: Eq + Hash + Clone, V>(&'a Shared<K, V>);

impl<K: Eq + Hash + Clone, V> Drop for FreeSlotOnDrop<'_, K, V> {
    fn drop(&mut self) {
        self.0.free_slot();
    }
}

/// A value reachable only through `&mut`, so a shared reference to its
/// holder gives no access to it: `Sync` whenever the value is `Send`.
struct Exclusive<T>(T);

// SAFETY: `Exclusive` exposes its value only through `&mut self`, so two
// threads can never reach it at once through `&Exclusive`.
unsafe impl<T: Send> Sync for Exclusive<T> {}

impl<T> Exclusive<T> {
    fn get_mut(&mut self) -> &mut T {
        &mut self.0
    }
}

/// A received message: its keys, held until it is dropped, and its value.
///
/// `Send` when the keys and the value are. Dropping it (or taking its value
/// with [`into_value`](Self::into_value)) releases its keys and wakes a
/// receiver waiting for them. It may outlive every handle of its channel.
pub struct Message<K: Eq + Hash + Clone, V> {
    /// Its value is present until the message drops or gives it away.
    envelope: ManuallyDrop<Box<Envelope<K, V>>>,
    channel: Channel<K, V>,
}

impl<K: Eq + Hash + Clone, V> Message<K, V> {
    /// The value.
    pub fn value(&self) -> &V {
        &self.envelope.value
    }

    /// The value, mutably.
    pub fn value_mut(&mut self) -> &mut V {
        &mut self.envelope.value
    }

    /// The keys the message holds: deduplicated, in first-seen order.
    pub fn keys(&self) -> &[K] {
        self.envelope.keys.as_slice()
    }

    /// Takes the value, releasing the keys.
    pub fn into_value(self) -> V {
        let mut this = ManuallyDrop::new(self);
        // SAFETY: the value is present (a message holds it until now), and
        // `this` is never dropped, so it is not dropped again.
        let value = unsafe { ManuallyDrop::take(&mut this.envelope.value) };
        this.release();
        value
    }

    /// Hands the envelope (value gone) back for its keys to be released.
    /// Called once, as the message goes away.
    fn release(&mut self) {
        // SAFETY: called once, by `drop` or `into_value`, which never touch
        // `self.envelope` afterwards.
        let envelope = unsafe { ManuallyDrop::take(&mut self.envelope) };
        self.channel.release(envelope);
    }
}

impl<K: Eq + Hash + Clone, V> Drop for Message<K, V> {
    fn drop(&mut self) {
        /// Releases the keys even if the value's `Drop` panics.
        struct ReleaseGuard<'a, K: Eq + Hash + Clone, V>(&'a mut Message<K, V>);
        impl<K: Eq + Hash + Clone, V> Drop for ReleaseGuard<'_, K, V> {
            fn drop(&mut self) {
                self.0.release();
            }
        }
        let message = ReleaseGuard(self);
        // The value first, so that what its `Drop` does happens-before the
        // next message on these keys is received (K-9); no lock is held
        // (K-5).
        // SAFETY: the value is present (`into_value` forgets the message
        // after taking it) and dropped once, here.
        unsafe { ManuallyDrop::drop(&mut message.0.envelope.value) };
    }
}

impl<K: Eq + Hash + Clone + fmt::Debug, V: fmt::Debug> fmt::Debug for Message<K, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Message")
            .field("keys", &self.keys())
            .field("value", self.value())
            .finish()
    }
}
