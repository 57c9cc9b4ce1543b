//! The envelope a received message lives in, and the stack that carries
//! envelopes of dropped messages back to the receiver.
//!
//! # An envelope's journey
//!
//! One allocation per message the receiver is holding or has handed out,
//! owned by exactly one party at a time, so that only the stack's head
//! word is ever shared:
//!
//! 1. the receiver takes a sent message from its slot (`slots.rs`) and
//!    puts it into an envelope (one kept from an earlier message, if it
//!    has one), which its key table queues and later hands out inside a
//!    `Message`;
//! 2. the `Message` reads the value, drops it (or gives it away with
//!    `into_value`), marks the envelope released and pushes it onto the
//!    stack;
//! 3. the receiver takes it, releases its keys, and keeps it for a later
//!    message (or frees it); once the receiver has gone, the `Message`
//!    frees it itself (the stack is closed).
//!
//! # The stack
//!
//! Treiber's stack with a take-all in place of a pop: pushers swing the
//! head with a compare-and-swap, the one taker swaps the head with null and
//! reverses what it took, oldest first. A pusher never reads through the
//! head it saw, only stores its address in its own envelope, so a head
//! freed and reallocated in between (ABA) cannot corrupt the list: the CAS
//! succeeds only if the head is that address now, which is all `next`
//! records.
//!
//! Before it sleeps, the taker swings an empty head to `WAITING` (a
//! sentinel address no allocation can have). The push that replaces
//! `WAITING` is the one that wakes it; later pushes land in the batch it
//! was woken for. Announcement and pushes are read-modify-writes of the one
//! head word, so they are totally ordered: either the announcement sees a
//! push (and the taker looks again instead of sleeping) or the push sees
//! the announcement (and wakes the taker). No fence, and no wake-up while
//! the taker is busy.
//!
//! When the taker leaves for good it swings the head to `closed` (the
//! address of the head word itself, never an envelope's), taking what was
//! pushed; a push that finds `closed` fails and hands its envelope back.
//! So every envelope pushed is either taken by the taker or handed back
//! to its pusher, never both and never neither.
//!
//! # Specification and contract
//!
//! As a component on its own (`specs/release_stack.rs`, checked by the
//! `keyed::release_stack_*` models, complete under loom): a sequence of
//! pushed values, an announcement flag and a closed flag. A push onto a
//! closed stack returns `Closed` with its value; otherwise it appends, and
//! returns `WakeTaker` if it withdrew an announcement (exactly one push
//! per announcement), else `Queued`. `announce_waiting` succeeds only on
//! an empty, unannounced stack. `take_all` and `close` return every value
//! pushed, in the order the pushes linearized, and withdraw an
//! announcement; after `close` every push is refused.
//!
//! What it assumes of its callers (`keyed/mod.rs` keeps it): one taker at
//! a time (the receiver) announces, takes and closes; it closes once and
//! takes nothing after; a pusher acts on `WakeTaker` (wakes the receiver,
//! whose parker it secured in `before_replacing_announcement`).

use std::marker::PhantomData;
use std::mem::ManuallyDrop;
use std::ptr;

use super::core::KeySet;
use crate::sync::atomic::{AtomicPtr, Ordering::*};
use crate::sync::UnsafeCell;

/// One message on its way: its keys, its value, and the link that chains
/// it in whichever stack holds it.
pub(super) struct Envelope<K, V> {
    /// The envelope below this one on a stack. Written by the envelope's
    /// owner only: the pusher before its CAS publishes the envelope, the
    /// taker after its swap took it.
    next: UnsafeCell<*mut Envelope<K, V>>,
    /// Deduplicated, in first-seen order (K-8).
    pub(super) keys: KeySet<K>,
    /// Present from `new` (or `refill`) until the `Message` holding the
    /// envelope drops or takes it; absent once `released`.
    pub(super) value: ManuallyDrop<V>,
    /// Set by the `Message` before it pushes the envelope back; written by
    /// the owner only, and published by the push like the rest. Until
    /// then, dropping the envelope drops its value: a message the receiver
    /// never handed out (its receiver went, or a key's `Eq` or `Clone`
    /// panicked while it was filed) is not leaked.
    pub(super) released: bool,
}

