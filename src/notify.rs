//! A notification with permit storage, a drop-in for `tokio::sync::Notify`.
//! Its API and semantics are tokio's: replacing `tokio::sync::Notify` by
//! `modelsync::notify::Notify` is an import change.
//!
//! ```
//! # if modelsync::sync::BACKEND != "std" { return; }
//! use modelsync::notify::Notify;
//! use std::sync::Arc;
//!
//! let notify = Arc::new(Notify::new());
//! let waiter = notify.clone().notified_owned();
//! notify.notify_one();
//! modelsync::block_on(waiter); // completes: it was the oldest waiter
//! notify.notify_one(); // nobody waits: stores the permit
//! modelsync::block_on(notify.notified()); // consumes it at once
//! ```
//!
//! # Synchronization
//!
//! What a user may rely on (the IDs are VERIFICATION.md's):
//!
//! - **A notification happens-before the wait it ends**: everything a thread
//!   did before `notify_one`, `notify_last` or `notify_waiters` is visible
//!   to the task whose `Notified` that call completes, once its poll (or
//!   `enable`) returns ready (N-9).
//! - **One permit.** `notify_one` or `notify_last` with nobody waiting
//!   stores a permit; many calls store one; the next `Notified` consumes it
//!   on its first poll or `enable` (N-1).
//! - **Order.** `notify_one` wakes the oldest registered waiter,
//!   `notify_last` the newest (N-2). A waiter registers on its first poll or
//!   `enable`, not when `notified()` creates it.
//! - **`notify_waiters` is a snapshot.** It completes every `Notified`
//!   created before it began, polled or not, and stores no permit. A
//!   `Notified` created after it returned is not completed by it, and a
//!   future it completed never consumes a permit stored by a later
//!   `notify_one` (N-3). "Before" and "after" are happens-before: the same
//!   thread, or threads that synchronised (a creation racing the call on
//!   an unsynchronised thread may see either side of it).
//! - **Nothing is lost to cancellation.** A `Notified` chosen by
//!   `notify_one` or `notify_last` and dropped before it completed passes
//!   the notification on, FIFO or LIFO as it was chosen, to the next
//!   waiter or into the permit; a `notify_waiters` notification is not
//!   passed on (N-4).
//! - **The latest waker is woken**: polling with a waker that would not wake
//!   the stored one replaces it; an equal one (`will_wake`) is kept (N-5).
//! - **No user code under the internal lock**: wakers are cloned before it
//!   is taken, and woken and dropped after it is released, so a waker may
//!   call back into the same `Notify` (even `notify_waiters` from its
//!   `Drop`). A waker that panics in `notify_waiters` leaves every other
//!   waiter notified and woken; the panic is then resumed (N-6).
//! - Waiting allocates nothing: a waiter is a node of an intrusive list
//!   inside its own `Notified` (N-7).
//!
//! Not promised: that a `Notified` which has not been polled or enabled
//! receives a `notify_one` (it is not registered yet; the call stores the
//! permit instead, which a concurrent waiter may take); fairness between a
//! registered waiter and a new `Notified` that finds the permit first.
//!
//! # Protocol
//!
//! One word, `state`, and a list of waiters under a lock.
//!
//! | bits of `state` | meaning |
//! |---|---|
//! | 0-1 | `EMPTY` (no permit, nobody waits), `WAITING` (the list is not empty), `NOTIFIED` (a permit is stored) |
//! | 2.. | the generation: how many times `notify_waiters` ran (wrapping) |
//!
//! Rules, each relied on where it is written:
//!
//! - `WAITING` is entered and left only under the lock, and under the lock
//!   it is set exactly when the list is non-empty. Lock-free code moves the
//!   bits only between `EMPTY` and `NOTIFIED` (a notifier storing the
//!   permit, a new waiter consuming it).
//! - The generation changes only under the lock, by `notify_waiters`, and
//!   always by an atomic read-modify-write when the bits are not `WAITING`,
//!   so a permit stored concurrently by a lock-free notifier survives.
//! - A `Notified` records the generation when it is created. It is
//!   completed by `notify_waiters` exactly when it sees a later generation,
//!   and it checks that before it looks at the permit.
//! - A waiter in the list has no notification. A notifier unlinks it under
//!   the lock, takes its waker, then publishes its notification (`ONE_FIFO`,
//!   `ONE_LIFO` or `ALL`) with Release; from then on the node and its waker
//!   belong to the `Notified` again, which may read the notification
//!   without the lock.
//! - `notify_waiters` moves the whole list into a ring of its own, anchored
//!   at a sentinel node on its stack, and notifies it in batches, releasing
//!   the lock to wake each batch. New waiters join the (now empty) main list
//!   under the new generation and are never in the ring. A waiter still in
//!   the ring that is polled or dropped meanwhile sees the new generation
//!   and unlinks itself: both lists are doubly linked, so unlinking needs
//!   no list head when the neighbours are nodes.
//!
//! # Memory ordering
//!
//! The permit and the generation carry the notifier's writes to the waiter
//! they complete: every write that stores the permit or advances the
//! generation is Release, and every read that consumes the permit or acts
//! on a new generation is Acquire. A waiter's notification is stored
//! Release and read Acquire when read without the lock. Everything else is
//! ordered by the lock and is Relaxed. Each site says which of these it is.

