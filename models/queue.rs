//! Models of the work-stealing run queue (`src/queue`).
//!
//! Each `#[test]` is one scenario written once: under `--cfg loom` it is
//! explored exhaustively within the preemption bound, under `--cfg shuttle`
//! with random and PCT schedules, and under plain `cargo test` it is a
//! repeated stress run on real threads (see `check/src/lib.rs`). Every
//! scenario checks identity through a [`Ledger`]: each item delivered
//! exactly once and dropped exactly once. Each names the invariants of
//! VERIFICATION.md it checks in a `Checks:` line.
//!
//! loom scenarios use capacity 4 and at most 3 threads; the scale scenarios
//! at the bottom are too big for loom and run under shuttle and std only.

use crate::harness::recorder::{Recorder, Spawned, ThreadRecorder};
use crate::harness::scenario::{self, Scenario, Small, Subject, Waiter};
use crate::harness::scope;
use crate::harness::{model, Flag, Handoff, Ledger, Model, Reach, Tracked};
use crate::specs::queue as qspec;
use modelsync::queue::{Inject, Local, Steal};
use modelsync::sync::thread;
#[cfg(not(loom))]
use modelsync::sync::{
    atomic::{AtomicUsize, Ordering},
    spin_loop, Arc,
};
use proptest::strategy::BoxedStrategy;

const CAP: usize = 4;

/// A history of the queues' operations, checked against `specs/queue.rs`
/// at the end of the execution (rings of capacity `CAP`); its main
/// thread's end. Each model numbers its rings in the history: the
/// owner's, a second owner's, and the fresh ring a thief steals into.
fn history() -> (Recorder<qspec::Queue>, ThreadRecorder<qspec::Queue>) {
    history_of([CAP; qspec::RINGS])
}

/// [`history`] with rings of other capacities.
fn history_of(
    capacity: [usize; qspec::RINGS],
) -> (Recorder<qspec::Queue>, ThreadRecorder<qspec::Queue>) {
    let history = Recorder::new(qspec::Queue::new(capacity));
    let main = history.thread(0);
    (history, main)
}

fn got(item: &Option<Tracked>) -> qspec::Ret {
    qspec::Ret::Item(item.as_ref().map(Tracked::id))
}

/// Steals once from `victim`, ring `from`'s stealer, into a fresh ring
/// that the history calls ring `into` (empty at every steal: it is drained
/// at once), and delivers what it got. Returns the ids delivered.
fn steal_once_recorded(
    ledger: &Ledger,
    victim: &Steal<Tracked>,
    from: usize,
    into: usize,
    rec: &ThreadRecorder<qspec::Queue>,
) -> Vec<usize> {
    let mut mine = Local::with_capacity(CAP);
    let mut ids = Vec::new();
    let stolen = rec.op(
        qspec::Op::Steal { from, into },
        || victim.steal_into(&mut mine),
        got,
    );
    if let Some(item) = stolen {
        ids.push(item.id());
        ledger.deliver(item);
    }
    while let Some(item) = rec.op(qspec::Op::Pop(into), || mine.pop(), got) {
        ids.push(item.id());
        ledger.deliver(item);
    }
    ids
}

/// Pops everything left in `local` (ring `ring`) and the inject queue,
/// delivering it.
fn drain_recorded(
    ledger: &Ledger,
    local: &mut Local<Tracked>,
    ring: usize,
    inject: &Inject<Tracked>,
    rec: &ThreadRecorder<qspec::Queue>,
) {
    while let Some(item) = rec.op(qspec::Op::Pop(ring), || local.pop(), got) {
        ledger.deliver(item);
    }
    while let Some(item) = rec.op(qspec::Op::InjectPop, || inject.pop(), got) {
        ledger.deliver(item);
    }
}

/// `push_back` of item `id` into ring `ring`, recorded.
fn push_recorded(
    ledger: &Ledger,
    local: &mut Local<Tracked>,
    ring: usize,
    id: usize,
    inject: &Inject<Tracked>,
    rec: &ThreadRecorder<qspec::Queue>,
) {
    let item = ledger.item(id);
    rec.op(
        qspec::Op::Push(ring, id),
        || local.push_back(item, inject),
        |_| qspec::Ret::Unit,
    );
}

/// Thread 1 of the history, stealing once from `victim` (ring 0) into a
/// fresh ring (ring 1): see `steal_once_recorded`.
fn spawn_thief(
    ledger: &Ledger,
    victim: Steal<Tracked>,
    main: &ThreadRecorder<qspec::Queue>,
) -> Spawned<qspec::Queue, Vec<usize>> {
    let ledger = ledger.clone();
    main.spawn(1, move |rec| {
        steal_once_recorded(&ledger, &victim, 0, 1, &rec)
    })
}

/// Steals from `victim` into `dst` and delivers the returned item; hits
/// `spanned` when one claim on `dst` was in progress both before and after,
/// i.e. the copy into `dst` ran entirely inside another thread's steal from
/// it. (Each model using this steals from `dst` once, so "before" and
/// "after" see the same claim.)
fn steal_into_while_stolen_from(
    ledger: &Ledger,
    victim: &Steal<Tracked>,
    [from, into]: [usize; 2],
    dst: &mut Local<Tracked>,
    spanned: &Reach,
    rec: &ThreadRecorder<qspec::Queue>,
) {
    // Measured: without this yield loom (0.7, any bound) never runs the
    // freshly spawned thief's claim before this thread's first access, so
    // the overlap this helper exists for was unreachable. Yielding hands
    // the scheduler to the thief first; loom still preempts it at every
    // access within the bound, so both orders are explored.
    thread::yield_now();
    let claimed_before = dst.claimed_by_stealer();
    let stolen = rec.op(
        qspec::Op::Steal { from, into },
        || victim.steal_into(dst),
        got,
    );
    if let Some(item) = stolen {
        ledger.deliver(item);
    }
    spanned.hit_if(claimed_before > 0 && dst.claimed_by_stealer() > 0);
}