// SAFETY: an envelope moves between threads as a whole, owned by one party
// at a time; `next` (the raw pointer that stops the auto traits) is only
// accessed by that owner. It holds a `K` and a `V`, so it is `Send` when
// they are.
unsafe impl<K: Send, V: Send> Send for Envelope<K, V> {}
// SAFETY: a shared reference to an envelope reads only `keys` and `value`
// (a `Message` handing out `&V`); `next` is never touched through one
// while another thread could.
unsafe impl<K: Sync, V: Sync> Sync for Envelope<K, V> {}

impl<K, V> Envelope<K, V> {
    pub(super) fn new(keys: KeySet<K>, value: V) -> Box<Self> {
        Box::new(Envelope {
            next: UnsafeCell::new(ptr::null_mut()),
            keys,
            value: ManuallyDrop::new(value),
            released: false,
        })
    }

    /// Carries a new message: a released envelope, kept by the receiver.
    pub(super) fn refill(&mut self, keys: KeySet<K>, value: V) {
        debug_assert!(self.released, "refilled an envelope still in use");
        self.keys = keys;
        self.value = ManuallyDrop::new(value);
        self.released = false;
    }

    /// Drops the keys of a released envelope (its key table entries are
    /// gone), so that keys are not kept alive by a spare envelope.
    pub(super) fn empty_keys(&mut self) {
        self.keys = KeySet::empty();
    }
}

impl<K, V> Drop for Envelope<K, V> {
    fn drop(&mut self) {
        if !self.released {
            // SAFETY: an envelope not released still holds its value (only
            // a `Message` takes it, and it then marks the envelope
            // released), and this is the envelope's last use.
            unsafe { ManuallyDrop::drop(&mut self.value) };
        }
    }
}

/// The head of an empty stack whose taker waits: non-null and aligned,
/// and never an allocation's address (nothing is allocated at address
/// `align_of::<Envelope>()`), so never mistaken for an envelope.
fn waiting<K, V>() -> *mut Envelope<K, V> {
    ptr::NonNull::dangling().as_ptr()
}

/// What a push did.
pub(super) enum Pushed<K, V> {
    /// Pushed; the taker is busy or will look before it sleeps.
    Queued,
    /// Pushed in place of the taker's announcement: wake the taker.
    WakeTaker,
    /// The taker has left (`close`): the envelope is the pusher's again.
    Closed(Box<Envelope<K, V>>),
}

/// A stack many threads push envelopes onto and one thread empties at once.
pub(super) struct Stack<K, V> {
    head: AtomicPtr<Envelope<K, V>>,
    /// The stack owns the envelopes it holds.
    _owns: PhantomData<Box<Envelope<K, V>>>,
}

// SAFETY: the stack hands envelopes from the pushing thread to the taking
// one, as a channel does: sending and sharing it need the envelopes to be
// `Send`, and nothing more (no thread reads an envelope another holds).
unsafe impl<K: Send, V: Send> Send for Stack<K, V> {}
// SAFETY: as above; `push` and `take_all` through `&Stack` transfer
// ownership of whole envelopes, synchronised by the head's CAS and swap.
unsafe impl<K: Send, V: Send> Sync for Stack<K, V> {}

impl<K, V> Stack<K, V> {
    pub(super) fn new() -> Self {
        Stack {
            head: AtomicPtr::new(ptr::null_mut()),
            _owns: PhantomData,
        }
    }

    /// The head of a stack whose taker has left: the head word's own
    /// address, which no envelope can have.
    fn closed(&self) -> *mut Envelope<K, V> {
        ptr::addr_of!(self.head).cast_mut().cast()
    }

