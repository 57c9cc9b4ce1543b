// The runtime's idle counters, the sleep/wake handshake
// (`src/runtime/idle.rs`), on its own: its subject, scope, regimes and models, checked against
// `specs/idle.rs`. Included by `models/runtime.rs` (`include!`, not a
// module), so that its tests keep their names (`runtime::idle_...`),
// which the mutation records, the kill matrix and VERIFICATION.md use.

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
            // Carrying: a wake is the worker's `Unparker::unpark`, which
            // happens-before the park it ends (P-4), so a woken worker
            // sees the count the push left it (it stops searching from
            // there). Without it, a worker that saw the push only in real
            // time (`Scope::real_time_orders`) could read the counts from
            // before it.
            wakes: std::sync::Arc::new(
                (0..workers).map(|_| scenario::Tokens::carrying()).collect(),
            ),
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
/// decrement comes second, which must wake another worker.
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
/// Checks.
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
/// Checks.
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
/// up: a push racing a park, a stop racing a park with a hand-off
/// owed (`runtime-refused-searcher-sleeps-without-a-check`), two looks racing (R-8's cap on contention), two pushes
/// racing over two sleepers (R-8's "the next push does not wake
/// another"); two operations per thread are the nightly's scope.
fn idle_scope(threads: usize, lengths: (usize, usize)) -> scope::Scope<IdleSubject> {
    use ispec::Stage;
    use IdleOp::*;
    let alphabet = vec![Search, StopSearching, Park, Push];
    fn stages(w: &Worker) -> Vec<Stage> {
        w.prefix_stages.clone()
    }
    /// Every worker the scenario has: one per thread, and any beyond them
    /// the prefix acts for.
    fn workers(w: &Worker) -> usize {
        w.prefix_stages.len()
    }
    let regime = scope::Regime::<IdleSubject>::new;
    scope::Scope {
        name: match (threads, lengths.1) {
            (2, 1) => "idle-2x1",
            (2, 2) => "idle-2x2",
            (3, 1) => "idle-3x1",
            other => unreachable!("no idle scope {other:?}"),
        },
        threads: vec![alphabet; threads],
        lengths,
        post: vec![Push],
        ordered_threads: true,
        contract: scope::any_operations,
        shard_of: None,
        // The main job's scope only (see `notify_scope`).
        real_time_orders: threads == 2 && lengths.1 == 1,
        regimes: vec![
            regime("all_running", vec![], |w| {
                w.idle.num_unparked() == workers(w)
                    && w.idle.num_searching() == 0
                    && !w.idle.handoff_owed()
            }),
            regime("one_searching", vec![SearchAs(0)], |w| {
                w.idle.num_searching() == 1 && w.idle.num_unparked() == workers(w)
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
                w.idle.num_unparked() == workers(w) - 2 && stages(w)[..2] == [Stage::Sleeping; 2]
            }),
            regime("sleeper_woken_by_a_push", vec![ParkAs(0), Push], |w| {
                w.idle.sleepers().is_empty()
                    && stages(w)[0] == Stage::Searching
                    && w.idle.num_searching() == 1
            }),
            regime("two_others_asleep", vec![ParkAs(2), ParkAs(3)], |w| {
                w.idle.sleepers() == [2, 3]
                    && w.idle.num_unparked() == workers(w) - 2
                    && w.idle.num_searching() == 0
            }),
        ],
    }
}

/// Every scenario of the idle counters' scope (`idle_scope`: two workers,
/// one operation each, from eight regimes of the idle word), complete under
/// loom in both passes; every history checked against `specs/idle.rs`.
///
/// Scope: idle-2x1 (two workers, one operation each of 4, from 8 regimes)
///
/// Checks.
#[test]
fn idle_scope_complete() {
    scope::every_scenario(model!(), idle_scope(2, (1, 1)));
}

/// The idle counters' scope one call up (idle-2x2): as
/// `idle_scope_complete`, one or two operations per worker, each scenario
/// run with no preemption bound within the budget or at the highest preemption bound that
/// finishes for it. Two calls on a worker are what a search that ends and
/// a park after it, racing a push, need.
///
/// Scope: idle-2x2 (two workers, one or two operations each of 4, from 8 regimes)
///
/// Checks.
#[test]
fn idle_scope_two_ops_complete_or_bounded() {
    scope::every_scenario_complete_or_bounded(model!().nightly(), idle_scope(2, (1, 2)));
}

/// The idle counters' scope one worker up (idle-3x1): three workers, one
/// operation each, from the same eight regimes (the third worker awake
/// and running in each, or a sleeper of `two_others_asleep`), each
/// scenario run with no preemption bound within the budget or at the highest preemption bound
/// that finishes for it. Three at once are what two pushes racing the
/// last searcher's park, or a push racing two workers going to sleep,
/// need: the half-of-the-workers cap on searchers counts three.
///
/// Scope: idle-3x1 (three workers, one operation each of 4, from 8 regimes)
///
/// Checks.
#[test]
fn idle_scope_three_workers_complete_or_bounded() {
    scope::every_scenario_complete_or_bounded(model!().nightly(), idle_scope(3, (1, 1)));
}
