//! The ring: one owner ([`Local`]) and any number of stealers ([`Steal`]).
//!
//! # Protocol
//!
//! The ring has `capacity` slots addressed by free-running `u32` indices
//! (`index & mask`). Two words describe it:
//!
//! - `tail`: one past the last pushed item. Written only by the owner.
//! - `head`: packs `(steal, real)` (see `index.rs`). `real` is the next item
//!   to pop or steal; `steal` trails it while a stealer copies the slots
//!   `[steal, real)` out. Every change to `head` is a CAS.
//!
//! The slots `[steal, tail)` hold items, so the ring is full when
//! `tail - steal == capacity` (Q-3): slots claimed by a stealer are not free
//! until it releases them.
//!
//! | operation  | who     | what it does to the indices                                    |
//! |------------|---------|----------------------------------------------------------------|
//! | push_back  | owner   | write slot `tail`, then `tail += 1`                             |
//! | pop        | owner   | CAS `real += 1` (and `steal` with it when they were equal)      |
//! | overflow   | owner   | CAS `(r, r) -> (r + cap/2, r + cap/2)`, then move those items   |
//! | steal      | stealer | CAS `(s, s) -> (s, s + n)`, copy `n` slots, CAS `steal = real`  |
//!
//! The owner keeps the last head value it acquired (`Local::head_seen`).
//! Both halves only grow, so that value is a lower bound: a push checks room
//! against it and loads `head` only when the ring looks full, and a pop
//! starts its CAS from it rather than from a fresh load.
//!
//! Only one steal is in progress at a time: a stealer that sees
//! `steal != real` gives up (Q-4), which is what lets it release its claim
//! by setting `steal = real` without knowing how far pops moved `real`
//! meanwhile.
//!
//! # Memory ordering, in one paragraph
//!
//! Items travel owner -> stealer through the slot contents, published by the
//! owner's `Release` store of `tail` and acquired by the stealer's load of
//! it. Slots travel back stealer -> owner (free for reuse) through the
//! stealer's `Release` CAS that ends its steal, acquired by the owner's
//! Acquire read of `head` (a load, or a failed pop CAS) that produced the
//! head value it checks room against. Every other ordering exists so that a
//! thread that reads `head` then `tail` never sees a `tail` older than the
//! `real` it just read, which would make the available count underflow: see
//! the comment at each access.

use std::cell::Cell;
use std::fmt;
use std::marker::PhantomData;
use std::mem::MaybeUninit;

use super::index::{distance, pack, steal_count, unpack};
use super::Inject;
use crate::sync::atomic::{AtomicU32, AtomicU64, Ordering::*};
use crate::sync::{Arc, CachePadded, UnsafeCell};

const DEFAULT_CAPACITY: usize = 256;
/// Distances between indices must stay below `2^31` for wrapping
/// comparison to be exact (Q-5).
const MAX_CAPACITY: usize = 1 << 31;

/// `head` (CAS'd by the owner and every stealer), `tail` (written by the
/// owner) and the read-only fields sit on separate cache lines, as in st3
/// and crossbeam-deque.
struct Ring<T> {
    head: CachePadded<AtomicU64>,
    tail: CachePadded<AtomicU32>,
    mask: u32,
    slots: Box<[UnsafeCell<MaybeUninit<T>>]>,
}

// SAFETY: the ring moves `T`s between threads (so `T: Send`), and its
// protocol gives each slot a single accessor at a time, so sharing `&Ring`
// across threads never hands out `&T` to two threads at once; `T: Sync` is
// not needed.
unsafe impl<T: Send> Send for Ring<T> {}
// SAFETY: see `Send` above.
unsafe impl<T: Send> Sync for Ring<T> {}

/// The owner's handle: pushes and pops. Not `Sync`: only one thread owns
/// a ring at a time (it can be sent to another thread).
///
/// ```compile_fail
/// fn shared<T: Sync>() {}
/// shared::<modelsync::queue::Local<u32>>(); // `Local` is not `Sync`
/// ```
///
/// ```
/// fn sendable<T: Send>() {}
/// fn shared<T: Send + Sync + Clone>() {}
/// sendable::<modelsync::queue::Local<u32>>();
/// shared::<modelsync::queue::Steal<u32>>();
/// shared::<std::sync::Arc<modelsync::queue::Inject<u32>>>();
/// ```
pub struct Local<T> {
    ring: Arc<Ring<T>>,
    /// The last value of `ring.head` that this owner's push, pop or steal
    /// into it read or wrote, always through an Acquire read (or a CAS that
    /// succeeded on such a value). `steal` and `real` only grow, so it is a
    /// lower bound of both: `push_back` trusts it for room and loads `head`
    /// only when the ring looks full, and `pop` starts its CAS from it
    /// instead of loading. Neither then waits for a load that waits for the
    /// previous CAS (BENCHMARKS.md gives the measured effect).
    head_seen: u64,
    _not_sync: PhantomData<Cell<()>>,
}