    /// Pushes `envelope`, or hands it back if the taker has left.
    /// `before_replacing_announcement` runs before each attempt to push in
    /// place of the taker's announcement: once that succeeds the taker may
    /// wake (even spuriously), take the envelope and leave, so whatever the
    /// pusher needs to wake it must be secured before.
    pub(super) fn push(
        &self,
        envelope: Box<Envelope<K, V>>,
        mut before_replacing_announcement: impl FnMut(),
    ) -> Pushed<K, V> {
        let envelope = Box::into_raw(envelope);
        let closed = self.closed();
        // Relaxed: the value only seeds the CAS, and it is never
        // dereferenced (the module documentation's ABA argument); nor is
        // `closed`, after which the pusher keeps its envelope.
        let mut head = self.head.load(Relaxed);
        loop {
            if head == closed {
                // SAFETY: never published (every CAS failed), so still
                // ours, from `Box::into_raw` above.
                return Pushed::Closed(unsafe { Box::from_raw(envelope) });
            }
            let below = if head == waiting() {
                before_replacing_announcement();
                ptr::null_mut()
            } else {
                head
            };
            // SAFETY: the envelope is ours until the CAS below publishes it.
            unsafe { (*envelope).next.with_mut(|next| *next = below) };
            // Release: publishes the envelope's contents and its `next` to
            // the taker's Acquire swap. Relaxed on failure: the actual head
            // only seeds the retry.
            match self
                .head
                .compare_exchange_weak(head, envelope, Release, Relaxed)
            {
                Ok(_) if head == waiting() => return Pushed::WakeTaker,
                Ok(_) => return Pushed::Queued,
                Err(actual) => head = actual,
            }
        }
    }

    /// Announces that the taker is about to wait: succeeds only if the
    /// stack is empty, and then the next push wakes the taker.
    pub(super) fn announce_waiting(&self) -> bool {
        // Relaxed: the announcement carries no data, and a push that
        // replaces it (the only reader that matters) is a later RMW of
        // the same word, ordered by it alone.
        self.head
            .compare_exchange(ptr::null_mut(), waiting(), Relaxed, Relaxed)
            .is_ok()
    }

    /// The head's situation (`ReleaseStack::internals` says which is
    /// which); a diagnostic for the models' regimes.
    pub(super) fn situation(&self) -> &'static str {
        // Relaxed: a snapshot; nothing is read on its basis.
        let head = self.head.load(Relaxed);
        if head.is_null() {
            "empty"
        } else if head == waiting() {
            "announced"
        } else if head == self.closed() {
            "closed"
        } else {
            "holding"
        }
    }

    /// Whether the taker has closed the stack: for a holder of the whole
    /// stack (its drop), when no push can run beside it.
    fn is_closed(&self) -> bool {
        // Relaxed: the caller has the stack to itself, so whatever handed
        // it over (a join, the last `Arc`) ordered every push and the
        // close before this load.
        self.head.load(Relaxed) == self.closed()
    }

    /// Takes every envelope pushed so far, oldest first (and withdraws an
    /// announcement).
    pub(super) fn take_all(&self) -> Batch<K, V> {
        // Acquire: pairs with every push's Release CAS (the swap reads the
        // last of them), so the envelopes' contents are visible.
        let head = self.head.swap(ptr::null_mut(), Acquire);
        debug_assert!(head != self.closed(), "taken from after closing");
        Batch::reversed(head)
    }

    /// Takes every envelope pushed so far, as `take_all`, and refuses every
    /// later push: the taker is leaving.
    pub(super) fn close(&self) -> Batch<K, V> {
        // Acquire: as `take_all`'s. A pusher that finds the stack closed
        // reads nothing the taker wrote, so nothing is released.
        let head = self.head.swap(self.closed(), Acquire);
        Batch::reversed(head)
    }
}

/// Envelopes taken from a stack, handed out oldest first.
pub(super) struct Batch<K, V> {
    next: *mut Envelope<K, V>,
    /// How many were taken (handed out or not).
    pub(super) len: usize,
}

