//! The senders' queue: sent messages, in the order they took their
//! places, on their way to the receiver.
//!
//! # The list of blocks
//!
//! A linked list of blocks of `BLOCK_CAP` slots each, in the design of
//! crossbeam-channel's unbounded `list` flavour, cut down to one reader:
//! a sender claims the next position with a compare-and-swap of `tail`,
//! writes its message into the slot and sets the slot's `WRITTEN` bit; the
//! receiver reads the slots in position order, each once its bit is set,
//! and is done with a block when it has read its last slot. Memory follows
//! the queue: nothing is allocated up front (a capacity of 2^31 - 1 costs
//! nothing until it is used), blocks come and go with the messages, and
//! neither senders nor the receiver allocate per message. The receiver
//! reads consecutive slots, which the prefetcher follows, rather than
//! chasing one pointer per message.
//!
//! A block the receiver is done with is kept in `recycled` (one at most;
//! any other is freed), and the sender that installs the next block takes
//! it instead of allocating: in a steady stream no block is allocated at
//! all, and none is freed on a thread other than the one that allocated
//! it (glibc's slow path, which showed in the sync benchmark's profile:
//! HISTORY.md).
//!
//! `tail` counts positions: each block covers `LAP` of them, the last of
//! which (offset `BLOCK_CAP`) is no slot but marks "the next block is being
//! installed". The sender that claims a block's last slot installs the
//! next block before it writes its message: it stores the new block in
//! `tail_block` and its block's `next`, then moves `tail` past the marker.
//! Senders that meet the marker wait for that (yielding); they never look
//! inside a block before their claim succeeds.
//!
//! # Why a block can be freed or reused when its last slot is read
//!
//! A sender's claim succeeds only if `tail` still holds the position it
//! read, so the block it read after that position (`tail_block`, made
//! visible by the `Acquire` that read the position) is the block the
//! position lies in. It then touches only its own slot, and last of all
//! its slot's state word. The receiver reads every slot of a block, each
//! after an `Acquire` load that sees its `WRITTEN` bit, so every sender's
//! accesses to the block happen-before the receiver frees it; and the
//! installer stored `next` before it wrote the last slot, so the receiver
//! finds `next` when it is done with the block. Senders whose claim
//! failed never dereferenced the block at all. A recycled block passes
//! from the receiver to its next installer through `recycled` (a `Release`
//! swap, an `Acquire` swap), and the installer clears its state words and
//! `next` before it publishes the block, as it publishes a new one.
//!
//! # Waking the receiver
//!
//! Before it sleeps, the receiver marks the slot it waits for (the next
//! one to read) `WAITING`, with a compare-and-swap that fails if the slot
//! is already written; the sender that writes the slot sets `WRITTEN` with
//! a read-modify-write, sees the mark, and wakes the receiver. One word
//! per slot and two totally ordered read-modify-writes: either the mark
//! fails (look again) or the writer sees it. No fence, and no wake-up
//! while the receiver is busy. A mark left behind when something else woke
//! the receiver costs one needless wake-up later, never a lost one.
//!
//! # Specification and contract
//!
//! As a component on its own (`specs/slot_list.rs`, checked by the
//! `keyed::slot_list_*` models, complete under loom): the places from the
//! reader's on, in claim order, each written or not, and a mark on the
//! reader's next place. A push is two steps within its call, claiming its
//! place and writing it; the write answers "wake the reader" exactly when
//! the place is the reader's next and marked. `pop` takes the next place
//! if it is written, and answers `None` otherwise, even when later places
//! are written: a place claimed and not yet written is visible to the
//! reader, which is why the channel's `try_recv` waits for it when the
//! room says a message is on its way (`Inbox::try_recv_exact`).
//! `announce_waiting` marks the next place unless it is written.
//!
//! What it assumes of its callers (`keyed/mod.rs` keeps it): one reader
//! at a time; a sender pushes only with room taken
//! (`Shared::try_reserve`), so positions never outrun what the reader
//! will read; the reader reads every claimed place before it is dropped
//! (the receiver's drop reads what was sent before it closed the room).

