//! The channel's capacity: how many messages are sent and not yet
//! received, the senders asleep for room, and whether the receiver is
//! gone.
//!
//! # Two words, one per side
//!
//! Senders count the messages they send in `claims`; the receiver counts
//! the messages it receives in `freed`. A sender may send while
//! `taken - received < capacity`. Reading `received` on every send would
//! pull the receiver's word across cores once per message, and the
//! receiver's next count would wait for it to come back (the costliest
//! instruction of a receive, when one word counted both sides:
//! BENCHMARKS.md). So `claims` also keeps the received count senders
//! last saw: a sender compares against that, and reads `freed` only when
//! that view says the channel is full, which refreshes the view for every
//! sender with the room freed since. On a full channel a sender then reads
//! `freed` once per batch of frees rather than once per message, and the
//! receiver's count mostly finds its line where it left it.
//!
//! The view only lags: `received` never decreases, so a stale view
//! refuses a send that a fresh one would allow, never the reverse, and
//! `taken` never passes `received + capacity`. Before it answers "full" a
//! sender always reads `freed` itself, between two reads of `claims` that
//! agree, so that its answer rests on the two counts of one moment.
//!
//! # Sleeping senders
//!
//! A sender that finds no room and wants to sleep counts itself in
//! `freed`, with a read-modify-write that also reads `received`, and
//! decides with that. Each receive's count is a read-modify-write of the
//! same word, so the two are totally ordered: either the sleeper's count
//! sees the receive (and finds room), or the receive sees the sleeper
//! (and wakes a sender). No fence on either side.
//!
//! # Wrapping
//!
//! Counts are kept modulo 2^31 (`MASK`); only differences are compared,
//! and they never exceed the capacity, which is at most 2^31 - 1. The
//! counts start two short of wrapping, so that every test, model and run
//! crosses the wrap within its first messages.
//!
//! # Specification and contract
//!
//! As a component on its own (`specs/room.rs`, checked by the
//! `keyed::room_*` models, complete under loom): messages taken and not
//! received, sleeping senders counted, closed or not. `try_take` takes
//! room while fewer than `capacity` are taken and not received, and
//! otherwise answers `Full`, exactly (the channel was full at a moment of
//! the call), counting a would-be sleeper; after `close` it answers
//! `Closed`. `free` gives one back and answers "wake a sender" whenever a
//! sleeper is counted (it may also answer so when none is: a sender that
//! counted itself and then found room, a needless wake-up).
//!
//! What it assumes of its callers (`keyed/mod.rs` keeps it): the receiver
//! alone frees (only messages taken), counts and closes (once); a sender
//! counted asleep by a `Full` uncounts itself once, after it wakes.

use crate::sync::atomic::{AtomicU64, Ordering::*};
use crate::sync::CachePadded;

/// Counts modulo 2^31.
const MASK: u64 = (1 << 31) - 1;
/// Where every count starts (`MASK - 1`): see the module documentation.
/// Any start is correct; this one makes every run cross the wrap. (A
/// literal, so that mutation testing has no arithmetic here to change
/// into another start, which no test could tell apart.)
const START: u64 = 0x7FFF_FFFE;
const _: () = assert!(START == MASK - 1);

/// `claims`: the receiver is gone (bit 63), messages taken (bits 32..63,
/// modulo 2^31), and the received count senders last saw (bits 0..31).
const CLOSED: u64 = 1 << 63;
const TAKEN_SHIFT: u32 = 32;

/// `freed`: messages received in the top 31 bits (so the count wraps out
/// of the word, never into the sleepers), senders asleep in the rest.
const RECEIVED_SHIFT: u32 = 33;
const SLEEPER: u64 = 1;
const SLEEPERS: u64 = (1 << RECEIVED_SHIFT) - 1;

/// Why a sender could not take room for a message.
pub(super) enum Refused {
    Full,
    Closed,
}

pub(super) struct Room {
    /// Written by senders (every send) and once by the receiver (its
    /// drop). See `CLOSED`.
    claims: CachePadded<AtomicU64>,
    /// Written by the receiver (every receive) and by senders going to
    /// sleep or waking. See `RECEIVED_SHIFT`.
    freed: CachePadded<AtomicU64>,
    /// At most `MASK`.
    capacity: u64,
}

fn taken(claims: u64) -> u64 {
    (claims >> TAKEN_SHIFT) & MASK
}

