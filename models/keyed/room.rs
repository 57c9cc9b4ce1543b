// The keyed channel's room (`src/keyed/room.rs`)
// on its own: its subject, scope, regimes and models, checked against
// `specs/room.rs`. Included by `models/keyed.rs` (`include!`, not a
// module), so that its tests keep their names (`keyed::room_...`),
// which the mutation records, the kill matrix and VERIFICATION.md use.

use crate::specs::room as mspec;
use modelsync::internals::keyed::{NoRoom, RoomCounts};

/// Capacity of the room in the generated scenarios: one, so that most
/// takes race a `Full`.
const ROOM_CAPACITY: usize = 1;

/// The room as generated scenarios see it: thread 1 is the receiver
/// (frees a message when one is taken, counts, closes at most once), the
/// other threads take room, some as would-be sleepers; the main thread
/// takes, frees and counts before and after them. A sleeper's `Full`
/// sleeps as the channel's sender does: until a receive's `free` answers
/// "wake" (a wake token, handed out through the scenario's waiters), then
/// it uncounts itself; if no wake can come (every other thread is done
/// or waiting) it gives up and stays counted. So a lost wake-up shows in
/// the history: a `Full` that counted a sleeper and a `free` that
/// answered "no" with nothing to order them otherwise.
struct RoomSubject;

#[derive(Clone, Debug, PartialEq)]
enum RoomOp {
    TryTake {
        as_sleeper: bool,
    },
    /// Frees one message, if the receiver's count says one is taken.
    Free,
    TakenNotReceived,
    Close,
}

struct RoomEnds {
    room: std::sync::Arc<RoomCounts>,
    wakes: std::sync::Arc<scenario::Tokens>,
}

fn record_take(
    room: &RoomCounts,
    as_sleeper: bool,
    rec: &ThreadRecorder<mspec::Room>,
) -> Result<(), NoRoom> {
    use mspec::{Op, Ret};
    rec.op(
        Op::TryTake { as_sleeper },
        || room.try_take(as_sleeper),
        |taken| match taken {
            Ok(()) => Ret::Taken,
            Err(NoRoom::Full) => Ret::Full,
            Err(NoRoom::Closed) => Ret::Closed,
        },
    )
}

fn record_uncount(room: &RoomCounts, rec: &ThreadRecorder<mspec::Room>) {
    rec.op(
        mspec::Op::UncountSleeper,
        || room.uncount_sleeper(),
        |_| mspec::Ret::Unit,
    );
}

impl Subject for RoomSubject {
    type Spec = mspec::Room;
    type Op = RoomOp;
    type Actor = RoomEnds;
    const NAME: &'static str = "keyed_room";
    const RUST_TYPE: &'static str = "RoomSubject";

    fn items(_: &Scenario<RoomOp>) -> usize {
        0
    }

    fn setup(_: &Scenario<RoomOp>) -> (mspec::Room, Self::Actor) {
        let ends = RoomEnds {
            room: std::sync::Arc::new(RoomCounts::new(ROOM_CAPACITY)),
            wakes: Default::default(),
        };
        (mspec::Room::new(ROOM_CAPACITY), ends)
    }

    fn split(main: &mut Self::Actor, _: &Scenario<RoomOp>, _: usize) -> Self::Actor {
        RoomEnds {
            room: main.room.clone(),
            wakes: main.wakes.clone(),
        }
    }

    fn merge(_: &mut Self::Actor, _: Self::Actor) {}

    fn run(
        ends: &mut Self::Actor,
        op: &RoomOp,
        rec: &ThreadRecorder<mspec::Room>,
        waiter: &Waiter,
        _: &Ledger,
    ) {
        use mspec::{Op, Ret};
        let room = &*ends.room;
        match *op {
            RoomOp::TryTake { as_sleeper } => {
                let taken = record_take(room, as_sleeper, rec);
                if as_sleeper && taken == Err(NoRoom::Full) && ends.wakes.take(waiter) {
                    record_uncount(room, rec);
                }
            }
            RoomOp::Free => {
                // Unrecorded: a read of the receiver's own count, which no
                // other party lowers; the receiver frees only a message
                // taken (the component's contract).
                if room.taken_not_received() > 0
                    && rec.op(Op::Free, || room.free(), |&wake| Ret::Wake(wake))
                {
                    ends.wakes.give();
                }
            }
            RoomOp::TakenNotReceived => {
                rec.op(
                    Op::TakenNotReceived,
                    || room.taken_not_received(),
                    |&n| Ret::Count(n),
                );
            }
            RoomOp::Close => {
                rec.op(Op::Close, || room.close(), |&n| Ret::Count(n));
            }
        }
    }

