//! State-machine tests of the run queue's single-threaded operations against
//! its sequential specification (`specs/queue.rs`, the one the models'
//! histories are checked against), stepped as one thread runs it.
//!
//! Two rings (A and B) and one inject queue are driven by a random sequence
//! of pushes, pops, steals in both directions and inject pops. After every
//! step the real queues must hold exactly the items the model says, in the
//! same order: which items an overflow moves, which a steal moves and which
//! one it returns are all compared by identity. Indices start at a random
//! value, often just before `u32::MAX`, so wraparound is crossed.

use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::specs::queue::{Op as SpecOp, Queue, Ret};
use crate::support::{panic_message, DropLog, Item};
use modelsync::queue::{Inject, Local};
use proptest::prelude::*;

#[derive(Debug, Clone, Copy)]
enum Op {
    Push(Ring),
    Pop(Ring),
    /// Steal from the first ring into the other.
    Steal(Ring),
    InjectPop,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Ring {
    A,
    B,
}

impl Ring {
    fn other(self) -> Ring {
        match self {
            Ring::A => Ring::B,
            Ring::B => Ring::A,
        }
    }
    fn index(self) -> usize {
        self as usize
    }
}

fn ring() -> impl Strategy<Value = Ring> {
    prop_oneof![Just(Ring::A), Just(Ring::B)]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => ring().prop_map(Op::Push),
        2 => ring().prop_map(Op::Pop),
        2 => ring().prop_map(Op::Steal),
        1 => Just(Op::InjectPop),
    ]
}

/// Start indices: zero, just before the `u32` wraparound, or anywhere.
fn start_index() -> impl Strategy<Value = u32> {
    prop_oneof![Just(0), (0u32..64).prop_map(|k| u32::MAX - k), any::<u32>()]
}

/// The specification (`specs/queue.rs`) stepped as a single thread runs
/// it: every push and steal deterministic (no steal is ever in progress
/// beside another operation). Returns the item an operation returned.
fn apply(spec: &mut Queue, op: SpecOp) -> Option<u32> {
    use crate::harness::linearizability::Spec;
    let (ret, next) = spec.sequential(&op);
    assert!(
        spec.outcomes(&op).contains(&(ret.clone(), next.clone())),
        "the sequential outcome of {op:?} is not one the specification allows"
    );
    *spec = next;
    match ret {
        Ret::Item(item) => item.map(|i| i as u32),
        Ret::Unit => None,
    }
}

fn contents(local: &mut Local<Item>, inject: &Inject<Item>) -> Vec<u32> {
    // Pops everything and pushes it back: push_back never overflows here
    // because the ring held these items a moment ago.
    let mut items = Vec::new();
    while let Some(item) = local.pop() {
        items.push(item);
    }
    let ids = items.iter().map(|i| i.id).collect();
    for item in items {
        local.push_back(item, inject);
    }
    ids
}

fn inject_contents(inject: &Inject<Item>) -> Vec<u32> {
    let mut items = Vec::new();
    while let Some(item) = inject.pop() {
        items.push(item);
    }
    let ids = items.iter().map(|i| i.id).collect();
    inject.push_batch(items.into_iter());
    ids
}

