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
//! joining, aborting, yielding, `block_on`, a [`Handle`] and entering a
//! runtime's context, and shutdown (on drop, with a timeout, or in the
//! background) on a multi-thread work-stealing scheduler, and nothing
//! else. Missing:
//!
//! - **I/O**: no reactor, so no `tokio::net`, `tokio::fs`, `tokio::io`
//!   or `tokio::process` futures can be driven by it;
//! - **timers**: no `sleep`, `interval`, `timeout` or `Instant`-based
//!   futures, and no `Builder::enable_time`, `enable_io` or
//!   `start_paused`;
//! - **`spawn_blocking`** and **`block_in_place`**: no blocking pool, so
//!   blocking work must run on threads of its own (and
//!   `Builder::max_blocking_threads` and `thread_keep_alive` have nothing
//!   to set);
//! - **`JoinSet`**, **`AbortHandle`** and **`JoinHandle::id`** (task IDs,
//!   `task::Id`, `task::try_id`): a [`JoinHandle`] joins and aborts its one
//!   task;
//! - **current-thread mode** (`Builder::new_current_thread`,
//!   `LocalRuntime`), **`LocalSet`**, **`spawn_local`** and
//!   **`task_local!`**: [`Builder::new_multi_thread`] is the only kind
//!   (`worker_threads(1)` gives one worker thread, still apart from the
//!   caller's);
//! - **cooperative budget** (`task::consume_budget`, `coop`): a task that
//!   is always ready runs until it returns `Pending`, and may keep its
//!   worker from the others meanwhile;
//! - **hooks and tuning**: `Builder::on_thread_start`, `on_thread_stop`,
//!   `on_thread_park`, `on_thread_unpark`, `on_task_spawn`,
//!   `on_task_terminate`, `event_interval`, `global_queue_interval`,
//!   `disable_lifo_slot` and `unhandled_panic`;
//! - **introspection**: `Runtime::metrics`, `Handle::metrics`,
//!   `Handle::runtime_flavor`, `Handle::id` and task dumps.
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
//! - **Panics stay in their task**: a panic in a task's poll or in its
//!   future's drop is caught and reported through its `JoinHandle` as
//!   [`JoinError::is_panic`]; the worker keeps running (R-6). A future
//!   whose poll panics is dropped while the panic unwinds, as tokio's is,
//!   so a panic in that drop aborts the process, as in tokio. A panic in
//!   its output's drop is caught and discarded, as tokio's is: the runtime
//!   drops an output only when no `JoinHandle` will read it (the handle was
//!   dropped before the task completed, or is being dropped after), so
//!   there is nobody to report it to.
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
//!   exception, as in tokio: it runs when the blocking poll returns; so
//!   are the tasks that yielded on that worker and wait to be polled
//!   again (R-9), as tokio's deferred wakes are.
//! - **A task stays on its runtime**: woken on another runtime's worker, it
//!   is queued on its own runtime (R-15).
//!
//! - **A yield lets every other queue go first** (R-9): after
//!   [`yield_now`] on a worker, the task is polled again only once its
//!   worker has run out of other work (its LIFO slot, its ring, the
//!   inject queue and, when it may search (R-8), the other workers'
//!   rings, as it saw them) or has
//!   reached its next periodic check (every 61st task it runs), whichever
//!   comes first; in both cases the task goes behind every task then in
//!   its worker's queue, and the worker has taken from the inject queue, if
//!   it held anything, before the task's next poll.
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
use std::marker::PhantomData;
use std::panic::{RefUnwindSafe, UnwindSafe};
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use crate::park::Parker;
use crate::sync::atomic::{AtomicBool, Ordering::Relaxed};
use crate::sync::{thread, Arc};

pub use task::{JoinError, JoinHandle};
use worker::{Shared, Worker};

/// The name a worker thread gets unless [`Builder::thread_name`] says
/// otherwise.
const DEFAULT_THREAD_NAME: &str = "modelsync-runtime-worker";

/// Whether `Builder::thread_stack_size` is given to the worker threads:
/// on std only. loom would allocate it for every model thread's own stack
/// (shuttle likewise), and the models set no stack size.
const STACK_SIZE_APPLIES: bool = cfg!(not(any(loom, shuttle)));

/// Configures and builds a [`Runtime`], as tokio's `Builder`.
pub struct Builder {
    worker_threads: Option<usize>,
    thread_name: Box<dyn Fn() -> String + Send + Sync + 'static>,
    thread_stack_size: Option<usize>,
}

