//! `block_on` and the parker against their peers, side by side:
//!
//! - `block_on/yields_<n>`: seed 001's `Yields(n)`, a future that wakes
//!   itself `n` times before completing, n in {0, 10, 50}, against
//!   `futures::executor::block_on` and `pollster::block_on`.
//! - `park_ping_pong`: two threads hand a turn back and forth 1000 times,
//!   each parking until the other unparks it, against
//!   `std::thread::park`/`Thread::unpark` and crossbeam-utils' `Parker`.
//!
//! Run: `cargo bench --bench block_on`; the ratios in BENCHMARKS.md come from
//! `python3 ci/bench_ratios.py --rounds 3`.

use std::future::Future;
use std::hint::black_box;
use std::pin::Pin;
use std::task::{Context, Poll};

use criterion::{criterion_group, criterion_main, Criterion};
use modelsync::sync::atomic::{AtomicBool, Ordering::*};
use modelsync::sync::{thread, Arc};

/// Wakes itself `.0` times, then completes.
struct Yields(u32);

impl Future for Yields {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.0 == 0 {
            return Poll::Ready(());
        }
        self.0 -= 1;
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

fn bench_block_on(c: &mut Criterion) {
    for n in [0u32, 10, 50] {
        let mut group = c.benchmark_group(format!("block_on/yields_{n}"));
        group.bench_function("modelsync", |b| {
            b.iter(|| modelsync::block_on(Yields(black_box(n))))
        });
        group.bench_function("futures", |b| {
            b.iter(|| futures::executor::block_on(Yields(black_box(n))))
        });
        group.bench_function("pollster", |b| {
            b.iter(|| pollster::block_on(Yields(black_box(n))))
        });
        group.finish();
    }
}

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
    let mut group = c.benchmark_group("park_ping_pong");
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

criterion_group!(benches, bench_block_on, bench_park);
criterion_main!(benches);
