//! The runtime against tokio's multi-thread runtime, side by side, both with
//! 4 workers: tokio's `rt_multi_threaded` workloads.
//!
//! - `runtime/spawn_many_local`: 10,000 tasks spawned from inside a task.
//! - `runtime/spawn_many_remote_idle`: 10,000 tasks spawned from outside
//!   while the workers are idle, then joined.
//! - `runtime/yield_many`: 200 tasks x 1,000 `yield_now`.
//! - `runtime/ping_pong`: 1,000 rounds of a task spawning a task and the two
//!   exchanging two oneshots (each runtime with its own crate's oneshot).
//! - `runtime/chained_spawn`: a chain of 1,000 tasks, each spawning the
//!   next.
//!
//! Completion is signalled over `std::sync::mpsc` in both, as in tokio's
//! benchmark.
//!
//! Run: `cargo bench --bench benches -- runtime/`; the ratios in
//! BENCHMARKS.md come from `python3 ci/bench_ratios.py`.
//!
//! - `runtime/cost_of_async`: seed 004's fake server (see
//!   `cost_of_async`): a hand-written poll loop (`sync_poll_loop`) against
//!   the same server as async tasks on our runtime and on tokio's
//!   current-thread runtime; the ratio to `sync_poll_loop` is the
//!   async/sync ratio (seed 004's, quoted in BENCHMARKS.md, is the target).
//!
//! - `runtime/yield_latency`: on a runtime of one worker where a task
//!   yields in a loop, doing a fixed chunk of work per poll, the time from
//!   spawning a task from outside the runtime to that task's first poll.
//!   `one_poll` is one chunk of work alone, run on the benchmark's thread:
//!   the ratio against it is the latency in the yielding task's polls
//!   (`yield_now`'s fairness to the inject queue, R-9).
//!
//! Target: <= 3.5 against sync_poll_loop on cost_of_async
//! Target: <= 1.0 against tokio on spawn_many_local, spawn_many_remote_idle, yield_many, ping_pong, chained_spawn
//! Target: <= 2.0 against one_poll on yield_latency

use std::sync::mpsc; // shim-exempt: the benchmark's completion signal, the same for both runtimes

use criterion::Criterion;
use modelsync::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use modelsync::sync::Arc;

const WORKERS: usize = 4;
const NUM_SPAWN: usize = 10_000;
const NUM_YIELD: usize = 1_000;
const TASKS_PER_CPU: usize = 50;
const NUM_PINGS: usize = 1_000;
const CHAIN_DEPTH: usize = 1_000;

fn ours() -> modelsync::runtime::Runtime {
    modelsync::runtime::Builder::new_multi_thread()
        .worker_threads(WORKERS)
        .build()
        .unwrap()
}

fn tokio_rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(WORKERS)
        .build()
        .unwrap()
}

/// The five workloads, written once for a runtime given as a module path
/// with `spawn`, `yield_now` and `oneshot::channel`.
macro_rules! workloads {
    ($name:ident, $spawn:path, $yield_now:path, $oneshot:path) => {
        mod $name {
            use super::*;

            pub fn spawn_many_local(rt: &RtOf) {
                let (tx, rx) = mpsc::sync_channel(1000);
                let rem = Arc::new(AtomicUsize::new(0));
                rem.store(NUM_SPAWN, Relaxed);
                rt.spawn(async move {
                    for _ in 0..NUM_SPAWN {
                        let tx = tx.clone();
                        let rem = rem.clone();
                        $spawn(async move {
                            if 1 == rem.fetch_sub(1, Relaxed) {
                                tx.send(()).unwrap();
                            }
                        });
                    }
                });
                rx.recv().unwrap();
            }

            pub fn spawn_many_remote_idle(rt: &RtOf) {
                let handles: Vec<_> = (0..NUM_SPAWN).map(|_| rt.spawn(async {})).collect();
                rt.block_on(async {
                    for handle in handles {
                        handle.await.unwrap();
                    }
                });
            }

            pub fn yield_many(rt: &RtOf) {
                let tasks = TASKS_PER_CPU * WORKERS;
                let (tx, rx) = mpsc::sync_channel(tasks);
                for _ in 0..tasks {
                    let tx = tx.clone();
                    rt.spawn(async move {
                        for _ in 0..NUM_YIELD {
                            $yield_now().await;
                        }
                        tx.send(()).unwrap();
                    });
                }
                for _ in 0..tasks {
                    rx.recv().unwrap();
                }
            }

            pub fn ping_pong(rt: &RtOf) {
                let (done_tx, done_rx) = mpsc::sync_channel(1000);
                let rem = Arc::new(AtomicUsize::new(0));
                rem.store(NUM_PINGS, Relaxed);
                rt.block_on(async {
                    $spawn(async move {
                        for _ in 0..NUM_PINGS {
                            let rem = rem.clone();
                            let done_tx = done_tx.clone();
                            $spawn(async move {
                                let (tx1, rx1) = $oneshot();
                                let (tx2, rx2) = $oneshot();
                                $spawn(async move {
                                    rx1.await.unwrap();
                                    tx2.send(()).unwrap();
                                });
                                tx1.send(()).unwrap();
                                rx2.await.unwrap();
                                if 1 == rem.fetch_sub(1, Relaxed) {
                                    done_tx.send(()).unwrap();
                                }
                            });
                        }
                    })
                    .await
                    .unwrap();
                });
                done_rx.recv().unwrap();
            }

            pub fn chained_spawn(rt: &RtOf) {
                fn iter(done_tx: mpsc::SyncSender<()>, n: usize) {
                    if n == 0 {
                        done_tx.send(()).unwrap();
                    } else {
                        $spawn(async move { iter(done_tx, n - 1) });
                    }
                }
                let (done_tx, done_rx) = mpsc::sync_channel(1000);
                rt.block_on(async move {
                    $spawn(async move { iter(done_tx, CHAIN_DEPTH) });
                    done_rx.recv().unwrap();
                });
            }
        }
    };
}