impl Builder {
    /// A multi-thread (work-stealing) runtime: the only kind there is.
    pub fn new_multi_thread() -> Builder {
        Builder {
            worker_threads: None,
            thread_name: Box::new(|| DEFAULT_THREAD_NAME.to_owned()),
            thread_stack_size: None,
        }
    }

    /// The number of worker threads; by default the available parallelism.
    /// [`build`](Self::build) refuses more than 32,766 with an error.
    ///
    /// # Panics
    /// If `count` is 0, with tokio's message.
    #[track_caller]
    pub fn worker_threads(&mut self, count: usize) -> &mut Self {
        assert!(count > 0, "Worker threads cannot be set to 0");
        self.worker_threads = Some(count);
        self
    }

    /// The name of every worker thread (by default
    /// `modelsync-runtime-worker`): what profilers, debuggers and panic
    /// messages show.
    pub fn thread_name(&mut self, name: impl Into<String>) -> &mut Self {
        let name = name.into();
        self.thread_name = Box::new(move || name.clone());
        self
    }

    /// Names each worker thread by calling `name` as the thread is
    /// started, as tokio's `thread_name_fn`.
    pub fn thread_name_fn<F>(&mut self, name: F) -> &mut Self
    where
        F: Fn() -> String + Send + Sync + 'static,
    {
        self.thread_name = Box::new(name);
        self
    }

    /// The stack size, in bytes, of each worker thread; by default std's
    /// (`std::thread::Builder::stack_size`; the `RUST_MIN_STACK`
    /// environment variable changes it). Under loom and shuttle it is not
    /// applied: their threads are the model's.
    pub fn thread_stack_size(&mut self, bytes: usize) -> &mut Self {
        self.thread_stack_size = Some(bytes);
        self
    }

    /// Accepted for source compatibility with tokio; there are no drivers to
    /// enable (see the module documentation).
    pub fn enable_all(&mut self) -> &mut Self {
        self
    }

    /// Starts the workers.
    ///
    /// # Errors
    /// - If more than 32,766 workers were asked for (more than the idle
    ///   counters hold), an error of kind `InvalidInput`, before any thread
    ///   starts.
    /// - If the operating system refuses to start a worker thread, its
    ///   error: the workers already started are stopped and joined first,
    ///   so nothing of the runtime is left behind.
    pub fn build(&mut self) -> io::Result<Runtime> {
        let workers = self
            .worker_threads
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
        if workers > idle::MAX_WORKERS {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "a runtime has between 1 and {} worker threads, not {workers}",
                    idle::MAX_WORKERS
                ),
            ));
        }
        let (shared, cores) = worker::create(workers);
        let mut threads = Vec::with_capacity(workers);
        for (index, (local, parker)) in cores.into_iter().enumerate() {
            let mut thread = thread::Builder::new().name((self.thread_name)());
            if let Some(bytes) = self.thread_stack_size.filter(|_| STACK_SIZE_APPLIES) {
                thread = thread.stack_size(bytes);
            }
            let for_worker = shared.clone();
            match thread.spawn(move || Worker::run(for_worker, index, local, parker)) {
                Ok(thread) => threads.push(thread),
                Err(error) => {
                    // The rings and parkers of the workers not started are
                    // dropped with `cores`; the started ones stop (R-11).
                    shared.shut_down();
                    finish_shutdown(threads, &shared);
                    return Err(error);
                }
            }
        }
        Ok(Runtime {
            handle: Handle { shared },
            threads: Some(threads),
        })
    }
}

impl fmt::Debug for Builder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Builder")
            .field("worker_threads", &self.worker_threads)
            .field("thread_name", &(self.thread_name)())
            .field("thread_stack_size", &self.thread_stack_size)
            .finish()
    }
}

/// A running work-stealing runtime. Dropping it shuts it down: the workers
/// stop and every unfinished task's future is dropped, before `drop`
/// returns (see the module documentation); [`shutdown_timeout`] and
/// [`shutdown_background`] bound the wait.
///
/// # Panics
/// Dropping it in a runtime's context (a task of any modelsync runtime, or
/// inside [`Runtime::block_on`]) panics with tokio's message ("Cannot drop
/// a runtime in a context where blocking is not allowed..."): waiting
/// there for the workers could block a worker, or be that worker. The
/// shutdown still happens, as tokio's does, without blocking the dropping
/// thread: a thread of its own waits for the workers and then drops the
/// unfinished futures. (A drop while the thread is already panicking only
/// starts that shutdown, and does not panic again.) An [`enter`] guard
/// alone is not such a context, as in tokio.
///
/// [`shutdown_timeout`]: Runtime::shutdown_timeout
/// [`shutdown_background`]: Runtime::shutdown_background
/// [`enter`]: Runtime::enter
pub struct Runtime {
    handle: Handle,
    /// The workers; `None` once shutdown has begun.
    threads: Option<Vec<thread::JoinHandle<()>>>,
}

