// The runtime's task state word and its join-waker hand-off (`src/runtime/state.rs`)
// on its own: its subject, scope, regimes and models, checked against
// `specs/task_state.rs`. Included by `models/runtime.rs` (`include!`, not a
// module), so that its tests keep their names (`runtime::task_state_...`,
// `runtime::join_waker_...` and the first layer's fixed models), which the
// mutation records, the kill matrix and VERIFICATION.md use.

/// A wake races the poll: either the wake finds the task idle and queues
/// it, or it finds it running and the poller requeues it when the poll
/// ends. Exactly one requeue in every interleaving: never lost, never
/// twice; and the waker's writes reach the next poll.
///
/// Checks.
#[test]
fn wake_racing_poll() {
    let by_waker = Reach::new("waker_queued_idle_task");
    let by_poller = Reach::new("poller_requeued_woken_task");
    let (r_waker, r_poller) = (by_waker.clone(), by_poller.clone());
    model!().reach(&by_waker).reach(&by_poller).check(move || {
        use tspec::Op;
        // A waker's reference, as if the task had cloned its waker.
        let history = Recorder::new(tspec::TaskState::new(1));
        let main = history.thread(0);
        let state = Arc::new(State::new());
        state.ref_inc();
        let data = Handoff::new();
        let waker = {
            let (state, data) = (state.clone(), data.clone());
            main.spawn(1, move |rec| {
                data.write(1);
                transition(&state, &rec, Op::WakeByVal, true)
            })
        };
        let running = transition(&state, &main, Op::ToRunning, true);
        assert_eq!(running, tspec::Ret::Running(ToRunning::Success));
        let idle = transition(&state, &main, Op::ToIdle, true);
        let woken = waker.join().unwrap();
        let submitted = woken == tspec::Ret::Notified(ToNotified::Submit);
        let requeued = idle == tspec::Ret::Idle(ToIdle::OkNotified);
        let requeues = usize::from(submitted) + usize::from(requeued);
        if requeues == 0 {
            // The wake found the task still queued, before the poll began:
            // that poll was the one it asked for.
            assert_eq!(
                (woken, idle),
                (
                    tspec::Ret::Notified(ToNotified::DoNothing),
                    tspec::Ret::Idle(ToIdle::Ok)
                )
            );
            history.check();
            return;
        }
        assert_eq!(
            requeues, 1,
            "wake {woken:?}, poll end {idle:?}: one requeue"
        );
        r_waker.hit_if(submitted);
        r_poller.hit_if(requeued);
        // The next poll sees the waker's write.
        let running = transition(&state, &main, Op::ToRunning, true);
        assert_eq!(running, tspec::Ret::Running(ToRunning::Success));
        assert_eq!(data.read(), 1);
        history.check();
    });
}

/// `abort` races the first poll: the cancellation is carried out exactly
/// once, whether the abort lands before the poll (the queued reference
/// runs into CANCELLED), during it (the poller sees CANCELLED when the
/// poll ends) or after it (`abort` queues the idle task).
///
/// Checks: R-6.
#[test]
fn abort_racing_poll() {
    let before = Reach::new("abort_before_poll");
    let during = Reach::new("poller_saw_cancel");
    let after = Reach::new("abort_queued_idle_task");
    let (r_before, r_during, r_after) = (before.clone(), during.clone(), after.clone());
    model!()
        .reach(&before)
        .reach(&during)
        .reach(&after)
        .check(move || {
            use tspec::{Op, Ret};
            let history = Recorder::new(tspec::TaskState::new(0));
            let main = history.thread(0);
            let state = Arc::new(State::new());
            let aborter = {
                let state = state.clone();
                main.spawn(1, move |rec| transition(&state, &rec, Op::Abort, true))
            };
            let mut cancellations = 0;
            let first = transition(&state, &main, Op::ToRunning, true);
            let idle = (first == Ret::Running(ToRunning::Success))
                .then(|| transition(&state, &main, Op::ToIdle, true));
            let queued = aborter.join().unwrap() == Ret::Submit(true);
            assert!(
                !queued || idle == Some(Ret::Idle(ToIdle::Ok)),
                "queued only when idle"
            );
            match (first, idle) {
                (Ret::Running(ToRunning::Cancelled), None) => {
                    r_before.hit();
                    cancellations += 1;
                }
                (Ret::Running(ToRunning::Success), Some(Ret::Idle(ToIdle::Cancelled))) => {
                    r_during.hit();
                    cancellations += 1;
                }
                (Ret::Running(ToRunning::Success), Some(Ret::Idle(ToIdle::Ok))) => {
                    assert!(queued, "the abort of an idle task queues it");
                    r_after.hit();
                    assert_eq!(
                        transition(&state, &main, Op::ToRunning, true),
                        Ret::Running(ToRunning::Cancelled)
                    );
                    cancellations += 1;
                }
                other => panic!("unexpected {other:?}, abort queued {queued}"),
            }
            assert_eq!(cancellations, 1);
            history.check();
        });
}

/// The task's completer, thread 1 of the history: writes the output (7),
/// completes, and if a join waker is stored wakes it (recorded as the
/// thread's `true`) and gives it back.
fn spawn_completer(
    state: &Arc<State>,
    output: &Arc<Handoff>,
    main: &ThreadRecorder<tspec::TaskState>,
) -> Spawned<tspec::TaskState, bool> {
    let (state, output) = (state.clone(), output.clone());
    main.spawn(1, move |rec| {
        output.write(7);
        let tspec::Ret::Completed { join_waker, .. } =
            transition(&state, &rec, tspec::Op::ToComplete, true)
        else {
            unreachable!("ToComplete answers Completed")
        };
        if join_waker {
            transition(&state, &rec, tspec::Op::UnsetWakerAfterComplete, true);
        }
        join_waker
    })
}

