//! The history checker (`check/src/linearizability.rs`) and the
//! recorder's precedence (`check/src/recorder.rs`) on hand-built
//! histories of two small specifications: a FIFO queue (with a blocking
//! dequeue) and a map of registers (which partitions by key). Linearizable
//! and not, ones that need backtracking, pending and blocking operations;
//! and, on random small histories, the checker's verdict against a brute
//! force that tries every order.

use std::collections::VecDeque;

use crate::harness::linearizability::{check, History, Operation, Spec};
use crate::harness::recorder::{Precedence, Recorder};
use proptest::prelude::*;

/// A FIFO queue of small numbers.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
struct Fifo(VecDeque<u8>);

#[derive(Clone, Debug, PartialEq)]
enum FifoOp {
    Enq(u8),
    /// Returns the oldest value, or `None` if empty.
    TryDeq,
    /// Waits for a value.
    Deq,
}

impl Spec for Fifo {
    type Op = FifoOp;
    type Ret = Option<u8>;

    fn outcomes(&self, op: &FifoOp) -> Vec<(Option<u8>, Self)> {
        let mut next = self.clone();
        match op {
            FifoOp::Enq(v) => {
                next.0.push_back(*v);
                vec![(None, next)]
            }
            FifoOp::TryDeq => {
                let got = next.0.pop_front();
                vec![(got, next)]
            }
            FifoOp::Deq => match next.0.pop_front() {
                Some(v) => vec![(Some(v), next)],
                None => Vec::new(), // waits
            },
        }
    }

    /// A dequeue that did not return took nothing; an enqueue may have
    /// landed.
    fn unreturned(&self, op: &FifoOp) -> Vec<Self> {
        match op {
            FifoOp::Enq(_) => self.outcomes(op).into_iter().map(|(_, s)| s).collect(),
            _ => Vec::new(),
        }
    }
}

/// Builds an operation: `(thread, op, ret, called, returned)`.
fn op<S: Spec>(
    thread: usize,
    op: S::Op,
    ret: Option<S::Ret>,
    called: u64,
    returned: Option<u64>,
) -> Operation<S> {
    Operation {
        thread,
        op,
        ret,
        called,
        returned,
        gave_up: None,
    }
}

fn fifo(ops: Vec<Operation<Fifo>>) -> History<Fifo> {
    History::real_time(Fifo::default(), ops)
}

/// A sequential history is linearizable in its own order; one whose
/// returns contradict the specification is not, and the report names the
/// operation that could not be placed and the return the specification
/// allowed, after the longest prefix that could.
///
/// Checks: L-1, L-3.
#[test]
fn sequential_histories_and_a_wrong_return() {
    use FifoOp::*;
    let good = fifo(vec![
        op(0, Enq(1), Some(None), 0, Some(1)),
        op(0, Enq(2), Some(None), 2, Some(3)),
        op(0, TryDeq, Some(Some(1)), 4, Some(5)),
        op(0, TryDeq, Some(Some(2)), 6, Some(7)),
        op(0, TryDeq, Some(None), 8, Some(9)),
    ]);
    assert_eq!(check(&good).unwrap().0, vec![0, 1, 2, 3, 4]);

    let bad = fifo(vec![
        op(0, Enq(1), Some(None), 0, Some(1)),
        op(1, TryDeq, Some(None), 2, Some(3)),
        op(1, Enq(5), Some(None), 4, Some(5)),
    ]);
    let failure = check(&bad).unwrap_err();
    assert_eq!(failure.prefix, vec![0]);
    assert_eq!(failure.stuck.len(), 1);
    assert_eq!(failure.stuck[0].0, 1);
    assert_eq!(failure.stuck[0].1, vec![Some(1)]);
    let report = failure.to_string();
    for expected in [
        "not linearizable: 3 operations on 2 threads, ordered by real time",
        "longest linearizable prefix (1 of 3 operations)",
        "could not place [1] thread 1: TryDeq -> None (after [0]); the specification allows [Some(1)]",
        "| thread 0",
        "| thread 1",
    ] {
        assert!(report.contains(expected), "{expected:?} missing from:\n{report}");
    }
}