use std::fmt;
use std::future::Future;
use std::marker::PhantomPinned;
use std::panic::{RefUnwindSafe, UnwindSafe};
use std::pin::Pin;
use std::ptr::NonNull;
use std::task::{Context, Poll, Waker};

use crate::sync::atomic::{AtomicUsize, Ordering::*};
use crate::sync::{Mutex, UnsafeCell};

const EMPTY: usize = 0b00;
const WAITING: usize = 0b01;
const NOTIFIED: usize = 0b10;
const STATE_BITS: usize = 0b11;
/// One `notify_waiters` call: the generation is `state >> 2`.
const GENERATION_STEP: usize = 0b100;

fn bits_of(state: usize) -> usize {
    state & STATE_BITS
}

fn generation_of(state: usize) -> usize {
    state >> 2
}

fn with_bits(state: usize, bits: usize) -> usize {
    (state & !STATE_BITS) | bits
}

/// A waiter's notification, set once by the notifier that unlinks it.
const NOT_NOTIFIED: usize = 0;
const ONE_FIFO: usize = 1;
const ONE_LIFO: usize = 2;
const ALL: usize = 3;

/// How many wakers `notify_waiters` takes out under the lock before it
/// releases the lock to wake them: 32 as tokio's, 2 in model builds so that
/// three waiters cross a batch boundary.
const WAKE_BATCH: usize = if cfg!(any(loom, shuttle)) { 2 } else { 32 };

/// Which waiter `notify_one` (FIFO: the oldest) or `notify_last` (LIFO: the
/// newest) chooses; a dropped chosen waiter forwards with the same one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Strategy {
    Fifo,
    Lifo,
}

impl Strategy {
    fn notification(self) -> usize {
        match self {
            Strategy::Fifo => ONE_FIFO,
            Strategy::Lifo => ONE_LIFO,
        }
    }
}

/// A node of the waiter list, inside a `Notified`. `prev`, `next` and, while
/// the node is linked, `waker` are accessed only under the `Notify`'s lock.
struct Waiter {
    prev: UnsafeCell<Option<NonNull<Waiter>>>,
    next: UnsafeCell<Option<NonNull<Waiter>>>,
    waker: UnsafeCell<Option<Waker>>,
    notification: AtomicUsize,
    /// Linked nodes are pointed to: a `Waiter` must not move.
    _pinned: PhantomPinned,
}

impl Waiter {
    #[inline]
    fn new() -> Self {
        Waiter {
            prev: UnsafeCell::new(None),
            next: UnsafeCell::new(None),
            waker: UnsafeCell::new(None),
            notification: AtomicUsize::new(NOT_NOTIFIED),
            _pinned: PhantomPinned,
        }
    }
}

/// The waiters, oldest at `head`. Only ever accessed under the lock.
struct WaitList {
    head: Option<NonNull<Waiter>>,
    tail: Option<NonNull<Waiter>>,
}

// SAFETY: the list's pointers are dereferenced only under the `Notify`'s
// lock, and point into `Notified` futures that unlink themselves (under the
// same lock) before their memory goes away.
unsafe impl Send for WaitList {}

impl Waiter {
    /// The node before `node` in its list.
    ///
    /// # Safety
    /// The caller holds the `Notify`'s lock and `node` is alive.
    unsafe fn prev(node: NonNull<Self>) -> Option<NonNull<Self>> {
        // SAFETY: the caller's lock excludes every other access to links.
        unsafe { node.as_ref().prev.with(|l| *l) }
    }

    /// The node after `node` in its list.
    ///
    /// # Safety
    /// As [`prev`](Self::prev).
    unsafe fn next(node: NonNull<Self>) -> Option<NonNull<Self>> {
        // SAFETY: the caller's lock excludes every other access to links.
        unsafe { node.as_ref().next.with(|l| *l) }
    }

    /// # Safety
    /// As [`prev`](Self::prev).
    unsafe fn set_prev(node: NonNull<Self>, to: Option<NonNull<Self>>) {
        // SAFETY: the caller's lock excludes every other access to links.
        unsafe { node.as_ref().prev.with_mut(|l| *l = to) }
    }

    /// # Safety
    /// As [`prev`](Self::prev).
    unsafe fn set_next(node: NonNull<Self>, to: Option<NonNull<Self>>) {
        // SAFETY: the caller's lock excludes every other access to links.
        unsafe { node.as_ref().next.with_mut(|l| *l = to) }
    }

