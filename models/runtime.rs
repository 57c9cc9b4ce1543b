//! Models of the runtime (`src/runtime/`), in three layers, smallest first:
//!
//! - the task state machine on its own (`state.rs`): the parties that race
//!   on one task, each a thread calling the transitions it would call,
//!   with the future's and output's accesses in loom's checked cells;
//! - the sleep/wake handshake on its own (`idle.rs` with a real ring and
//!   parker): a push racing a worker going to sleep;
//! - the whole runtime (tokio's scheduler models, by what they check), with
//!   one or two workers and a handful of tasks.
//!
//! Written once for loom, shuttle and std stress (see `harness/mod.rs`).

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use crate::harness::recorder::{Recorder, Spawned, ThreadRecorder};
use crate::harness::scenario::{self, Scenario, Small, Subject, Waiter};
use crate::harness::scope;
use crate::harness::{model, Flag, Handoff, Ledger, Reach, Tally, Tracked};
use crate::specs::idle as ispec;
use crate::specs::live_tasks as lspec;
use crate::specs::runtime as spec;
use modelsync::internals::runtime::{
    Entries, Entry, Idle, LiveTasks, State, ToIdle, ToNotified, ToRunning,
};
use modelsync::park::Parker;
use modelsync::queue::{Inject, Local};
use modelsync::runtime::{spawn, yield_now, Builder, JoinError, JoinHandle, Runtime};
use modelsync::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};
use modelsync::sync::{thread, Arc, Mutex};
use proptest::strategy::BoxedStrategy;

fn runtime(workers: usize) -> Runtime {
    Builder::new_multi_thread()
        .worker_threads(workers)
        .build()
        .unwrap()
}

/// A history of the tasks' handles, checked against `specs/runtime.rs` at
/// the end of the execution; its main thread's end.
fn history() -> (Recorder<spec::Runtime>, ThreadRecorder<spec::Runtime>) {
    let history = Recorder::new(spec::Runtime::default());
    let main = history.thread(0);
    (history, main)
}

// ---------------------------------------------------------------------
// The task state machine on its own.

/// A wake races the poll: either the wake finds the task idle and queues
/// it, or it finds it running and the poller requeues it when the poll
/// ends. Exactly one requeue in every interleaving: never lost, never
/// twice; and the waker's writes reach the next poll.
///
/// Checks: R-1, R-2, R-12.
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
/// Checks: R-4, R-5, R-12.
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
/// waker exactly when one is stored as it completes (R-4), and the handle
/// that sees COMPLETE sees the output (R-5). History-checked against
/// `specs/task_state.rs` (the handle's first look at the word is a plain
/// load, not one of its operations: it only decides what the handle does).
///
/// Checks: R-4, R-5.
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
/// Checks: R-3, R-4, R-5.
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

// ---------------------------------------------------------------------
// The sleep/wake handshake on its own.

/// A worker's owner pushes to its ring and then looks for a sleeper to
/// wake, while the only other worker goes to sleep as the last searcher
/// and checks the ring once more. In every interleaving the pushed work is
/// taken: the pusher sees the sleeper and wakes it, or the sleeper's check
/// sees the push (a lost wake-up leaves the sleeper parked: loom reports
/// the deadlock).
///
/// Checks: R-7.
#[test]
fn push_racing_worker_going_to_sleep() {
    let woken_by_pusher = Reach::new("pusher_woke_sleeper");
    let seen_by_sleeper = Reach::new("sleeper_saw_push");
    let (r_pusher, r_sleeper) = (woken_by_pusher.clone(), seen_by_sleeper.clone());
    model!()
        .reach(&woken_by_pusher)
        .reach(&seen_by_sleeper)
        .check(move || {
            let history = Recorder::new(ispec::Workers::new(2));
            let main = history.thread(0);
            let idle = Arc::new(Idle::new(2));
            let inject = Arc::new(Inject::new());
            let mut owner = Local::with_capacity(4);
            let stealer = owner.stealer();
            let parker = Parker::new();
            let unparker = parker.unparker().clone();
            let pusher_unparker = unparker.clone();
            // Worker 0 (this thread) is the owner; worker 1 searches.
            assert!(to_searching_recorded(&idle, 1, &main));
            let sleeper = {
                let idle = idle.clone();
                main.spawn(1, move |rec| {
                    let mut own = Local::with_capacity(4);
                    let last = rec.op(
                        ispec::Op::ToParked(1),
                        || idle.transition_worker_to_parked(1, true),
                        |&last| ispec::Ret::Bool(last),
                    );
                    assert!(last, "the only searcher is the last");
                    let saw = !stealer.is_empty();
                    if saw {
                        // `notify_if_work_pending`: wake a sleeper (itself).
                        if let Some(w) = notify_recorded(&idle, &rec) {
                            assert_eq!(w, 1);
                            unparker.unpark();
                        }
                    }
                    parker.park();
                    let got = loop {
                        if let Some(item) = stealer.steal_into(&mut own) {
                            break item;
                        }
                        thread::yield_now();
                    };
                    (got, saw)
                })
            };
            owner.push_back(5usize, &inject);
            // `notify_parked`, as the runtime calls it after a push.
            let woke = match notify_recorded(&idle, &main) {
                Some(w) => {
                    assert_eq!(w, 1);
                    pusher_unparker.unpark();
                    true
                }
                None => false,
            };
            let (got, saw) = sleeper.join().unwrap();
            assert_eq!(got, 5);
            r_pusher.hit_if(woke);
            r_sleeper.hit_if(saw);
            history.check();
        });
}

/// `transition_worker_to_searching` for worker `w`, recorded as its two
/// steps (`specs/idle.rs`), both with the call's interval; the increment
/// never returns when the look refused (it did not happen).
fn to_searching_recorded(idle: &Idle, w: usize, rec: &ThreadRecorder<ispec::Workers>) -> bool {
    let look = rec.call(ispec::Op::LookToSearch(w));
    let start = rec.call(ispec::Op::StartSearching(w));
    let ok = idle.transition_worker_to_searching();
    rec.returned(look, ispec::Ret::Bool(ok));
    if ok {
        rec.returned(start, ispec::Ret::Unit);
    } else {
        rec.abandoned(start);
    }
    ok
}

/// `worker_to_notify`, recorded.
fn notify_recorded(idle: &Idle, rec: &ThreadRecorder<ispec::Workers>) -> Option<usize> {
    rec.op(
        ispec::Op::WorkerToNotify,
        || idle.worker_to_notify(),
        |&w| ispec::Ret::Woke(w),
    )
}

/// The idle counters as generated scenarios see them (`specs/idle.rs`):
/// each scenario thread is a worker (thread `t`, worker `t - 1`) that
/// starts and stops searching, parks, and pushes (then wakes the worker
/// `worker_to_notify` names); the main thread's parts only push, except in
/// a scope's prefix, where it also acts for workers, including workers
/// beyond the threads (asleep with no thread of their own). A
/// parked worker sleeps until a push wakes it (a token per wake: the
/// parker's permit), and counts as searching then; one that nobody wakes
/// sleeps to the end. An operation its worker's stage does not allow
/// (the component's contract) is skipped.
struct IdleSubject;

#[derive(Clone, Debug, PartialEq)]
enum IdleOp {
    Search,
    StopSearching,
    Park,
    Push,
    /// The main thread, in a scope's prefix, acting as worker `.0`: it
    /// searches, stops, or goes to sleep (the worker's thread then starts
    /// asleep, and waits for a push to wake it before its first
    /// operation).
    SearchAs(usize),
    StopSearchingAs(usize),
    ParkAs(usize),
}

/// One worker's view: the counters, its stage, and the wake-ups handed to
/// each worker. The main thread's keeps every worker's stage as its
/// prefix left it (`prefix_stages`), which each worker's thread starts
/// from.
struct Worker {
    idle: std::sync::Arc<Idle>,
    me: usize,
    stage: ispec::Stage,
    wakes: std::sync::Arc<Vec<scenario::Tokens>>,
    prefix_stages: Vec<ispec::Stage>,
    /// Put to sleep by the prefix: waits for a wake-up first.
    asleep_from_prefix: bool,
}

impl Subject for IdleSubject {
    type Spec = ispec::Workers;
    type Op = IdleOp;
    type Actor = Worker;
    const NAME: &'static str = "runtime_idle";
    const RUST_TYPE: &'static str = "IdleSubject";

    fn items(_: &Scenario<IdleOp>) -> usize {
        0
    }

    fn setup(scenario: &Scenario<IdleOp>) -> (ispec::Workers, Worker) {
        // One worker per thread, and any worker beyond them that the
        // prefix acts for (a sleeper with no thread of its own: what two
        // racing pushes may wake).
        let workers = scenario
            .init
            .iter()
            .filter_map(|op| match op {
                IdleOp::SearchAs(w) | IdleOp::StopSearchingAs(w) | IdleOp::ParkAs(w) => Some(w + 1),
                _ => None,
            })
            .fold(scenario.threads.len(), usize::max);
        let main = Worker {
            idle: std::sync::Arc::new(Idle::new(workers)),
            me: usize::MAX,
            stage: ispec::Stage::Running,
            wakes: std::sync::Arc::new((0..workers).map(|_| scenario::Tokens::default()).collect()),
            prefix_stages: vec![ispec::Stage::Running; workers],
            asleep_from_prefix: false,
        };
        (ispec::Workers::new(workers), main)
    }

    fn split(main: &mut Worker, _: &Scenario<IdleOp>, thread: usize) -> Worker {
        let stage = main.prefix_stages[thread - 1];
        Worker {
            idle: main.idle.clone(),
            me: thread - 1,
            stage,
            wakes: main.wakes.clone(),
            prefix_stages: Vec::new(),
            asleep_from_prefix: stage == ispec::Stage::Sleeping,
        }
    }

    fn merge(_: &mut Worker, _: Worker) {}