/// tokio's `basic`: the owner pushes and pops while a stealer steals three
/// times; here every item is checked by identity.
///
/// Checks.
#[test]
fn basic() {
    let stolen = Reach::new("steal_took_items");
    let r = stolen.clone();
    model!()
        // Its complete run is too long for a pull request (VERIFICATION.md
        // gives it); the nightly runs it.
        .preemption_bound(3)
        .reach(&stolen)
        .check(move || {
            let ledger = Ledger::new(4);
            let (history, main) = history();
            let inject = Inject::new();
            let mut local = Local::with_capacity(CAP);
            let stealer = local.stealer();
            let thief = {
                let ledger = ledger.clone();
                main.spawn(1, move |rec| {
                    let mut taken = 0;
                    for _ in 0..3 {
                        taken += steal_once_recorded(&ledger, &stealer, 0, 1, &rec).len();
                    }
                    taken
                })
            };
            for round in 0..2 {
                push_recorded(&ledger, &mut local, 0, 2 * round, &inject, &main);
                push_recorded(&ledger, &mut local, 0, 2 * round + 1, &inject, &main);
                if let Some(item) = main.op(qspec::Op::Pop(0), || local.pop(), got) {
                    ledger.deliver(item);
                }
            }
            drain_recorded(&ledger, &mut local, 0, &inject, &main);
            r.hit_if(thief.join().unwrap() > 0);
            ledger.assert_all_delivered_once();
            history.check();
        });
}

/// tokio's `steal_overflow`: the owner fills and overflows its ring while a
/// steal is in progress, so `push_back` must send only the new item to the
/// inject queue; and, in other executions, overflow half of the ring.
///
/// Checks.
#[test]
fn steal_overflow() {
    let item_only = Reach::new("overflow_during_steal_moved_one");
    let half = Reach::new("overflow_moved_half_plus_one");
    let (r_item, r_half) = (item_only.clone(), half.clone());
    model!().reach(&item_only).reach(&half).check(move || {
        let ledger = Ledger::new(6);
        let (history, main) = history();
        let inject = Inject::new();
        let mut local = Local::with_capacity(CAP);
        push_recorded(&ledger, &mut local, 0, 0, &inject, &main);
        let thief = {
            let (ledger, stealer) = (ledger.clone(), local.stealer());
            main.spawn(1, move |rec| {
                steal_once_recorded(&ledger, &stealer, 0, 1, &rec)
            })
        };
        for id in 1..6 {
            let before = inject.len();
            push_recorded(&ledger, &mut local, 0, id, &inject, &main);
            // Only this thread touches `inject`, so the change is ours.
            match inject.len() - before {
                0 => {}
                1 => r_item.hit(),
                n => {
                    assert_eq!(
                        n,
                        CAP / 2 + 1,
                        "overflow moves half the ring plus the item (Q-7)"
                    );
                    r_half.hit();
                }
            }
        }
        thief.join().unwrap();
        drain_recorded(&ledger, &mut local, 0, &inject, &main);
        ledger.assert_all_delivered_once();
        history.check();
    });
}

/// tokio's `multi_stealer`: two stealers race each other and the owner.
///
/// Checks.
#[test]
fn multi_stealer() {
    let both = Reach::new("both_stealers_took_items");
    let r = both.clone();
    model!().reach(&both).check(move || {
        let ledger = Ledger::new(4);
        let (history, main) = history();
        let inject = Inject::new();
        let mut local = Local::with_capacity(CAP);
        for id in 0..4 {
            push_recorded(&ledger, &mut local, 0, id, &inject, &main);
        }
        let thieves: Vec<_> = (1..=2)
            .map(|t| {
                let ledger = ledger.clone();
                let stealer = local.stealer();
                main.spawn(t, move |rec| {
                    steal_once_recorded(&ledger, &stealer, 0, t, &rec).len()
                })
            })
            .collect();
        if let Some(item) = main.op(qspec::Op::Pop(0), || local.pop(), got) {
            ledger.deliver(item);
        }
        let taken: Vec<usize> = thieves.into_iter().map(|t| t.join().unwrap()).collect();
        r.hit_if(taken.iter().all(|&n| n > 0));
        drain_recorded(&ledger, &mut local, 0, &inject, &main);
        ledger.assert_all_delivered_once();
        history.check();
    });
}

/// tokio's `chained_steal`: the owner of ring 1 steals from ring 2 into
/// ring 1 while another thread steals from ring 1, so slots being copied
/// out of ring 1 must not be overwritten by the items copied in.
///
/// Checks.
#[test]
fn chained_steal() {
    let chained = Reach::new("claim_on_ring1_spanned_steal_into_it");
    let r = chained.clone();
    model!().reach(&chained).check(move || {
        let ledger = Ledger::new(6);
        // Ring 1 is the history's ring 0, ring 2 its ring 1; the thief
        // steals into a fresh ring, its ring 2.
        let (history, main) = history();
        let inject = Inject::new();
        let mut ring1 = Local::with_capacity(CAP);
        let mut ring2 = Local::with_capacity(CAP);
        for id in 0..2 {
            push_recorded(&ledger, &mut ring1, 0, id, &inject, &main);
        }
        for id in 2..6 {
            push_recorded(&ledger, &mut ring2, 1, id, &inject, &main);
        }
        let ring1_stealer = ring1.stealer();
        let thief = {
            let ledger = ledger.clone();
            main.spawn(1, move |rec| {
                steal_once_recorded(&ledger, &ring1_stealer, 0, 2, &rec)
            })
        };
        steal_into_while_stolen_from(&ledger, &ring2.stealer(), [1, 0], &mut ring1, &r, &main);
        thief.join().unwrap();
        drain_recorded(&ledger, &mut ring1, 0, &inject, &main);
        drain_recorded(&ledger, &mut ring2, 1, &inject, &main);
        ledger.assert_all_delivered_once();
        history.check();
    });
}

/// Items a steal moved into a ring are published to that ring's own
/// stealers: a thief steals from ring 1 the item its owner has just stolen
/// into it from ring 2 (ring 1 starts empty, so anything the thief gets
/// was copied in by the owner's `steal_into`).
///
/// Checks.
#[test]
fn steal_of_items_just_stolen_in() {
    let restolen = Reach::new("thief_took_item_copied_in");
    let r = restolen.clone();
    model!().reach(&restolen).check(move || {
        let ledger = Ledger::new(4);
        // Ring 1 is the history's ring 0, ring 2 its ring 1; the thief
        // steals into a fresh ring, its ring 2.
        let (history, main) = history();
        let inject = Inject::new();
        let mut ring1 = Local::with_capacity(CAP);
        let mut ring2 = Local::with_capacity(CAP);
        for id in 0..4 {
            push_recorded(&ledger, &mut ring2, 1, id, &inject, &main);
        }
        let ring1_stealer = ring1.stealer();
        let thief = {
            let ledger = ledger.clone();
            main.spawn(1, move |rec| {
                steal_once_recorded(&ledger, &ring1_stealer, 0, 2, &rec)
            })
        };
        let stolen = main.op(
            qspec::Op::Steal { from: 1, into: 0 },
            || ring2.stealer().steal_into(&mut ring1),
            got,
        );
        if let Some(item) = stolen {
            ledger.deliver(item);
        }
        r.hit_if(!thief.join().unwrap().is_empty());
        drain_recorded(&ledger, &mut ring1, 0, &inject, &main);
        drain_recorded(&ledger, &mut ring2, 1, &inject, &main);
        ledger.assert_all_delivered_once();
        history.check();
    });
}