/// Overlapping operations may take effect in either order, and the search
/// backtracks out of the first order it tries: two concurrent enqueues
/// observed in the opposite order, and a dequeue of the later one while
/// the earlier is still in progress.
///
/// Checks: L-1.
#[test]
fn concurrent_operations_need_backtracking() {
    use FifoOp::*;
    // Enq(1) [0..10] and Enq(2) [1..11] overlap; the dequeues after both
    // see 2 first.
    let swapped = fifo(vec![
        op(0, Enq(1), Some(None), 0, Some(10)),
        op(1, Enq(2), Some(None), 1, Some(11)),
        op(0, TryDeq, Some(Some(2)), 12, Some(13)),
        op(0, TryDeq, Some(Some(1)), 14, Some(15)),
    ]);
    assert_eq!(check(&swapped).unwrap().0, vec![1, 0, 2, 3]);

    // But not if Enq(1) returned before Enq(2) was called.
    let ordered = fifo(vec![
        op(0, Enq(1), Some(None), 0, Some(1)),
        op(1, Enq(2), Some(None), 2, Some(3)),
        op(0, TryDeq, Some(Some(2)), 4, Some(5)),
    ]);
    assert!(check(&ordered).is_err());

    // Three writers and a reader that sees them in the one order that
    // fits: the search must try several first choices.
    let three = fifo(vec![
        op(0, Enq(1), Some(None), 0, Some(20)),
        op(1, Enq(2), Some(None), 1, Some(21)),
        op(2, Enq(3), Some(None), 2, Some(22)),
        op(3, TryDeq, Some(Some(3)), 3, Some(23)),
        op(3, TryDeq, Some(Some(1)), 24, Some(25)),
        op(3, TryDeq, Some(Some(2)), 26, Some(27)),
    ]);
    // Enq(3) must come first, Enq(1) before Enq(2); the first dequeue may
    // come anywhere after Enq(3).
    let order = check(&three).unwrap().0;
    assert_eq!(order[0], 2);
    let at = |i: usize| order.iter().position(|&o| o == i).unwrap();
    assert!(at(0) < at(1) && at(1) < at(4) && at(4) < at(5));
}

/// An operation that never returned may have taken effect (an enqueue
/// whose value was dequeued) or not; it precedes nothing. A dequeue that
/// never returned took nothing: a value it would have taken is still
/// there.
///
/// Checks: L-2.
#[test]
fn pending_operations_may_or_may_not_take_effect() {
    use FifoOp::*;
    let landed = fifo(vec![
        op(0, Enq(7), None, 0, None),
        op(1, TryDeq, Some(Some(7)), 1, Some(2)),
    ]);
    assert!(check(&landed).is_ok());
    let not_landed = fifo(vec![
        op(0, Enq(7), None, 0, None),
        op(1, TryDeq, Some(None), 1, Some(2)),
    ]);
    assert!(check(&not_landed).is_ok());
    // A pending dequeue cannot have taken the 4 that a later dequeue found.
    let stolen = fifo(vec![
        op(0, Enq(4), Some(None), 0, Some(1)),
        op(1, Deq, None, 2, None),
        op(0, TryDeq, Some(Some(4)), 3, Some(4)),
    ]);
    assert!(check(&stolen).is_ok());
    let lost = fifo(vec![
        op(0, Enq(4), Some(None), 0, Some(1)),
        op(1, Deq, None, 2, None),
        op(0, TryDeq, Some(None), 3, Some(4)),
    ]);
    let failure = check(&lost).unwrap_err();
    assert_eq!(failure.stuck, vec![(2, vec![Some(4)])]);
}

/// A blocking operation takes effect where the specification lets it
/// return: a dequeue called on an empty queue returns the value enqueued
/// while it waited; one that returns a value nobody enqueued, or returns
/// before the enqueue was called, is not linearizable.
///
/// Checks: L-2.
#[test]
fn blocking_operations_linearize_where_they_may_return() {
    use FifoOp::*;
    let waited = fifo(vec![
        op(1, Deq, Some(Some(9)), 0, Some(5)),
        op(0, Enq(9), Some(None), 2, Some(3)),
    ]);
    assert_eq!(check(&waited).unwrap().0, vec![1, 0]);
    let early = fifo(vec![
        op(1, Deq, Some(Some(9)), 0, Some(1)),
        op(0, Enq(9), Some(None), 2, Some(3)),
    ]);
    let failure = check(&early).unwrap_err();
    assert!(failure
        .to_string()
        .contains("no return here (it would wait)"));
}

