//! The one place that names std's, loom's or shuttle's synchronisation types.
//!
//! Every primitive in this crate is written against this module, so the same
//! source runs on three backends chosen at build time:
//!
//! | cfg              | backend | what it gives                                        |
//! |------------------|---------|------------------------------------------------------|
//! | (none)           | std     | production code; zero-cost wrappers                  |
//! | `--cfg loom`     | loom    | every interleaving within a preemption bound, weak memory |
//! | `--cfg shuttle`  | shuttle | random and PCT schedules at larger scale, SeqCst only |
//!
//! The API is the intersection the three can offer with one spelling:
//! `UnsafeCell` exposes only the closure API `with` / `with_mut` (so loom can
//! check every access), `Mutex::lock` returns its guard directly (poisoning
//! is not part of any contract here), and `spin_loop` yields to the model
//! scheduler so that spin loops terminate under loom and shuttle, whose
//! schedulers are not fair.
//!
//! This module is `#[doc(hidden)] pub` so that the models under `models/`
//! can spawn threads and share state on whichever backend is active. It is
//! not part of the crate's stable API.

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

/// The name of the active backend, as the model harness prints it.
pub const BACKEND: &str = backend::NAME;
