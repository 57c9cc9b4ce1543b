//! Concurrency primitives whose correctness is model-checked, not hoped for.
//!
//! Every primitive is written once against [`sync`], a shim that selects
//! std (production), loom (`--cfg loom`) or shuttle (`--cfg shuttle`) at
//! build time, and is one module below. Each module's documentation opens
//! with what the primitive does and has a `# Synchronization` section: the
//! happens-before edges it promises, with the IDs of the invariants that
//! state them in `VERIFICATION.md`, and what it does not promise.
//! `VERIFICATION.md` lists, for every invariant, the models and property
//! tests that check it and the bounds they ran under.
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs, missing_debug_implementations, rust_2018_idioms)]

pub mod block_on;
pub mod keyed;
pub mod notify;
pub mod oneshot;
pub mod park;
pub mod queue;
pub mod runtime;
pub mod sync;

pub use block_on::block_on;

/// The README's Rust snippets, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

/// The components this crate's models and property tests check on their
/// own (`models/`, `proptests/`), reached from outside the crate only
/// through here. Not an API: hidden from the documentation, outside
/// semver, and changed with the code.
#[doc(hidden)]
pub mod internals {
    /// The runtime's task state word, its idle/sleep handshake and its
    /// live-task list.
    pub mod runtime {
        pub use crate::runtime::idle::Idle;
        pub use crate::runtime::live::{Entries, Entry, Listed, LiveTasks};
        pub use crate::runtime::state::*;
    }

    /// The keyed channel's components.
    pub mod keyed {
        pub use crate::keyed::core::CoreOfIds;
        pub use crate::keyed::intake::{Push, ReleaseStack};
        pub use crate::keyed::room::{NoRoom, RoomCounts};
        pub use crate::keyed::slots::{slot_list, SlotReader, SlotWriter};
        pub use crate::keyed::waiting::{WaitingChannel, WaitingInternals, WaitingReceiver};
        pub use crate::keyed::ChannelInternals;
    }
}