/// A map of registers: independent keys, so a history partitions by key.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
struct Registers([u8; 4]);

#[derive(Clone, Debug, PartialEq)]
enum RegOp {
    Write(usize, u8),
    Read(usize),
    /// Touches every register: histories with one do not partition.
    ReadAll,
}

impl Spec for Registers {
    type Op = RegOp;
    type Ret = Vec<u8>;

    fn outcomes(&self, op: &RegOp) -> Vec<(Vec<u8>, Self)> {
        match *op {
            RegOp::Write(k, v) => {
                let mut next = self.clone();
                next.0[k] = v;
                vec![(Vec::new(), next)]
            }
            RegOp::Read(k) => vec![(vec![self.0[k]], self.clone())],
            RegOp::ReadAll => vec![(self.0.to_vec(), self.clone())],
        }
    }

    fn partition(&self, ops: &[(&RegOp, Option<&Vec<u8>>)]) -> Option<Vec<Vec<usize>>> {
        let mut parts = vec![Vec::new(); 4];
        for (i, (op, _)) in ops.iter().enumerate() {
            match op {
                RegOp::Write(k, _) | RegOp::Read(k) => parts[*k].push(i),
                RegOp::ReadAll => return None,
            }
        }
        parts.retain(|p| !p.is_empty());
        Some(parts)
    }
}

/// A blocked operation given up when nothing else could run (a give-up
/// check, `Operation::gave_up`): accepted where the specification has it
/// wait at that moment, rejected (a lost wake-up) where it could have
/// returned, even though the operation itself may always be left out.
///
/// Checks: L-2, L-3.
#[test]
fn given_up_operations_must_wait_where_they_were_given_up() {
    let give_up = |blocked: usize, at: u64| Operation {
        gave_up: Some(blocked),
        ..op::<Fifo>(1, FifoOp::Deq, None, at, Some(at + 1))
    };
    // Nothing enqueued before the give-up: it waits.
    let waits = fifo(vec![
        op(1, FifoOp::Deq, None, 0, None),
        give_up(0, 1),
        op(0, FifoOp::Enq(7), None, 3, Some(4)),
    ]);
    check(&waits).expect("given up on an empty queue");
    // An enqueue returned before the give-up: the dequeue should have
    // been woken for it.
    let lost = fifo(vec![
        op(0, FifoOp::Enq(7), None, 0, Some(1)),
        op(1, FifoOp::Deq, None, 2, None),
        give_up(1, 3),
    ]);
    let failure = check(&lost).expect_err("a lost wake-up");
    let text = failure.to_string();
    assert!(text.contains("a lost wake-up"), "{text}");
    assert!(text.contains("gave [1] up"), "{text}");
    // An enqueue concurrent with the give-up may come after it.
    let racing = fifo(vec![
        op(1, FifoOp::Deq, None, 0, None),
        op(0, FifoOp::Enq(7), None, 1, Some(4)),
        give_up(0, 2),
    ]);
    check(&racing).expect("the enqueue may come after the give-up");
}

/// P-compositionality: a history of independent keys is checked key by
/// key, and a violation on one key is reported with that key's operations
/// alone; a history with an operation that spans keys is checked whole.
/// Many concurrent operations on many keys check in a search no larger
/// than the largest key's.
///
/// Checks: L-4.
#[test]
fn histories_partition_by_independent_parts() {
    use RegOp::*;
    let mut ops = Vec::new();
    // 4 keys x 6 fully concurrent writes and reads: without partitioning,
    // the orders to consider multiply across keys.
    for k in 0..4 {
        for w in 0..3u8 {
            ops.push(op(k * 2, Write(k, w + 1), Some(vec![]), 0, Some(100)));
        }
        ops.push(op(k * 2 + 1, Read(k), Some(vec![3]), 1, Some(101)));
    }
    let history = History::real_time(Registers::default(), ops.clone());
    assert!(check(&history).is_ok());

    // Key 2 reads a value never written: only key 2's operations are shown.
    ops.push(op(9, Read(2), Some(vec![7]), 200, Some(201)));
    let failure = check(&History::real_time(Registers::default(), ops.clone())).unwrap_err();
    assert!(failure
        .history
        .ops
        .iter()
        .all(|o| matches!(o.op, Write(2, _) | Read(2))));

    // With a read of everything, no partition: still checked, whole.
    ops.pop();
    ops.push(op(9, ReadAll, Some(vec![3, 3, 3, 3]), 200, Some(201)));
    assert!(check(&History::real_time(Registers::default(), ops)).is_ok());
}

