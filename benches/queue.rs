//! The run queue against st3 (tokio's queue, ported) and crossbeam-deque,
//! on st3's own workloads, run side by side in one criterion group each:
//!
//! - `push_pop/N`: one thread pushes N items then pops N, capacity 256,
//!   N = 64 and 256.
//! - `push_only/64`, `pop_only/64`: push_pop/64 with only the pushes, or
//!   only the pops, timed (two clock reads per 64 items included).
//! - `executor`: min(cpus, 4) workers each push 1..=256 tasks (a repeat
//!   count 0..100, deterministic per worker); a popped task is re-pushed with
//!   its count minus one; an idle worker steals half (st3 and crossbeam: at
//!   most 32, their own convention; modelsync: half, its only policy) from a
//!   random peer, and stops once every peer is found empty. Timed from the
//!   moment every worker is ready (a spinning barrier) to the moment the
//!   last one runs out of work: thread start-up and join are not measured.
//!
//! Run: `cargo bench --bench benches -- queue/`; the ratios in
//! BENCHMARKS.md come from `python3 ci/bench_ratios.py`.
//!
//! Target: <= 1.0 against st3 and crossbeam-deque on push_pop/64, push_pop/256, executor

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion};
use modelsync::queue::{Inject, Local, Steal};
use modelsync::sync::atomic::{AtomicUsize, Ordering};
use modelsync::sync::{thread, Arc};

const CAPACITY: usize = 256;

enum StealError {
    Empty,
    Busy,
}

trait Worker: Send + 'static {
    type Stealer: Stealer<Worker = Self>;
    fn new() -> Self;
    fn push(&mut self, item: u64);
    fn pop(&mut self) -> Option<u64>;
    fn stealer(&self) -> Self::Stealer;
}

trait Stealer: Clone + Send + Sync + 'static {
    type Worker;
    fn steal_and_pop(&self, into: &mut Self::Worker) -> Result<u64, StealError>;
}

/// modelsync: a ring plus the inject queue it overflows into (shared by the
/// workers), as an executor would use them.
struct Modelsync {
    local: Local<u64>,
    inject: Arc<Inject<u64>>,
}

impl Worker for Modelsync {
    type Stealer = Steal<u64>;
    fn new() -> Self {
        Modelsync {
            local: Local::with_capacity(CAPACITY),
            inject: Arc::new(Inject::new()),
        }
    }
    fn push(&mut self, item: u64) {
        self.local.push_back(item, &self.inject);
    }
    fn pop(&mut self) -> Option<u64> {
        self.local.pop().or_else(|| self.inject.pop())
    }
    fn stealer(&self) -> Steal<u64> {
        self.local.stealer()
    }
}

impl Stealer for Steal<u64> {
    type Worker = Modelsync;
    fn steal_and_pop(&self, into: &mut Modelsync) -> Result<u64, StealError> {
        match self.steal_into(&mut into.local) {
            Some(item) => Ok(item),
            // `None` with items left means another steal was in progress.
            None if !self.is_empty() => Err(StealError::Busy),
            None => Err(StealError::Empty),
        }
    }
}

impl Worker for st3::fifo::Worker<u64> {
    type Stealer = st3::fifo::Stealer<u64>;
    fn new() -> Self {
        st3::fifo::Worker::new(CAPACITY)
    }
    fn push(&mut self, item: u64) {
        // st3 reports a spuriously full ring while a stealer is preempted;
        // its own benchmark spins likewise.
        let mut item = item;
        while let Err(back) = st3::fifo::Worker::push(self, item) {
            item = back;
        }
    }
    fn pop(&mut self) -> Option<u64> {
        st3::fifo::Worker::pop(self)
    }
    fn stealer(&self) -> Self::Stealer {
        st3::fifo::Worker::stealer(self)
    }
}