/// The `JoinHandle`'s `set_join_waker`, recorded.
fn set_join_waker(state: &State, rec: &ThreadRecorder<tspec::TaskState>) -> bool {
    rec.op(
        tspec::Op::SetJoinWaker,
        || state.set_join_waker().is_ok(),
        |&stored| tspec::Ret::Done(stored),
    )
}

/// The `JoinHandle` stores its waker while the task completes: either the
/// store fails (COMPLETE seen) and the handle reads the output at once, or
/// the completer sees the waker and wakes it. The output's write is
/// ordered before the read in both cases. History-checked against
/// `specs/task_state.rs`.
///
/// Checks.
#[test]
fn join_waker_racing_completion() {
    let read_at_once = Reach::new("handle_saw_complete");
    let woken = Reach::new("completer_woke_handle");
    let (r_read, r_woken) = (read_at_once.clone(), woken.clone());
    model!().reach(&read_at_once).reach(&woken).check(move || {
        let history = Recorder::new(tspec::TaskState::new(0));
        let main = history.thread(0);
        let state = Arc::new(State::new());
        let output = Handoff::new();
        let running = transition(&state, &main, tspec::Op::ToRunning, true);
        assert_eq!(running, tspec::Ret::Running(ToRunning::Success));
        let completer = spawn_completer(&state, &output, &main);
        let stored = set_join_waker(&state, &main);
        if !stored {
            assert_eq!(output.read(), 7, "COMPLETE seen: the output is readable");
        }
        let woke = completer.join().unwrap();
        assert_eq!(woke, stored, "a stored join waker is woken, exactly then");
        if woke {
            assert_eq!(output.read(), 7);
        }
        r_read.hit_if(!stored);
        r_woken.hit_if(woke);
        history.check();
    });
}

/// The `JoinHandle`, polled again with another waker, takes its stored
/// waker back to replace it (as `can_read_output` does) while the task
/// completes, and the completer wakes the stored waker and gives it up.
/// The take-back finds COMPLETE (with the waker's bit still set, or
/// already cleared by the completer) and the handle reads the output; or
/// it takes the waker back first and stores the new one, which the
/// completer then wakes, or finds COMPLETE then. The completer wakes a
/// waker exactly when one is stored as it completes, and the handle
/// that sees COMPLETE sees the output. History-checked against
/// `specs/task_state.rs` (the handle's first look at the word is a plain
/// load, not one of its operations: it only decides what the handle does).
///
/// Checks.
#[test]
fn join_waker_replaced_racing_completion() {
    let taken_back = Reach::new("handle_took_its_waker_back_before_completion");
    let given_up = Reach::new("completer_gave_the_waker_up_before_the_take_back");
    let (r_taken_back, r_given_up) = (taken_back.clone(), given_up.clone());
    model!().reach(&taken_back).reach(&given_up).check(move || {
        let history = Recorder::new(tspec::TaskState::new(0));
        let main = history.thread(0);
        let state = Arc::new(State::new());
        let output = Handoff::new();
        let running = transition(&state, &main, tspec::Op::ToRunning, true);
        assert_eq!(running, tspec::Ret::Running(ToRunning::Success));
        assert!(
            set_join_waker(&state, &main),
            "the first poll's waker, stored"
        );
        let completer = spawn_completer(&state, &output, &main);
        // The second poll, with another waker.
        let stored_at_completion = if state.load().is_complete() {
            true // the first waker, which the completer wakes
        } else {
            let taken = main.op(
                tspec::Op::UnsetJoinWaker,
                || state.unset_join_waker(),
                |taken| tspec::Ret::Done(taken.is_ok()),
            );
            match taken {
                Err(now) => {
                    r_given_up.hit_if(!now.has_join_waker());
                    true
                }
                Ok(_) => {
                    r_taken_back.hit();
                    set_join_waker(&state, &main)
                }
            }
        };
        let woke = completer.join().unwrap();
        assert_eq!(
            woke, stored_at_completion,
            "woken exactly when a waker was stored"
        );
        assert_eq!(output.read(), 7);
        history.check();
    });
}