    fn run(
        worker: &mut Worker,
        op: &IdleOp,
        rec: &ThreadRecorder<ispec::Workers>,
        waiter: &Waiter,
        _: &Ledger,
    ) {
        use ispec::{Op, Ret, Stage};
        let idle = &*worker.idle;
        if std::mem::take(&mut worker.asleep_from_prefix) && worker.wakes[worker.me].take(waiter) {
            worker.stage = Stage::Searching;
        }
        let me = worker.me;
        match (op, worker.stage) {
            (IdleOp::Push, _) => {
                if let Some(w) = notify_recorded(idle, rec) {
                    if me == usize::MAX {
                        // The main thread's wake: the worker's thread starts
                        // (or, after the join, would start) awake and
                        // searching, with no token to wait for.
                        worker.prefix_stages[w] = Stage::Searching;
                    } else {
                        worker.wakes[w].give();
                    }
                }
            }
            (&IdleOp::SearchAs(w), _) if worker.prefix_stages.get(w) == Some(&Stage::Running) => {
                worker.prefix_stages[w] = if to_searching_recorded(idle, w, rec) {
                    Stage::Searching
                } else {
                    Stage::Running
                };
            }
            (&IdleOp::StopSearchingAs(w), _)
                if worker.prefix_stages.get(w) == Some(&Stage::Searching) =>
            {
                rec.op(
                    Op::FromSearching(w),
                    || idle.transition_worker_from_searching(),
                    |&last| Ret::Bool(last),
                );
                worker.prefix_stages[w] = Stage::Running;
            }
            (&IdleOp::ParkAs(w), _)
                if matches!(
                    worker.prefix_stages.get(w),
                    Some(Stage::Running | Stage::Searching)
                ) =>
            {
                let searching = worker.prefix_stages[w] == Stage::Searching;
                rec.op(
                    Op::ToParked(w),
                    || idle.transition_worker_to_parked(w, searching),
                    |&check| Ret::Bool(check),
                );
                worker.prefix_stages[w] = Stage::Sleeping;
            }
            (IdleOp::Search, Stage::Running) if me != usize::MAX => {
                let started = to_searching_recorded(idle, me, rec);
                worker.stage = if started {
                    Stage::Searching
                } else {
                    Stage::Running
                };
            }
            (IdleOp::StopSearching, Stage::Searching) => {
                rec.op(
                    Op::FromSearching(me),
                    || idle.transition_worker_from_searching(),
                    |&last| Ret::Bool(last),
                );
                worker.stage = Stage::Running;
            }
            (IdleOp::Park, Stage::Running | Stage::Searching) if me != usize::MAX => {
                let searching = worker.stage == Stage::Searching;
                rec.op(
                    Op::ToParked(me),
                    || idle.transition_worker_to_parked(me, searching),
                    |&last| Ret::Bool(last),
                );
                worker.stage = Stage::Sleeping;
                if worker.wakes[me].take(waiter) {
                    // Woken by a push: counted as searching.
                    worker.stage = Stage::Searching;
                }
            }
            // The worker's stage does not allow it (a sleeper that nobody
            // woke does nothing more).
            _ => {}
        }
    }

    fn rust(op: &IdleOp) -> String {
        format!("IdleOp::{op:?}")
    }

    fn scenarios() -> BoxedStrategy<Scenario<IdleOp>> {
        use proptest::prelude::*;
        let worker = prop_oneof![
            3 => Just(IdleOp::Search),
            2 => Just(IdleOp::StopSearching),
            2 => Just(IdleOp::Park),
            2 => Just(IdleOp::Push),
        ]
        .boxed();
        let main = Just(IdleOp::Push).boxed();
        scenario::alike(main.clone(), worker, main, [1, 3, 1])
    }
}

/// Two workers start searching at once (each looks while none searches,
/// so both may start: the look is a plain load, a cap on contention) and
/// then stop: exactly one of them is the last searcher, the one whose
/// decrement comes second, which must wake another worker (R-8).
/// Complete; history-checked against `specs/idle.rs`.
///
/// Checks: R-8.
#[test]
fn idle_searchers_stop_together() {
    let scenario = Scenario {
        init: vec![],
        threads: vec![
            vec![IdleOp::Search, IdleOp::StopSearching],
            vec![IdleOp::Search, IdleOp::StopSearching],
        ],
        post: vec![IdleOp::Push],
        handoffs: vec![],
    };
    scenario::scenario_model::<IdleSubject>(model!(), scenario);
}

/// Generated scenarios of the idle counters: 2 or 3 workers each
/// starting and stopping searching, parking (and sleeping until a push
/// wakes them) and pushing; loom complete for each within its budget,
/// else at the highest bound that finishes;
/// every history checked against `specs/idle.rs` (at most the workers
/// that looked while fewer than half searched search at once, a push wakes
/// the newest sleeper exactly when none searches, and the last searcher
/// to stop or park is told so).
///
/// Checks: R-7, R-8.
#[test]
fn idle_generated_scenarios() {
    scenario::generated::<IdleSubject>(model!().nightly());
}

/// The idle counters' complete run: generated scenarios of two workers,
/// every execution of each explored (both passes, no preemption bound;
/// the run fails otherwise); every history checked against
/// `specs/idle.rs`.
///
/// Nightly: the main job's complete run is `runtime::idle_scope_complete`, every
/// scenario of a stated scope; these drawn scenarios complement it (their
/// initial and final parts drawn, where the scope fixes them).
///
/// Checks: R-7, R-8.
#[test]
fn idle_complete_scenarios() {
    scenario::generated_complete::<IdleSubject>(
        model!().nightly(),
        Small {
            scenarios: 64,
            threads: 2,
            sizes: [1, 2, 1],
        },
    );
}

/// The idle counters' scope: two workers, each calling one operation of
/// its alphabet (start searching, stop searching, go to sleep, push and
/// wake whom `worker_to_notify` names: every operation of `Idle` a worker
/// calls), from each regime of the idle word and the sleepers' list; then
/// the main thread pushes once, so that a worker left asleep with work
/// pending is seen.
///
/// The regimes are the situations `src/runtime/idle.rs` treats
/// differently, with two workers (of whom one may search: R-8's half):
/// every worker running; one searching (a push wakes nobody; its stop is
/// the last searcher's); a hand-off owed (the last searcher stopped while
/// every worker was awake: the next worker to park without searching must
/// check); one asleep (a push wakes it); one asleep and the other
/// searching (the searcher's stop or park is the last searcher's, with a
/// sleeper to wake); both asleep (a push wakes the newest, whose thread
/// starts by waiting for it); a sleeper woken by a push (counted as
/// searching before its thread runs); and two other workers asleep
/// (workers 2 and 3, with no thread of their own: two racing pushes must
/// wake one of them, not both, since the first woken counts as searching;
/// with only the threads' workers asleep a sleeper's thread waits for its
/// wake before it acts, so no two pushes could race over two sleepers).
/// One operation per thread is what the races need once a regime is set
/// up: a push racing a park (R-7), a stop racing a park with a hand-off
/// owed (issue 48), two looks racing (R-8's cap on contention), two pushes
/// racing over two sleepers (R-8's "the next push does not wake
/// another"); two operations per thread are the nightly's scope.
fn idle_scope(lengths: (usize, usize)) -> scope::Scope<IdleSubject> {
    use ispec::Stage;
    use IdleOp::*;
    let alphabet = vec![Search, StopSearching, Park, Push];
    fn stages(w: &Worker) -> Vec<Stage> {
        w.prefix_stages.clone()
    }
    let regime = scope::Regime::<IdleSubject>::new;
    scope::Scope {
        name: if lengths.1 == 1 {
            "idle-2x1"
        } else {
            "idle-2x2"
        },
        threads: vec![alphabet.clone(), alphabet],
        lengths,
        post: vec![Push],
        ordered_threads: true,
        contract: scope::any_operations,
        regimes: vec![
            regime("all_running", vec![], |w| {
                w.idle.num_unparked() == 2 && w.idle.num_searching() == 0 && !w.idle.handoff_owed()
            }),
            regime("one_searching", vec![SearchAs(0)], |w| {
                w.idle.num_searching() == 1 && w.idle.num_unparked() == 2
            }),
            regime("handoff_owed", vec![SearchAs(0), StopSearchingAs(0)], |w| {
                w.idle.handoff_owed() && w.idle.num_searching() == 0
            }),
            regime("one_asleep", vec![ParkAs(0)], |w| {
                w.idle.sleepers() == [0] && w.idle.num_searching() == 0
            }),
            regime(
                "one_asleep_one_searching",
                vec![ParkAs(0), SearchAs(1)],
                |w| w.idle.sleepers() == [0] && w.idle.num_searching() == 1,
            ),
            regime("both_asleep", vec![ParkAs(0), ParkAs(1)], |w| {
                w.idle.num_unparked() == 0 && stages(w) == [Stage::Sleeping; 2]
            }),
            regime("sleeper_woken_by_a_push", vec![ParkAs(0), Push], |w| {
                w.idle.sleepers().is_empty()
                    && stages(w)[0] == Stage::Searching
                    && w.idle.num_searching() == 1
            }),
            regime("two_others_asleep", vec![ParkAs(2), ParkAs(3)], |w| {
                w.idle.sleepers() == [2, 3]
                    && w.idle.num_unparked() == 2
                    && w.idle.num_searching() == 0
            }),
        ],
    }
}

/// Every scenario of the idle counters' scope (`idle_scope`: two workers,
/// one operation each, from eight regimes of the idle word), complete under
/// loom in both passes; every history checked against `specs/idle.rs`.
///
/// Scope: idle-2x1 (two workers, one operation each of 4, from 8 regimes; 128 scenarios)
///
/// Checks: R-7, R-8.
#[test]
fn idle_scope_complete() {
    scope::every_scenario(model!(), idle_scope((1, 1)));
}

/// The nightly's scope of the idle counters: as `idle_scope_complete`, two
/// operations per worker.
///
/// Scope: idle-2x2 (two workers, one or two operations each of 4, from 8 regimes; 3,200 scenarios)
///
/// Checks: R-7, R-8.
#[test]
fn idle_scope_two_ops_complete() {
    scope::every_scenario(model!().nightly(), idle_scope((1, 2)));
}

// ---------------------------------------------------------------------
// The live-task list on its own (`src/runtime/live.rs`), with two shards
// (the runtime has one under the models: its own state space is the
// limit), against `specs/live_tasks.rs`.