impl Runtime {
    /// A runtime with one worker per available CPU.
    pub fn new() -> io::Result<Runtime> {
        Builder::new_multi_thread().build()
    }

    /// Spawns `future` as a task on this runtime.
    #[track_caller]
    pub fn spawn<F>(&self, future: F) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.handle.spawn(future)
    }

    /// Runs `future` to completion on the calling thread, inside this
    /// runtime's context (so [`spawn`] works in it), while the workers run
    /// the tasks.
    ///
    /// # Panics
    /// If called from inside a runtime's context (a task, or another
    /// `block_on`), with tokio's message: the thread would block the
    /// runtime that drives it.
    #[track_caller]
    pub fn block_on<F: Future>(&self, future: F) -> F::Output {
        self.handle.block_on(future)
    }

    /// A handle to this runtime, to spawn onto it from anywhere (a clone
    /// of it outlives the runtime: see [`Handle`]).
    pub fn handle(&self) -> &Handle {
        &self.handle
    }

    /// Enters this runtime's context on the calling thread until the guard
    /// is dropped: [`spawn`] and [`Handle::current`] then reach this
    /// runtime. It does not make the thread a runtime thread: blocking
    /// calls and [`block_on`](Self::block_on) stay allowed, as in tokio.
    pub fn enter(&self) -> EnterGuard<'_> {
        self.handle.enter()
    }

    /// Shuts the runtime down, waiting at most `duration` for the workers
    /// to stop (each stops when its current poll returns). If they all
    /// stop in time, every unfinished task's future has been dropped when
    /// this returns; otherwise a thread of its own goes on waiting for
    /// them and then drops the futures. A `duration` of zero waits for
    /// nothing ([`shutdown_background`](Self::shutdown_background)).
    ///
    /// # Panics
    /// With a non-zero `duration` in a runtime's context, as dropping it
    /// there does (tokio's message), after starting the shutdown in the
    /// background.
    #[track_caller]
    pub fn shutdown_timeout(mut self, duration: Duration) {
        self.shut_down(Some(duration));
    }

    /// Shuts the runtime down without waiting: the workers stop, and a
    /// thread of its own waits for them and then drops every unfinished
    /// task's future. Allowed anywhere, a runtime's context included, as
    /// in tokio.
    pub fn shutdown_background(self) {
        self.shutdown_timeout(Duration::ZERO);
    }

    /// Shutdown: tells the workers to stop, then waits for them for at most
    /// `wait` (forever if `None`) and drops the unfinished futures on this
    /// thread, or leaves both to a thread of its own.
    #[track_caller]
    fn shut_down(&mut self, wait: Option<Duration>) {
        let Some(threads) = self.threads.take() else {
            return;
        };
        let shared = &self.handle.shared;
        shared.shut_down();
        if wait == Some(Duration::ZERO) {
            return finish_shutdown_in_background(threads, shared);
        }
        if worker::is_driving() {
            // Waiting here could block a worker, or be that worker.
            finish_shutdown_in_background(threads, shared);
            if !std::thread::panicking() {
                panic!(
                    "Cannot drop a runtime in a context where blocking is not allowed. \
                     This happens when a runtime is dropped from within an asynchronous context."
                );
            }
            return;
        }
        match wait {
            None => finish_shutdown(threads, shared),
            Some(duration) => finish_shutdown_within(threads, shared, duration),
        }
    }
}

