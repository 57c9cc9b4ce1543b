//! A crate that tokio's test files can name `tokio` and that is modelsync:
//! depended on as `tokio = { package = "modelsync-tokio-facade", ... }`,
//! it puts modelsync's runtime, `Notify` and oneshot at tokio's paths, so
//! that tokio's own test files run against them with only their import
//! swapped (tokio-tests/README.md).
//!
//! From modelsync (the code under test):
//!
//! - `tokio::runtime::{Builder, Runtime, Handle, EnterGuard, TryCurrentError}`
//!   and `tokio::spawn`: `modelsync::runtime`'s;
//! - `tokio::task::{spawn, yield_now, JoinHandle, JoinError}`:
//!   `modelsync::runtime`'s;
//! - `tokio::sync::Notify` (and `tokio::sync::futures::{Notified,
//!   OwnedNotified}`): `modelsync::notify`'s; `tokio::sync::oneshot`:
//!   `modelsync::oneshot`;
//! - `#[tokio::main]` and `#[tokio::test]`: from `modelsync-tokio-macros`,
//!   which build a modelsync runtime (one worker thread for tokio's default
//!   current-thread flavour, which modelsync does not have).
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
//! removed (tokio-tests/manifest.toml says which and why). The one
//! exception is an empty [`time`] module.

pub use modelsync::runtime::spawn;
pub use modelsync_tokio_macros::{main, test};
pub use upstream_tokio::{join, pin, select, try_join};

/// `modelsync::runtime`, at tokio's path.
pub mod runtime {
    pub use modelsync::runtime::{Builder, EnterGuard, Handle, Runtime, TryCurrentError};
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

    /// The futures of [`Notify`](super::sync::Notify): modelsync's.
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