/// The live-task list as generated scenarios see it: each thread spawns
/// tasks (inserts entries of its own: thread `t`'s are `4t..4t + 4`,
/// alternating between the two shards), completes them (removes the
/// oldest it listed, oldest first) and shuts the runtime down
/// (`close_and_take_all`, recorded as one close per shard with the call's
/// interval). Thread 1 takes over the entries the initial part listed; a
/// joined thread's listed entries go back to the main thread, whose final
/// part may complete them. Nothing blocks.
struct LiveTasksSubject;

#[derive(Clone, Debug, PartialEq)]
enum LiveOp {
    Spawn,
    Complete,
    Close,
}

const LIVE_SHARDS: usize = 2;

/// One thread's view of the list: the list, the entries, the next entry
/// it spawns and those it listed and has not completed.
struct Spawner {
    list: std::sync::Arc<LiveTasks<Entry>>,
    entries: Entries,
    next: usize,
    listed: std::collections::VecDeque<Entry>,
}

/// `insert`, recorded; true if listed.
fn insert_recorded(
    list: &LiveTasks<Entry>,
    entry: &Entry,
    rec: &ThreadRecorder<lspec::LiveTasks>,
) -> bool {
    let (index, shard) = (entry.index(), list.shard_of(entry));
    rec.op(
        lspec::Op::Insert {
            entry: index,
            shard,
        },
        || list.insert(entry.clone()),
        |&listed| lspec::Ret::Bool(listed),
    )
}

/// `remove`, recorded; true if it was listed.
fn remove_recorded(
    list: &LiveTasks<Entry>,
    entry: &Entry,
    rec: &ThreadRecorder<lspec::LiveTasks>,
) -> bool {
    let (index, shard) = (entry.index(), list.shard_of(entry));
    rec.op(
        lspec::Op::Remove {
            entry: index,
            shard,
        },
        || list.remove(entry),
        |&removed| lspec::Ret::Bool(removed),
    )
}

/// `close_and_take_all`, recorded as one close per shard, each with the
/// call's interval; the entries taken.
fn close_recorded(list: &LiveTasks<Entry>, rec: &ThreadRecorder<lspec::LiveTasks>) -> Vec<Entry> {
    let calls: Vec<_> = (0..LIVE_SHARDS)
        .map(|shard| rec.call(lspec::Op::CloseShard(shard)))
        .collect();
    let taken = list.close_and_take_all();
    for (shard, call) in calls.into_iter().enumerate() {
        let mut indices: Vec<usize> = taken
            .iter()
            .filter(|e| list.shard_of(e) == shard)
            .map(Entry::index)
            .collect();
        indices.sort_unstable();
        rec.returned(call, lspec::Ret::Taken(indices));
    }
    taken
}

impl Subject for LiveTasksSubject {
    type Spec = lspec::LiveTasks;
    type Op = LiveOp;
    type Actor = Spawner;
    const NAME: &'static str = "runtime_live_tasks";
    const RUST_TYPE: &'static str = "LiveTasksSubject";
    const LOOM_SCENARIOS: u64 = 16;

    fn items(_: &Scenario<LiveOp>) -> usize {
        0
    }

    fn setup(scenario: &Scenario<LiveOp>) -> (lspec::LiveTasks, Spawner) {
        let main = Spawner {
            list: std::sync::Arc::new(LiveTasks::new(LIVE_SHARDS)),
            entries: Entries::new(4 * (scenario.threads.len() + 1)),
            next: 0,
            listed: Default::default(),
        };
        (lspec::LiveTasks::new(LIVE_SHARDS), main)
    }

    fn split(main: &mut Spawner, _: &Scenario<LiveOp>, thread: usize) -> Spawner {
        Spawner {
            list: main.list.clone(),
            entries: main.entries.clone(),
            // Thread 2 starts in the other shard (entry `i` is in shard
            // `i % 2`), so that one spawn per thread reaches both.
            next: 4 * thread + (thread + 1) % 2,
            // Thread 1 completes what the initial part listed (a scope's
            // regime: entries listed, to be removed racing a close).
            listed: if thread == 1 {
                std::mem::take(&mut main.listed)
            } else {
                Default::default()
            },
        }
    }

    fn merge(main: &mut Spawner, joined: Spawner) {
        main.listed.extend(joined.listed);
    }

    fn run(
        spawner: &mut Spawner,
        op: &LiveOp,
        rec: &ThreadRecorder<lspec::LiveTasks>,
        _: &Waiter,
        _: &Ledger,
    ) {
        let list = &*spawner.list;
        match op {
            LiveOp::Spawn => {
                let entry = spawner.entries.get(spawner.next);
                spawner.next += 1;
                if insert_recorded(list, &entry, rec) {
                    spawner.listed.push_back(entry);
                }
            }
            LiveOp::Complete => {
                if let Some(entry) = spawner.listed.pop_front() {
                    remove_recorded(list, &entry, rec);
                }
            }
            LiveOp::Close => {
                close_recorded(list, rec);
            }
        }
    }

    fn rust(op: &LiveOp) -> String {
        format!("LiveOp::{op:?}")
    }

    fn scenarios() -> BoxedStrategy<Scenario<LiveOp>> {
        use proptest::prelude::*;
        let op = prop_oneof![
            3 => Just(LiveOp::Spawn),
            2 => Just(LiveOp::Complete),
            1 => Just(LiveOp::Close),
        ]
        .boxed();
        scenario::alike(op.clone(), op.clone(), op, [1, 3, 1])
    }
}

/// A runtime shutting down while a task spawns two tasks, the first into
/// shard 0 and the second into shard 1, and then completes them. The
/// close takes the shards one after another, so the second spawn can be
/// listed, and taken by the close, after the first was refused (the
/// interleaving this model is for). Each entry is refused, or listed and
/// then given up exactly once, by the close or by its remove. Complete;
/// history-checked against `specs/live_tasks.rs`.
///
/// Checks: R-11.
#[test]
fn live_tasks_spawn_racing_shutdown() {
    let split = Reach::new("refused_by_a_closed_shard_then_listed_in_the_next");
    let r = split.clone();
    model!().reach(&split).check(move || {
        let history = Recorder::new(lspec::LiveTasks::new(LIVE_SHARDS));
        let main = history.thread(0);
        let list = std::sync::Arc::new(LiveTasks::new(LIVE_SHARDS));
        let entries = Entries::new(2);
        let (first, second) = (entries.get(0), entries.get(1));
        assert_eq!((list.shard_of(&first), list.shard_of(&second)), (0, 1));
        let spawner = {
            let (list, r) = (list.clone(), r.clone());
            main.spawn(1, move |thread| {
                let listed: Vec<Entry> = [first, second]
                    .into_iter()
                    .filter(|entry| insert_recorded(&list, entry, &thread))
                    .collect();
                r.hit_if(listed.len() == 1 && listed[0].index() == 1);
                let removed: Vec<usize> = listed
                    .iter()
                    .filter(|entry| remove_recorded(&list, entry, &thread))
                    .map(Entry::index)
                    .collect();
                (listed.iter().map(Entry::index).collect::<Vec<_>>(), removed)
            })
        };
        let taken: Vec<usize> = close_recorded(&list, &main)
            .iter()
            .map(Entry::index)
            .collect();
        let (listed, removed) = spawner.join().unwrap();
        // Every listed entry given up exactly once, by the close or by its
        // remove; nothing else taken; nothing left.
        for entry in 0..2 {
            let given_up =
                usize::from(taken.contains(&entry)) + usize::from(removed.contains(&entry));
            assert_eq!(
                given_up,
                usize::from(listed.contains(&entry)),
                "{listed:?} {taken:?} {removed:?}"
            );
        }
        assert!(list.close_and_take_all().is_empty());
        history.check();
    });
}

/// Generated scenarios of the live-task list with two shards: 2 or 3
/// threads spawning, completing and shutting down; loom complete for each
/// within its budget; every history checked against
/// `specs/live_tasks.rs` (an insert into a closed shard is refused, a
/// close takes exactly what its shard lists, a remove answers whether its
/// entry was still listed).
///
/// Checks: R-11.
#[test]
fn live_tasks_generated_scenarios() {
    scenario::generated::<LiveTasksSubject>(model!().nightly());
}

/// The live-task list's complete run: generated scenarios of two
/// threads, every execution of each explored (both passes, no preemption
/// bound; the run fails otherwise); every history checked against
/// `specs/live_tasks.rs`.
///
/// Checks: R-11.
#[test]
fn live_tasks_complete_scenarios() {
    scenario::generated_complete::<LiveTasksSubject>(
        model!(),
        Small {
            scenarios: 16,
            threads: 3,
            sizes: [1, 1, 1],
        },
    );
}

/// The live-task list's scope: two threads (three in the nightly's), each
/// calling one operation
/// (spawn: insert its next entry, thread 1's and 3's into shard 0, thread
/// 2's into shard 1; complete: remove the oldest entry it listed, thread 1
/// holding those the prefix listed; close: `close_and_take_all`), every
/// operation of the list; from each regime of the shards; then the main
/// thread completes what is left and closes.
///
/// The regimes are the shards' situations (`src/runtime/live.rs`: each
/// shard's slots, its free list, its flag): every shard empty and open;
/// each shard listing an entry (a close takes them, racing their removal:
/// exactly one of the two gives the list's reference up); a slot freed
/// and waiting for reuse (the next insert into that shard takes it);
/// closed (every insert refused); and entries taken by a close (their
/// removal answers false). One operation per thread is what the races
/// need once a regime is set up: a close racing an insert or a removal
/// (exactly one of them has the entry), two inserts or removals racing
/// in one shard or two. A close racing inserts into both shards (one
/// closed, the other not yet: the close is one step per shard) takes a
/// third thread: the nightly's scope, and the main job's drawn
/// three-thread scenarios (`live_tasks_complete_scenarios`); three
/// threads cost 94 s on H4 for every scenario, two 2 s.
fn live_tasks_scope(threads: usize) -> scope::Scope<LiveTasksSubject> {
    use LiveOp::*;
    let regime = scope::Regime::<LiveTasksSubject>::new;
    let alphabet = vec![Spawn, Complete, Close];
    scope::Scope {
        name: match threads {
            2 => "live-tasks-2x1",
            _ => "live-tasks-3x1",
        },
        threads: vec![alphabet; threads],
        lengths: (1, 1),
        post: vec![Complete, Complete, Close],
        ordered_threads: true,
        contract: scope::any_operations,
        regimes: vec![
            regime("empty", vec![], |s| {
                s.list.internals() == [(0, 0, false); LIVE_SHARDS]
            }),
            regime("each_shard_listing", vec![Spawn, Spawn], |s| {
                s.list.internals() == [(1, 0, false); LIVE_SHARDS]
            }),
            regime("slot_freed_for_reuse", vec![Spawn, Spawn, Complete], |s| {
                s.list.internals() == [(0, 1, false), (1, 0, false)]
            }),
            regime("closed", vec![Close], |s| {
                s.list.internals() == [(0, 0, true); LIVE_SHARDS]
            }),
            regime("taken_by_a_close", vec![Spawn, Spawn, Close], |s| {
                s.list.internals() == [(0, 0, true); LIVE_SHARDS] && s.listed.len() == 2
            }),
        ],
    }
}

