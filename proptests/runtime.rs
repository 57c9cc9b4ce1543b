//! The runtime: its task state machine against a sequential reference that
//! tracks who holds each reference, its searching/sleeping counters against
//! a reference of worker states, and real-thread tests of the whole
//! runtime (spawn, join, yield, wake from outside, abort, panic, shutdown).

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst}; // shim-exempt: counters observed from outside the runtime
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use modelsync::internals::runtime::{Entries, Idle, LiveTasks, State};
use modelsync::runtime::{spawn, yield_now, Builder, JoinError, JoinHandle, Runtime};
use proptest::prelude::*;

use crate::harness::linearizability::Spec;
use crate::specs::idle as ispec;
use crate::specs::live_tasks as lspec;
use crate::specs::task_state::{self as tspec, Holder};
use crate::support::{alone_in_a_process, panic_message, threads_of_this_process};

/// Fewer tasks under Miri, which runs every test about 1000x slower.
fn scaled(n: usize) -> usize {
    if cfg!(miri) {
        (n / 100).max(2)
    } else {
        n
    }
}

/// How long a test waits for something that must happen before it calls
/// it lost: generous, since Miri runs every test about 1000x slower.
fn patience() -> std::time::Duration {
    std::time::Duration::from_secs(if cfg!(miri) { 600 } else { 20 })
}

fn runtime(workers: usize) -> Runtime {
    Builder::new_multi_thread()
        .worker_threads(workers)
        .build()
        .unwrap()
}

// ---------------------------------------------------------------------
// The task state machine against its specification.

fn task_op() -> impl Strategy<Value = tspec::Op> {
    use tspec::Op;
    prop_oneof![
        Just(Op::ToRunning),
        Just(Op::ToIdle),
        Just(Op::ToComplete),
        Just(Op::UnsetWakerAfterComplete),
        Just(Op::ToTerminal),
        Just(Op::CloneWaker),
        Just(Op::WakeByVal),
        Just(Op::WakeByRef),
        Just(Op::Abort),
        Just(Op::SetJoinWaker),
        Just(Op::UnsetJoinWaker),
        Just(Op::ToJoinHandleDropped),
        Just(Op::RefDec(Holder::Queued)),
        Just(Op::RefDec(Holder::Waker)),
        Just(Op::RefDec(Holder::Handle)),
        Just(Op::ToShutdown),
        Just(Op::RefCount),
    ]
}

/// The real word's bits and count against the specification's state, and
/// the invariants the specification keeps.
fn check_task_state(state: &State, m: &tspec::TaskState) -> Result<(), TestCaseError> {
    let s = state.load();
    let bits = (
        s.is_running(),
        s.is_complete(),
        s.is_notified(),
        s.is_cancelled(),
        s.is_join_interested(),
        s.has_join_waker(),
    );
    let want = (
        m.running,
        m.complete,
        m.notified,
        m.cancelled,
        m.join_interest,
        m.join_waker,
    );
    prop_assert_eq!(bits, want, "{:?} vs {:?}", s, m);
    // the count is exactly the holders.
    prop_assert_eq!(s.ref_count(), m.holders(), "refs {:?} vs {:?}", s, m);
    // at most one queued reference, and only while NOTIFIED.
    prop_assert!(m.queued <= 1 && (m.queued == 0 || m.notified), "{:?}", m);
    // a completed task's future is gone: nobody polls it.
    prop_assert!(!(m.running && m.complete), "{:?}", m);
    Ok(())
}

proptest! {
    #![proptest_config(crate::support::proptest_config(512))]

    /// Every transition of the task state word matches its specification
    /// (`specs/task_state.rs`), which tracks each reference holder: the
    /// count always equals the holders
    /// and reaches 0 exactly once; at most one queued reference; a wake is
    /// never lost (a wake of an idle task queues it, of a running one makes
    /// the poller requeue it); the join waker and the output each have one
    /// owner.
    ///
    /// Checks.
    #[test]
    fn task_state_matches_reference(ops in proptest::collection::vec(task_op(), 1..40)) {
        let state = State::new();
        let mut model = tspec::TaskState::new(0);
        check_task_state(&state, &model)?;
        for op in ops {
            if model.freed {
                break;
            }
            // An operation whose party holds no reference now is skipped.
            let Some((want, next)) = tspec::TaskState::outcomes(&model, &op).pop() else {
                continue;
            };
            let got = tspec::run_on(&op, &state, model.listed);
            prop_assert_eq!(got, want, "{:?} from {:?}", op, model);
            model = next;
            if !model.freed {
                check_task_state(&state, &model)?;
            }
        }
    }

    /// The searching/sleeping counters against their specification
    /// (`specs/idle.rs`): at most half of the workers search; a push wakes
    /// a sleeper only when none searches, and the woken worker counts as
    /// searching; the last searcher to stop is told so. Sequential, so
    /// that a worker starts searching exactly when its look allows it.
    ///
    /// Checks.
    #[test]
    fn idle_counters_match_reference(
        workers in 1usize..6,
        ops in proptest::collection::vec((0u8..4, 0usize..6), 1..60),
    ) {
        use ispec::{Op, Ret, Stage};
        let idle = Idle::new(workers);
        let mut model = ispec::Workers::new(workers);
        for (op, w) in ops {
            let w = w % workers;
            if op == 0 {
                // An operation the worker's stage does not allow is skipped.
                if let Some((want, next)) = model.to_searching(w) {
                    prop_assert_eq!(idle.transition_worker_to_searching(), want);
                    model = next;
                }
            } else {
                let op = match op {
                    1 => Op::FromSearching(w),
                    2 => Op::ToParked(w),
                    _ => Op::WorkerToNotify,
                };
                if let Some((want, next)) = ispec::Workers::outcomes(&model, &op).pop() {
                    let got = match op {
                        Op::FromSearching(_) => Ret::Bool(idle.transition_worker_from_searching()),
                        Op::ToParked(w) => Ret::Bool(
                            idle.transition_worker_to_parked(w, model.stages[w] == Stage::Searching),
                        ),
                        _ => Ret::Woke(idle.worker_to_notify()),
                    };
                    prop_assert_eq!(got, want, "{:?} from {:?}", op, model);
                    model = next;
                }
            }
            prop_assert_eq!(idle.num_searching(), model.searching());
            prop_assert_eq!(idle.num_unparked(), model.unparked());
            prop_assert_eq!(idle.sleepers(), model.sleepers.clone());
            prop_assert!(2 * model.searching() <= workers.max(1) + 1);
        }
    }

    /// The live-task list against its specification
    /// (`specs/live_tasks.rs`), with 1 to 4 shards: inserts listed until
    /// their shard closes, removes answered by whether the entry is still
    /// listed, closes taking exactly what each shard lists; slots freed by
    /// removes are reused without mixing entries up. Entries are inserted
    /// once each (the contract), in the drawn order.
    ///
    /// Checks: R-11.
    #[test]
    fn live_tasks_match_reference(
        shards in 1usize..=4,
        ops in proptest::collection::vec((0u8..10, 0usize..12), 1..80),
    ) {
        use lspec::{Op, Ret};
        let list = LiveTasks::new(shards);
        let entries = Entries::new(12);
        let mut model = lspec::LiveTasks::new(shards);
        let mut inserted = [false; 12];
        for (op, e) in ops {
            let entry = entries.get(e);
            let shard = list.shard_of(&entry);
            prop_assert!(shard < shards);
            match op {
                0..=4 if !inserted[e] => {
                    inserted[e] = true;
                    let (want, next) = model.step(&Op::Insert { entry: e, shard });
                    prop_assert_eq!(Ret::Bool(list.insert(entry)), want);
                    model = next;
                }
                0..=8 => {
                    let (want, next) = model.step(&Op::Remove { entry: e, shard });
                    prop_assert_eq!(Ret::Bool(list.remove(&entry)), want);
                    model = next;
                }
                _ => {
                    let mut taken: Vec<usize> = list.close_and_take_all().iter().map(|e| e.index()).collect();
                    taken.sort_unstable();
                    let mut want = Vec::new();
                    for shard in 0..shards {
                        let (Ret::Taken(from_shard), next) = model.step(&Op::CloseShard(shard)) else {
                            unreachable!("a close answers with what it took")
                        };
                        want.extend(from_shard);
                        model = next;
                    }
                    want.sort_unstable();
                    prop_assert_eq!(taken, want);
                }
            }
        }
    }
}

// ---------------------------------------------------------------------
// Real threads.

/// 10,000 tasks spawned from outside and joined; each output once.
///
/// Checks.
#[test]
fn ten_thousand_spawned_tasks_join() {
    let rt = runtime(4);
    let n = scaled(10_000);
    let handles: Vec<JoinHandle<usize>> = (0..n).map(|i| rt.spawn(async move { i * 2 })).collect();
    let outputs: Vec<usize> = rt.block_on(async {
        let mut out = Vec::new();
        for h in handles {
            out.push(h.await.unwrap());
        }
        out
    });
    assert_eq!(outputs, (0..n).map(|i| i * 2).collect::<Vec<_>>());
}

/// A chain of 1,000 nested spawns, each spawning the next from inside a
/// task (the LIFO slot's path).
///
/// Checks.
#[test]
fn chain_of_nested_spawns() {
    fn chain(depth: usize, done: modelsync::oneshot::Sender<usize>) {
        if depth == 0 {
            done.send(0).unwrap();
        } else {
            spawn(async move { chain(depth - 1, done) });
        }
    }
    let rt = runtime(4);
    let depth = scaled(1_000);
    let (tx, rx) = modelsync::oneshot::channel();
    rt.spawn(async move { chain(depth, tx) });
    assert_eq!(rt.block_on(rx).unwrap(), 0);
}

/// 1,000 ping-pongs over modelsync's oneshot, each between two spawned
/// tasks.
///
/// Checks.
#[test]
fn ping_pong_over_oneshot() {
    let rt = runtime(4);
    let rounds = scaled(1_000);
    rt.block_on(async {
        for round in 0..rounds {
            let (ping_tx, ping_rx) = modelsync::oneshot::channel::<usize>();
            let (pong_tx, pong_rx) = modelsync::oneshot::channel::<usize>();
            spawn(async move {
                let v = ping_rx.await.unwrap();
                pong_tx.send(v + 1).unwrap();
            });
            let sender = spawn(async move { ping_tx.send(round).unwrap() });
            assert_eq!(pong_rx.await.unwrap(), round + 1);
            sender.await.unwrap();
        }
    });
}

