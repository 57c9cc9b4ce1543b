//! `concurrent-queue` (smol-rs), a crate nobody here wrote, checked
//! through its own loom support (its `loom` feature under `--cfg loom`):
//! its three queues (`unbounded`, `bounded(1)`: the single slot,
//! `bounded(2)`: the ring) against one sequential specification of the
//! documented contract, over every scenario of a scope: two threads with
//! one call each of push, pop and close, from each regime of the queue's
//! state (empty, one item, full, closed with an item, closed and empty),
//! every history checked for linearizability, every item dropped exactly
//! once. Run with
//! `RUSTFLAGS="--cfg loom" cargo test --release -p modelsync-check --test concurrent_queue`.
//! Not under shuttle: the crate has no shuttle support, and shuttle cannot
//! schedule std atomics.
#![cfg(not(shuttle))]

use std::collections::VecDeque;

use concurrent_queue::{ConcurrentQueue, PopError, PushError};
use modelsync_check::linearizability::{Overlap, Spec};
use modelsync_check::recorder::ThreadRecorder;
use modelsync_check::scenario::{Scenario, Subject, Waiter};
use modelsync_check::scope::{self, Regime, Scope};
use modelsync_check::{model, Ledger, Tracked};
use proptest::strategy::BoxedStrategy;

/// The documented contract, sequentially: a FIFO queue of at most `cap`
/// items (`None`: unbounded) that can be closed once. `push` fails with
/// `Full` or `Closed` (the docs do not say which when both hold, so both
/// are allowed); `pop` returns the oldest item, even after `close`, and
/// `Closed` only when closed and empty; `close` answers whether this call
/// closed it.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
struct QueueSpec {
    items: VecDeque<usize>,
    closed: bool,
    cap: Option<usize>,
    /// The single-slot queue as built (see `single_scope_complete`): a
    /// push may also answer `Full` on a queue that is not full, while a
    /// pop that took the item overlaps it.
    full_while_a_pop_holds_the_slot: bool,
}

#[derive(Clone, Debug, PartialEq)]
enum SpecOp {
    Push(usize),
    Pop,
    Close,
}

