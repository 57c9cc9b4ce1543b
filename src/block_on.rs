//! Runs a future to completion on the current thread.
//!
//! Each thread caches one [`Parker`] and a [`Waker`] that unparks it, so a
//! call allocates nothing after the thread's first (B-1). The future is
//! polled; when it is pending the thread parks until the waker, called from
//! any thread, stores the parker's permit. A wake that arrives while the
//! future is being polled leaves the permit stored, so the next `park`
//! returns at once and the future is polled again: no wake-up is lost (B-2).
//!
//! # Synchronization
//!
//! What a user may rely on (the IDs are VERIFICATION.md's):
//!
//! - **A wake happens-before the poll it causes**: everything a thread did
//!   before calling `wake` (or `wake_by_ref`) on the waker `block_on` gave
//!   the future is visible in the next poll, through the parker's permit
//!   (P-4). No wake is lost, whether it arrives before the first poll,
//!   during a poll or while the thread sleeps (B-2).
//! - One parker and waker per thread, reused across calls: a wake left
//!   over from an earlier call costs at most one extra poll of a later
//!   future, never a missed wake (B-1).
//!
//! Not promised: the number of polls. A future woken during its own poll is
//! polled again, and a stale wake from an earlier call on the same thread
//! may cause one extra poll; futures must tolerate being polled when not
//! ready, as the `Future` contract says. A `block_on` inside another on the
//! same thread panics (B-3).

use std::cell::RefCell;
use std::future::Future;
use std::pin::{pin, Pin};
use std::task::{Context, Poll, Wake, Waker};

use crate::park::{Parker, Unparker};
use crate::sync::thread_local;

/// The waker's state: the unparker of the thread that runs `block_on`.
/// `std::sync::Arc` because `Waker::from` requires it; the synchronisation
/// inside `Unparker` goes through the shim.
struct ThreadWaker(Unparker);

impl Wake for ThreadWaker {
    fn wake(self: std::sync::Arc<Self>) {
        self.0.unpark();
    }

    fn wake_by_ref(self: &std::sync::Arc<Self>) {
        self.0.unpark();
    }
}

struct Cached {
    parker: Parker,
    waker: Waker,
}

impl Cached {
    fn new() -> Self {
        let parker = Parker::new();
        let waker = unparking_waker(&parker);
        Cached { parker, waker }
    }
}

/// A waker that unparks `parker`'s thread.
pub(crate) fn unparking_waker(parker: &Parker) -> Waker {
    Waker::from(std::sync::Arc::new(ThreadWaker(parker.unparker().clone())))
}

/// Polls `future` until it completes, parking on `parker` while it is
/// pending; `waker` must unpark `parker` (`unparking_waker`). The loop of
/// [`block_on`], for a caller that brings its own parker.
pub(crate) fn poll_parked<F: Future + ?Sized>(
    mut future: Pin<&mut F>,
    parker: &Parker,
    waker: &Waker,
) -> F::Output {
    let mut context = Context::from_waker(waker);
    loop {
        if let Poll::Ready(output) = future.as_mut().poll(&mut context) {
            return output;
        }
        parker.park();
    }
}

thread_local! {
    static CACHED: RefCell<Cached> = RefCell::new(Cached::new());
}

/// Polls `future` on this thread until it completes, parking the thread
/// while it is pending.
///
/// # Panics
/// If called from inside another `block_on` on the same thread (for
/// example from a future it is polling): the outer future could never be
/// polled again while the inner call blocks, so this would deadlock.
/// (`Runtime::block_on` runs this, so it panics there too.) In a task of
/// a [`Runtime`](crate::runtime::Runtime) it does not panic, as
/// `futures::executor::block_on` does not in tokio's: it blocks that
/// worker until the future completes, and the worker's other tasks wait.
pub fn block_on<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    CACHED.with(|cached| {
        let cached = cached.try_borrow_mut().unwrap_or_else(|_| {
            panic!(
                "modelsync::block_on called inside another block_on on the same thread; \
                 the outer future would never be polled again (deadlock)"
            )
        });
        poll_parked(future.as_mut(), &cached.parker, &cached.waker)
    })
}