/// 200 tasks x 1,000 yields: every task finishes with every yield polled.
///
/// Checks.
#[test]
fn many_tasks_yield_many_times() {
    let rt = runtime(4);
    let (tasks, yields) = (scaled(200), scaled(1_000));
    let polls = Arc::new(AtomicUsize::new(0));
    let handles: Vec<_> = (0..tasks)
        .map(|_| {
            let polls = polls.clone();
            rt.spawn(async move {
                for _ in 0..yields {
                    polls.fetch_add(1, SeqCst);
                    yield_now().await;
                }
            })
        })
        .collect();
    rt.block_on(async {
        for h in handles {
            h.await.unwrap();
        }
    });
    assert_eq!(polls.load(SeqCst), tasks * yields);
}

/// A future that completes once a flag is set, registering its waker.
struct WaitFor(Arc<(AtomicUsize, std::sync::Mutex<Option<Waker>>)>); // shim-exempt: the test's own signal, outside the runtime

impl Future for WaitFor {
    type Output = ();
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        *self.0 .1.lock().unwrap() = Some(cx.waker().clone());
        if self.0 .0.load(SeqCst) == 1 {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    }
}

/// Tasks woken from plain threads while every worker sleeps: each runs.
///
/// Checks.
#[test]
fn tasks_woken_from_plain_threads_while_workers_sleep() {
    let rt = runtime(2);
    for _ in 0..scaled(50) {
        let signal = Arc::new((AtomicUsize::new(0), std::sync::Mutex::new(None))); // shim-exempt: as above
        let handle = rt.spawn(WaitFor(signal.clone()));
        // Let the task register and the workers go to sleep.
        while signal.1.lock().unwrap().is_none() {
            std::thread::yield_now(); // shim-exempt: a plain thread outside the runtime
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
        let waker_thread = {
            let signal = signal.clone();
            modelsync::sync::thread::spawn(move || {
                signal.0.store(1, SeqCst);
                let waker = signal.1.lock().unwrap().take().unwrap();
                waker.wake();
            })
        };
        waker_thread.join().unwrap();
        rt.block_on(handle).unwrap();
    }
}

/// Counts drops of the futures it is attached to.
struct DropCounter(Arc<AtomicUsize>);
impl Drop for DropCounter {
    fn drop(&mut self) {
        self.0.fetch_add(1, SeqCst);
    }
}

/// Abort: an idle task's future is dropped once and its handle reports
/// cancellation; a completed task keeps its output; abort is idempotent.
///
/// Checks.
#[test]
fn abort_drops_the_future_once() {
    let rt = runtime(2);
    let drops = Arc::new(AtomicUsize::new(0));
    let counter = DropCounter(drops.clone());
    let pending = rt.spawn(async move {
        let _counter = counter;
        std::future::pending::<()>().await
    });
    let done = rt.spawn(async { 5 });
    rt.block_on(async {
        while !done.is_finished() {
            yield_now().await;
        }
    });
    pending.abort();
    pending.abort();
    done.abort();
    let err = rt.block_on(pending).unwrap_err();
    assert!(err.is_cancelled() && !err.is_panic());
    assert_eq!(err.to_string(), "task was cancelled");
    assert_eq!(format!("{err:?}"), "JoinError::Cancelled");
    assert_eq!(drops.load(SeqCst), 1);
    assert_eq!(rt.block_on(done).unwrap(), 5);
}

/// A panicking task is reported through its handle; the worker keeps
/// running other tasks; the payload comes back with `into_panic`.
///
/// Checks.
#[test]
fn panic_in_task_is_reported_and_worker_survives() {
    let rt = runtime(1);
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let boom = rt.spawn(async { panic!("boom") });
    let err: JoinError = rt.block_on(boom).unwrap_err();
    std::panic::set_hook(previous);
    assert!(err.is_panic() && !err.is_cancelled());
    assert_eq!(err.to_string(), "task panicked with message \"boom\"");
    assert_eq!(panic_message(err.into_panic()), "boom");
    assert_eq!(rt.block_on(rt.spawn(async { 7 })).unwrap(), 7);
}

/// Dropping the runtime drops every unfinished future exactly once before
/// `drop` returns (idle, queued, or woken later), reports cancellation to
/// their handles, and wakers that outlive it are safe to wake and drop.
///
/// Checks.
#[test]
fn dropping_the_runtime_drops_every_future_once() {
    let drops = Arc::new(AtomicUsize::new(0));
    let rt = runtime(2);
    let tasks = scaled(100);
    let wakers = Arc::new(std::sync::Mutex::new(Vec::new())); // shim-exempt: collects wakers outside the runtime
    let handles: Vec<_> = (0..tasks)
        .map(|_| {
            let counter = DropCounter(drops.clone());
            let wakers = wakers.clone();
            rt.spawn(async move {
                let _counter = counter;
                std::future::poll_fn(|cx| {
                    wakers.lock().unwrap().push(cx.waker().clone());
                    Poll::<()>::Pending
                })
                .await
            })
        })
        .collect();
    while wakers.lock().unwrap().len() < tasks {
        std::thread::yield_now(); // shim-exempt: a plain thread outside the runtime
    }
    drop(rt);
    assert_eq!(
        drops.load(SeqCst),
        tasks,
        "every future dropped once, before drop returned"
    );
    for waker in wakers.lock().unwrap().drain(..) {
        waker.wake();
    }
    for handle in handles {
        assert!(handle.is_finished());
        assert!(modelsync::block_on(handle).unwrap_err().is_cancelled());
    }
}

/// Everything this thread allocates for a runtime is freed, whichever
/// thread frees it: a task that finished and was joined while the runtime
/// runs, and, when the runtime is dropped, the runtime itself and every task
/// left in it (idle, queued on a worker, or still in the inject queue).
/// Blocks are charged to the thread that allocated them (the counting
/// allocator's owners), so a task freed by a worker counts.
///
/// Checks.
#[test]
#[cfg_attr(miri, ignore)] // counts no owners; Miri's own leak check applies
fn runtime_frees_everything_it_allocated() {
    // What a thread allocates once and keeps (its thread-locals) first.
    runtime(2).block_on(async {});
    let owner = crate::support::allocations::Owner::start();
    let at_start = owner.live();
    let rt = runtime(2);
    let running = owner.live();
    let tasks = scaled(200);
    let handles: Vec<_> = (0..tasks).map(|i| rt.spawn(async move { i })).collect();
    for (i, handle) in handles.into_iter().enumerate() {
        assert_eq!(modelsync::block_on(handle).unwrap(), i);
    }
    // What stays is buffers that keep their capacity (the inject queue's,
    // and the live-task list's 8 shards' with 2 workers), not a block per
    // task. A worker releases its reference just after the output is
    // published: wait for it.
    let kept = || owner.live() - running;
    let deadline = std::time::Instant::now() + patience();
    while kept() >= 32 && std::time::Instant::now() < deadline {
        std::thread::yield_now(); // shim-exempt: a plain thread outside the runtime
    }
    assert!(
        kept() < 32,
        "{} blocks kept after {tasks} tasks joined",
        kept()
    );

    // Left at shutdown: idle tasks, tasks that wake themselves (queued on a
    // worker), and a burst spawned just before the drop (in the inject queue).
    let mut handles: Vec<JoinHandle<()>> = Vec::new();
    let yields = Arc::new(AtomicUsize::new(0));
    let yielders = scaled(50);
    for _ in 0..yielders {
        handles.push(rt.spawn(std::future::pending()));
        let yields = yields.clone();
        handles.push(rt.spawn(async move {
            loop {
                yields.fetch_add(1, SeqCst);
                yield_now().await;
            }
        }));
    }
    // The yielders run: each yield queues one in its worker's ring.
    while yields.load(SeqCst) < 2 * yielders {
        std::thread::yield_now(); // shim-exempt: a plain thread outside the runtime
    }
    for _ in 0..scaled(300) {
        handles.push(rt.spawn(async {}));
    }
    drop(rt);
    drop((handles, yields));
    assert_eq!(
        owner.live(),
        at_start,
        "the runtime or a task was not freed"
    );
}

// ---------------------------------------------------------------------
// R-14 over the environment of the worker that blocks: what its earlier
// polls left in the per-thread and per-core state `src/runtime/worker.rs`
// keeps, crossed with every way a task reaches its ring.

/// Something a poll does on the worker before a task is queued there. Each
/// leaves a different part of the worker's state behind: `yield_now`'s
/// per-thread flag (set with the task's waker or with another executor's),
/// a task in the LIFO slot or the ring, a task set aside as yielded, the
/// thread's runtime context, `block_on`'s per-thread parker.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Action {
    Nothing,
    /// Polls `yield_now` once with the task's own waker.
    PollYieldNow,
    /// `modelsync::block_on(yield_now())`: the yield's wake goes to
    /// `block_on`'s waker, not to the task's.
    YieldOnAnotherExecutor,
    /// Aborts another, idle task, which is queued on this worker for its
    /// cancellation.
    AbortAnother,
    /// `wake_by_ref` on its own waker, not through `yield_now`.
    WakeItself,
    /// Enters another runtime's context and spawns there.
    UseAnotherRuntime,
}

const ACTIONS: [Action; 6] = [
    Action::Nothing,
    Action::PollYieldNow,
    Action::YieldOnAnotherExecutor,
    Action::AbortAnother,
    Action::WakeItself,
    Action::UseAnotherRuntime,
];

/// How a poll that did an `Action` ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ending {
    Ready,
    /// With `PollYieldNow`, a real yield: the task is set aside on the
    /// worker. With `WakeItself`, back to the ring. Otherwise idle.
    Pending,
    Panic,
    /// Aborts its own task, then returns `Pending`: cancelled as the poll
    /// ends.
    AbortItself,
}

const ENDINGS: [Ending; 4] = [
    Ending::Ready,
    Ending::Pending,
    Ending::Panic,
    Ending::AbortItself,
];