/// `Steal::len` read by a third thread while a steal's claim is in
/// progress: the claim's head carries the tail its stealer saw, which may
/// be newer than the owner's last head write, so `len` must not combine
/// the claimed `real` with an older `tail`.
///
/// Checks.
#[test]
fn stealer_len_during_claim() {
    let saw_claim = Reach::new("claim_in_progress_after_owner_pushed");
    let r = saw_claim.clone();
    model!().reach(&saw_claim).check(move || {
        let ledger = Ledger::new(3);
        let (history, main) = history();
        let inject = Inject::new();
        let mut local = Local::with_capacity(CAP);
        push_recorded(&ledger, &mut local, 0, 0, &inject, &main);
        let popped = main.op(qspec::Op::Pop(0), || local.pop(), got);
        ledger.deliver(popped.expect("just pushed"));
        let (thief_stealer, observer_stealer) = (local.stealer(), local.stealer());
        let thief = {
            let ledger = ledger.clone();
            main.spawn(1, move |rec| {
                steal_once_recorded(&ledger, &thief_stealer, 0, 1, &rec)
            })
        };
        // `len` is not an operation of the specification: it is checked
        // here, against the capacity.
        let observer = thread::spawn(move || {
            let len = observer_stealer.len();
            assert!(len <= CAP, "Steal::len returned {len} for a ring of {CAP}");
        });
        // Pushed after the owner's last head write (the pop above).
        for id in 1..3 {
            push_recorded(&ledger, &mut local, 0, id, &inject, &main);
        }
        r.hit_if(local.claimed_by_stealer() > 0);
        thief.join().unwrap();
        observer.join().unwrap();
        drain_recorded(&ledger, &mut local, 0, &inject, &main);
        ledger.assert_all_delivered_once();
        history.check();
    });
}

/// A gap in tokio's suite, whose overflow target is a single-threaded
/// `RefCell`: another thread pushes to and pops from the inject queue while
/// the owner overflows into it.
///
/// Checks.
#[test]
fn inject_push_pop_during_overflow() {
    let got_overflow = Reach::new("consumer_popped_an_overflowed_item");
    let r = got_overflow.clone();
    model!().reach(&got_overflow).check(move || {
        let ledger = Ledger::new(6);
        let (history, main) = history();
        let inject = modelsync::sync::Arc::new(Inject::new());
        let mut local = Local::with_capacity(CAP);
        let consumer = {
            let (ledger, inject) = (ledger.clone(), inject.clone());
            main.spawn(1, move |rec| {
                let item = ledger.item(5);
                rec.op(
                    qspec::Op::InjectPush(5),
                    || inject.push(item),
                    |_| qspec::Ret::Unit,
                );
                let mut popped = Vec::new();
                for _ in 0..2 {
                    if let Some(item) = rec.op(qspec::Op::InjectPop, || inject.pop(), got) {
                        popped.push(item.id());
                        ledger.deliver(item);
                    }
                }
                popped
            })
        };
        for id in 0..5 {
            push_recorded(&ledger, &mut local, 0, id, &inject, &main);
        }
        let popped = consumer.join().unwrap();
        r.hit_if(popped.iter().any(|&id| id < 5));
        // Items of one overflow batch stay in order relative to each other.
        let ours: Vec<usize> = popped.iter().copied().filter(|&id| id < 5).collect();
        assert!(
            ours.windows(2).all(|w| w[0] < w[1]),
            "overflow batch reordered: {popped:?}"
        );
        drain_recorded(&ledger, &mut local, 0, &inject, &main);
        ledger.assert_all_delivered_once();
        // And the batch went in whole: no push lands inside it.
        history.check();
    });
}

/// A steal races the owner's pop of the last item: exactly one of them gets
/// it, and both outcomes occur.
///
/// Checks.
#[test]
fn steal_races_pop_of_last_item() {
    let thief_won = Reach::new("thief_took_last_item");
    let owner_won = Reach::new("owner_popped_last_item");
    let (r_thief, r_owner) = (thief_won.clone(), owner_won.clone());
    model!().reach(&thief_won).reach(&owner_won).check(move || {
        let ledger = Ledger::new(1);
        let (history, main) = history();
        let inject = Inject::new();
        let mut local = Local::with_capacity(CAP);
        push_recorded(&ledger, &mut local, 0, 0, &inject, &main);
        let thief = spawn_thief(&ledger, local.stealer(), &main);
        let popped = main.op(qspec::Op::Pop(0), || local.pop(), got);
        r_owner.hit_if(popped.is_some());
        if let Some(item) = popped {
            ledger.deliver(item);
        }
        r_thief.hit_if(!thief.join().unwrap().is_empty());
        ledger.assert_all_delivered_once();
        history.check();
    });
}

/// A steal across the `u32` wraparound, racing the owner's pop and pushes:
/// indices start two steps before `u32::MAX`, so the items the thief may
/// take sit on both sides of the wrap, and the owner's pushes cross it.
/// (With the owner's overflow in the same model its complete run did not
/// finish within the nightly's budget; `overflow_across_u32_max` is the
/// other half.)
///
/// Checks.
#[test]
fn steal_across_u32_max() {
    let across = Reach::new("steal_took_item_pushed_after_wrap");
    let r = across.clone();
    model!().reach(&across).check(move || {
        let ledger = Ledger::new(5);
        let (history, main) = history();
        let inject = Inject::new();
        let mut local = Local::with_capacity_at_index(CAP, u32::MAX - 1);
        for id in 0..3 {
            push_recorded(&ledger, &mut local, 0, id, &inject, &main);
        }
        let thief = spawn_thief(&ledger, local.stealer(), &main);
        // Let the thief start first (see `steal_into_while_stolen_from`).
        thread::yield_now();
        if let Some(item) = main.op(qspec::Op::Pop(0), || local.pop(), got) {
            ledger.deliver(item);
        }
        for id in 3..5 {
            push_recorded(&ledger, &mut local, 0, id, &inject, &main);
        }
        // Item 2 sits at index 0, after the wrap.
        r.hit_if(thief.join().unwrap().iter().any(|&id| id >= 2));
        drain_recorded(&ledger, &mut local, 0, &inject, &main);
        ledger.assert_all_delivered_once();
        history.check();
    });
}