proptest! {
    #![proptest_config(crate::support::proptest_config(512))]

    /// Random operation sequences on two rings and an inject queue agree
    /// with the reference model item by item; every item is delivered at
    /// most once and dropped exactly once.
    ///
    /// Checks.
    #[test]
    fn matches_reference_model(
        cap_log2 in [1u32..=3, 1u32..=3],
        start in [start_index(), start_index()],
        // Under Miri, shorter: the full length is too slow there.
        ops in proptest::collection::vec(op(), 1..if cfg!(miri) { 40 } else { 120 }),
    ) {
        let mut log = DropLog::default();
        let capacity = [1usize << cap_log2[0], 1usize << cap_log2[1]];
        let mut model = Queue::new([capacity[0], capacity[1], 2]);
        let inject = Inject::new();
        let mut rings = [
            Local::with_capacity_at_index(capacity[0], start[0]),
            Local::with_capacity_at_index(capacity[1], start[1]),
        ];
        let mut delivered = Vec::new();

        for op in ops {
            match op {
                Op::Push(r) => {
                    let item = log.item();
                    let id = item.id;
                    rings[r.index()].push_back(item, &inject);
                    apply(&mut model, SpecOp::Push(r.index(), id as usize));
                }
                Op::Pop(r) => {
                    let got = rings[r.index()].pop().map(|i| i.id);
                    prop_assert_eq!(got, apply(&mut model, SpecOp::Pop(r.index())), "pop {:?}", r);
                    delivered.extend(got);
                }
                Op::Steal(from) => {
                    let stealer = rings[from.index()].stealer();
                    let got = stealer.steal_into(&mut rings[from.other().index()]).map(|i| i.id);
                    let steal = SpecOp::Steal { from: from.index(), into: from.other().index() };
                    prop_assert_eq!(got, apply(&mut model, steal), "steal from {:?}", from);
                    delivered.extend(got);
                }
                Op::InjectPop => {
                    let got = inject.pop().map(|i| i.id);
                    prop_assert_eq!(got, apply(&mut model, SpecOp::InjectPop), "inject pop");
                    delivered.extend(got);
                }
            }
            for r in [Ring::A, Ring::B] {
                let i = r.index();
                prop_assert_eq!(rings[i].len(), model.rings[i].len());
                prop_assert_eq!(rings[i].stealer().len(), model.rings[i].len());
                prop_assert_eq!(rings[i].is_empty(), model.rings[i].is_empty());
                prop_assert_eq!(rings[i].stealer().is_empty(), model.rings[i].is_empty());
                prop_assert_eq!(rings[i].capacity(), capacity[i]);
                prop_assert_eq!(rings[i].claimed_by_stealer(), 0);
            }
            prop_assert_eq!(inject.len(), model.inject.len());
            prop_assert_eq!(inject.is_empty(), model.inject.is_empty());
        }

        // Contents in order, then drop everything still queued.
        for r in [Ring::A, Ring::B] {
            let ids: Vec<usize> = contents(&mut rings[r.index()], &inject).into_iter().map(|i| i as usize).collect();
            prop_assert_eq!(ids, Vec::from(model.rings[r.index()].clone()));
        }
        let injected: Vec<usize> = inject_contents(&inject).into_iter().map(|i| i as usize).collect();
        prop_assert_eq!(injected, Vec::from(model.inject.clone()));
        drop(rings);
        drop(inject);

        prop_assert_eq!(log.each_dropped_once(), Ok(()), "every item dropped exactly once");
        let mut once = delivered.clone();
        once.sort_unstable();
        once.dedup();
        prop_assert_eq!(once.len(), delivered.len(), "an item was delivered twice");
    }

    /// Capacities that are not a power of two in `2..=2^31` are rejected with
    /// a panic that says what is allowed.
    ///
    /// Checks: Q-10.
    #[test]
    fn bad_capacity_panics_with_message(capacity in prop_oneof![
        Just(0usize), Just(1), 3usize..1024, Just(usize::MAX), Just(1usize << 40)
    ]) {
        prop_assume!(!(capacity.is_power_of_two() && (2..=1 << 31).contains(&capacity)));
        let result = catch_unwind(|| Local::<u32>::with_capacity(capacity));
        let message = panic_message(result.expect_err("bad capacity accepted"));
        prop_assert!(message.contains("power of two"), "message: {}", message);
        prop_assert!(message.contains(&capacity.to_string()), "message: {}", message);
    }
}

/// Stealing from a ring into itself is refused with a panic, and leaves the
/// ring's items where they were.
///
/// Checks: Q-10.
#[test]
fn steal_into_self_panics_and_keeps_items() {
    let inject = Inject::new();
    let mut local = Local::with_capacity(4);
    local.push_back(1u32, &inject);
    local.push_back(2, &inject);
    let stealer = local.stealer();
    let result = catch_unwind(AssertUnwindSafe(|| stealer.steal_into(&mut local)));
    let message = panic_message(result.expect_err("self-steal accepted"));
    assert!(message.contains("into itself"), "message: {message}");
    assert_eq!(local.pop(), Some(1));
    assert_eq!(local.pop(), Some(2));
    assert_eq!(local.pop(), None);
}