/// Where the `Action` happened: in the poll before the one that queues
/// the task, on the same worker, or earlier in the queueing poll itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Before {
    PreviousPoll(Action, Ending),
    SamePoll(Action),
}

/// How the task that must be stolen reaches the blocked worker's ring.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Queued {
    /// Spawned, then pushed out of the LIFO slot by the next spawn.
    SpawnedTwice,
    /// Idle, woken by the queueing task, then pushed out of the LIFO slot.
    WokenByAnother,
    /// Idle, aborted by the queueing task (queued to be cancelled), then
    /// pushed out of the LIFO slot.
    Aborted,
    /// The queueing task itself: it wakes itself during its poll, not
    /// through `yield_now`, and returns `Pending`.
    WokeItself,
    /// Awaits another task's `JoinHandle`; that task completes as the last
    /// poll of the worker's LIFO run (R-10: 3 in a row), so the join
    /// waker's wake puts it in the LIFO slot and the worker gives it up to
    /// the ring.
    JoinWakerAfterLifoRun,
}

/// Which poll blocks the worker.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Blocker {
    /// The queueing poll, after it queued the task (a second spawn fills
    /// the LIFO slot).
    QueueingPoll,
    /// A task the queueing poll spawns last, so the LIFO slot's.
    NextPoll,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Combination {
    before: Before,
    queued: Queued,
    blocker: Blocker,
}

impl Combination {
    fn all() -> Vec<Combination> {
        let mut befores: Vec<Before> = ACTIONS
            .iter()
            .flat_map(|&a| ENDINGS.iter().map(move |&e| Before::PreviousPoll(a, e)))
            .collect();
        befores.extend(ACTIONS.iter().map(|&a| Before::SamePoll(a)));
        let mut all = Vec::new();
        for &before in &befores {
            for queued in [
                Queued::SpawnedTwice,
                Queued::WokenByAnother,
                Queued::Aborted,
                Queued::WokeItself,
                Queued::JoinWakerAfterLifoRun,
            ] {
                // A task that queues itself or is completed by a LIFO run
                // cannot block in the poll that queues it.
                let blockers: &[Blocker] = match queued {
                    Queued::WokeItself | Queued::JoinWakerAfterLifoRun => &[Blocker::NextPoll],
                    _ => &[Blocker::QueueingPoll, Blocker::NextPoll],
                };
                for &blocker in blockers {
                    all.push(Combination {
                        before,
                        queued,
                        blocker,
                    });
                }
            }
        }
        all
    }

    /// R-14's exception: the queued task yielded in the poll that requeues
    /// it, so it waits on the blocked worker until the blocking poll
    /// returns. A `block_on(yield_now())` is no yield of the task:
    /// `block_on`'s waker took it, and a later wake of the task by itself
    /// goes to the ring, where another worker takes it.
    fn queued_task_yielded(self) -> bool {
        self.queued == Queued::WokeItself
            && matches!(self.before, Before::SamePoll(Action::PollYieldNow))
    }

    /// The blocking poll runs in the same run of the worker as the
    /// previous poll (through the LIFO slot, with no look at any queue in
    /// between), so a task that yielded in the previous poll cannot be
    /// requeued, let alone stolen, before it ends.
    fn blocker_in_the_previous_polls_run(self) -> bool {
        self.queued != Queued::JoinWakerAfterLifoRun
    }
}

const EXPECTED_PANIC: &str = "an environment's poll panics on purpose";

type Mutex<T> = std::sync::Mutex<T>; // shim-exempt: the test's own records, outside the runtime

/// One round's records, shared by its tasks and the test thread.
#[derive(Default)]
struct Round {
    /// Which thread ran each named poll.
    threads: Mutex<std::collections::HashMap<&'static str, std::thread::ThreadId>>,
    /// Wakers left by idle tasks' first polls.
    wakers: Mutex<std::collections::HashMap<&'static str, Waker>>,
    /// Aborted by the round's tasks, joined by the test.
    handles: Mutex<std::collections::HashMap<&'static str, JoinHandle<()>>>,
    other: Mutex<Option<modelsync::runtime::Handle>>,
    /// The queued task ran (or, aborted, was cancelled).
    ran: AtomicUsize,
    blocker_done: AtomicUsize,
    /// Whether the blocker had ended when the queued task ran.
    ran_after_blocker: AtomicUsize,
    /// Whether the blocker had ended when the previous poll's task was
    /// polled again.
    previous_again_after_blocker: AtomicUsize,
    /// Futures of this round not yet dropped.
    live: AtomicUsize,
    outcome: Mutex<Option<std::sync::mpsc::Sender<Result<(), String>>>>, // shim-exempt: the blocker's report to the test thread
}

impl Round {
    fn seen(&self, poll: &'static str) {
        let previous = self
            .threads
            .lock()
            .unwrap()
            .insert(poll, std::thread::current().id()); // shim-exempt: identifies the polling worker
        assert!(previous.is_none(), "{poll} polled twice");
    }

    fn thread(&self, poll: &str) -> Option<std::thread::ThreadId> {
        self.threads.lock().unwrap().get(poll).copied()
    }

    fn wake(&self, task: &str) {
        let waker = self.wakers.lock().unwrap().remove(task);
        waker
            .unwrap_or_else(|| panic!("{task} left no waker"))
            .wake();
    }

    fn abort(&self, task: &str) {
        self.handles.lock().unwrap()[task].abort();
    }

    fn queued_ran(&self) {
        self.seen("queued");
        let after = self.blocker_done.load(SeqCst);
        self.ran_after_blocker.store(after, SeqCst);
        self.ran.store(1, SeqCst);
    }
}

/// Counts a future among its round's live ones until it is dropped, so
/// that a round ends only once every task it started has.
fn tracked<F: Future + Send + 'static>(
    round: &Arc<Round>,
    future: F,
) -> impl Future<Output = F::Output> + Send + 'static {
    struct Live(Arc<Round>);
    impl Drop for Live {
        fn drop(&mut self) {
            self.0.live.fetch_sub(1, SeqCst);
        }
    }
    round.live.fetch_add(1, SeqCst);
    let live = Live(round.clone());
    async move {
        let _live = live;
        future.await
    }
}

/// An idle task: its first poll leaves its waker under `name`; the poll
/// after a wake runs `then`.
fn idle(
    round: &Arc<Round>,
    name: &'static str,
    then: impl FnOnce(&Arc<Round>) + Send + 'static,
) -> impl Future<Output = ()> + Send + 'static {
    let inner = round.clone();
    let mut then = Some(then);
    let mut polled = false;
    tracked(
        round,
        std::future::poll_fn(move |cx| {
            if !polled {
                polled = true;
                let waker = cx.waker().clone();
                inner.wakers.lock().unwrap().insert(name, waker);
                return Poll::Pending;
            }
            (then.take().expect("polled after Ready"))(&inner);
            Poll::Ready(())
        }),
    )
}

fn act(action: Action, cx: &mut Context<'_>, round: &Round) {
    match action {
        Action::Nothing => {}
        Action::PollYieldNow => {
            let mut yielding = std::pin::pin!(yield_now());
            assert!(yielding.as_mut().poll(cx).is_pending());
        }
        Action::YieldOnAnotherExecutor => modelsync::block_on(yield_now()),
        Action::AbortAnother => round.abort("victim"),
        Action::WakeItself => cx.waker().wake_by_ref(),
        Action::UseAnotherRuntime => {
            let other = round.other.lock().unwrap().clone().unwrap();
            let _context = other.enter();
            drop(spawn(async {}));
        }
    }
}

/// Blocks its worker's thread until the queued task ran, or for
/// `patience()`, then reports.
fn block(round: &Arc<Round>, combination: Combination) {
    round.seen("blocker");
    let outcome = if combination.queued_task_yielded() {
        // Set aside on this very worker, which only this poll occupies.
        if round.ran.load(SeqCst) == 0 {
            Ok(())
        } else {
            Err("the queued task, which yielded, ran while its worker was blocked".to_string())
        }
    } else {
        let deadline = std::time::Instant::now() + patience();
        loop {
            if round.ran.load(SeqCst) == 1 {
                break Ok(());
            }
            if std::time::Instant::now() >= deadline {
                break Err("a task queued on a busy worker was never stolen".to_string());
            }
            std::thread::yield_now(); // shim-exempt: blocks this worker on purpose
        }
    };
    round.blocker_done.store(1, SeqCst);
    let report = round.outcome.lock().unwrap().take().unwrap();
    report.send(outcome).unwrap();
}

fn blocker(round: &Arc<Round>, combination: Combination) -> impl Future<Output = ()> + Send {
    let inner = round.clone();
    tracked(round, async move { block(&inner, combination) })
}

/// The queueing poll: the `SamePoll` action, then the task is queued by
/// `combination.queued`, then the worker is blocked by this poll or by the
/// task in its LIFO slot.
fn queueing(round: &Arc<Round>, combination: Combination) -> impl Future<Output = ()> + Send {
    let round = round.clone();
    let mut polled = false;
    let inner = round.clone();
    tracked(
        &round,
        std::future::poll_fn(move |cx| {
            let round = &inner;
            if polled {
                // Only `WokeItself` polls it again: it is the queued task.
                round.queued_ran();
                return Poll::Ready(());
            }
            polled = true;
            round.seen("queueing");
            if let Before::SamePoll(action) = combination.before {
                act(action, cx, round);
            }
            match combination.queued {
                Queued::SpawnedTwice => {
                    let ran = round.clone();
                    drop(spawn(tracked(round, async move { ran.queued_ran() })));
                }
                Queued::WokenByAnother => round.wake("queued"),
                Queued::Aborted => round.abort("queued"),
                Queued::WokeItself => {
                    drop(spawn(blocker(round, combination)));
                    cx.waker().wake_by_ref();
                    return Poll::Pending;
                }
                Queued::JoinWakerAfterLifoRun => {
                    let hop = round.clone();
                    drop(spawn(tracked(round, async move {
                        hop.seen("hop");
                        hop.wake("completes");
                    })));
                    return Poll::Ready(());
                }
            }
            match combination.blocker {
                Blocker::NextPoll => drop(spawn(blocker(round, combination))),
                Blocker::QueueingPoll => {
                    drop(spawn(tracked(round, async {})));
                    block(round, combination);
                }
            }
            Poll::Ready(())
        }),
    )
}

