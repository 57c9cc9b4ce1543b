//! `Notify` against `tokio::sync::Notify` and event-listener, side by side:
//!
//! - `notify/notify_one/<n>` and `notify/notify_waiters/<n>`: tokio's
//!   `sync_notify` workloads. A multi-thread tokio runtime with 6 workers
//!   runs `n` tasks (n in 10, 50, 100, 200, 500) that loop
//!   `notified().await; count += 1`; an iteration calls `notify_one` (or
//!   `notify_waiters`) until 500 wake-ups were counted.
//! - `notify/notify_and_wait`: event-listener's workload: 8,000 listeners
//!   (here `Notified` futures, there `EventListener`s) are created, all are
//!   notified at once, then each is waited for on this thread. Ours uses
//!   `notify_waiters`, event-listener `notify(8000)`; tokio's `Notify` runs
//!   the same code as ours.
//! - `notify/drop_notifier/<n>`: seed 000's drop notifier, for 10,000 and
//!   100,000 pairs: a task that finishes and notifies from its `Drop`, and
//!   a task that waits for it, on a multi-thread tokio runtime; with our
//!   `Notify`, tokio's, and (the seed's comparison) our and tokio's
//!   oneshot channel as the notifier. (The seed's tasks slept first;
//!   these finish at their first poll: there are no timers here.)
//!
//! Run: `cargo bench --bench benches -- notify/`; the ratios in
//! BENCHMARKS.md come from `python3 ci/bench_ratios.py`.
//!
//! Target: <= 1.0 against tokio on notify_one/10, notify_one/50, notify_one/100, notify_one/200, notify_one/500, notify_waiters/10, notify_waiters/50, notify_waiters/100, notify_waiters/200, notify_waiters/500, notify_and_wait, drop_notifier/10000, drop_notifier/100000
//! Target: <= 1.0 against event-listener on notify_and_wait

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use criterion::Criterion;
use modelsync::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use modelsync::sync::Arc;

const WAKEUPS: usize = 500;

fn runtime(workers: usize) -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .build()
        .unwrap()
}

/// tokio's `sync_notify`: `waiters` looping tasks, notified until 500
/// wake-ups, with `$notify` (`notify_one` or `notify_waiters`).
macro_rules! sync_notify {
    ($group:expr, $name:expr, $notify_type:ty, $waiters:expr, $method:ident) => {{
        let rt = runtime(6);
        let notify = Arc::new(<$notify_type>::new());
        let counter = Arc::new(AtomicUsize::new(0));
        for _ in 0..$waiters {
            let (notify, counter) = (notify.clone(), counter.clone());
            rt.spawn(async move {
                loop {
                    notify.notified().await;
                    counter.fetch_add(1, Relaxed);
                }
            });
        }
        $group.bench_function($name, |b| {
            b.iter(|| {
                counter.store(0, Relaxed);
                while counter.load(Relaxed) < WAKEUPS {
                    notify.$method();
                }
            })
        });
    }};
}

fn bench_sync_notify(c: &mut Criterion) {
    for waiters in [10usize, 50, 100, 200, 500] {
        let mut group = c.benchmark_group(format!("notify/notify_one/{waiters}"));
        sync_notify!(
            group,
            "modelsync",
            modelsync::notify::Notify,
            waiters,
            notify_one
        );
        sync_notify!(group, "tokio", tokio::sync::Notify, waiters, notify_one);
        group.finish();
        let mut group = c.benchmark_group(format!("notify/notify_waiters/{waiters}"));
        sync_notify!(
            group,
            "modelsync",
            modelsync::notify::Notify,
            waiters,
            notify_waiters
        );
        sync_notify!(group, "tokio", tokio::sync::Notify, waiters, notify_waiters);
        group.finish();
    }
}

const LISTENERS: usize = 8000;

