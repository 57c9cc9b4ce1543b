//! Models of the parker (`src/park.rs`).
//!
//! Written once for loom, shuttle and std stress (see `check/src/lib.rs`).
//! loom and shuttle do not model time, so no model relies on a timeout.

use crate::harness::recorder::{Recorder, ThreadRecorder};
use crate::harness::scenario::{self, Scenario, Small, Subject, Waiter};
use crate::harness::scope;
use crate::harness::{model, Flag, Handoff, Ledger, Reach};
use crate::specs::park as spec;
use modelsync::park::Parker;
use modelsync::sync::atomic::{AtomicBool, Ordering::Relaxed};
use modelsync::sync::{thread, Arc};
use proptest::strategy::BoxedStrategy;

/// A history of one parker's operations, checked against
/// `specs/park.rs` at the end of the execution; its main thread's end.
fn history() -> (Recorder<spec::Parker>, ThreadRecorder<spec::Parker>) {
    let history = Recorder::new(spec::Parker::default());
    let main = history.thread(0);
    (history, main)
}

fn unit<T>(_: &T) -> spec::Ret {
    spec::Ret::Unit
}

/// `unpark` races `park`: the parker always returns (loom reports a
/// deadlock if a wake-up is lost) and sees what the unparker wrote before
/// unparking. Both orders are reached: the permit stored before `park`
/// began, and `unpark` arriving after the parker announced it was parking.
/// (`parking` is a Relaxed loom atomic, not a `Flag`: it is set right
/// after `spawn`, before the unparker can first run, so a flag would
/// always read as set; the atomic's store is a point where the unparker
/// runs first. It creates no happens-before, so it cannot hide a missing
/// one.)
///
/// Checks: P-1, P-4.
#[test]
fn unpark_races_park() {
    let before = Reach::new("unpark_before_park_began");
    let during = Reach::new("unpark_while_in_park");
    let (r_before, r_during) = (before.clone(), during.clone());
    model!().reach(&before).reach(&during).check(move || {
        let (history, main) = history();
        let parker = Parker::new();
        let unparker = parker.unparker().clone();
        let data = Handoff::new();
        let parking = Arc::new(AtomicBool::new(false));
        let waker = {
            let (data, parking) = (data.clone(), parking.clone());
            main.spawn(1, move |rec| {
                data.write(42);
                // Relaxed: an observation for reachability only.
                let in_park = parking.load(Relaxed);
                rec.op(spec::Op::Unpark, || unparker.unpark(), unit);
                in_park
            })
        };
        // Relaxed: an observation for reachability only.
        parking.store(true, Relaxed);
        main.op(spec::Op::Park, || parker.park(), unit);
        assert_eq!(
            data.read(),
            42,
            "park returned before the unparker's write was visible"
        );
        let in_park = waker.join().unwrap();
        r_during.hit_if(in_park);
        r_before.hit_if(!in_park);
        history.check();
    });
}

/// Many unparks store one permit: after two unparks that both happened
/// before `park` began, one park consumes the permit and none is left.
///
/// Checks: P-2.
#[test]
fn unparks_store_one_permit() {
    let both_first = Reach::new("both_unparks_before_park");
    let r = both_first.clone();
    model!().reach(&both_first).check(move || {
        let (history, main) = history();
        let parker = Parker::new();
        let unparker = parker.unparker().clone();
        let done = Flag::default();
        let t = {
            let done = done.clone();
            main.spawn(1, move |rec| {
                rec.op(spec::Op::Unpark, || unparker.unpark(), unit);
                rec.op(spec::Op::Unpark, || unparker.unpark(), unit);
                done.set();
            })
        };
        // Let the unparker run first (loom 0.7 does not start a new thread
        // before the spawner's next scheduling point).
        thread::yield_now();
        let both_before = done.get();
        main.op(spec::Op::Park, || parker.park(), unit);
        t.join().unwrap();
        let permit = main.op(
            spec::Op::HasPermit,
            || parker.has_permit(),
            |&b| spec::Ret::Bool(b),
        );
        if r.hit_if(both_before) {
            assert!(!permit, "two unparks stored more than one permit");
        }
        history.check();
    });
}