/// The previous poll: its action, then it spawns the queueing task into
/// the LIFO slot (so that task runs next, on this worker), then it ends.
fn previous(
    round: &Arc<Round>,
    combination: Combination,
    gate: Arc<(AtomicUsize, Mutex<Option<Waker>>)>,
) -> impl Future<Output = ()> + Send {
    let inner = round.clone();
    let mut polled = false;
    let poll = std::future::poll_fn(move |cx| {
        let round = &inner;
        if polled {
            let after = round.blocker_done.load(SeqCst);
            round.previous_again_after_blocker.store(after, SeqCst);
            return Poll::Ready(());
        }
        polled = true;
        round
            .wakers
            .lock()
            .unwrap()
            .insert("previous", cx.waker().clone());
        let (action, ending) = match combination.before {
            Before::PreviousPoll(action, ending) => {
                round.seen("previous");
                (Some(action), ending)
            }
            Before::SamePoll(_) => (None, Ending::Ready),
        };
        if let Some(action) = action {
            act(action, cx, round);
        }
        drop(spawn(queueing(round, combination)));
        match ending {
            Ending::Ready => Poll::Ready(()),
            Ending::Pending => Poll::Pending,
            Ending::Panic => std::panic::panic_any(EXPECTED_PANIC),
            Ending::AbortItself => {
                round.abort("previous");
                Poll::Pending
            }
        }
    });
    // Opened once its handle is stored, for `AbortItself`; then polled
    // again as the first poll of a worker's run, from the inject queue.
    tracked(round, async move {
        WaitFor(gate).await;
        poll.await
    })
}

/// A task queued on a worker whose poll blocks its thread is run by
/// another worker, whatever that worker did before: every
/// combination of
///
/// - what happened on the worker before the task was queued: in the
///   previous poll there, each `Action` (nothing; `yield_now` polled with
///   the task's waker; `yield_now` under `modelsync::block_on`, with
///   another executor's waker; an abort of another task; a wake of itself;
///   a spawn in another runtime's context) with each `Ending` (`Ready`,
///   `Pending`, a panic, an abort of itself), or each `Action` earlier in
///   the queueing poll itself: the per-thread yield flag, the yielded
///   list, the LIFO slot, the ring and the thread's context each left as
///   such a poll leaves them;
/// - how the task reached the worker's ring (`Queued`): spawned and pushed
///   out of the LIFO slot; woken, or aborted, by the queueing task and
///   pushed out; woken by itself during its poll without yielding; woken
///   by a `JoinHandle`'s waker as the last poll of a LIFO run ends;
/// - whether the queueing poll itself blocks, or the next task polled.
///
/// The previous poll spawns the queueing task into its LIFO slot, which
/// spawns or is the blocker, so all of them run on one worker; each
/// records its thread, and a round counts for its combination only if
/// they did (a thief can take the blocker itself when it is in the ring).
/// Every combination must be reached. Not set by the test: the tick
/// counter, which only orders the queues a worker looks at (its periodic
/// requeue of yielded tasks makes them stealable, never the reverse); the
/// worker's searching state, cleared before every poll; the thief's
/// victim order, with one victim. They drift across rounds on one runtime.
///
/// R-14's exception, a task that yielded (its own `yield_now` in the poll
/// that requeues it), is not stolen; for it, and for a previous poll that
/// yielded, R-9's promise is checked instead: polled again only after the
/// blocking poll returned.
///
/// Checks.
#[test]
fn work_queued_on_a_busy_worker_is_stolen() {
    let rt = runtime(2);
    let other = runtime(1);
    let previous_hook = Arc::new(std::panic::take_hook());
    {
        let previous_hook = previous_hook.clone();
        std::panic::set_hook(Box::new(move |info| {
            if info.payload().downcast_ref::<&str>() != Some(&EXPECTED_PANIC) {
                previous_hook(info);
            }
        }));
    }
    let combinations = Combination::all();
    // Under Miri each combination once: the enumeration is the point.
    let reps = if cfg!(miri) { 1 } else { 3 };
    let mut reached = vec![0; combinations.len()];
    for (index, &combination) in combinations.iter().enumerate() {
        // A thief may take the blocker out of the ring before its worker
        // polls it (`JoinWakerAfterLifoRun`): such rounds are run again.
        for attempt in 0..reps * 20 {
            if reached[index] == reps {
                break;
            }
            if run_round(&rt, &other, combination, attempt) {
                reached[index] += 1;
            }
        }
    }
    drop(std::panic::take_hook());
    std::panic::set_hook(Box::new(move |info| previous_hook(info)));
    let missed: Vec<_> = combinations
        .iter()
        .zip(&reached)
        .filter(|(_, &n)| n == 0)
        .map(|(c, _)| c)
        .collect();
    assert!(missed.is_empty(), "never reached: {missed:?}");
}

/// One round of `combination`; true if its polls ran where it intends.
fn run_round(rt: &Runtime, other: &Runtime, combination: Combination, attempt: usize) -> bool {
    let round = Arc::new(Round::default());
    let (report, outcome) = std::sync::mpsc::channel(); // shim-exempt: the blocker's report
    *round.outcome.lock().unwrap() = Some(report);
    *round.other.lock().unwrap() = Some(other.handle().clone());
    let uses = |action| {
        combination.before == Before::SamePoll(action)
            || matches!(combination.before, Before::PreviousPoll(a, _) if a == action)
    };
    // The idle tasks the round wakes or aborts, each polled once first.
    let mut idle_tasks = Vec::new();
    if uses(Action::AbortAnother) {
        idle_tasks.push(("victim", rt.spawn(idle(&round, "victim", |_| {}))));
    }
    match combination.queued {
        Queued::WokenByAnother => {
            idle_tasks.push((
                "queued",
                rt.spawn(idle(&round, "queued", |round| round.queued_ran())),
            ));
        }
        Queued::Aborted => {
            struct Cancelled(Arc<Round>);
            impl Drop for Cancelled {
                fn drop(&mut self) {
                    self.0.queued_ran();
                }
            }
            let cancelled = Cancelled(round.clone());
            let never = idle(&round, "queued", |_| unreachable!("only aborted"));
            idle_tasks.push((
                "queued",
                rt.spawn(async move {
                    let _cancelled = cancelled;
                    never.await
                }),
            ));
        }
        Queued::JoinWakerAfterLifoRun => {
            let completes = rt.spawn(idle(&round, "completes", move |round| {
                round.seen("completes");
                drop(spawn(blocker(round, combination)));
            }));
            let awaiting = round.clone();
            let mut completes = Some(completes);
            let mut polled = false;
            let waiter = std::future::poll_fn(move |cx| {
                let handle = completes.as_mut().expect("polled after Ready");
                let poll = Pin::new(handle).poll(cx);
                if !polled {
                    polled = true;
                    let waker = cx.waker().clone();
                    awaiting.wakers.lock().unwrap().insert("awaits", waker);
                }
                match poll {
                    Poll::Ready(result) => {
                        result.unwrap();
                        awaiting.queued_ran();
                        Poll::Ready(())
                    }
                    Poll::Pending => Poll::Pending,
                }
            });
            idle_tasks.push(("awaits", rt.spawn(tracked(&round, waiter))));
        }
        _ => {}
    }
    let mut first_polls: Vec<&str> = idle_tasks.iter().map(|&(name, _)| name).collect();
    if combination.queued == Queued::JoinWakerAfterLifoRun {
        // Its handle is the one "awaits" awaits.
        first_polls.push("completes");
    }
    for name in first_polls {
        wait_until(|| round.wakers.lock().unwrap().contains_key(name));
    }
    let gate = Arc::new((AtomicUsize::new(0), Mutex::new(None)));
    let previous = rt.spawn(previous(&round, combination, gate.clone()));
    let mut handles = round.handles.lock().unwrap();
    handles.insert("previous", previous);
    handles.extend(idle_tasks);
    drop(handles);
    gate.0.store(1, SeqCst);
    if let Some(waker) = gate.1.lock().unwrap().take() {
        waker.wake();
    }

    let outcome = outcome
        .recv_timeout(2 * patience())
        .unwrap_or_else(|_| panic!("{combination:?}, attempt {attempt}: the blocker never ran"));
    if let Err(what) = outcome {
        panic!("{combination:?}, attempt {attempt}: {what}");
    }
    // Every task of the round ends: idle ones are woken, the yielder runs
    // once its worker is free.
    let wakers: Vec<Waker> = round
        .wakers
        .lock()
        .unwrap()
        .drain()
        .map(|(_, w)| w)
        .collect();
    wakers.into_iter().for_each(Waker::wake);
    wait_until(|| round.live.load(SeqCst) == 0);
    for (name, handle) in round.handles.lock().unwrap().drain() {
        let result = rt.block_on(handle);
        let expected = match (name, combination.before) {
            ("previous", Before::PreviousPoll(_, Ending::Panic)) => "panicked",
            ("previous", Before::PreviousPoll(_, Ending::AbortItself)) => "cancelled",
            ("victim", _) => "cancelled",
            ("queued", _) if combination.queued == Queued::Aborted => "cancelled",
            _ => "completed",
        };
        let got = match &result {
            Ok(()) => "completed",
            Err(e) if e.is_panic() => "panicked",
            Err(_) => "cancelled",
        };
        assert_eq!(got, expected, "{combination:?}: {name}");
    }

    let thread_of = |poll| round.thread(poll);
    let worker = thread_of("blocker");
    let mut on_the_worker = vec!["queueing"];
    if matches!(combination.before, Before::PreviousPoll(..)) {
        on_the_worker.push("previous");
    }
    if combination.queued == Queued::JoinWakerAfterLifoRun {
        on_the_worker.extend(["hop", "completes"]);
    }
    let reached = on_the_worker.iter().all(|&poll| thread_of(poll) == worker);
    if !reached {
        return false;
    }
    if combination.queued_task_yielded() {
        assert_eq!(
            round.ran_after_blocker.load(SeqCst),
            1,
            "{combination:?}: the queued task, which yielded, ran before the blocking poll returned"
        );
    } else {
        assert_ne!(
            thread_of("queued"),
            worker,
            "{combination:?}: the queued task ran on the blocked worker"
        );
    }
    if combination.before == Before::PreviousPoll(Action::PollYieldNow, Ending::Pending)
        && combination.blocker_in_the_previous_polls_run()
    {
        assert_eq!(
            round.previous_again_after_blocker.load(SeqCst),
            1,
            "{combination:?}: the task that yielded was polled again before the blocking poll \
             returned"
        );
    }
    true
}