/// An outcome a specification allows only because something ran at the
/// same time (`Spec::needs_overlap`) is accepted only where the history
/// holds such an operation overlapping it. The run queue's: a steal from a
/// ring that holds items may return `None` only while another steal of
/// that ring overlaps it. Overlapped by the owner's pop alone (a steal
/// that gives up on any contention), or by nothing, the history fails and
/// the printout allows only the steal's full take; overlapped by a steal
/// of the same ring that took items, it passes, in either order of the
/// history; overlapped only by a steal that gave up too, it fails.
///
/// Checks: L-6, Q-8.
#[test]
fn outcomes_that_need_a_concurrent_operation_need_one_in_the_history() {
    use crate::specs::queue::{Op as Q, Queue, Ret};
    let mut initial = Queue::new([4, 4, 4]);
    initial.rings[0].extend([10, 11]);
    let steal = |thread, into, ret, called, returned| {
        op::<Queue>(
            thread,
            Q::Steal { from: 0, into },
            Some(ret),
            called,
            Some(returned),
        )
    };
    let gave_up = steal(1, 1, Ret::Item(None), 2, 5);
    // Alone: a steal from a ring with two items takes one and returns it.
    let alone = History::real_time(initial.clone(), vec![gave_up.clone()]);
    let failure = check(&alone).unwrap_err();
    assert_eq!(
        failure.stuck,
        vec![(0, vec![Ret::Item(Some(10))])],
        "{failure}"
    );
    // Beside the owner's pop: still no reason to give up.
    let pop = op::<Queue>(0, Q::Pop(0), Some(Ret::Item(Some(10))), 1, Some(6));
    let contended = History::real_time(initial.clone(), vec![pop.clone(), gave_up.clone()]);
    assert!(check(&contended).is_err(), "gave up beside the owner's pop");
    // Beside another steal of ring 0, which took the first item: allowed.
    let other = steal(2, 2, Ret::Item(Some(10)), 1, 6);
    let racing = History::real_time(initial.clone(), vec![other.clone(), gave_up.clone()]);
    check(&racing).expect("gave up beside another steal of its ring");
    // Beside a steal of ring 0 that gave up too: that one claimed nothing,
    // so neither is the other's reason.
    let both = History::real_time(
        initial.clone(),
        vec![steal(2, 2, Ret::Item(None), 1, 6), gave_up.clone()],
    );
    assert!(
        check(&both).is_err(),
        "two steals gave up, each the other's reason"
    );
    // The other steal over before this one began: no overlap, no reason.
    let mut after = other;
    after.returned = Some(1);
    after.called = 0;
    let sequential = History::real_time(initial, vec![after, gave_up]);
    assert!(
        check(&sequential).is_err(),
        "gave up after the other steal ended"
    );

    // An operation that never returned takes a conditioned outcome under
    // the same rule: a task's `Finish` (recorded unreturned) with its
    // output after an abort needs the abort to overlap it.
    use crate::specs::runtime::{Body, Op as R, Outcome, Ret as RRet, Runtime};
    let task = |abort: (u64, u64), finish_called: u64| {
        let ops = vec![
            op::<Runtime>(
                0,
                R::Spawn(0, Body::Returns(0)),
                Some(RRet::Unit),
                0,
                Some(1),
            ),
            op::<Runtime>(0, R::Abort(0), Some(RRet::Unit), abort.0, Some(abort.1)),
            op::<Runtime>(
                1,
                R::Finish(0, Outcome::Output(0)),
                None,
                finish_called,
                None,
            ),
            op::<Runtime>(
                0,
                R::Join(0),
                Some(RRet::Joined(Outcome::Output(0))),
                8,
                Some(9),
            ),
        ];
        check(&History::real_time(Runtime::default(), ops))
    };
    // The abort returned before the final poll's window began: it
    // cancels, so the output is wrong.
    assert!(
        task((2, 3), 4).is_err(),
        "output kept after an earlier abort"
    );
    // The abort overlapped the window: tokio's race, the output is kept.
    task((3, 5), 4).expect("output kept by an abort during the final poll");
    // Without the abort the output needs no reason.
    let plain = vec![
        op::<Runtime>(
            0,
            R::Spawn(0, Body::Returns(0)),
            Some(RRet::Unit),
            0,
            Some(1),
        ),
        op::<Runtime>(1, R::Finish(0, Outcome::Output(0)), None, 2, None),
        op::<Runtime>(0, R::IsFinished(0), Some(RRet::Bool(true)), 3, Some(4)),
    ];
    check(&History::real_time(Runtime::default(), plain.clone()))
        .expect("finished after the final poll");
    // `is_finished` true before the final poll's window began: wrong.
    let mut early = plain;
    early[1].called = 5;
    assert!(
        check(&History::real_time(Runtime::default(), early)).is_err(),
        "finished before the final poll began"
    );
}

