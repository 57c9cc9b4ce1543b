//! A waker for polling futures by hand that counts its wakes. Its count is
//! a [`Tally`]: it observes the model, it is not part of it.
//!
//! A waker that runs code of its own when it is cloned or dropped (to
//! check that a primitive runs no user code under its lock) cannot be
//! built without `unsafe` (std's `Wake` gives a waker whose clones and
//! drops are its `Arc`'s), so it is not here: a project that needs one
//! keeps it with its models.

use std::sync::Arc;
use std::task::{Wake, Waker};

use crate::Tally;

/// How many times a waker made here was woken.
pub type WakeCount = Tally;

/// A waker that counts its wakes.
pub fn counting_waker() -> (Waker, WakeCount) {
    struct Counting(WakeCount);
    impl Wake for Counting {
        fn wake(self: Arc<Self>) {
            self.0.add_one();
        }
    }
    let wakes = WakeCount::default();
    (Waker::from(Arc::new(Counting(wakes.clone()))), wakes)
}