use std::mem::MaybeUninit;
use std::ptr;

use super::core::KeySet;
use crate::sync::atomic::{AtomicPtr, AtomicUsize, Ordering::*};
use crate::sync::{thread, CachePadded, UnsafeCell};

/// Positions a block covers: its slots and the "next block being
/// installed" marker. Small under the models and Miri, so that a few
/// messages cross blocks.
const LAP: usize = if cfg!(any(loom, shuttle, miri)) {
    3
} else {
    32
};
/// Slots per block.
const BLOCK_CAP: usize = LAP - 1;

/// A slot's state word: empty, `WRITTEN` (the message is there), or
/// `WAITING` (empty, and the receiver sleeps until it is written).
const WRITTEN: usize = 1;
const WAITING: usize = 2;

struct Slot<K, V> {
    state: AtomicUsize,
    message: UnsafeCell<MaybeUninit<(KeySet<K>, V)>>,
}

struct Block<K, V> {
    /// The block after this one, stored by the sender that claims this
    /// block's last slot, before it writes that slot.
    next: AtomicPtr<Block<K, V>>,
    slots: [Slot<K, V>; BLOCK_CAP],
}

impl<K, V> Block<K, V> {
    fn new() -> Box<Self> {
        Box::new(Block {
            next: AtomicPtr::new(ptr::null_mut()),
            slots: std::array::from_fn(|_| Slot {
                state: AtomicUsize::new(0),
                message: UnsafeCell::new(MaybeUninit::uninit()),
            }),
        })
    }

    /// Makes a recycled block (every slot read, so no message in it) as
    /// good as new.
    fn clear(&self) {
        // Relaxed: the block is this thread's alone (`Slots::spare_block`);
        // the installer publishes it, and these stores with it, as it
        // publishes a new block (`Slots::push`).
        self.next.store(ptr::null_mut(), Relaxed);
        for slot in &self.slots {
            slot.state.store(0, Relaxed);
        }
    }
}

/// The senders' side: where the next message goes.
pub(super) struct Slots<K, V> {
    /// The next position to claim (see the module documentation).
    tail: CachePadded<AtomicUsize>,
    /// The block `tail` lies in, once `tail` is past the marker of the
    /// block before.
    tail_block: AtomicPtr<Block<K, V>>,
    /// A block the receiver is done with, for the next installer; null if
    /// none.
    recycled: AtomicPtr<Block<K, V>>,
}

// SAFETY: `Slots` moves `(KeySet<K>, V)`s from senders to the receiver, as
// a channel does; a slot is written by the one sender that claimed it and
// read by the receiver after its `WRITTEN` bit, so no `&K` or `&V` is ever
// shared between threads through it.
unsafe impl<K: Send, V: Send> Send for Slots<K, V> {}
// SAFETY: as above.
unsafe impl<K: Send, V: Send> Sync for Slots<K, V> {}

/// The receiver's side: the next slot to read. There is one; it owns
/// every block from its own to the tail's, and frees each when it is done
/// with it (or when it is dropped: see `Reader::drop`).
pub(super) struct Reader<K, V> {
    block: *mut Block<K, V>,
    offset: usize,
}

// SAFETY: the reader is the one party that reads slots and frees blocks;
// moving it to another thread moves that role along.
unsafe impl<K: Send, V: Send> Send for Reader<K, V> {}

/// A new, empty queue: the senders' side and the receiver's.
pub(super) fn new<K, V>() -> (Slots<K, V>, Reader<K, V>) {
    let first = Box::into_raw(Block::new());
    (
        Slots {
            tail: CachePadded(AtomicUsize::new(0)),
            tail_block: AtomicPtr::new(first),
            recycled: AtomicPtr::new(ptr::null_mut()),
        },
        Reader {
            block: first,
            offset: 0,
        },
    )
}