/// Two threads ping-pong through two parkers for two rounds: each park
/// returns only after its peer's unpark (a spurious return would read the
/// peer's message before it was written, which loom reports) and sees the
/// message written before that unpark.
///
/// Checks: P-1, P-3, P-4.
#[test]
fn ping_pong_rounds() {
    let overlapped = Reach::new("pong_parked_before_ping");
    let r = overlapped.clone();
    model!().reach(&overlapped).check(move || {
        let (ping_parker, pong_parker) = (Parker::new(), Parker::new());
        let (ping_unparker, pong_unparker) = (
            ping_parker.unparker().clone(),
            pong_parker.unparker().clone(),
        );
        let (request, reply) = (Handoff::new(), Handoff::new());
        // A Relaxed loom atomic, not a `Flag`: ping reads it after only
        // `spawn` and a write to a cell, neither a point where loom lets
        // pong run, so a flag would always read as unset. It only labels
        // the execution (see above).
        let pong_waiting = Arc::new(AtomicBool::new(false));
        let pong = {
            let (request, reply, pong_waiting) =
                (request.clone(), reply.clone(), pong_waiting.clone());
            thread::spawn(move || {
                for round in 1..=2 {
                    if round == 1 {
                        pong_waiting.store(true, Relaxed);
                    }
                    pong_parker.park();
                    assert_eq!(request.read(), round, "pong woke before ping's request");
                    reply.write(round * 10);
                    ping_unparker.unpark();
                }
            })
        };
        let mut pong_first = false;
        for round in 1..=2 {
            request.write(round);
            if round == 1 {
                pong_first = pong_waiting.load(Relaxed);
            }
            pong_unparker.unpark();
            ping_parker.park();
            assert_eq!(reply.read(), round * 10, "ping woke before pong's reply");
        }
        pong.join().unwrap();
        r.hit_if(pong_first);
    });
}

// ---------------------------------------------------------------------
// Generated scenarios, checked against the specification.

/// The parker as generated scenarios see it (`check/src/scenario.rs`):
/// thread 1 owns the `Parker` (it parks, at most once per scenario, and
/// may unpark itself); the other threads hold `Unparker`s and unpark at
/// least once each, so that the park always ends (`park` cannot be given
/// up: it blocks its thread). The main thread unparks and asks for the
/// permit in the initial and final parts. Every unpark publishes a write
/// of its thread's, and a park that leaves no permit reads the write of
/// every unpark it has seen finish ([`Publication`]): P-4 with any number
/// of unparkers, where one permit carries several unparks' writes.
struct ParkSubject;

struct Handles {
    parker: Option<Parker>,
    unparker: modelsync::park::Unparker,
    /// This thread's number (0: the main thread) and how many unparks it
    /// has made: its next unpark publishes through
    /// `published[first[thread] + unparks]`.
    thread: usize,
    unparks: usize,
    first: Arc<Vec<usize>>,
    published: Arc<Vec<Publication>>,
}

/// What one unpark publishes (P-4 by scope): its thread writes `value`
/// before it unparks and raises `unparked` after. A park that leaves no
/// permit must see the value of every unpark it has seen raised: the
/// unpark's swap was then before the park's consume in the state's
/// modification order, so the permit the park consumed carried it.
struct Publication {
    value: Arc<Handoff>,
    unparked: AtomicBool,
}

impl Handles {
    /// P-4, checked after a park returns (see [`Publication`]), in the
    /// real-time pass only: there every access reads the latest value, so
    /// a raised flag and no permit left mean the unpark came before the
    /// consume. (In the weak-memory pass both reads may be stale, and a
    /// read of the value could race an unpark that came after.) The read
    /// is loom's causality-checked cell: an unpark that published nothing
    /// makes loom fail the model.
    fn check_park_saw_every_unpark(&self, parker: &Parker) {
        #[cfg(loom)]
        if modelsync::sync::every_access_rmw() {
            // The flags first: an unpark seen raised here swapped its
            // permit in before the permit query below, which then finds it
            // unless a park consumed it.
            let raised: Vec<&Publication> = self
                .published
                .iter()
                // Relaxed: a label; in this pass it reads the latest value.
                .filter(|publication| publication.unparked.load(Relaxed))
                .collect();
            if !parker.has_permit() {
                for publication in raised {
                    publication.value.read();
                }
            }
        }
        #[cfg(not(loom))]
        let _ = parker;
    }
}

impl Subject for ParkSubject {
    type Spec = spec::Parker;
    type Op = spec::Op;
    type Actor = Handles;
    const NAME: &'static str = "park";
    const RUST_TYPE: &'static str = "ParkSubject";

    fn items(_: &Scenario<spec::Op>) -> usize {
        0
    }

    fn setup(scenario: &Scenario<spec::Op>) -> (spec::Parker, Handles) {
        let parker = Parker::new();
        let unparker = parker.unparker().clone();
        // Each thread's unparks, the main thread's (its initial and final
        // parts) first.
        let unparks = |ops: &[spec::Op]| ops.iter().filter(|op| **op == spec::Op::Unpark).count();
        let mut counts = vec![unparks(&scenario.init) + unparks(&scenario.post)];
        counts.extend(scenario.threads.iter().map(|ops| unparks(ops)));
        let first: Vec<usize> = counts
            .iter()
            .scan(0, |next, n| {
                let at = *next;
                *next += n;
                Some(at)
            })
            .collect();
        let published = (0..counts.iter().sum())
            .map(|_| Publication {
                value: Handoff::new(),
                unparked: AtomicBool::new(false),
            })
            .collect();
        let handles = Handles {
            parker: Some(parker),
            unparker,
            thread: 0,
            unparks: 0,
            first: Arc::new(first),
            published: Arc::new(published),
        };
        (spec::Parker::default(), handles)
    }