/// A stealer's handle: takes half of the owner's items into another ring.
pub struct Steal<T>(Arc<Ring<T>>);

impl<T> Ring<T> {
    fn new(capacity: usize, start: u32) -> Self {
        assert!(
            capacity.is_power_of_two() && (2..=MAX_CAPACITY).contains(&capacity),
            "queue capacity must be a power of two between 2 and 2^31, got {capacity}"
        );
        let slots = (0..capacity)
            .map(|_| UnsafeCell::new(MaybeUninit::uninit()))
            .collect();
        Ring {
            head: CachePadded(AtomicU64::new(pack(start, start))),
            tail: CachePadded(AtomicU32::new(start)),
            mask: (capacity - 1) as u32,
            slots,
        }
    }

    fn capacity(&self) -> u32 {
        self.mask + 1
    }

    fn slot(&self, index: u32) -> &UnsafeCell<MaybeUninit<T>> {
        // SAFETY: `slots.len() == mask + 1`, so `index & mask` is in bounds.
        unsafe { self.slots.get_unchecked((index & self.mask) as usize) }
    }

    /// Moves the item out of slot `index`.
    ///
    /// # Safety
    /// The slot holds an initialised item that the caller has claimed: no
    /// other thread reads or writes it until the caller publishes that it
    /// is free, and the caller reads it at most once.
    unsafe fn take(&self, index: u32) -> T {
        // SAFETY: the caller's claim makes this the slot's only accessor, and
        // the item is initialised.
        self.slot(index)
            .with(|slot| unsafe { (*slot).assume_init_read() })
    }

    /// Writes `item` into slot `index`.
    ///
    /// # Safety
    /// The slot is free (empty or already moved out of) and no other thread
    /// accesses it until the caller publishes it.
    unsafe fn put(&self, index: u32, item: T) {
        // SAFETY: the caller guarantees exclusive access to a free slot.
        self.slot(index)
            .with_mut(|slot| unsafe { (*slot).write(item) });
    }

    /// The number of items not yet claimed, as a stealer sees it.
    fn len(&self) -> u32 {
        // Acquire: synchronises with the CAS that produced this head, so the
        // `tail` load below sees at least the tail that CAS's author saw and
        // `tail - real` cannot underflow (Q-2).
        let (_, real) = unpack(self.head.load(Acquire));
        // Acquire: pairs with the owner's Release store of `tail`, so a
        // caller that sees items also sees every write the owner made before
        // pushing them (what an `is_empty` -> wake -> steal hand-off relies on).
        let tail = self.tail.load(Acquire);
        distance(real, tail)
    }
}

impl<T> Drop for Ring<T> {
    fn drop(&mut self) {
        // Relaxed: the last `Arc` drop synchronises with every other handle's
        // drop, and no steal can be in progress without a live handle.
        let (steal, real) = unpack(self.head.load(Relaxed));
        let tail = self.tail.load(Relaxed);
        debug_assert_eq!(steal, real, "a ring was dropped during a steal");
        let mut index = real;
        while index != tail {
            // SAFETY: `&mut self` excludes every other accessor, and the slots
            // `[real, tail)` hold the items nobody took (Q-6).
            drop(unsafe { self.take(index) });
            index = index.wrapping_add(1);
        }
    }
}

impl<T> Local<T> {
    /// A ring of 256 slots.
    pub fn new() -> Self {
        Self::with_capacity(DEFAULT_CAPACITY)
    }

    /// A ring of `capacity` slots.
    ///
    /// # Panics
    /// If `capacity` is not a power of two between 2 and 2^31.
    pub fn with_capacity(capacity: usize) -> Self {
        Self::with_capacity_at_index(capacity, 0)
    }

