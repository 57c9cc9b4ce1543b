//! A thread parker with a permit, API-compatible with crossbeam-utils'
//! `Parker`.
//!
//! # Protocol
//!
//! One word, `state`, holds the permit:
//!
//! | state      | meaning                                                  |
//! |------------|----------------------------------------------------------|
//! | `EMPTY`    | no permit, nobody asleep                                 |
//! | `PARKED`   | the parker is asleep (or about to be) on the condvar     |
//! | `NOTIFIED` | a permit is stored; the next `park` consumes it          |
//!
//! `unpark` swaps in `NOTIFIED`; many unparks store one permit (P-2). Only
//! when it replaced `PARKED` does it take the lock and notify. The parker
//! moves `EMPTY -> PARKED` while holding the lock and releases the lock only
//! by waiting on the condvar, so an unparker that takes the lock after
//! seeing `PARKED` cannot notify before the parker waits: no wake-up is
//! lost (P-1). The condvar may wake spuriously; the parker then finds no
//! permit and waits again, so `park` without a timeout returns only after
//! a permit (P-3).
//!
//! # Synchronization
//!
//! What a user may rely on (the IDs are VERIFICATION.md's):
//!
//! - **An unpark happens-before the park it releases returns**: everything
//!   the unparking thread did before `unpark()` is visible after the `park`
//!   that consumes its permit (P-4). That holds for `park_timeout` and
//!   `park_deadline` when they consume a permit too.
//! - **No lost wake-up**: an `unpark` at any moment, before `park` began or
//!   while it sleeps, ends that `park` or makes the next one return at
//!   once (P-1). Many unparks before a park store one permit (P-2).
//! - **No spurious return**: `park()` returns only after consuming a
//!   permit (P-3). (std's and crossbeam-utils' parkers may return
//!   spuriously; code written for them keeps working here.)
//!
//! Not promised: a timed park may return at its timeout without a permit,
//! and then promises nothing about other threads (P-5); only the thread
//! that owns the `Parker` parks, so there is no order among parkers.
//!
//! # Memory ordering
//!
//! The permit carries the unparker's writes to the parker: `unpark`'s swap
//! is `Release` and every transition that consumes `NOTIFIED` is `Acquire`,
//! so what a thread wrote before `unpark` is visible after the `park` it
//! ends (P-4). Transitions that do not consume a permit are `Relaxed`: the
//! lock orders them.

use std::cell::Cell;
use std::fmt;
use std::marker::PhantomData;
use std::time::{Duration, Instant};

use crate::sync::atomic::{AtomicUsize, Ordering::*};
use crate::sync::{deadline_passed, thread, Arc, Condvar, Mutex};

const EMPTY: usize = 0;
const PARKED: usize = 1;
const NOTIFIED: usize = 2;

/// Whether `park` yields its CPU once before it sleeps (see `Inner::park`).
const YIELD_BEFORE_SLEEP: bool = cfg!(not(any(loom, shuttle)));

struct Inner {
    state: AtomicUsize,
    lock: Mutex<()>,
    condvar: Condvar,
}

/// Blocks the thread that owns it until a permit is available.
///
/// `Send` but not `Sync`: one thread parks at a time.
///
/// ```compile_fail
/// fn shared<T: Sync>() {}
/// shared::<modelsync::park::Parker>(); // `Parker` is not `Sync`
/// ```
///
/// ```
/// fn sendable<T: Send>() {}
/// fn shared<T: Send + Sync + Clone>() {}
/// sendable::<modelsync::park::Parker>();
/// shared::<modelsync::park::Unparker>();
/// ```
pub struct Parker {
    unparker: Unparker,
    _not_sync: PhantomData<Cell<()>>,
}

/// Makes a permit available to its [`Parker`], waking it if it is parked.
#[derive(Clone)]
pub struct Unparker {
    inner: Arc<Inner>,
}

impl Parker {
    /// A parker with no permit.
    pub fn new() -> Self {
        Parker {
            unparker: Unparker {
                inner: Arc::new(Inner {
                    state: AtomicUsize::new(EMPTY),
                    lock: Mutex::new(()),
                    condvar: Condvar::new(),
                }),
            },
            _not_sync: PhantomData,
        }
    }

    /// Blocks until a permit is available, then consumes it. Returns at
    /// once if `unpark` was called since the last `park` returned.
    pub fn park(&self) {
        self.unparker.inner.park(None);
    }