    fn split(main: &mut Handles, _: &Scenario<spec::Op>, thread: usize) -> Handles {
        Handles {
            parker: if thread == 1 {
                main.parker.take()
            } else {
                None
            },
            unparker: main.unparker.clone(),
            thread,
            unparks: 0,
            first: main.first.clone(),
            published: main.published.clone(),
        }
    }

    fn merge(main: &mut Handles, joined: Handles) {
        if joined.parker.is_some() {
            main.parker = joined.parker;
        }
    }

    fn run(
        handles: &mut Handles,
        op: &spec::Op,
        rec: &ThreadRecorder<spec::Parker>,
        _: &Waiter,
        _: &Ledger,
    ) {
        use spec::{Op, Ret};
        match op {
            Op::Unpark => {
                let publication =
                    &handles.published[handles.first[handles.thread] + handles.unparks];
                handles.unparks += 1;
                publication.value.write(1);
                rec.op(op.clone(), || handles.unparker.unpark(), |_| Ret::Unit);
                // Relaxed: a label (`check_park_saw_every_unpark`).
                publication.unparked.store(true, Relaxed);
            }
            Op::Park | Op::ParkTimeout | Op::HasPermit => {
                let Some(parker) = handles.parker.as_ref() else {
                    return;
                };
                match op {
                    Op::Park => {
                        rec.op(op.clone(), || parker.park(), |_| Ret::Unit);
                        handles.check_park_saw_every_unpark(parker);
                    }
                    // loom and shuttle model no time: under them it waits
                    // for the permit, as `park` does.
                    Op::ParkTimeout => {
                        rec.op(
                            op.clone(),
                            || parker.park_timeout(std::time::Duration::from_millis(1)),
                            |_| Ret::Unit,
                        );
                        handles.check_park_saw_every_unpark(parker);
                    }
                    _ => {
                        rec.op(op.clone(), || parker.has_permit(), |&b| Ret::Bool(b));
                    }
                }
            }
        }
    }

    fn rust(op: &spec::Op) -> String {
        format!("Op::{op:?}")
    }

    fn scenarios() -> BoxedStrategy<Scenario<spec::Op>> {
        use proptest::prelude::*;
        use spec::Op;
        let owner = prop_oneof![
            2 => Just(Op::Park),
            1 => Just(Op::ParkTimeout),
            2 => Just(Op::HasPermit),
            1 => Just(Op::Unpark),
        ];
        let main = prop_oneof![Just(Op::Unpark), Just(Op::HasPermit)];
        (2usize..=3)
            .prop_flat_map(move |threads| {
                let mut parts = vec![owner.clone().boxed()];
                parts.extend((1..threads).map(|_| Just(Op::Unpark).boxed()));
                scenario::shape(main.clone().boxed(), parts, main.clone().boxed(), [2, 2, 2])
            })
            .prop_map(|mut scenario| {
                // At most one park: each later one asks for the permit
                // instead (two parks could outlast the unparks, whose
                // permits do not add up: P-2).
                let mut park_at = None;
                for (i, op) in scenario.threads[0].iter_mut().enumerate() {
                    if matches!(op, Op::Park | Op::ParkTimeout) {
                        if park_at.is_some() {
                            *op = Op::HasPermit;
                        }
                        park_at = park_at.or(Some(i));
                    }
                }
                // A thread that waits for the owner's operation after its
                // park could be the one whose unpark ends it: no such
                // hand-off.
                if let Some(park_at) = park_at {
                    scenario
                        .handoffs
                        .retain(|h| h.from.0 != 1 || h.from.1 < park_at);
                }
                scenario
            })
            .boxed()
    }
}

/// Generated scenarios: the owner parks at most once, asks for the
/// permit and unparks itself, while 1 or 2 threads unpark
/// (`check/src/scenario.rs`); every execution's history checked against
/// `specs/park.rs` (one permit, a park ends only by consuming it).
///
/// Checks: P-1, P-2, P-3, P-4.
#[test]
fn generated_scenarios() {
    scenario::generated::<ParkSubject>(model!().nightly());
}

/// The parker's complete run: generated scenarios of two threads, each part
/// small enough that loom explores every execution of it, both passes,
/// with no preemption bound (the run fails otherwise); every history
/// checked against `specs/park.rs`.
///
/// Beside `park::scope_complete` (every scenario of a stated scope), these
/// drawn scenarios vary the initial and final parts the scope fixes.
///
/// Checks: P-1, P-2, P-3, P-4.
#[test]
fn complete_scenarios() {
    scenario::generated_complete::<ParkSubject>(
        model!(),
        Small {
            scenarios: 16,
            threads: 2,
            sizes: [2, 2, 2],
        },
    );
}

