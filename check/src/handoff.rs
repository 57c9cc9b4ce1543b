//! A plain (non-atomic) value handed from one thread to another, ordered
//! only by the primitive under test: this is how a model checks "A's
//! writes are visible after B observes A's operation".
//!
//! Under loom the value lives in loom's checked cell, so loom fails the
//! model if the write and the read are not ordered by happens-before. A
//! cell is not shared between threads by itself; a std mutex around it
//! makes it so without `unsafe`. loom does not see that mutex (it is not
//! loom's: no scheduling point, no happens-before), and under loom it is
//! never contended: loom runs one model thread at a time and switches only
//! at its own operations, and none runs while the mutex is held.
//!
//! Under shuttle and std the value is a std atomic accessed `Relaxed`: it
//! orders nothing and is no scheduling point, as the unchecked cell it
//! replaces was not. Neither backend checks a cell for races (shuttle's
//! accesses are sequentially consistent); on real threads, and under Miri,
//! a missing ordering shows as a stale read that fails the model's
//! assertion, not as a data race on the hand-off itself.

use crate::sync::Arc;

/// A value handed from one model thread to another (see the module
/// documentation). Write it before the operation the model checks; read
/// it only after observing that operation.
pub struct Handoff {
    #[cfg(loom)]
    value: std::sync::Mutex<loom::cell::Cell<usize>>,
    #[cfg(not(loom))]
    value: std::sync::atomic::AtomicUsize,
}

impl Handoff {
    /// A hand-off holding 0, to share between the model's threads.
    #[allow(clippy::new_ret_no_self)] // it is only ever shared
    pub fn new() -> Arc<Self> {
        Arc::new(Handoff {
            value: Default::default(),
        })
    }

    /// Writes `value` (loom: a checked write).
    pub fn write(&self, value: usize) {
        #[cfg(loom)]
        self.cell().set(value);
        // Relaxed: the hand-off must add no ordering of its own; the
        // primitive under test is what orders the read after this.
        #[cfg(not(loom))]
        self.value
            .store(value, std::sync::atomic::Ordering::Relaxed);
    }

    /// Reads the value (loom: a checked read, which fails the model if
    /// the last write does not happen-before it).
    pub fn read(&self) -> usize {
        #[cfg(loom)]
        let value = self.cell().get();
        // Relaxed: see `write`.
        #[cfg(not(loom))]
        let value = self.value.load(std::sync::atomic::Ordering::Relaxed);
        value
    }

    #[cfg(loom)]
    fn cell(&self) -> std::sync::MutexGuard<'_, loom::cell::Cell<usize>> {
        // A panic while it was held was loom reporting a race, which ends
        // the execution: the value is still the last one written.
        self.value
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}