impl Drop for Runtime {
    /// Shutdown; in a runtime's context, on a thread of its own (see
    /// `Runtime`'s `# Panics`).
    fn drop(&mut self) {
        self.shut_down(None);
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

/// `finish_shutdown` on a thread of its own, detached: it ends once the
/// workers have (R-11).
fn finish_shutdown_in_background(workers: Vec<thread::JoinHandle<()>>, shared: &Arc<Shared>) {
    let shared = shared.clone();
    drop(spawn_shutdown_thread(move || {
        finish_shutdown(workers, &shared)
    }));
}

/// `finish_shutdown` on a thread of its own, waited for until `duration`
/// has passed; left to finish alone after that.
fn finish_shutdown_within(
    workers: Vec<thread::JoinHandle<()>>,
    shared: &Arc<Shared>,
    duration: Duration,
) {
    let deadline = Instant::now().checked_add(duration);
    let parker = Parker::new();
    let unparker = parker.unparker().clone();
    let finished = Arc::new(AtomicBool::new(false));
    let finishing = {
        let (shared, finished) = (shared.clone(), finished.clone());
        spawn_shutdown_thread(move || {
            finish_shutdown(workers, &shared);
            // Relaxed: the flag only says when to stop waiting. The unpark
            // after it happens-before the park it ends (P-4), so a waiter
            // woken by it sees the flag; the join below carries what the
            // shutdown did.
            finished.store(true, Relaxed);
            unparker.unpark();
        })
    };
    // Relaxed: see the store above.
    while !finished.load(Relaxed) {
        match deadline {
            Some(deadline) if crate::sync::deadline_passed(deadline) => return,
            Some(deadline) => parker.park_deadline(deadline),
            None => parker.park(),
        }
    }
    let _ = finishing.join();
}

/// Starts a thread that finishes a shutdown.
///
/// # Panics
/// If the operating system refuses the thread: the shutdown cannot go on
/// without blocking a thread that must not block.
fn spawn_shutdown_thread(finish: impl FnOnce() + Send + 'static) -> thread::JoinHandle<()> {
    thread::Builder::new()
        .name("modelsync-runtime-shutdown".to_owned())
        .spawn(finish)
        .expect("failed to start the thread that finishes the runtime's shutdown")
}

impl fmt::Debug for Runtime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Runtime")
            .field("shared", &self.handle.shared)
            .finish()
    }
}

// As tokio's: a panic that unwinds through a call on a runtime leaves it
// usable (tasks' panics are caught; every shared state is behind atomics
// and locks that a panic leaves consistent).
impl UnwindSafe for Runtime {}
impl RefUnwindSafe for Runtime {}

/// A handle to a runtime: spawns onto it and enters its context from any
/// thread. Cloning it is cheap. It does not keep the runtime running: once
/// the [`Runtime`] is dropped (or shut down), a task spawned through a
/// handle is cancelled at once, and its `JoinHandle` reports
/// [`JoinError::is_cancelled`], as in tokio.
#[derive(Clone)]
pub struct Handle {
    shared: Arc<Shared>,
}

impl Handle {
    /// The handle of the runtime whose context the calling thread is in (a
    /// task, inside `block_on`, or under an [`enter`](Self::enter) guard).
    ///
    /// # Panics
    /// Outside every runtime's context, with [`TryCurrentError`]'s message.
    #[track_caller]
    pub fn current() -> Handle {
        match Handle::try_current() {
            Ok(handle) => handle,
            Err(error) => panic!("{error}"),
        }
    }

    /// The handle of the runtime whose context the calling thread is in, or
    /// why there is none.
    pub fn try_current() -> Result<Handle, TryCurrentError> {
        match worker::try_current() {
            Ok(Some(shared)) => Ok(Handle { shared }),
            Ok(None) => Err(TryCurrentError {
                thread_local_destroyed: false,
            }),
            Err(_) => Err(TryCurrentError {
                thread_local_destroyed: true,
            }),
        }
    }

    /// Spawns `future` as a task on the handle's runtime.
    #[track_caller]
    pub fn spawn<F>(&self, future: F) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        Shared::spawn(&self.shared, future)
    }

    /// Runs `future` to completion on the calling thread, inside the
    /// handle's runtime's context, as [`Runtime::block_on`] does.
    ///
    /// # Panics
    /// If called from inside a runtime's context (a task, or another
    /// `block_on`), with tokio's message.
    #[track_caller]
    pub fn block_on<F: Future>(&self, future: F) -> F::Output {
        if worker::is_driving() {
            panic!(
                "Cannot start a runtime from within a runtime. This happens because a \
                 function (like `block_on`) attempted to block the current thread while \
                 the thread is being used to drive asynchronous tasks."
            );
        }
        let _context = worker::enter_driving(&self.shared);
        crate::block_on(future)
    }

    /// Enters the handle's runtime's context on the calling thread until
    /// the guard is dropped (see [`Runtime::enter`]).
    ///
    /// # Panics
    /// When a guard is dropped out of order (guards entered later on the
    /// thread still in place), with tokio's message.
    pub fn enter(&self) -> EnterGuard<'_> {
        EnterGuard {
            _context: worker::enter(&self.shared),
            _handle: PhantomData,
            _not_send: NotSend(PhantomData),
        }
    }
}

