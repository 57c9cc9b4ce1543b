//! Model-checking backend: loom explores every interleaving within its
//! preemption bound and models C11 weak memory (SeqCst treated as AcqRel).

pub(super) const NAME: &str = "loom";

/// Atomic integers, pointers and fences, with `Ordering`.
pub mod atomic {
    pub use loom::sync::atomic::{
        fence, AtomicBool, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize, Ordering,
    };
}

/// Spawning, joining, yielding and parking threads.
pub mod thread {
    pub use loom::thread::{current, park, spawn, yield_now, JoinHandle, Thread};
}

/// loom's cell, which checks every access against the model's
/// happens-before relation.
pub use loom::cell::UnsafeCell;
/// The reference-counted pointer: loom's is checked for leaks after every
/// execution; shuttle's is std's.
pub use loom::sync::Arc;
/// Thread-local storage; loom's and shuttle's reset with every execution.
pub use loom::thread_local;

/// A spin-wait hint. Under loom it yields: a spin loop that did not would
/// never let the model schedule the thread it waits for.
#[inline]
pub fn spin_loop() {
    loom::hint::spin_loop();
}

/// A mutex without poisoning: a panic while locked is a bug in this crate
/// and must not turn every later `lock` into a second panic.
#[derive(Debug)]
pub struct Mutex<T>(loom::sync::Mutex<T>);

/// The guard [`Mutex::lock`] returns; the lock is held until it is dropped.
pub type MutexGuard<'a, T> = loom::sync::MutexGuard<'a, T>;

impl<T> Mutex<T> {
    /// An unlocked mutex holding `value`.
    pub fn new(value: T) -> Self {
        Self(loom::sync::Mutex::new(value))
    }

    /// Blocks until the lock is free, then takes it.
    pub fn lock(&self) -> MutexGuard<'_, T> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// A condition variable without poisoning, for use with [`Mutex`].
#[derive(Debug, Default)]
pub struct Condvar(loom::sync::Condvar);

impl Condvar {
    /// A condition variable nobody waits on.
    pub fn new() -> Self {
        Self(loom::sync::Condvar::new())
    }

    /// Releases the lock, waits for a notification (or a spurious
    /// wake-up), then takes the lock again.
    pub fn wait<'a, T>(&self, guard: MutexGuard<'a, T>) -> MutexGuard<'a, T> {
        self.0
            .wait(guard)
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// loom does not model time: this waits for a notification and never
    /// reports a timeout, so models must not rely on timeouts.
    pub fn wait_timeout<'a, T>(
        &self,
        guard: MutexGuard<'a, T>,
        timeout: std::time::Duration,
    ) -> (MutexGuard<'a, T>, bool) {
        let (guard, result) = self
            .0
            .wait_timeout(guard, timeout)
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        (guard, result.timed_out())
    }

    /// Wakes one waiter, if any.
    pub fn notify_one(&self) {
        self.0.notify_one();
    }

    /// Wakes every waiter.
    pub fn notify_all(&self) {
        self.0.notify_all();
    }
}