    /// Notifies the unlinked `node`: from here on the node and its waker
    /// slot belong to its `Notified` again.
    ///
    /// # Safety
    /// The caller holds the lock, `node` is alive, and the caller has just
    /// unlinked it (and taken its waker, if it wakes it).
    unsafe fn notify(node: NonNull<Self>, notification: usize) {
        // Release: hands the node and its waker slot back to the
        // `Notified`, which reads this with Acquire without the lock, and
        // publishes the notifier's writes to it (N-9).
        // SAFETY: the node is alive until its `Notified` sees this store.
        unsafe { node.as_ref() }
            .notification
            .store(notification, Release);
    }

    /// Takes the waker out of `node`.
    ///
    /// # Safety
    /// The caller owns the waker slot: it holds the lock while `node` is
    /// linked, or `node` is unlinked and the caller is its `Notified`.
    unsafe fn take_waker(node: NonNull<Self>) -> Option<Waker> {
        // SAFETY: the caller's ownership of the slot.
        unsafe { node.as_ref().waker.with_mut(|w| (*w).take()) }
    }
}

impl WaitList {
    const fn new() -> Self {
        WaitList {
            head: None,
            tail: None,
        }
    }

    fn is_empty(&self) -> bool {
        self.head.is_none()
    }

    /// Appends `node` as the newest waiter.
    ///
    /// # Safety
    /// The caller holds the lock; `node` is alive, pinned and in no list.
    unsafe fn push_back(&mut self, node: NonNull<Waiter>) {
        // SAFETY: the caller's lock and liveness guarantees.
        unsafe {
            Waiter::set_prev(node, self.tail);
            Waiter::set_next(node, None);
            match self.tail {
                Some(tail) => Waiter::set_next(tail, Some(node)),
                None => self.head = Some(node),
            }
        }
        self.tail = Some(node);
    }

    /// Unlinks `node` from the list it is in: this one, or a
    /// `notify_waiters` ring, whose nodes always have both neighbours (so
    /// `self`'s ends are never touched for them).
    ///
    /// # Safety
    /// The caller holds the lock; `node` is alive and linked.
    unsafe fn unlink(&mut self, node: NonNull<Waiter>) {
        // SAFETY: the caller's lock and liveness guarantees; neighbours of a
        // linked node are alive (they unlink themselves before they die).
        unsafe {
            let (before, after) = (Waiter::prev(node), Waiter::next(node));
            match before {
                Some(before) => Waiter::set_next(before, after),
                None => self.head = after,
            }
            match after {
                Some(after) => Waiter::set_prev(after, before),
                None => self.tail = before,
            }
            Waiter::set_prev(node, None);
            Waiter::set_next(node, None);
        }
    }

    /// Unlinks and returns the oldest (FIFO) or newest (LIFO) waiter.
    ///
    /// # Safety
    /// The caller holds the lock.
    unsafe fn pop(&mut self, strategy: Strategy) -> Option<NonNull<Waiter>> {
        let node = match strategy {
            Strategy::Fifo => self.head?,
            Strategy::Lifo => self.tail?,
        };
        // SAFETY: `node` is linked here; the caller holds the lock.
        unsafe { self.unlink(node) };
        Some(node)
    }
}

/// Notifies tasks: stores one permit, wakes the oldest or newest waiter,
/// or wakes every waiter at once. See the [module documentation](self).
pub struct Notify {
    state: AtomicUsize,
    waiters: Mutex<WaitList>,
}

impl UnwindSafe for Notify {}
impl RefUnwindSafe for Notify {}

impl Notify {
    /// A `Notify` with no permit.
    pub fn new() -> Self {
        Notify {
            state: AtomicUsize::new(EMPTY),
            waiters: Mutex::new(WaitList::new()),
        }
    }

    /// A `Notify` with no permit, in a `const` context (a `static`).
    /// `const` on std and shuttle; loom's types cannot be built in a
    /// `const` context, so under loom it is an ordinary function.
    #[cfg(not(loom))]
    pub const fn const_new() -> Self {
        Notify {
            state: AtomicUsize::new(EMPTY),
            waiters: Mutex::new(WaitList::new()),
        }
    }

    /// A `Notify` with no permit (not `const` under loom).
    #[cfg(loom)]
    pub fn const_new() -> Self {
        Self::new()
    }

