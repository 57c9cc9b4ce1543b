//! The keyed channel on DatenLord's kv_mpsc workload, side by side with
//! plain channels: capacity 1,000, 16 producers each sending 10,000
//! messages, one receiver; one iteration is all 160,000 messages.
//!
//! - `keyed/sync_no_conflict`: producers are threads; message `i` of
//!   producer `p` has the key `p * 10_000 + i` (no two messages share a
//!   key) and the receiver drops each message at once. Against
//!   `std::sync::mpsc::sync_channel(1000)`, flume and crossbeam-channel
//!   (`bounded(1000)`), sending the same values without keys.
//! - `keyed/async_no_conflict`: the same with producer tasks and a
//!   receiver task on tokio's multi-thread runtime, against
//!   `tokio::sync::mpsc::channel(1000)`.
//! - `keyed/sync_conflict`, `keyed/async_conflict`: message `i` of every
//!   producer has the key `i`, so each key is sent 16 times; the receiver
//!   keeps what it receives and, when nothing is deliverable, drops the
//!   oldest message it holds. Against our own no-conflict run
//!   (`modelsync-no-conflict`).
//!
//! - `keyed/uncontended` (a diagnostic, no target): one thread sends
//!   1,000 no-conflict messages and then receives and drops them, 160
//!   times: the channel's own cost per message without contention, against
//!   std's `sync_channel`.
//!
//! - `keyed/send_many_keys/<n>` (a diagnostic, no target): one thread
//!   sends one message of `n` distinct keys, each given twice (so half the
//!   keys sent are repeats), and receives and drops it, for `n` of 2,000
//!   and 32,000; against std's `HashSet` collecting the same keys (hashing
//!   each once and dropping the repeats: the floor of a linear send). A
//!   cost linear in the keys gives the same ratio at both sizes; before
//!   sends deduplicated by hash, a send of many keys was far slower
//!   (HISTORY.md has the measurement).
//!
//! The kv_mpsc design's own figures, for comparison, are quoted in
//! BENCHMARKS.md.
//!
//! Run: `cargo bench --bench benches -- keyed/`; the ratios in
//! BENCHMARKS.md come from `python3 ci/bench_ratios.py`.
//!
//! Target: <= 1.5 against std-sync-channel and flume and crossbeam-channel on sync_no_conflict
//! Target: <= 1.5 against tokio on async_no_conflict
//! Target: <= 2.0 against modelsync-no-conflict on sync_conflict, async_conflict

use std::collections::VecDeque;
use std::thread; // shim-exempt: the producers of every channel measured, ours and the peers'

use criterion::Criterion;
use modelsync::keyed::error::TryRecvError;
use modelsync::keyed::{self, Message};

const PRODUCERS: u64 = 16;
const PER_PRODUCER: u64 = 10_000;
const TOTAL: u64 = PRODUCERS * PER_PRODUCER;
const CAPACITY: usize = 1_000;

fn no_conflict_key(producer: u64, i: u64) -> u64 {
    producer * PER_PRODUCER + i
}

fn conflict_key(_producer: u64, i: u64) -> u64 {
    i
}

/// The receiver of the conflict workload: keeps what it receives, and
/// when nothing is deliverable drops the oldest message it holds.
struct Holder<M> {
    held: VecDeque<M>,
    received: u64,
}

impl<M> Holder<M> {
    fn new() -> Self {
        Holder {
            held: VecDeque::new(),
            received: 0,
        }
    }

    /// Whether to block: nothing deliverable and nothing to release.
    fn on(&mut self, got: Result<M, TryRecvError>) -> bool {
        match got {
            Ok(message) => {
                self.held.push_back(message);
                self.received += 1;
                false
            }
            Err(TryRecvError::Empty | TryRecvError::Conflicted) if !self.held.is_empty() => {
                self.held.pop_front();
                false
            }
            Err(TryRecvError::Disconnected) => panic!("producers gone early"),
            Err(_) => true,
        }
    }
}

fn keyed_sync(key: fn(u64, u64) -> u64, hold: bool) {
    let (tx, mut rx) = keyed::sync_channel::<u64, u64>(CAPACITY);
    thread::scope(|s| {
        for p in 0..PRODUCERS {
            let tx = tx.clone();
            s.spawn(move || {
                for i in 0..PER_PRODUCER {
                    tx.send([key(p, i)], i).unwrap();
                }
            });
        }
        drop(tx);
        if hold {
            let mut holder: Holder<Message<u64, u64>> = Holder::new();
            while holder.received < TOTAL {
                if holder.on(rx.try_recv()) {
                    let message = rx.recv().unwrap();
                    holder.on(Ok(message));
                }
            }
        } else {
            for _ in 0..TOTAL {
                drop(rx.recv().unwrap());
            }
        }
    });
}

async fn keyed_async(key: fn(u64, u64) -> u64, hold: bool) {
    let (tx, mut rx) = keyed::channel::<u64, u64>(CAPACITY);
    let producers: Vec<_> = (0..PRODUCERS)
        .map(|p| {
            let tx = tx.clone();
            tokio::spawn(async move {
                for i in 0..PER_PRODUCER {
                    tx.send([key(p, i)], i).await.unwrap();
                }
            })
        })
        .collect();
    drop(tx);
    let receiver = tokio::spawn(async move {
        if hold {
            let mut holder: Holder<Message<u64, u64>> = Holder::new();
            while holder.received < TOTAL {
                if holder.on(rx.try_recv()) {
                    let message = rx.recv().await.unwrap();
                    holder.on(Ok(message));
                }
            }
        } else {
            for _ in 0..TOTAL {
                drop(rx.recv().await.unwrap());
            }
        }
    });
    for p in producers {
        p.await.unwrap();
    }
    receiver.await.unwrap();
}

