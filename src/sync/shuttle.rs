//! Randomised-schedule backend: shuttle runs random and PCT schedules over
//! sequentially consistent atomics, reaching scales loom cannot.

pub(super) const NAME: &str = "shuttle";

/// Atomic integers, pointers and fences, with `Ordering`.
pub mod atomic {
    pub use shuttle::sync::atomic::{
        fence, AtomicBool, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize, Ordering,
    };
}

/// Spawning, joining, yielding and parking threads.
pub mod thread {
    pub use shuttle::thread::{current, park, spawn, yield_now, Builder, JoinHandle, Thread};
}

/// The reference-counted pointer: loom's is checked for leaks after every
/// execution; shuttle's is std's.
pub use shuttle::sync::Arc;
/// Thread-local storage; loom's and shuttle's reset with every execution.
pub use shuttle::thread_local;

/// A spin-wait hint. Under shuttle it yields to the scheduler.
#[inline]
pub fn spin_loop() {
    shuttle::hint::spin_loop();
}

/// std's cell behind loom's closure API: shuttle has no `UnsafeCell` of its
/// own (accesses are not scheduling points there, and with no weak memory
/// it has nothing to check them against).
#[derive(Debug)]
#[repr(transparent)]
pub struct UnsafeCell<T: ?Sized>(std::cell::UnsafeCell<T>);

impl<T> UnsafeCell<T> {
    /// A cell holding `value`.
    pub const fn new(value: T) -> Self {
        Self(std::cell::UnsafeCell::new(value))
    }

    /// The contents; `self` is consumed, so no other access exists.
    pub fn into_inner(self) -> T {
        self.0.into_inner()
    }
}

impl<T: ?Sized> UnsafeCell<T> {
    /// Gives `f` a shared pointer to the contents. The caller's protocol must
    /// exclude concurrent writers for as long as `f` dereferences it.
    pub fn with<R>(&self, f: impl FnOnce(*const T) -> R) -> R {
        f(self.0.get())
    }

    /// Gives `f` a unique pointer to the contents. The caller's protocol must
    /// exclude every other access for as long as `f` dereferences it.
    pub fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
        f(self.0.get())
    }
}

/// A mutex without poisoning: a panic while locked is a bug in this crate
/// and must not turn every later `lock` into a second panic.
#[derive(Debug, Default)]
pub struct Mutex<T: ?Sized>(shuttle::sync::Mutex<T>);

/// The guard [`Mutex::lock`] returns; the lock is held until it is dropped.
pub type MutexGuard<'a, T> = shuttle::sync::MutexGuard<'a, T>;

impl<T> Mutex<T> {
    /// An unlocked mutex holding `value`.
    pub const fn new(value: T) -> Self {
        Self(shuttle::sync::Mutex::new(value))
    }
}

impl<T: ?Sized> Mutex<T> {
    /// Blocks until the lock is free, then takes it.
    pub fn lock(&self) -> MutexGuard<'_, T> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// A condition variable without poisoning, for use with [`Mutex`].
#[derive(Debug, Default)]
pub struct Condvar(shuttle::sync::Condvar);

impl Condvar {
    /// A condition variable nobody waits on.
    pub const fn new() -> Self {
        Self(shuttle::sync::Condvar::new())
    }

    /// Releases the lock, waits for a notification (or a spurious
    /// wake-up), then takes the lock again.
    pub fn wait<'a, T>(&self, guard: MutexGuard<'a, T>) -> MutexGuard<'a, T> {
        self.0
            .wait(guard)
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// shuttle does not model time: this waits for a notification and never
    /// reports a timeout, so scenarios must not rely on timeouts.
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