/// The `JoinHandle` is dropped while the task completes: the output and
/// the join waker are each dropped exactly once, by whichever party the
/// state word names, after every access of the other party.
///
/// Checks.
#[test]
fn join_handle_drop_racing_completion() {
    let handle_dropped_output = Reach::new("handle_dropped_output");
    let completer_dropped_output = Reach::new("completer_dropped_output");
    let completer_dropped_waker = Reach::new("completer_dropped_waker");
    let (r_h, r_c, r_w) = (
        handle_dropped_output.clone(),
        completer_dropped_output.clone(),
        completer_dropped_waker.clone(),
    );
    model!()
        .reach(&handle_dropped_output)
        .reach(&completer_dropped_output)
        .reach(&completer_dropped_waker)
        .check(move || {
            let state = Arc::new(State::new());
            let output = Handoff::new();
            let waker = Handoff::new();
            assert_eq!(state.transition_to_running(), ToRunning::Success);
            // The handle polled once: its waker is stored and the
            // runtime's.
            waker.write(1);
            state.set_join_waker().unwrap();
            let completer = {
                let (state, output, waker) = (state.clone(), output.clone(), waker.clone());
                thread::spawn(move || {
                    output.write(1);
                    let before = state.transition_to_complete();
                    let mut drops = (0, 0);
                    if !before.is_join_interested() {
                        output.write(0);
                        drops.0 += 1;
                    } else if before.has_join_waker() {
                        assert_eq!(waker.read(), 1, "the waker is woken while stored");
                        if !state.unset_waker_after_complete().is_join_interested() {
                            waker.write(0);
                            drops.1 += 1;
                        }
                    }
                    drops
                })
            };
            // The handle polls again first: seeing its waker stored and the
            // task not complete, it reads the waker (`will_wake`).
            let seen = state.load();
            if seen.has_join_waker() && !seen.is_complete() {
                assert_eq!(waker.read(), 1);
            }
            let dropped = state.transition_to_join_handle_dropped();
            let mut handle_drops = (0, 0);
            if dropped.drop_output {
                assert_eq!(output.read(), 1);
                output.write(0);
                handle_drops.0 += 1;
            }
            if dropped.drop_waker {
                waker.write(0);
                handle_drops.1 += 1;
            }
            let completer_drops = completer.join().unwrap();
            assert_eq!(completer_drops.0 + handle_drops.0, 1, "output dropped once");
            assert_eq!(completer_drops.1 + handle_drops.1, 1, "waker dropped once");
            r_h.hit_if(handle_drops.0 == 1);
            r_c.hit_if(completer_drops.0 == 1);
            r_w.hit_if(completer_drops.1 == 1);
        });
}

/// The last reference is dropped by a waker on another thread while the
/// task completes: the task is freed exactly once, by whichever drops
/// last, and the free comes after the other party's last access (each
/// party writes its own cell last; the freer writes both, as freeing
/// would).
///
/// Checks: R-3.
#[test]
fn last_reference_dropped_from_a_waker() {
    let waker_last = Reach::new("waker_freed_task");
    let completer_last = Reach::new("completer_freed_task");
    let (r_w, r_c) = (waker_last.clone(), completer_last.clone());
    model!()
        .reach(&waker_last)
        .reach(&completer_last)
        .check(move || {
            let state = Arc::new(State::new());
            let (completer_cell, waker_cell) = (Handoff::new(), Handoff::new());
            // A waker's reference; the handle is gone.
            state.ref_inc();
            let dropped = state.transition_to_join_handle_dropped();
            assert!(!dropped.drop_output);
            assert!(!state.ref_dec());
            assert_eq!(state.transition_to_running(), ToRunning::Success);
            let waker = {
                let (state, completer_cell, waker_cell) =
                    (state.clone(), completer_cell.clone(), waker_cell.clone());
                thread::spawn(move || {
                    waker_cell.write(1);
                    let freed = state.ref_dec();
                    if freed {
                        completer_cell.write(2);
                        waker_cell.write(2);
                    }
                    freed
                })
            };
            state.transition_to_complete();
            // The completer's last access: waking the join waker, dropping the
            // output, leaving the task list.
            completer_cell.write(1);
            // The poller's and the list's references.
            let completer_freed = state.transition_to_terminal(2);
            if completer_freed {
                completer_cell.write(2);
                waker_cell.write(2);
            }
            let waker_freed = waker.join().unwrap();
            assert_eq!(usize::from(completer_freed) + usize::from(waker_freed), 1);
            r_w.hit_if(waker_freed);
            r_c.hit_if(completer_freed);
        });
}

use crate::specs::task_state::{self as tspec, Holder};

/// The task state word as generated scenarios see it: three parties, each
/// a thread holding its references. Thread 1 is a worker: each `Poll`
/// waits for the task's queued reference (handed over by whoever queued
/// it: the spawn, a wake's `Submit`, an abort, a poll that was woken
/// meanwhile), polls, and completes it or leaves it idle, as `task.rs`
/// does. Thread 2 holds a waker, thread 3 the `JoinHandle`. The final part
/// shuts the task down if it is not complete and drops every reference
/// left, as the runtime's drop does; the last one frees it. Every
/// transition is recorded (the subject calls them as the runtime does;
/// their specification is the component's).
struct TaskStateSubject;

#[derive(Clone, Debug, PartialEq)]
enum StateOp {
    /// The worker polls once (if a queued reference comes): `ready`, the
    /// future completes in this poll.
    Poll {
        ready: bool,
    },
    WakeByRef,
    WakeByVal,
    CloneWaker,
    DropWaker,
    Abort,
    /// The handle polls: replaces its join waker (or stores it).
    JoinPoll,
    DropHandle,
    /// The final part: shutdown and the references left.
    Cleanup,
}

/// What one party holds.
struct Party {
    state: std::sync::Arc<State>,
    /// Queued references, handed to the worker.
    queue: std::sync::Arc<scenario::Tokens>,
    wakers: usize,
    handle: bool,
    /// The handle's waker is stored in the task.
    join_waker_set: bool,
}

fn transition(
    state: &State,
    rec: &ThreadRecorder<tspec::TaskState>,
    op: tspec::Op,
    listed: bool,
) -> tspec::Ret {
    rec.op(
        op.clone(),
        || tspec::run_on(&op, state, listed),
        |r| r.clone(),
    )
}