    fn rust(op: &RoomOp) -> String {
        format!("RoomOp::{op:?}")
    }

    fn scenarios() -> BoxedStrategy<Scenario<RoomOp>> {
        use proptest::prelude::*;
        let take = prop::bool::ANY.prop_map(|as_sleeper| RoomOp::TryTake { as_sleeper });
        let receiver = prop_oneof![
            3 => Just(RoomOp::Free),
            1 => Just(RoomOp::TakenNotReceived),
            1 => Just(RoomOp::Close),
        ]
        .boxed();
        let main = prop_oneof![
            2 => take.clone(),
            2 => Just(RoomOp::Free),
            1 => Just(RoomOp::TakenNotReceived),
        ]
        .boxed();
        let sender = take.boxed();
        (2usize..=3)
            .prop_flat_map(move |threads| {
                let mut parts = vec![receiver.clone()];
                parts.extend((1..threads).map(|_| sender.clone()));
                scenario::shape(main.clone(), parts, main.clone(), [2, 3, 2])
            })
            .prop_map(|mut scenario| {
                // The receiver closes once and frees nothing after.
                let mut closed = false;
                for op in scenario.threads[0]
                    .iter_mut()
                    .chain(scenario.post.iter_mut())
                {
                    if closed && matches!(op, RoomOp::Close | RoomOp::Free) {
                        *op = RoomOp::TakenNotReceived;
                    }
                    closed |= *op == RoomOp::Close;
                }
                scenario
            })
            .boxed()
    }
}

/// The room's scope at `threads` threads of `lengths` operations each
/// (room-2x1, the main job's; room-3x1 and room-2x2, the nightly's one
/// size up): the receiver's thread calls operations of its alphabet (free
/// a message taken, count, close), a sender's thread operations of its
/// (take room, as a would-be sleeper or not): every operation of the
/// room; from each regime of its two words at capacity 1; then the main
/// thread counts. The receiver is one thread's role alone (it alone
/// frees, counts and closes), so the third thread of room-3x1 is a second
/// sender, with the first's alphabet: the two senders are
/// interchangeable.
///
/// The regimes are the words' situations (`src/keyed/room.rs`): fresh
/// (the counts two short of wrapping); full; full with a sleeper counted
/// (a `Full` that counted its sender, which nobody woke); the senders'
/// view of the received count stale (room freed since they last looked:
/// a sender must read `freed` itself before it answers `Full`); and the
/// counts wrapped (three messages taken and received). Closed is no
/// regime: the receiver closes once, so a closed prefix leaves its thread
/// nothing but counts; the close races every take in the concurrent part
/// instead. At capacity 1 the senders' view lags by one receive at most
/// (a take that finds its view full reads `freed` and takes from the
/// fresh count), and a full room's view is never stale, so the larger
/// sizes need no other regime: their races start from these. One
/// operation per thread is what the races need once a regime is set up:
/// a free racing a sleeper's count (exactly one sees the other, K-3), a
/// free racing a take that finds a stale view (K-7), a close racing a
/// take; one size up, two senders racing each other and a free for the
/// last place (the race `room_sender_decides_on_a_stale_view` and the
/// blind bug `keyed-room-full-without-a-second-look` need: a sender's
/// view changed by another sender between its two looks at `claims`), or
/// a thread's two calls racing the other's.
fn room_scope(threads: usize, lengths: (usize, usize)) -> scope::Scope<RoomSubject> {
    use RoomOp::*;
    let regime = scope::Regime::<RoomSubject>::new;
    let take = TryTake { as_sleeper: false };
    let sleeper = TryTake { as_sleeper: true };
    let mut alphabets = vec![vec![Free, TakenNotReceived, Close]];
    alphabets.extend((1..threads).map(|_| vec![take.clone(), sleeper.clone()]));
    let main_job = threads == 2 && lengths.1 == 1;
    // No commuting-threads cut one size up (`Subject::footprint`): every
    // operation reads or writes the room's two words, which all share.
    scope::Scope {
        name: match (threads, lengths.1) {
            (2, 1) => "room-2x1",
            (3, 1) => "room-3x1",
            (2, 2) => "room-2x2",
            other => unreachable!("no room scope {other:?}"),
        },
        threads: alphabets,
        lengths,
        post: vec![TakenNotReceived],
        // The senders share one room and one pool of wake tokens: their
        // index means nothing (the receiver's alphabet is its own).
        ordered_threads: main_job,
        // The receiver closes once.
        contract: if main_job {
            scope::any_operations
        } else {
            room_closes_once
        },
        shard_of: None,
        real_time_orders: main_job,
        regimes: vec![
            regime("fresh", vec![], |e| {
                e.room.internals() == (0, 0, false, false, false)
            }),
            regime("full", vec![take.clone()], |e| {
                e.room.internals() == (1, 0, false, false, false)
            }),
            regime(
                "full_with_a_sleeper_counted",
                vec![take.clone(), sleeper],
                |e| e.room.internals() == (1, 1, false, false, false),
            ),
            regime("senders_view_stale", vec![take.clone(), Free], |e| {
                e.room.internals() == (0, 0, true, false, false)
            }),
            regime(
                "counts_wrapped",
                vec![take.clone(), Free, take.clone(), Free, take, Free],
                |e| {
                    let (queued, sleepers, _, wrapped, closed) = e.room.internals();
                    (queued, sleepers, wrapped, closed) == (0, 0, true, false)
                },
            ),
        ],
    }
}