/// The recorder's happens-before: program order, spawn, join and
/// hand-offs order operations; without them, operations of different
/// threads are concurrent whatever the clock says. Under real time, the
/// clock alone orders them.
///
/// Checks: L-5.
#[test]
fn recorder_precedence_from_program_order_fork_join_and_handoffs() {
    use FifoOp::*;
    let recorder = Recorder::new(Fifo::default());
    let main = recorder.thread(0);
    let (a, b) = (recorder.thread(1), recorder.thread(2));
    main.op(Enq(1), || (), |_| None); // 0
    main.fork(1);
    main.fork(2);
    a.op(Enq(2), || (), |_| None); // 1
    a.signal(0);
    b.op(TryDeq, || (), |_| Some(1)); // 2: concurrent with 1
    b.waited(0, true);
    b.op(TryDeq, || (), |_| Some(2)); // 3: after 1 (hand-off), after 2 (program order)
    main.join(1);
    main.join(2);
    main.op(TryDeq, || (), |_| None); // 4: after everything
                                      // The clock orders them as recorded.
    let real_time = recorder.history_by(Precedence::RealTime);
    assert_eq!(real_time.before, vec![0, 0b1, 0b11, 0b111, 0b1111]);
    // Happens-before: 2 (thread 2's first) is concurrent with 1 (thread
    // 1's), which the hand-off orders before 3.
    let happens_before = recorder.history_by(Precedence::HappensBefore);
    assert_eq!(happens_before.before, vec![0, 0b1, 0b1, 0b111, 0b1111]);
    assert!(check(&real_time).is_ok() && check(&happens_before).is_ok());

    // Without the hand-off, 3 is concurrent with 1 too.
    let recorder = Recorder::new(Fifo::default());
    let (main, a, b) = (recorder.thread(0), recorder.thread(1), recorder.thread(2));
    main.fork(1);
    main.fork(2);
    a.op(Enq(2), || (), |_| None);
    b.op(TryDeq, || (), |_| None);
    b.op(TryDeq, || (), |_| Some(2));
    assert_eq!(
        recorder.history_by(Precedence::HappensBefore).before,
        vec![0, 0, 0b10]
    );
    assert_eq!(
        recorder.history_by(Precedence::RealTime).before,
        vec![0, 0b1, 0b11]
    );
    // Real time says the first dequeue came after the enqueue returned:
    // it should have found 2. Happens-before lets it come first.
    assert!(check(&recorder.history_by(Precedence::RealTime)).is_err());
    assert!(check(&recorder.history_by(Precedence::HappensBefore)).is_ok());

    // A hand-off seen in real time only (a relaxed flag) orders nothing
    // in happens-before: the same as no hand-off.
    let recorder = Recorder::new(Fifo::default());
    let (main, a, b) = (recorder.thread(0), recorder.thread(1), recorder.thread(2));
    main.fork(1);
    main.fork(2);
    a.op(Enq(2), || (), |_| None);
    a.signal(0);
    b.waited(0, false);
    b.op(TryDeq, || (), |_| None);
    assert_eq!(
        recorder.history_by(Precedence::HappensBefore).before,
        vec![0, 0]
    );
    assert_eq!(
        recorder.history_by(Precedence::RealTime).before,
        vec![0, 0b1]
    );
}