/// The completer's protocol (`task.rs`): complete, give the join waker
/// back if it was set (after waking it), drop its references.
fn complete_task(state: &State, rec: &ThreadRecorder<tspec::TaskState>, listed: bool) {
    use tspec::{Op, Ret};
    if let Ret::Completed {
        join_waker: true, ..
    } = transition(state, rec, Op::ToComplete, listed)
    {
        transition(state, rec, Op::UnsetWakerAfterComplete, listed);
    }
    transition(state, rec, Op::ToTerminal, listed);
}

impl Subject for TaskStateSubject {
    type Spec = tspec::TaskState;
    type Op = StateOp;
    type Actor = Party;
    const NAME: &'static str = "runtime_task_state";
    const RUST_TYPE: &'static str = "TaskStateSubject";

    fn items(_: &Scenario<StateOp>) -> usize {
        0
    }

    fn setup(_: &Scenario<StateOp>) -> (tspec::TaskState, Party) {
        let state = std::sync::Arc::new(State::new());
        // The waker thread's waker: one more reference.
        state.ref_inc();
        let queue = std::sync::Arc::new(scenario::Tokens::carrying());
        queue.give(); // spawned: queued once
        let party = Party {
            state,
            queue,
            wakers: 1,
            handle: true,
            join_waker_set: false,
        };
        (tspec::TaskState::new(1), party)
    }

    fn split(main: &mut Party, scenario: &Scenario<StateOp>, thread: usize) -> Party {
        let mut party = Party {
            state: main.state.clone(),
            queue: main.queue.clone(),
            wakers: 0,
            handle: false,
            join_waker_set: false,
        };
        // Thread 1 is the worker, thread 2 holds the waker and thread 3
        // the handle; a thread 2 that calls only the handle's operations
        // holds the handle instead (a scope of the worker and the handle,
        // or of the two without the worker, with two threads).
        let handle_ops = |ops: &Vec<StateOp>| {
            ops.iter()
                .all(|op| matches!(op, StateOp::Abort | StateOp::JoinPoll | StateOp::DropHandle))
        };
        let role = match thread {
            2 if handle_ops(&scenario.threads[1]) && scenario.threads.len() == 2 => 3,
            t => t,
        };
        match role {
            2 => party.wakers = std::mem::take(&mut main.wakers),
            3 => {
                party.handle = std::mem::take(&mut main.handle);
                party.join_waker_set = std::mem::take(&mut main.join_waker_set);
            }
            _ => {}
        }
        party
    }

    fn merge(main: &mut Party, joined: Party) {
        main.wakers += joined.wakers;
        main.handle |= joined.handle;
        main.join_waker_set |= joined.join_waker_set;
    }

    fn run(
        party: &mut Party,
        op: &StateOp,
        rec: &ThreadRecorder<tspec::TaskState>,
        waiter: &Waiter,
        _: &Ledger,
    ) {
        use tspec::{Op, Ret};
        let state = &*party.state.clone();
        let step = |op: Op| transition(state, rec, op, true);
        match *op {
            StateOp::Poll { ready } => {
                if !party.queue.take(waiter) {
                    return; // nothing queued it
                }
                let cancelled = step(Op::ToRunning) == Ret::Running(ToRunning::Cancelled);
                if !cancelled && !ready {
                    match step(Op::ToIdle) {
                        Ret::Idle(ToIdle::Ok) => return,
                        Ret::Idle(ToIdle::OkNotified) => {
                            party.queue.give();
                            return;
                        }
                        _ => {} // aborted during the poll: cancel
                    }
                }
                complete_task(state, rec, true);
            }
            StateOp::WakeByRef if party.wakers > 0 => {
                let submitted = step(Op::WakeByRef) == Ret::Notified(ToNotified::Submit);
                if submitted {
                    party.queue.give();
                }
            }
            StateOp::WakeByVal if party.wakers > 0 => {
                party.wakers -= 1;
                if step(Op::WakeByVal) == Ret::Notified(ToNotified::Submit) {
                    party.queue.give();
                }
            }
            StateOp::CloneWaker if party.wakers > 0 => {
                step(Op::CloneWaker);
                party.wakers += 1;
            }
            StateOp::DropWaker if party.wakers > 0 => {
                party.wakers -= 1;
                step(Op::RefDec(Holder::Waker));
            }
            StateOp::Abort if party.handle => {
                let submitted = step(Op::Abort) == Ret::Submit(true);
                if submitted {
                    party.queue.give();
                }
            }
            StateOp::JoinPoll if party.handle => {
                if party.join_waker_set {
                    if step(Op::UnsetJoinWaker) != Ret::Done(true) {
                        return; // complete: the handle reads the output
                    }
                    party.join_waker_set = false;
                }
                party.join_waker_set = step(Op::SetJoinWaker) == Ret::Done(true);
            }
            StateOp::DropHandle if party.handle => {
                party.handle = false;
                step(Op::ToJoinHandleDropped);
                step(Op::RefDec(Holder::Handle));
            }
            StateOp::Cleanup => {
                // The runtime's drop, once every worker has stopped: shut
                // the task down if it is not complete (the list's reference
                // is the canceller's), drop a queued reference, then the
                // references left.
                if !state.load().is_complete() {
                    step(Op::ToShutdown);
                    complete_task(state, rec, false);
                }
                if party.queue.try_take() {
                    step(Op::RefDec(Holder::Queued));
                }
                for _ in 0..std::mem::take(&mut party.wakers) {
                    step(Op::RefDec(Holder::Waker));
                }
                if std::mem::take(&mut party.handle) {
                    step(Op::ToJoinHandleDropped);
                    step(Op::RefDec(Holder::Handle));
                }
                assert_eq!(step(Op::RefCount), Ret::Count(0), "a reference leaked");
            }
            _ => {} // the party holds no reference for it now
        }
    }