mod ours_rt {
    use super::*;
    pub type RtOf = modelsync::runtime::Runtime;
    workloads!(
        w,
        modelsync::runtime::spawn,
        modelsync::runtime::yield_now,
        modelsync::oneshot::channel
    );
    pub use w::*;
}

mod tokio_side {
    use super::*;
    pub type RtOf = tokio::runtime::Runtime;
    workloads!(
        w,
        tokio::spawn,
        tokio::task::yield_now,
        tokio::sync::oneshot::channel
    );
    pub use w::*;
}

macro_rules! side_by_side {
    ($c:expr, $workload:ident) => {{
        let mut group = $c.benchmark_group(concat!("runtime/", stringify!($workload)));
        group.sample_size(20);
        let rt = ours();
        group.bench_function("modelsync", |b| b.iter(|| ours_rt::$workload(&rt)));
        drop(rt);
        let rt = tokio_rt();
        group.bench_function("tokio", |b| b.iter(|| tokio_side::$workload(&rt)));
        drop(rt);
        group.finish();
    }};
}

/// Every runtime benchmark, for `benches/main.rs`.
pub fn benches(c: &mut Criterion) {
    side_by_side!(c, spawn_many_local);
    side_by_side!(c, spawn_many_remote_idle);
    side_by_side!(c, yield_many);
    side_by_side!(c, ping_pong);
    side_by_side!(c, chained_spawn);
    bench_yield_latency(c);
    bench_cost_of_async(c);
}

/// The yielding task's work per poll: spins over a counter, as a task does
/// a chunk of work between two yields.
fn one_chunk_of_work() {
    for i in 0..30_000u32 {
        std::hint::black_box(i);
    }
}

/// `runtime/yield_latency`, written once for both runtimes: starts a task
/// that yields in a loop on the only worker (until the runtime is dropped:
/// each yield lets the worker see the shutdown), and returns the
/// measurement, the total time over `iters` spawns from this thread from
/// each spawn to the spawned task's first poll.
macro_rules! yield_latency {
    ($rt:expr, $yield_now:path) => {{
        let rt = $rt;
        drop(rt.spawn(async {
            loop {
                one_chunk_of_work();
                $yield_now().await;
            }
        }));
        let mut random = 0x9E37_79B9u32;
        move |iters: u64| {
            let mut total = std::time::Duration::ZERO;
            for _ in 0..iters {
                // A pause of up to a few chunks, not measured, so that the
                // spawn lands anywhere in the yielding task's loop rather
                // than just after the previous spawned task ran.
                random ^= random << 13;
                random ^= random >> 17;
                random ^= random << 5;
                let pause = std::time::Duration::from_nanos(u64::from(random % 40_000));
                let paused_at = std::time::Instant::now();
                while paused_at.elapsed() < pause {
                    std::hint::spin_loop(); // shim-exempt: the benchmark's own pause
                }
                let (tx, rx) = mpsc::sync_channel(1);
                let spawned_at = std::time::Instant::now();
                drop(rt.spawn(async move { tx.send(std::time::Instant::now()).unwrap() }));
                total += rx.recv().unwrap() - spawned_at;
            }
            total
        }
    }};
}