/// Every scenario of the live-task list's scope (`live_tasks_scope`: two
/// threads, one operation each, from five regimes of the shards),
/// complete under loom in both passes; every history checked against
/// `specs/live_tasks.rs`.
///
/// Scope: live-tasks-2x1 (two threads, one operation each of 3, from 5 regimes; 45 scenarios)
///
/// Checks: R-11.
#[test]
fn live_tasks_scope_complete() {
    scope::every_scenario(model!(), live_tasks_scope(2));
}

/// The nightly's scope of the live-task list: as
/// `live_tasks_scope_complete`, three threads.
///
/// Scope: live-tasks-3x1 (three threads, one operation each of 3, from 5 regimes; 135 scenarios)
///
/// Checks: R-11.
#[test]
fn live_tasks_scope_three_threads_complete() {
    scope::every_scenario(model!().nightly(), live_tasks_scope(3));
}

// ---------------------------------------------------------------------
// The whole runtime.

/// Seed 003's `pool_multi_spawn`: two tasks spawned from outside on two
/// workers, each adding to a counter; the last one to finish sends the
/// total over a oneshot. Both outputs arrive once, the total is 2, and
/// nothing leaks (loom checks every `Arc` the tasks hold).
///
/// Checks: R-3, R-5, R-12.
#[test]
fn multi_spawn() {
    let stolen = Reach::new("tasks_ran_on_two_threads");
    let r_stolen = stolen.clone();
    model!()
        .nightly()
        .reach(&stolen)
        .preemption_bound(2)
        .check(move || {
            let rt = runtime(2);
            let counter = Arc::new(AtomicUsize::new(0));
            let (tx, rx) = modelsync::oneshot::channel();
            let tx = Arc::new(modelsync::sync::Mutex::new(Some(tx)));
            let ran_on = Arc::new(modelsync::sync::Mutex::new(Vec::new()));
            let handles: Vec<_> = (0..2)
                .map(|i| {
                    let (counter, tx, ran_on) = (counter.clone(), tx.clone(), ran_on.clone());
                    rt.spawn(async move {
                        ran_on.lock().push(thread::current().id());
                        // Relaxed: the oneshot carries the total's writes.
                        if counter.fetch_add(1, Relaxed) == 1 {
                            let total = counter.load(Relaxed);
                            tx.lock().take().unwrap().send(total).unwrap();
                        }
                        i
                    })
                })
                .collect();
            let (total, outputs) = rt.block_on(async move {
                let total = rx.await.unwrap();
                let mut outputs = Vec::new();
                for h in handles {
                    outputs.push(h.await.unwrap());
                }
                (total, outputs)
            });
            assert_eq!(total, 2);
            assert_eq!(outputs, vec![0, 1]);
            let ran_on = ran_on.lock().clone();
            r_stolen.hit_if(ran_on[0] != ran_on[1]);
            drop(rt);
        });
}

/// A task spawns another from inside the runtime (the LIFO slot's path)
/// and awaits it; the output crosses back.
///
/// Checks: R-5, R-12.
#[test]
fn spawn_from_task() {
    let lifo = Reach::new("child_ran_on_parent_worker");
    let r_lifo = lifo.clone();
    model!().reach(&lifo).preemption_bound(3).check(move || {
        let rt = runtime(1);
        let data = Handoff::new();
        let d = data.clone();
        let parent = rt.spawn(async move {
            d.write(3);
            let parent_thread = thread::current().id();
            let child = spawn(async move { (d.read(), thread::current().id()) });
            let (seen, child_thread) = child.await.unwrap();
            (seen, child_thread == parent_thread)
        });
        let (seen, same) = rt.block_on(parent).unwrap();
        assert_eq!(seen, 3);
        r_lifo.hit_if(same);
        assert_eq!(data.read(), 3);
    });
}

/// A future that waits for a oneshot sent from a plain thread while the
/// only worker may be asleep: the wake reaches the task and its output
/// reaches the caller (tokio's `pool_multi_notify`, one worker).
///
/// Checks: R-2, R-7, R-12.
#[test]
fn wake_from_outside_while_worker_sleeps() {
    let slept = Reach::new("task_waited_for_value");
    let r_slept = slept.clone();
    model!()
        .nightly()
        .reach(&slept)
        .preemption_bound(2)
        .check(move || {
            let rt = runtime(1);
            let (tx, rx) = modelsync::oneshot::channel::<usize>();
            let waited = Flag::default();
            let w = waited.clone();
            let task = rt.spawn(async move {
                let mut rx = rx;
                let first = std::future::poll_fn(|cx| match Pin::new(&mut rx).poll(cx) {
                    Poll::Ready(v) => Poll::Ready(Some(v)),
                    Poll::Pending => Poll::Ready(None),
                })
                .await;
                match first {
                    Some(v) => v.unwrap(),
                    None => {
                        w.set();
                        rx.await.unwrap()
                    }
                }
            });
            let sender = thread::spawn(move || tx.send(9).unwrap());
            assert_eq!(rt.block_on(task).unwrap(), 9);
            sender.join().unwrap();
            r_slept.hit_if(waited.get());
        });
}

/// A future tracked by the ledger, pending until a oneshot arrives.
fn tracked_task(
    ledger: &Ledger,
    id: usize,
    rx: modelsync::oneshot::Receiver<()>,
) -> impl Future<Output = Tracked> + Send + 'static {
    let item = ledger.item(id);
    async move {
        let _ = rx.await;
        item
    }
}

/// tokio's `racy_shutdown` and `shutdown_with_notification`: the runtime
/// is dropped while a plain thread wakes a pending task. The future is
/// completed (output delivered once) or dropped by shutdown (cancelled),
/// exactly once either way, before `drop` returns; the handle says which.
///
/// Checks: R-1, R-3, R-11.
#[test]
fn shutdown_racing_wake() {
    let completed = Reach::new("task_completed_before_shutdown");
    let cancelled = Reach::new("task_dropped_by_shutdown");
    let (r_done, r_cancel) = (completed.clone(), cancelled.clone());
    model!()
        .nightly()
        .reach(&completed)
        .reach(&cancelled)
        .preemption_bound(3)
        .check(move || {
            let ledger = Ledger::new(1);
            let rt = runtime(1);
            let (tx, rx) = modelsync::oneshot::channel();
            let handle = rt.spawn(tracked_task(&ledger, 0, rx));
            let waker = thread::spawn(move || {
                let _ = tx.send(());
            });
            drop(rt);
            // Every future is gone (or done) once drop returned.
            assert!(
                handle.is_finished(),
                "shutdown returned with the task alive"
            );
            match modelsync::block_on(handle) {
                Ok(item) => {
                    r_done.hit();
                    ledger.deliver(item);
                }
                Err(e) => {
                    assert!(e.is_cancelled());
                    r_cancel.hit();
                }
            }
            waker.join().unwrap();
            ledger.assert_all_dropped_once();
        });
}

/// The last handle of a runtime dropped in one of its own tasks, while
/// another task waits: the drop panics with tokio's message in that task
/// (its handle reports the panic), and the shutdown the drop starts on a
/// thread of its own joins the worker (still finishing that very task)
/// and drops the waiting future exactly once, without blocking the worker.
/// Reaches both orders of the panic's report to `block_on` and the
/// waiting future's drop.
///
/// Checks: R-11, R-13 (weaker: one of its panics, a runtime dropped in its
/// own task).
#[test]
fn dropped_in_its_own_task() {
    let reported_first = Reach::new("panic_reported_before_the_future_went");
    let dropped_first = Reach::new("future_dropped_before_the_panic_was_reported");
    let (r_reported, r_dropped) = (reported_first.clone(), dropped_first.clone());
    model!()
        .reach(&reported_first)
        .reach(&dropped_first)
        .preemption_bound(2)
        .check(move || {
            let ledger = Ledger::new(1);
            let rt = runtime(1);
            let (gone, went) = modelsync::oneshot::channel::<()>();
            let item = ledger.item(0);
            drop(rt.spawn(async move {
                let _held = (item, gone);
                std::future::pending::<()>().await
            }));
            let slot = Arc::new(Mutex::new(None::<Runtime>));
            let (go, ready) = modelsync::oneshot::channel::<()>();
            let dropper = {
                let slot = slot.clone();
                rt.spawn(async move {
                    ready.await.unwrap();
                    let rt = slot.lock().take();
                    drop(rt);
                })
            };
            *slot.lock() = Some(rt);
            go.send(()).unwrap();
            let panicked = modelsync::block_on(dropper).expect_err("the drop panicked");
            let future_went_first = ledger.dropped() == [0];
            assert!(panicked.is_panic() && !panicked.is_cancelled());
            let payload = panicked.into_panic();
            assert!(payload.downcast_ref::<&str>().is_some_and(|message| message
                .starts_with("Cannot drop a runtime in a context where blocking is not allowed")));
            assert!(
                modelsync::block_on(went).is_err(),
                "the waiting future goes with the shutdown"
            );
            ledger.assert_all_dropped_once();
            r_dropped.hit_if(future_went_first);
            r_reported.hit_if(!future_went_first);
        });
}