    /// As [`park`](Self::park), but returns after `timeout` at the latest.
    pub fn park_timeout(&self, timeout: Duration) {
        // A timeout too large for `Instant` is no timeout.
        self.unparker
            .inner
            .park(Instant::now().checked_add(timeout));
    }

    /// As [`park`](Self::park), but returns at `deadline` at the latest.
    pub fn park_deadline(&self, deadline: Instant) {
        self.unparker.inner.park(Some(deadline));
    }

    /// Whether a permit is stored. A diagnostic for models; the answer may
    /// be stale by the time the caller reads it.
    #[doc(hidden)]
    pub fn has_permit(&self) -> bool {
        // Relaxed: a snapshot; nothing is read on its basis.
        self.unparker.inner.state.load(Relaxed) == NOTIFIED
    }

    /// The handle other threads use to unpark this parker.
    pub fn unparker(&self) -> &Unparker {
        &self.unparker
    }
}

impl Default for Parker {
    fn default() -> Self {
        Self::new()
    }
}

impl Unparker {
    /// Stores the permit and wakes the parker if it is parked.
    pub fn unpark(&self) {
        self.inner.unpark();
    }
}

impl Inner {
    /// Consumes a stored permit, if there is one.
    fn take_permit(&self) -> bool {
        // Acquire on success: pairs with `unpark`'s Release swap, so the
        // unparker's writes are visible once `park` returns (P-4).
        // Relaxed on failure: no permit, nothing to synchronise with.
        self.state
            .compare_exchange(NOTIFIED, EMPTY, Acquire, Relaxed)
            .is_ok()
    }

    fn park(&self, deadline: Option<Instant>) {
        if self.take_permit() || deadline.is_some_and(deadline_passed) {
            return;
        }
        // Give the CPU away once before sleeping: a peer this thread has
        // just woken (a ping-pong, a request and its reply) often runs on
        // this CPU and answers before we would have slept, which saves a
        // futex sleep and wake-up per round trip (BENCHMARKS.md). It costs
        // one syscall on a path that is about to sleep, and, unlike
        // spinning, never keeps a CPU busy: a spinning parker measured 4.5
        // times slower than std's on one host, because the peer it woke
        // could not be placed on its CPU. Not under loom and shuttle, where
        // a yield is a scheduling decision that would prune the schedules
        // explored; the check that follows it is the one the models check.
        if YIELD_BEFORE_SLEEP {
            thread::yield_now();
            if self.take_permit() {
                return;
            }
        }
        let mut guard = self.lock.lock();
        // Relaxed: the lock orders this with `unpark`'s lock-then-notify;
        // a permit found here is consumed below with Acquire.
        match self.state.compare_exchange(EMPTY, PARKED, Relaxed, Relaxed) {
            Ok(_) => {}
            Err(NOTIFIED) => {
                // Acquire: consumes the permit, as in `take_permit` (P-4).
                let previous = self.state.swap(EMPTY, Acquire);
                debug_assert_eq!(previous, NOTIFIED, "only the parker consumes the permit");
                return;
            }
            Err(other) => unreachable!("parker state {other} while not parked"),
        }
        loop {
            guard = match deadline {
                None => self.condvar.wait(guard),
                Some(deadline) => {
                    if deadline_passed(deadline) {
                        break;
                    }
                    let left = deadline.saturating_duration_since(Instant::now());
                    self.condvar.wait_timeout(guard, left).0
                }
            };
            if self.take_permit() {
                return;
            }
            // A spurious wake-up: still PARKED, wait again (P-3).
        }
        // Timed out. Acquire: an `unpark` may have raced the timeout, and
        // its permit is consumed here (P-4).
        match self.state.swap(EMPTY, Acquire) {
            NOTIFIED | PARKED => {}
            other => unreachable!("parker state {other} while parked"),
        }
        drop(guard);
    }

    fn unpark(&self) {
        // Release: publishes the unparker's writes to the Acquire that
        // consumes the permit (P-4).
        match self.state.swap(NOTIFIED, Release) {
            EMPTY | NOTIFIED => return,
            PARKED => {}
            other => unreachable!("parker state {other}"),
        }
        // The parker set PARKED under the lock and gives it up only by
        // waiting, so once we hold it the parker is waiting (or has not yet
        // looked): the notification cannot be lost (P-1).
        drop(self.lock.lock());
        self.condvar.notify_one();
    }
}

impl fmt::Debug for Parker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad("Parker { .. }")
    }
}

impl fmt::Debug for Unparker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad("Unparker { .. }")
    }
}