/// The room's contract for a receiver of more than one operation: it
/// closes at most once, and frees nothing after (`RoomSubject`'s
/// generated scenarios keep the same rule).
fn room_closes_once(
    _prefix: &[RoomOp],
    threads: &[Vec<RoomOp>],
    _order: Option<(usize, usize)>,
) -> bool {
    let receiver = &threads[0];
    match receiver.iter().position(|op| *op == RoomOp::Close) {
        Some(at) => receiver[at + 1..]
            .iter()
            .all(|op| *op == RoomOp::TakenNotReceived),
        None => true,
    }
}

/// Every scenario of the room's scope (`room_scope`: the receiver with
/// one operation, a sender with one take, from five regimes of the two
/// words), complete under loom in both passes; every history checked
/// against `specs/room.rs`.
///
/// Scope: room-2x1 (the receiver with one operation of 3, a sender with one of 2, from 5 regimes)
///
/// Checks: K-3, K-7, K-11.
#[test]
fn room_scope_complete() {
    scope::every_scenario(model!(), room_scope(2, (1, 1)));
}

/// The room's scope one thread up (`room_scope`, room-3x1), from
/// regimes `fresh` and `full`: the receiver and two senders (the
/// receiver's role is one thread's alone, so the third thread is a second
/// sender), one operation each. Two senders and the receiver at once are
/// what a sender's view changed by the other sender between its two
/// looks at `claims`, while a free lands, needs: the shape of the race
/// the blind bug `keyed-room-full-without-a-second-look` escaped the
/// two-thread scope by. Each scenario run with no preemption bound within the budget, or at
/// the highest preemption bound that finishes for it; under shuttle,
/// every scenario under PCT. The nightly runs room-3x1 as three models,
/// each from some of its regimes: the whole of it is too long for one
/// model's nightly budget (each shard's run: verification/keyed.md).
///
/// Scope: room-3x1 from fresh and full (the receiver with one operation of 3, two interchangeable senders with one of 2 each)
///
/// Checks: K-3, K-7, K-11.
#[test]
fn room_scope_three_threads_from_fresh_and_full() {
    scope::every_scenario_complete_or_bounded(
        model!().nightly(),
        room_scope(3, (1, 1)).only_regimes(&["fresh", "full"]),
    );
}

