//! Concurrency primitives whose correctness is model-checked, not hoped for.
//!
//! Every primitive is written once against [`sync`], a shim that selects
//! std (production), loom (`--cfg loom`) or shuttle (`--cfg shuttle`) at
//! build time. Its invariants are listed with IDs in `VERIFICATION.md`,
//! beside the models and property tests that check each one and the bounds
//! they ran under.
//!
//! - [`queue`]: a tokio-style work-stealing run queue.
//! - [`oneshot`]: a lock-free channel for one value, compatible with
//!   `tokio::sync::oneshot`.
//! - [`park`]: a thread parker with a permit, compatible with
//!   crossbeam-utils' `Parker`.
//! - [`block_on`]: runs a future on the current thread.
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_debug_implementations, rust_2018_idioms)]

mod block_on;
pub mod oneshot;
pub mod park;
pub mod queue;
#[doc(hidden)]
pub mod sync;

pub use block_on::block_on;
