//! Shared by the property tests: items that record their drops, and
//! reading a panic's message.

use std::cell::RefCell;
use std::rc::Rc;

/// Hands out items with fresh ids and records every drop, so that a test
/// can check each item is dropped exactly once.
#[derive(Debug, Default)]
pub struct DropLog {
    created: u32,
    dropped: Rc<RefCell<Vec<u32>>>,
}

/// An item with an id that records its drop in its [`DropLog`].
#[derive(Debug)]
pub struct Item {
    pub id: u32,
    dropped: Rc<RefCell<Vec<u32>>>,
}

impl Drop for Item {
    fn drop(&mut self) {
        self.dropped.borrow_mut().push(self.id);
    }
}

impl DropLog {
    /// A new item; ids count up from 0.
    pub fn item(&mut self) -> Item {
        let id = self.created;
        self.created += 1;
        Item {
            id,
            dropped: self.dropped.clone(),
        }
    }

    /// The ids dropped so far, in drop order.
    pub fn dropped_ids(&self) -> Vec<u32> {
        self.dropped.borrow().clone()
    }

    /// The ids of every item created, if each was dropped exactly once;
    /// otherwise the sorted ids that were dropped.
    pub fn each_dropped_once(&self) -> Result<(), Vec<u32>> {
        let mut dropped = self.dropped.borrow().clone();
        dropped.sort_unstable();
        if dropped == (0..self.created).collect::<Vec<_>>() {
            Ok(())
        } else {
            Err(dropped)
        }
    }
}

/// Every property's configuration: `cases` random cases (4 under Miri,
/// which is slow), and no failure persistence (a failure prints its
/// minimal case; the repository keeps no regression files).
pub fn proptest_config(cases: u32) -> proptest::prelude::ProptestConfig {
    proptest::prelude::ProptestConfig {
        cases: if cfg!(miri) { 4 } else { cases },
        failure_persistence: None,
        ..proptest::prelude::ProptestConfig::default()
    }
}

/// The message of a caught panic.
pub fn panic_message(payload: Box<dyn std::any::Any + Send>) -> String {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

/// Counts this thread's allocations: the proptests target's global
/// allocator, so that a test can assert that an operation allocates
/// nothing.
pub mod allocations {
    use std::alloc::{GlobalAlloc, Layout, System};
    use std::cell::Cell;

    thread_local! {
        static COUNT: Cell<usize> = const { Cell::new(0) };
        static FREES: Cell<usize> = const { Cell::new(0) };
    }

    /// System's allocator, counting allocations and frees per thread.
    pub struct Counting;

    // SAFETY: every call is forwarded to `System` unchanged; the counts
    // are thread-local `Cell`s with no destructor, which allocate nothing.
    unsafe impl GlobalAlloc for Counting {
        unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
            COUNT.with(|c| c.set(c.get() + 1));
            // SAFETY: forwarded with the caller's guarantees.
            unsafe { System.alloc(layout) }
        }

        unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
            FREES.with(|c| c.set(c.get() + 1));
            // SAFETY: forwarded with the caller's guarantees.
            unsafe { System.dealloc(ptr, layout) }
        }

        unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
            COUNT.with(|c| c.set(c.get() + 1));
            FREES.with(|c| c.set(c.get() + 1));
            // SAFETY: forwarded with the caller's guarantees.
            unsafe { System.realloc(ptr, layout, new_size) }
        }
    }

    /// Allocations made by this thread so far.
    pub fn on_this_thread() -> usize {
        COUNT.with(Cell::get)
    }

    /// Allocations made by this thread so far, less the frees it made (a
    /// reallocation counts as one of each); meaningful when one thread
    /// allocates and frees everything it measures.
    pub fn live_on_this_thread() -> isize {
        let frees = FREES.with(Cell::get);
        COUNT.with(Cell::get) as isize - frees as isize
    }
}
