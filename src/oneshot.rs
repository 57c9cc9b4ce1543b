//! A lock-free channel for sending one value, API-compatible with
//! `tokio::sync::oneshot`.
//!
//! # Protocol
//!
//! The channel is one allocation shared by the two ends: a state word, the
//! value slot, and one waker slot per side. The state word's bits:
//!
//! | bit          | set by          | meaning                                                   |
//! |--------------|-----------------|-----------------------------------------------------------|
//! | `COMPLETE`   | sender          | the sender is done: the value slot holds the value, or is empty because the sender was dropped |
//! | `CLOSED`     | receiver        | the receiver closed or was dropped: no value will be taken |
//! | `RX_WAKER`   | receiver        | the receiver's waker slot is set; the sender may read it  |
//! | `TX_WAKER`   | sender          | the sender's waker slot is set; the receiver may read it  |
//!
//! Slot ownership follows the bits (O-1):
//!
//! - The value slot belongs to the sender until it sets `COMPLETE`, then to
//!   the receiver. `COMPLETE` is set by a CAS that fails if `CLOSED` is
//!   set, so a value sent to a closed channel goes back to the sender and
//!   a value the receiver may read was never taken back (O-2).
//! - The receiver's waker slot belongs to the receiver while `RX_WAKER` is
//!   clear. To replace its waker, the receiver clears `RX_WAKER`; if that
//!   reveals `COMPLETE`, the sender may be reading the slot, so the
//!   receiver puts the bit back and leaves the slot alone. The sender's
//!   waker slot mirrors this with `TX_WAKER` and `CLOSED`.
//!
//! The value is dropped exactly once (O-3): by the receiver when it takes
//! it or is dropped after `COMPLETE`, by the sender when `send` fails, or
//! with the allocation if neither happened. It is never dropped on the
//! sender's thread once `send` returned `Ok`.
//!
//! # Synchronization
//!
//! What a user may rely on (the IDs are VERIFICATION.md's):
//!
//! - **A value sent happens-before it is received**: everything the sender
//!   did before `send(v)` is visible to the thread that receives `v`, by
//!   awaiting the `Receiver`, `try_recv` or `blocking_recv` (O-1).
//! - **Closing happens-before the sender sees it**: everything the receiver
//!   did before `close()` or its drop is visible to a sender that sees the
//!   channel closed, through `is_closed` or `closed()` (O-6).
//! - A value is received if and only if `send` returned `Ok`; otherwise
//!   `send` hands it back (O-2). It is dropped exactly once, and never on
//!   the sender's thread once `send` returned `Ok` (O-3).
//! - The task waiting on either end is woken exactly once by the event it
//!   waits for, and it is the task that polled last (O-4).
//!
//! Not promised: `is_closed() == false` does not mean a `send` will
//! succeed (the receiver may close in between); `try_recv` returning
//! `Empty` says nothing about the next instant.
//!
//! # In place of tokio's
//!
//! `use modelsync::oneshot;` in place of `use tokio::sync::oneshot;` is
//! the whole change: the types, methods, errors and panics are tokio's.
//! One difference depends on a feature: [`Receiver::blocking_recv`]
//! detects that it was called inside a *tokio* runtime (and panics there,
//! as tokio's does) only with this crate's `tokio` feature; its
//! documentation says exactly what is detected with and without it.
//!
//! # Memory ordering
//!
//! An access that publishes a slot this side just wrote (the value, or a
//! waker) is `Release`; one after which this side reads a slot the other
//! side published is `Acquire`; setting `COMPLETE` and `CLOSED` does both
//! (`AcqRel`). Accesses that only inspect bits, or restore a waker bit,
//! are `Relaxed`. Each site names its pairing; `mutants/REPORT.md` names
//! the model that fails when it is weakened.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use crate::sync::atomic::{AtomicUsize, Ordering::*};
use crate::sync::{Arc, UnsafeCell};