fn bench_yield_latency(c: &mut Criterion) {
    let mut group = c.benchmark_group("runtime/yield_latency");
    group.sample_size(20);
    group.bench_function("one_poll", |b| b.iter(one_chunk_of_work));
    let ours = modelsync::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .build()
        .unwrap();
    let latency = yield_latency!(&ours, modelsync::runtime::yield_now);
    group.bench_function("modelsync", |b| b.iter_custom(latency));
    drop(ours);
    let tokio_rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .build()
        .unwrap();
    let latency = yield_latency!(&tokio_rt, tokio::task::yield_now);
    group.bench_function("tokio", |b| b.iter_custom(latency));
    drop(tokio_rt);
    group.finish();
}

/// Seed 004's cost-of-async workload: a fake server over in-memory I/O
/// objects serving 32 request/response transactions, written once as a
/// hand-written poll loop and once as async tasks (an acceptor task that
/// spawns one task per connection), run on our runtime (one worker; the
/// caller awaits the acceptor's handle) and on tokio's current-thread
/// runtime. Every I/O call on a fake object first reports `WouldBlock` and
/// makes the object ready in the registry (as if the data arrived), so
/// each transaction goes through the event loop or the waker once per
/// operation; both versions make the same I/O calls (asserted).
mod cost_of_async {
    use std::future::Future;
    use std::pin::Pin;
    use std::sync::Mutex; // shim-exempt: the fake reactor's registry, the same for every version
    use std::task::{Context, Poll, Waker};

    use modelsync::sync::Arc;

    pub const CONNECTIONS: usize = 32;

    /// What a fake I/O object is waiting for, by token (0: the listener).
    #[derive(Default)]
    pub struct Registry {
        ready: Vec<usize>,
        wakers: Vec<(usize, Waker)>,
        pub calls: [usize; 4], // accept, read, write, poll
    }

    impl Registry {
        /// The object `token` becomes ready: queued for the poll loop, or
        /// its waker woken.
        fn make_ready(&mut self, token: usize) -> Option<Waker> {
            match self.wakers.iter().position(|(t, _)| *t == token) {
                Some(i) => Some(self.wakers.swap_remove(i).1),
                None => {
                    self.ready.push(token);
                    None
                }
            }
        }
    }

    /// The fake I/O layer: a listener with `CONNECTIONS` pending
    /// connections, each sending one request line.
    pub struct Io {
        registry: Mutex<Registry>,
        /// Per token: whether its next call blocks first.
        armed: Mutex<Vec<bool>>,
        accepted: Mutex<usize>,
    }

    pub enum Op {
        Accept,
        Read,
        Write,
    }

    impl Io {
        pub fn new() -> Arc<Io> {
            Arc::new(Io {
                registry: Mutex::new(Registry::default()),
                armed: Mutex::new(vec![true; CONNECTIONS + 1]),
                accepted: Mutex::new(0),
            })
        }

        /// One I/O call: `None` is `WouldBlock` (the object is made ready).
        /// Accept returns the new connection's token.
        fn call(&self, token: usize, op: Op) -> Option<usize> {
            let index = match op {
                Op::Accept => 0,
                Op::Read => 1,
                Op::Write => 2,
            };
            self.registry.lock().unwrap().calls[index] += 1;
            let mut armed = self.armed.lock().unwrap();
            let blocks = armed[token];
            armed[token] = !blocks;
            if blocks {
                drop(armed);
                let waker = self.registry.lock().unwrap().make_ready(token);
                if let Some(waker) = waker {
                    waker.wake();
                }
                return None;
            }
            match op {
                Op::Accept => {
                    let mut accepted = self.accepted.lock().unwrap();
                    if *accepted == CONNECTIONS {
                        return Some(0);
                    }
                    *accepted += 1;
                    Some(*accepted)
                }
                Op::Read => Some(b"hello\n".len()),
                Op::Write => Some(b"world\n".len()),
            }
        }

        pub fn calls(&self) -> [usize; 4] {
            self.registry.lock().unwrap().calls
        }
    }