/// An overflow across the `u32` wraparound racing a steal: the ring holds
/// four items at indices `u32::MAX - 1` to 1, so the half it moves to the
/// inject queue, and the claim a concurrent thief makes, both span the wrap.
///
/// Checks.
#[test]
fn overflow_across_u32_max() {
    let spilled = Reach::new("overflow_moved_items_across_wrap");
    let r = spilled.clone();
    model!().reach(&spilled).check(move || {
        let ledger = Ledger::new(5);
        let (history, main) = history();
        let inject = Inject::new();
        let mut local = Local::with_capacity_at_index(CAP, u32::MAX - 1);
        for id in 0..4 {
            push_recorded(&ledger, &mut local, 0, id, &inject, &main);
        }
        let thief = spawn_thief(&ledger, local.stealer(), &main);
        push_recorded(&ledger, &mut local, 0, 4, &inject, &main);
        // Only this thread touches `inject`: more than the new item means
        // the ring's oldest half moved.
        r.hit_if(inject.len() > 1);
        thief.join().unwrap();
        drain_recorded(&ledger, &mut local, 0, &inject, &main);
        ledger.assert_all_delivered_once();
        history.check();
    });
}

/// The owner drops its `Local` with items in it while a stealer still holds
/// a `Steal` handle: the stealer may keep stealing, and whatever is left is
/// dropped exactly once when the last handle goes.
///
/// Checks.
#[test]
fn local_dropped_while_stealer_lives() {
    let after_drop = Reach::new("steal_after_local_dropped");
    let r = after_drop.clone();
    model!().reach(&after_drop).check(move || {
        let ledger = Ledger::new(3);
        // The owner's drop is not an operation of the specification: the
        // ring's items stay stealable, as they do in it.
        let (history, main) = history();
        let inject = Inject::new();
        let mut local = Local::with_capacity(CAP);
        for id in 0..3 {
            push_recorded(&ledger, &mut local, 0, id, &inject, &main);
        }
        let stealer = local.stealer();
        let local_gone = modelsync::sync::Arc::new(modelsync::sync::atomic::AtomicBool::new(false));
        let thief = {
            let (ledger, local_gone) = (ledger.clone(), local_gone.clone());
            main.spawn(1, move |rec| {
                // Relaxed: the flag only labels the execution for the reach
                // counter; the queue's own handles carry the synchronisation.
                let gone = local_gone.load(modelsync::sync::atomic::Ordering::Relaxed);
                let ids = steal_once_recorded(&ledger, &stealer, 0, 1, &rec);
                !ids.is_empty() && gone
            })
        };
        drop(local);
        local_gone.store(true, modelsync::sync::atomic::Ordering::Relaxed);
        r.hit_if(thief.join().unwrap());
        ledger.assert_all_dropped_once();
        history.check();
    });
}

/// Stealing into a ring that is itself being stolen from, with the copy
/// landing next to the slots the other stealer is reading: ring B (capacity
/// 4) holds items at indices 1..4, so the thief claims slots 1 and 2 while
/// the main thread copies from ring A into B's free slots 4 and 5 (that is,
/// 0 and 1 modulo 4). Computing B's free room from `real` instead of `steal`
/// (seeded bug `queue-steal-into-ignores-claimed-slots`) overwrites a slot
/// the thief still reads.
///
/// Checks.
#[test]
fn steal_into_queue_being_stolen() {
    let spanned = Reach::new("claim_on_b_spanned_steal_into_b");
    let r = spanned.clone();
    model!().reach(&spanned).check(move || {
        let ledger = Ledger::new(10);
        // Ring A is the history's ring 0 (capacity 8), ring B its ring 1;
        // the thief steals into a fresh ring, its ring 2.
        let (history, main) = history_of([2 * CAP, CAP, CAP]);
        let inject = Inject::new();
        let mut ring_a = Local::with_capacity(2 * CAP);
        let mut ring_b = Local::with_capacity(CAP);
        for id in 0..6 {
            push_recorded(&ledger, &mut ring_a, 0, id, &inject, &main);
        }
        for id in 6..10 {
            push_recorded(&ledger, &mut ring_b, 1, id, &inject, &main);
        }
        let popped = main.op(qspec::Op::Pop(1), || ring_b.pop(), got);
        ledger.deliver(popped.expect("ring B holds four items"));
        let b_stealer = ring_b.stealer();
        let thief = {
            let ledger = ledger.clone();
            main.spawn(1, move |rec| {
                steal_once_recorded(&ledger, &b_stealer, 1, 2, &rec)
            })
        };
        steal_into_while_stolen_from(&ledger, &ring_a.stealer(), [0, 1], &mut ring_b, &r, &main);
        thief.join().unwrap();
        drain_recorded(&ledger, &mut ring_a, 0, &inject, &main);
        drain_recorded(&ledger, &mut ring_b, 1, &inject, &main);
        ledger.assert_all_delivered_once();
        history.check();
    });
}

/// The ABA class (tokio #5041, seeded as `queue-aba-narrow-indices`): a
/// stealer stalls between loading the head and its CAS while the owner pops
/// and pushes eight items, so the indices move a full 3-bit cycle and the
/// ring is empty again. The CAS must fail on the stale head (with `u32`
/// indices it cannot match); a successful one would claim slots the owner
/// already emptied and reused.
///
/// Checks.
#[test]
fn stealer_stalls_while_owner_cycles() {
    // Bound 3: its complete run does not finish within the nightly's
    // budget (verification/queue.md); `stealer_stalls_across_two_ring_cycles`
    // is the complete one.
    stalled_stealer_scenario(model!().preemption_bound(3), CAP, 8);
}

/// The same stall across two full cycles of a ring of capacity 2: small
/// enough for a complete run, where the eight-step cycle above (which the
/// seeded 3-bit ABA needs) is not.
///
/// Checks.
#[test]
fn stealer_stalls_across_two_ring_cycles() {
    stalled_stealer_scenario(model!(), 2, 4);
}