impl Stealer for st3::fifo::Stealer<u64> {
    type Worker = st3::fifo::Worker<u64>;
    fn steal_and_pop(&self, into: &mut Self::Worker) -> Result<u64, StealError> {
        st3::fifo::Stealer::steal_and_pop(self, into, |n| (n - n / 2).min(32))
            .map(|(item, _)| item)
            .map_err(|e| match e {
                st3::StealError::Empty => StealError::Empty,
                st3::StealError::Busy => StealError::Busy,
            })
    }
}

struct Crossbeam(crossbeam_deque::Worker<u64>);

impl Worker for Crossbeam {
    type Stealer = crossbeam_deque::Stealer<u64>;
    fn new() -> Self {
        Crossbeam(crossbeam_deque::Worker::new_fifo())
    }
    fn push(&mut self, item: u64) {
        self.0.push(item);
    }
    fn pop(&mut self) -> Option<u64> {
        self.0.pop()
    }
    fn stealer(&self) -> Self::Stealer {
        self.0.stealer()
    }
}

impl Stealer for crossbeam_deque::Stealer<u64> {
    type Worker = Crossbeam;
    fn steal_and_pop(&self, into: &mut Crossbeam) -> Result<u64, StealError> {
        match self.steal_batch_and_pop(&into.0) {
            crossbeam_deque::Steal::Success(item) => Ok(item),
            crossbeam_deque::Steal::Empty => Err(StealError::Empty),
            crossbeam_deque::Steal::Retry => Err(StealError::Busy),
        }
    }
}

fn push_pop<W: Worker>(worker: &mut W, n: u64) {
    for i in 0..n {
        worker.push(black_box(i));
    }
    for _ in 0..n {
        black_box(worker.pop());
    }
}

fn bench_push_pop(c: &mut Criterion) {
    for n in [64u64, 256] {
        let mut group = c.benchmark_group(format!("queue/push_pop/{n}"));
        let mut ours = Modelsync::new();
        group.bench_function(BenchmarkId::from_parameter("modelsync"), |b| {
            b.iter(|| push_pop(&mut ours, n))
        });
        let mut st3 = <st3::fifo::Worker<u64> as Worker>::new();
        group.bench_function(BenchmarkId::from_parameter("st3"), |b| {
            b.iter(|| push_pop(&mut st3, n))
        });
        let mut crossbeam = Crossbeam::new();
        group.bench_function(BenchmarkId::from_parameter("crossbeam-deque"), |b| {
            b.iter(|| push_pop(&mut crossbeam, n))
        });
        group.finish();
    }
}

/// push_pop/64 split in two: the time of the 64 pushes alone
/// (`push_only/64`) and of the 64 pops alone (`pop_only/64`), the other
/// half run untimed, so that BENCHMARKS.md can say which half a gap is in.
fn push_or_pop_only<W: Worker>(worker: &mut W, iters: u64, time_pushes: bool) -> Duration {
    const N: u64 = 64;
    let mut timed = Duration::ZERO;
    for _ in 0..iters {
        let start = Instant::now();
        for i in 0..N {
            worker.push(black_box(i));
        }
        let pushed = Instant::now();
        for _ in 0..N {
            black_box(worker.pop());
        }
        let popped = Instant::now();
        timed += if time_pushes {
            pushed - start
        } else {
            popped - pushed
        };
    }
    timed
}

fn bench_push_or_pop_only(c: &mut Criterion) {
    for (name, time_pushes) in [("queue/push_only/64", true), ("queue/pop_only/64", false)] {
        let mut group = c.benchmark_group(name);
        let mut ours = Modelsync::new();
        group.bench_function(BenchmarkId::from_parameter("modelsync"), |b| {
            b.iter_custom(|iters| push_or_pop_only(&mut ours, iters, time_pushes))
        });
        let mut st3 = <st3::fifo::Worker<u64> as Worker>::new();
        group.bench_function(BenchmarkId::from_parameter("st3"), |b| {
            b.iter_custom(|iters| push_or_pop_only(&mut st3, iters, time_pushes))
        });
        let mut crossbeam = Crossbeam::new();
        group.bench_function(BenchmarkId::from_parameter("crossbeam-deque"), |b| {
            b.iter_custom(|iters| push_or_pop_only(&mut crossbeam, iters, time_pushes))
        });
        group.finish();
    }
}

