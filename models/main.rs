//! The `models` test target: one module per primitive (`models/<p>.rs`,
//! found by `build.rs`), each test one scenario written once for loom,
//! shuttle and std stress runs (see `harness/mod.rs`).
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

mod harness;
/// The primitives' sequential specifications (`specs/<p>.rs`): one per
/// primitive, shared by the property tests and the history checks.
#[allow(dead_code)] // each target uses a different part
mod specs {
    include!(concat!(env!("OUT_DIR"), "/specs_modules.rs"));
}

include!(concat!(env!("OUT_DIR"), "/models_modules.rs"));