    fn rust(op: &StateOp) -> String {
        format!("StateOp::{op:?}")
    }

    fn scenarios() -> BoxedStrategy<Scenario<StateOp>> {
        use proptest::prelude::*;
        let worker = prop::bool::weighted(0.4)
            .prop_map(|ready| StateOp::Poll { ready })
            .boxed();
        let waker = prop_oneof![
            2 => Just(StateOp::WakeByRef),
            2 => Just(StateOp::WakeByVal),
            1 => Just(StateOp::CloneWaker),
            1 => Just(StateOp::DropWaker),
        ]
        .boxed();
        let handle = prop_oneof![
            2 => Just(StateOp::Abort),
            2 => Just(StateOp::JoinPoll),
            1 => Just(StateOp::DropHandle),
        ]
        .boxed();
        let none = Just(StateOp::Cleanup).boxed();
        scenario::shape(none.clone(), vec![worker, waker, handle], none, [0, 2, 0])
            .prop_map(|mut scenario| {
                scenario.post = vec![StateOp::Cleanup];
                scenario
            })
            .boxed()
    }
}

/// Generated scenarios of the task state word: a worker polling (each
/// poll waits for the queued reference), 1 or 2 operations per party; a
/// thread waking, cloning and
/// dropping its waker, and the `JoinHandle` aborting, polling and
/// dropping, then shutdown and the last references
/// (`check/src/scenario.rs`); loom complete for each within its budget,
/// else at the highest bound that finishes (three parties: bound 2;
/// `task_state_complete_scenarios` is the complete run); every transition's
/// history checked against `specs/task_state.rs` (the count always the
/// holders, one queued reference at most, no lost wake, the join waker
/// handed over once, the task freed exactly once).
///
/// Checks.
#[test]
fn task_state_generated_scenarios() {
    scenario::generated::<TaskStateSubject>(model!().nightly());
}

/// The task state word's complete run: generated scenarios of the worker
/// and one other party, every execution of each explored (both passes, no
/// preemption bound; the run fails otherwise); every transition's history
/// checked against `specs/task_state.rs`.
///
/// Nightly: the main job's complete runs are the two scopes,
/// `runtime::task_state_scope_worker_and_waker_complete` and
/// `runtime::task_state_scope_worker_and_handle_complete`, every
/// scenario of a stated scope; these drawn scenarios complement them (their
/// initial and final parts drawn, where the scope fixes them).
///
/// Checks.
#[test]
fn task_state_complete_scenarios() {
    scenario::generated_complete::<TaskStateSubject>(
        model!().nightly(),
        Small {
            scenarios: 64,
            threads: 2,
            sizes: [2, 2, 2],
        },
    );
}

/// The task state word's scopes: two parties at a time, each calling one
/// operation of its alphabet: the worker polls once (the future pending or
/// ready), the waker's holder wakes by reference or by value, clones or
/// drops it, the `JoinHandle` aborts, polls or drops: every transition a
/// party starts. Two scopes, the worker with each other party (the pair
/// is the threads; the third party's references stay with the main
/// thread), from each regime of the word;
/// then shutdown and the last references (`Cleanup`), which must leave
/// the count at zero.
///
/// The regimes are the word's situations a party can find between
/// transitions (`src/runtime/state.rs`): spawned (notified, queued);
/// idle (polled, pending, nobody queued it); idle and notified again
/// (queued by a wake); idle with the join waker stored; complete (the
/// output waiting for the handle); complete with the join waker given
/// back by the completer; aborted while idle (cancelled, queued for the
/// cancel); an extra waker (a clone: one more reference); the handle
/// dropped (no join interest: the completer drops the output). One
/// operation per party, two parties, is what the races need once a
/// regime is set up: a wake racing the poll's return to idle (R-2, no
/// lost wake), the handle's waker stored or replaced racing the
/// completion, an abort racing a poll or a wake, the last
/// references dropped by different parties (R-1, freed once). The waker's
/// holder and the handle without the worker are no scope: each of their
/// operations is one read-modify-write of the word, so every execution is
/// already a sequential order of them (the harness requires a
/// linearization that reorders calls, and none can). All three parties at
/// once cost far too much for every scenario (three threads: HISTORY.md);
/// the drawn scenarios of three parties are the nightly's
/// (`task_state_generated_scenarios`), and the main job's drawn ones of
/// two (`task_state_complete_scenarios`).
fn task_state_scope(parties: &[usize], lengths: (usize, usize)) -> scope::Scope<TaskStateSubject> {
    use StateOp::*;
    let regime = scope::Regime::<TaskStateSubject>::new;
    let pending = Poll { ready: false };
    let ready = Poll { ready: true };
    let alphabets = [
        vec![pending.clone(), ready.clone()],
        vec![WakeByRef, WakeByVal, CloneWaker, DropWaker],
        vec![Abort, JoinPoll, DropHandle],
    ];
    scope::Scope {
        name: match (parties, lengths.1) {
            ([1, 2], 1) => "task-state-worker-waker",
            ([1, 3], 1) => "task-state-worker-handle",
            ([1, 2], 2) => "task-state-worker-waker-2x2",
            ([1, 3], 2) => "task-state-worker-handle-2x2",
            ([1, 2, 3], 1) => "task-state-3x1",
            other => unreachable!("no task-state scope {other:?}"),
        },
        threads: parties.iter().map(|&p| alphabets[p - 1].clone()).collect(),
        lengths,
        post: vec![Cleanup],
        ordered_threads: true,
        contract: scope::any_operations,
        shard_of: None,
        // The main job's scopes only (see `notify_scope`).
        real_time_orders: parties.len() == 2 && lengths.1 == 1,
        regimes: vec![
            regime("spawned", vec![], |p| {
                let w = p.state.load();
                w.is_notified() && w.is_idle() && !w.has_join_waker() && p.wakers == 1
            }),
            regime("idle", vec![pending.clone()], |p| {
                let w = p.state.load();
                w.is_idle() && !w.is_notified() && !w.is_complete()
            }),
            regime(
                "idle_notified_again",
                vec![pending.clone(), WakeByRef],
                |p| {
                    let w = p.state.load();
                    w.is_idle() && w.is_notified() && !w.is_cancelled()
                },
            ),
            regime(
                "idle_with_join_waker",
                vec![pending.clone(), JoinPoll],
                |p| {
                    let w = p.state.load();
                    w.is_idle() && w.has_join_waker()
                },
            ),
            regime("complete", vec![ready.clone()], |p| {
                let w = p.state.load();
                w.is_complete() && w.is_join_interested() && !w.has_join_waker()
            }),
            regime(
                "complete_join_waker_given_back",
                vec![JoinPoll, ready.clone()],
                |p| {
                    let w = p.state.load();
                    w.is_complete() && !w.has_join_waker() && p.join_waker_set
                },
            ),
            regime("aborted_while_idle", vec![pending.clone(), Abort], |p| {
                let w = p.state.load();
                w.is_cancelled() && w.is_notified() && w.is_idle()
            }),
            regime("extra_waker", vec![CloneWaker], |p| {
                p.state.load().ref_count() == 5 && p.wakers == 2
            }),
            regime("handle_dropped", vec![DropHandle], |p| {
                let w = p.state.load();
                !w.is_join_interested() && !p.handle
            }),
        ],
    }
}