impl<K, V> Slots<K, V> {
    /// The list's situation with `reader` as its reader
    /// (`SlotReader::internals` says which is which); a diagnostic for the
    /// models' regimes.
    pub(super) fn situation(&self, reader: &Reader<K, V>) -> (usize, usize, bool) {
        // Relaxed, both: a snapshot; nothing is read on its basis.
        let tail = self.tail.load(Relaxed);
        let recycled = !self.recycled.load(Relaxed).is_null();
        (tail, reader.offset, recycled)
    }

    /// A block for the next installer: the recycled one if any, cleared,
    /// or a new one.
    fn spare_block(&self) -> Box<Block<K, V>> {
        // Acquire: pairs with the receiver's Release swap in `recycle`, so
        // its reads of the block (after every sender's writes to it)
        // happen-before this thread writes to it again.
        let recycled = self.recycled.swap(ptr::null_mut(), Acquire);
        if recycled.is_null() {
            return Block::new();
        }
        // SAFETY: `recycle` stored a block from `Box::into_raw` that nobody
        // else touches any more, and the swap made it this thread's alone.
        let block = unsafe { Box::from_raw(recycled) };
        block.clear();
        block
    }

    /// Keeps a block the receiver is done with for the next installer, or
    /// frees it if one is kept already.
    fn recycle(&self, block: Box<Block<K, V>>) {
        // Release: publishes the receiver's reads of the block (and, by
        // them, every sender's writes) to the installer's Acquire swap.
        let displaced = self.recycled.swap(Box::into_raw(block), Release);
        if !displaced.is_null() {
            // SAFETY: a recycled block that no installer took: this swap
            // took it back, and nobody else holds it.
            drop(unsafe { Box::from_raw(displaced) });
        }
    }

    /// Appends a message; returns whether the receiver waits for it, and
    /// must be woken. The caller holds one of the channel's slots
    /// (`Shared::try_reserve`), and the receiver reads every claimed
    /// position before it frees the block: see `Reader::drop`.
    pub(super) fn push(&self, message: (KeySet<K>, V)) -> bool {
        let mut spare: Option<Box<Block<K, V>>> = None;
        // Acquire: pairs with the installer's Release `fetch_add`, so that
        // the `tail_block` loaded next is the block this position lies in
        // (or a later one, and then the claim fails).
        let mut tail = self.tail.load(Acquire);
        let (block, offset) = loop {
            let offset = tail % LAP;
            if offset == BLOCK_CAP {
                // The next block is being installed.
                thread::yield_now();
                // Acquire: as the first load.
                tail = self.tail.load(Acquire);
                continue;
            }
            if offset + 1 == BLOCK_CAP && spare.is_none() {
                // Prepared before the claim, to keep the others' wait at
                // the marker short.
                spare = Some(self.spare_block());
            }
            // Relaxed: the `Acquire` that read `tail` already ordered the
            // installation of the block `tail` lies in before this load; a
            // later block makes the claim below fail.
            let block = self.tail_block.load(Relaxed);
            // Relaxed on success: the claim publishes nothing, and the
            // load of `tail` already synchronised with the installer.
            // Acquire on failure: the position read seeds the next try, as
            // the first load.
            match self
                .tail
                .compare_exchange_weak(tail, tail.wrapping_add(1), Relaxed, Acquire)
            {
                Ok(_) => break (block, offset),
                Err(actual) => tail = actual,
            }
        };
        if offset + 1 == BLOCK_CAP {
            let next = Box::into_raw(spare.take().expect("allocated above"));
            // Relaxed: published by the `fetch_add` below.
            self.tail_block.store(next, Relaxed);
            // Release: the new block (its allocation and `tail_block`)
            // happens-before every claim in it, whose `tail` load is
            // Acquire and reads this or a later value in its release
            // sequence (the claims are read-modify-writes). Moves `tail`
            // past the marker.
            self.tail.fetch_add(1, Release);
            // SAFETY: the claim made `block` this position's block, which
            // the receiver frees only after reading this sender's slot.
            // Relaxed: the receiver loads `next` after an Acquire load that
            // sees this block's last slot written, which comes after this.
            unsafe { (*block).next.store(next, Relaxed) };
        }
        // SAFETY: as above; the slot is this sender's alone until its
        // `WRITTEN` bit is set.
        let slot = unsafe { &(*block).slots[offset] };
        slot.message.with_mut(|cell| {
            // SAFETY: this sender claimed the slot; nobody reads it before
            // `WRITTEN`.
            unsafe { (*cell).write(message) };
        });
        // Release: publishes the message to the receiver's Acquire load.
        // The read part needs no ordering: `WAITING` carries no data.
        let before = slot.state.fetch_or(WRITTEN, Release);
        before & WAITING != 0
    }
}