/// The nightly's room-3x1 shard from regimes `full_with_a_sleeper_counted`
/// and `senders_view_stale`, as `room_scope_three_threads_from_fresh_and_full`.
///
/// Scope: room-3x1 from full_with_a_sleeper_counted and senders_view_stale (the receiver with one operation of 3, two interchangeable senders with one of 2 each)
///
/// Checks: K-3, K-7, K-11.
#[test]
fn room_scope_three_threads_from_a_sleeper_or_a_stale_view() {
    scope::every_scenario_complete_or_bounded(
        model!().nightly(),
        room_scope(3, (1, 1)).only_regimes(&["full_with_a_sleeper_counted", "senders_view_stale"]),
    );
}

/// The nightly's room-3x1 shard from regime `counts_wrapped`, as
/// `room_scope_three_threads_from_fresh_and_full`.
///
/// Scope: room-3x1 from counts_wrapped (the receiver with one operation of 3, two interchangeable senders with one of 2 each)
///
/// Checks: K-3, K-7, K-11.
#[test]
fn room_scope_three_threads_from_counts_wrapped() {
    scope::every_scenario_complete_or_bounded(
        model!().nightly(),
        room_scope(3, (1, 1)).only_regimes(&["counts_wrapped"]),
    );
}

/// The room's scope one call up (`room_scope`, room-2x2): the receiver
/// with one or two operations (closing at most once, and freeing nothing
/// after), a sender with one or two takes, from the five regimes. Two
/// calls on a thread are what a sender's second take from a view its
/// first refreshed, or a free followed by a count or a close, racing the
/// other thread need. Each scenario run with no preemption bound within the budget, or at
/// the highest preemption bound that finishes for it; under shuttle,
/// every scenario under PCT.
///
/// Scope: room-2x2 (the receiver with one or two operations of 3, closing at most once, a sender with one or two of 2, from 5 regimes)
///
/// Checks: K-3, K-7, K-11.
#[test]
fn room_scope_two_ops_complete_or_bounded() {
    scope::every_scenario_complete_or_bounded(model!().nightly(), room_scope(2, (1, 2)));
}

/// Generated scenarios of the room at capacity 1: a receiver freeing,
/// counting and closing while 1 or 2 threads take room, as would-be
/// sleepers or not; loom complete for each within its budget, else at
/// the highest bound that finishes (`room_complete_scenarios` is the
/// complete run); every history checked
/// against `specs/room.rs` (`Full` only when the channel was full at a
/// moment of the call, a receive wakes whenever a sleeper is counted,
/// `Closed` after the close).
///
/// Checks: K-3, K-7, K-11.
#[test]
fn room_generated_scenarios() {
    scenario::generated::<RoomSubject>(model!().nightly());
}

/// The room's complete run: generated scenarios of the receiver and one
/// sender, every execution of each explored (both passes, no preemption
/// bound; the run fails otherwise); every history checked against
/// `specs/room.rs`.
///
/// Checks: K-3, K-7, K-11.
#[test]
fn room_complete_scenarios() {
    scenario::generated_complete::<RoomSubject>(
        model!().nightly(),
        Small {
            scenarios: 16,
            threads: 2,
            sizes: [2, 2, 2],
        },
    );
}

