// The keyed channel's release stack (`src/keyed/intake.rs`)
// on its own: its subject, scope, regimes and models, checked against
// `specs/release_stack.rs`. Included by `models/keyed.rs` (`include!`, not a
// module), so that its tests keep their names (`keyed::release_stack_...`),
// which the mutation records, the kill matrix and VERIFICATION.md use.

use crate::specs::release_stack as rspec;
use modelsync::internals::keyed::{Push, ReleaseStack};

/// The release stack as generated scenarios see it: thread 1 is the taker
/// (announces, takes all, closes at most once and nothing after), the
/// other threads push; the main thread takes and pushes before and after
/// them (one taker at a time: the threads' spawn and join order it).
/// Each push carries ledger item `n`, its scenario's `n`-th push; a value
/// taken is delivered, one refused by a closed stack dropped by its pusher.
struct ReleaseStackSubject;

/// Pushes ledger item `item`, recorded; a value refused by a closed stack
/// is its pusher's again and dropped here. Returns whether the push woke
/// the taker.
fn record_stack_push(
    stack: &ReleaseStack<Tracked>,
    item: usize,
    ledger: &Ledger,
    rec: &ThreadRecorder<rspec::ReleaseStack>,
) -> bool {
    use rspec::Ret;
    let value = ledger.item(item);
    let pushed = rec.op(
        rspec::Op::Push(item),
        || stack.push(value),
        |pushed| match pushed {
            Push::Queued => Ret::Queued,
            Push::WakeTaker => Ret::WakeTaker,
            Push::Closed(_) => Ret::Closed,
        },
    );
    matches!(pushed, Push::WakeTaker)
}

/// What `take_all` or `close` took, as the specification says it.
fn taken_items(values: &impl AsRef<[Tracked]>) -> rspec::Ret {
    rspec::Ret::Taken(values.as_ref().iter().map(Tracked::id).collect())
}

#[derive(Clone, Debug, PartialEq)]
enum StackOp {
    Push(usize),
    AnnounceWaiting,
    TakeAll,
    Close,
}

impl Subject for ReleaseStackSubject {
    type Spec = rspec::ReleaseStack;
    type Op = StackOp;
    type Actor = std::sync::Arc<ReleaseStack<Tracked>>;
    const NAME: &'static str = "keyed_release_stack";
    const RUST_TYPE: &'static str = "ReleaseStackSubject";

    fn items(scenario: &Scenario<StackOp>) -> usize {
        scenario
            .ops()
            .filter(|op| matches!(op, StackOp::Push(_)))
            .count()
    }

    fn setup(_: &Scenario<StackOp>) -> (rspec::ReleaseStack, Self::Actor) {
        (Default::default(), Default::default())
    }

    fn split(main: &mut Self::Actor, _: &Scenario<StackOp>, _: usize) -> Self::Actor {
        main.clone()
    }

    fn merge(_: &mut Self::Actor, _: Self::Actor) {}

    fn run(
        stack: &mut Self::Actor,
        op: &StackOp,
        rec: &ThreadRecorder<rspec::ReleaseStack>,
        _: &Waiter,
        ledger: &Ledger,
    ) {
        use rspec::{Op, Ret};
        let delivered = match *op {
            StackOp::Push(item) => {
                record_stack_push(stack, item, ledger, rec);
                Vec::new()
            }
            StackOp::AnnounceWaiting => {
                rec.op(
                    Op::AnnounceWaiting,
                    || stack.announce_waiting(),
                    |&announced| Ret::Announced(announced),
                );
                Vec::new()
            }
            StackOp::TakeAll => rec.op(Op::TakeAll, || stack.take_all(), taken_items),
            StackOp::Close => rec.op(Op::Close, || stack.close(), taken_items),
        };
        for value in delivered {
            ledger.deliver(value);
        }
    }

    fn rust(op: &StackOp) -> String {
        format!("StackOp::{op:?}")
    }

