//! The parker against its peers, side by side: `park/ping_pong`, two
//! threads hand a turn back and forth 1000 times, each parking until the
//! other unparks it, against `std::thread::park`/`Thread::unpark` and
//! crossbeam-utils' `Parker`.
//!
//! Run: `cargo bench --bench benches -- park/`; the ratios in
//! BENCHMARKS.md come from `python3 ci/bench_ratios.py`.
//!
//! Target: <= 1.0 against crossbeam-utils and std-thread-park on ping_pong

use criterion::Criterion;
use modelsync::sync::atomic::{AtomicBool, Ordering::*};
use modelsync::sync::{thread, Arc};

const ROUNDS: usize = 1000;

/// One ping-pong of `ROUNDS` turns. `park` blocks the calling side until
/// the other side's `unpark`; `turn` says whose turn it is, so a spurious
/// wake-up (allowed by all three) just parks again.
fn ping_pong<P, U>(make: impl Fn() -> (P, U), park: fn(&P), unpark: fn(&U))
where
    P: Send + 'static,
    U: Send + Sync + Clone + 'static,
{
    let (ping_park, ping_unpark) = make();
    let (pong_park, pong_unpark) = make();
    let pong_turn = Arc::new(AtomicBool::new(false));
    let pong = {
        let pong_turn = pong_turn.clone();
        let ping_unpark = ping_unpark.clone();
        thread::spawn(move || {
            for _ in 0..ROUNDS {
                // Acquire: pairs with ping's Release store handing the turn over.
                while !pong_turn.load(Acquire) {
                    park(&pong_park);
                }
                // Release: hands the turn back to ping's Acquire load.
                pong_turn.store(false, Release);
                unpark(&ping_unpark);
            }
        })
    };
    for _ in 0..ROUNDS {
        // Release: hands the turn to pong's Acquire load.
        pong_turn.store(true, Release);
        unpark(&pong_unpark);
        // Acquire: pairs with pong's Release store.
        while pong_turn.load(Acquire) {
            park(&ping_park);
        }
    }
    pong.join().unwrap();
}

fn bench_park(c: &mut Criterion) {
    let mut group = c.benchmark_group("park/ping_pong");
    group.bench_function("modelsync", |b| {
        b.iter(|| {
            ping_pong(
                || {
                    let parker = modelsync::park::Parker::new();
                    let unparker = parker.unparker().clone();
                    (parker, unparker)
                },
                modelsync::park::Parker::park,
                modelsync::park::Unparker::unpark,
            )
        })
    });
    group.bench_function("crossbeam-utils", |b| {
        b.iter(|| {
            ping_pong(
                || {
                    let parker = crossbeam_utils::sync::Parker::new();
                    let unparker = parker.unparker().clone();
                    (parker, unparker)
                },
                crossbeam_utils::sync::Parker::park,
                crossbeam_utils::sync::Unparker::unpark,
            )
        })
    });
    group.bench_function("std-thread-park", |b| b.iter(std_ping_pong));
    group.finish();
}

/// The same ping-pong on `std::thread::park`, whose parker is the thread's
/// own: each side learns the other's `Thread` handle first.
fn std_ping_pong() {
    let ping = std::thread::current(); // shim-exempt: std's parker is the peer measured here
    let pong_turn = Arc::new(AtomicBool::new(false));
    let (handle_tx, handle_rx) = std::sync::mpsc::channel();
    let pong = {
        let pong_turn = pong_turn.clone();
        thread::spawn(move || {
            handle_tx.send(std::thread::current()).unwrap(); // shim-exempt: std's parker is the peer measured here
            for _ in 0..ROUNDS {
                // Acquire/Release: as in `ping_pong`.
                while !pong_turn.load(Acquire) {
                    std::thread::park(); // shim-exempt: std's parker is the peer measured here
                }
                pong_turn.store(false, Release);
                ping.unpark();
            }
        })
    };
    let pong_thread = handle_rx.recv().unwrap();
    for _ in 0..ROUNDS {
        pong_turn.store(true, Release);
        pong_thread.unpark();
        while pong_turn.load(Acquire) {
            std::thread::park(); // shim-exempt: std's parker is the peer measured here
        }
    }
    pong.join().unwrap();
}

/// Every parker benchmark, for `benches/main.rs`.
pub fn benches(c: &mut Criterion) {
    bench_park(c);
}