/// The room's race for the last place, complete, at capacity 1 and full:
/// the receiver frees the message while one sender takes room as a
/// would-be sleeper and another takes it plainly. Reaches: a sleeper
/// counted before the receive (which then wakes), a `Full` whose sleeper
/// finds the receive's room (no sleep), and a receive that wakes for a
/// sender that then found room (a needless wake-up, allowed). Exactly one
/// sender gets the freed place. History-checked.
///
/// Checks: K-3, K-7, K-11.
#[test]
fn room_receive_races_a_sleeper_for_the_last_place() {
    let woke_sleeper = Reach::new("receive_woke_a_counted_sleeper");
    let both_full = Reach::new("both_senders_full_before_the_receive");
    let needless = Reach::new("receive_woke_but_a_sender_took_the_room");
    let reaches = [woke_sleeper.clone(), both_full.clone(), needless.clone()];
    model!()
        .reach(&woke_sleeper)
        .reach(&both_full)
        .reach(&needless)
        .check(move || {
            let [r_woke, r_both_full, r_needless] = &reaches;
            let history = Recorder::new(mspec::Room::new(1));
            let main = history.thread(0);
            let room = std::sync::Arc::new(RoomCounts::new(1));
            assert_eq!(record_take(&room, false, &main), Ok(()));
            let senders: Vec<_> = [true, false]
                .into_iter()
                .enumerate()
                .map(|(t, as_sleeper)| {
                    main.fork(t + 1);
                    let (room, rec) = (room.clone(), history.thread(t + 1));
                    thread::spawn(move || {
                        let taken = record_take(&room, as_sleeper, &rec);
                        if as_sleeper && taken.is_err() {
                            // Woken or not, it uncounts itself here: this
                            // model checks the counts, not the sleep.
                            record_uncount(&room, &rec);
                        }
                        taken
                    })
                })
                .collect();
            let wake = main.op(mspec::Op::Free, || room.free(), |&w| mspec::Ret::Wake(w));
            let taken: Vec<Result<(), NoRoom>> = senders
                .into_iter()
                .enumerate()
                .map(|(t, s)| {
                    let taken = s.join().unwrap();
                    main.join(t + 1);
                    taken
                })
                .collect();
            let winners = taken.iter().filter(|t| t.is_ok()).count();
            assert!(winners <= 1, "two senders took the one place");
            let left = main.op(
                mspec::Op::TakenNotReceived,
                || room.taken_not_received(),
                |&n| mspec::Ret::Count(n),
            );
            assert_eq!(left, winners, "the count disagrees with the takes");
            r_woke.hit_if(wake && taken[0].is_err());
            r_both_full.hit_if(winners == 0);
            r_needless.hit_if(wake && winners == 1);
            history.check();
        });
}

/// A sender deciding on a stale view of the room: the room's part of
/// `keyed::async_senders_share_the_room`, on its own and complete. At
/// capacity 1 one thread takes room twice while the receiver frees two
/// messages and another thread takes room once as a would-be sleeper.
/// That sender's first look at `claims` may be older than the first
/// thread's second take; when that view says "full" it reads the
/// receiver's count, and what it reads there must come with the claims
/// those receives saw (the receive's Release, the look's Acquire), or it
/// finds the room two receives freed "full", counts itself asleep after
/// the last receive looked for sleepers, and is never woken: its `Full`
/// then cannot be placed in the history (a `Full` counts a sleeper that a
/// later receive must wake, and after both receives the room was free).
/// Bound 3, the lowest that kills both orderings' mutants (`free`'s
/// Release, `try_take`'s Acquire); bound 4 and the complete run are too
/// long for a pull request (and taking the first room in the initial
/// part instead makes the run larger). The whole
/// channel's `keyed::async_senders_share_the_room` kills both at bound 0.
/// Back in the main job because, at its own bound, it kills a sender
/// deciding "full" without a second look at the senders' count
/// (`keyed-room-full-without-a-second-look`, round 4 of the blind bugs in
/// HISTORY.md), whose race needs two senders and the receiver at once,
/// beyond scope room-2x1; no other main-job room model kills it (the
/// whole channel's `keyed::*_senders_share_the_room` do).
///
/// Checks: K-3, K-7, K-11.
#[test]
fn room_sender_decides_on_a_stale_view() {
    let scenario = Scenario {
        init: vec![],
        threads: vec![
            vec![RoomOp::Free, RoomOp::Free],
            vec![
                RoomOp::TryTake { as_sleeper: false },
                RoomOp::TryTake { as_sleeper: false },
            ],
            vec![RoomOp::TryTake { as_sleeper: true }],
        ],
        post: vec![RoomOp::TakenNotReceived],
        handoffs: vec![],
    };
    scenario::scenario_model::<RoomSubject>(model!().preemption_bound(3), scenario);
}