    fn canonical(scenario: Scenario<StackOp>) -> Scenario<StackOp> {
        number_pushes_and_close_once(scenario)
    }

    fn scenarios() -> BoxedStrategy<Scenario<StackOp>> {
        use proptest::prelude::*;
        let taker = prop_oneof![
            2 => Just(StackOp::AnnounceWaiting),
            3 => Just(StackOp::TakeAll),
            1 => Just(StackOp::Close),
            1 => Just(StackOp::Push(0)),
        ]
        .boxed();
        let pusher = Just(StackOp::Push(0)).boxed();
        (2usize..=3)
            .prop_flat_map(move |threads| {
                let mut parts = vec![taker.clone()];
                parts.extend((1..threads).map(|_| pusher.clone()));
                scenario::shape(taker.clone(), parts, taker.clone(), [2, 3, 2])
            })
            .prop_map(number_pushes_and_close_once)
            .boxed()
    }
}

/// Numbers the pushes in scenario order (init, threads, post) and keeps
/// the taker's contract: after a `Close`, the taker only pushes (a later
/// `Close`, `TakeAll` or announcement becomes a push).
fn number_pushes_and_close_once(mut scenario: Scenario<StackOp>) -> Scenario<StackOp> {
    let mut pushes = 0;
    let mut closed = false;
    let taker_parts = std::iter::once(&mut scenario.init)
        .chain(scenario.threads.first_mut())
        .chain(std::iter::once(&mut scenario.post));
    for ops in taker_parts {
        for op in ops.iter_mut() {
            if closed && *op != StackOp::Push(0) {
                *op = StackOp::Push(0);
            }
            closed |= *op == StackOp::Close;
        }
    }
    for op in scenario.ops_mut() {
        if let StackOp::Push(item) = op {
            *item = pushes;
            pushes += 1;
        }
    }
    scenario
}

/// Generated scenarios of the release stack: a taker announcing, taking
/// and closing while 1 or 2 threads push (`check/src/scenario.rs`), loom
/// complete for each within its budget, else at the highest bound that
/// finishes (`release_stack_complete_scenarios` is the complete run);
/// every history checked against
/// `specs/release_stack.rs` (push order kept in real time, exactly the
/// push that replaced an announcement wakes the taker, a push after
/// `close` refused), every item dropped once and delivered at most once.
///
/// Checks: K-3, K-4, K-9.
#[test]
fn release_stack_generated_scenarios() {
    scenario::generated::<ReleaseStackSubject>(model!().nightly());
}

/// The release stack's complete run: generated scenarios of a taker and
/// one pusher, each part small enough that loom explores every execution
/// of it, both passes, with no preemption bound (the run fails otherwise);
/// every history checked against `specs/release_stack.rs`.
///
/// Nightly: the main job's complete run is `keyed::release_stack_scope_complete`, every
/// scenario of a stated scope; these drawn scenarios complement it (their
/// initial and final parts drawn, where the scope fixes them).
///
/// Checks: K-3, K-4, K-9.
#[test]
fn release_stack_complete_scenarios() {
    scenario::generated_complete::<ReleaseStackSubject>(
        model!().nightly(),
        Small {
            scenarios: 16,
            threads: 2,
            sizes: [2, 2, 2],
        },
    );
}