const COMPLETE: usize = 0b0001;
const CLOSED: usize = 0b0010;
const RX_WAKER: usize = 0b0100;
const TX_WAKER: usize = 0b1000;

/// Whether any of `bits` is set in `state`. Every test of the state word goes
/// through here, so a logic mutant of a test is a mutant of this
/// function, which every test of the channel exercises.
#[inline(always)]
fn is_set(state: usize, bits: usize) -> bool {
    state & bits != 0
}

pub mod error {
    //! Errors returned by the oneshot channel.
    use std::fmt;

    /// The sender was dropped without sending.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct RecvError(pub(super) ());

    impl fmt::Display for RecvError {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("channel closed")
        }
    }

    impl std::error::Error for RecvError {}

    /// Why `try_recv` returned no value.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum TryRecvError {
        /// No value yet; the sender is still alive.
        Empty,
        /// The sender was dropped without sending, the receiver was closed
        /// before a value arrived, or the value was already received.
        Closed,
    }

    impl fmt::Display for TryRecvError {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            match self {
                TryRecvError::Empty => f.write_str("channel empty"),
                TryRecvError::Closed => f.write_str("channel closed"),
            }
        }
    }

    impl std::error::Error for TryRecvError {}
}

use error::{RecvError, TryRecvError};

struct Inner<T> {
    state: AtomicUsize,
    value: UnsafeCell<Option<T>>,
    rx_waker: UnsafeCell<Option<Waker>>,
    tx_waker: UnsafeCell<Option<Waker>>,
}

// SAFETY: the ends move `T` between threads (`T: Send`); the protocol gives
// each slot one accessor at a time, so `T: Sync` is not needed. Wakers are
// `Send + Sync`.
unsafe impl<T: Send> Send for Inner<T> {}
// SAFETY: see `Send` above.
unsafe impl<T: Send> Sync for Inner<T> {}

/// Sends the value. Created by [`channel`].
pub struct Sender<T> {
    inner: Option<Arc<Inner<T>>>,
}

/// Receives the value: a future, or [`try_recv`](Receiver::try_recv) /
/// [`blocking_recv`](Receiver::blocking_recv).
pub struct Receiver<T> {
    inner: Option<Arc<Inner<T>>>,
}

/// A channel for one value.
pub fn channel<T>() -> (Sender<T>, Receiver<T>) {
    let inner = Arc::new(Inner {
        state: AtomicUsize::new(0),
        value: UnsafeCell::new(None),
        rx_waker: UnsafeCell::new(None),
        tx_waker: UnsafeCell::new(None),
    });
    (
        Sender {
            inner: Some(inner.clone()),
        },
        Receiver { inner: Some(inner) },
    )
}

impl<T> Inner<T> {
    /// Sets `COMPLETE` unless the receiver closed; wakes the receiver.
    /// Returns whether the channel completed.
    fn complete(&self) -> bool {
        // Relaxed: only seeds the CAS; if it shows CLOSED we return without
        // touching anything the receiver published.
        let mut state = self.state.load(Relaxed);
        loop {
            if is_set(state, CLOSED) {
                return false;
            }
            // AcqRel on success: Release publishes the value slot to the
            // receiver; Acquire takes the receiver's waker slot (O-1).
            // Relaxed on failure: the retry only inspects the bits; the
            // successful CAS is what acquires (mutation report, class b).
            match self
                .state
                .compare_exchange(state, state | COMPLETE, AcqRel, Relaxed)
            {
                Ok(_) => break,
                Err(actual) => state = actual,
            }
        }
        if is_set(state, RX_WAKER) {
            // SAFETY: RX_WAKER was set when we set COMPLETE, and the
            // receiver does not write its waker slot once it sees COMPLETE.
            self.rx_waker.with(|waker| {
                if let Some(waker) = unsafe { &*waker } {
                    waker.wake_by_ref();
                }
            });
        }
        true
    }