    /// The hand-written poll loop: one state per connection.
    pub fn run_sync(io: &Io) {
        let mut state = [0u8; CONNECTIONS + 1]; // 0 read, 1 write, 2 done
        let mut done = 0;
        let mut ready = vec![0usize];
        while done < CONNECTIONS {
            for token in std::mem::take(&mut ready) {
                if token == 0 {
                    loop {
                        match io.call(0, Op::Accept) {
                            Some(0) => break,
                            Some(conn) => ready.push(conn),
                            None => break,
                        }
                    }
                    continue;
                }
                loop {
                    let op = match state[token] {
                        0 => Op::Read,
                        1 => Op::Write,
                        _ => break,
                    };
                    if io.call(token, op).is_none() {
                        break;
                    }
                    state[token] += 1;
                    if state[token] == 2 {
                        done += 1;
                    }
                }
            }
            let mut registry = io.registry.lock().unwrap();
            registry.calls[3] += 1;
            ready.append(&mut registry.ready);
        }
    }

    /// An I/O call as a future: `WouldBlock` registers the waker, which
    /// the (instant) readiness wakes.
    struct IoCall<'a> {
        io: &'a Io,
        token: usize,
        op: fn() -> Op,
    }

    impl Future for IoCall<'_> {
        type Output = usize;
        fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<usize> {
            {
                let mut registry = self.io.registry.lock().unwrap();
                if let Some(i) = registry.ready.iter().position(|t| *t == self.token) {
                    registry.ready.swap_remove(i);
                } else {
                    registry.wakers.push((self.token, cx.waker().clone()));
                }
            }
            match self.io.call(self.token, (self.op)()) {
                Some(n) => {
                    let mut registry = self.io.registry.lock().unwrap();
                    registry.wakers.retain(|(t, _)| *t != self.token);
                    Poll::Ready(n)
                }
                None => Poll::Pending,
            }
        }
    }

    async fn connection(io: Arc<Io>, token: usize) {
        IoCall {
            io: &io,
            token,
            op: || Op::Read,
        }
        .await;
        IoCall {
            io: &io,
            token,
            op: || Op::Write,
        }
        .await;
    }

    /// The async server, generic over the runtime's `spawn`.
    pub async fn run_async<H>(io: Arc<Io>, spawn: impl Fn(Arc<Io>, usize) -> H)
    where
        H: Future,
    {
        let mut handles = Vec::with_capacity(CONNECTIONS);
        loop {
            match (IoCall {
                io: &io,
                token: 0,
                op: || Op::Accept,
            })
            .await
            {
                0 => break,
                conn => handles.push(spawn(io.clone(), conn)),
            }
        }
        for handle in handles {
            handle.await;
        }
    }

    pub fn modelsync_server(io: Arc<Io>) -> impl Future<Output = ()> + Send {
        run_async(io, |io, conn| {
            let handle = modelsync::runtime::spawn(connection(io, conn));
            async move { handle.await.unwrap() }
        })
    }

    pub fn tokio_server(io: Arc<Io>) -> impl Future<Output = ()> {
        run_async(io, |io, conn| {
            let handle = tokio::spawn(connection(io, conn));
            async move { handle.await.unwrap() }
        })
    }
}

fn bench_cost_of_async(c: &mut Criterion) {
    use cost_of_async::*;
    // Both versions make the same I/O calls (the poll count differs: the
    // async one has no poll loop).
    let sync_io = Io::new();
    run_sync(&sync_io);
    let rt = modelsync::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .build()
        .unwrap();
    let async_io = Io::new();
    rt.block_on(rt.spawn(modelsync_server(async_io.clone())))
        .unwrap();
    assert_eq!(sync_io.calls()[..3], async_io.calls()[..3]);

    let mut group = c.benchmark_group("runtime/cost_of_async");
    group.bench_function("sync_poll_loop", |b| b.iter(|| run_sync(&Io::new())));
    // The servers run back to back inside one task, so that the one
    // hand-off from the caller's thread to the worker and back is spread
    // over the iterations instead of counted in each (tokio's
    // current-thread runtime runs on the caller's thread and has none).
    group.bench_function("modelsync", |b| {
        b.iter_custom(|iters| {
            rt.block_on(rt.spawn(async move {
                let start = std::time::Instant::now();
                for _ in 0..iters {
                    modelsync_server(Io::new()).await;
                }
                start.elapsed()
            }))
            .unwrap()
        })
    });
    let tokio_rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    group.bench_function("tokio_current_thread", |b| {
        b.iter_custom(|iters| {
            tokio_rt.block_on(async move {
                let start = std::time::Instant::now();
                for _ in 0..iters {
                    tokio_server(Io::new()).await;
                }
                start.elapsed()
            })
        })
    });
    group.finish();
}