#[derive(Clone, Debug, PartialEq)]
enum Ret {
    Push(Result<(), &'static str>),
    Pop(Result<usize, &'static str>),
    Close(bool),
}

impl Spec for QueueSpec {
    type Op = SpecOp;
    type Ret = Ret;

    fn outcomes(&self, op: &SpecOp) -> Vec<(Ret, Self)> {
        let same = |ret| vec![(ret, self.clone())];
        match op {
            SpecOp::Push(id) => {
                let full = self.cap.is_some_and(|cap| self.items.len() >= cap);
                let mut refusals = Vec::new();
                if self.closed {
                    refusals.push((Ret::Push(Err("closed")), self.clone()));
                }
                if full {
                    refusals.push((Ret::Push(Err("full")), self.clone()));
                }
                if !refusals.is_empty() {
                    return refusals;
                }
                let mut next = self.clone();
                next.items.push_back(*id);
                let mut outcomes = vec![(Ret::Push(Ok(())), next)];
                if self.full_while_a_pop_holds_the_slot {
                    outcomes.push((Ret::Push(Err("full")), self.clone()));
                }
                outcomes
            }
            SpecOp::Pop => match self.items.front() {
                Some(&id) => {
                    let mut next = self.clone();
                    next.items.pop_front();
                    vec![(Ret::Pop(Ok(id)), next)]
                }
                None if self.closed => same(Ret::Pop(Err("closed"))),
                None => same(Ret::Pop(Err("empty"))),
            },
            SpecOp::Close => {
                let mut next = self.clone();
                next.closed = true;
                vec![(Ret::Close(!self.closed), next)]
            }
        }
    }

    /// `Full` from a queue that is not full, where the as-built single
    /// slot allows it: only with a pop that took an item overlapping.
    fn needs_overlap(&self, op: &SpecOp, ret: &Ret, _next: &Self) -> Option<Overlap<SpecOp, Ret>> {
        let full = self.cap.is_some_and(|cap| self.items.len() >= cap);
        (matches!(op, SpecOp::Push(_)) && *ret == Ret::Push(Err("full")) && !full && !self.closed)
            .then(|| {
                Overlap::new("a pop that took an item, holding the slot", |op, ret| {
                    *op == SpecOp::Pop && ret.map_or(true, |r| matches!(r, Ret::Pop(Ok(_))))
                })
            })
    }
}

/// A scenario's operation: a push names the item it pushes.
#[derive(Clone, Debug, PartialEq)]
enum Op {
    Push(usize),
    Pop,
    Close,
}

/// One of the crate's three queues, by its capacity (`0`: unbounded),
/// checked against the documented contract, or (`AS_BUILT`) against it
/// with the single slot's `Full` while a pop holds it.
struct Queue<const CAP: usize, const AS_BUILT: bool = false>;

fn new_queue(cap: usize) -> ConcurrentQueue<Tracked> {
    match cap {
        0 => ConcurrentQueue::unbounded(),
        cap => ConcurrentQueue::bounded(cap),
    }
}

impl<const CAP: usize, const AS_BUILT: bool> Subject for Queue<CAP, AS_BUILT> {
    type Spec = QueueSpec;
    type Op = Op;
    type Actor = std::sync::Arc<ConcurrentQueue<Tracked>>;
    const NAME: &'static str = "concurrent-queue";
    const RUST_TYPE: &'static str = "Queue<CAP>";

    fn items(scenario: &Scenario<Op>) -> usize {
        scenario
            .ops()
            .filter(|op| matches!(op, Op::Push(_)))
            .count()
    }

    fn setup(_: &Scenario<Op>) -> (QueueSpec, Self::Actor) {
        let spec = QueueSpec {
            items: VecDeque::new(),
            closed: false,
            cap: (CAP > 0).then_some(CAP),
            full_while_a_pop_holds_the_slot: AS_BUILT,
        };
        (spec, std::sync::Arc::new(new_queue(CAP)))
    }

    fn split(main: &mut Self::Actor, _: &Scenario<Op>, _: usize) -> Self::Actor {
        main.clone()
    }

    fn merge(_: &mut Self::Actor, _: Self::Actor) {}

    fn run(
        queue: &mut Self::Actor,
        op: &Op,
        rec: &ThreadRecorder<QueueSpec>,
        _: &Waiter,
        ledger: &Ledger,
    ) {
        match op {
            Op::Push(id) => {
                let item = ledger.item(*id);
                let pushed = rec.op(
                    SpecOp::Push(*id),
                    || queue.push(item),
                    |r| {
                        Ret::Push(r.as_ref().map(|_| ()).map_err(|e| match e {
                            PushError::Full(_) => "full",
                            PushError::Closed(_) => "closed",
                        }))
                    },
                );
                drop(pushed); // a refused item comes back and is dropped here
            }
            Op::Pop => {
                let popped = rec.op(
                    SpecOp::Pop,
                    || queue.pop(),
                    |r| {
                        Ret::Pop(r.as_ref().map(Tracked::id).map_err(|e| match e {
                            PopError::Empty => "empty",
                            PopError::Closed => "closed",
                        }))
                    },
                );
                if let Ok(item) = popped {
                    ledger.deliver(item);
                }
            }
            Op::Close => {
                rec.op(
                    SpecOp::Close,
                    || queue.close(),
                    |&closed| Ret::Close(closed),
                );
            }
        }
    }

    fn rust(op: &Op) -> String {
        format!("Op::{op:?}")
    }

    /// Items numbered in scenario order.
    fn canonical(mut scenario: Scenario<Op>) -> Scenario<Op> {
        let mut next = 0;
        for op in scenario.ops_mut() {
            if let Op::Push(id) = op {
                *id = next;
                next += 1;
            }
        }
        scenario
    }

    fn scenarios() -> BoxedStrategy<Scenario<Op>> {
        use proptest::prelude::*;
        let op = prop_oneof![Just(Op::Push(0)), Just(Op::Pop), Just(Op::Close)].boxed();
        modelsync_check::scenario::shape(op.clone(), vec![op.clone(), op.clone()], op, [2, 2, 2])
            .prop_map(Self::canonical)
            .boxed()
    }
}

/// The queue's scope at capacity `CAP` (`0`: unbounded): two threads, one
/// or `calls` calls each of push, pop and close, from every regime of the
/// queue's state; then the main thread pops until it is empty.
fn queue_scope<const CAP: usize, const AS_BUILT: bool>(
    name: &'static str,
    calls: usize,
) -> Scope<Queue<CAP, AS_BUILT>> {
    use Op::*;
    type Q = std::sync::Arc<ConcurrentQueue<Tracked>>;
    let mut regimes = vec![
        Regime::new("empty", vec![], |q: &mut Q| q.is_empty() && !q.is_closed()),
        Regime::new("one_item", vec![Push(0)], |q: &mut Q| {
            q.len() == 1 && !q.is_closed()
        }),
        Regime::new("closed_with_an_item", vec![Push(0), Close], |q: &mut Q| {
            q.len() == 1 && q.is_closed()
        }),
        Regime::new("closed_and_empty", vec![Close], |q: &mut Q| {
            q.is_empty() && q.is_closed()
        }),
    ];
    if CAP == 2 {
        regimes.push(Regime::new("full", vec![Push(0), Push(0)], |q: &mut Q| {
            q.is_full()
        }));
    }
    let alphabet = vec![Push(0), Pop, Close];
    Scope {
        name,
        threads: vec![alphabet.clone(), alphabet],
        lengths: (1, calls),
        post: vec![Pop, Pop, Pop],
        regimes,
        ordered_threads: false,
        real_time_orders: true,
        contract: scope::any_operations,
        shard_of: None,
    }
}

/// `ConcurrentQueue::unbounded()`: every scenario of its scope.
#[test]
fn unbounded_scope_complete() {
    scope::every_scenario(
        model!(),
        queue_scope::<0, false>("concurrent-queue-unbounded-2x2", 2),
    );
}

/// `ConcurrentQueue::bounded(1)`, the single slot, against the documented
/// contract: it fails. A pop takes the item by setting the state to
/// LOCKED (no longer PUSHED) and copies it out before unlocking; meanwhile
/// a pop answers `Empty` and a push answers `Full` (its compare-exchange
/// from 0 fails on LOCKED, and LOCKED is not CLOSED). So one thread can pop
/// `Empty` and then push `Full` with nothing pushed in between, which no
/// order of the calls explains (regime `one_item`: another thread pops the
/// item while this one pops, then pushes). Found by this scope on
/// concurrent-queue 2.5.0; run only when asked (`-- --ignored`), and CI's
/// `ci/check_crate` requires the failure.
#[test]
#[ignore = "fails on concurrent-queue 2.5.0: a spurious Full while a pop holds the single slot"]
fn single_scope_against_the_documented_contract() {
    scope::every_scenario(
        model!(),
        queue_scope::<1, false>("concurrent-queue-single-2x2", 2),
    );
}

/// `ConcurrentQueue::bounded(1)`, the single slot, against the contract
/// with that one deviation allowed (a push's `Full` on a queue that is not
/// full, only while a pop that took the item overlaps it): every scenario
/// of its scope; nothing else departs from the contract.
#[test]
fn single_scope_complete() {
    scope::every_scenario(
        model!(),
        queue_scope::<1, true>("concurrent-queue-single-as-built-2x2", 2),
    );
}

/// `ConcurrentQueue::bounded(2)`, the ring: every scenario of its scope.
#[test]
fn bounded_scope_complete() {
    scope::every_scenario(
        model!(),
        queue_scope::<2, false>("concurrent-queue-bounded-2x2", 2),
    );
}