    /// Sets `CLOSED`; wakes the sender if it waits in `closed()`, no value
    /// was sent and the channel was not closed before. Returns the previous
    /// state.
    fn close(&self) -> usize {
        // AcqRel: Release tells the sender we will not read the value slot;
        // Acquire takes the value slot (if COMPLETE) and the sender's waker
        // slot (if TX_WAKER) (O-1).
        let previous = self.state.fetch_or(CLOSED, AcqRel);
        // Wake only on the first close, and only if the sender may still
        // be waiting (it is gone once COMPLETE is set).
        if is_set(previous, TX_WAKER) && !is_set(previous, COMPLETE | CLOSED) {
            // SAFETY: TX_WAKER was set when we set CLOSED, and the sender
            // does not write its waker slot once it sees CLOSED.
            self.tx_waker.with(|waker| {
                if let Some(waker) = unsafe { &*waker } {
                    waker.wake_by_ref();
                }
            });
        }
        previous
    }

    /// A sender dropped without sending: completes with an empty slot, so
    /// the receiver sees `RecvError`.
    #[inline(never)]
    fn drop_unsent(this: Arc<Self>) {
        this.complete();
    }

    /// A receiver dropped before it completed: closes the channel, and drops
    /// a value already sent.
    #[inline(never)]
    fn drop_unreceived(this: Arc<Self>) {
        if is_set(this.close(), COMPLETE) {
            // SAFETY: COMPLETE observed by `close`'s Acquire RMW; this is
            // the receiver's last access. Dropping the value here keeps it
            // off the sender's thread (O-3).
            drop(unsafe { this.take_value() });
        }
    }

    /// Takes the value.
    ///
    /// # Safety
    /// `COMPLETE` was observed with Acquire by the receiver, which calls
    /// this at most once.
    unsafe fn take_value(&self) -> Option<T> {
        // SAFETY: after COMPLETE the value slot belongs to the receiver.
        self.value.with_mut(|value| unsafe { (*value).take() })
    }

    /// Registers `waker` in the slot guarded by `bit`, unless `done` is set.
    /// Returns `true` if `done` was set (the caller is ready), `false` if
    /// the waker is registered (the caller is pending). Every path that
    /// returns `true` has observed `done` with Acquire, so the caller owns
    /// what the other side published before setting it.
    fn register(
        &self,
        slot: &UnsafeCell<Option<Waker>>,
        bit: usize,
        done: usize,
        waker: &Waker,
    ) -> bool {
        // Acquire: takes the slots published with `done` (O-1).
        let state = self.state.load(Acquire);
        if is_set(state, done) {
            return true;
        }
        if is_set(state, bit) {
            // SAFETY: the bit is set, so the other side may only read the
            // slot; so do we.
            let same = slot.with(|current| {
                unsafe { &*current }
                    .as_ref()
                    .is_some_and(|w| w.will_wake(waker))
            });
            if same {
                return false;
            }
            // Acquire: if `done` is now set we return ready, and own what it
            // published; it also keeps our slot write below after the
            // clear. No Release: clearing publishes nothing (class b).
            let state = self.state.fetch_and(!bit, Acquire);
            if is_set(state, done) {
                // The other side may be reading the slot: restore the bit
                // and leave the slot alone.
                // Relaxed: the slot is unchanged, nothing new to publish.
                self.state.fetch_or(bit, Relaxed);
                return true;
            }
        }
        // SAFETY: the bit is clear, so the other side does not read the slot.
        slot.with_mut(|current| unsafe { *current = Some(waker.clone()) });
        // AcqRel: Release publishes the slot write to the other side;
        // Acquire takes what `done` published if it was set meanwhile.
        let state = self.state.fetch_or(bit, AcqRel);
        is_set(state, done)
    }
}

