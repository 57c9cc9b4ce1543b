//! A work-stealing async runtime, tokio-shaped, built from this crate's run
//! queue, `Parker` and `block_on`.
//!
//! ```
//! # if modelsync::sync::BACKEND != "std" { return; }
//! use modelsync::runtime::Builder;
//!
//! let runtime = Builder::new_multi_thread().worker_threads(2).build().unwrap();
//! let answer = runtime.block_on(async {
//!     let task = modelsync::runtime::spawn(async { 6 * 7 });
//!     task.await.unwrap()
//! });
//! assert_eq!(answer, 42);
//! ```
//!
//! # What tokio has and this runtime does not
//!
//! Read this before porting a tokio program: the runtime covers spawning,
//! joining, aborting, yielding and `block_on` on a multi-thread
//! work-stealing scheduler, and nothing else. Missing:
//!
//! - **I/O**: no reactor, so no `tokio::net`, `tokio::fs`, `tokio::io`
//!   or `tokio::process` futures can be driven by it;
//! - **timers**: no `sleep`, `interval`, `timeout` or `Instant`-based
//!   futures;
//! - **`Handle`**: no handle to spawn onto a runtime from elsewhere
//!   (clone an `Arc<Runtime>`, or use [`spawn`] inside its context);
//! - **`spawn_blocking`** and **`block_in_place`**: no blocking pool, so
//!   blocking work must run on threads of its own;
//! - **`JoinSet`**, **`AbortHandle`** and **`JoinHandle::id`** (task IDs):
//!   a [`JoinHandle`] joins and aborts its one task;
//! - **current-thread mode**: [`Builder::new_multi_thread`] is the only
//!   kind (`worker_threads(1)` gives one worker thread, still apart from
//!   the caller's);
//! - **cooperative budget**: a task that is always ready runs until it
//!   returns `Pending`, and may keep its worker from the others meanwhile.
//!
//! It runs any future whose wakers are driven by something else: this
//! crate's channels and `Notify`, other threads, or other libraries'
//! reactors running on their own threads. [`Builder::enable_all`] exists
//! so that code written for tokio builds; it enables nothing.
//!
//! # Design
//!
//! Each worker thread owns a [`Local`](crate::queue::Local) ring and a LIFO
//! slot; remote spawns and ring overflow go to the shared
//! [`Inject`](crate::queue::Inject) queue. A task is one allocation whose
//! state word (`state.rs`) decides who polls, completes, cancels and frees
//! it; idle workers search other rings, then the inject queue, and sleep on
//! a [`Parker`](crate::park::Parker) (`idle.rs` has the handshake that
//! keeps a sleeper from missing work). Each part's protocol is described at
//! the top of its file; the invariants are VERIFICATION.md's `R-*`.
//!
//! # Synchronization
//!
//! What a user may rely on (the IDs are VERIFICATION.md's):
//!
//! - **Spawning, waking and completing carry writes.** Everything a thread
//!   did before `spawn` is visible to the task's first poll; everything it
//!   did before waking a task's waker is visible to the poll that the wake
//!   causes; everything the task did is visible to whoever receives its
//!   output from the `JoinHandle` (R-12).
//! - **No lost wake.** A task woken at any moment (idle, queued, or while
//!   it is being polled) is polled again after the wake; a wake never makes
//!   two workers poll one task at once (R-1, R-2). Work pushed while every
//!   worker goes to sleep is run (R-7), also while a worker's poll blocks
//!   its thread: a worker going to sleep with no worker left searching
//!   looks at every queue first, so the other workers run it (R-7, R-14).
//! - **Exactly once.** Every spawned future is polled to completion or
//!   dropped (abort, shutdown) exactly once; every output is delivered
//!   through its `JoinHandle` once or dropped once (R-1, R-5, R-6, R-11).
//! - **Panics stay in their task**: a panic in a task's poll, in its
//!   future's drop or in its output's drop is caught and reported through
//!   its `JoinHandle` as [`JoinError::is_panic`]; the worker keeps running
//!   (R-6).
//! - **Shutdown.** Dropping the [`Runtime`] stops the workers and drops
//!   every unfinished task's future before `drop` returns, on the dropping
//!   thread (a task spawned while that happens is cancelled at once);
//!   their `JoinHandle`s report cancellation. Dropped in a runtime's
//!   context, it panics as tokio's does, and the same shutdown runs on a
//!   thread of its own (R-11, R-13). Wakers that outlive the runtime may
//!   be woken and dropped safely; nothing leaks, no thread stays behind
//!   (R-3, R-11).
//!
//! - **Idle workers steal.** A task queued on a worker whose poll blocks
//!   its thread is run by another worker; a searcher tries every other
//!   worker's queue (R-14). The task in a worker's LIFO slot is the
//!   exception, as in tokio: it runs when the blocking poll returns.
//! - **A task stays on its runtime**: woken on another runtime's worker, it
//!   is queued on its own runtime (R-15).
//!
//! Not promised: which of its runtime's workers runs a task, the order
//! tasks run in, or fairness beyond R-9 and R-10.