/// xorshift64*: deterministic per worker, so every queue gets the same work.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) % n
    }
}

/// One run of st3's executor workload; returns the time from the moment
/// every worker is ready to the moment the last one runs out of work.
fn executor<W: Worker>() -> Duration {
    const MAX_TASKS_PER_WORKER: u64 = 256;
    const MAX_REPEAT: u64 = 100;
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(2, 4);
    let queues: Vec<W> = (0..workers).map(|_| W::new()).collect();
    let stealers: Arc<Vec<W::Stealer>> = Arc::new(queues.iter().map(W::stealer).collect());
    // A spinning barrier: a sleeping one would add the kernel's wake-up
    // latency (tens of microseconds, as long as the workload) to the run.
    let ready = Arc::new(AtomicUsize::new(0));

    let handles: Vec<_> = queues
        .into_iter()
        .enumerate()
        .map(|(id, mut queue)| {
            let (stealers, ready) = (stealers.clone(), ready.clone());
            thread::spawn(move || {
                let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ (id as u64 + 1));
                for _ in 0..1 + rng.below(MAX_TASKS_PER_WORKER) {
                    queue.push(rng.below(MAX_REPEAT));
                }
                // Relaxed: the barrier only aligns start times; the items
                // each worker pushed are its own until a steal acquires them.
                ready.fetch_add(1, Ordering::Relaxed);
                while ready.load(Ordering::Relaxed) < workers {
                    modelsync::sync::spin_loop();
                }
                let start = Instant::now();
                let mut peers: Vec<usize> = (0..workers).filter(|&p| p != id).collect();
                'work: loop {
                    if let Some(repeat) = queue.pop() {
                        if repeat > 0 {
                            queue.push(repeat - 1);
                        }
                        continue;
                    }
                    let mut pool = peers.len();
                    while pool > 0 {
                        let pick = rng.below(pool as u64) as usize;
                        match stealers[peers[pick]].steal_and_pop(&mut queue) {
                            Ok(repeat) => {
                                if repeat > 0 {
                                    queue.push(repeat - 1);
                                }
                                continue 'work;
                            }
                            Err(StealError::Empty) => {
                                pool -= 1;
                                peers.swap(pick, pool);
                            }
                            Err(StealError::Busy) => {}
                        }
                    }
                    return (start, Instant::now());
                }
            })
        })
        .collect();
    // Thread exit and join are not part of the workload.
    let spans: Vec<(Instant, Instant)> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    let first_start = spans.iter().map(|&(start, _)| start).min().unwrap();
    let last_end = spans.iter().map(|&(_, end)| end).max().unwrap();
    last_end - first_start
}

fn bench_executor(c: &mut Criterion) {
    let mut group = c.benchmark_group("queue/executor");
    group.bench_function("modelsync", |b| {
        b.iter_custom(|iters| (0..iters).map(|_| executor::<Modelsync>()).sum())
    });
    group.bench_function("st3", |b| {
        b.iter_custom(|iters| {
            (0..iters)
                .map(|_| executor::<st3::fifo::Worker<u64>>())
                .sum()
        })
    });
    group.bench_function("crossbeam-deque", |b| {
        b.iter_custom(|iters| (0..iters).map(|_| executor::<Crossbeam>()).sum())
    });
    group.finish();
}

/// Every queue benchmark, for `benches/main.rs`.
pub fn benches(c: &mut Criterion) {
    bench_push_pop(c);
    bench_push_or_pop_only(c);
    bench_executor(c);
}
