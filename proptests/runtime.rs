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
use crate::support::panic_message;

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

/// A task queued on a worker that is busy (its poll blocks the thread) is
/// stolen and run by another worker: the blocking task waits for it.
///
/// Checks: R-14.
#[test]
fn work_queued_on_a_busy_worker_is_stolen() {
    let rt = runtime(2);
    for round in 0..scaled(20) {
        let ran = Arc::new(AtomicUsize::new(0));
        let blocker = {
            let ran = ran.clone();
            rt.spawn(async move {
                // Two spawns from this worker: the first goes to its LIFO
                // slot, the second pushes it into the ring, where only a
                // thief can take it while this poll blocks.
                for _ in 0..2 {
                    let ran = ran.clone();
                    drop(spawn(async move {
                        ran.fetch_add(1, SeqCst);
                    }));
                }
                let deadline = std::time::Instant::now() + patience();
                while ran.load(SeqCst) == 0 {
                    assert!(
                        std::time::Instant::now() < deadline,
                        "round {round}: a task queued on a busy worker was never stolen"
                    );
                    std::thread::yield_now(); // shim-exempt: blocks this worker on purpose
                }
            })
        };
        rt.block_on(blocker).unwrap();
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
    const NAME: &str = "runtime::dropping_a_runtime_in_a_runtime_context_panics_and_shuts_it_down";
    const CHILD: &str = "MODELSYNC_TEST_ALONE";
    if std::env::var_os(CHILD).is_none() {
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--exact", NAME, "--test-threads=1"])
            .env(CHILD, "1")
            .output()
            .expect("run this test in a process of its own");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && stdout.contains("1 passed"),
            "the test alone failed:\n{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        return;
    }
    let threads = || std::fs::read_dir("/proc/self/task").unwrap().count();
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

/// The runtime's types have tokio's auto traits.
///
/// Checks: R-13.
#[test]
fn auto_traits_match_tokio() {
    fn send_sync<T: Send + Sync>() {}
    fn unpin<T: Unpin>() {}
    send_sync::<Runtime>();
    send_sync::<JoinHandle<u32>>();
    send_sync::<JoinError>();
    unpin::<JoinHandle<u32>>();
    fn error<T: std::error::Error + Send + Sync + 'static>() {}
    error::<JoinError>();
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
