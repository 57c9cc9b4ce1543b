//! Models of the parker (`src/park.rs`).
//!
//! Written once for loom, shuttle and std stress (see `harness/mod.rs`).
//! loom and shuttle do not model time, so no model relies on a timeout.

use crate::harness::{model, Flag, Handoff, Reach};
use modelsync::park::Parker;
use modelsync::sync::atomic::{AtomicBool, Ordering::Relaxed};
use modelsync::sync::{thread, Arc};

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
        let parker = Parker::new();
        let unparker = parker.unparker().clone();
        let data = Handoff::new();
        let parking = Arc::new(AtomicBool::new(false));
        let waker = {
            let (data, parking) = (data.clone(), parking.clone());
            thread::spawn(move || {
                data.write(42);
                // Relaxed: an observation for reachability only.
                let in_park = parking.load(Relaxed);
                unparker.unpark();
                in_park
            })
        };
        // Relaxed: an observation for reachability only.
        parking.store(true, Relaxed);
        parker.park();
        assert_eq!(
            data.read(),
            42,
            "park returned before the unparker's write was visible"
        );
        let in_park = waker.join().unwrap();
        r_during.hit_if(in_park);
        r_before.hit_if(!in_park);
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
        let parker = Parker::new();
        let unparker = parker.unparker().clone();
        let done = Flag::default();
        let t = {
            let done = done.clone();
            thread::spawn(move || {
                unparker.unpark();
                unparker.unpark();
                done.set();
            })
        };
        // Let the unparker run first (loom 0.7 does not start a new thread
        // before the spawner's next scheduling point).
        thread::yield_now();
        let both_before = done.get();
        parker.park();
        t.join().unwrap();
        if r.hit_if(both_before) {
            assert!(
                !parker.has_permit(),
                "two unparks stored more than one permit"
            );
        }
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