/// Waits for `done`, for `patience()` at most.
fn wait_until(done: impl Fn() -> bool) {
    let deadline = std::time::Instant::now() + patience();
    while !done() {
        assert!(
            std::time::Instant::now() < deadline,
            "a round's task never ended"
        );
        std::thread::yield_now(); // shim-exempt: the test thread, outside the runtime
    }
}

/// A task woken on a worker of another runtime runs on its own runtime's
/// worker, not on the waking one's.
///
/// Checks: R-15.
#[test]
fn a_task_runs_only_on_its_own_runtime() {
    let (own, other) = (runtime(1), runtime(1));
    let rounds = scaled(50);
    let (senders, receivers): (Vec<_>, Vec<_>) = (0..rounds)
        .map(|_| modelsync::oneshot::channel::<usize>())
        .unzip();
    let waiter = own.spawn(async move {
        let mut threads = vec![std::thread::current().id()]; // shim-exempt: identifies the polling worker
        for (round, receiver) in receivers.into_iter().enumerate() {
            assert_eq!(receiver.await.unwrap(), round);
            threads.push(std::thread::current().id()); // shim-exempt: as above
        }
        threads
    });
    let waker = other.spawn(async move {
        let me = std::thread::current().id(); // shim-exempt: as above
        for (round, sender) in senders.into_iter().enumerate() {
            // The send wakes the waiter from this (the other runtime's) worker.
            sender.send(round).unwrap();
            yield_now().await;
        }
        me
    });
    let other_worker = other.block_on(waker).unwrap();
    let threads = own.block_on(waiter).unwrap();
    assert!(
        threads
            .iter()
            .all(|&t| t == threads[0] && t != other_worker),
        "polled on {threads:?}; the other runtime's worker is {other_worker:?}"
    );
}

/// A panic in a future's drop, after it completed or when it is aborted,
/// is reported as the task's panic; a panic in the drop of an output
/// nobody reads is contained. The worker keeps running tasks.
///
/// Checks: R-6.
#[test]
fn panics_in_drops_are_contained() {
    /// Ready at once; its drop panics.
    struct ReadyThenPanicOnDrop(bool);
    impl Future for ReadyThenPanicOnDrop {
        type Output = u8;
        fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<u8> {
            if self.0 {
                Poll::Ready(3)
            } else {
                Poll::Pending
            }
        }
    }
    impl Drop for ReadyThenPanicOnDrop {
        fn drop(&mut self) {
            panic!("drop boom");
        }
    }
    struct PanicOnDrop;
    impl Drop for PanicOnDrop {
        fn drop(&mut self) {
            panic!("output boom");
        }
    }

    let rt = runtime(1);
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let completed = rt
        .block_on(rt.spawn(ReadyThenPanicOnDrop(true)))
        .unwrap_err();
    let pending = rt.spawn(ReadyThenPanicOnDrop(false));
    pending.abort();
    let aborted = rt.block_on(pending).unwrap_err();
    let unread = rt.spawn(async { PanicOnDrop });
    drop(unread);
    let after = rt.block_on(rt.spawn(async { 7 }));
    std::panic::set_hook(previous);
    assert!(completed.is_panic(), "{completed:?}");
    assert_eq!(panic_message(completed.into_panic()), "drop boom");
    assert!(aborted.is_panic(), "{aborted:?}");
    assert_eq!(panic_message(aborted.into_panic()), "drop boom");
    assert_eq!(after.unwrap(), 7, "the worker survived");
}

/// Dropping a runtime in a runtime's context panics with tokio's message
/// (joining the workers there could block a worker, or be that worker),
/// and the runtime still shuts down, as tokio's does: its workers stop and
/// every unfinished future is dropped exactly once, without blocking the
/// thread that dropped it. Five runtimes dropped in their own tasks, one
/// in another runtime's task and one inside another runtime's `block_on`;
/// afterwards the process has exactly the threads it had before
/// (`/proc/self/task`), counted in a child process that runs this test
/// alone, where no other test's threads come and go.
///
/// Checks.
#[test]
#[cfg(target_os = "linux")]
#[cfg_attr(miri, ignore)] // starts a process
fn dropping_a_runtime_in_a_runtime_context_panics_and_shuts_it_down() {
    if !alone_in_a_process(
        "runtime::dropping_a_runtime_in_a_runtime_context_panics_and_shuts_it_down",
    ) {
        return;
    }
    let threads = threads_of_this_process;
    let before = threads();
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));

    /// A runtime with an unfinished task, whose future says when it goes.
    fn with_an_unfinished_task() -> (Runtime, Arc<AtomicUsize>, modelsync::oneshot::Receiver<()>) {
        let rt = runtime(2);
        let drops = Arc::new(AtomicUsize::new(0));
        let (gone, went) = modelsync::oneshot::channel::<()>();
        let counter = DropCounter(drops.clone());
        drop(rt.spawn(async move {
            let _held = (counter, gone);
            std::future::pending::<()>().await
        }));
        (rt, drops, went)
    }
    /// The drop panicked with tokio's message, and the unfinished future
    /// was dropped once, by the shutdown the drop started.
    fn shut_down(
        dropped: Result<(), String>,
        drops: &AtomicUsize,
        mut went: modelsync::oneshot::Receiver<()>,
    ) {
        use modelsync::oneshot::error::TryRecvError;
        let message = dropped.unwrap_err();
        assert!(
            message.contains("Cannot drop a runtime in a context where blocking is not allowed")
        );
        let deadline = std::time::Instant::now() + patience();
        while went.try_recv() == Err(TryRecvError::Empty) && std::time::Instant::now() < deadline {
            std::thread::yield_now(); // shim-exempt: a plain thread outside the runtime
        }
        assert_eq!(
            went.try_recv(),
            Err(TryRecvError::Closed),
            "the future was not dropped"
        );
        assert_eq!(drops.load(SeqCst), 1);
    }

    for _ in 0..5 {
        let (rt, drops, went) = with_an_unfinished_task();
        let slot = Arc::new(std::sync::Mutex::new(None::<Runtime>)); // shim-exempt: hands the runtime to its own task
        let dropper = {
            let slot = slot.clone();
            rt.spawn(async move { drop(slot.lock().unwrap().take()) })
        };
        *slot.lock().unwrap() = Some(rt);
        let dropped = modelsync::block_on(dropper).map_err(|e| panic_message(e.into_panic()));
        shut_down(dropped, &drops, went);
    }
    let other = runtime(2);
    let (rt, drops, went) = with_an_unfinished_task();
    let dropped = modelsync::block_on(other.spawn(async move { drop(rt) }))
        .map_err(|e| panic_message(e.into_panic()));
    shut_down(dropped, &drops, went);
    let (rt, drops, went) = with_an_unfinished_task();
    let dropped = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        other.block_on(async move { drop(rt) })
    }))
    .map_err(panic_message);
    shut_down(dropped, &drops, went);
    drop(other);
    std::panic::set_hook(previous);

    // The threads that joined the workers end just after the futures go.
    let deadline = std::time::Instant::now() + patience();
    while threads() != before && std::time::Instant::now() < deadline {
        std::thread::yield_now(); // shim-exempt: a plain thread outside the runtime
    }
    assert_eq!(threads(), before, "threads left running");
}

/// Misuse panics with tokio's messages: `spawn` outside a runtime,
/// `block_on` inside one, zero workers, a handle polled after completion.
///
/// Checks: R-13.
#[test]
fn misuse_panics_with_a_message() {
    let outside = std::panic::catch_unwind(|| spawn(async {})).unwrap_err();
    assert!(
        panic_message(outside).contains("must be called from the context of a modelsync runtime")
    );

    let rt = runtime(1);
    let rt2 = Arc::new(runtime(1));
    let inside = rt.block_on(rt.spawn({
        let rt2 = rt2.clone();
        async move {
            let r =
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| rt2.block_on(async {})));
            r.map_err(panic_message)
        }
    }));
    drop(rt2); // not in a task: that would panic too
    assert!(inside
        .unwrap()
        .unwrap_err()
        .contains("Cannot start a runtime from within a runtime"));

    let zero = std::panic::catch_unwind(|| {
        Builder::new_multi_thread().worker_threads(0);
    })
    .unwrap_err();
    assert_eq!(panic_message(zero), "Worker threads cannot be set to 0");

    let mut handle = rt.spawn(async { 1 });
    let waker = futures_noop_waker();
    let mut cx = Context::from_waker(&waker);
    while !handle.is_finished() {
        std::thread::yield_now(); // shim-exempt: a plain thread outside the runtime
    }
    assert!(matches!(
        Pin::new(&mut handle).poll(&mut cx),
        Poll::Ready(Ok(1))
    ));
    let again = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let _ = Pin::new(&mut handle).poll(&mut cx);
    }))
    .unwrap_err();
    assert_eq!(panic_message(again), "JoinHandle polled after completion");
}

fn futures_noop_waker() -> Waker {
    crate::harness::counting_waker().0
}