impl<T> Sender<T> {
    /// Sends `value`. Fails, giving it back, if the receiver was closed or
    /// dropped. A value sent successfully is dropped by the receiver's side,
    /// never on this thread.
    pub fn send(mut self, value: T) -> Result<(), T> {
        let inner = self
            .inner
            .take()
            .expect("a Sender always holds the channel until send");
        // SAFETY: before COMPLETE the value slot belongs to the sender.
        // `write`, not `=`: the slot is known empty, so there is no old
        // value to drop (and no check for one).
        inner
            .value
            .with_mut(|slot| unsafe { slot.write(Some(value)) });
        if inner.complete() {
            return Ok(());
        }
        // SAFETY: COMPLETE was not set, so the slot is still ours.
        let value = inner.value.with_mut(|slot| unsafe { (*slot).take() });
        Err(value.expect("the value written above"))
    }

    /// Whether the receiver was closed or dropped.
    pub fn is_closed(&self) -> bool {
        let inner = self
            .inner
            .as_ref()
            .expect("a Sender holds the channel until send");
        // Acquire: a caller that sees the channel closed also sees what
        // the receiver wrote before closing it.
        is_set(inner.state.load(Acquire), CLOSED)
    }

    /// Polls for the receiver being closed or dropped, registering the
    /// task's waker.
    pub fn poll_closed(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        let inner = self
            .inner
            .as_ref()
            .expect("a Sender holds the channel until send");
        if inner.register(&inner.tx_waker, TX_WAKER, CLOSED, cx.waker()) {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    }

    /// Completes when the receiver is closed or dropped.
    pub async fn closed(&mut self) {
        std::future::poll_fn(|cx| self.poll_closed(cx)).await
    }
}

impl<T> Drop for Sender<T> {
    // Only a check here, so that dropping a spent handle (after `send`)
    // inlines into the caller; the work is out of line.
    #[inline]
    fn drop(&mut self) {
        if let Some(inner) = self.inner.take() {
            Inner::drop_unsent(inner);
        }
    }
}

impl<T> Receiver<T> {
    /// Takes the value if it has been sent; `Empty` if not yet, `Closed` if
    /// it never will be (or was already received).
    ///
    /// `Ok` and `Closed` are final, as a ready poll is: the receiver is
    /// terminated (see [`is_terminated`](Self::is_terminated)), later calls
    /// return `Closed`, and polling it panics, as tokio's does.
    pub fn try_recv(&mut self) -> Result<T, TryRecvError> {
        let Some(inner) = self.inner.as_ref() else {
            return Err(TryRecvError::Closed);
        };
        // Acquire: takes the value slot published with COMPLETE (O-1).
        let state = inner.state.load(Acquire);
        let result = if is_set(state, COMPLETE) {
            // SAFETY: COMPLETE observed with Acquire; the receiver then
            // forgets the channel, so it takes the value at most once.
            unsafe { inner.take_value() }.ok_or(TryRecvError::Closed)
        } else if is_set(state, CLOSED) {
            Err(TryRecvError::Closed)
        } else {
            return Err(TryRecvError::Empty);
        };
        self.inner = None;
        result
    }

    /// Whether this receiver has completed: a poll returned `Ready`, or
    /// `try_recv` returned a value or `Closed`. A terminated receiver must
    /// not be polled again (it panics).
    pub fn is_terminated(&self) -> bool {
        self.inner.is_none()
    }

    /// Whether no value is waiting to be received: none was sent yet, the
    /// sender was dropped without sending, the channel was closed before a
    /// value arrived, or the value was already received. An empty receiver
    /// is not necessarily safe to poll: see
    /// [`is_terminated`](Self::is_terminated).
    pub fn is_empty(&self) -> bool {
        let Some(inner) = self.inner.as_ref() else {
            return true;
        };
        // Acquire: pairs with `complete`'s Release, so that the value slot
        // read below is the sender's finished write (O-1).
        if !is_set(inner.state.load(Acquire), COMPLETE) {
            return true;
        }
        // SAFETY: COMPLETE observed with Acquire: the value slot belongs to
        // the receiver, and this only reads it.
        inner.value.with(|value| unsafe { (*value).is_none() })
    }