/// A thief starts a steal of two items; the owner then pops and pushes
/// until `items` have passed through the ring, and drains it. Reached when
/// the thief's steal began before the owner's first step and ended after
/// its last.
fn stalled_stealer_scenario(model: Model, capacity: usize, items: usize) {
    let spanned = Reach::new("steal_spanned_owner_cycle");
    let r = spanned.clone();
    model.reach(&spanned).check(move || {
        let ledger = Ledger::new(items);
        let (history, main) = history_of([capacity, CAP, CAP]);
        let inject = Inject::new();
        let mut local = Local::with_capacity(capacity);
        for id in 0..2 {
            push_recorded(&ledger, &mut local, 0, id, &inject, &main);
        }
        let (owner_started, owner_done) = (Flag::default(), Flag::default());
        let stealer = local.stealer();
        let thief = {
            let (ledger, owner_started, owner_done) =
                (ledger.clone(), owner_started.clone(), owner_done.clone());
            main.spawn(1, move |rec| {
                let began_first = !owner_started.get();
                steal_once_recorded(&ledger, &stealer, 0, 1, &rec);
                began_first && owner_done.get()
            })
        };
        // Let the thief start first (see `steal_into_while_stolen_from`).
        thread::yield_now();
        owner_started.set();
        for id in 2..items {
            if let Some(item) = main.op(qspec::Op::Pop(0), || local.pop(), got) {
                ledger.deliver(item);
            }
            push_recorded(&ledger, &mut local, 0, id, &inject, &main);
        }
        while let Some(item) = main.op(qspec::Op::Pop(0), || local.pop(), got) {
            ledger.deliver(item);
        }
        owner_done.set();
        r.hit_if(thief.join().unwrap());
        drain_recorded(&ledger, &mut local, 0, &inject, &main);
        ledger.assert_all_delivered_once();
        history.check();
    });
}

/// The bug a change proposed in tokio #7385 / #7390 would have introduced
/// (seeded as `queue-len-loads-tail-relaxed`): `Steal::is_empty` is the
/// signal an idle worker acts on, so a thread that sees items must also see
/// what the owner wrote before pushing them. Here the owner writes a plain (non-atomic) cell,
/// then pushes; an observer that sees the queue non-empty reads the cell.
/// loom fails the model if that read is not ordered after the write.
///
/// Checks: Q-12.
#[test]
fn non_empty_publishes_owner_writes() {
    let saw_items = Reach::new("observer_saw_items");
    let r = saw_items.clone();
    model!().reach(&saw_items).check(move || {
        let inject = Inject::new();
        let mut local = Local::with_capacity(CAP);
        let written = Handoff::new();
        let stealer = local.stealer();
        let observer = {
            let written = written.clone();
            thread::spawn(move || {
                if stealer.is_empty() {
                    return false;
                }
                let seen = written.read();
                assert_eq!(seen, 7, "saw the item but not the write before it");
                true
            })
        };
        written.write(7);
        local.push_back(1u32, &inject);
        r.hit_if(observer.join().unwrap());
    });
}

/// `Steal::len` read by another thread while the owner pushes and pops
/// never exceeds the capacity: a `tail` older than the `real` it read would
/// make `tail - real` wrap to a huge count.
///
/// Checks.
#[test]
fn stealer_len_stays_within_capacity() {
    let saw_items = Reach::new("len_saw_items");
    let r = saw_items.clone();
    model!().reach(&saw_items).check(move || {
        let inject = Inject::new();
        let mut local = Local::with_capacity(CAP);
        let stealer = local.stealer();
        let observer = thread::spawn(move || {
            let mut max = 0;
            for _ in 0..2 {
                let len = stealer.len();
                assert!(len <= CAP, "Steal::len returned {len} for a ring of {CAP}");
                max = max.max(len);
            }
            max
        });
        for id in 0..2u32 {
            local.push_back(id, &inject);
            assert_eq!(local.pop(), Some(id));
        }
        r.hit_if(observer.join().unwrap() > 0);
    });
}