pub(crate) mod idle;
pub(crate) mod live;
pub(crate) mod state;
mod task;
mod worker;

use std::fmt;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use crate::sync::{thread, Arc};

pub use task::{JoinError, JoinHandle};
use worker::{Shared, Worker};

/// Configures and builds a [`Runtime`], as tokio's `Builder`.
#[derive(Debug)]
pub struct Builder {
    worker_threads: Option<usize>,
}

impl Builder {
    /// A multi-thread (work-stealing) runtime: the only kind there is.
    pub fn new_multi_thread() -> Builder {
        Builder {
            worker_threads: None,
        }
    }

    /// The number of worker threads; by default the available parallelism.
    ///
    /// # Panics
    /// If `count` is 0, with tokio's message.
    pub fn worker_threads(&mut self, count: usize) -> &mut Self {
        assert!(count > 0, "Worker threads cannot be set to 0");
        self.worker_threads = Some(count);
        self
    }

    /// Accepted for source compatibility with tokio; there are no drivers to
    /// enable (see the module documentation).
    pub fn enable_all(&mut self) -> &mut Self {
        self
    }

    /// Starts the workers.
    pub fn build(&mut self) -> io::Result<Runtime> {
        let workers = self
            .worker_threads
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
        let (shared, cores) = worker::create(workers);
        let threads = cores
            .into_iter()
            .enumerate()
            .map(|(index, (local, parker))| {
                let shared = shared.clone();
                thread::spawn(move || Worker::run(shared, index, local, parker))
            })
            .collect();
        Ok(Runtime { shared, threads })
    }
}

/// A running work-stealing runtime. Dropping it shuts it down: the workers
/// stop and every unfinished task's future is dropped, before `drop`
/// returns (see the module documentation).
///
/// # Panics
/// Dropping it in a runtime's context (a task of any modelsync runtime, or
/// inside [`Runtime::block_on`]) panics with tokio's message ("Cannot drop
/// a runtime in a context where blocking is not allowed..."): waiting
/// there for the workers could block a worker, or be that worker. The
/// shutdown still happens, as tokio's does, without blocking the dropping
/// thread: a thread of its own waits for the workers and then drops the
/// unfinished futures. (A drop while the thread is already panicking only
/// starts that shutdown, and does not panic again.)
pub struct Runtime {
    shared: Arc<Shared>,
    threads: Vec<thread::JoinHandle<()>>,
}

impl Runtime {
    /// A runtime with one worker per available CPU.
    pub fn new() -> io::Result<Runtime> {
        Builder::new_multi_thread().build()
    }

    /// Spawns `future` as a task on this runtime.
    pub fn spawn<F>(&self, future: F) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        Shared::spawn(&self.shared, future)
    }

    /// Runs `future` to completion on the calling thread, inside this
    /// runtime's context (so [`spawn`] works in it), while the workers run
    /// the tasks.
    ///
    /// # Panics
    /// If called from inside a runtime's context (a task, or another
    /// `block_on`), with tokio's message: the thread would block the
    /// runtime that drives it.
    pub fn block_on<F: Future>(&self, future: F) -> F::Output {
        if worker::current().is_some() {
            panic!(
                "Cannot start a runtime from within a runtime. This happens because a \
                 function (like `block_on`) attempted to block the current thread while \
                 the thread is being used to drive asynchronous tasks."
            );
        }
        let _context = worker::enter(&self.shared);
        crate::block_on(future)
    }
}

