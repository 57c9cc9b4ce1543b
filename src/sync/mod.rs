//! The one place that names std's, loom's or shuttle's synchronisation
//! types: every primitive in this crate, and every model of it, is written
//! against this module, so the same source runs on three backends chosen
//! at build time.
//!
//! | cfg              | backend | what it gives                                               |
//! |------------------|---------|-------------------------------------------------------------|
//! | (none)           | std     | production code; zero-cost wrappers                         |
//! | `--cfg loom`     | loom    | every interleaving (within a preemption bound, if one is set), with weak memory |
//! | `--cfg shuttle`  | shuttle | random and PCT schedules at larger scale, sequentially consistent |
//!
//! # What the shim does not model
//!
//! A model checks only what its backend can see. These are the gaps, and
//! where the backends differ in what they accept:
//!
//! - **loom** treats `SeqCst` loads, stores and read-modify-writes as
//!   `AcqRel` (`SeqCst` fences are modelled), never explores load
//!   buffering (a load reading a store that is later in program order of
//!   another thread), never fails `compare_exchange_weak` spuriously, runs
//!   at most 5 threads (the model's own included) and at most 1,000
//!   branches per execution by default (`LOOM_MAX_BRANCHES`). Its scheduler
//!   is not fair: a spin loop must call [`spin_loop`] or
//!   [`thread::yield_now`], or the model never runs the thread it waits for.
//!   Two of loom 0.7.3's open bugs bear on what a model proves. Its
//!   partial-order reduction explores a plain load racing another thread's
//!   load-then-compare-and-swap in one order only (tokio-rs/loom issue
//!   166), so a model can miss an interleaving; and it may place a plain
//!   store between the read and the write of another thread's
//!   read-modify-write (tokio-rs/loom issue 254), an execution no hardware runs, so a
//!   model can fail spuriously (none does). A switch of the loom build,
//!   `set_every_access_rmw` (loom builds only), makes every atomic load and store a
//!   read-modify-write, which loom orders against every other write: it
//!   explores the orders loom issue 166 skips, and gives loom issue 254 no plain
//!   store to misplace, at the cost of weak memory's stale reads (see
//!   `loom.rs`). The models run in it for their real-time pass (every
//!   model that checks a history) and the audit run (`ci/loom-audit`,
//!   every model).
//! - **shuttle** makes every atomic access sequentially consistent, so it
//!   cannot find a missing `Acquire` or `Release`; its [`UnsafeCell`] is
//!   std's (accesses are not checked for races; loom's are), and its
//!   [`Arc`] is std's (loom's is checked for leaks after every execution).
//! - **Time**: neither loom nor shuttle models it. [`Condvar::wait_timeout`]
//!   waits for a notification and never reports a timeout under them, so no
//!   model may depend on a timeout; timed behaviour is tested on std only.
//! - **`const` constructors**: `UnsafeCell::new`, `Mutex::new` and
//!   `Condvar::new` are `const fn` on std and shuttle, and the atomics'
//!   `new` is `const` on std and shuttle; on loom none of them is (loom
//!   registers every object with the running model). A primitive that
//!   offers a `const` constructor offers it on std and shuttle only.
//! - **`thread_local!`**: loom's and shuttle's accept only the
//!   `static NAME: T = expr;` form, not `const { expr }`, and reset their
//!   values for every execution.
//! - **Model-build constants**: a few sizes and policies differ under
//!   loom and shuttle (and Miri), so that the models reach what they are
//!   for in few steps; each is argued where it is defined: the keyed
//!   channel's blocks of 2 slots (`LAP`, the positions a block covers,
//!   its slots and the next-block marker: 3, and 32 in production),
//!   `Notify`'s
//!   wake batch of 2 (`WAKE_BATCH`, 32), the parker's yield before sleeping
//!   (`YIELD_BEFORE_SLEEP`, off), a blocked sync keyed `send`'s yields
//!   before it sleeps (`YIELDS_BEFORE_SLEEP` in `keyed/waiting.rs`, 1
//!   against 128: each yield is one more look of the same kind, so one
//!   reaches both paths, a look that finds room and the sleep), and the
//!   keyed `try_recv`'s looks before
//!   it sleeps for a send in progress (`IN_FLIGHT_SPINS`, 0 against 100: the
//!   models check the sleep, the path the looks only shortcut), and the
//!   runtime's live-task list of 1 shard (`live_task_shards`, four per
//!   worker in production): the list's own models run it with 2, where a
//!   close reaching one shard while an insert reaches another is checked,
//!   and every shard is the same code behind its own lock, so a whole
//!   runtime's models lose nothing a second shard would show.
//! - **Threads**: [`thread::spawn`], [`thread::park`],
//!   [`thread::current`] and [`thread::Builder`] are the backend's;
//!   `std::thread::scope` has no equivalent here. Under loom and shuttle a
//!   `Builder`'s `spawn` never fails, so a thread that cannot start is
//!   tested on std only.
//!
//! # The API
//!
//! The intersection the three can offer with one spelling: [`UnsafeCell`]
//! exposes only the closure API `with` / `with_mut` (so loom can check every
//! access); [`Mutex::lock`] returns its guard directly (poisoning is not
//! part of any contract here); [`spin_loop`] is the CPU's pause instruction
//! on std and a yield to the scheduler under loom and shuttle.
//!
//! This module is public so that the models under `models/` can spawn
//! threads and share state on whichever backend is active, and so that code
//! built on modelsync can be model-checked the same way. It follows the
//! crate's version, but its contents change whenever a primitive needs a
//! new type.

#[cfg(all(loom, shuttle))]
compile_error!("`--cfg loom` and `--cfg shuttle` select different backends; pass only one");

#[cfg(loom)]
#[path = "loom.rs"]
mod backend;

#[cfg(shuttle)]
#[path = "shuttle.rs"]
mod backend;

#[cfg(not(any(loom, shuttle)))]
#[path = "std.rs"]
mod backend;

pub use backend::{
    atomic, spin_loop, thread, thread_local, Arc, Condvar, Mutex, MutexGuard, UnsafeCell,
};

/// loom only: the switch that makes every atomic access a
/// read-modify-write, for the models' audit and real-time passes (see
/// `loom.rs`). Not part of the API a dependent builds on.
#[cfg(loom)]
#[doc(hidden)]
pub use backend::{every_access_rmw, set_every_access_rmw};

/// Whether `deadline` has passed. The models have no clock: under loom and
/// shuttle no deadline ever passes, as their `Condvar::wait_timeout` never
/// reports a timeout (neither models time), so that what an
/// execution does never depends on the wall clock, which a model checker's
/// replay of a schedule cannot reproduce (a timed park whose deadline
/// passed while its thread was descheduled took another path on replay).
/// Models must not rely on timeouts.
pub(crate) fn deadline_passed(deadline: std::time::Instant) -> bool {
    !cfg!(any(loom, shuttle)) && std::time::Instant::now() >= deadline
}

/// Keeps a value on cache lines of its own, so that writes to it do not
/// invalidate its neighbours in other cores' caches (false sharing): 128
/// bytes, because x86's adjacent-line prefetcher pulls lines in pairs (as
/// crossbeam-utils' and st3's do). Layout only: it models nothing.
#[repr(align(128))]
pub(crate) struct CachePadded<T>(pub(crate) T);

impl<T> std::ops::Deref for CachePadded<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

/// The name of the active backend (`"std"`, `"loom"` or `"shuttle"`), as the
/// model harness prints it.
pub const BACKEND: &str = backend::NAME;
