//! `block_on` against its peers, side by side: `block_on/yields_<n>` is a
//! future that wakes itself `n` times before completing (`Yields(n)`), n in
//! {0, 10, 50}, against `futures::executor::block_on` and
//! `pollster::block_on`.
//!
//! Run: `cargo bench --bench benches -- block_on/`; the ratios in
//! BENCHMARKS.md come from `python3 ci/bench_ratios.py`.
//!
//! Target: <= 1.0 against futures and pollster on yields_0, yields_10, yields_50

use std::future::Future;
use std::hint::black_box;
use std::pin::Pin;
use std::task::{Context, Poll};

use criterion::Criterion;

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

/// Every block_on benchmark, for `benches/main.rs`.
pub fn benches(c: &mut Criterion) {
    bench_block_on(c);
}