    /// A ring whose indices start at `start` instead of 0, so that tests can
    /// place the `u32` wraparound at any step. Not part of the stable API.
    #[doc(hidden)]
    pub fn with_capacity_at_index(capacity: usize, start: u32) -> Self {
        Local {
            ring: Arc::new(Ring::new(capacity, start)),
            head_seen: pack(start, start),
            _not_sync: PhantomData,
        }
    }

    /// The number of slots, fixed at creation.
    pub fn capacity(&self) -> usize {
        self.ring.capacity() as usize
    }

    /// The number of items the owner can still pop or lose to stealers.
    pub fn len(&self) -> usize {
        // Relaxed: only the owner writes `tail`, so its own load is current;
        // `real` never passes any tail the owner has written, so the
        // difference cannot underflow whatever head value is read.
        let (_, real) = unpack(self.ring.head.load(Relaxed));
        let tail = self.ring.tail.load(Relaxed);
        distance(real, tail) as usize
    }

    /// Whether the owner holds no item (stealers may still be copying
    /// items out).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Slots a stealer has claimed and not yet released: non-zero only while
    /// a steal from this ring is in progress. A diagnostic for models; the
    /// answer may be stale by the time the caller reads it.
    #[doc(hidden)]
    pub fn claimed_by_stealer(&self) -> usize {
        // Relaxed: a snapshot for diagnostics; nothing is read on its basis.
        let (steal, real) = unpack(self.ring.head.load(Relaxed));
        distance(steal, real) as usize
    }

    /// The ring's indices as the owner sees them: `[steal, real, tail,
    /// real as last seen by the owner]` (see the protocol above). A
    /// diagnostic for models, which start scenarios from chosen regimes of
    /// these (`models/queue.rs`, "Every scenario of a scope"); stale as
    /// soon as read while stealers run.
    #[doc(hidden)]
    pub fn indices(&self) -> [u32; 4] {
        // Relaxed: a snapshot for diagnostics; nothing is read on its basis.
        let (steal, real) = unpack(self.ring.head.load(Relaxed));
        // Relaxed: only the owner, the caller, writes `tail`.
        let tail = self.ring.tail.load(Relaxed);
        [steal, real, tail, unpack(self.head_seen).1]
    }

    /// A new handle through which other threads steal from this ring.
    pub fn stealer(&self) -> Steal<T> {
        Steal(self.ring.clone())
    }

    /// Pushes `item`. When the ring is full, moves half of it plus `item` to
    /// `overflow` in one batch (oldest first), or only `item` if a steal is
    /// in progress and will free slots shortly.
    #[inline]
    pub fn push_back(&mut self, mut item: T, overflow: &Inject<T>) {
        // Bound once: through `self`, the compiler reloads the ring pointer
        // after every slot write, which it cannot prove leaves `self` alone.
        let ring = &*self.ring;
        // Relaxed: only the owner (this thread) writes `tail`.
        let tail = ring.tail.load(Relaxed);
        loop {
            let (steal, _) = unpack(self.head_seen);
            if distance(steal, tail) < ring.capacity() {
                // SAFETY: `steal` only grows, so the ring's `steal` is at
                // least the seen one and slot `tail` is outside
                // `[steal, tail)`: no item lives there and no stealer reads
                // it. The seen head was acquired (see `head_seen`), so the
                // last stealer's reads of this slot happen before our write.
                unsafe { ring.put(tail, item) };
                // Release: publishes the slot write to the stealer that
                // acquires this tail (Q-1).
                ring.tail.store(tail.wrapping_add(1), Release);
                return;
            }
            // Full by the last head we saw: look again before spilling.
            // Acquire: pairs with the Release CAS that ends a steal, so the
            // stealer's reads of the slots it freed happen before our write
            // into one of them (Q-1).
            let head = ring.head.load(Acquire);
            if head != self.head_seen {
                self.head_seen = head;
                continue;
            }
            match Self::spill(ring, head, tail, item, overflow) {
                Ok(head) => {
                    self.head_seen = head;
                    return;
                }
                // A stealer claimed items between our load and CAS: the
                // reload above will see it.
                Err(returned) => item = returned,
            }
        }
    }