impl fmt::Debug for Handle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Handle")
            .field("shared", &self.shared)
            .finish()
    }
}

impl UnwindSafe for Handle {}
impl RefUnwindSafe for Handle {}

/// The context a thread entered with [`Runtime::enter`] or
/// [`Handle::enter`]; leaving it (dropping the guard) restores the context
/// the thread was in before. Guards must be dropped in the reverse order
/// of their creation (dropping one out of order panics, as tokio's does),
/// on the thread that made them: it is `Sync` but not `Send`, as tokio's.
#[must_use = "the context is left when the guard is dropped"]
pub struct EnterGuard<'a> {
    _context: worker::ContextGuard,
    /// Ties the guard to the handle's lifetime.
    _handle: PhantomData<&'a Handle>,
    _not_send: NotSend,
}

/// Makes a type `!Send` and leaves it `Sync`, as tokio's `EnterGuard` is.
struct NotSend(PhantomData<*const ()>);

// SAFETY: it holds no data: a `&NotSend` shared between threads gives
// access to nothing.
unsafe impl Sync for NotSend {}

impl fmt::Debug for EnterGuard<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EnterGuard").finish_non_exhaustive()
    }
}

/// Why [`Handle::try_current`] found no runtime.
#[derive(Debug)]
pub struct TryCurrentError {
    thread_local_destroyed: bool,
}

impl TryCurrentError {
    /// The calling thread is in no runtime's context.
    pub fn is_missing_context(&self) -> bool {
        !self.thread_local_destroyed
    }

    /// The calling thread's context was already destroyed (the call came
    /// from another thread-local's destructor).
    pub fn is_thread_local_destroyed(&self) -> bool {
        self.thread_local_destroyed
    }
}

impl fmt::Display for TryCurrentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.thread_local_destroyed {
            f.write_str(
                "the modelsync runtime context was already destroyed on this thread \
                 (called from a thread-local's destructor)",
            )
        } else {
            f.write_str(
                "no modelsync runtime: this must be called from the context of a modelsync \
                 runtime (a task, inside block_on, or under an enter guard)",
            )
        }
    }
}

impl std::error::Error for TryCurrentError {}

/// Panics, with tokio's message, if the calling thread drives a runtime's
/// tasks: a worker of any modelsync runtime, or inside
/// [`Runtime::block_on`]; with the `tokio` feature, also wherever tokio's
/// own blocking calls panic (`assert_tokio_may_block`). Blocking there
/// could deadlock the tasks the thread drives. For blocking calls that
/// mirror tokio's, which panic there too.
#[track_caller]
pub(crate) fn assert_may_block() {
    if worker::is_driving() {
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
/// Outside a runtime's context, with a message saying so, at the caller.
#[track_caller]
pub fn spawn<F>(future: F) -> JoinHandle<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    match worker::current() {
        Some(shared) => Shared::spawn(&shared, future),
        None => panic!(
            "modelsync::runtime::spawn must be called from the context of a modelsync runtime \
             (a task, inside Runtime::block_on, or under an enter guard); use Runtime::spawn \
             or Handle::spawn from elsewhere"
        ),
    }
}

/// Yields to the runtime once, letting every other queued task go first.
///
/// Polled by a worker of a modelsync runtime with its task's own waker,
/// the task is set aside rather than queued: it is polled again only once its worker has found nothing
/// else to run (its own queue, the shared inject queue and, when it may
/// search, the other workers' queues, as it saw them), or at the worker's
/// next periodic
/// check (every 61st task it runs), whichever comes first; it then goes to
/// the back of its worker's queue. So every task in its worker's queue
/// when it yielded runs first, and the worker takes from the inject queue
/// (tasks spawned or woken from outside the runtime) before the yielding
/// task is polled again (R-9). Polled anywhere else (inside `block_on`, or
/// on another executor), it wakes the waker it was polled with at once and
/// returns `Pending` once, as tokio's does outside a tokio runtime; the
/// task that runs that executor is not set aside for it.
///
/// A combinator between the task and this future that hides the task's
/// waker behind its own (`FuturesUnordered`, for one) makes the yield
/// reach only that combinator: when it wakes the task in turn, the task
/// goes to the back of its worker's queue at once, behind the tasks queued
/// there, but not behind the inject queue.
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
        // A wake during its own poll: when the poll returns, the worker
        // sets the task aside if this thread is a worker (`note_yield`),
        // or requeues it at the back (`ToIdle::OkNotified`).
        worker::note_yield(cx.waker());
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}
