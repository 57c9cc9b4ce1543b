//! The model harness: a scenario is written once and runs under whichever
//! backend the build selected.
//!
//! | build            | what `check` does                                                   |
//! |------------------|---------------------------------------------------------------------|
//! | `--cfg loom`     | `loom::model::Builder`, preemption bound `LOOM_MAX_PREEMPTIONS` (default 2) |
//! | `--cfg shuttle`  | random then PCT schedules, `MODELSYNC_SHUTTLE_ITERS` each (default 1000), seed `SHUTTLE_RANDOM_SEED` (default 24301), PCT depth `MODELSYNC_SHUTTLE_PCT_DEPTH` (default 3), optional time budget `MODELSYNC_SHUTTLE_SECS` |
//! | neither          | `MODELSYNC_STRESS_ITERS` (default 200) repetitions on real threads |
//!
//! Every run prints one line to stderr (not captured by the test harness):
//! model name, backend, bound or iterations, executions, wall time and the
//! count of each declared interleaving. With `MODELSYNC_REPORT=<file>` the
//! same line is appended to that file, which `ci/nightly` turns into its
//! summary table.
//!
//! Reachability: a model declares the interleavings it exists for as
//! [`Reach`] counters. Under loom (exhaustive within the bound) and shuttle
//! (seeded, so deterministic) the run fails if any counter stayed at zero.
//! Real threads promise no particular interleaving, so under std the counts
//! are printed but not asserted.
//!
//! This file and `ledger.rs` are the only test code that names std's atomics
//! and locks: they count across executions, outside the model, and must not
//! add scheduling points to it.
#![allow(dead_code)]

mod handoff;
mod ledger;

#[allow(unused_imports)] // not every model target hands off plain values
pub use handoff::Handoff;

#[allow(unused_imports)] // not every model target tracks items
pub use ledger::{Ledger, Tracked};

use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Instant;

/// An interleaving a model exists to reach, counted across all executions.
#[derive(Clone, Debug)]
pub struct Reach {
    name: &'static str,
    hits: Arc<AtomicUsize>,
}

impl Reach {
    pub fn new(name: &'static str) -> Self {
        Reach {
            name,
            hits: Arc::new(AtomicUsize::new(0)),
        }
    }

    /// Records that this execution reached the interleaving.
    pub fn hit(&self) {
        self.hits.fetch_add(1, Relaxed);
    }

    /// Records a hit when `cond` holds; returns `cond`.
    pub fn hit_if(&self, cond: bool) -> bool {
        if cond {
            self.hit();
        }
        cond
    }

    pub fn count(&self) -> usize {
        self.hits.load(Relaxed)
    }
}

/// A per-execution boolean that is not a scheduling point: models use it to
/// record what one thread saw of another's progress, for reachability
/// only, never to synchronise.
#[derive(Clone, Debug, Default)]
pub struct Flag(Arc<AtomicBool>);

impl Flag {
    pub fn set(&self) {
        self.0.store(true, Relaxed);
    }

    pub fn get(&self) -> bool {
        self.0.load(Relaxed)
    }
}

fn env_usize(name: &str, default: usize) -> usize {
    match std::env::var(name) {
        Ok(v) => v
            .parse()
            .unwrap_or_else(|_| panic!("{name}={v:?} is not a non-negative integer")),
        Err(_) => default,
    }
}

/// shuttle also reads `SHUTTLE_RANDOM_SEED` itself and accepts only
/// decimal, so this does too.
fn env_u64(name: &str, default: u64) -> u64 {
    match std::env::var(name) {
        Ok(v) => v
            .parse()
            .unwrap_or_else(|_| panic!("{name}={v:?} is not a decimal u64")),
        Err(_) => default,
    }
}