fn seen(claims: u64) -> u64 {
    claims & MASK
}

fn received(freed: u64) -> u64 {
    freed >> RECEIVED_SHIFT
}

/// Messages taken and not received, by a received count no later than
/// `taken` (the difference does not wrap: see `Room::try_take`).
fn queued(taken: u64, received: u64) -> u64 {
    taken.wrapping_sub(received) & MASK
}

impl Room {
    /// The two words' situation (`RoomCounts::internals` says which is
    /// which); a diagnostic for the models' regimes.
    pub(super) fn situation(&self) -> (u64, u64, bool, bool, bool) {
        // Relaxed, both: a snapshot; nothing is read on its basis.
        let claims = self.claims.load(Relaxed);
        let freed = self.freed.load(Relaxed);
        (
            queued(taken(claims), received(freed)),
            freed & SLEEPERS,
            seen(claims) != received(freed),
            taken(claims) < START,
            claims & CLOSED != 0,
        )
    }

    /// Room for `capacity` messages; more than 2^31 - 1 acts as 2^31 - 1,
    /// which is no bound in practice (each queued message takes memory).
    pub(super) fn new(capacity: usize) -> Self {
        Room {
            claims: CachePadded(AtomicU64::new(START << TAKEN_SHIFT | START)),
            freed: CachePadded(AtomicU64::new(START << RECEIVED_SHIFT)),
            capacity: u64::try_from(capacity).map_or(MASK, |c| c.min(MASK)),
        }
    }

    /// Takes room for one message. If there is none and `as_sleeper`,
    /// the caller is counted among the sleeping senders (see the module
    /// documentation) and must call `uncount_sleeper` once it wakes;
    /// otherwise nothing is counted.
    pub(super) fn try_take(&self, as_sleeper: bool) -> Result<(), Refused> {
        // Relaxed: the counts carry no data (a message travels in its
        // slot); a stale value only fails the CAS below.
        let mut claims = self.claims.load(Relaxed);
        loop {
            if claims & CLOSED != 0 {
                return Err(Refused::Closed);
            }
            let mut view = seen(claims);
            if queued(taken(claims), view) >= self.capacity {
                // Full as senders last saw it: look at the receiver's count.
                // Acquire: pairs with the receive's Release count, after
                // which the claim of every message it counts is visible, so
                // `claims` read next has `taken >= received`. A
                // read-modify-write either way, which reads the latest
                // count: a load could read one older than a receive that
                // returned before this call began, and answer "full" when
                // the channel was not full at any moment of the call (not
                // linearizable: `keyed::async_generated_scenarios`).
                let freed = self
                    .freed
                    .fetch_add(if as_sleeper { SLEEPER } else { 0 }, Acquire);
                // Relaxed: ordered after the Acquire above. A
                // read-modify-write, which reads the latest `claims`: a
                // load could miss the close of a receiver whose drop
                // returned before this call began, and answer "full" where
                // the answer in real time is "closed" (K-11: the weak-memory
                // pass, in the schedule's order, `keyed::room_scope_complete`).
                let again = self.claims.fetch_add(0, Relaxed);
                if again != claims {
                    // A send (or the close) in between: look again. Unchanged,
                    // `claims` held while `freed` was read (`taken` only
                    // grows), so the two are one moment's counts, and a
                    // "full" below is exact, as a single word's would be.
                    if as_sleeper {
                        self.uncount_sleeper();
                    }
                    claims = again;
                    continue;
                }
                // The fresher of the two views: the one with more room.
                if queued(taken(claims), received(freed)) < queued(taken(claims), view) {
                    view = received(freed);
                }
                if queued(taken(claims), view) >= self.capacity {
                    return Err(Refused::Full);
                }
                if as_sleeper {
                    // Room after all: no sleep.
                    self.uncount_sleeper();
                }
            }
            let taken = (taken(claims) + 1) & MASK;
            let new = taken << TAKEN_SHIFT | view;
            // Relaxed on success and failure: as the first load; the
            // receive's count is ordered before it by the Acquire above
            // where it matters.
            match self
                .claims
                .compare_exchange_weak(claims, new, Relaxed, Relaxed)
            {
                Ok(_) => return Ok(()),
                Err(actual) => claims = actual,
            }
        }
    }

