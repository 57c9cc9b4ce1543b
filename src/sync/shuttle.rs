//! Randomised-schedule backend: shuttle runs random and PCT schedules over
//! sequentially consistent atomics, reaching scales loom cannot.

pub const NAME: &str = "shuttle";

pub mod atomic {
    pub use shuttle::sync::atomic::{
        fence, AtomicBool, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize, Ordering,
    };
}

pub mod thread {
    pub use shuttle::thread::{spawn, yield_now, JoinHandle};
}

// shuttle re-exports std's Arc: reference counts need no scheduling points.
pub use shuttle::sync::Arc;
// Thread-locals are reset with every shuttle execution.
pub use shuttle::thread_local;

#[inline]
pub fn spin_loop() {
    shuttle::hint::spin_loop();
}

/// shuttle has no `UnsafeCell`: accesses are not scheduling points there
/// (shuttle has no weak memory to check them against), so std's cell behind
/// the closure API is exact.
#[derive(Debug)]
#[repr(transparent)]
pub struct UnsafeCell<T: ?Sized>(std::cell::UnsafeCell<T>);

impl<T> UnsafeCell<T> {
    pub const fn new(value: T) -> Self {
        Self(std::cell::UnsafeCell::new(value))
    }

    pub fn into_inner(self) -> T {
        self.0.into_inner()
    }
}

impl<T: ?Sized> UnsafeCell<T> {
    pub fn with<R>(&self, f: impl FnOnce(*const T) -> R) -> R {
        f(self.0.get())
    }

    pub fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
        f(self.0.get())
    }
}

#[derive(Debug, Default)]
pub struct Mutex<T: ?Sized>(shuttle::sync::Mutex<T>);

pub type MutexGuard<'a, T> = shuttle::sync::MutexGuard<'a, T>;

impl<T> Mutex<T> {
    pub fn new(value: T) -> Self {
        Self(shuttle::sync::Mutex::new(value))
    }
}

impl<T: ?Sized> Mutex<T> {
    pub fn lock(&self) -> MutexGuard<'_, T> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[derive(Debug, Default)]
pub struct Condvar(shuttle::sync::Condvar);

impl Condvar {
    pub fn new() -> Self {
        Self(shuttle::sync::Condvar::new())
    }

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

    pub fn notify_one(&self) {
        self.0.notify_one();
    }

    pub fn notify_all(&self) {
        self.0.notify_all();
    }
}
