//! A crate that tokio's test files can name `tokio` and that is modelsync:
//! depended on as `tokio = { package = "modelsync-tokio-facade", ... }`,
//! it puts modelsync's runtime, `Notify` and oneshot at tokio's paths, so
//! that tokio's own test files run against them with only their import
//! swapped (tokio-tests/README.md).
//!
//! From modelsync (the code under test):
//!
//! - `tokio::runtime::{Runtime, Handle, EnterGuard, TryCurrentError}` and
//!   `tokio::spawn`: `modelsync::runtime`'s;
//! - `tokio::runtime::Builder`: the facade's own, a thin wrapper over
//!   `modelsync::runtime::Builder` that forwards every method it has and
//!   adds the facade's mapping of `new_current_thread()`, a runtime of one
//!   worker thread ([`runtime::Builder::new_current_thread`] says what
//!   that does and does not give);
//! - `tokio::task::{spawn, yield_now, JoinHandle, JoinError}`:
//!   `modelsync::runtime`'s;
//! - `tokio::sync::Notify` (and `tokio::sync::futures::{Notified,
//!   OwnedNotified}`): `modelsync::notify`'s; `tokio::sync::oneshot`:
//!   `modelsync::oneshot`;
//! - `#[tokio::main]` and `#[tokio::test]`: from `modelsync-tokio-macros`,
//!   which build a modelsync runtime through this `Builder` (its
//!   `new_current_thread()` for tokio's default current-thread flavour).
//!
//! From tokio itself (its crate, renamed `upstream-tokio` here), because
//! they need no tokio runtime and are not what is tested: the other
//! `tokio::sync` types (`mpsc`, `broadcast`, `watch`, `Barrier`, `Mutex`,
//! `RwLock`, `Semaphore`, `OnceCell`, `SetOnce` and their guards and
//! errors), which are woken by their own wakers and run on any executor;
//! and the declarative macros `pin!`, `join!`, `try_join!` and `select!`.
//! tokio's cooperative budget, which these types consult, is unlimited
//! outside a tokio runtime, so on modelsync's runtime they never yield for
//! it.
//!
//! Nothing else of tokio is here: everything `modelsync::runtime`'s
//! documentation lists as missing (I/O, timers, `spawn_blocking`,
//! `block_in_place`, `JoinSet`, task IDs, current-thread mode, `LocalSet`,
//! `task_local!`, budget, hooks, metrics) is missing from this crate too,
//! and a test file that uses it does not compile until that test is
//! removed (tokio-tests/manifest.toml says which and why). The exceptions:
//! `Builder::new_current_thread`, mapped to one worker thread (not a
//! current-thread runtime: see its documentation), and an empty [`time`]
//! module.

pub use modelsync::runtime::spawn;
pub use modelsync_tokio_macros::{main, test};
pub use upstream_tokio::{join, pin, select, try_join};

/// `modelsync::runtime`, at tokio's path, with the facade's own
/// [`Builder`](crate::runtime::Builder).
pub mod runtime {
    use std::fmt;
    use std::io;

    pub use modelsync::runtime::{EnterGuard, Handle, Runtime, TryCurrentError};

    /// tokio's `Builder`, on modelsync: a thin wrapper over
    /// [`modelsync::runtime::Builder`] that forwards each of its methods
    /// unchanged, and adds [`new_current_thread`](Self::new_current_thread),
    /// the facade's own mapping of what modelsync does not have. The
    /// [`Runtime`] it builds is modelsync's.
    pub struct Builder {
        inner: modelsync::runtime::Builder,
        /// Built by `new_current_thread`: one worker thread, whatever
        /// `worker_threads` says (tokio ignores it for that flavour).
        current_thread: bool,
    }

    impl Builder {
        /// modelsync's [`new_multi_thread`](modelsync::runtime::Builder::new_multi_thread).
        pub fn new_multi_thread() -> Builder {
            Builder {
                inner: modelsync::runtime::Builder::new_multi_thread(),
                current_thread: false,
            }
        }

