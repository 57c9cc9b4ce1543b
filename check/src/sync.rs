//! The backend's threads, atomics and `Arc`, for the few places where the
//! harness is part of the model (a scenario's threads, its hand-off flags,
//! the wake-up tokens that carry happens-before, a [`Handoff`]'s cell):
//! loom's under `--cfg loom`, shuttle's under `--cfg shuttle`, std's
//! otherwise. Everything else in the harness (its counters, logs and
//! clocks) uses std's types on purpose: it watches the model from outside
//! and must add no scheduling point to it.
//!
//! The code under test must be built on the same backend, from the same
//! loom or shuttle crate: this crate asks cargo for the versions modelsync
//! uses, so that one build holds one runtime.
//!
//! [`Handoff`]: crate::Handoff

#[cfg(all(loom, shuttle))]
compile_error!("`--cfg loom` and `--cfg shuttle` select different backends; pass only one");

#[cfg(loom)]
pub(crate) use loom::{
    sync::{atomic, Arc},
    thread,
};

#[cfg(shuttle)]
pub(crate) use shuttle::{
    sync::{atomic, Arc},
    thread,
};

#[cfg(not(any(loom, shuttle)))]
pub(crate) use std::{
    sync::{atomic, Arc},
    thread,
};

/// The active backend's name, as result lines print it.
pub const BACKEND: &str = if cfg!(loom) {
    "loom"
} else if cfg!(shuttle) {
    "shuttle"
} else {
    "std"
};