    /// The full-ring path of `push_back`, kept out of line so that the
    /// common path inlines into the caller's loop: claims the oldest half
    /// of the ring and moves it, then `item`, to `overflow` under one lock.
    /// Called by the owner only, with the `head` it just acquired. Returns
    /// the head value it leaves (for `head_seen`), or `item` if the head
    /// moved under it.
    #[cold]
    #[inline(never)]
    fn spill(
        ring: &Ring<T>,
        head: u64,
        tail: u32,
        item: T,
        overflow: &Inject<T>,
    ) -> Result<u64, T> {
        let (steal, real) = unpack(head);
        if steal != real {
            // A stealer holds half the ring and will release it soon;
            // moving the other half would leave the ring nearly empty.
            overflow.push(item);
            return Ok(head);
        }
        let half = ring.capacity() / 2;
        debug_assert_eq!(distance(real, tail), ring.capacity());
        let moved_to = real.wrapping_add(half);
        // Release on success: a stealer that later acquires this head and
        // then loads `tail` must see a tail at least `moved_to` (Q-2).
        // Relaxed on failure: we only retry from a fresh Acquire load.
        let spilled = pack(moved_to, moved_to);
        if ring
            .head
            .compare_exchange(head, spilled, Release, Relaxed)
            .is_err()
        {
            return Err(item);
        }
        let taken = (0..half).map(|offset| {
            // SAFETY: the CAS claimed `[real, real + half)` for the owner:
            // stealers start at `moved_to` from now on, and each slot is read
            // once; the owner wrote these slots itself.
            unsafe { ring.take(real.wrapping_add(offset)) }
        });
        overflow.push_batch(taken.chain(std::iter::once(item)));
        Ok(spilled)
    }

    /// Pops the oldest item the owner still holds.
    pub fn pop(&mut self) -> Option<T> {
        // A guess, not a load. The CAS validates it: it succeeds only if
        // `head` still holds it. And a stale guess cannot report a false
        // empty: the ring's `real` lies between the seen `real` and `tail`
        // (it only moves towards `tail`), and pushes keep `tail` within
        // capacity of the seen head, so the wrapping `real == tail` is exact.
        let mut head = self.head_seen;
        let index = loop {
            let (steal, real) = unpack(head);
            // Relaxed: only the owner writes `tail`.
            let tail = self.ring.tail.load(Relaxed);
            if real == tail {
                return None;
            }
            let next_real = real.wrapping_add(1);
            // While no steal is in progress, `steal` follows `real`; during
            // one, `steal` belongs to the stealer, who resets it on release.
            let next = if steal == real {
                pack(next_real, next_real)
            } else {
                pack(steal, next_real)
            };
            // Release on success: a stealer that acquires this head and then
            // loads `tail` must see a tail at least `next_real` (Q-2). No
            // Acquire: success means `head` still holds the write we took
            // `head_seen` from, which was acquired then (`real` only grows,
            // so no other write leaves the same value).
            // Acquire on failure: the value becomes `head_seen`, which
            // `push_back` trusts for room without loading `head` (Q-1).
            match self
                .ring
                .head
                .compare_exchange(head, next, Release, Acquire)
            {
                Ok(_) => {
                    self.head_seen = next;
                    break real;
                }
                Err(actual) => {
                    self.head_seen = actual;
                    head = actual;
                }
            }
        };
        // SAFETY: the CAS moved `real` past `index`, so no stealer can claim
        // it; the owner wrote it, so no synchronisation is needed to read it.
        Some(unsafe { self.ring.take(index) })
    }
}

impl<T> Default for Local<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> Steal<T> {
    /// Takes half of the items (rounded up), returns one of them and pushes
    /// the rest into `dst`. Takes fewer when `dst` has less room, and none
    /// when the ring is empty or another steal is in progress.
    ///
    /// # Panics
    /// If `dst` is the ring this handle steals from.
    pub fn steal_into(&self, dst: &mut Local<T>) -> Option<T> {
        assert!(
            !Arc::ptr_eq(&self.0, &dst.ring),
            "steal_into: cannot steal from a queue into itself"
        );
        // Relaxed: `dst` is ours; only we write its tail.
        let dst_tail = dst.ring.tail.load(Relaxed);
        // Acquire: pairs with the Release CAS that ends a steal *from* `dst`,
        // so that stealer's reads of the slots we are about to overwrite
        // happen before our writes (Q-1, the chained-steal case); the value
        // then becomes `dst`'s `head_seen`, which its pushes trust likewise.
        let dst_head = dst.ring.head.load(Acquire);
        dst.head_seen = dst_head;
        let (dst_steal, _) = unpack(dst_head);
        let room = dst.ring.capacity() - distance(dst_steal, dst_tail);

        // One item is returned rather than stored, so `room + 1` may move.
        let (first, count) = self.claim(room + 1)?;

        let last = first.wrapping_add(count - 1);
        for offset in 0..count - 1 {
            // SAFETY: `claim` gave us `[first, first + count)` of the source,
            // and `[dst_tail, dst_tail + count - 1)` is within `dst`'s room,
            // which only we (its owner) write.
            unsafe {
                let item = self.0.take(first.wrapping_add(offset));
                dst.ring.put(dst_tail.wrapping_add(offset), item);
            }
        }
        // SAFETY: `last` is the final slot of our claim.
        let returned = unsafe { self.0.take(last) };
        self.release(first, count);
        if count > 1 {
            // Release: publishes the copied slots to `dst`'s stealers (Q-1).
            dst.ring
                .tail
                .store(dst_tail.wrapping_add(count - 1), Release);
        }
        Some(returned)
    }