        /// **The facade's mapping**, not modelsync's (modelsync has no
        /// current-thread runtime: `modelsync::runtime`'s documentation):
        /// a modelsync multi-thread runtime with **one worker thread**.
        ///
        /// What a test written for tokio's current-thread runtime keeps:
        /// its spawned tasks run one at a time, on one thread. What it does
        /// not: the thread that calls `block_on` is not that worker (as in
        /// every modelsync runtime). The future given to `block_on` runs on
        /// the caller's thread and the spawned tasks on the worker, so they
        /// run whether or not that future yields, and in parallel with it;
        /// a test that relies on "spawned tasks run only when `block_on`
        /// yields", or on `LocalSet`, `spawn_local` or spawning `!Send`
        /// futures, still cannot run (tokio-tests/manifest.toml skips it,
        /// kind `current-thread`). `worker_threads` is accepted and, as in
        /// tokio for this flavour, ignored (0 still panics).
        pub fn new_current_thread() -> Builder {
            let mut inner = modelsync::runtime::Builder::new_multi_thread();
            inner.worker_threads(1);
            Builder {
                inner,
                current_thread: true,
            }
        }

        /// modelsync's [`worker_threads`](modelsync::runtime::Builder::worker_threads);
        /// ignored after [`new_current_thread`](Self::new_current_thread),
        /// as in tokio, except that 0 still panics.
        ///
        /// # Panics
        /// If `count` is 0, with tokio's message, at the caller's location.
        #[track_caller]
        pub fn worker_threads(&mut self, count: usize) -> &mut Self {
            self.inner.worker_threads(count);
            if self.current_thread {
                self.inner.worker_threads(1);
            }
            self
        }

        /// modelsync's [`thread_name`](modelsync::runtime::Builder::thread_name).
        pub fn thread_name(&mut self, name: impl Into<String>) -> &mut Self {
            self.inner.thread_name(name);
            self
        }

        /// modelsync's [`thread_name_fn`](modelsync::runtime::Builder::thread_name_fn).
        pub fn thread_name_fn<F>(&mut self, name: F) -> &mut Self
        where
            F: Fn() -> String + Send + Sync + 'static,
        {
            self.inner.thread_name_fn(name);
            self
        }

        /// modelsync's [`thread_stack_size`](modelsync::runtime::Builder::thread_stack_size).
        pub fn thread_stack_size(&mut self, bytes: usize) -> &mut Self {
            self.inner.thread_stack_size(bytes);
            self
        }

        /// modelsync's [`enable_all`](modelsync::runtime::Builder::enable_all):
        /// enables nothing (there are no drivers).
        pub fn enable_all(&mut self) -> &mut Self {
            self.inner.enable_all();
            self
        }

        /// modelsync's [`build`](modelsync::runtime::Builder::build).
        ///
        /// # Errors
        /// As modelsync's.
        pub fn build(&mut self) -> io::Result<Runtime> {
            self.inner.build()
        }
    }

    impl fmt::Debug for Builder {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.debug_struct("Builder")
                .field("inner", &self.inner)
                .field("current_thread", &self.current_thread)
                .finish()
        }
    }
}

/// `modelsync::runtime`'s task functions and types, at tokio's path.
pub mod task {
    pub use modelsync::runtime::{spawn, yield_now, JoinError, JoinHandle};
}

/// modelsync's `Notify` and oneshot; tokio's own executor-agnostic types
/// for the rest (see the crate's documentation).
pub mod sync {
    pub use modelsync::notify::Notify;
    pub use modelsync::oneshot;

    /// The futures of [`Notify`]: modelsync's.
    pub mod futures {
        pub use modelsync::notify::{Notified, OwnedNotified};
    }

    pub use upstream_tokio::sync::{
        broadcast, mpsc, watch, AcquireError, Barrier, BarrierWaitResult, MappedMutexGuard, Mutex,
        MutexGuard, OnceCell, OwnedMappedMutexGuard, OwnedMutexGuard, OwnedRwLockMappedWriteGuard,
        OwnedRwLockReadGuard, OwnedRwLockWriteGuard, OwnedSemaphorePermit, RwLock,
        RwLockMappedWriteGuard, RwLockReadGuard, RwLockWriteGuard, Semaphore, SemaphorePermit,
        SetError, SetOnce, SetOnceError, TryAcquireError, TryLockError,
    };
}

/// Empty: modelsync's runtime has no timers. It exists only so that an
/// import of the module itself (`use tokio::{task, time};`, in
/// `rt_common.rs`) resolves; anything taken from it does not compile, and
/// every test that uses it is removed, with kind `time`.
pub mod time {}
