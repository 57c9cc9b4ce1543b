//! The shared overflow queue: a FIFO behind one lock.
//!
//! It is deliberately simple: it is touched only when a ring overflows (once
//! per half-ring of pushes) or when a worker runs dry, so a lock costs less
//! than the complexity of a lock-free queue here. A batch is pushed under one
//! lock so that the items of one overflow stay contiguous and in order.

use std::collections::VecDeque;

use crate::sync::Mutex;

/// A multi-producer, multi-consumer FIFO that [`Local`](super::Local) rings
/// overflow into.
#[derive(Debug)]
pub struct Inject<T> {
    items: Mutex<VecDeque<T>>,
}

impl<T> Inject<T> {
    /// An empty queue.
    pub fn new() -> Self {
        Self {
            items: Mutex::new(VecDeque::new()),
        }
    }

    /// Appends one item.
    pub fn push(&self, item: T) {
        self.items.lock().push_back(item);
    }

    /// Appends every item of `batch`, in order, under one lock: no other push
    /// or pop interleaves with the batch.
    pub fn push_batch(&self, batch: impl Iterator<Item = T>) {
        self.items.lock().extend(batch);
    }

    /// Removes the oldest item.
    pub fn pop(&self) -> Option<T> {
        self.items.lock().pop_front()
    }

    /// The number of items at the moment of the call.
    pub fn len(&self) -> usize {
        self.items.lock().len()
    }

    /// Whether the queue held no item at the moment of the call.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl<T> Default for Inject<T> {
    fn default() -> Self {
        Self::new()
    }
}