impl<K, V> Batch<K, V> {
    /// The envelopes chained from `newest` (a head taken by a swap, or the
    /// `waiting` sentinel: none), put in push order.
    fn reversed(mut newest: *mut Envelope<K, V>) -> Self {
        if newest == waiting() {
            newest = ptr::null_mut();
        }
        let mut oldest = ptr::null_mut();
        let mut len = 0;
        while !newest.is_null() {
            // SAFETY: the swap made every envelope in the chain ours; each
            // is visited once and stays allocated (it is freed only after
            // `Batch` hands it out as a `Box`).
            let next = unsafe { (*newest).next.with_mut(|next| ptr::replace(next, oldest)) };
            oldest = newest;
            newest = next;
            len += 1;
        }
        Batch { next: oldest, len }
    }
}

impl<K, V> Iterator for Batch<K, V> {
    type Item = Box<Envelope<K, V>>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.next.is_null() {
            return None;
        }
        // SAFETY: the chain belongs to this batch alone (`take_all`
        // reversed it after the swap); each envelope came from
        // `Box::into_raw` in `push` and is turned back into a box once.
        let envelope = unsafe { Box::from_raw(self.next) };
        self.next = envelope.next.with(|next| {
            // SAFETY: the envelope is ours (see above).
            unsafe { *next }
        });
        Some(envelope)
    }
}

impl<K, V> Drop for Batch<K, V> {
    fn drop(&mut self) {
        // A batch given up part way (a key's `Eq` or `Clone` panicked)
        // frees what is left (released envelopes: no values).
        for envelope in self.by_ref() {
            drop(envelope);
        }
    }
}

/// The release stack on its own, carrying bare values, for the models that
/// check it against its specification (`specs/release_stack.rs`), reached
/// through `internals::keyed`. The same `Stack` the channel uses; only the
/// envelopes are filled with no keys.
pub struct ReleaseStack<V> {
    stack: Stack<u8, Option<V>>,
}

/// What [`ReleaseStack::push`] did.
#[derive(Debug, PartialEq, Eq)]
pub enum Push<V> {
    /// Pushed; the taker is busy or will look before it sleeps.
    Queued,
    /// Pushed in place of the taker's announcement: wake the taker.
    WakeTaker,
    /// The stack was closed: the value is the pusher's again.
    Closed(V),
}

fn take_value<V>(envelope: &mut Envelope<u8, Option<V>>) -> V {
    envelope
        .value
        .take()
        .expect("a pushed envelope carries its value")
}

impl<V> Default for ReleaseStack<V> {
    fn default() -> Self {
        ReleaseStack {
            stack: Stack::new(),
        }
    }
}

impl<V> ReleaseStack<V> {
    /// Pushes `value`, or hands it back if the stack was closed.
    pub fn push(&self, value: V) -> Push<V> {
        match self
            .stack
            .push(Envelope::new(KeySet::empty(), Some(value)), || {})
        {
            Pushed::Queued => Push::Queued,
            Pushed::WakeTaker => Push::WakeTaker,
            Pushed::Closed(mut envelope) => Push::Closed(take_value(&mut envelope)),
        }
    }

    /// The taker's: see `Stack::announce_waiting`.
    pub fn announce_waiting(&self) -> bool {
        self.stack.announce_waiting()
    }

    /// The taker's: everything pushed so far, oldest first.
    pub fn take_all(&self) -> Vec<V> {
        self.stack
            .take_all()
            .map(|mut envelope| take_value(&mut envelope))
            .collect()
    }

    /// The head's situation, as models name it: `"empty"`, `"announced"`
    /// (the taker waits), `"closed"` or `"holding"` (envelopes pushed and
    /// not taken). A diagnostic for a scope's regimes: it synchronises
    /// with nothing.
    #[doc(hidden)]
    pub fn internals(&self) -> &'static str {
        self.stack.situation()
    }

    /// The taker's, once: everything pushed so far, and every later push
    /// refused.
    pub fn close(&self) -> Vec<V> {
        self.stack
            .close()
            .map(|mut envelope| take_value(&mut envelope))
            .collect()
    }
}

impl<V> std::fmt::Debug for ReleaseStack<V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReleaseStack").finish_non_exhaustive()
    }
}

impl<V> Drop for ReleaseStack<V> {
    fn drop(&mut self) {
        if !self.stack.is_closed() {
            drop(self.stack.take_all());
        }
    }
}