impl<K, V> Reader<K, V> {
    fn slot(&self) -> &Slot<K, V> {
        // SAFETY: the reader's block is allocated until the reader frees
        // it, and `offset < BLOCK_CAP`.
        unsafe { &(*self.block).slots[self.offset] }
    }

    /// The next message, if it has been written. A place claimed and not
    /// yet written answers `None`: the user's `try_recv` waits for it
    /// (`Inbox::next_ready`, which knows from the room that a message is
    /// on its way), a blocking receive marks the place and sleeps until
    /// the writer wakes it (`announce_waiting`). `slots` is this queue's
    /// senders' side, which keeps the blocks the reader is done with.
    pub(super) fn pop(&mut self, slots: &Slots<K, V>) -> Option<(KeySet<K>, V)> {
        let slot = self.slot();
        // Acquire: pairs with the writer's Release `fetch_or`, so that the
        // message (and, for a block's last slot, `next`) is visible.
        if slot.state.load(Acquire) & WRITTEN == 0 {
            return None;
        }
        let message = slot.message.with(|cell| {
            // SAFETY: written (the bit says so), and read once: the reader
            // moves past the slot below and never returns to it.
            unsafe { (*cell).assume_init_read() }
        });
        self.offset += 1;
        if self.offset == BLOCK_CAP {
            // SAFETY: the block is the reader's; its last slot was written,
            // and its writer stored `next` first.
            // Relaxed: made visible by the Acquire load above.
            let next = unsafe { (*self.block).next.load(Relaxed) };
            debug_assert!(!next.is_null(), "the installer stores next first");
            // SAFETY: every slot of the block has been read, each after an
            // Acquire load that saw its writer's last access; no sender
            // touches the block again (see the module documentation).
            slots.recycle(unsafe { Box::from_raw(self.block) });
            self.block = next;
            self.offset = 0;
        }
        Some(message)
    }

    /// Whether the next place is marked waited for and not yet written: an
    /// announcement standing (a diagnostic for the models' regimes).
    pub(super) fn announced(&self) -> bool {
        // Relaxed: a snapshot; nothing is read on its basis.
        self.slot().state.load(Relaxed) == WAITING
    }

    /// Announces that the receiver is about to wait for the next message:
    /// false if it has been written since the last `pop` (look again).
    /// After a true answer, the sender that writes it wakes the receiver.
    pub(super) fn announce_waiting(&self) -> bool {
        // Relaxed: the mark carries no data; the writer's `fetch_or` (a
        // later read-modify-write of the same word) is all that reads it.
        // A mark already there (left by an earlier wait) stands.
        match self
            .slot()
            .state
            .compare_exchange(0, WAITING, Relaxed, Relaxed)
        {
            Ok(_) => true,
            Err(state) => state & WRITTEN == 0,
        }
    }
}

