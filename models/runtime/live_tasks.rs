// The runtime's live-task list (`src/runtime/live.rs`)
// on its own: its subject, scope, regimes and models, checked against
// `specs/live_tasks.rs`. Included by `models/runtime.rs` (`include!`, not a
// module), so that its tests keep their names (`runtime::live_tasks_...`),
// which the mutation records, the kill matrix and VERIFICATION.md use.

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
/// Nightly: the main job's complete run is `runtime::live_tasks_scope_complete`, every
/// scenario of a stated scope; these drawn scenarios complement it (their
/// initial and final parts drawn, where the scope fixes them).
///
/// Checks: R-11.
#[test]
fn live_tasks_complete_scenarios() {
    scenario::generated_complete::<LiveTasksSubject>(
        model!().nightly(),
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
/// three-thread scenarios (`live_tasks_complete_scenarios`): every
/// scenario with three threads costs far more than with two (HISTORY.md).
fn live_tasks_scope(threads: usize, lengths: (usize, usize)) -> scope::Scope<LiveTasksSubject> {
    use LiveOp::*;
    let regime = scope::Regime::<LiveTasksSubject>::new;
    let alphabet = vec![Spawn, Complete, Close];
    scope::Scope {
        name: match (threads, lengths.1) {
            (2, 1) => "live-tasks-2x1",
            (3, 1) => "live-tasks-3x1",
            (2, 2) => "live-tasks-2x2",
            other => unreachable!("no live-task scope {other:?}"),
        },
        threads: vec![alphabet; threads],
        lengths,
        // Completes what the threads can have listed, then closes.
        post: [vec![Complete; 2 + threads * lengths.1 - 2], vec![Close]].concat(),
        ordered_threads: true,
        contract: scope::any_operations,
        shard_of: None,
        // The main job's scope only (see `notify_scope`).
        real_time_orders: threads == 2 && lengths.1 == 1,
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
/// Scope: live-tasks-2x1 (two threads, one operation each of 3, from 5 regimes)
///
/// Checks: R-11.
#[test]
fn live_tasks_scope_complete() {
    scope::every_scenario(model!(), live_tasks_scope(2, (1, 1)));
}

/// The live-task list's scope one thread up (live-tasks-3x1): as
/// `live_tasks_scope_complete`, three threads, each scenario complete
/// within the budget or at the highest preemption bound that finishes
/// for it. Three at once are what two spawns racing a close over two
/// shards need.
///
/// Scope: live-tasks-3x1 (three threads, one operation each of 3, from 5 regimes)
///
/// Checks: R-11.
#[test]
fn live_tasks_scope_three_threads_complete_or_bounded() {
    scope::every_scenario_complete_or_bounded(model!().nightly(), live_tasks_scope(3, (1, 1)));
}

/// The live-task list's scope one call up (live-tasks-2x2): two threads,
/// one or two operations each, as above. Two calls on a thread are what a
/// spawn and the completion of what it listed, racing a close, need.
///
/// Scope: live-tasks-2x2 (two threads, one or two operations each of 3, from 5 regimes)
///
/// Checks: R-11.
#[test]
fn live_tasks_scope_two_ops_complete_or_bounded() {
    scope::every_scenario_complete_or_bounded(model!().nightly(), live_tasks_scope(2, (1, 2)));
}