/// The history of a spec over the values 0..3, as random (op, ret) pairs
/// on up to three threads with random intervals.
fn random_history() -> impl Strategy<Value = History<Fifo>> {
    let fifo_op = prop_oneof![
        (0u8..3).prop_map(FifoOp::Enq),
        Just(FifoOp::TryDeq),
        Just(FifoOp::Deq),
    ];
    let ret = prop_oneof![Just(None), (0u8..3).prop_map(Some)];
    let one = (0usize..3, fifo_op, ret, 0u64..12, 0u64..6, any::<bool>());
    proptest::collection::vec(one, 1..7).prop_map(|ops| {
        let ops = ops
            .into_iter()
            .map(|(thread, op, ret, called, length, pending)| {
                let ret = match op {
                    FifoOp::Enq(_) => None,
                    _ => ret,
                };
                let returned = (!pending).then_some(called * 2 + 1 + length * 2);
                Operation {
                    thread,
                    op,
                    ret: returned.map(|_| ret),
                    called: called * 2,
                    returned,
                    gave_up: None,
                }
            })
            .collect();
        History::real_time(Fifo::default(), ops)
    })
}

/// Whether some order of the operations (each pending one placed or left
/// out) fits the specification and the precedence: every order, tried.
fn brute_force(h: &History<Fifo>) -> bool {
    fn go(h: &History<Fifo>, state: &Fifo, placed: u128, skipped: u128) -> bool {
        let n = h.ops.len();
        if (0..n).all(|i| (placed | skipped) & (1 << i) != 0 || h.ops[i].ret.is_none()) {
            return true;
        }
        (0..n).any(|i| {
            let bit = 1u128 << i;
            if (placed | skipped) & bit != 0 || h.before[i] & !placed != 0 {
                return false;
            }
            match &h.ops[i].ret {
                Some(ret) => state
                    .outcomes(&h.ops[i].op)
                    .into_iter()
                    .any(|(r, next)| r == *ret && go(h, &next, placed | bit, skipped)),
                None => {
                    go(h, state, placed, skipped | bit)
                        || state
                            .unreturned(&h.ops[i].op)
                            .into_iter()
                            .any(|next| go(h, &next, placed | bit, skipped))
                }
            }
        })
    }
    go(h, &h.initial, 0, 0)
}

proptest! {
    #![proptest_config(crate::support::proptest_config(2048))]

    /// On random histories of up to six operations, the checker accepts
    /// exactly the histories some order of the operations explains, and
    /// every linearization it returns is one: it keeps the precedence,
    /// places every returned operation, and replays through the
    /// specification with the recorded returns.
    ///
    /// Checks: L-1, L-2.
    #[test]
    fn agrees_with_brute_force(history in random_history()) {
        let verdict = check(&history);
        prop_assert_eq!(verdict.is_ok(), brute_force(&history), "{:?}", history.ops);
        if let Ok(found) = verdict {
            let mut state = history.initial.clone();
            let mut placed = 0u128;
            for &i in &found.0 {
                prop_assert_eq!(history.before[i] & !placed, 0, "order broken at {}", i);
                let o = &history.ops[i];
                state = match &o.ret {
                    Some(ret) => state.outcomes(&o.op).into_iter().find(|(r, _)| r == ret).map(|(_, s)| s),
                    None => state.unreturned(&o.op).into_iter().next(),
                }.expect("a step the specification allows");
                placed |= 1 << i;
            }
            for (i, o) in history.ops.iter().enumerate() {
                prop_assert!(o.ret.is_none() || placed & (1 << i) != 0, "{} left out", i);
            }
        }
    }
}