    /// A future that completes when this `Notify` is notified: by a
    /// permit (stored now or later), by `notify_one` or `notify_last`
    /// choosing it once it is registered, or by a `notify_waiters` that
    /// begins after this call. It registers on its first poll or
    /// [`enable`](Notified::enable).
    #[inline] // a few stores: inlined into the caller's loop, as tokio's is
    pub fn notified(&self) -> Notified<'_> {
        Notified {
            notify: self,
            wait: Wait::new(self),
        }
    }

    /// As [`notified`](Self::notified), owning an `Arc` of the `Notify`,
    /// so the future is `'static` and can be spawned. (The `Arc` is std's
    /// on every backend: loom's cannot be a method receiver.)
    pub fn notified_owned(self: std::sync::Arc<Self>) -> OwnedNotified {
        let wait = Wait::new(&self);
        OwnedNotified { notify: self, wait }
    }

    /// Whether a permit is stored. A diagnostic for models: it synchronises
    /// with nothing, and may be stale by the time the caller reads it.
    #[doc(hidden)]
    pub fn has_permit(&self) -> bool {
        // Relaxed: a snapshot; nothing is read on its basis.
        bits_of(self.state.load(Relaxed)) == NOTIFIED
    }

    /// The state word, as models name its situations: `"empty"`,
    /// `"waiting"` or `"notified"`, and the generation. A diagnostic for
    /// a scope's regimes: it synchronises with nothing.
    #[doc(hidden)]
    pub fn internals(&self) -> (&'static str, usize) {
        // Relaxed: a snapshot; nothing is read on its basis.
        let state = self.state.load(Relaxed);
        let bits = match bits_of(state) {
            EMPTY => "empty",
            WAITING => "waiting",
            _ => "notified",
        };
        (bits, generation_of(state))
    }

    /// Wakes the oldest registered waiter, or stores the permit if nobody
    /// waits (at most one permit is stored).
    #[inline]
    pub fn notify_one(&self) {
        self.notify(Strategy::Fifo);
    }

    /// Wakes the newest registered waiter, or stores the permit if nobody
    /// waits.
    #[inline]
    pub fn notify_last(&self) {
        self.notify(Strategy::Lifo);
    }

    #[inline] // the common case, storing the permit, is one CAS
    fn notify(&self, strategy: Strategy) {
        // Relaxed: only seeds the CAS, which publishes.
        let mut state = self.state.load(Relaxed);
        while bits_of(state) != WAITING {
            // Release: publishes the caller's writes to the waiter that
            // consumes the permit with Acquire (N-9). A permit already
            // stored is rewritten all the same, so that this notifier's
            // writes are published too.
            match self
                .state
                .compare_exchange(state, with_bits(state, NOTIFIED), Release, Relaxed)
            {
                Ok(_) => return,
                // Relaxed: the value only decides the retry.
                Err(actual) => state = actual,
            }
        }
        self.notify_waiting(strategy);
    }

    /// Somebody waits: choosing a waiter needs the lock.
    fn notify_waiting(&self, strategy: Strategy) {
        let mut waiters = self.waiters.lock();
        let waker = self.notify_locked(&mut waiters, strategy);
        drop(waiters);
        if let Some(waker) = waker {
            waker.wake();
        }
    }

    /// Chooses a waiter with `strategy` and returns its waker to wake once
    /// the lock is released, or stores the permit if the list is empty.
    fn notify_locked(&self, waiters: &mut WaitList, strategy: Strategy) -> Option<Waker> {
        // Relaxed: under the lock, WAITING cannot change, and the other
        // bits are only used to seed the CAS below.
        let mut state = self.state.load(Relaxed);
        if bits_of(state) == WAITING {
            // SAFETY: we hold the lock.
            let node = unsafe { waiters.pop(strategy) }.expect("WAITING with an empty list");
            // SAFETY: we hold the lock and the node was linked, so it is
            // alive; its waker is ours to take until we notify it.
            let waker = unsafe { Waiter::take_waker(node) };
            if waiters.is_empty() {
                // Relaxed: WAITING -> EMPTY publishes nothing, and under the
                // lock nobody else moves the bits out of WAITING.
                self.state.store(with_bits(state, EMPTY), Relaxed);
            }
            // SAFETY: we hold the lock and just unlinked the node.
            unsafe { Waiter::notify(node, strategy.notification()) };
            return waker;
        }
        loop {
            // Release: as in `notify` (N-9). Relaxed on failure: a
            // lock-free notifier or consumer moved the bits; retry.
            match self
                .state
                .compare_exchange(state, with_bits(state, NOTIFIED), Release, Relaxed)
            {
                Ok(_) => return None,
                Err(actual) => state = actual,
            }
        }
    }

    /// Completes every `Notified` created before this call, polled or not,
    /// and stores no permit.
    ///
    /// # Panics
    /// If a waker panics when woken: after every other waiter was notified
    /// and woken, the first such panic is resumed.
    pub fn notify_waiters(&self) {
        let mut waiters = self.waiters.lock();
        // Relaxed: under the lock, WAITING and the generation cannot change.
        let state = self.state.load(Relaxed);
        if bits_of(state) != WAITING {
            // Nobody is registered; unregistered futures see the new
            // generation. A read-modify-write, not a load and a store: a
            // lock-free `notify_one` may be storing the permit right now
            // (N-1). Release: futures completed by the new generation read
            // it with Acquire (N-9).
            self.state.fetch_add(GENERATION_STEP, Release);
            return;
        }
        // Release: as above. A store is exact here: under the lock nobody
        // else moves the bits out of WAITING.
        self.state.store(
            with_bits(state.wrapping_add(GENERATION_STEP), EMPTY),
            Release,
        );

        // Declared before `ring`, so dropped after it, even when unwinding.
        let sentinel = std::pin::pin!(Waiter::new());
        let ring = Ring {
            notify: self,
            sentinel: NonNull::from(&*sentinel),
            drained: std::cell::Cell::new(false),
        };
        // SAFETY: we hold the lock; the sentinel is pinned and `ring`,
        // which drains the ring before it goes, is dropped before it.
        unsafe { ring.take_all(&mut waiters) };
        let mut panic = None;
        loop {
            let mut batch = WakeBatch::new();
            // SAFETY: we hold the lock.
            let more = unsafe { ring.notify_batch(&mut waiters, &mut batch) };
            // Wakers run with the lock released (N-6): a waker may call
            // back into this `Notify`.
            drop(waiters);
            batch.wake_all(&mut panic);
            if !more {
                break;
            }
            waiters = self.waiters.lock();
        }
        drop(ring);
        if let Some(payload) = panic {
            std::panic::resume_unwind(payload);
        }
    }
}