/// A future's polls as its caller sees them: how many began, how many
/// ended, and whether one returned `Ready`.
#[derive(Clone, Default)]
struct PollWatch {
    began: Tally,
    ended: Tally,
    returned_ready: Flag,
}

impl PollWatch {
    fn watch<F>(&self, future: F) -> impl Future<Output = F::Output> + Send + 'static
    where
        F: Future + Send + 'static,
    {
        let watch = self.clone();
        let mut future = Box::pin(future);
        std::future::poll_fn(move |cx| {
            watch.began.add_one();
            let polled = future.as_mut().poll(cx);
            if polled.is_ready() {
                watch.returned_ready.set();
            }
            watch.ended.add_one();
            polled
        })
    }
}

/// `JoinHandle::abort` on a real task that a plain thread wakes meanwhile,
/// on one worker. The abort lands while the task is queued, idle, in a
/// poll, or complete. A cancelled task's future is dropped once and never
/// polled after the abort; a future that returned `Ready` keeps its output,
/// even when the abort landed during that last poll (tokio's contract);
/// the handle says which, and the item is dropped exactly once. The
/// history (spawn, abort, join) is checked against `specs/runtime.rs`.
/// (An `is_finished` before the abort answers true in no execution within
/// bound 2; a yield before it that lets the task finish first took the
/// run from 22,709 executions to 1,681,574, 232 s: that promise is the
/// property test `runtime::handles_match_the_specification`'s, on real
/// threads.)
///
/// Checks: R-5, R-6.
#[test]
fn abort_racing_wake_of_a_real_task() {
    let between = Reach::new("abort_cancelled_the_task_between_polls");
    let during = Reach::new("abort_cancelled_the_task_during_a_poll");
    let kept = Reach::new("abort_during_the_last_poll_kept_the_output");
    let done = Reach::new("task_completed_before_abort");
    let reaches = [between.clone(), during.clone(), kept.clone(), done.clone()];
    // Bound 2 in pull requests (22,709 executions, about 1 s; bound 3:
    // 465,440, 25 s); the complete run does not finish in minutes.
    model!()
        .reach(&between)
        .reach(&during)
        .reach(&kept)
        .reach(&done)
        .preemption_bound(2)
        .check(move || {
            let [r_between, r_during, r_kept, r_done] = &reaches;
            let (history, main) = history();
            let ledger = Ledger::new(1);
            let rt = runtime(1);
            let (tx, rx) = modelsync::oneshot::channel();
            let polls = PollWatch::default();
            let handle = main.op(
                spec::Op::Spawn(0, spec::Body::Returns(0)),
                || rt.spawn(polls.watch(tracked_task(&ledger, 0, rx))),
                |_| spec::Ret::Unit,
            );
            let waker = thread::spawn(move || {
                let _ = tx.send(());
            });
            main.op(spec::Op::Abort(0), || handle.abort(), |_| spec::Ret::Unit);
            // No poll can begin after a cancelling abort, and a poll that
            // was under way at the abort's transition cannot have ended
            // before `abort` returned (the abort of a running task does
            // nothing more): so a poll is under way now exactly when the
            // abort found the task RUNNING.
            let began = polls.began.get();
            let in_poll = began == polls.ended.get() + 1;
            let result = main.op(
                spec::Op::Join(0),
                || modelsync::block_on(handle),
                |result| spec::Ret::Joined(spec::Outcome::of(result, Tracked::id)),
            );
            if cfg!(any(loom, shuttle)) {
                // Labels are exact only where the threads are serialised.
                assert_eq!(polls.began.get(), began, "a poll began after abort");
            }
            match result {
                Ok(item) => {
                    assert!(polls.returned_ready.get(), "output without a Ready poll");
                    ledger.deliver(item);
                    r_kept.hit_if(in_poll);
                    r_done.hit_if(!in_poll);
                }
                Err(e) => {
                    assert!(e.is_cancelled(), "{e}");
                    assert!(
                        !polls.returned_ready.get(),
                        "the future returned Ready, but its output was lost to the abort"
                    );
                    r_during.hit_if(in_poll);
                    r_between.hit_if(!in_poll);
                }
            }
            waker.join().unwrap();
            drop(rt);
            ledger.assert_all_dropped_once();
            history.check();
        });
}

/// A waker that outlives its task: the future hands a clone of its waker
/// to a plain thread and completes in the same poll; that thread wakes it
/// (by value) while the worker completes the task, the handle takes the
/// output and is dropped, and the runtime is dropped. The wake finds the
/// task running (the poller holds it), complete but still held, or, once
/// the runtime is gone, holds the last reference and frees the task
/// (`ToNotified::Dealloc`). Freed exactly once in every interleaving: each
/// task holds the runtime's shared state through a loom `Arc`, so a task
/// never freed fails loom's leak check, and the output is delivered once.
///
/// Checks: R-2, R-3, R-5.
#[test]
fn waker_outlives_its_task() {
    let during = Reach::new("wake_while_the_poll_ran");
    let last = Reach::new("waker_freed_the_task_after_the_runtime_was_dropped");
    let reaches = [during.clone(), last.clone()];
    // Bound 2 in pull requests (49,548 executions, about 3 s; bound 3:
    // 495,144, 26 s).
    model!()
        .nightly()
        .reach(&during)
        .reach(&last)
        .preemption_bound(2)
        .check(move || {
            let [r_during, r_last] = &reaches;
            let ledger = Ledger::new(1);
            let rt = runtime(1);
            let polls = PollWatch::default();
            // A loom atomic, not a `Flag`: the waker thread's read of it
            // must be a scheduling point of its own.
            let runtime_gone = Arc::new(AtomicBool::new(false));
            let waker_thread = Arc::new(Mutex::new(None));
            let item = ledger.item(0);
            let handle = {
                let (seen, runtime_gone, waker_thread) =
                    (polls.clone(), runtime_gone.clone(), waker_thread.clone());
                let (r_during, r_last) = (r_during.clone(), r_last.clone());
                let hand_off_waker = std::future::poll_fn(move |cx| {
                    let waker = cx.waker().clone();
                    let (polls, runtime_gone) = (seen.clone(), runtime_gone.clone());
                    let (r_during, r_last) = (r_during.clone(), r_last.clone());
                    *waker_thread.lock() = Some(thread::spawn(move || {
                        // Relaxed: a label; `drop(rt)` joined the worker, so
                        // once it is set nothing but this waker holds the
                        // task.
                        r_last.hit_if(runtime_gone.load(Relaxed));
                        waker.wake();
                        // Exact here: a wake that finds the task running
                        // ends with the transition, before this read.
                        r_during.hit_if(polls.ended.get() == 0);
                    }));
                    Poll::Ready(())
                });
                rt.spawn(polls.watch(async move {
                    hand_off_waker.await;
                    item
                }))
            };
            ledger.deliver(rt.block_on(handle).expect("the task returned"));
            drop(rt);
            // Relaxed: a label, read by the waker thread (see its load).
            runtime_gone.store(true, Relaxed);
            let waker_thread = waker_thread.lock().take();
            waker_thread.expect("the task ran").join().unwrap();
            ledger.assert_all_delivered_once();
            assert_eq!(polls.began.get(), 1, "a completed task was polled again");
        });
}

/// tokio's `join_output`: the output built on a worker is delivered once
/// to `block_on`'s thread, with its writes.
///
/// Checks: R-5, R-12.
#[test]
fn join_output_delivered() {
    let waited = Reach::new("handle_waited_for_output");
    let r_waited = waited.clone();
    model!().reach(&waited).preemption_bound(3).check(move || {
        let (history, main) = history();
        let ledger = Ledger::new(1);
        let rt = runtime(1);
        let item = ledger.item(0);
        let data = Handoff::new();
        let d = data.clone();
        let handle = main.op(
            spec::Op::Spawn(0, spec::Body::Returns(0)),
            || {
                rt.spawn(async move {
                    d.write(11);
                    item
                })
            },
            |_| spec::Ret::Unit,
        );
        let (item, waited) = main.op(
            spec::Op::Join(0),
            || join_noting_a_wait(&rt, handle),
            |(result, _)| spec::Ret::Joined(spec::Outcome::of(result, Tracked::id)),
        );
        assert_eq!(data.read(), 11);
        ledger.deliver(item.unwrap());
        drop(rt);
        ledger.assert_all_delivered_once();
        r_waited.hit_if(waited);
        history.check();
    });
}

/// Joins `handle` in `rt.block_on`; also says whether a poll of the handle
/// returned `Pending` (the handle waited for the completion).
fn join_noting_a_wait<T>(rt: &Runtime, mut handle: JoinHandle<T>) -> (Result<T, JoinError>, bool) {
    let waited = Flag::default();
    let w = waited.clone();
    let joined = rt.block_on(std::future::poll_fn(move |cx| {
        let polled = Pin::new(&mut handle).poll(cx);
        if polled.is_pending() {
            w.set();
        }
        polled
    }));
    (joined, waited.get())
}

/// `error` is a task's panic with the payload `ModelPanic(code)`.
fn assert_panicked_with(error: JoinError, code: u8) {
    assert!(error.is_panic() && !error.is_cancelled(), "{error:?}");
    let payload = error.into_panic();
    assert_eq!(
        payload.downcast_ref::<ModelPanic>().map(|p| p.0),
        Some(code)
    );
}

/// The worker still runs tasks after a panic: ledger item `id`, returned
/// by a new task, is delivered.
fn assert_the_worker_runs_on(rt: &Runtime, ledger: &Ledger, id: usize) {
    let survivor = ledger.item(id);
    let next = rt.spawn(async move { survivor });
    ledger.deliver(rt.block_on(next).expect("the worker survived the panic"));
}

/// The payload a model's task panics with: `panic_any` of this type, so
/// that the handle's payload is checked by type, not by message.
struct ModelPanic(u8);