/// Found by `park::generated_scenarios` (shrunk by
/// proptest) against the seeded bug `park-permit-found-under-the-lock-kept`,
/// kept as a model: the owner parks and then asks for the permit while
/// another thread unparks once. When the unpark lands between `park`'s
/// lock-free look and its look under the lock, the permit found there
/// must be consumed: the owner's `has_permit` then answers `false`.
///
/// Checks: P-2, P-3.
#[test]
fn permit_found_under_the_lock_is_consumed() {
    use spec::Op;
    let scenario = Scenario {
        init: vec![],
        threads: vec![vec![Op::Park, Op::HasPermit], vec![Op::Unpark]],
        post: vec![],
        handoffs: vec![],
    };
    scenario::scenario_model::<ParkSubject>(model!(), scenario);
}

/// The parker's scope: the owner's thread calls one or two operations of
/// its alphabet (`park`, `park_timeout`, the permit query, and an unpark
/// of itself: every operation of `Parker`), another thread unparks once or
/// twice (the `Unparker`'s one operation); from each regime of the state
/// word. The contract allows the owner at most one park here: permits do
/// not add up (P-2), so a second park could outlast every unpark and block
/// for good, which is the caller's error, not the parker's.
///
/// The regimes are the states `src/park.rs` leaves between calls: no
/// permit (`EMPTY`); a permit stored (`NOTIFIED`); and a permit stored
/// and consumed by a park (`EMPTY` again, through the lock-free path: the
/// lock and condvar untouched). `PARKED` lasts only while the owner is
/// inside `park`, which the concurrent part reaches from each of them.
/// Two operations for the owner are what the races need: a park racing
/// an unpark (found before the lock, under it, or after the sleep), then
/// the permit query that shows whether the permit the park found was
/// consumed (P-3), with one or two unparks racing both.
fn park_scope(threads: usize) -> scope::Scope<ParkSubject> {
    use spec::Op::*;
    fn one_park_at_most(
        _prefix: &[spec::Op],
        threads: &[Vec<spec::Op>],
        _order: Option<(usize, usize)>,
    ) -> bool {
        threads[0]
            .iter()
            .filter(|op| matches!(op, Park | ParkTimeout))
            .count()
            <= 1
    }
    fn permit(h: &Handles) -> bool {
        h.parker.as_ref().expect("the main thread's").has_permit()
    }
    scope::Scope {
        name: match threads {
            2 => "park-2x2",
            3 => "park-3x2",
            other => unreachable!("no park scope of {other} threads"),
        },
        threads: [
            vec![vec![Park, ParkTimeout, HasPermit, Unpark]],
            vec![vec![Unpark]; threads - 1],
        ]
        .concat(),
        lengths: (1, 2),
        post: vec![HasPermit],
        // The owner is thread 1; the unparkers are interchangeable.
        ordered_threads: false,
        contract: one_park_at_most,
        shard_of: None,
        real_time_orders: false,
        regimes: vec![
            scope::Regime {
                name: "no_permit",
                prefix: vec![],
                reached: |h| !permit(h),
            },
            scope::Regime {
                name: "permit_stored",
                prefix: vec![Unpark],
                reached: |h| permit(h),
            },
            scope::Regime {
                name: "permit_consumed",
                prefix: vec![Unpark, Park],
                reached: |h| !permit(h),
            },
        ],
    }
}

/// Every scenario of the parker's scope (`park_scope`: the owner with one
/// or two operations, at most one a park, and an unparking thread, from
/// three regimes of the state word), complete under loom in both passes;
/// every history checked against `specs/park.rs`.
///
/// Scope: park-2x2 (the owner with one or two operations of 4, at most one a park, and a thread unparking once or twice, from 3 regimes)
///
/// Checks: P-1, P-2, P-3, P-4.
#[test]
fn scope_complete() {
    scope::every_scenario(model!(), park_scope(2));
}

/// The parker's scope one thread up (park-3x2, which holds park-3x1): the
/// owner with one or two operations, at most one a park, and two
/// unparking threads, each unparking once or twice, from the same three
/// regimes; each scenario run with no preemption bound within the budget or at the highest
/// preemption bound that finishes for it. Three at once are what two
/// unparks racing one park (one permit stored, one wake, P-2) need.
///
/// Scope: park-3x2 (the owner with one or two operations of 4, at most one a park, and two threads unparking once or twice, from 3 regimes)
///
/// Checks: P-1, P-2, P-3, P-4.
#[test]
fn scope_three_threads_complete_or_bounded() {
    scope::every_scenario_complete_or_bounded(model!().nightly(), park_scope(3));
}