/// Every scenario of the task state word's scope for the worker and the
/// waker's holder (`task_state_scope`: one operation each, from nine
/// regimes of the word), complete under loom in both passes; every
/// transition's history checked against `specs/task_state.rs`.
///
/// Scope: task-state-worker-waker (the worker with one operation of 2, the waker's holder with one of 4, from 9 regimes)
///
/// Checks.
#[test]
fn task_state_scope_worker_and_waker_complete() {
    scope::every_scenario(model!(), task_state_scope(&[1, 2], (1, 1)));
}

/// As `task_state_scope_worker_and_waker_complete`, for the worker and
/// the `JoinHandle`.
///
/// Scope: task-state-worker-handle (the worker with one operation of 2, the handle with one of 3, from 9 regimes)
///
/// Checks.
#[test]
fn task_state_scope_worker_and_handle_complete() {
    scope::every_scenario(model!(), task_state_scope(&[1, 3], (1, 1)));
}

/// The task state word's scope one party up (task-state-3x1): the worker,
/// a waker's holder and the `JoinHandle` at once, one operation each,
/// from the same nine regimes; each scenario run with no preemption bound within the budget
/// or at the highest preemption bound that finishes for it. Three at once
/// are what a wake racing an abort racing the poll that completes, or a
/// handle's drop racing a wake and a completion, need.
///
/// Scope: task-state-3x1 (the worker with one operation of 2, the waker's holder with one of 4, the handle with one of 3, from 9 regimes)
///
/// Checks.
#[test]
fn task_state_scope_three_parties_complete_or_bounded() {
    scope::every_scenario_complete_or_bounded(
        model!().nightly(),
        task_state_scope(&[1, 2, 3], (1, 1)),
    );
}

/// The task state word's scope one call up, the worker and a waker's
/// holder (task-state-worker-waker-2x2): one or two operations each, as
/// above. Two calls on a party are what a wake and a second wake (or a
/// clone and its drop) racing two polls need.
///
/// Scope: task-state-worker-waker-2x2 (the worker with one or two operations of 2, the waker's holder with one or two of 4, from 9 regimes)
///
/// Checks.
#[test]
fn task_state_scope_worker_and_waker_two_ops_complete_or_bounded() {
    scope::every_scenario_complete_or_bounded(
        model!().nightly(),
        task_state_scope(&[1, 2], (1, 2)),
    );
}

/// The task state word's scope one call up, the worker and the
/// `JoinHandle` (task-state-worker-handle-2x2): one or two operations
/// each, as above. Two calls on a party are what an abort and a join poll
/// racing a poll and the completion need.
///
/// Scope: task-state-worker-handle-2x2 (the worker with one or two operations of 2, the handle with one or two of 3, from 9 regimes)
///
/// Checks.
#[test]
fn task_state_scope_worker_and_handle_two_ops_complete_or_bounded() {
    scope::every_scenario_complete_or_bounded(
        model!().nightly(),
        task_state_scope(&[1, 3], (1, 2)),
    );
}

