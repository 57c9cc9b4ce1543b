//! The `proptests` test target: one module per primitive
//! (`proptests/<p>.rs`, found by `build.rs`) with property tests against a
//! sequential reference model, plus `verification`, which keeps
//! VERIFICATION.md and the tree in step.
//!
//! `cargo test --test proptests queue::` runs one primitive's tests.
#![cfg(not(any(loom, shuttle)))]

// The harness's counting waker and ledger observe primitives from outside.
use modelsync_check as harness;
mod support;
/// The primitives' sequential specifications (`specs/<p>.rs`): one per
/// primitive, shared by the property tests and the history checks.
#[allow(dead_code)] // each target uses a different part
mod specs {
    include!(concat!(env!("OUT_DIR"), "/specs_modules.rs"));
}

#[global_allocator]
static ALLOCATOR: support::allocations::Counting = support::allocations::Counting;

include!(concat!(env!("OUT_DIR"), "/proptests_modules.rs"));
