//! A plain (non-atomic) value handed from one thread to another, ordered
//! only by the primitive under test. It lives in the model's `UnsafeCell`,
//! so loom fails the model if the write and the read are not ordered by
//! happens-before: this is how a model checks "A's writes are visible
//! after B observes A's operation".

use modelsync::sync::{Arc, UnsafeCell};

pub struct Handoff(UnsafeCell<usize>);

// SAFETY: every model writes the cell before the operation it checks and
// reads it only after observing that operation; loom reports any pair of
// accesses the primitive failed to order, which is the point of the model.
unsafe impl Sync for Handoff {}

impl Handoff {
    pub fn new() -> Arc<Self> {
        Arc::new(Handoff(UnsafeCell::new(0)))
    }

    pub fn write(&self, value: usize) {
        // SAFETY: see `impl Sync`.
        self.0.with_mut(|v| unsafe { *v = value });
    }

    pub fn read(&self) -> usize {
        // SAFETY: see `impl Sync`.
        self.0.with(|v| unsafe { *v })
    }
}
