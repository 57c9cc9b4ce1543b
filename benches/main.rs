//! The `benches` target: one module per primitive (`benches/<p>.rs`, found
//! by `build.rs`), each against its named peers, side by side. Every
//! benchmark group is named `<p>/<workload>`, so
//! `cargo bench --bench benches -- queue/` runs one primitive's benchmarks.
//! `python3 ci/bench_ratios.py` turns a run into BENCHMARKS.md's ratios.

include!(concat!(env!("OUT_DIR"), "/benches_modules.rs"));

criterion::criterion_group!(all, run_all);
criterion::criterion_main!(all);
