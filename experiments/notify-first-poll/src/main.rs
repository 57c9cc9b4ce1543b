//! The `notify_one` workload of `benches/notify.rs` outside criterion, one
//! implementation per process, counting how the wake-ups reach the
//! waiters (BENCHMARKS.md, Notify, "the first poll takes a permit stored
//! after its load").
//!
//! `cargo run --release -- <ours|tokio> <waiters> [iterations] [--count]`
//! prints the mean and median time of an iteration (500 wake-ups) and,
//! with `--count`, how many polls per iteration returned `Pending` (a
//! waiter that registered and slept) and how many completed at their
//! first poll (a waiter that took the permit). The counting wrapper adds
//! an atomic add per poll, which shifts the balance a little; run without
//! it for times. To compare two versions of this crate, build this at
//! each commit (`git worktree add`) and alternate the binaries, e.g.
//!
//! ```text
//! for round in 1 2 3 4 5; do for w in 10 50 100 200 500; do
//!   old/notify-first-poll ours $w; new/notify-first-poll ours $w
//!   new/notify-first-poll tokio $w
//! done; done
//! ```

use std::future::{poll_fn, Future};
use std::pin::pin;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Instant;

const WAKEUPS: usize = 500;

static PENDING: AtomicUsize = AtomicUsize::new(0);
static READY_AT_FIRST_POLL: AtomicUsize = AtomicUsize::new(0);

trait Notifier: Send + Sync + 'static {
    fn new() -> Self;
    fn notify_one(&self);
    fn notified(&self) -> impl Future<Output = ()> + Send;
}

/// Both `Notify`s have the same inherent methods; the trait only names them.
macro_rules! notifier {
    ($notify:ty) => {
        impl Notifier for $notify {
            fn new() -> Self {
                <$notify>::new()
            }
            fn notify_one(&self) {
                <$notify>::notify_one(self)
            }
            fn notified(&self) -> impl Future<Output = ()> + Send {
                <$notify>::notified(self)
            }
        }
    };
}

notifier!(modelsync::notify::Notify);
notifier!(tokio::sync::Notify);

/// Awaits `future`, counting its `Pending` polls and whether its first
/// poll was ready.
async fn counted(future: impl Future<Output = ()>) {
    let mut future = pin!(future);
    let mut first = true;
    poll_fn(|cx| {
        let poll = future.as_mut().poll(cx);
        if poll.is_pending() {
            PENDING.fetch_add(1, Relaxed);
        } else if first {
            READY_AT_FIRST_POLL.fetch_add(1, Relaxed);
        }
        first = false;
        poll
    })
    .await
}

/// Iteration times in ns, as the benchmark runs them: a 6-worker runtime,
/// `waiters` looping tasks, `notify_one` until 500 wake-ups.
fn run<N: Notifier>(waiters: usize, iterations: usize, count: bool) -> Vec<f64> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(6)
        .build()
        .unwrap();
    let notify = Arc::new(N::new());
    let woken = Arc::new(AtomicUsize::new(0));
    for _ in 0..waiters {
        let (notify, woken) = (notify.clone(), woken.clone());
        rt.spawn(async move {
            loop {
                if count {
                    counted(notify.notified()).await;
                } else {
                    notify.notified().await;
                }
                woken.fetch_add(1, Relaxed);
            }
        });
    }
    let times = (0..iterations)
        .map(|_| {
            let start = Instant::now();
            woken.store(0, Relaxed);
            while woken.load(Relaxed) < WAKEUPS {
                notify.notify_one();
            }
            start.elapsed().as_nanos() as f64
        })
        .collect();
    rt.shutdown_background();
    times
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let count = args.iter().any(|a| a == "--count");
    let args: Vec<&String> = args.iter().filter(|a| *a != "--count").collect();
    let usage = "usage: notify-first-poll <ours|tokio> <waiters> [iterations] [--count]";
    let which = args.first().expect(usage).as_str();
    let waiters: usize = args.get(1).expect(usage).parse().expect(usage);
    let iterations: usize = args.get(2).map_or(1500, |n| n.parse().expect(usage));
    let mut times = match which {
        "ours" => run::<modelsync::notify::Notify>(waiters, iterations, count),
        "tokio" => run::<tokio::sync::Notify>(waiters, iterations, count),
        _ => panic!("{usage}"),
    };
    let mean = times.iter().sum::<f64>() / times.len() as f64;
    times.sort_by(f64::total_cmp);
    let median = times[times.len() / 2];
    print!(
        "{which} waiters={waiters} iterations={iterations}: mean {:.1} us, median {:.1} us",
        mean / 1e3,
        median / 1e3
    );
    if count {
        let per = |c: &AtomicUsize| c.load(Relaxed) as f64 / iterations as f64;
        print!(
            "; per iteration: {:.1} pending polls, {:.1} ready at first poll",
            per(&PENDING),
            per(&READY_AT_FIRST_POLL)
        );
    }
    println!();
}