/// The LIFO slot is given up: two tasks that wake each other forever
/// (each wake puts the other in the LIFO slot) do not starve a third task
/// queued behind them on the same, only worker.
///
/// Checks: R-10.
#[test]
fn lifo_slot_does_not_starve_the_queue() {
    type Slots = Arc<[std::sync::Mutex<Option<Waker>>; 2]>; // shim-exempt: hands wakers between the test's tasks
    fn ping_pong(me: usize, slots: Slots, stop: Arc<AtomicUsize>) -> impl Future<Output = ()> {
        std::future::poll_fn(move |cx| {
            if stop.load(SeqCst) == 1 {
                return Poll::Ready(());
            }
            *slots[me].lock().unwrap() = Some(cx.waker().clone());
            if let Some(other) = slots[1 - me].lock().unwrap().take() {
                other.wake();
            }
            Poll::Pending
        })
    }
    let rt = runtime(1);
    let stop = Arc::new(AtomicUsize::new(0));
    let slots: Slots = Arc::new([std::sync::Mutex::new(None), std::sync::Mutex::new(None)]); // shim-exempt: as above
    let parent = {
        let stop = stop.clone();
        rt.spawn(async move {
            // On the worker: each spawn takes the LIFO slot and pushes the
            // previous one to the ring, which then holds [a, third].
            let a = spawn(ping_pong(0, slots.clone(), stop.clone()));
            let stop2 = stop.clone();
            let third = spawn(async move { stop2.store(1, SeqCst) });
            let b = spawn(ping_pong(1, slots.clone(), stop.clone()));
            (a, third, b, slots)
        })
    };
    let (a, third, b, slots) = rt.block_on(parent).unwrap();
    rt.block_on(third).unwrap();
    assert_eq!(stop.load(SeqCst), 1);
    // Let a and b see the flag.
    for slot in slots.iter() {
        if let Some(w) = slot.lock().unwrap().take() {
            w.wake();
        }
    }
    rt.block_on(async {
        a.await.unwrap();
        b.await.unwrap();
    });
}

/// `yield_now` puts the task at the back of its worker's queue: on the
/// only worker, a task that spawns tasks (the last in the LIFO slot, the
/// others in the ring) and yields is polled again only after every one of
/// them ran, each time it yields.
///
/// Checks: R-10.
#[test]
fn yield_now_goes_behind_the_queued_tasks_each_time() {
    let rt = runtime(1);
    let driver = rt.spawn(async {
        for round in 1..=4 {
            let ran = Arc::new(AtomicUsize::new(0));
            let queued: Vec<_> = (0..round)
                .map(|_| {
                    let ran = ran.clone();
                    spawn(async move { ran.fetch_add(1, SeqCst) })
                })
                .collect();
            yield_now().await;
            assert_eq!(
                ran.load(SeqCst),
                round,
                "round {round}: the yielding task ran first"
            );
            for task in queued {
                task.await.unwrap();
            }
        }
    });
    rt.block_on(driver).unwrap();
}

/// The inject queue is checked every 61 ticks: a task spawned from outside
/// runs while a local task keeps yielding on the only worker, however long
/// it has yielded before the spawn.
///
/// Checks: R-9.
#[test]
fn inject_queue_is_not_starved() {
    let rt = runtime(1);
    let stop = Arc::new(AtomicUsize::new(0));
    let yields = Arc::new(AtomicUsize::new(0));
    let spinner = {
        let (stop, yields) = (stop.clone(), yields.clone());
        rt.spawn(async move {
            while stop.load(SeqCst) == 0 {
                yields.fetch_add(1, SeqCst);
                yield_now().await;
            }
        })
    };
    // Well past the first 61 ticks, when any check of the inject queue is
    // one of the periodic ones.
    while yields.load(SeqCst) < 1_000 {
        std::thread::yield_now(); // shim-exempt: a plain thread outside the runtime
    }
    let remote = {
        let stop = stop.clone();
        rt.spawn(async move { stop.store(1, SeqCst) })
    };
    rt.block_on(async {
        remote.await.unwrap();
        spinner.await.unwrap();
    });
}

/// A task that yields in a loop, counting the polls it starts, on a
/// runtime of one worker: what `yield_now`'s fairness is measured against.
struct Yielder {
    polls: Arc<AtomicUsize>,
    stop: Arc<AtomicUsize>,
    task: JoinHandle<()>,
}

impl Yielder {
    fn start(rt: &Runtime) -> Yielder {
        let polls = Arc::new(AtomicUsize::new(0));
        let stop = Arc::new(AtomicUsize::new(0));
        let task = {
            let (polls, stop) = (polls.clone(), stop.clone());
            rt.spawn(async move {
                while stop.load(SeqCst) == 0 {
                    polls.fetch_add(1, SeqCst);
                    // A chunk of work per poll, so that wakes from outside
                    // land both during polls and between them.
                    for _ in 0..200 {
                        std::hint::black_box(polls.load(SeqCst));
                    }
                    yield_now().await;
                }
            })
        };
        Yielder { polls, stop, task }
    }

    /// Waits until the yielder has started `polls` polls.
    fn wait_for(&self, polls: usize) {
        let deadline = std::time::Instant::now() + patience();
        while self.polls.load(SeqCst) < polls {
            assert!(std::time::Instant::now() < deadline, "the yielder stalled");
            std::thread::yield_now(); // shim-exempt: a plain thread outside the runtime
        }
    }

    fn finish(self, rt: &Runtime) {
        self.stop.store(1, SeqCst);
        rt.block_on(self.task).unwrap();
    }
}

/// `yield_now` lets work from outside go first: on the only worker,
/// while a task yields in a loop, a task spawned from outside the runtime
/// is polled before the yielding task starts its second poll after the
/// spawn returned. It is in the inject queue when the spawn returns, and
/// the yielding task is set aside until the worker has looked there: the
/// poll under way when the spawn returned may end, and one more may begin
/// if the worker had already looked before the push, no more. Tried at
/// many points of the yielding task's loop, the periodic 61st-tick check
/// included. Before yields were set aside, the yielding task went back to
/// the worker's own queue, which the worker takes from before the inject
/// queue, and ran up to 60 more polls first.
///
/// Checks: R-9.
#[test]
fn a_task_spawned_from_outside_runs_before_a_yielder_polls_twice() {
    let rt = runtime(1);
    let yielder = Yielder::start(&rt);
    for round in 0..scaled(200) {
        yielder.wait_for(round * 7);
        let polls = yielder.polls.clone();
        let spawned = rt.spawn(async move { polls.load(SeqCst) });
        let polls_when_spawned = yielder.polls.load(SeqCst);
        let polls_when_run = rt.block_on(spawned).unwrap();
        assert!(
            polls_when_run <= polls_when_spawned + 1,
            "round {round}: the yielder started {} polls between the spawn and the spawned \
             task's first poll",
            polls_when_run.saturating_sub(polls_when_spawned)
        );
    }
    yielder.finish(&rt);
}

/// As above for a task woken from outside the runtime (its waker called on
/// a plain thread, which queues it in the inject queue): it is polled
/// before the yielding task starts its second poll after the wake.
///
/// Checks: R-9.
#[test]
fn a_task_woken_from_outside_runs_before_a_yielder_polls_twice() {
    let rt = runtime(1);
    let yielder = Yielder::start(&rt);
    for round in 0..scaled(200) {
        yielder.wait_for(round * 7);
        let waker = Arc::new(std::sync::Mutex::new(None::<Waker>)); // shim-exempt: hands the waiting task's waker to this thread
        let polls_when_run = Arc::new(AtomicUsize::new(usize::MAX));
        let waiting = {
            let (waker, polls, seen) =
                (waker.clone(), yielder.polls.clone(), polls_when_run.clone());
            let mut registered = false;
            rt.spawn(std::future::poll_fn(move |cx| {
                if registered {
                    seen.store(polls.load(SeqCst), SeqCst);
                    return Poll::Ready(());
                }
                registered = true;
                *waker.lock().unwrap() = Some(cx.waker().clone());
                Poll::Pending
            }))
        };
        let deadline = std::time::Instant::now() + patience();
        let registered = loop {
            if let Some(w) = waker.lock().unwrap().take() {
                break w;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "the waiting task never ran"
            );
            std::thread::yield_now(); // shim-exempt: a plain thread outside the runtime
        };
        registered.wake();
        let polls_when_woken = yielder.polls.load(SeqCst);
        rt.block_on(waiting).unwrap();
        let polls_when_run = polls_when_run.load(SeqCst);
        assert!(
            polls_when_run <= polls_when_woken + 1,
            "round {round}: the yielder started {} polls between the wake and the woken task's \
             poll",
            polls_when_run.saturating_sub(polls_when_woken)
        );
    }
    yielder.finish(&rt);
}

/// A yield is not a starvation: a task that yields on a worker that never
/// runs out of work (two tasks that wake each other through the LIFO slot
/// and the ring, forever) is still polled again, within the worker's
/// periodic check.
///
/// Checks: R-9.
#[test]
fn a_yielding_task_runs_again_on_a_worker_that_never_runs_dry() {
    type Slots = Arc<[std::sync::Mutex<Option<Waker>>; 2]>; // shim-exempt: hands wakers between the test's tasks
    fn ping_pong(me: usize, slots: Slots, stop: Arc<AtomicUsize>) -> impl Future<Output = ()> {
        std::future::poll_fn(move |cx| {
            if stop.load(SeqCst) == 1 {
                return Poll::Ready(());
            }
            *slots[me].lock().unwrap() = Some(cx.waker().clone());
            if let Some(other) = slots[1 - me].lock().unwrap().take() {
                other.wake();
            }
            Poll::Pending
        })
    }
    let rt = runtime(1);
    let stop = Arc::new(AtomicUsize::new(0));
    let slots: Slots = Arc::new([std::sync::Mutex::new(None), std::sync::Mutex::new(None)]); // shim-exempt: as above
    let yields = Arc::new(AtomicUsize::new(0));
    let driver = {
        let (stop, slots, yields) = (stop.clone(), slots.clone(), yields.clone());
        rt.spawn(async move {
            let a = spawn(ping_pong(0, slots.clone(), stop.clone()));
            let b = spawn(ping_pong(1, slots.clone(), stop.clone()));
            for _ in 0..5 {
                yield_now().await;
                yields.fetch_add(1, SeqCst);
            }
            stop.store(1, SeqCst);
            for slot in slots.iter() {
                if let Some(w) = slot.lock().unwrap().take() {
                    w.wake();
                }
            }
            a.await.unwrap();
            b.await.unwrap();
        })
    };
    rt.block_on(driver).unwrap();
    assert_eq!(yields.load(SeqCst), 5);
}

/// `build()` refuses more workers than the runtime can count with an
/// error, before any thread starts.
///
/// Checks: R-16.
#[test]
fn build_refuses_more_workers_than_it_counts() {
    let error = Builder::new_multi_thread()
        .worker_threads(32_767)
        .build()
        .unwrap_err();
    assert_eq!(error.kind(), std::io::ErrorKind::InvalidInput);
    assert!(
        error
            .to_string()
            .contains("between 1 and 32766 worker threads, not 32767"),
        "{error}"
    );
}