impl Default for Notify {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for Notify {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Relaxed: a snapshot for display.
        let state = self.state.load(Relaxed);
        let bits = match bits_of(state) {
            EMPTY => "empty",
            WAITING => "waiting",
            _ => "notified",
        };
        f.debug_struct("Notify")
            .field("state", &bits)
            .field("notify_waiters_calls", &generation_of(state))
            .finish()
    }
}

/// The waiters one `notify_waiters` call took, in a ring through a sentinel
/// node on its stack: both neighbours of every node in it are nodes, so a
/// waiter can unlink itself with [`WaitList::unlink`] without knowing which
/// list it is in. Dropping the ring notifies, under the lock, any node
/// still in it, so that no node points at the sentinel once it is gone.
struct Ring<'a> {
    notify: &'a Notify,
    sentinel: NonNull<Waiter>,
    /// Set once `notify_batch` found the ring empty.
    drained: std::cell::Cell<bool>,
}

impl Ring<'_> {
    /// Moves every waiter of `waiters` into the ring.
    ///
    /// # Safety
    /// The caller holds the lock (`waiters`), and the sentinel is pinned
    /// and outlives `self`.
    unsafe fn take_all(&self, waiters: &mut WaitList) {
        let (first, last) = match (waiters.head.take(), waiters.tail.take()) {
            (Some(first), Some(last)) => (first, last),
            _ => (self.sentinel, self.sentinel),
        };
        // SAFETY: the caller's lock; every node is alive while linked.
        unsafe {
            Waiter::set_next(self.sentinel, Some(first));
            Waiter::set_prev(first, Some(self.sentinel));
            Waiter::set_prev(self.sentinel, Some(last));
            Waiter::set_next(last, Some(self.sentinel));
        }
    }

    /// Unlinks the oldest node of the ring, if any.
    ///
    /// # Safety
    /// The caller holds the lock (`waiters`).
    unsafe fn pop(&self, waiters: &mut WaitList) -> Option<NonNull<Waiter>> {
        // SAFETY: the caller's lock; the ring always links the sentinel.
        let first = unsafe { Waiter::next(self.sentinel) }.expect("a ring is closed");
        if first == self.sentinel {
            return None;
        }
        // SAFETY: `first` is linked in the ring, whose nodes all have both
        // neighbours, so `waiters`' ends are not touched.
        unsafe { waiters.unlink(first) };
        Some(first)
    }

    /// Notifies up to a batch of waiters, taking their wakers into `batch`;
    /// returns whether any are left.
    ///
    /// # Safety
    /// The caller holds the lock (`waiters`).
    unsafe fn notify_batch(&self, waiters: &mut WaitList, batch: &mut WakeBatch) -> bool {
        while !batch.is_full() {
            // SAFETY: the caller holds the lock.
            let Some(node) = (unsafe { self.pop(waiters) }) else {
                self.drained.set(true);
                return false;
            };
            // SAFETY: the node was linked, so it is alive, and its waker is
            // ours until we notify it.
            let waker = unsafe { Waiter::take_waker(node) };
            batch.push(waker);
            // SAFETY: we hold the lock and just unlinked the node.
            unsafe { Waiter::notify(node, ALL) };
        }
        // SAFETY: the caller's lock; the ring always links the sentinel.
        let first = unsafe { Waiter::next(self.sentinel) };
        self.drained.set(first == Some(self.sentinel));
        !self.drained.get()
    }
}

impl Drop for Ring<'_> {
    fn drop(&mut self) {
        // Drained already, except after a panic out of `notify_waiters`'
        // loop with the lock released (wakers' panics are caught, and
        // nothing else there panics).
        if self.drained.get() {
            return;
        }
        let mut waiters = self.notify.waiters.lock();
        // SAFETY: we hold the lock.
        while let Some(node) = unsafe { self.pop(&mut waiters) } {
            // The waker stays in the node: dropping it here could panic
            // during an unwind.
            // SAFETY: we hold the lock and just unlinked the node.
            unsafe { Waiter::notify(node, ALL) };
        }
    }
}