impl Drop for Runtime {
    /// Shutdown; in a runtime's context, on a thread of its own (see
    /// `Runtime`'s `# Panics`).
    fn drop(&mut self) {
        self.shared.shut_down();
        let threads = std::mem::take(&mut self.threads);
        if worker::current().is_none() {
            finish_shutdown(threads, &self.shared);
            return;
        }
        // Detached: it ends once the workers have (R-11).
        let shared = self.shared.clone();
        drop(thread::spawn(move || finish_shutdown(threads, &shared)));
        if !std::thread::panicking() {
            panic!(
                "Cannot drop a runtime in a context where blocking is not allowed. \
                 This happens when a runtime is dropped from within an asynchronous context."
            );
        }
    }
}

/// The rest of shutdown, once the workers are told to stop: waits for
/// them, then drops the unfinished futures.
fn finish_shutdown(workers: Vec<thread::JoinHandle<()>>, shared: &Arc<Shared>) {
    for worker in workers {
        // A worker catches every task's panic; a panic here is a bug in
        // the runtime, already reported by the panic hook.
        let _ = worker.join();
    }
    Shared::drop_tasks(shared);
}

impl fmt::Debug for Runtime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Runtime")
            .field("shared", &self.shared)
            .finish()
    }
}

/// Panics, with tokio's message, if the calling thread drives a runtime's
/// tasks: a worker of any modelsync runtime, or inside
/// [`Runtime::block_on`]; with the `tokio` feature, also wherever tokio's
/// own blocking calls panic (`assert_tokio_may_block`). Blocking there
/// could deadlock the tasks the thread drives. For blocking calls that
/// mirror tokio's, which panic there too.
#[track_caller]
pub(crate) fn assert_may_block() {
    if worker::current().is_some() {
        panic!(
            "Cannot block the current thread from within a runtime. This happens because a \
             function attempted to block the current thread while the thread is being used to \
             drive asynchronous tasks."
        );
    }
    #[cfg(all(feature = "tokio", not(any(loom, shuttle))))]
    assert_tokio_may_block();
}

/// Panics, with tokio's message, where tokio forbids blocking: in a task of
/// a tokio runtime, or inside its `block_on` (either flavour); and returns
/// where tokio allows it (any other thread, `spawn_blocking`,
/// `block_in_place`, a thread that only entered a runtime's handle).
///
/// tokio has no public question for this, so it is asked by its own
/// check: a `blocking_recv` on a tokio oneshot whose value is already
/// there returns at once where blocking is allowed and panics where it is
/// not, exactly as every blocking call of that tokio version decides.
#[cfg(all(feature = "tokio", not(any(loom, shuttle))))]
#[track_caller]
fn assert_tokio_may_block() {
    let (sent, ready) = tokio::sync::oneshot::channel::<()>();
    let _ = sent.send(());
    let _ = ready.blocking_recv();
}

/// Spawns `future` on the runtime whose context the calling thread is in
/// (a task, or inside [`Runtime::block_on`]).
///
/// # Panics
/// Outside a runtime's context, with a message saying so.
pub fn spawn<F>(future: F) -> JoinHandle<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    match worker::current() {
        Some(shared) => Shared::spawn(&shared, future),
        None => panic!(
            "modelsync::runtime::spawn must be called from the context of a modelsync runtime \
             (a task, or inside Runtime::block_on); use Runtime::spawn from elsewhere"
        ),
    }
}

/// Yields to the runtime once: the task goes to the back of its worker's
/// queue, so that the other queued tasks run before it is polled again.
pub async fn yield_now() {
    YieldNow { yielded: false }.await
}

struct YieldNow {
    yielded: bool,
}

impl Future for YieldNow {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.yielded {
            return Poll::Ready(());
        }
        self.yielded = true;
        // A wake during its own poll: the worker requeues the task at the
        // back when the poll returns (`ToIdle::OkNotified`).
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}