/// The release stack's two races, complete: a push racing the taker's
/// announcement (exactly one of them sees the other: the push wakes the
/// taker, or the announcement fails and the taker takes the value), and a
/// push racing `close` (the value is taken by the close, or refused and
/// kept by its pusher, never both and never neither). History-checked.
///
/// Checks: K-3, K-4, K-9.
#[test]
fn release_stack_push_racing_announcement_and_close() {
    let woke = Reach::new("push_replaced_the_announcement");
    let refused = Reach::new("announcement_refused_after_a_push");
    let closed_out = Reach::new("push_refused_by_close");
    let reaches = [woke.clone(), refused.clone(), closed_out.clone()];
    model!()
        .reach(&woke)
        .reach(&refused)
        .reach(&closed_out)
        .check(move || {
            let [r_woke, r_refused, r_closed_out] = &reaches;
            let history = Recorder::new(rspec::ReleaseStack::default());
            let main = history.thread(0);
            let ledger = Ledger::new(2);
            let stack = std::sync::Arc::new(ReleaseStack::default());
            main.fork(1);
            let pusher = {
                let (stack, ledger, rec) = (stack.clone(), ledger.clone(), history.thread(1));
                thread::spawn(move || {
                    (0..2)
                        .map(|item| record_stack_push(&stack, item, &ledger, &rec))
                        .collect::<Vec<bool>>()
                })
            };
            let announced = main.op(
                rspec::Op::AnnounceWaiting,
                || stack.announce_waiting(),
                |&a| rspec::Ret::Announced(a),
            );
            let mut got = main.op(rspec::Op::Close, || stack.close(), taken_items);
            let wakes = pusher.join().unwrap();
            main.join(1);
            // The announcement and the first push: exactly one saw the
            // other, unless the close came before the push.
            if announced && wakes[0] {
                r_woke.hit();
            }
            r_refused.hit_if(!announced);
            r_closed_out.hit_if(got.len() < 2);
            assert!(
                wakes.iter().filter(|&&w| w).count() <= usize::from(announced),
                "a push woke a taker that had not announced, or two pushes woke it"
            );
            for value in got.drain(..) {
                ledger.deliver(value);
            }
            drop(stack);
            ledger.assert_all_dropped_once();
            history.check();
        });
}

/// The release stack's scope at `threads` threads of `lengths`
/// operations each (release-stack-2x1, the main job's; release-stack-3x1
/// and release-stack-2x2, the nightly's one size up): the taker's thread
/// calls operations of its alphabet (announce, take all, close, push:
/// every operation of the stack, the taker being a pusher too), a
/// pusher's thread pushes; from each regime of the head; then the taker
/// closes, taking what is left (a push after it is refused and dropped by
/// its pusher). The contract: the taker closes at most once and only
/// pushes after that. The taker is one thread's role alone (the stack
/// has one consumer), so the third thread of release-stack-3x1 is a
/// second pusher: the two pushers are interchangeable.
///
/// The regimes are the head's four situations (`src/keyed/intake.rs`)
/// and how each is reached: empty (fresh); holding envelopes (two pushed,
/// so a take reverses a chain); announced (the taker waits: the next
/// push replaces the mark and wakes it); an announcement replaced (a push
/// woke the taker, which has not taken yet); empty again after a take
/// (the chain handed over); closed (every push refused). One operation
/// per thread is what the races need once a regime is set up: a push
/// racing the announcement (K-3), a push racing the take of a chain
/// (order kept, K-4) or the close (K-9). One size up: two pushes racing
/// each other and the announcement (exactly one of them replaces it and
/// wakes the taker) or the close (each taken or refused, never both);
/// the taker's take or close right after its announcement, and two
/// pushes racing it. The head has no other situation, so the larger
/// sizes start from the same regimes.
fn release_stack_scope(
    threads: usize,
    lengths: (usize, usize),
) -> scope::Scope<ReleaseStackSubject> {
    use StackOp::*;
    fn closes_once_then_pushes(
        _prefix: &[StackOp],
        threads: &[Vec<StackOp>],
        _order: Option<(usize, usize)>,
    ) -> bool {
        let taker = &threads[0];
        match taker.iter().position(|op| *op == Close) {
            Some(at) => taker[at + 1..].iter().all(|op| matches!(op, Push(_))),
            None => true,
        }
    }
    let regime = scope::Regime::<ReleaseStackSubject>::new;
    let mut alphabets = vec![vec![AnnounceWaiting, TakeAll, Close, Push(0)]];
    alphabets.extend((1..threads).map(|_| vec![Push(0)]));
    // No commuting-threads cut one size up (`Subject::footprint`): every
    // operation is on the stack's one head.
    scope::Scope {
        name: match (threads, lengths.1) {
            (2, 1) => "release-stack-2x1",
            (3, 1) => "release-stack-3x1",
            (2, 2) => "release-stack-2x2",
            other => unreachable!("no release-stack scope {other:?}"),
        },
        threads: alphabets,
        lengths,
        post: vec![Close],
        // The pushers share the stack: their index means nothing (the
        // taker's alphabet is its own).
        ordered_threads: threads == 2,
        contract: closes_once_then_pushes,
        shard_of: None,
        real_time_orders: false,
        regimes: vec![
            regime("empty", vec![], |s| s.internals() == "empty"),
            regime("holding_two", vec![Push(0), Push(0)], |s| {
                s.internals() == "holding"
            }),
            regime("announced", vec![AnnounceWaiting], |s| {
                s.internals() == "announced"
            }),
            regime(
                "announcement_replaced",
                vec![AnnounceWaiting, Push(0)],
                |s| s.internals() == "holding",
            ),
            regime("empty_after_a_take", vec![Push(0), TakeAll], |s| {
                s.internals() == "empty"
            }),
            regime("closed", vec![Close], |s| s.internals() == "closed"),
        ],
    }
}