/// When the operating system refuses a worker thread, `build()` returns
/// its error instead of panicking, and stops and joins the workers it had
/// started: the process is left with exactly the threads it had before.
/// The refusal is real: in a process of its own, the test limits its own
/// address space (`RLIMIT_AS`) to a little over two workers' stacks, and
/// asks for eight workers with stacks of that size.
///
/// Checks: R-16.
#[test]
#[cfg(target_os = "linux")]
#[cfg_attr(miri, ignore)] // starts a process and sets a resource limit
fn build_fails_cleanly_when_a_worker_thread_cannot_start() {
    if !alone_in_a_process("runtime::build_fails_cleanly_when_a_worker_thread_cannot_start") {
        return;
    }
    const STACK: usize = 64 << 20;
    let before = threads_of_this_process();
    let mapped: usize = std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .find_map(|line| line.strip_prefix("VmSize:"))
        .and_then(|kib| {
            kib.trim()
                .trim_end_matches("kB")
                .trim()
                .parse::<usize>()
                .ok()
        })
        .expect("VmSize in /proc/self/status")
        * 1024;
    let limit = (mapped + STACK * 5 / 2) as libc::rlim_t;
    let rlimit = libc::rlimit {
        rlim_cur: limit,
        rlim_max: libc::RLIM_INFINITY,
    };
    // SAFETY: setrlimit reads the struct it is given; lowering the soft
    // limit of this (child) process is always allowed.
    assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_AS, &rlimit) }, 0);
    let attempts = Arc::new(AtomicUsize::new(0));
    let result = {
        let attempts = attempts.clone();
        Builder::new_multi_thread()
            .worker_threads(8)
            .thread_stack_size(STACK)
            .thread_name_fn(move || {
                attempts.fetch_add(1, SeqCst);
                "limited-worker".to_owned()
            })
            .build()
    };
    let unlimited = libc::rlimit {
        rlim_cur: libc::RLIM_INFINITY,
        rlim_max: libc::RLIM_INFINITY,
    };
    // SAFETY: as above; the hard limit was left infinite.
    assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_AS, &unlimited) }, 0);
    let error = result.expect_err("eight workers with 64 MiB stacks fit in the limit");
    assert_ne!(error.kind(), std::io::ErrorKind::InvalidInput, "{error}");
    let attempts = attempts.load(SeqCst);
    assert!(
        (2..8).contains(&attempts),
        "{attempts} starts attempted: the limit should let one or two start, then refuse one"
    );
    // Joined threads leave the task list as they exit, which join waits for.
    let deadline = std::time::Instant::now() + patience();
    while threads_of_this_process() != before && std::time::Instant::now() < deadline {
        std::thread::yield_now(); // shim-exempt: a plain thread outside the runtime
    }
    assert_eq!(threads_of_this_process(), before, "workers left running");
}

/// Worker threads are named, by default `modelsync-runtime-worker` (tokio's
/// are `tokio-runtime-worker`), or as `thread_name` or `thread_name_fn`
/// says; `thread_stack_size` is applied.
///
/// Checks: R-13.
#[test]
fn worker_threads_are_named() {
    fn name_of_a_worker(rt: &Runtime) -> Option<String> {
        let name = rt.spawn(async {
            std::thread::current().name().map(str::to_owned) // shim-exempt: the OS thread's name
        });
        rt.block_on(name).unwrap()
    }
    assert_eq!(
        name_of_a_worker(&runtime(1)).as_deref(),
        Some("modelsync-runtime-worker")
    );
    let named = Builder::new_multi_thread()
        .worker_threads(1)
        .thread_name("server-worker")
        .build()
        .unwrap();
    assert_eq!(name_of_a_worker(&named).as_deref(), Some("server-worker"));
    let counter = Arc::new(AtomicUsize::new(0));
    let numbered = {
        let counter = counter.clone();
        Builder::new_multi_thread()
            .worker_threads(3)
            .thread_name_fn(move || format!("worker-{}", counter.fetch_add(1, SeqCst)))
            .thread_stack_size(16 << 20)
            .build()
            .unwrap()
    };
    assert_eq!(counter.load(SeqCst), 3, "one name per worker");
    let name = name_of_a_worker(&numbered).unwrap();
    assert!(
        ["worker-0", "worker-1", "worker-2"].contains(&name.as_str()),
        "{name}"
    );
    // A recursion deeper than std's default 2 MiB stack holds.
    let depth = numbered
        .block_on(numbered.spawn(async {
            fn recurse(n: usize) -> usize {
                let pad = std::hint::black_box([0u8; 1024]);
                if n == 0 {
                    pad[0] as usize
                } else {
                    recurse(n - 1) + 1 + pad[1] as usize
                }
            }
            recurse(3_000)
        }))
        .unwrap();
    assert_eq!(depth, 3_000);
}

/// A `Handle` spawns onto its runtime from any thread, is the current one
/// inside a task and inside `block_on`, and under an `enter` guard (which
/// does not forbid blocking there, as tokio's does not); outside every
/// context `try_current` says the context is missing; a task spawned
/// through a handle whose runtime is gone is cancelled at once.
///
/// Checks.
#[test]
fn handle_spawns_from_anywhere_and_enter_sets_the_context() {
    let rt = runtime(2);
    let handle = rt.handle().clone();
    let error = modelsync::runtime::Handle::try_current().unwrap_err();
    assert!(error.is_missing_context() && !error.is_thread_local_destroyed());
    let outside = move || {
        let task = handle.spawn(async { 6 * 7 });
        handle.block_on(task).unwrap()
    };
    let from_a_thread = std::thread::spawn(outside).join().unwrap(); // shim-exempt: a plain thread outside the runtime
    assert_eq!(from_a_thread, 42);
    let current_in_a_task = rt
        .block_on(rt.spawn(async {
            let inner = modelsync::runtime::Handle::current().spawn(async { 1 });
            inner.await.unwrap()
        }))
        .unwrap();
    assert_eq!(current_in_a_task, 1);
    {
        let _guard = rt.enter();
        let task = spawn(async { 2 });
        assert!(modelsync::runtime::Handle::try_current().is_ok());
        // Blocking is still allowed under a guard alone.
        let (sent, received) = modelsync::oneshot::channel();
        sent.send(3).unwrap();
        assert_eq!(received.blocking_recv().unwrap(), 3);
        assert_eq!(rt.block_on(task).unwrap(), 2);
    }
    assert!(
        modelsync::runtime::Handle::try_current().is_err(),
        "the guard left the context"
    );
    let outlives = rt.handle().clone();
    drop(rt);
    let late = outlives.spawn(async { 4 });
    let error = modelsync::block_on(late).unwrap_err();
    assert!(error.is_cancelled(), "{error:?}");
}

/// `shutdown_timeout` returns once every worker stopped, with the
/// unfinished futures dropped; while a worker is blocked in a poll, it
/// returns after its timeout without waiting for that worker, and the
/// futures are dropped once the worker comes back. `shutdown_background`
/// waits for nothing, and is allowed inside a task, where a non-zero
/// timeout panics with tokio's message.
///
/// Checks.
#[test]
#[cfg_attr(miri, ignore)] // waits on wall-clock timeouts
fn shutdown_with_a_timeout_and_in_the_background() {
    fn with_unfinished(rt: &Runtime, drops: &Arc<AtomicUsize>, tasks: usize) {
        for _ in 0..tasks {
            let counter = DropCounter(drops.clone());
            drop(rt.spawn(async move {
                let _held = counter;
                std::future::pending::<()>().await
            }));
        }
    }
    fn eventually(what: &str, done: impl Fn() -> bool) {
        let deadline = std::time::Instant::now() + patience();
        while !done() {
            assert!(std::time::Instant::now() < deadline, "{what}");
            std::thread::yield_now(); // shim-exempt: a plain thread outside the runtime
        }
    }

    // Idle workers: everything is dropped before the call returns.
    let rt = runtime(2);
    let drops = Arc::new(AtomicUsize::new(0));
    with_unfinished(&rt, &drops, 3);
    rt.shutdown_timeout(std::time::Duration::from_secs(3_600));
    assert_eq!(drops.load(SeqCst), 3);

    // A worker blocked in a poll: the call returns after its timeout.
    let rt = runtime(2);
    let drops = Arc::new(AtomicUsize::new(0));
    with_unfinished(&rt, &drops, 3);
    let release = Arc::new(AtomicUsize::new(0));
    let blocking_started = Arc::new(AtomicUsize::new(0));
    {
        let (release, started) = (release.clone(), blocking_started.clone());
        let counter = DropCounter(drops.clone());
        drop(rt.spawn(async move {
            let _held = counter;
            started.store(1, SeqCst);
            while release.load(SeqCst) == 0 {
                std::thread::yield_now(); // shim-exempt: blocks its worker on purpose
            }
            std::future::pending::<()>().await
        }));
    }
    eventually("the blocking task never ran", || {
        blocking_started.load(SeqCst) == 1
    });
    rt.shutdown_timeout(std::time::Duration::from_millis(10));
    assert_eq!(release.load(SeqCst), 0);
    assert!(
        drops.load(SeqCst) < 4,
        "a future was dropped while its worker was blocked"
    );
    release.store(1, SeqCst);
    eventually(
        "the futures were not dropped after the worker came back",
        || drops.load(SeqCst) == 4,
    );

    // In the background, also from inside a task; a timeout there panics.
    let rt = runtime(2);
    let drops = Arc::new(AtomicUsize::new(0));
    with_unfinished(&rt, &drops, 3);
    rt.shutdown_background();
    eventually("shutdown_background dropped nothing", || {
        drops.load(SeqCst) == 3
    });
    let other = runtime(1);
    for timeout in [std::time::Duration::ZERO, std::time::Duration::from_secs(1)] {
        let rt = runtime(1);
        let drops = Arc::new(AtomicUsize::new(0));
        with_unfinished(&rt, &drops, 2);
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(|_| {}));
        let result = other.block_on(other.spawn(async move { rt.shutdown_timeout(timeout) }));
        std::panic::set_hook(previous);
        if timeout.is_zero() {
            result.unwrap();
        } else {
            let message = panic_message(result.unwrap_err().into_panic());
            assert!(
                message
                    .contains("Cannot drop a runtime in a context where blocking is not allowed"),
                "{message}"
            );
        }
        eventually("the shutdown from a task dropped nothing", || {
            drops.load(SeqCst) == 2
        });
    }
}