impl<K, V> Drop for Slots<K, V> {
    /// Frees the recycled block, if any (the reader frees its own).
    fn drop(&mut self) {
        // Relaxed: `&mut self`, so no other thread can access it.
        let recycled = self.recycled.load(Relaxed);
        if !recycled.is_null() {
            // SAFETY: a recycled block from `Box::into_raw`, held by nobody
            // else: the receiver is gone and no sender is left.
            drop(unsafe { Box::from_raw(recycled) });
        }
    }
}

impl<K, V> Drop for Reader<K, V> {
    /// Frees the reader's block. The receiver's drop reads every message
    /// sent before it closed the channel (and none can be sent after), so
    /// the block holds no unread message and has no successor: the next
    /// block is installed only by the claim of this block's last slot,
    /// which the reader would have read and moved past.
    fn drop(&mut self) {
        // SAFETY: the block is the reader's, and no sender will touch it
        // again: every claimed slot has been read.
        let block = unsafe { Box::from_raw(self.block) };
        // Relaxed: a diagnostic; see above for why it is null.
        debug_assert!(block.next.load(Relaxed).is_null(), "a block after the last");
    }
}

/// The slot list on its own, carrying bare values, for the models that
/// check it against its specification (`specs/slot_list.rs`), reached
/// through `internals::keyed`: the same `Slots` and `Reader` the channel
/// uses, with messages of no keys. [`slot_list`] makes one.
pub struct SlotWriter<V> {
    slots: std::sync::Arc<Slots<u8, V>>,
}

/// The slot list's one reader (see [`SlotWriter`]).
pub struct SlotReader<V> {
    reader: Reader<u8, V>,
    slots: std::sync::Arc<Slots<u8, V>>,
}

/// A new, empty slot list: its writers' side (cloned for each writer) and
/// its reader.
pub fn slot_list<V>() -> (SlotWriter<V>, SlotReader<V>) {
    let (slots, reader) = new();
    let slots = std::sync::Arc::new(slots);
    (
        SlotWriter {
            slots: slots.clone(),
        },
        SlotReader { reader, slots },
    )
}

impl<V> Clone for SlotWriter<V> {
    fn clone(&self) -> Self {
        SlotWriter {
            slots: self.slots.clone(),
        }
    }
}

impl<V> SlotWriter<V> {
    /// Appends `value`; true if the reader announced that it waits for
    /// it (the caller wakes it).
    pub fn push(&self, value: V) -> bool {
        self.slots.push((KeySet::empty(), value))
    }
}

impl<V> SlotReader<V> {
    /// The next value, if its place has been written.
    pub fn pop(&mut self) -> Option<V> {
        self.reader.pop(&self.slots).map(|(_, value)| value)
    }

    /// Marks the next place as waited for; false if it is written (look
    /// again).
    pub fn announce_waiting(&self) -> bool {
        self.reader.announce_waiting()
    }

    /// The list's situation, as models name it: (`tail`, the next
    /// position to claim, `LAP` per block, the last of each the "next
    /// block being installed" marker; the reader's offset in its block; whether a recycled block waits
    /// for the next installer). A diagnostic for a scope's regimes: it
    /// synchronises with nothing.
    #[doc(hidden)]
    pub fn internals(&self) -> (usize, usize, bool) {
        self.slots.situation(&self.reader)
    }
}

impl<V> Drop for SlotReader<V> {
    /// Reads (and drops) what is left: the reader must read every claimed
    /// place before its block is freed (`Reader::drop`), as the channel's
    /// receiver does. Every push has returned by now (the writers' side
    /// would otherwise still be in use on another thread).
    fn drop(&mut self) {
        while self.pop().is_some() {}
    }
}

impl<V> std::fmt::Debug for SlotWriter<V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SlotWriter").finish_non_exhaustive()
    }
}

impl<V> std::fmt::Debug for SlotReader<V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SlotReader").finish_non_exhaustive()
    }
}