/// Wakers taken out under the lock, woken after it is released.
struct WakeBatch {
    wakers: [Option<Waker>; WAKE_BATCH],
    len: usize,
}

impl WakeBatch {
    fn new() -> Self {
        WakeBatch {
            wakers: std::array::from_fn(|_| None),
            len: 0,
        }
    }

    fn is_full(&self) -> bool {
        self.len == WAKE_BATCH
    }

    /// Counts a notified waiter, keeping its waker if it registered one.
    fn push(&mut self, waker: Option<Waker>) {
        self.wakers[self.len] = waker;
        self.len += 1;
    }

    /// Wakes every waker; a panicking one does not stop the others, and the
    /// first panic is kept in `panic` for the caller to resume.
    fn wake_all(&mut self, panic: &mut Option<Box<dyn std::any::Any + Send>>) {
        for waker in self.wakers[..self.len].iter_mut().filter_map(Option::take) {
            let woken = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| waker.wake()));
            if let Err(payload) = woken {
                panic.get_or_insert(payload);
            }
        }
        self.len = 0;
    }
}

/// Where a `Notified` is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stage {
    /// Created; not registered.
    Init,
    /// Linked in a list (the `Notify`'s, or a `notify_waiters` ring).
    Waiting,
    /// Completed; every further poll is ready (the futures are fused).
    Done,
}

/// The part of [`Notified`] and [`OwnedNotified`] that waits: one
/// implementation behind both.
struct Wait {
    stage: Stage,
    /// The generation when the future was created.
    generation: usize,
    waiter: Waiter,
}

impl Wait {
    #[inline]
    fn new(notify: &Notify) -> Self {
        // Relaxed: a later generation is seen by a future whose creation
        // the `notify_waiters` that made it happens-before (coherence), and
        // one created before it cannot see it; no data is read on its basis.
        // Real time is not promised (N-3): a creation on a thread that has
        // not synchronised with that call may read the older generation.
        let generation = generation_of(notify.state.load(Relaxed));
        Wait {
            stage: Stage::Init,
            generation,
            waiter: Waiter::new(),
        }
    }
}

/// The pinned parts of a waiting future.
struct Pinned<'a> {
    notify: &'a Notify,
    stage: &'a mut Stage,
    generation: usize,
    waiter: &'a Waiter,
}