/// A task panics in its poll while `block_on` waits on its handle, on one
/// worker. The panic is caught on the worker and the item the future owned
/// is dropped once, by the unwinding; the handle reports the panic with its
/// payload, whether it waited for the completion or found it done; the
/// worker then runs the next task, whose output is delivered.
///
/// Checks: R-5, R-6.
#[test]
fn panic_in_a_task_racing_its_join() {
    // Bound 2 in pull requests (43,866 executions, about 3 s); bound 3:
    // 370,603 executions, 24 s. The complete run does not finish in ten
    // minutes.
    let waited = Reach::new("handle_waited_for_the_panic");
    let at_once = Reach::new("handle_found_the_panic_stored");
    let (r_waited, r_at_once) = (waited.clone(), at_once.clone());
    model!()
        .nightly()
        .reach(&waited)
        .reach(&at_once)
        .preemption_bound(2)
        .check(move || {
            let (history, main) = history();
            let ledger = Ledger::new(2);
            let rt = runtime(1);
            let doomed = ledger.item(0);
            let handle = main.op(
                spec::Op::Spawn(0, spec::Body::Panics),
                || {
                    rt.spawn(async move {
                        let _dropped_by_the_unwinding = doomed;
                        std::panic::panic_any(ModelPanic(7));
                    })
                },
                |_| spec::Ret::Unit,
            );
            let (result, waited) = main.op(
                spec::Op::Join(0),
                || join_noting_a_wait(&rt, handle),
                |(result, _)| {
                    spec::Ret::Joined(spec::Outcome::of(result, |_: &()| {
                        unreachable!("the task panicked")
                    }))
                },
            );
            history.check();
            assert_panicked_with(result.expect_err("the task panicked"), 7);
            assert_the_worker_runs_on(&rt, &ledger, 1);
            drop(rt);
            ledger.assert_all_dropped_once();
            r_waited.hit_if(waited);
            r_at_once.hit_if(!waited);
        });
}

/// Panics with `ModelPanic(code)` when dropped.
struct PanicOnDrop(u8);

impl Drop for PanicOnDrop {
    fn drop(&mut self) {
        std::panic::panic_any(ModelPanic(self.0));
    }
}

/// `abort` on a task whose future panics as it is dropped, on one worker:
/// the abort lands before the first poll or after a poll that returned
/// `Pending`. The cancellation's panic is caught where the future is
/// dropped and the handle reports it as a panic with its payload (as
/// tokio's does), the future's item is dropped once, and the worker runs
/// the next task.
///
/// Checks: R-1, R-6.
#[test]
fn panic_in_the_drop_of_an_aborted_future() {
    // Bound 2 in pull requests (82,549 executions, about 5 s); bound 3:
    // 867,358 executions, 54 s.
    let unpolled = Reach::new("aborted_before_the_first_poll");
    let polled = Reach::new("aborted_after_a_pending_poll");
    let (r_unpolled, r_polled) = (unpolled.clone(), polled.clone());
    model!()
        .nightly()
        .reach(&unpolled)
        .reach(&polled)
        .preemption_bound(2)
        .check(move || {
            let ledger = Ledger::new(2);
            let rt = runtime(1);
            let polls = PollWatch::default();
            let (never_sent, pending_forever) = modelsync::oneshot::channel::<()>();
            let (doomed, guard) = (ledger.item(0), PanicOnDrop(9));
            let handle = rt.spawn(polls.watch(async move {
                let _held = (doomed, guard);
                let _ = pending_forever.await;
                unreachable!("the sender outlives the task");
            }));
            handle.abort();
            let error = rt
                .block_on(handle)
                .expect_err("the task was aborted while pending");
            // The drop's panic is the task's result, not the cancellation.
            assert_panicked_with(error, 9);
            assert_the_worker_runs_on(&rt, &ledger, 1);
            drop(rt);
            drop(never_sent);
            ledger.assert_all_dropped_once();
            r_unpolled.hit_if(polls.began.get() == 0);
            r_polled.hit_if(polls.began.get() == 1);
        });
}

/// A `JoinHandle` polled with one waker, then with another while its task
/// completes on a worker: the second poll takes the first waker back and
/// stores its own, or finds the task complete and returns the output. A
/// handle still pending after the second poll is woken through the
/// second waker only (R-4), and the output is delivered once (R-5). The
/// take-back that `join_waker_replaced_racing_completion` models on the
/// state word alone, here with the waker cell's accesses.
///
/// Checks: R-4, R-5.
#[test]
fn join_handle_repolled_with_another_waker() {
    // Bound 4 in pull requests (35,720 executions, about 1 s); unbounded,
    // bound 7 is the highest that finishes within a minute.
    let replaced = Reach::new("second_poll_replaced_the_waker");
    let r_replaced = replaced.clone();
    model!()
        .reach(&replaced)
        .preemption_bound(4)
        .check(move || {
            let ledger = Ledger::new(1);
            let rt = runtime(1);
            let item = ledger.item(0);
            let mut handle = rt.spawn(async move { item });
            let (first, first_wakes) = crate::harness::counting_waker();
            let (second, _) = crate::harness::counting_waker();
            let mut poll_with = |waker: &std::task::Waker| {
                Pin::new(&mut handle).poll(&mut Context::from_waker(waker))
            };
            let output = match poll_with(&first) {
                Poll::Ready(output) => output,
                Poll::Pending => match poll_with(&second) {
                    Poll::Ready(output) => output,
                    Poll::Pending => {
                        r_replaced.hit();
                        // The counting waker's count is `Relaxed`: seeing it
                        // would not order the completion before the next
                        // poll, as an executor's queue does; so poll until
                        // ready, then count the wakes.
                        let output = loop {
                            match poll_with(&second) {
                                Poll::Ready(output) => break output,
                                Poll::Pending => thread::yield_now(),
                            }
                        };
                        assert_eq!(first_wakes.get(), 0, "woke the waker it replaced");
                        output
                    }
                },
            };
            ledger.deliver(output.expect("the task returned"));
            drop(rt);
            ledger.assert_all_delivered_once();
        });
}

/// tokio's `poll_drop_handle_then_drop`: the `JoinHandle` is polled (its
/// waker stored), then dropped while the task completes: the output is
/// dropped exactly once, by the task or by the handle.
///
/// Checks: R-4, R-5.
#[test]
fn join_handle_dropped_racing_completion() {
    let after = Reach::new("handle_dropped_after_completion");
    let before = Reach::new("handle_dropped_before_completion");
    let (r_after, r_before) = (after.clone(), before.clone());
    model!()
        .nightly()
        .reach(&after)
        .reach(&before)
        .preemption_bound(2)
        .check(move || {
            let ledger = Ledger::new(1);
            let rt = runtime(1);
            let (tx, rx) = modelsync::oneshot::channel();
            let mut handle = rt.spawn(tracked_task(&ledger, 0, rx));
            // Register the handle's waker, then let the task finish while the
            // handle is dropped.
            let (waker, _wakes) = crate::harness::counting_waker();
            let pending = Pin::new(&mut handle)
                .poll(&mut Context::from_waker(&waker))
                .is_pending();
            let sender = thread::spawn(move || {
                let _ = tx.send(());
            });
            // Let the sender and the worker run first in some executions.
            thread::yield_now();
            let finished = handle.is_finished();
            drop(handle);
            sender.join().unwrap();
            drop(rt);
            ledger.assert_all_dropped_once();
            if pending {
                r_after.hit_if(finished);
                r_before.hit_if(!finished);
            }
        });
}

/// tokio's `complete_block_on_under_load`: `block_on` awaits a task that
/// yields repeatedly while another task keeps the worker busy.
///
/// Checks: R-2, R-9 (weaker: a task that yields is not starved by a busy
/// worker; not the 61-tick interval).
#[test]
fn block_on_completes_under_load() {
    let yielded = Reach::new("task_yielded_and_resumed");
    let r_yielded = yielded.clone();
    model!().reach(&yielded).preemption_bound(3).check(move || {
        let rt = runtime(1);
        let busy = rt.spawn(async {
            for _ in 0..2 {
                yield_now().await;
            }
        });
        let resumed = rt.block_on(async {
            let task = spawn(async {
                yield_now().await;
                true
            });
            task.await.unwrap()
        });
        rt.block_on(busy).unwrap();
        r_yielded.hit_if(resumed);
    });
}

/// Two tasks wake each other forever on the only worker, each wake putting
/// the other in the LIFO slot; a third task, queued in the ring behind
/// them, still runs: the LIFO slot is given up after 3 polls in a row.
///
/// Checks: R-10 (weaker: the LIFO slot is given up, not that it is after
/// exactly 3 polls).
#[test]
fn lifo_slot_given_up() {
    let ran = Reach::new("third_task_ran_while_pair_woke_each_other");
    let r_ran = ran.clone();
    // Bound 3 in pull requests: 24,447 executions, 2 s on H2 (2026-11-27);
    // bound 4 takes 171,571 and 11 s. It ran at bound 1 (135,084
    // executions; bound 2 was 2,844,174 and 153 s) while the main thread
    // spawned, waited twice and woke the pair itself; now one task does
    // all that and the main thread only waits for it.
    model!().reach(&ran).preemption_bound(3).check(move || {
        let rt = runtime(1);
        let stop = Arc::new(AtomicUsize::new(0));
        let slots = Arc::new([
            modelsync::sync::Mutex::new(None::<std::task::Waker>),
            modelsync::sync::Mutex::new(None),
        ]);
        let ping_pong = |me: usize,
                         slots: Arc<[modelsync::sync::Mutex<Option<std::task::Waker>>; 2]>,
                         stop: Arc<AtomicUsize>| {
            std::future::poll_fn(move |cx| {
                // Relaxed: the flag's store and this load are on the one
                // worker thread (the third task sets it).
                if stop.load(Relaxed) == 1 {
                    return Poll::Ready(());
                }
                *slots[me].lock() = Some(cx.waker().clone());
                if let Some(other) = slots[1 - me].lock().take() {
                    other.wake();
                }
                Poll::Pending
            })
        };
        // One task drives the whole scenario, so the main thread only
        // waits for it: each thing the main thread did between the worker's
        // steps (a second `block_on`, the wakes) multiplied the
        // interleavings without touching the LIFO slot.
        let r_ran = r_ran.clone();
        let driver = rt.spawn(async move {
            let a = spawn(ping_pong(0, slots.clone(), stop.clone()));
            let s = stop.clone();
            let third = spawn(async move { s.store(1, Relaxed) });
            let b = spawn(ping_pong(1, slots.clone(), stop));
            third.await.unwrap();
            r_ran.hit();
            for slot in slots.iter() {
                if let Some(w) = slot.lock().take() {
                    w.wake();
                }
            }
            a.await.unwrap();
            b.await.unwrap();
        });
        rt.block_on(driver).unwrap();
    });
}

