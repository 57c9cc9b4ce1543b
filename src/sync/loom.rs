//! Model-checking backend: loom explores every interleaving within its
//! preemption bound and models C11 weak memory (SeqCst treated as AcqRel).

pub(super) const NAME: &str = "loom";

/// Atomic integers, pointers and fences, with `Ordering`: loom's, with one
/// switch, [`set_every_access_rmw`].
///
/// With the switch on, every `load` is a read-modify-write that leaves the
/// value as it is and every `store` is a `swap`: an audit mode for loom
/// 0.7.3's partial-order reduction, which explores a plain load racing
/// another thread's load-then-compare-and-swap in one order only
/// (tokio-rs/loom issue 166). A read-modify-write conflicts with every
/// other write, so loom explores both orders of each such race.
///
/// Stores must be read-modify-writes too: loom 0.7.3 may place another
/// thread's plain store between the read and the write of a
/// read-modify-write (tokio-rs/loom issue 254, open; tokio-rs/loom pull
/// request 391), an
/// execution no hardware allows, and with only loads turned into
/// read-modify-writes `block_on`'s models deadlock on it. With every access
/// a read-modify-write, each atomic's modification order is total and
/// every read takes the latest value, one a plain load may read; no access
/// synchronises more than the one it replaces, except that a `swap`
/// continues a release sequence a plain store would end. So the mode
/// explores only executions real hardware can run (a failure in it is
/// real), but fewer of them: no stale reads. It runs beside the normal
/// mode, never instead of it. Because every read takes the latest value,
/// an operation that returned before another began (on the model's one
/// clock) is visible to it: the models check their histories in real-time
/// order in this mode, and in happens-before order in the normal one.
///
/// With the switch off, each access is loom's own, one call through: the
/// model explores exactly what it would with loom's types.
pub mod atomic {
    pub use loom::sync::atomic::{fence, Ordering};
    use std::ops::{Deref, DerefMut};

    use super::every_access_rmw;

    /// `$name` whose `load` is `$rmw($identity)` (an operation that
    /// leaves the value as it is) and whose `store` is a `swap` while
    /// [`every_access_rmw`] is on.
    macro_rules! switchable {
        ($name:ident, $value:ty, $rmw:ident($identity:expr)) => {
            #[doc = concat!("loom's `", stringify!($name), "`; its `load` and `store` read-modify-writes while every access is one (see the module's docs).")]
            #[derive(Debug, Default)]
            pub struct $name(loom::sync::atomic::$name);

            impl $name {
                /// An atomic holding `value`.
                pub fn new(value: $value) -> Self {
                    Self(loom::sync::atomic::$name::new(value))
                }

                /// loom's `load`, or a read that writes back.
                pub fn load(&self, order: Ordering) -> $value {
                    if every_access_rmw() {
                        self.0.$rmw($identity, order)
                    } else {
                        self.0.load(order)
                    }
                }

                /// loom's `store`, or a `swap`.
                pub fn store(&self, value: $value, order: Ordering) {
                    if every_access_rmw() {
                        self.0.swap(value, order);
                    } else {
                        self.0.store(value, order);
                    }
                }
            }

            impl Deref for $name {
                type Target = loom::sync::atomic::$name;
                fn deref(&self) -> &Self::Target {
                    &self.0
                }
            }

            impl DerefMut for $name {
                fn deref_mut(&mut self) -> &mut Self::Target {
                    &mut self.0
                }
            }
        };
    }

    switchable!(AtomicBool, bool, fetch_or(false));
    switchable!(AtomicU32, u32, fetch_add(0));
    switchable!(AtomicU64, u64, fetch_add(0));
    switchable!(AtomicUsize, usize, fetch_add(0));

    /// [`AtomicPtr`] has no arithmetic: while every access is a
    /// read-modify-write, its load is a compare-and-swap of the value with
    /// itself, retried until it succeeds, its first guess null (a plain
    /// load for the guess would be the very access the mode removes).
    #[derive(Debug, Default)]
    pub struct AtomicPtr<T>(loom::sync::atomic::AtomicPtr<T>);

    impl<T> AtomicPtr<T> {
        /// An atomic holding `value`.
        pub fn new(value: *mut T) -> Self {
            Self(loom::sync::atomic::AtomicPtr::new(value))
        }

        /// loom's `load`, or a read that writes back.
        pub fn load(&self, order: Ordering) -> *mut T {
            if !every_access_rmw() {
                return self.0.load(order);
            }
            let mut seen = std::ptr::null_mut();
            loop {
                // Relaxed on failure: the value read is only the next guess;
                // the compare-and-swap that succeeds reads with `order`.
                match self
                    .0
                    .compare_exchange(seen, seen, order, Ordering::Relaxed)
                {
                    Ok(value) => return value,
                    Err(actual) => seen = actual,
                }
            }
        }

        /// loom's `store`, or a `swap`.
        pub fn store(&self, value: *mut T, order: Ordering) {
            if every_access_rmw() {
                self.0.swap(value, order);
            } else {
                self.0.store(value, order);
            }
        }
    }

    impl<T> Deref for AtomicPtr<T> {
        type Target = loom::sync::atomic::AtomicPtr<T>;
        fn deref(&self) -> &Self::Target {
            &self.0
        }
    }

    impl<T> DerefMut for AtomicPtr<T> {
        fn deref_mut(&mut self) -> &mut Self::Target {
            &mut self.0
        }
    }
}

std::thread_local! {
    /// The switch of [`atomic`]'s mode. A std thread-local, not loom's: it
    /// is set outside the model, and loom runs every thread of a model on
    /// the OS thread that called `loom::model`, so the model's threads all
    /// read the setting of the test that runs them, and a test running
    /// beside it on another OS thread keeps its own.
    static EVERY_ACCESS_RMW: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Whether loom models run on this OS thread make every atomic access a
/// read-modify-write (see [`atomic`]).
pub fn every_access_rmw() -> bool {
    EVERY_ACCESS_RMW.with(std::cell::Cell::get)
}

/// Sets [`every_access_rmw`] for the loom models this OS thread runs from
/// now on; returns the previous setting. Set it between models, never
/// inside one: an execution must not change what its accesses are.
pub fn set_every_access_rmw(on: bool) -> bool {
    EVERY_ACCESS_RMW.with(|mode| mode.replace(on))
}

/// Spawning, joining, yielding and parking threads.
pub mod thread {
    pub use loom::thread::{current, park, spawn, yield_now, Builder, JoinHandle, Thread};
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