/// The join-waker hand-off, a component of its own on the task state
/// word: the `JoinHandle` polls (storing its waker in the task's cell,
/// taking a stored one back first to replace it) and drops, while the
/// worker polls the task to completion, and the completer wakes the stored
/// waker and gives the cell back. Two parties, so loom runs every scenario
/// complete. The cell is a loom-checked `UnsafeCell` written only by the
/// party the word gives it to (the handle while JOIN_WAKER is unset and
/// the task not complete, the completer after `ToComplete` saw the bit):
/// loom reports any two accesses the word does not order. Each history is
/// checked against `specs/task_state.rs`; and when the handle's last
/// waker was stored as the task completed, the completer woke exactly
/// that waker, once.
struct JoinWakerSubject;

/// A party of the hand-off: its part of the word's references, the cell
/// holding the stored waker's number, the wakes the completer made, and
/// the handle's next waker's number.
struct JoinParty {
    party: Party,
    cell: std::sync::Arc<WakerCell>,
    woken: std::sync::Arc<std::sync::Mutex<Vec<usize>>>, // shim-exempt: observed from outside the model
    next_waker: usize,
    /// The number of the waker the handle stored last, while stored.
    stored: Option<usize>,
}

/// The task's join-waker cell, holding a waker's number.
struct WakerCell(modelsync::sync::UnsafeCell<Option<usize>>);

// SAFETY: the cell is accessed only by the party the task state word gives
// it to (see `JoinWakerSubject`); loom checks that each access is ordered
// after the previous one, and fails the model if not.
unsafe impl Sync for WakerCell {}

impl Subject for JoinWakerSubject {
    type Spec = tspec::TaskState;
    type Op = StateOp;
    type Actor = JoinParty;
    const NAME: &'static str = "runtime_join_waker";
    const RUST_TYPE: &'static str = "JoinWakerSubject";
    const LOOM_SCENARIOS: u64 = 16;

    fn items(_: &Scenario<StateOp>) -> usize {
        0
    }

    fn setup(scenario: &Scenario<StateOp>) -> (tspec::TaskState, JoinParty) {
        let (spec, party) = TaskStateSubject::setup(scenario);
        let main = JoinParty {
            party,
            cell: std::sync::Arc::new(WakerCell(modelsync::sync::UnsafeCell::new(None))),
            woken: Default::default(),
            next_waker: 0,
            stored: None,
        };
        (spec, main)
    }

    fn split(main: &mut JoinParty, scenario: &Scenario<StateOp>, thread: usize) -> JoinParty {
        // Thread 1 is the worker, thread 2 the handle (the word's
        // subject's thread 3).
        let party = TaskStateSubject::split(
            &mut main.party,
            scenario,
            if thread == 2 { 3 } else { thread },
        );
        let stored = if thread == 2 {
            main.stored.take()
        } else {
            None
        };
        JoinParty {
            party,
            cell: main.cell.clone(),
            woken: main.woken.clone(),
            next_waker: 10 * thread,
            stored,
        }
    }

    fn merge(main: &mut JoinParty, joined: JoinParty) {
        TaskStateSubject::merge(&mut main.party, joined.party);
        main.stored = main.stored.or(joined.stored);
    }

    fn run(
        actor: &mut JoinParty,
        op: &StateOp,
        rec: &ThreadRecorder<tspec::TaskState>,
        waiter: &Waiter,
        ledger: &Ledger,
    ) {
        use tspec::{Op, Ret};
        let state = &*actor.party.state.clone();
        let step = |op: Op| transition(state, rec, op, true);
        let cell = &actor.cell.0;
        match *op {
            StateOp::Poll { ready: true } => {
                if !actor.party.queue.take(waiter) {
                    return;
                }
                step(Op::ToRunning);
                // The completer's protocol, with the cell: wake the stored
                // waker, then give the cell back.
                if let Ret::Completed {
                    join_waker: true, ..
                } = step(Op::ToComplete)
                {
                    // SAFETY: `ToComplete` saw JOIN_WAKER: the cell is the
                    // completer's until it unsets the bit.
                    let waker = cell.with(|c| unsafe { *c }).expect("a stored waker");
                    actor.woken.lock().unwrap().push(waker);
                    step(Op::UnsetWakerAfterComplete);
                }
                step(Op::ToTerminal);
            }
            StateOp::JoinPoll if actor.party.handle => {
                if actor.party.join_waker_set {
                    if step(Op::UnsetJoinWaker) != Ret::Done(true) {
                        return; // complete: the handle reads the output
                    }
                    actor.party.join_waker_set = false;
                    actor.stored = None;
                }
                let waker = actor.next_waker;
                actor.next_waker += 1;
                // SAFETY: JOIN_WAKER is unset and the handle's to set: the
                // cell is the handle's.
                cell.with_mut(|c| unsafe { *c = Some(waker) });
                actor.party.join_waker_set = step(Op::SetJoinWaker) == Ret::Done(true);
                if actor.party.join_waker_set {
                    actor.stored = Some(waker);
                }
            }
            StateOp::DropHandle => {
                // No wake is promised to a handle that is gone (the
                // completer may have woken it already).
                actor.stored = None;
                TaskStateSubject::run(&mut actor.party, op, rec, waiter, ledger);
            }
            StateOp::Cleanup => {
                let completed = state.load().is_complete();
                let stored = actor.stored;
                TaskStateSubject::run(&mut actor.party, op, rec, waiter, ledger);
                let woken = actor.woken.lock().unwrap().clone();
                match stored {
                    // Stored as the task completed: woken, exactly it, once.
                    Some(waker) if completed => assert_eq!(woken, [waker], "the stored join waker"),
                    _ => assert!(woken.len() <= 1, "woken twice: {woken:?}"),
                }
            }
            _ => TaskStateSubject::run(&mut actor.party, op, rec, waiter, ledger),
        }
    }