impl Pinned<'_> {
    /// Polls with `waker`, or enables (registers without a waker) when it is
    /// `None`.
    #[inline]
    fn poll(self, waker: Option<&Waker>) -> Poll<()> {
        match *self.stage {
            Stage::Done => Poll::Ready(()),
            Stage::Init => self.register(waker),
            Stage::Waiting => self.poll_waiting(waker),
        }
    }

    /// Whether the wait is over: `state` shows a new generation, or a
    /// permit of this generation is stored now, which this consumes.
    /// Otherwise returns the state it last saw: this generation, and no
    /// permit. One check for both sides of the lock, so that the permit is
    /// consumed by one piece of code wherever it is found.
    ///
    /// The permit is tried for even when `state` shows none, as tokio's
    /// first poll does: a lock-free notifier may have stored it since
    /// `state` was read, and a waiter that misses it goes to sleep and
    /// costs a wake-up. (With `notify_one` called in a loop, checking the
    /// loaded bits first sent 300 of every 500 wake-ups through a sleeping
    /// waiter, against 70 to 100 this way: BENCHMARKS.md.) Not when
    /// `state` shows waiters: a permit can follow only once a notifier has
    /// emptied the list, and the path under the lock looks again.
    fn complete_from(&self, state: usize) -> Result<(), usize> {
        // The generation first: a future that `notify_waiters` completed
        // must leave a later permit alone (N-3; tokio #7965).
        if generation_of(state) != self.generation {
            return Ok(());
        }
        if bits_of(state) == WAITING {
            return Err(state);
        }
        // Expects the permit at the generation checked above, so it is
        // consumed only by a future that generation has not completed.
        // Acquire on success: consumes the permit, and the notifier's
        // Release publishes its writes (N-9). Acquire on failure: the
        // value may show a new generation, which ends the wait too
        // (without the lock; under it the generation cannot change).
        match self.notify.state.compare_exchange(
            with_bits(state, NOTIFIED),
            with_bits(state, EMPTY),
            Acquire,
            Acquire,
        ) {
            Ok(_) => Ok(()),
            Err(actual) if generation_of(actual) != self.generation => Ok(()),
            Err(actual) => Err(actual),
        }
    }

    fn register(self, waker: Option<&Waker>) -> Poll<()> {
        // Acquire: a new generation read here ends the wait, and the
        // `notify_waiters` that made it published its writes with Release
        // (N-9). (A permit is consumed with Acquire by `complete_from`.)
        if self.complete_from(self.notify.state.load(Acquire)).is_ok() {
            *self.stage = Stage::Done;
            return Poll::Ready(());
        }
        // Cloned before the lock: a clone can run arbitrary code (N-6).
        let waker = waker.cloned();
        let mut waiters = self.notify.waiters.lock();
        // Relaxed: under the lock the generation and WAITING are stable (a
        // generation changed since the check above was changed under this
        // lock, which orders us after it: N-9), and a permit stored since
        // is consumed with Acquire by `complete_from`.
        let mut state = self.notify.state.load(Relaxed);
        let completed = loop {
            let seen = match self.complete_from(state) {
                Ok(()) => break true,
                Err(seen) => seen,
            };
            if bits_of(seen) == WAITING {
                break false;
            }
            // Relaxed: EMPTY -> WAITING publishes nothing; notifiers find
            // this node under the lock. Relaxed on failure: a lock-free
            // notifier stored the permit; check again.
            match self.notify.state.compare_exchange(
                seen,
                with_bits(seen, WAITING),
                Relaxed,
                Relaxed,
            ) {
                Ok(_) => break false,
                Err(actual) => state = actual,
            }
        };
        if completed {
            *self.stage = Stage::Done;
            drop(waiters);
            drop(waker);
            return Poll::Ready(());
        }
        // SAFETY: the node is ours (not linked yet) and we hold the lock.
        self.waiter.waker.with_mut(|w| unsafe { *w = waker });
        // SAFETY: we hold the lock; the node is pinned inside its future,
        // whose drop unlinks it, and is in no list.
        unsafe { waiters.push_back(NonNull::from(self.waiter)) };
        *self.stage = Stage::Waiting;
        Poll::Pending
    }

    fn poll_waiting(self, waker: Option<&Waker>) -> Poll<()> {
        // Acquire: pairs with the notifier's Release store; the node and
        // its waker are ours again if it is set (N-9).
        if self.waiter.notification.load(Acquire) != NOT_NOTIFIED {
            // SAFETY: the notification was observed with Acquire: the node
            // is unlinked and its waker is ours.
            drop(unsafe { Waiter::take_waker(NonNull::from(self.waiter)) });
            *self.stage = Stage::Done;
            return Poll::Ready(());
        }
        let mut waiters = self.notify.waiters.lock();
        if let Some(done) = self.finish_locked(&mut waiters) {
            drop(waiters);
            drop(done);
            *self.stage = Stage::Done;
            return Poll::Ready(());
        }
        let Some(waker) = waker else {
            return Poll::Pending; // `enable` again: nothing to change
        };
        // SAFETY: we hold the lock and the node is linked.
        let same = self
            .waiter
            .waker
            .with(|w| unsafe { &*w }.as_ref().is_some_and(|w| w.will_wake(waker)));
        if same {
            return Poll::Pending;
        }
        // A different task polls now: clone its waker without the lock
        // (N-6), then check again, since a notifier may have come by.
        drop(waiters);
        let waker = waker.clone();
        let mut waiters = self.notify.waiters.lock();
        if let Some(done) = self.finish_locked(&mut waiters) {
            drop(waiters);
            drop(done);
            drop(waker);
            *self.stage = Stage::Done;
            return Poll::Ready(());
        }
        // SAFETY: we hold the lock and the node is linked.
        let old = self
            .waiter
            .waker
            .with_mut(|w| unsafe { (*w).replace(waker) });
        drop(waiters);
        drop(old);
        Poll::Pending
    }

    /// Under the lock: if the waiter was notified, or a `notify_waiters`
    /// has taken it into its ring (the generation moved on: it would be
    /// notified in a moment), unlinks it if needed and returns its waker
    /// (possibly `None`) to drop after the lock; otherwise `None` (still
    /// waiting). The outer `Option` says which.
    fn finish_locked(&self, waiters: &mut WaitList) -> Option<Option<Waker>> {
        // Relaxed: notifications are stored under the lock we hold.
        let notified = self.waiter.notification.load(Relaxed) != NOT_NOTIFIED;
        if !notified {
            // Relaxed: the generation changes only under the lock.
            let state = self.notify.state.load(Relaxed);
            if generation_of(state) == self.generation {
                return None;
            }
            // SAFETY: we hold the lock; not notified, so still linked, in
            // a `notify_waiters` ring (N-3).
            unsafe { waiters.unlink(NonNull::from(self.waiter)) };
        }
        // SAFETY: unlinked, so the waker is ours.
        Some(unsafe { Waiter::take_waker(NonNull::from(self.waiter)) })
    }

    /// On drop: unlinks a waiting node, and passes a `notify_one` or
    /// `notify_last` notification it never consumed on (N-4).
    #[inline] // the common case, a future not waiting, costs one compare
    fn cancel(self) {
        if *self.stage == Stage::Waiting {
            self.cancel_waiting();
        }
    }

    fn cancel_waiting(self) {
        let mut waiters = self.notify.waiters.lock();
        // Relaxed: notifications are stored under the lock we hold.
        let notification = self.waiter.notification.load(Relaxed);
        let forwarded = match notification {
            NOT_NOTIFIED => {
                // SAFETY: we hold the lock; not notified, so linked.
                unsafe { waiters.unlink(NonNull::from(self.waiter)) };
                // Relaxed: under the lock, WAITING is stable.
                let state = self.notify.state.load(Relaxed);
                if waiters.is_empty() && bits_of(state) == WAITING {
                    // Only WAITING -> EMPTY: a permit stored meanwhile (we
                    // may have been in a ring) must survive (N-1; tokio
                    // #3652). Relaxed: as in `notify_locked`.
                    self.notify.state.store(with_bits(state, EMPTY), Relaxed);
                }
                None
            }
            ONE_FIFO => self.notify.notify_locked(&mut waiters, Strategy::Fifo),
            ONE_LIFO => self.notify.notify_locked(&mut waiters, Strategy::Lifo),
            _ => None, // `notify_waiters` notifications are not passed on
        };
        // SAFETY: unlinked (by us or a notifier), so the waker is ours.
        let own = unsafe { Waiter::take_waker(NonNull::from(self.waiter)) };
        drop(waiters);
        // The forwarded notification first: if our own waker's drop
        // panics, nobody's notification is lost.
        if let Some(waker) = forwarded {
            waker.wake();
        }
        drop(own);
    }
}