/// A count under the shim's `Mutex`, and its `Condvar`: a thread (a
/// task's poll, blocking its worker's thread) waits until the count
/// reaches a goal.
#[derive(Clone)]
struct Gate(Arc<(Mutex<usize>, modelsync::sync::Condvar)>);

impl Gate {
    fn new() -> Self {
        Gate(Arc::new((Mutex::new(0), modelsync::sync::Condvar::new())))
    }

    fn add_one(&self) {
        *self.0 .0.lock() += 1;
        self.0 .1.notify_all();
    }

    fn wait_for(&self, goal: usize) {
        let mut count = self.0 .0.lock();
        while *count < goal {
            count = self.0 .1.wait(count);
        }
    }
}

/// Issue 48's scenario: the main thread yields (the workers may go to
/// sleep, or not yet), spawns a task whose poll blocks its worker's thread
/// on a `Mutex` and `Condvar` until a second task has run, spawns that
/// second task (from outside the workers: the inject queue, not a LIFO
/// slot) and joins both; the other worker must run the second task.
///
/// Before the fix loom deadlocked here at bound 1 (execution 1,797): the
/// other worker, its queues found empty, was refused a search because the
/// first worker, woken by the first spawn, searched; the second spawn saw
/// that searcher and woke nobody; the first worker took the blocking task
/// as the last searcher and, every worker still counted awake, woke
/// nobody either; the other worker then parked as a non-searcher without
/// looking again, and the second task stayed in the inject queue. The
/// same interleaving with every access a read-modify-write (no stale
/// read) deadlocks at bound 2 (execution 3,467): a real-thread order, not
/// a loom artefact. A worker whose park leaves no worker searching now
/// checks every queue once more (`src/runtime/idle.rs`).
///
/// Checks: R-7, R-8.
#[test]
fn blocking_task_waits_for_a_task_spawned_after_it() {
    let ran_while_blocked = Reach::new("second_task_ran_while_the_first_blocked_its_worker");
    let r_ran = ran_while_blocked.clone();
    // Bound 1, the smallest that shows the lost wake-up (12,192
    // executions, 2 s), and capped there: bound 2 takes 729,650 and
    // 125 s, and the audit's bound 3 with every access a
    // read-modify-write 1,485,546 and 237 s.
    model!()
        .reach(&ran_while_blocked)
        .max_preemption_bound(1)
        .check(move || {
            let rt = runtime(2);
            thread::yield_now();
            let gate = Gate::new();
            let blocked = Flag::default();
            let first = {
                let (gate, blocked) = (gate.clone(), blocked.clone());
                rt.spawn(async move {
                    blocked.set();
                    gate.wait_for(1);
                })
            };
            let second = rt.spawn(async move {
                let while_blocked = blocked.get();
                gate.add_one();
                while_blocked
            });
            let while_blocked = rt.block_on(async move {
                first.await.unwrap();
                second.await.unwrap()
            });
            r_ran.hit_if(while_blocked);
        });
}

/// A worker kept busy while tasks are pushed: a task blocks its worker's
/// thread on a `Mutex` and `Condvar` until two more tasks have run, and
/// the main thread spawns those two only once that poll has begun. The
/// other worker runs both, whether the first push finds it asleep (and
/// wakes it; the second, seeing it search, wakes nobody), still awake on
/// its way to sleep, or back from the first task in time for the second.
/// The main thread yields first, as in the model above, so that loom
/// starts the workers before it spawns. Before the fix it deadlocked at
/// bound 1 (execution 2,980): the other worker, refused a search while the
/// first searched, parked after both pushes had seen no searcher and
/// every worker awake, and woke nobody (no hand-off involved).
///
/// Checks: R-7, R-8.
#[test]
fn tasks_pushed_while_a_worker_is_blocked() {
    let burst = Reach::new("both_pushed_before_either_ran");
    let apart = Reach::new("one_ran_before_the_other_was_pushed");
    let (r_burst, r_apart) = (burst.clone(), apart.clone());
    // Bound 1, the smallest that shows the lost wake-up (18,766
    // executions, 3 s), and capped there: bound 2 takes 1,302,966 and
    // 297 s, and the audit's bound 3 (every access a read-modify-write)
    // does not finish in 5 minutes.
    model!()
        .reach(&burst)
        .reach(&apart)
        .max_preemption_bound(1)
        .check(move || {
            let rt = runtime(2);
            thread::yield_now();
            let started = Gate::new();
            let ran = Gate::new();
            let blocker = {
                let (started, ran) = (started.clone(), ran.clone());
                rt.spawn(async move {
                    started.add_one();
                    ran.wait_for(2);
                })
            };
            started.wait_for(1);
            let pushed = Tally::default();
            let pushed_before_run = Tally::default();
            let mut spawned = Vec::new();
            for _ in 0..2 {
                let (ran, saw, seen) = (ran.clone(), pushed.clone(), pushed_before_run.clone());
                spawned.push(rt.spawn(async move {
                    if saw.get() == 2 {
                        seen.add_one();
                    }
                    ran.add_one();
                }));
                pushed.add_one();
            }
            rt.block_on(async move {
                blocker.await.unwrap();
                for handle in spawned {
                    handle.await.unwrap();
                }
            });
            r_burst.hit_if(pushed_before_run.get() == 2);
            r_apart.hit_if(pushed_before_run.get() < 2);
        });
}

/// Shuttle's scale (loom cannot explore it: skipped there): 4 workers and
/// 240 tasks mixing spawns from tasks, yields, wakes through oneshots sent
/// by other tasks, and aborts from outside, then the runtime dropped with
/// some tasks still waiting. Every future's item is delivered once or
/// dropped once; an aborted task delivers nothing; nothing leaks.
///
/// Checks: R-1, R-2, R-5, R-6, R-11.
#[cfg(not(loom))]
#[test]
fn random_mix_at_scale() {
    let aborted_pending = Reach::new("abort_cancelled_a_waiting_task");
    let r_aborted = aborted_pending.clone();
    model!().reach(&aborted_pending).check(move || {
        const TASKS: usize = 240;
        let ledger = Ledger::new(TASKS + 1);
        let rt = runtime(4);
        let mut senders = Vec::new();
        let mut handles = Vec::new();
        for i in 0..TASKS {
            let item = ledger.item(i);
            let handle = match i % 4 {
                0 => rt.spawn(async move {
                    for _ in 0..i % 3 {
                        yield_now().await;
                    }
                    item
                }),
                1 => rt.spawn(async move { spawn(async move { item }).await.unwrap() }),
                2 => {
                    let (tx, rx) = modelsync::oneshot::channel::<()>();
                    senders.push(tx);
                    rt.spawn(async move {
                        let _ = rx.await;
                        item
                    })
                }
                _ => {
                    // Woken by the next task's send, from a worker.
                    let (tx, rx) = modelsync::oneshot::channel::<()>();
                    rt.spawn(async move { tx.send(()).unwrap() });
                    rt.spawn(async move {
                        rx.await.unwrap();
                        item
                    })
                }
            };
            handles.push((i, handle));
        }
        // Wake half of the waiting tasks from this thread; abort some.
        let half = senders.len() / 2;
        for tx in senders.drain(..half) {
            tx.send(()).unwrap();
        }
        let mut waiting = Vec::new();
        for (i, handle) in handles {
            if i % 8 == 6 {
                handle.abort();
                waiting.push((i, handle, true));
            } else {
                waiting.push((i, handle, false));
            }
        }
        let late = ledger.item(TASKS);
        let mut outcomes = Vec::new();
        for (i, handle, aborted) in waiting {
            // Tasks whose sender was kept wait until the drop below.
            let kept = i % 4 == 2 && (i / 4) >= half;
            if kept && !aborted {
                outcomes.push((handle, aborted));
                continue;
            }
            match rt.block_on(handle) {
                Ok(item) => ledger.deliver(item),
                Err(e) => {
                    assert!(aborted && e.is_cancelled(), "task {i}: {e}");
                    r_aborted.hit_if(kept);
                }
            }
        }
        drop(rt);
        drop(senders);
        for (handle, _) in outcomes {
            assert!(modelsync::block_on(handle).unwrap_err().is_cancelled());
        }
        ledger.deliver(late);
        ledger.assert_all_dropped_once();
    });
}

// ---------------------------------------------------------------------
// Generated scenarios, checked against the specification.

/// The runtime as generated scenarios see it (`harness/scenario.rs`): each
/// part of a scenario spawns tasks and uses their `JoinHandle`s (abort,
/// `is_finished`, join by `block_on`), while the runtime's worker runs the
/// tasks. A handle stays with the part that spawned it (it is not `Clone`,
/// and this runtime has no `AbortHandle`); the final part holds every
/// handle not joined yet. Task `n` is the scenario's `n`-th spawn and
/// returns ledger item `n` (or panics).
struct RuntimeSubject;

#[derive(Clone, Debug, PartialEq)]
enum TaskOp {
    /// Spawns task `task`, whose future yields `yields` times, then
    /// returns its item or panics.
    Spawn {
        task: usize,
        yields: usize,
        panics: bool,
    },
    Abort(usize),
    IsFinished(usize),
    /// `block_on` of the handle: waits until the task finished.
    Join(usize),
}

/// What a part holds: the runtime, and the handles of its tasks.
struct Tasks {
    rt: std::sync::Arc<Runtime>,
    handles: std::collections::BTreeMap<usize, JoinHandle<Tracked>>,
}

