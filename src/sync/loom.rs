//! Model-checking backend: loom explores every interleaving within its
//! preemption bound and models C11 weak memory (SeqCst treated as AcqRel).

pub const NAME: &str = "loom";

pub mod atomic {
    pub use loom::sync::atomic::{
        fence, AtomicBool, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize, Ordering,
    };
}

pub mod thread {
    pub use loom::thread::{spawn, yield_now, JoinHandle};
}

pub use loom::cell::UnsafeCell;
pub use loom::sync::Arc;
// Thread-locals are reset with every loom execution.
pub use loom::thread_local;

/// Under loom a spin loop must yield, or the model never schedules the
/// thread it is waiting for.
#[inline]
pub fn spin_loop() {
    loom::hint::spin_loop();
}

#[derive(Debug)]
pub struct Mutex<T>(loom::sync::Mutex<T>);

pub type MutexGuard<'a, T> = loom::sync::MutexGuard<'a, T>;

impl<T> Mutex<T> {
    pub fn new(value: T) -> Self {
        Self(loom::sync::Mutex::new(value))
    }

    pub fn lock(&self) -> MutexGuard<'_, T> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[derive(Debug, Default)]
pub struct Condvar(loom::sync::Condvar);

impl Condvar {
    pub fn new() -> Self {
        Self(loom::sync::Condvar::new())
    }

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

    pub fn notify_one(&self) {
        self.0.notify_one();
    }

    pub fn notify_all(&self) {
        self.0.notify_all();
    }
}