/// A future whose poll panics is dropped while the panic unwinds, as
/// tokio's is (its `Drop` sees `std::thread::panicking()`), and the
/// handle reports the panic.
///
/// Checks: R-6.
#[test]
fn a_future_whose_poll_panics_is_dropped_during_the_unwind() {
    struct SeesTheUnwind(Arc<AtomicUsize>);
    impl Drop for SeesTheUnwind {
        fn drop(&mut self) {
            self.0
                .store(if std::thread::panicking() { 1 } else { 2 }, SeqCst);
        }
    }
    let rt = runtime(1);
    let seen = Arc::new(AtomicUsize::new(0));
    let guard = SeesTheUnwind(seen.clone());
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let joined = rt.block_on(rt.spawn(async move {
        let _guard = guard;
        panic!("in the poll");
    }));
    std::panic::set_hook(previous);
    assert!(joined.unwrap_err().is_panic());
    assert_eq!(
        seen.load(SeqCst),
        1,
        "the future was not dropped during the unwind"
    );
}

/// `enter` guards left out of order panic with tokio's message, and a
/// runtime dropped in a thread-local's destructor (after this thread's
/// context is gone) shuts down without touching that context, as tokio's
/// `runtime_in_thread_local` requires.
///
/// Checks.
#[test]
fn enter_guards_in_order_and_a_runtime_dropped_in_a_thread_local() {
    let (first, second) = (runtime(1), runtime(1));
    let out_of_order = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let one = first.enter();
        let two = second.enter();
        drop(one);
        drop(two);
    }));
    let message = panic_message(out_of_order.unwrap_err());
    assert!(
        message.contains("`EnterGuard` values dropped out of order"),
        "{message}"
    );
    {
        let _one = first.enter();
        let _two = second.enter();
    }
    drop((first, second));

    thread_local! {
        static HELD: std::cell::RefCell<Option<Runtime>> = const { std::cell::RefCell::new(None) };
    }
    let dropped = Arc::new(AtomicUsize::new(0));
    let counter = DropCounter(dropped.clone());
    let holds_a_runtime_in_a_thread_local = move || {
        let rt = runtime(1);
        drop(rt.spawn(async move {
            let _held = counter;
            std::future::pending::<()>().await
        }));
        HELD.with(|held| *held.borrow_mut() = Some(rt));
    };
    let thread = std::thread::spawn(holds_a_runtime_in_a_thread_local); // shim-exempt: a plain thread whose thread-locals are destroyed
    thread.join().unwrap();
    assert_eq!(
        dropped.load(SeqCst),
        1,
        "the unfinished future was not dropped"
    );
}

/// The runtime's types have tokio's auto traits: `Runtime`, `Handle` and
/// `JoinHandle` are unwind-safe, so `catch_unwind(|| rt.block_on(..))`
/// compiles as it does with tokio, and the runtime goes on after it;
/// `JoinError` converts into an `io::Error` as tokio's does.
///
/// Checks: R-13.
#[test]
fn auto_traits_match_tokio() {
    use std::panic::{RefUnwindSafe, UnwindSafe};
    fn send_sync<T: Send + Sync>() {}
    fn unpin<T: Unpin>() {}
    fn unwind_safe<T: UnwindSafe + RefUnwindSafe>() {}
    send_sync::<Runtime>();
    send_sync::<modelsync::runtime::Handle>();
    send_sync::<JoinHandle<u32>>();
    send_sync::<JoinError>();
    unpin::<JoinHandle<u32>>();
    unwind_safe::<Runtime>();
    unwind_safe::<modelsync::runtime::Handle>();
    unwind_safe::<JoinHandle<std::cell::Cell<u32>>>();
    fn error<T: std::error::Error + Send + Sync + 'static>() {}
    error::<JoinError>();
    error::<modelsync::runtime::TryCurrentError>();

    let rt = runtime(1);
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let caught = std::panic::catch_unwind(|| rt.block_on(async { panic!("in block_on") }));
    let handle = rt.spawn(async { 5 });
    let caught_handle = std::panic::catch_unwind(|| handle.is_finished());
    std::panic::set_hook(previous);
    assert_eq!(panic_message(caught.unwrap_err()), "in block_on");
    assert!(caught_handle.is_ok());
    assert_eq!(rt.block_on(handle).unwrap(), 5, "the runtime goes on");

    let cancelled = rt.spawn(std::future::pending::<()>());
    cancelled.abort();
    let io: std::io::Error = rt.block_on(cancelled).unwrap_err().into();
    assert_eq!(io.kind(), std::io::ErrorKind::Other);
    assert_eq!(io.to_string(), "task was cancelled");
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let panicked = rt.block_on(rt.spawn(async { panic!("boom") }));
    std::panic::set_hook(previous);
    let io: std::io::Error = panicked.unwrap_err().into();
    assert_eq!(io.to_string(), "task panicked");
}

// ---------------------------------------------------------------------
// The handles against the runtime's specification (`specs/runtime.rs`).

/// What a generated task's future does.
#[derive(Clone, Copy, Debug)]
enum Body {
    /// Yields this many times, then returns its item.
    Returns { yields: u8 },
    /// Yields this many times, then panics (its item dropped by the
    /// unwinding).
    Panics { yields: u8 },
}

/// A handle operation; tasks are named by the order of their spawns (an
/// index past the last spawn wraps round).
#[derive(Clone, Copy, Debug)]
enum HandleOp {
    Spawn(Body),
    Abort(usize),
    IsFinished(usize),
    Join(usize),
}

fn handle_op() -> impl Strategy<Value = HandleOp> {
    let yields = 0u8..4;
    prop_oneof![
        3 => yields.clone().prop_map(|yields| HandleOp::Spawn(Body::Returns { yields })),
        1 => yields.prop_map(|yields| HandleOp::Spawn(Body::Panics { yields })),
        2 => (0usize..4).prop_map(HandleOp::Abort),
        3 => (0usize..4).prop_map(HandleOp::IsFinished),
        2 => (0usize..4).prop_map(HandleOp::Join),
    ]
}

proptest! {
    #![proptest_config(crate::support::proptest_config(256))]

    /// Random spawns (of tasks that return or panic after a few yields),
    /// aborts, `is_finished` calls and joins on a runtime of two workers,
    /// which run the tasks meanwhile. The calls and their returns, with
    /// each task's ending as its future recorded it (`FinishRecorded`, on
    /// the workers' column), are a history checked against the
    /// specification (`specs/runtime.rs`): `is_finished` never goes back
    /// and answers true only once the final poll's window began; an abort
    /// that began after the task finished keeps its output, one that
    /// returned before the final poll's window cancels it; only an aborted
    /// task is cancelled; a returning task never panicked. Every task is
    /// joined in the end and every item is dropped exactly once.
    ///
    /// Checks.
    #[test]
    fn handles_match_the_specification(ops in proptest::collection::vec(handle_op(), 1..24)) {
        use crate::harness::linearizability::check;
        use crate::harness::recorder::Recorder;
        use crate::harness::{Flag, Ledger, Tracked};
        use crate::specs::runtime::{self as spec, FinishRecorded};

        let rt = runtime(2);
        let spawns = ops.iter().filter(|op| matches!(op, HandleOp::Spawn(_))).count();
        let ledger = Ledger::new(spawns);
        let mut handles: Vec<Option<JoinHandle<Tracked>>> = Vec::new();
        // One thread calls (column 0); the workers record each task's
        // `Finish` (column 1).
        let recorder = Recorder::new(spec::Runtime::default());
        let main = recorder.thread(0);
        let stopped = Flag::default();
        // A join, recorded; an output is delivered (at most once, the
        // ledger checks).
        let join = |t: usize, handle: JoinHandle<Tracked>| {
            let result = main.op(
                spec::Op::Join(t),
                || rt.block_on(handle),
                |result| spec::Ret::Joined(spec::Outcome::of(result, Tracked::id)),
            );
            if let Ok(item) = result {
                ledger.deliver(item);
            }
        };
        let ops = ops.into_iter().chain((0..4).map(HandleOp::Join));
        for op in ops {
            let task = |i: usize| (!handles.is_empty()).then(|| i % handles.len());
            match op {
                HandleOp::Spawn(body) => {
                    let id = handles.len();
                    let item = ledger.item(id);
                    let (yields, panics, spec_body) = match body {
                        Body::Returns { yields } => (yields, false, spec::Body::Returns(id)),
                        Body::Panics { yields } => (yields, true, spec::Body::Panics),
                    };
                    let future = async move {
                        for _ in 0..yields {
                            yield_now().await;
                        }
                        if panics {
                            std::panic::panic_any(id);
                        }
                        item
                    };
                    let handle = main.op(
                        spec::Op::Spawn(id, spec_body),
                        || rt.spawn(FinishRecorded::new(future, &main, 1, id, Tracked::id, &stopped)),
                        |_| spec::Ret::Unit,
                    );
                    handles.push(Some(handle));
                }
                HandleOp::Abort(i) => {
                    let Some(t) = task(i) else { continue };
                    let Some(handle) = &handles[t] else { continue };
                    main.op(spec::Op::Abort(t), || handle.abort(), |_| spec::Ret::Unit);
                }
                HandleOp::IsFinished(i) => {
                    let Some(t) = task(i) else { continue };
                    let Some(handle) = &handles[t] else { continue };
                    main.op(spec::Op::IsFinished(t), || handle.is_finished(), |&f| spec::Ret::Bool(f));
                }
                HandleOp::Join(i) => {
                    let Some(t) = task(i) else { continue };
                    let Some(handle) = handles[t].take() else { continue };
                    join(t, handle);
                }
            }
        }
        // Every task joined: the loop above ends by joining tasks 0 to 3
        // (those not joined yet), and any later ones here.
        for (t, handle) in handles.iter_mut().enumerate() {
            if let Some(handle) = handle.take() {
                join(t, handle);
            }
        }
        drop(rt);
        if let Err(failure) = check(&recorder.history()) {
            prop_assert!(false, "{}", failure);
        }
        ledger.assert_all_dropped_once();
    }
}