/// A small executor: `workers` threads each push `per_worker` items into
/// a ring of `capacity`, then pop their own, steal from peers in a
/// scrambled order, and drain the inject queue, until every item is
/// delivered. Returns how many items were stolen.
#[cfg(not(loom))]
fn executor(ledger: &Ledger, workers: usize, capacity: usize, per_worker: usize) -> usize {
    let inject = Arc::new(Inject::new());
    let delivered = Arc::new(AtomicUsize::new(0));
    let stolen = Arc::new(AtomicUsize::new(0));
    let total = workers * per_worker;
    let locals: Vec<Local<Tracked>> = (0..workers)
        .map(|_| Local::with_capacity(capacity))
        .collect();
    let stealers: Arc<Vec<Steal<Tracked>>> = Arc::new(locals.iter().map(Local::stealer).collect());
    let handles: Vec<_> = locals
        .into_iter()
        .enumerate()
        .map(|(w, mut local)| {
            let (ledger, inject, delivered, stolen, stealers) = (
                ledger.clone(),
                inject.clone(),
                delivered.clone(),
                stolen.clone(),
                stealers.clone(),
            );
            thread::spawn(move || {
                let deliver = |item: Tracked| {
                    ledger.deliver(item);
                    // Relaxed: a progress count; the ledger checks identity.
                    delivered.fetch_add(1, Ordering::Relaxed);
                };
                for i in 0..per_worker {
                    local.push_back(ledger.item(w * per_worker + i), &inject);
                }
                let mut seed = w as u64 * 0x9e37_79b9 + 1;
                // Relaxed: termination only; every item's hand-off is
                // synchronised by the queue itself.
                while delivered.load(Ordering::Relaxed) < total {
                    if let Some(item) = local.pop() {
                        deliver(item);
                        continue;
                    }
                    seed ^= seed << 13;
                    seed ^= seed >> 7;
                    seed ^= seed << 17;
                    let victim = (w + 1 + (seed as usize) % (workers - 1)) % workers;
                    if let Some(item) = stealers[victim].steal_into(&mut local) {
                        stolen.fetch_add(1, Ordering::Relaxed);
                        deliver(item);
                    } else if let Some(item) = inject.pop() {
                        deliver(item);
                    } else {
                        spin_loop();
                    }
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    stolen.load(Ordering::Relaxed)
}

/// 4 workers, capacity 8, 64 items each, random victims: beyond loom's
/// reach, run under shuttle and std.
///
/// Checks.
#[cfg(not(loom))]
#[test]
fn executor_4_workers() {
    let stolen = Reach::new("steals_happened");
    let r = stolen.clone();
    model!().reach(&stolen).check(move || {
        let ledger = Ledger::new(4 * 64);
        r.hit_if(executor(&ledger, 4, 8, 64) > 0);
        ledger.assert_all_delivered_once();
    });
}

/// The std stress test: 4 threads, 100,000 items (fewer under Miri).
///
/// Checks.
#[cfg(not(any(loom, shuttle)))]
#[test]
fn stress_std_100k_items() {
    let per_worker = if cfg!(miri) { 64 } else { 25_000 };
    let ledger = Ledger::new(4 * per_worker);
    executor(&ledger, 4, 256, per_worker);
    ledger.assert_all_delivered_once();
}

// ---------------------------------------------------------------------
// Generated scenarios, checked against the specification.

/// The run queue as generated scenarios see it (`check/src/scenario.rs`):
/// one ring of capacity 2 per thread (ring `t - 1` owned by thread `t`),
/// which its owner pushes into (overflowing into the shared inject queue),
/// pops from and steals into from the other rings, and the inject queue,
/// which anyone pushes into and pops from. The main thread owns every ring
/// in the initial and final parts.
///
/// `RING_CAP` is the rings' capacity, `START` the index their counters
/// start at. Generated scenarios use capacity 2 (a full ring after two
/// pushes, so overflow and stealing are reached in a few operations) from
/// index 0; the scope's, capacity 4 two steps below the `u32` wrap.
struct QueueSubject<const RING_CAP: usize = 2, const START: u32 = 0>;

struct Queues {
    locals: Vec<Option<Local<Tracked>>>,
    stealers: Vec<Steal<Tracked>>,
    inject: std::sync::Arc<Inject<Tracked>>,
}

/// Numbers the items pushed, in scenario order.
fn number_items(mut scenario: Scenario<qspec::Op>) -> Scenario<qspec::Op> {
    let mut next = 0;
    for op in scenario.ops_mut() {
        if let qspec::Op::Push(_, item) | qspec::Op::InjectPush(item) = op {
            *item = next;
            next += 1;
        }
    }
    scenario
}

impl<const RING_CAP: usize, const START: u32> Subject for QueueSubject<RING_CAP, START> {
    type Spec = qspec::Queue;
    type Op = qspec::Op;
    type Actor = Queues;
    const NAME: &'static str = "queue";
    const RUST_TYPE: &'static str = if RING_CAP == 2 && START == 0 {
        "QueueSubject"
    } else {
        "ScopeQueues"
    };

    fn items(scenario: &Scenario<qspec::Op>) -> usize {
        scenario
            .ops()
            .filter(|op| matches!(op, qspec::Op::Push(..) | qspec::Op::InjectPush(_)))
            .count()
    }

    fn setup(scenario: &Scenario<qspec::Op>) -> (qspec::Queue, Queues) {
        let rings = scenario.threads.len();
        let locals: Vec<Local<Tracked>> = (0..rings)
            .map(|_| Local::with_capacity_at_index(RING_CAP, START))
            .collect();
        let queues = Queues {
            stealers: locals.iter().map(Local::stealer).collect(),
            locals: locals.into_iter().map(Some).collect(),
            inject: std::sync::Arc::new(Inject::new()),
        };
        (qspec::Queue::new([RING_CAP; qspec::RINGS]), queues)
    }

    fn split(main: &mut Queues, _: &Scenario<qspec::Op>, thread: usize) -> Queues {
        let mut locals: Vec<Option<Local<Tracked>>> = main.locals.iter().map(|_| None).collect();
        locals[thread - 1] = main.locals[thread - 1].take();
        Queues {
            locals,
            stealers: main.stealers.clone(),
            inject: main.inject.clone(),
        }
    }

    fn merge(main: &mut Queues, joined: Queues) {
        for (slot, local) in main.locals.iter_mut().zip(joined.locals) {
            if local.is_some() {
                *slot = local;
            }
        }
    }

    fn run(
        queues: &mut Queues,
        op: &qspec::Op,
        rec: &ThreadRecorder<qspec::Queue>,
        _: &Waiter,
        ledger: &Ledger,
    ) {
        use qspec::{Op, Ret};
        let got = |item: &Option<Tracked>| Ret::Item(item.as_ref().map(Tracked::id));
        let taken = match *op {
            Op::Push(ring, id) => {
                // Made first: the ledger counts every item the scenario names.
                let item = ledger.item(id);
                let Some(local) = queues.locals.get_mut(ring).and_then(Option::as_mut) else {
                    return;
                };
                let inject = &*queues.inject;
                // Two steps with the call's interval: an overflow's claim,
                // then its batch landing in the inject queue
                // (`specs/queue.rs`, `Op::OverflowLands`).
                let push = rec.call(op.clone());
                let lands = rec.call(Op::OverflowLands(ring));
                local.push_back(item, inject);
                rec.returned(push, Ret::Unit);
                rec.returned(lands, Ret::Unit);
                None
            }
            Op::Pop(ring) => {
                let Some(local) = queues.locals.get_mut(ring).and_then(Option::as_mut) else {
                    return;
                };
                rec.op(op.clone(), || local.pop(), got)
            }
            Op::Steal { from, into } => {
                let Some(stealer) = queues.stealers.get(from) else {
                    return;
                };
                let Some(local) = queues.locals.get_mut(into).and_then(Option::as_mut) else {
                    return;
                };
                rec.op(op.clone(), || stealer.steal_into(local), got)
            }
            Op::InjectPush(id) => {
                let item = ledger.item(id);
                rec.op(op.clone(), || queues.inject.push(item), |_| Ret::Unit);
                None
            }
            Op::InjectPop => rec.op(op.clone(), || queues.inject.pop(), got),
            Op::OverflowLands(_) => unreachable!("recorded with its push, never drawn"),
        };
        if let Some(item) = taken {
            ledger.deliver(item);
        }
    }

    /// A ring is a part, and so is the inject queue: a push may overflow
    /// into it, a steal touches the ring it takes from and the one it
    /// fills.
    fn footprint(op: &qspec::Op) -> Option<u64> {
        use qspec::Op;
        const INJECT: u64 = 1 << 63;
        Some(match *op {
            Op::Push(ring, _) => 1 << ring | INJECT,
            Op::Pop(ring) => 1 << ring,
            Op::Steal { from, into } => 1 << from | 1 << into,
            Op::InjectPush(_) | Op::InjectPop | Op::OverflowLands(_) => INJECT,
        })
    }

    fn rust(op: &qspec::Op) -> String {
        format!("Op::{op:?}")
    }

    fn canonical(scenario: Scenario<qspec::Op>) -> Scenario<qspec::Op> {
        number_items(scenario)
    }

    fn scenarios() -> BoxedStrategy<Scenario<qspec::Op>> {
        use proptest::prelude::*;
        use qspec::Op;
        /// The operations of ring `own`'s owner, among `rings` rings.
        fn owner(own: usize, rings: usize) -> BoxedStrategy<Op> {
            let victim = (1..rings).prop_map(move |k| (own + k) % rings);
            prop_oneof![
                4 => Just(Op::Push(own, 0)),
                2 => Just(Op::Pop(own)),
                3 => victim.prop_map(move |from| Op::Steal { from, into: own }),
                1 => Just(Op::InjectPush(0)),
                1 => Just(Op::InjectPop),
            ]
            .boxed()
        }
        /// The main thread's, on any ring.
        fn main(rings: usize) -> BoxedStrategy<Op> {
            (0..rings)
                .prop_flat_map(move |own| owner(own, rings))
                .boxed()
        }
        (2usize..=3)
            .prop_flat_map(|rings| {
                scenario::shape(
                    main(rings),
                    (0..rings).map(|own| owner(own, rings)).collect(),
                    main(rings),
                    [3, 3, 2],
                )
            })
            .prop_map(number_items)
            .boxed()
    }
}

/// Generated scenarios of 2 or 3 owners pushing, popping and stealing
/// from each other's rings of capacity 2, with the inject queue between
/// them (`check/src/scenario.rs`); every execution's history checked against
/// `specs/queue.rs` (a steal takes at least one and at most half, in
/// order; overflow moves the oldest half then the item; pops are FIFO;
/// every item delivered at most once and dropped once).
///
/// Checks, Q-8 (weaker: rings of capacity 2, so every
/// steal takes one item), Q-9, Q-11.
#[test]
fn generated_scenarios() {
    scenario::generated::<QueueSubject>(model!().nightly());
}

/// The queue's complete run: generated scenarios of two threads, each part
/// small enough that loom explores every execution of it, both passes,
/// with no preemption bound (the run fails otherwise); every history
/// checked against `specs/queue.rs`.
///
/// Beside `queue::scope_complete` (every scenario of a stated scope), these
/// drawn scenarios vary the initial and final parts the scope fixes.
///
/// Checks, Q-8 (weaker: rings of capacity 2, so every
/// steal takes one item), Q-9, Q-11.
#[test]
fn complete_scenarios() {
    scenario::generated_complete::<QueueSubject>(
        model!(),
        Small {
            scenarios: 16,
            threads: 2,
            sizes: [2, 2, 2],
        },
    );
}

// ---------------------------------------------------------------------
// Every scenario of a scope (`check/src/scope.rs`).

/// The scope's queues: two rings of capacity 4 whose counters start two
/// steps below the `u32` wrap, so that every regime but the empty one
/// has crossed it, and a concurrent push or steal from the empty one
/// crosses it.
type ScopeQueues = QueueSubject<4, { u32::MAX - 1 }>;

/// Ring `ring`'s indices, `[steal, real, tail, real as its owner last
/// saw it]`, between the parts: the main thread owns every ring.
fn indices(q: &Queues, ring: usize) -> [u32; 4] {
    q.locals[ring]
        .as_ref()
        .expect("the main thread owns every ring")
        .indices()
}

/// The queue's scope: two owners, thread `t` owning ring `t - 1`, each
/// calling one operation of its alphabet (push into its ring, pop from
/// it, steal from the other ring into its own, push into and pop from the
/// inject queue: every operation of the API that changes state), from
/// each regime of the rings' indices; then the main thread drains every
/// ring and the inject queue, so that what the threads left is checked
/// too.
///
/// The regimes are the situations of the indices the protocol
/// (`src/queue/local.rs`) treats differently, each reached by a
/// sequential prefix on ring 0 (ring 1 is the other owner's):
/// empty, at the wrap; one item (a steal takes it: half of one, rounded
/// up); three items, across the wrap of the counters and of the slots (a
/// steal takes two); full (a push overflows half into the inject queue);
/// the owner's cached head behind the real one (a steal by the other ring
/// since the owner last read it: a push trusts the stale view and must
/// reload it when the ring looks full); the ring turned over (filled and
/// drained, every slot reused, then two items); and both rings holding
/// items (each owner's steal meets the other's pop or push). One operation per thread
/// is what the races need once the regime is set up sequentially: a
/// steal racing a push, pop, overflow or steal of the ring it steals
/// from, or of the ring it steals into; two operations per thread are the
/// nightly's scope.
fn queue_scope(owners: usize, lengths: (usize, usize)) -> scope::Scope<ScopeQueues> {
    use qspec::Op;
    // Push, pop, a steal from each other ring into this one, and the
    // inject queue's push and pop.
    let owner = |own: usize| {
        let mut ops = vec![Op::Push(own, 0), Op::Pop(own)];
        ops.extend((1..owners).map(|k| Op::Steal {
            from: (own + k) % owners,
            into: own,
        }));
        ops.extend([Op::InjectPush(0), Op::InjectPop]);
        ops
    };
    let pushes = |ring: usize, n: usize| vec![Op::Push(ring, 0); n];
    let mut drain = Vec::new();
    for ring in 0..owners {
        drain.extend(vec![Op::Pop(ring); 4]);
    }
    drain.extend(vec![Op::InjectPop; 6]);
    scope::Scope {
        name: match (owners, lengths.1) {
            (2, 1) => "queue-2x1",
            (2, 2) => "queue-2x2",
            (3, 1) => "queue-3x1",
            other => unreachable!("no queue scope {other:?}"),
        },
        threads: (0..owners).map(owner).collect(),
        lengths,
        post: drain,
        ordered_threads: true,
        contract: scope::any_operations,
        shard_of: None,
        // The main job's scope only: one call per thread (see
        // `notify_scope`).
        real_time_orders: owners == 2 && lengths.1 == 1,
        regimes: vec![
            scope::Regime {
                name: "empty_at_the_wrap",
                prefix: vec![],
                reached: |q| {
                    let [steal, real, tail, _] = indices(q, 0);
                    steal == real && real == tail && tail > u32::MAX - 4
                },
            },
            scope::Regime {
                name: "one_item",
                prefix: pushes(0, 1),
                reached: |q| q.locals[0].as_ref().unwrap().len() == 1,
            },
            scope::Regime {
                name: "three_items_across_the_wrap",
                prefix: pushes(0, 3),
                reached: |q| {
                    let [_, real, tail, _] = indices(q, 0);
                    tail.wrapping_sub(real) == 3 && tail < real
                },
            },
            scope::Regime {
                name: "full",
                prefix: pushes(0, 4),
                reached: |q| q.locals[0].as_ref().unwrap().len() == 4,
            },
            scope::Regime {
                name: "owner_view_of_head_stale",
                prefix: {
                    let mut p = pushes(0, 4);
                    p.push(Op::Steal { from: 0, into: 1 });
                    p
                },
                reached: |q| {
                    let [steal, real, _, seen] = indices(q, 0);
                    steal == real && seen != real
                },
            },
            scope::Regime {
                name: "turned_over",
                prefix: {
                    let mut p = pushes(0, 4);
                    p.extend(vec![Op::Pop(0); 4]);
                    p.extend(pushes(0, 2));
                    p
                },
                reached: |q| {
                    let [_, real, tail, _] = indices(q, 0);
                    real == (u32::MAX - 1).wrapping_add(4) && tail.wrapping_sub(real) == 2
                },
            },
            scope::Regime {
                name: "both_rings_hold_items",
                prefix: {
                    let mut p = pushes(0, 2);
                    p.extend(pushes(1, 3));
                    p
                },
                reached: |q| {
                    q.locals[0].as_ref().unwrap().len() == 2
                        && q.locals[1].as_ref().unwrap().len() == 3
                },
            },
        ],
    }
}

/// Every scenario of the queue's scope (`queue_scope`: two owners, one
/// operation each, from seven regimes of the rings' indices, at capacity
/// 4 across the `u32` wrap), complete under loom in both passes; every
/// history checked against `specs/queue.rs`, every item delivered at most
/// once and dropped once. Unlike the generated scenarios (capacity 2), a
/// concurrent steal here takes two items.
///
/// Scope: queue-2x1 (two owners, one operation each of 5, from 7 regimes, capacity 4 across the u32 wrap)
///
/// Checks.
#[test]
fn scope_complete() {
    scope::every_scenario(model!(), queue_scope(2, (1, 1)));
}

/// The queue's scope one owner up (queue-3x1): three owners, thread `t`
/// owning ring `t - 1`, each calling one operation of its alphabet (push
/// into and pop from its ring, steal from either other ring into its own,
/// push into and pop from the inject queue), from the same seven regimes
/// (their prefixes on rings 0 and 1; ring 2 starts empty at the wrap);
/// each scenario run with no preemption bound within the budget or at the highest preemption
/// bound that finishes for it. Three at once are what a steal into a ring
/// that is itself being stolen from needs (tokio's `chained_steal`), and
/// two steals racing a pop of the ring they share.
///
/// Scope: queue-3x1 (three owners, one operation each of 6, from 7 regimes, capacity 4 across the u32 wrap)
///
/// Checks.
#[test]
fn scope_three_owners_complete_or_bounded() {
    scope::every_scenario_complete_or_bounded(model!().nightly(), queue_scope(3, (1, 1)));
}

/// The nightly's scope of the queue from regime `empty_at_the_wrap`: as
/// `scope_complete`, one or two operations per thread, each scenario
/// run with no preemption bound within the budget or at the highest preemption bound that
/// finishes for it. The nightly's scope is one model per regime: the
/// whole of it is too long for one model's nightly budget (each shard's
/// run: verification/queue.md).
///
/// Scope: queue-2x2 from empty_at_the_wrap (two owners, one or two operations each of 5, capacity 4 across the u32 wrap)
///
/// Checks.
#[test]
fn scope_two_ops_from_empty_at_the_wrap() {
    scope::every_scenario_complete_or_bounded(
        model!().nightly(),
        queue_scope(2, (1, 2)).only_regimes(&["empty_at_the_wrap"]),
    );
}

/// The nightly's queue-2x2 shard from regime `one_item`,
/// as `scope_two_ops_from_empty_at_the_wrap`.
///
/// Scope: queue-2x2 from one_item (two owners, one or two operations each of 5, capacity 4 across the u32 wrap)
///
/// Checks.
#[test]
fn scope_two_ops_from_one_item() {
    scope::every_scenario_complete_or_bounded(
        model!().nightly(),
        queue_scope(2, (1, 2)).only_regimes(&["one_item"]),
    );
}

/// The nightly's queue-2x2 shard from regime `three_items_across_the_wrap`,
/// as `scope_two_ops_from_empty_at_the_wrap`.
///
/// Scope: queue-2x2 from three_items_across_the_wrap (two owners, one or two operations each of 5, capacity 4 across the u32 wrap)
///
/// Checks.
#[test]
fn scope_two_ops_from_three_items_across_the_wrap() {
    scope::every_scenario_complete_or_bounded(
        model!().nightly(),
        queue_scope(2, (1, 2)).only_regimes(&["three_items_across_the_wrap"]),
    );
}

/// The nightly's queue-2x2 shard from regime `full`,
/// as `scope_two_ops_from_empty_at_the_wrap`.
///
/// Scope: queue-2x2 from full (two owners, one or two operations each of 5, capacity 4 across the u32 wrap)
///
/// Checks.
#[test]
fn scope_two_ops_from_full() {
    scope::every_scenario_complete_or_bounded(
        model!().nightly(),
        queue_scope(2, (1, 2)).only_regimes(&["full"]),
    );
}

/// The nightly's queue-2x2 shard from regime `owner_view_of_head_stale`,
/// as `scope_two_ops_from_empty_at_the_wrap`.
///
/// Scope: queue-2x2 from owner_view_of_head_stale (two owners, one or two operations each of 5, capacity 4 across the u32 wrap)
///
/// Checks.
#[test]
fn scope_two_ops_from_owner_view_of_head_stale() {
    scope::every_scenario_complete_or_bounded(
        model!().nightly(),
        queue_scope(2, (1, 2)).only_regimes(&["owner_view_of_head_stale"]),
    );
}

/// The nightly's queue-2x2 shard from regime `turned_over`,
/// as `scope_two_ops_from_empty_at_the_wrap`.
///
/// Scope: queue-2x2 from turned_over (two owners, one or two operations each of 5, capacity 4 across the u32 wrap)
///
/// Checks.
#[test]
fn scope_two_ops_from_turned_over() {
    scope::every_scenario_complete_or_bounded(
        model!().nightly(),
        queue_scope(2, (1, 2)).only_regimes(&["turned_over"]),
    );
}

/// The nightly's queue-2x2 shard from regime `both_rings_hold_items`,
/// as `scope_two_ops_from_empty_at_the_wrap`.
///
/// Scope: queue-2x2 from both_rings_hold_items (two owners, one or two operations each of 5, capacity 4 across the u32 wrap)
///
/// Checks.
#[test]
fn scope_two_ops_from_both_rings_hold_items() {
    scope::every_scenario_complete_or_bounded(
        model!().nightly(),
        queue_scope(2, (1, 2)).only_regimes(&["both_rings_hold_items"]),
    );
}