    /// Claims half of the available items, at most `limit`. Returns the first
    /// claimed index and the count, or `None` if there is nothing to take or
    /// another steal is in progress.
    fn claim(&self, limit: u32) -> Option<(u32, u32)> {
        let ring = &*self.0;
        // Acquire: synchronises with the CAS that produced this head, so the
        // `tail` load below is at least the tail its author saw (Q-2).
        let mut head = ring.head.load(Acquire);
        loop {
            let (steal, real) = unpack(head);
            if steal != real {
                return None;
            }
            // Acquire: pairs with the owner's Release store of `tail`, making
            // the slots below it readable (Q-1).
            let tail = ring.tail.load(Acquire);
            // With a stale `head` this can exceed the capacity; the CAS below
            // then fails, so it is checked only once the claim succeeds.
            let available = distance(real, tail);
            let count = steal_count(available).min(limit);
            if count == 0 {
                return None;
            }
            // Release on success: whoever reads our head and then `tail`
            // (`Steal::len`) must see a tail at least `real + count`, which
            // may be newer than the owner's last head write (Q-2). No
            // Acquire: a successful CAS read the very write the Acquire
            // load (or failure) above read, as `real` only ever grows, so
            // it is already synchronised with (mutation report, class b).
            // Acquire on failure: the retry uses the value as a fresh load.
            match ring.head.compare_exchange(
                head,
                pack(steal, real.wrapping_add(count)),
                Release,
                Acquire,
            ) {
                Ok(_) => {
                    // The CAS proved `head` current, so `tail - real` is a
                    // real count: a larger one means the head/tail orderings
                    // failed to keep `tail` at least `real` (Q-2).
                    assert!(
                        available <= ring.capacity(),
                        "queue invariant Q-2 broken: claimed against {available} items \
                         in a ring of {}",
                        ring.capacity()
                    );
                    return Some((real, count));
                }
                Err(actual) => head = actual,
            }
        }
    }

    /// Ends our steal of `[first, first + count)`: sets `steal` to `real`,
    /// freeing the slots we copied. Pops may have moved `real` meanwhile, so
    /// the CAS retries with whatever `real` is now.
    fn release(&self, first: u32, count: u32) {
        let ring = &*self.0;
        let mut head = pack(first, first.wrapping_add(count));
        loop {
            let (steal, real) = unpack(head);
            debug_assert_eq!(steal, first, "only the claiming stealer moves `steal`");
            // Release on success: our reads of the claimed slots happen
            // before the owner's Acquire load of head that lets it reuse
            // them (Q-1). Relaxed on failure: only the value is reused.
            match ring
                .head
                .compare_exchange(head, pack(real, real), Release, Relaxed)
            {
                Ok(_) => return,
                Err(actual) => head = actual,
            }
        }
    }

    /// The number of items not yet claimed, at the moment of the call. A
    /// caller that sees items also sees every write the owner made before
    /// pushing them (Q-12).
    pub fn len(&self) -> usize {
        self.0.len() as usize
    }

    /// Whether no item was left to claim at the moment of the call, with
    /// the same synchronisation as [`len`](Self::len).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl<T> Clone for Steal<T> {
    fn clone(&self) -> Self {
        Steal(self.0.clone())
    }
}

impl<T> fmt::Debug for Local<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Local")
            .field("len", &self.len())
            .field("capacity", &self.capacity())
            .finish()
    }
}

impl<T> fmt::Debug for Steal<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Steal").field("len", &self.len()).finish()
    }
}