    /// The state word's bits set, as models name them (`"complete"`,
    /// `"closed"`, `"rx_waker"`, `"tx_waker"`), or `None` once the
    /// receiver terminated. A diagnostic for a scope's regimes: it
    /// synchronises with nothing.
    #[doc(hidden)]
    pub fn internals(&self) -> Option<Vec<&'static str>> {
        let inner = self.inner.as_ref()?;
        // Relaxed: a snapshot; nothing is read on its basis.
        let state = inner.state.load(Relaxed);
        let names = [
            (COMPLETE, "complete"),
            (CLOSED, "closed"),
            (RX_WAKER, "rx_waker"),
            (TX_WAKER, "tx_waker"),
        ];
        Some(
            names
                .iter()
                .filter(|(bit, _)| is_set(state, *bit))
                .map(|(_, name)| *name)
                .collect(),
        )
    }

    /// Closes the channel: a later `send` fails and gives its value back. A
    /// value sent before the close can still be received.
    pub fn close(&mut self) {
        if let Some(inner) = self.inner.as_ref() {
            inner.close();
        }
    }

    /// Blocks this thread until the value arrives.
    ///
    /// # Panics
    /// Where blocking would stall the tasks the thread drives, with tokio's
    /// message ("Cannot block the current thread from within a
    /// runtime..."), as tokio's `blocking_recv` does. What is detected:
    ///
    /// - always: a task of a modelsync [`Runtime`](crate::runtime::Runtime),
    ///   and inside [`Runtime::block_on`](crate::runtime::Runtime::block_on);
    ///   also inside [`block_on`](crate::block_on::block_on) on the same
    ///   thread (`block_on`'s own panic: it does not nest);
    /// - with the crate's `tokio` feature (off by default): every place
    ///   tokio's own blocking calls panic, as tokio itself decides: a task
    ///   of a tokio runtime and inside a tokio runtime's `block_on`, of
    ///   either flavour; not inside `spawn_blocking` or `block_in_place`,
    ///   where tokio allows blocking.
    ///
    /// Without the feature, a call in a tokio task or a tokio runtime's
    /// `block_on` is not detected: it blocks that thread until the value
    /// arrives (a tokio worker stops running its other tasks meanwhile,
    /// and a current-thread runtime whose task would send the value
    /// deadlocks). Other executors are never detected: as with
    /// `futures::executor::block_on`, blocking inside one blocks it.
    #[track_caller]
    pub fn blocking_recv(self) -> Result<T, RecvError> {
        crate::runtime::assert_may_block();
        crate::block_on::block_on(self)
    }
}

impl<T> Future for Receiver<T> {
    type Output = Result<T, RecvError>;

    /// # Panics
    /// If polled again after it completed.
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        // tokio's message, then ours.
        let inner = self
            .inner
            .as_ref()
            .expect("called after complete: oneshot::Receiver polled after it completed");
        if !inner.register(&inner.rx_waker, RX_WAKER, COMPLETE | CLOSED, cx.waker()) {
            return Poll::Pending;
        }
        // Relaxed: `register` returned ready only after an Acquire access
        // that saw COMPLETE or CLOSED, so the value slot is already ours
        // (mutation report, class b).
        let state = inner.state.load(Relaxed);
        let value = if is_set(state, COMPLETE) {
            // SAFETY: COMPLETE observed with Acquire; the receiver forgets
            // the channel below, so it takes the value at most once.
            unsafe { inner.take_value() }
        } else {
            None
        };
        self.inner = None;
        Poll::Ready(value.ok_or(RecvError(())))
    }
}

impl<T> Drop for Receiver<T> {
    // As `Sender`'s: a spent receiver (after it completed) costs a check.
    #[inline]
    fn drop(&mut self) {
        if let Some(inner) = self.inner.take() {
            Inner::drop_unreceived(inner);
        }
    }
}

impl<T> fmt::Debug for Sender<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sender").finish_non_exhaustive()
    }
}

impl<T> fmt::Debug for Receiver<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Receiver").finish_non_exhaustive()
    }
}
