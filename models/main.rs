//! The `models` test target: one module per primitive (`models/<p>.rs`,
//! found by `build.rs`), each test one scenario written once for loom,
//! shuttle and std stress runs (see the `modelsync-check` crate,
//! `check/src/lib.rs`).
//!
//! `cargo test --test models queue::` runs one primitive's models;
//! `cargo test --test models queue::basic` runs one model.

// Seeded bug `queue-plain-add-on-tail` and every `debug_assert!` in src/
// are caught only with debug assertions and overflow checks on; a model
// build without them would pass vacuously. (Overflow checks cannot be tested for at compile
// time on stable Rust; the harness refuses to run without them.)
#[cfg(all(any(loom, shuttle), not(debug_assertions)))]
compile_error!(
    "model builds (--cfg loom or --cfg shuttle) need debug assertions and overflow checks: \
     use `cargo test --release` (Cargo.toml's release profile keeps both on) or the dev \
     profile, not `--profile bench` or an override that turns them off"
);

/// The model harness: the `modelsync-check` crate, with what this target
/// adds to it: a [`model!`](harness::model) that registers modelsync's
/// access mode with the harness, and the callback waker, which needs the
/// `unsafe` that the crate forbids.
mod harness {
    pub use modelsync_check::*;

    pub use crate::support::wakers::{callback_waker, Callbacks};

    /// Starts a [`Model`] named after the enclosing test, as the crate's
    /// `model!` does, after registering modelsync's switch of every atomic
    /// access to a read-modify-write (the real-time pass and the audit
    /// run), so that no model runs before it is registered.
    macro_rules! model {
        () => {{
            $crate::harness::register_access_mode();
            ::modelsync_check::model!()
        }};
    }
    pub(crate) use model;

    /// Registers the switch with the harness, under loom only: the other
    /// backends have none (their accesses are never stale). Every `model!`
    /// calls it, so that no model runs unregistered; a process's first
    /// call is the one that counts.
    pub fn register_access_mode() {
        #[cfg(loom)]
        modelsync_check::set_access_mode_hook(
            |on| {
                modelsync::sync::set_every_access_rmw(on);
            },
            modelsync::sync::every_access_rmw,
        );
    }
}
mod support {
    pub mod wakers;
}
/// The primitives' sequential specifications (`specs/<p>.rs`): one per
/// primitive, shared by the property tests and the history checks.
#[allow(dead_code)] // each target uses a different part
mod specs {
    include!(concat!(env!("OUT_DIR"), "/specs_modules.rs"));
}

include!(concat!(env!("OUT_DIR"), "/models_modules.rs"));