/// Every scenario of the release stack's scope (`release_stack_scope`:
/// the taker with one operation, a pusher with one push, from six regimes
/// of the head), complete under loom in both passes; every history
/// checked against `specs/release_stack.rs`, every item dropped once and
/// delivered at most once.
///
/// Scope: release-stack-2x1 (the taker with one operation of 4, a pusher with one push, from 6 regimes; scenarios that differ only in their items' names counted once)
///
/// Checks: K-3, K-4, K-9.
#[test]
fn release_stack_scope_complete() {
    scope::every_scenario(model!(), release_stack_scope(2, (1, 1)));
}

/// The release stack's scope one call up (`release_stack_scope`,
/// release-stack-2x2): as `release_stack_scope_complete`, one or two
/// operations per thread (the taker closing at most once, and only
/// pushing after it). Two calls on a thread are what the taker's take or
/// close right after its announcement, or two pushes in order, racing the
/// other thread need. Each scenario run with no preemption bound within the budget, or at the
/// highest preemption bound that finishes for it; under shuttle, every
/// scenario under PCT.
///
/// Scope: release-stack-2x2 (the taker with one or two operations of 4, closing at most once and then only pushing, a pusher with one or two pushes, from 6 regimes; scenarios that differ only in their items' names counted once)
///
/// Checks: K-3, K-4, K-9.
#[test]
fn release_stack_scope_two_ops_complete_or_bounded() {
    scope::every_scenario_complete_or_bounded(model!().nightly(), release_stack_scope(2, (1, 2)));
}

/// The release stack's scope one thread up (`release_stack_scope`,
/// release-stack-3x1): the taker and two pushers (the taker's role is
/// one thread's alone, so the third thread is a second pusher), one
/// operation each, from the six regimes of the head. Two pushers and the
/// taker at once are what two pushes racing for the announcement (exactly
/// one wakes the taker) or racing the close (each taken or refused) need.
/// Each scenario run with no preemption bound within the budget, or at the highest preemption
/// bound that finishes for it; under shuttle, every scenario under PCT.
///
/// Scope: release-stack-3x1 (the taker with one operation of 4, two interchangeable pushers with one push each, from 6 regimes; scenarios that differ only in their items' names counted once)
///
/// Checks: K-3, K-4, K-9.
#[test]
fn release_stack_scope_three_threads_complete_or_bounded() {
    scope::every_scenario_complete_or_bounded(model!().nightly(), release_stack_scope(3, (1, 1)));
}