/// Runs `scenario` under the active backend, prints the result line and
/// fails if any of `reaches` was never reached (loom and shuttle only).
pub fn check<F>(name: &str, reaches: &[&Reach], scenario: F)
where
    F: Fn() + Send + Sync + 'static,
{
    let executions = Arc::new(AtomicUsize::new(0));
    let counted = {
        let executions = executions.clone();
        move || {
            executions.fetch_add(1, Relaxed);
            scenario();
        }
    };
    let start = Instant::now();
    let (backend, bound) = run(counted);
    let elapsed = start.elapsed();

    let reached: Vec<String> = reaches
        .iter()
        .map(|r| format!("{}={}", r.name, r.count()))
        .collect();
    let line = format!(
        "model {name} backend={backend} {bound} executions={} time={:.2}s reached[{}]",
        executions.load(Relaxed),
        elapsed.as_secs_f64(),
        reached.join(" "),
    );
    let _ = writeln!(std::io::stderr(), "{line}");
    if let Ok(path) = std::env::var("MODELSYNC_REPORT") {
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .unwrap_or_else(|e| panic!("cannot open MODELSYNC_REPORT={path}: {e}"));
        writeln!(file, "{line}").expect("write MODELSYNC_REPORT");
    }

    if backend != "std" {
        for r in reaches {
            assert!(
                r.count() > 0,
                "model {name}: no execution reached `{}` ({bound}); the model is vacuous for it",
                r.name
            );
        }
    }
}

#[cfg(loom)]
fn run(scenario: impl Fn() + Send + Sync + 'static) -> (&'static str, String) {
    let mut builder = loom::model::Builder::new();
    // loom's own default is unbounded, which no model here finishes in time.
    let bound = *builder.preemption_bound.get_or_insert(2);
    let budget = builder.max_duration;
    let start = Instant::now();
    builder.check(scenario);
    let mut desc = format!("preemption_bound={bound}");
    if let Some(budget) = budget {
        // A run stopped by LOOM_MAX_DURATION explored only part of the space.
        if start.elapsed() >= budget {
            desc.push_str(" TRUNCATED-BY-LOOM_MAX_DURATION(not-exhaustive)");
        }
    }
    ("loom", desc)
}

#[cfg(shuttle)]
fn run(scenario: impl Fn() + Send + Sync + 'static) -> (&'static str, String) {
    use shuttle::scheduler::{PctScheduler, RandomScheduler};
    use shuttle::{Config, Runner};
    use std::time::Duration;

    let iters = env_usize("MODELSYNC_SHUTTLE_ITERS", 1000);
    let seed = env_u64("SHUTTLE_RANDOM_SEED", 24301);
    let depth = env_usize("MODELSYNC_SHUTTLE_PCT_DEPTH", 3);
    let budget = std::env::var("MODELSYNC_SHUTTLE_SECS")
        .ok()
        .map(|s| Duration::from_secs(s.parse().expect("MODELSYNC_SHUTTLE_SECS is seconds")));
    let config = || {
        let mut config = Config::new();
        // Each scheduler gets half the budget.
        config.max_time = budget.map(|b| b / 2);
        config
    };
    let scenario = Arc::new(scenario);
    let random = {
        let s = scenario.clone();
        Runner::new(RandomScheduler::new_from_seed(seed, iters), config()).run(move || s())
    };
    let pct = {
        let s = scenario.clone();
        Runner::new(PctScheduler::new_from_seed(seed, depth, iters), config()).run(move || s())
    };
    (
        "shuttle",
        format!("seed={seed} random_iters={random} pct_iters={pct} pct_depth={depth}"),
    )
}

#[cfg(not(any(loom, shuttle)))]
fn run(scenario: impl Fn() + Send + Sync + 'static) -> (&'static str, String) {
    let iters = env_usize("MODELSYNC_STRESS_ITERS", if cfg!(miri) { 2 } else { 200 });
    for _ in 0..iters {
        scenario();
    }
    ("std", format!("stress_iters={iters}"))
}

/// How many times a [`counting_waker`] was woken.
#[derive(Clone, Debug)]
pub struct WakeCount(Arc<AtomicUsize>);

impl WakeCount {
    pub fn get(&self) -> usize {
        self.0.load(Relaxed)
    }
}

/// A waker that counts its wakes, for polling futures by hand. The count
/// is a std atomic: it observes the model, it is not part of it.
pub fn counting_waker() -> (std::task::Waker, WakeCount) {
    struct Counting(Arc<AtomicUsize>);
    impl std::task::Wake for Counting {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Relaxed);
        }
    }
    let wakes = Arc::new(AtomicUsize::new(0));
    (
        std::task::Waker::from(Arc::new(Counting(wakes.clone()))),
        WakeCount(wakes),
    )
}
