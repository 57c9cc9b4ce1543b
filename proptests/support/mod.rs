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

/// Every property's configuration: `cases` random cases (2 under Miri,
/// which runs them some thousand times slower: Miri is there for undefined
/// behaviour on the paths they take, the std runs for the cases' variety),
/// and no failure persistence (a failure prints its
/// minimal case; the repository keeps no regression files).
pub fn proptest_config(cases: u32) -> proptest::prelude::ProptestConfig {
    proptest::prelude::ProptestConfig {
        cases: if cfg!(miri) { 2 } else { cases },
        failure_persistence: None,
        ..proptest::prelude::ProptestConfig::default()
    }
}

/// Steps a specification by an operation the real primitive just ran:
/// fails (naming the operation, what it returned and what the
/// specification allowed) unless `observed` is one of the specification's
/// outcomes, and moves `state` to the first outcome with that return.
/// What the property tests compare step by step, with the specifications
/// the history checks use. One thread runs the operations, so nothing
/// overlaps them: an outcome the specification allows only with an
/// overlapping operation (`Spec::needs_overlap`) is not allowed here.
pub fn step<S: crate::harness::linearizability::Spec>(
    state: &mut S,
    op: &S::Op,
    observed: S::Ret,
) -> Result<(), proptest::test_runner::TestCaseError> {
    let alone = state
        .after(op, &observed)
        .into_iter()
        .find(|next| state.needs_overlap(op, &observed, next).is_none());
    match alone {
        Some(next) => {
            *state = next;
            Ok(())
        }
        None => Err(proptest::test_runner::TestCaseError::fail(format!(
            "{op:?} returned {observed:?}; the specification allows {:?} in {state:?}",
            state
                .outcomes(op)
                .iter()
                .filter(|(r, next)| state.needs_overlap(op, r, next).is_none())
                .map(|(r, _)| r)
                .collect::<Vec<_>>()
        ))),
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

/// For a test that must run alone in its process (it counts the process's
/// threads, or limits its address space): in the test run, starts this
/// test binary again with only the test `name`, asserts that it passed
/// there, and returns false; in that child, returns true, and the test
/// goes on to do its work.
pub fn alone_in_a_process(name: &str) -> bool {
    const CHILD: &str = "MODELSYNC_TEST_ALONE";
    if std::env::var_os(CHILD).is_some() {
        return true;
    }
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", name, "--test-threads=1"])
        .env(CHILD, "1")
        .output()
        .expect("run the test in a process of its own");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("1 passed"),
        "{name}, alone in its process, failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    false
}

/// The threads of this process (`/proc/self/task`: Linux only).
pub fn threads_of_this_process() -> usize {
    std::fs::read_dir("/proc/self/task").unwrap().count()
}

/// Counts allocations: the proptests target's global allocator, so that a
/// test can assert that an operation allocates nothing, or that everything
/// a thread allocated was freed, whichever thread freed it.
pub mod allocations {
    use std::alloc::{GlobalAlloc, Layout, System};
    use std::cell::Cell;
    use std::sync::atomic::{AtomicIsize, AtomicUsize, Ordering::Relaxed}; // shim-exempt: the global allocator, below every backend

    thread_local! {
        static COUNT: Cell<usize> = const { Cell::new(0) };
        static FREES: Cell<usize> = const { Cell::new(0) };
        /// The owner this thread's allocations are charged to; 0: nobody.
        static OWNER: Cell<usize> = const { Cell::new(0) };
    }

    const OWNERS: usize = 64;
    /// Live allocations per owner, across every thread.
    static LIVE: [AtomicIsize; OWNERS] = [const { AtomicIsize::new(0) }; OWNERS];
    static NEXT_OWNER: AtomicUsize = AtomicUsize::new(1);

    /// Every block starts with a header holding its owner, so that a free
    /// on any thread is charged back to the owner that allocated it.
    const HEADER: usize = 16;

    /// Under Miri, blocks have no header and owners are not counted: a
    /// pointer to the caller's part may not reach the header before it
    /// (Stacked Borrows), and Miri checks leaks itself.
    const CHARGES_OWNERS: bool = !cfg!(miri);

    fn with_header(layout: Layout) -> (Layout, usize) {
        if !CHARGES_OWNERS {
            return (layout, 0);
        }
        let offset = layout.align().max(HEADER);
        let layout = Layout::from_size_align(layout.size() + offset, offset)
            .expect("a block with its header fits a Layout");
        (layout, offset)
    }

    /// System's allocator, counting allocations and frees per thread, and
    /// live blocks per owner.
    pub struct Counting;

    // SAFETY: each block is System's, `offset` (0, or a multiple of the
    // caller's alignment and at least 16) larger, and the caller gets the
    // part after the header, aligned as asked; the owner is written in the
    // header's last word, which is aligned for a usize. The counts are
    // thread-local `Cell`s with no destructor and atomics, which allocate
    // nothing.
    unsafe impl GlobalAlloc for Counting {
        unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
            COUNT.with(|c| c.set(c.get() + 1));
            let owner = OWNER.with(Cell::get);
            let (outer, offset) = with_header(layout);
            // SAFETY: `outer` has a non-zero size (the caller's layout has,
            // and the header adds to it).
            let base = unsafe { System.alloc(outer) };
            if base.is_null() || !CHARGES_OWNERS {
                return base;
            }
            // Relaxed: a count, read after the threads that free are joined
            // or polled until it settles.
            LIVE[owner].fetch_add(1, Relaxed);
            // SAFETY: the block is `offset` bytes longer than asked, and
            // `offset` is at least the header.
            unsafe {
                let block = base.add(offset);
                block.cast::<usize>().sub(1).write(owner);
                block
            }
        }

        unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
            FREES.with(|c| c.set(c.get() + 1));
            let (outer, offset) = with_header(layout);
            // SAFETY: `ptr` came from `alloc` with this layout: the header,
            // if any, is right before it.
            unsafe {
                if CHARGES_OWNERS {
                    let owner = ptr.cast::<usize>().sub(1).read();
                    // Relaxed: as in `alloc`.
                    LIVE[owner].fetch_sub(1, Relaxed);
                }
                System.dealloc(ptr.sub(offset), outer);
            }
        }

        unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
            COUNT.with(|c| c.set(c.get() + 1));
            FREES.with(|c| c.set(c.get() + 1));
            let (outer, offset) = with_header(layout);
            // SAFETY: as in `dealloc`; the header moves with the block, so
            // it stays charged to its owner.
            unsafe {
                let base = System.realloc(ptr.sub(offset), outer, new_size + offset);
                if base.is_null() {
                    base
                } else {
                    base.add(offset)
                }
            }
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

    /// Charges what this thread allocates from now on to a new owner, until
    /// dropped; [`live`](Self::live) counts the owner's blocks not yet
    /// freed, by any thread.
    pub struct Owner(usize);

    impl Owner {
        /// # Panics
        /// Under Miri, which counts no owners (see `CHARGES_OWNERS`).
        pub fn start() -> Owner {
            if !CHARGES_OWNERS {
                panic!("owners are not counted under Miri");
            }
            // Relaxed: only the number's uniqueness matters.
            let owner = NEXT_OWNER.fetch_add(1, Relaxed);
            assert!(owner < OWNERS, "more than {} owners in one run", OWNERS - 1);
            OWNER.with(|o| {
                assert_eq!(o.get(), 0, "this thread already charges an owner");
                o.set(owner);
            });
            Owner(owner)
        }

        /// Blocks allocated by this owner and not yet freed.
        pub fn live(&self) -> isize {
            // Relaxed: as in `alloc`.
            LIVE[self.0].load(Relaxed)
        }
    }

    impl Drop for Owner {
        fn drop(&mut self) {
            OWNER.with(|o| o.set(0));
        }
    }
}