    fn rust(op: &StateOp) -> String {
        TaskStateSubject::rust(op)
    }

    fn scenarios() -> BoxedStrategy<Scenario<StateOp>> {
        use proptest::prelude::*;
        let worker = Just(StateOp::Poll { ready: true }).boxed();
        let handle = prop_oneof![
            3 => Just(StateOp::JoinPoll),
            1 => Just(StateOp::DropHandle),
        ]
        .boxed();
        let none = Just(StateOp::Cleanup).boxed();
        scenario::shape(none.clone(), vec![worker, handle], none, [0, 3, 0])
            .prop_map(|mut scenario| {
                scenario.threads[0].truncate(1);
                scenario.post = vec![StateOp::Cleanup];
                scenario
            })
            .boxed()
    }
}

/// Generated scenarios of the join-waker hand-off (`JoinWakerSubject`):
/// the worker completes the task while the handle polls 1 to 3 times and
/// may drop; loom complete for each within its budget, else at the
/// highest bound that finishes; every history checked against
/// `specs/task_state.rs`, every access to the waker's cell checked by
/// loom, and the stored waker woken exactly once when the task completes
/// with it stored.
///
/// Checks.
#[test]
fn join_waker_generated_scenarios() {
    scenario::generated::<JoinWakerSubject>(model!().nightly());
}

/// The join-waker hand-off's complete run: the worker's completion and
/// the handle's 1 or 2 polls (and perhaps its drop), every execution of
/// each scenario explored (both passes, no preemption bound; the run
/// fails otherwise); every history checked against
/// `specs/task_state.rs`, and the completer woke the handle's last waker
/// exactly once.
///
/// Nightly: the main job's complete run is `runtime::join_waker_scope_complete`, every
/// scenario of a stated scope; these drawn scenarios complement it (their
/// initial and final parts drawn, where the scope fixes them).
///
/// Checks.
#[test]
fn join_waker_complete_scenarios() {
    scenario::generated_complete::<JoinWakerSubject>(
        model!().nightly(),
        Small {
            scenarios: 16,
            threads: 2,
            sizes: [0, 2, 0],
        },
    );
}

/// The join-waker hand-off's scope: the worker polls the task to
/// completion (one operation), the handle polls once or twice, or polls
/// and drops, or drops (its alphabet: join poll, drop; nothing after a
/// drop); from each regime of the waker cell and the word's JOIN_WAKER
/// bit; then the cleanup, which asserts that the completer woke the
/// handle's last stored waker exactly once.
///
/// The regimes are the cell's situations when the completion races the
/// handle: empty (spawned: the handle's first poll stores a waker);
/// holding a waker (the handle polled once: its next poll must take the
/// cell back before replacing the waker, racing the completer, which
/// wakes what the cell holds); and holding a waker on a task that was
/// polled once, went idle and was woken again (the word's other bits
/// set beside JOIN_WAKER, so that a transition that drops or keeps the
/// wrong bit shows). Complete is no regime: the handle then reads the
/// output and the cell is not touched. Two polls by the handle are what
/// replacing a waker needs (R-4: the latest one is woken); one poll by
/// the worker is its whole part (it completes once).
fn join_waker_scope() -> scope::Scope<JoinWakerSubject> {
    use StateOp::*;
    let regime = scope::Regime::<JoinWakerSubject>::new;
    let pending = Poll { ready: false };
    fn worker_once_handle_ends_with_its_drop(
        _: &[StateOp],
        threads: &[Vec<StateOp>],
        _order: Option<(usize, usize)>,
    ) -> bool {
        let handle = &threads[1];
        threads[0].len() == 1
            && handle
                .iter()
                .position(|op| *op == DropHandle)
                .map_or(true, |at| at + 1 == handle.len())
    }
    scope::Scope {
        name: "join-waker-2x2",
        threads: vec![vec![Poll { ready: true }], vec![JoinPoll, DropHandle]],
        lengths: (1, 2),
        post: vec![Cleanup],
        ordered_threads: true,
        contract: worker_once_handle_ends_with_its_drop,
        shard_of: None,
        real_time_orders: false,
        regimes: vec![
            regime("cell_empty", vec![], |j| {
                !j.party.state.load().has_join_waker() && j.stored.is_none()
            }),
            regime("cell_holds_a_waker", vec![JoinPoll], |j| {
                j.party.state.load().has_join_waker() && j.stored == Some(0)
            }),
            regime(
                "cell_holds_a_waker_task_woken_again",
                vec![pending, JoinPoll, WakeByRef],
                |j| {
                    let w = j.party.state.load();
                    w.has_join_waker() && w.is_idle() && w.is_notified() && j.stored == Some(0)
                },
            ),
        ],
    }
}

/// Every scenario of the join-waker hand-off's scope (`join_waker_scope`),
/// complete under loom in both passes; every history checked against
/// `specs/task_state.rs`, every access to the waker cell checked by loom,
/// and the stored waker woken exactly once when the task completes with
/// it stored.
///
/// Scope: join-waker-2x2 (the worker's completing poll, the handle with one or two of join poll and drop, nothing after a drop, from 3 regimes)
///
/// Checks.
#[test]
fn join_waker_scope_complete() {
    scope::every_scenario(model!(), join_waker_scope());
}