impl Subject for RuntimeSubject {
    type Spec = spec::Runtime;
    type Op = TaskOp;
    type Actor = Tasks;
    const NAME: &'static str = "runtime";
    const RUST_TYPE: &'static str = "RuntimeSubject";

    fn items(scenario: &Scenario<TaskOp>) -> usize {
        scenario
            .ops()
            .filter(|op| matches!(op, TaskOp::Spawn { .. }))
            .count()
    }

    fn setup(_: &Scenario<TaskOp>) -> (spec::Runtime, Tasks) {
        // One worker under loom (each is a model thread), two elsewhere.
        let workers = if cfg!(loom) { 1 } else { 2 };
        let tasks = Tasks {
            rt: std::sync::Arc::new(runtime(workers)),
            handles: Default::default(),
        };
        (spec::Runtime::default(), tasks)
    }

    fn split(main: &mut Tasks, _: &Scenario<TaskOp>, _: usize) -> Tasks {
        Tasks {
            rt: main.rt.clone(),
            handles: Default::default(),
        }
    }

    fn merge(main: &mut Tasks, joined: Tasks) {
        main.handles.extend(joined.handles);
    }

    fn run(
        tasks: &mut Tasks,
        op: &TaskOp,
        rec: &ThreadRecorder<spec::Runtime>,
        _: &Waiter,
        ledger: &Ledger,
    ) {
        use spec::{Op, Ret};
        match *op {
            TaskOp::Spawn {
                task,
                yields,
                panics,
            } => {
                let item = ledger.item(task);
                let body = if panics {
                    spec::Body::Panics
                } else {
                    spec::Body::Returns(task)
                };
                let handle = rec.op(
                    Op::Spawn(task, body),
                    || {
                        tasks.rt.spawn(async move {
                            for _ in 0..yields {
                                yield_now().await;
                            }
                            if panics {
                                // Unwinding drops the item: never delivered.
                                std::panic::panic_any(ModelPanic(task as u8));
                            }
                            item
                        })
                    },
                    |_| Ret::Unit,
                );
                tasks.handles.insert(task, handle);
            }
            TaskOp::Abort(task) => {
                if let Some(handle) = tasks.handles.get(&task) {
                    rec.op(Op::Abort(task), || handle.abort(), |_| Ret::Unit);
                }
            }
            TaskOp::IsFinished(task) => {
                if let Some(handle) = tasks.handles.get(&task) {
                    rec.op(
                        Op::IsFinished(task),
                        || handle.is_finished(),
                        |&finished| Ret::Bool(finished),
                    );
                }
            }
            TaskOp::Join(task) => {
                // A join always returns: the task finishes on its own.
                if let Some(handle) = tasks.handles.remove(&task) {
                    let result = rec.op(
                        Op::Join(task),
                        || tasks.rt.block_on(handle),
                        |result| Ret::Joined(spec::Outcome::of(result, Tracked::id)),
                    );
                    if let Ok(item) = result {
                        ledger.deliver(item);
                    }
                }
            }
        }
    }

    fn rust(op: &TaskOp) -> String {
        format!("TaskOp::{op:?}")
    }

    fn scenarios() -> BoxedStrategy<Scenario<TaskOp>> {
        use proptest::prelude::*;
        // Drawn with a handle chosen by position among the part's live
        // handles; `number_tasks` then names the tasks.
        let op = prop_oneof![
            3 => (0usize..=1, prop::bool::weighted(0.2)).prop_map(|(yields, panics)| {
                TaskOp::Spawn { task: 0, yields, panics }
            }),
            2 => (0usize..2).prop_map(TaskOp::Abort),
            2 => (0usize..2).prop_map(TaskOp::IsFinished),
            2 => (0usize..2).prop_map(TaskOp::Join),
        ]
        .boxed();
        scenario::alike(op.clone(), op.clone(), op, [2, 3, 3])
            .prop_map(number_tasks)
            .boxed()
    }
}

/// Gives each spawn the next task number, in the order init, threads,
/// post; turns each handle operation's position into the task it names
/// among the part's live handles (the final part's include every handle
/// not joined before), or into a spawn where the part has none.
fn number_tasks(mut scenario: Scenario<TaskOp>) -> Scenario<TaskOp> {
    let mut next = 0;
    let mut number = |ops: &mut Vec<TaskOp>, live: &mut Vec<usize>| {
        for op in ops.iter_mut() {
            let at = match *op {
                TaskOp::Abort(at) | TaskOp::IsFinished(at) | TaskOp::Join(at)
                    if !live.is_empty() =>
                {
                    at % live.len()
                }
                TaskOp::Spawn { yields, panics, .. } => {
                    *op = TaskOp::Spawn {
                        task: next,
                        yields,
                        panics,
                    };
                    live.push(next);
                    next += 1;
                    continue;
                }
                _ => {
                    *op = TaskOp::Spawn {
                        task: next,
                        yields: 0,
                        panics: false,
                    };
                    live.push(next);
                    next += 1;
                    continue;
                }
            };
            *op = match *op {
                TaskOp::Abort(_) => TaskOp::Abort(live[at]),
                TaskOp::IsFinished(_) => TaskOp::IsFinished(live[at]),
                _ => TaskOp::Join(live.remove(at)),
            };
        }
    };
    let mut main_live = Vec::new();
    number(&mut scenario.init, &mut main_live);
    for ops in &mut scenario.threads {
        let mut live = Vec::new();
        number(ops, &mut live);
        main_live.extend(live);
    }
    number(&mut scenario.post, &mut main_live);
    scenario
}

/// Generated scenarios: 2 or 3 threads each spawning tasks (which yield
/// once or not, return or panic) and aborting, asking `is_finished` of
/// and joining them, while the worker runs them (`harness/scenario.rs`);
/// every execution's history checked against `specs/runtime.rs` (task by
/// task), every item dropped once and delivered at most once.
///
/// Not under loom: a scenario's runtime adds a worker thread to every
/// execution, and none of the 16 pull-request scenarios finishes complete
/// within 10,000 executions (all fell back to a bound, the lowest 0, in
/// 325 s on H3); the runtime's components are checked complete instead
/// (`runtime::task_state_generated_scenarios`).
///
/// Checks: R-5, R-6.
#[cfg(not(loom))]
#[test]
fn generated_scenarios() {
    scenario::generated::<RuntimeSubject>(model!());
}

// ---------------------------------------------------------------------
// Components: the task state word (`src/runtime/state.rs`), on its own,
// checked against `specs/task_state.rs`. Complete runs.

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
/// (`harness/scenario.rs`); loom complete for each within its budget,
/// else at the highest bound that finishes (three parties: bound 2;
/// `task_state_complete_scenarios` is the complete run); every transition's
/// history checked against `specs/task_state.rs` (the count always the
/// holders, one queued reference at most, no lost wake, the join waker
/// handed over once, the task freed exactly once).
///
/// Checks: R-1, R-2, R-3, R-4, R-6.
#[test]
fn task_state_generated_scenarios() {
    scenario::generated::<TaskStateSubject>(model!().nightly());
}

/// The task state word's complete run: generated scenarios of the worker
/// and one other party, every execution of each explored (both passes, no
/// preemption bound; the run fails otherwise); every transition's history
/// checked against `specs/task_state.rs`.
///
/// Checks: R-1, R-2, R-3, R-4, R-6.
#[test]
fn task_state_complete_scenarios() {
    scenario::generated_complete::<TaskStateSubject>(
        model!(),
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
/// completion (R-4), an abort racing a poll or a wake (R-3), the last
/// references dropped by different parties (R-1, freed once). The waker's
/// holder and the handle without the worker are no scope: each of their
/// operations is one read-modify-write of the word, so every execution is
/// already a sequential order of them (the harness requires a
/// linearization that reorders calls, and none can). All three parties at
/// once cost more than ten minutes on H4 for every scenario (three
/// threads); the drawn scenarios of three parties are the nightly's
/// (`task_state_generated_scenarios`), and the main job's drawn ones of
/// two (`task_state_complete_scenarios`).
fn task_state_scope(pair: (usize, usize)) -> scope::Scope<TaskStateSubject> {
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
        name: match pair {
            (1, 2) => "task-state-worker-waker",
            _ => "task-state-worker-handle",
        },
        threads: vec![alphabets[pair.0 - 1].clone(), alphabets[pair.1 - 1].clone()],
        lengths: (1, 1),
        post: vec![Cleanup],
        ordered_threads: true,
        contract: scope::any_operations,
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
/// Scope: task-state-worker-waker (the worker with one operation of 2, the waker's holder with one of 4, from 9 regimes; 72 scenarios)
///
/// Checks: R-1, R-2, R-6.
#[test]
fn task_state_scope_worker_and_waker_complete() {
    scope::every_scenario(model!(), task_state_scope((1, 2)));
}

/// As `task_state_scope_worker_and_waker_complete`, for the worker and
/// the `JoinHandle`.
///
/// Scope: task-state-worker-handle (the worker with one operation of 2, the handle with one of 3, from 9 regimes; 54 scenarios)
///
/// Checks: R-1, R-3, R-4, R-6.
#[test]
fn task_state_scope_worker_and_handle_complete() {
    scope::every_scenario(model!(), task_state_scope((1, 3)));
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
/// that waker, once (R-4).
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
/// Checks: R-4, R-5.
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
/// Checks: R-4, R-5.
#[test]
fn join_waker_complete_scenarios() {
    scenario::generated_complete::<JoinWakerSubject>(
        model!(),
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
    fn worker_once_handle_ends_with_its_drop(_: &[StateOp], threads: &[Vec<StateOp>]) -> bool {
        let handle = &threads[1];
        threads[0].len() == 1
            && handle
                .iter()
                .position(|op| *op == DropHandle)
                .is_none_or(|at| at + 1 == handle.len())
    }
    scope::Scope {
        name: "join-waker-2x2",
        threads: vec![vec![Poll { ready: true }], vec![JoinPoll, DropHandle]],
        lengths: (1, 2),
        post: vec![Cleanup],
        ordered_threads: true,
        contract: worker_once_handle_ends_with_its_drop,
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
/// Checks: R-4, R-5.
#[test]
fn join_waker_scope_complete() {
    scope::every_scenario(model!(), join_waker_scope());
}