fn bench_notify_and_wait(c: &mut Criterion) {
    let mut group = c.benchmark_group("notify/notify_and_wait");
    let notify = modelsync::notify::Notify::new();
    group.bench_function("modelsync", |b| {
        b.iter(|| {
            let waiting: Vec<_> = (0..LISTENERS).map(|_| notify.notified()).collect();
            notify.notify_waiters();
            for w in waiting {
                modelsync::block_on(w);
            }
        })
    });
    let notify = tokio::sync::Notify::new();
    group.bench_function("tokio", |b| {
        b.iter(|| {
            let waiting: Vec<_> = (0..LISTENERS).map(|_| notify.notified()).collect();
            notify.notify_waiters();
            for w in waiting {
                modelsync::block_on(w);
            }
        })
    });
    let event = event_listener::Event::new();
    let mut listeners = Vec::with_capacity(LISTENERS);
    group.bench_function("event-listener", |b| {
        b.iter(|| {
            listeners.extend(std::iter::repeat_with(|| event.listen()).take(LISTENERS));
            event.notify(LISTENERS);
            for listener in listeners.drain(..) {
                event_listener::Listener::wait(listener);
            }
        })
    });
    group.finish();
}

/// A task that finishes at its first poll and runs `on_drop` when dropped:
/// seed 000's connection future, without the sleep.
struct DropNotifier<F: FnMut()>(F);

impl<F: FnMut() + Unpin> Future for DropNotifier<F> {
    type Output = ();
    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<()> {
        Poll::Ready(())
    }
}

impl<F: FnMut()> Drop for DropNotifier<F> {
    fn drop(&mut self) {
        (self.0)();
    }
}

async fn join_all(handles: Vec<tokio::task::JoinHandle<()>>) {
    for h in handles {
        h.await.unwrap();
    }
}

fn bench_drop_notifier(c: &mut Criterion) {
    let rt = runtime(std::thread::available_parallelism().map_or(2, |n| n.get()));
    for pairs in [10_000usize, 100_000] {
        let mut group = c.benchmark_group(format!("notify/drop_notifier/{pairs}"));
        group.sample_size(10);
        group.bench_function("modelsync", |b| {
            b.iter(|| {
                rt.block_on(async {
                    let mut waiting = Vec::with_capacity(pairs);
                    for _ in 0..pairs {
                        let notify = Arc::new(modelsync::notify::Notify::new());
                        let n = notify.clone();
                        tokio::spawn(DropNotifier(move || n.notify_one()));
                        waiting.push(tokio::spawn(async move { notify.notified().await }));
                    }
                    join_all(waiting).await;
                })
            })
        });
        group.bench_function("tokio", |b| {
            b.iter(|| {
                rt.block_on(async {
                    let mut waiting = Vec::with_capacity(pairs);
                    for _ in 0..pairs {
                        let notify = Arc::new(tokio::sync::Notify::new());
                        let n = notify.clone();
                        tokio::spawn(DropNotifier(move || n.notify_one()));
                        waiting.push(tokio::spawn(async move { notify.notified().await }));
                    }
                    join_all(waiting).await;
                })
            })
        });
        group.bench_function("modelsync-oneshot", |b| {
            b.iter(|| {
                rt.block_on(async {
                    let mut waiting = Vec::with_capacity(pairs);
                    for _ in 0..pairs {
                        let (tx, rx) = modelsync::oneshot::channel::<()>();
                        let mut tx = Some(tx);
                        tokio::spawn(DropNotifier(move || drop(tx.take())));
                        waiting.push(tokio::spawn(async move {
                            let _ = rx.await;
                        }));
                    }
                    join_all(waiting).await;
                })
            })
        });
        group.bench_function("tokio-oneshot", |b| {
            b.iter(|| {
                rt.block_on(async {
                    let mut waiting = Vec::with_capacity(pairs);
                    for _ in 0..pairs {
                        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
                        let mut tx = Some(tx);
                        tokio::spawn(DropNotifier(move || drop(tx.take())));
                        waiting.push(tokio::spawn(async move {
                            let _ = rx.await;
                        }));
                    }
                    join_all(waiting).await;
                })
            })
        });
        group.finish();
    }
}

/// Every Notify benchmark, for `benches/main.rs`.
pub fn benches(c: &mut Criterion) {
    bench_sync_notify(c);
    bench_notify_and_wait(c);
    bench_drop_notifier(c);
}