/// Future returned by [`Notify::notified`]: completes when notified.
///
/// Fused: once it has completed, every poll returns `Ready`. It registers
/// as a waiter on its first poll or [`enable`](Self::enable); dropping it
/// unregisters it and passes on a notification it was chosen for and did
/// not consume.
#[must_use = "futures do nothing unless polled or `.await`ed"]
pub struct Notified<'a> {
    notify: &'a Notify,
    wait: Wait,
}

/// Future returned by [`Notify::notified_owned`]: as [`Notified`], owning
/// an `Arc` of its `Notify`.
#[must_use = "futures do nothing unless polled or `.await`ed"]
pub struct OwnedNotified {
    notify: std::sync::Arc<Notify>,
    wait: Wait,
}

// SAFETY: the waiter's raw pointers are dereferenced only under the
// `Notify`'s lock, and every other field is owned or shared-safe; a
// `Notified` may be polled or dropped from any thread.
unsafe impl Send for Notified<'_> {}
// SAFETY: `&Notified` gives access to nothing (every method takes
// `Pin<&mut Self>`).
unsafe impl Sync for Notified<'_> {}
// SAFETY: as for `Notified`.
unsafe impl Send for OwnedNotified {}
// SAFETY: as for `Notified`.
unsafe impl Sync for OwnedNotified {}

macro_rules! waiting_future {
    ($future:ty) => {
        impl $future {
            /// Registers this future as a waiter without a waker, as its
            /// first poll would, so that a `notify_one` from now on can
            /// choose it (or the permit it finds is consumed now). Returns
            /// whether it is already notified; if so every poll is ready.
            pub fn enable(self: Pin<&mut Self>) -> bool {
                self.pinned().poll(None).is_ready()
            }

            /// The future's stage (`"init"`, `"waiting"` or `"done"`), the
            /// notification it was chosen for (`"none"`, `"fifo"`, `"lifo"`,
            /// `"all"`) and the generation it was created in. A diagnostic
            /// for a scope's regimes: it synchronises with nothing.
            #[doc(hidden)]
            pub fn internals(&self) -> (&'static str, &'static str, usize) {
                let stage = match self.wait.stage {
                    Stage::Init => "init",
                    Stage::Waiting => "waiting",
                    Stage::Done => "done",
                };
                // Relaxed: a snapshot; nothing is read on its basis.
                let notification = match self.wait.waiter.notification.load(Relaxed) {
                    NOT_NOTIFIED => "none",
                    ONE_FIFO => "fifo",
                    ONE_LIFO => "lifo",
                    _ => "all",
                };
                (stage, notification, self.wait.generation)
            }

            #[inline]
            fn pinned(self: Pin<&mut Self>) -> Pinned<'_> {
                // SAFETY: nothing is moved out; the waiter stays where it is
                // and is only ever shared.
                let this = unsafe { self.get_unchecked_mut() };
                Pinned {
                    notify: &this.notify,
                    stage: &mut this.wait.stage,
                    generation: this.wait.generation,
                    waiter: &this.wait.waiter,
                }
            }
        }

        impl Future for $future {
            type Output = ();

            #[inline]
            fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
                self.pinned().poll(Some(cx.waker()))
            }
        }

        impl Drop for $future {
            #[inline]
            fn drop(&mut self) {
                // SAFETY: a `Notified` is only ever polled pinned, and a
                // pinned value is dropped in place.
                unsafe { Pin::new_unchecked(self) }.pinned().cancel();
            }
        }

        impl fmt::Debug for $future {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_struct(stringify!($future))
                    .field("stage", &self.wait.stage)
                    .finish_non_exhaustive()
            }
        }
    };
}

waiting_future!(Notified<'_>);
waiting_future!(OwnedNotified);