/// The plain sync channels: one producer thread each, the same values.
macro_rules! plain_sync {
    ($tx:ident, $rx:ident, $make:expr) => {{
        let ($tx, $rx) = $make;
        thread::scope(|s| {
            for p in 0..PRODUCERS {
                let $tx = $tx.clone();
                s.spawn(move || {
                    for i in 0..PER_PRODUCER {
                        $tx.send(no_conflict_key(p, i)).unwrap();
                    }
                });
            }
            drop($tx);
            for _ in 0..TOTAL {
                std::hint::black_box($rx.recv().unwrap());
            }
        });
    }};
}

async fn tokio_mpsc() {
    let (tx, mut rx) = tokio::sync::mpsc::channel::<u64>(CAPACITY);
    let producers: Vec<_> = (0..PRODUCERS)
        .map(|p| {
            let tx = tx.clone();
            tokio::spawn(async move {
                for i in 0..PER_PRODUCER {
                    tx.send(no_conflict_key(p, i)).await.unwrap();
                }
            })
        })
        .collect();
    drop(tx);
    let receiver = tokio::spawn(async move {
        for _ in 0..TOTAL {
            std::hint::black_box(rx.recv().await.unwrap());
        }
    });
    for p in producers {
        p.await.unwrap();
    }
    receiver.await.unwrap();
}

/// One thread, no contention: 160 rounds of 1,000 sends then 1,000
/// receives.
fn uncontended_keyed() {
    let (tx, mut rx) = keyed::sync_channel::<u64, u64>(CAPACITY);
    for round in 0..TOTAL / CAPACITY as u64 {
        for i in 0..CAPACITY as u64 {
            tx.send([no_conflict_key(round, i)], i).unwrap();
        }
        for _ in 0..CAPACITY {
            drop(rx.recv().unwrap());
        }
    }
}

fn uncontended_std() {
    let (tx, rx) = std::sync::mpsc::sync_channel::<u64>(CAPACITY);
    for round in 0..TOTAL / CAPACITY as u64 {
        for i in 0..CAPACITY as u64 {
            tx.send(no_conflict_key(round, i)).unwrap();
        }
        for _ in 0..CAPACITY {
            std::hint::black_box(rx.recv().unwrap());
        }
    }
}

/// `n` distinct keys, each twice: every other key repeated at once, the
/// rest at the end.
fn many_keys(n: u64) -> Vec<u64> {
    let mut keys: Vec<u64> = (0..n)
        .flat_map(|k| if k % 2 == 0 { vec![k, k] } else { vec![k] })
        .collect();
    keys.extend((0..n).filter(|k| k % 2 == 1));
    keys
}

fn send_many_keys(keys: &[u64]) {
    let (tx, mut rx) = keyed::sync_channel::<u64, u64>(1);
    tx.send(keys.iter().copied(), 0).unwrap();
    drop(rx.recv().unwrap());
    assert_eq!(rx.tracked_keys(), 0);
}

fn hash_set_of(keys: &[u64]) {
    let set: std::collections::HashSet<u64> = keys.iter().copied().collect();
    std::hint::black_box(set);
}

pub fn benches(c: &mut Criterion) {
    for n in [2_000, 32_000] {
        let keys = many_keys(n);
        let mut group = c.benchmark_group(format!("keyed/send_many_keys/{n}"));
        group.sample_size(10);
        group.bench_function("modelsync", |b| b.iter(|| send_many_keys(&keys)));
        group.bench_function("std-hashset", |b| b.iter(|| hash_set_of(&keys)));
        group.finish();
    }

    let mut group = c.benchmark_group("keyed/uncontended");
    group.sample_size(10);
    group.bench_function("modelsync", |b| b.iter(uncontended_keyed));
    group.bench_function("std-sync-channel", |b| b.iter(uncontended_std));
    group.finish();

    let mut group = c.benchmark_group("keyed/sync_no_conflict");
    group.sample_size(10);
    group.bench_function("modelsync", |b| {
        b.iter(|| keyed_sync(no_conflict_key, false))
    });
    group.bench_function("std-sync-channel", |b| {
        b.iter(|| plain_sync!(tx, rx, std::sync::mpsc::sync_channel::<u64>(CAPACITY)))
    });
    group.bench_function("flume", |b| {
        b.iter(|| plain_sync!(tx, rx, flume::bounded::<u64>(CAPACITY)))
    });
    group.bench_function("crossbeam-channel", |b| {
        b.iter(|| plain_sync!(tx, rx, crossbeam_channel::bounded::<u64>(CAPACITY)))
    });
    group.finish();

    let mut group = c.benchmark_group("keyed/sync_conflict");
    group.sample_size(10);
    group.bench_function("modelsync", |b| b.iter(|| keyed_sync(conflict_key, true)));
    group.bench_function("modelsync-no-conflict", |b| {
        b.iter(|| keyed_sync(no_conflict_key, false))
    });
    group.finish();

    let rt = tokio::runtime::Builder::new_multi_thread().build().unwrap();
    let mut group = c.benchmark_group("keyed/async_no_conflict");
    group.sample_size(10);
    group.bench_function("modelsync", |b| {
        b.iter(|| rt.block_on(keyed_async(no_conflict_key, false)))
    });
    group.bench_function("tokio", |b| b.iter(|| rt.block_on(tokio_mpsc())));
    group.finish();

    let mut group = c.benchmark_group("keyed/async_conflict");
    group.sample_size(10);
    group.bench_function("modelsync", |b| {
        b.iter(|| rt.block_on(keyed_async(conflict_key, true)))
    });
    group.bench_function("modelsync-no-conflict", |b| {
        b.iter(|| rt.block_on(keyed_async(no_conflict_key, false)))
    });
    group.finish();
}
