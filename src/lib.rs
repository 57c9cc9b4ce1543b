//! Concurrency primitives whose correctness is model-checked, not hoped for.
//!
//! Every primitive is written once against [`sync`], a shim that selects
//! std (production), loom (`--cfg loom`) or shuttle (`--cfg shuttle`) at
//! build time. Its invariants are listed with IDs in `VERIFICATION.md`,
//! beside the models and property tests that check each one and the bounds
//! they ran under.
//!
//! - [`queue`]: a tokio-style work-stealing run queue.
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_debug_implementations, rust_2018_idioms)]

pub mod queue;
#[doc(hidden)]
pub mod sync;
