//! The oneshot channel against `tokio::sync::oneshot`, side by side:
//!
//! - `create_send_recv/<payload>`: create a channel, send, `try_recv`, for
//!   an 8-byte and a 1 KiB payload.
//! - `request_reply`: tokio's workload: a server task answers 1000
//!   requests arriving over `tokio::sync::mpsc::channel(10)`, each carrying
//!   the oneshot sender for its reply; the client awaits each reply. Run on
//!   a current-thread tokio runtime, with each crate's oneshot in turn.
//!
//! Run: `cargo bench --bench benches -- oneshot/`; the ratios in
//! BENCHMARKS.md come from `python3 ci/bench_ratios.py`.
//!
//! Target: <= 1.0 against tokio on create_send_recv/8B, create_send_recv/1KiB, request_reply

use std::hint::black_box;

use criterion::Criterion;

fn create_send_recv(c: &mut Criterion) {
    let mut group = c.benchmark_group("oneshot/create_send_recv/8B");
    group.bench_function("modelsync", |b| {
        b.iter(|| {
            let (tx, mut rx) = modelsync::oneshot::channel();
            tx.send(black_box(7u64)).unwrap();
            black_box(rx.try_recv().unwrap())
        })
    });
    group.bench_function("tokio", |b| {
        b.iter(|| {
            let (tx, mut rx) = tokio::sync::oneshot::channel();
            tx.send(black_box(7u64)).unwrap();
            black_box(rx.try_recv().unwrap())
        })
    });
    group.finish();

    let mut group = c.benchmark_group("oneshot/create_send_recv/1KiB");
    group.bench_function("modelsync", |b| {
        b.iter(|| {
            let (tx, mut rx) = modelsync::oneshot::channel();
            tx.send(black_box([7u8; 1024])).unwrap();
            black_box(rx.try_recv().unwrap())
        })
    });
    group.bench_function("tokio", |b| {
        b.iter(|| {
            let (tx, mut rx) = tokio::sync::oneshot::channel();
            tx.send(black_box([7u8; 1024])).unwrap();
            black_box(rx.try_recv().unwrap())
        })
    });
    group.finish();
}

const ROUND_TRIPS: u32 = 1000;

async fn request_reply_modelsync() {
    let (requests, mut inbox) = tokio::sync::mpsc::channel::<modelsync::oneshot::Sender<u32>>(10);
    let server = tokio::spawn(async move {
        while let Some(reply) = inbox.recv().await {
            let _ = reply.send(1);
        }
    });
    for _ in 0..ROUND_TRIPS {
        let (tx, rx) = modelsync::oneshot::channel();
        requests.send(tx).await.unwrap();
        black_box(rx.await.unwrap());
    }
    drop(requests);
    server.await.unwrap();
}

async fn request_reply_tokio() {
    let (requests, mut inbox) = tokio::sync::mpsc::channel::<tokio::sync::oneshot::Sender<u32>>(10);
    let server = tokio::spawn(async move {
        while let Some(reply) = inbox.recv().await {
            let _ = reply.send(1);
        }
    });
    for _ in 0..ROUND_TRIPS {
        let (tx, rx) = tokio::sync::oneshot::channel();
        requests.send(tx).await.unwrap();
        black_box(rx.await.unwrap());
    }
    drop(requests);
    server.await.unwrap();
}

fn request_reply(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let mut group = c.benchmark_group("oneshot/request_reply");
    group.bench_function("modelsync", |b| {
        b.iter(|| runtime.block_on(request_reply_modelsync()))
    });
    group.bench_function("tokio", |b| {
        b.iter(|| runtime.block_on(request_reply_tokio()))
    });
    group.finish();
}

/// Every oneshot benchmark, for `benches/main.rs`.
pub fn benches(c: &mut Criterion) {
    create_send_recv(c);
    request_reply(c);
}