    /// Messages taken and not yet received, counting every send that has
    /// taken room, whether or not it has written its message yet. The
    /// receiver's (it alone counts receives).
    pub(super) fn taken_not_received(&self) -> usize {
        // Relaxed: only a count; the messages are acquired through their
        // slots. A read-modify-write, which reads the latest `claims`: a
        // load could miss the room taken by a send that another sender's
        // `Full` counted, when that `Full` must come before this call
        // because a receive between them (here, before it) freed room
        // after the `Full` looked (loom: `keyed::async_try_send_full_only_when_full`).
        let claims = self.claims.fetch_add(0, Relaxed);
        // Relaxed: the received count is the caller's own.
        let freed = self.freed.load(Relaxed);
        // `as`: at most the capacity, at most 2^31 - 1.
        queued(taken(claims), received(freed)) as usize
    }

    /// Uncounts a sender that `try_take` counted asleep.
    pub(super) fn uncount_sleeper(&self) {
        // Relaxed: the count only gates the receiver's signal; a stale one
        // costs a needless signal.
        self.freed.fetch_sub(SLEEPER, Relaxed);
    }

    /// Frees the room of a message received; returns whether a sender
    /// sleeps for room (and one must be woken).
    pub(super) fn free(&self) -> bool {
        // Release: pairs with a sender's Acquire look at this count
        // (`try_take`): the claim of the message received here happened
        // before (its slot was read after its write), so the sender then
        // sees it. The RMW sees every sleeper counted before it, and a
        // sleeper counted after it sees the room freed.
        let before = self.freed.fetch_add(1 << RECEIVED_SHIFT, Release);
        before & SLEEPERS != 0
    }

    /// Closes the channel to senders (the receiver is gone): returns the
    /// messages taken and not received, each of which is written or being
    /// written into its slot. Later `try_take`s answer `Closed`.
    pub(super) fn close(&self) -> usize {
        // Relaxed: senders that see CLOSED keep their value; a sender
        // asleep is woken after this by a lock or a `Notify`, which order
        // it before its next look.
        let claims = self.claims.fetch_or(CLOSED, Relaxed);
        // Relaxed: the received count is the caller's own (the receiver's).
        let freed = self.freed.load(Relaxed);
        // `as`: at most the capacity, at most 2^31 - 1.
        queued(taken(claims), received(freed)) as usize
    }
}

/// The room on its own, for the models that check it against its
/// specification (`specs/room.rs`), reached through `internals::keyed`:
/// the same `Room` the channel uses.
pub struct RoomCounts(Room);

impl std::fmt::Debug for RoomCounts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RoomCounts").finish_non_exhaustive()
    }
}

/// Why [`RoomCounts::try_take`] took no room.
#[derive(Debug, PartialEq, Eq)]
pub enum NoRoom {
    /// `capacity` messages are taken and not received.
    Full,
    /// The receiver is gone.
    Closed,
}

impl RoomCounts {
    /// Room for `capacity` messages.
    pub fn new(capacity: usize) -> Self {
        RoomCounts(Room::new(capacity))
    }

    /// A sender's: takes room for one message; with `as_sleeper`, a
    /// `Full` counts the caller among the sleeping senders.
    pub fn try_take(&self, as_sleeper: bool) -> Result<(), NoRoom> {
        self.0
            .try_take(as_sleeper)
            .map_err(|refused| match refused {
                Refused::Full => NoRoom::Full,
                Refused::Closed => NoRoom::Closed,
            })
    }

    /// A sender's, once per `Full` that counted it asleep.
    pub fn uncount_sleeper(&self) {
        self.0.uncount_sleeper();
    }

    /// The receiver's, per message received: whether to wake a sender.
    pub fn free(&self) -> bool {
        self.0.free()
    }

    /// The receiver's: messages taken and not received.
    pub fn taken_not_received(&self) -> usize {
        self.0.taken_not_received()
    }

    /// The receiver's, once: refuses later takes; messages taken and not
    /// received.
    pub fn close(&self) -> usize {
        self.0.close()
    }

    /// The two words' situation, as models name it: (messages taken and
    /// not received, senders counted asleep, whether the senders' view of
    /// the received count lags, whether the taken count has wrapped past
    /// `MASK`, closed). A diagnostic for a scope's regimes: it
    /// synchronises with nothing.
    #[doc(hidden)]
    pub fn internals(&self) -> (u64, u64, bool, bool, bool) {
        self.0.situation()
    }
}
