//! A harness for model-checking concurrent code, extracted from
//! modelsync's models (where it was `models/harness/`).
//!
//! - **One scenario, three backends.** A model is a closure written once
//!   against the backend's threads and atomics; [`Model::check`] runs it
//!   under loom (every interleaving, within a preemption bound if one is
//!   declared, with weak memory), shuttle (random and PCT schedules) or
//!   std (repetitions on real threads), whichever the build selected
//!   (`--cfg loom`, `--cfg shuttle`, neither), and fails if an
//!   interleaving the model declares it exists for ([`Reach`]) was never
//!   reached.
//! - **Sequential specifications.** A primitive states its contract as a
//!   [`linearizability::Spec`]: a sequential state machine, with the
//!   nondeterminism its contract allows and the reason each such outcome
//!   needs ([`linearizability::Overlap`]).
//! - **Linearizability, blocking operations included.** The
//!   [`recorder`] logs every execution's history (calls, returns, and what
//!   orders threads), and [`linearizability::check`] searches it for a
//!   linearization (Wing and Gong's search, with Lowe's memoisation and
//!   P-compositionality). An operation that blocks is one the
//!   specification places only where it could return; one left blocked
//!   when nothing else could run must be one the specification has wait.
//! - **Generated scenarios and complete scopes.** [`scenario`] draws
//!   scenarios from a fixed seed and shrinks a failing one to a model to
//!   paste; [`scope`] enumerates every scenario of a stated scope, from
//!   each starting regime, deduplicated up to symmetry.
//! - **Each model in its own process** under loom (`own_process.rs`), and
//!   **one result line per run**, the same on every machine for loom.
//!
//! The sections below are the harness's rules, as modelsync's models use
//! it (the environment variables keep modelsync's `MODELSYNC_` prefix).
//!
//! | build            | what [`Model::check`] does                                          |
//! |------------------|---------------------------------------------------------------------|
//! | `--cfg loom`     | `loom::model::Builder`: no preemption bound (complete) unless the model declares one, or `LOOM_MAX_PREEMPTIONS` overrides it (`none` for unbounded) |
//! | `--cfg shuttle`  | random then PCT schedules, `MODELSYNC_SHUTTLE_ITERS` each (default 1000), seed `SHUTTLE_RANDOM_SEED` (default 24301), PCT depth `MODELSYNC_SHUTTLE_PCT_DEPTH` (default 3), optional time budget `MODELSYNC_SHUTTLE_SECS` |
//! | neither          | `MODELSYNC_STRESS_ITERS` (default [`STRESS_ITERS`]; the nightly's more) repetitions on real threads |
//!
//! A model's name is derived, never typed: [`model!`] takes it from the
//! module path and the test function (`queue::basic`), which is also the
//! name libtest gives the test, the name `cargo test` filters on and the
//! name VERIFICATION.md's evidence tables use. The harness asserts the
//! two agree.
//!
//! Every run prints one line to stderr (not captured by the test harness):
//! model name, backend, bound or iterations, executions, wall time and the
//! count of each declared interleaving. With `MODELSYNC_REPORT=<file>` the
//! same line is appended to that file, which `ci/nightly` turns into its
//! summary table and `ci/model_table.py` into VERIFICATION.md's table.
//!
//! Under loom, a model whose executions check a history against a
//! specification (`recorder.rs`) runs twice: with loom's weak memory, its
//! history ordered by happens-before; then again, the real-time pass, with
//! every atomic access of the code under test a read-modify-write (the
//! switch it registers with [`set_access_mode_hook`]), so that every read
//! takes the latest value and its history is ordered by real time. The
//! line ends with the second run's counts (`real_time_pass[preemption_bound=..
//! executions=.. time=..s histories_checked=..]`); its reaches are the
//! first run's, which the harness asserts. In the audit run
//! (`MODELSYNC_EVERY_ACCESS_RMW=1`: `ci/loom-audit`) every model runs with
//! every access a read-modify-write, once, and the line says
//! `accesses=all-read-modify-write` before the bound. Without a registered
//! switch both still run, but change no access, and their lines say so
//! (see [`set_access_mode_hook`]).
//!
//! loom budgets: with `MODELSYNC_LOOM_BUDGET=<secs>` an unbounded run that
//! does not finish within the budget is reported as out of budget, and the
//! harness then runs bounds 1, 2, 3, ... (each within the budget) and reports
//! the highest that finished, which is what the nightly records.
//!
//! Tiers: every model runs in the main job (`ci/loom`, the pull-request
//! tier) unless its builder says `.nightly()`; then its loom run belongs to
//! the nightly tier, and the main job prints a `skipped` line for it.
//! `MODELSYNC_TIER=nightly` runs both tiers (what `ci/nightly` and the
//! mutation tools' full runs set). The tier is in every result line. Only
//! loom runs are tiered: the std stress runs and shuttle run every model.
//! A model leaves the main job only as `ci/kill_matrix.py` allows (every
//! bug it kills is killed by a main-job model, or it kills none and is
//! costly).
//!
//! Processes: under loom each model's test runs its model in a process of
//! its own (`own_process.rs`): libtest runs two tests at once as threads
//! of one process, and loom maps and unmaps a stack for every thread of
//! every execution, so two models in one address space interrupt each
//! other's core on every unmap. The same test, the same line, the same
//! verdict; `MODELSYNC_LOOM_PROCESS=shared` runs it in the test's own
//! thread instead.
//!
//! Reachability: a model declares the interleavings it exists for as
//! [`Reach`] counters. Under loom (exhaustive within the bound) and shuttle
//! (seeded, so deterministic) the run fails if any counter stayed at zero.
//! Real threads promise no particular interleaving, so under std the counts
//! are printed but not asserted.
//!
//! The harness names std's atomics and locks where it counts across
//! executions or records, outside the model, to which it must add no
//! scheduling point; the backend's (`sync.rs`) only where it is part of the
//! model (a scenario's threads and hand-offs).
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod handoff;
mod ledger;
pub mod linearizability;
mod own_process;
pub mod recorder;
pub mod scenario;
pub mod scope;
mod sync;
mod wakers;

pub use handoff::Handoff;
pub use ledger::{Ledger, Tracked};
pub use wakers::{counting_waker, WakeCount};

use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};
use std::sync::Arc;
#[cfg(any(loom, shuttle))]
use std::time::Duration;
use std::time::Instant;

/// Starts a [`Model`] named after the enclosing test: `queue::basic` for
/// `fn basic` in module `queue` of a test target. Call it in the test
/// function's body.
#[macro_export]
macro_rules! model {
    () => {{
        fn here() {}
        $crate::Model::new($crate::test_name_of(::std::any::type_name_of_val(&here)))
    }};
}

/// `models::queue::basic::here` -> `queue::basic`: drops the crate (the
/// test target) and the marker function. What [`model!`] names a model by.
pub fn test_name_of(marker_path: &str) -> String {
    let parts: Vec<&str> = marker_path.split("::").collect();
    assert!(
        parts.len() >= 3 && parts[parts.len() - 1] == "here",
        "model!() must be called directly in a test function's body, got {marker_path}"
    );
    parts[1..parts.len() - 1].join("::")
}

/// An interleaving a model exists to reach, counted across all executions.
#[derive(Clone, Debug)]
pub struct Reach {
    name: &'static str,
    hits: Arc<AtomicUsize>,
}

impl Reach {
    /// A counter, at zero, for the interleaving `name` (as the result line
    /// prints it).
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

    /// How many executions reached the interleaving so far.
    pub fn count(&self) -> usize {
        self.hits.load(Relaxed)
    }
}

/// A model's counts (executions and reaches), saved and restored when the
/// nightly's fallback reports an earlier loom run than its last one.
struct Counters {
    executions: Arc<AtomicUsize>,
    reaches: Vec<Reach>,
}

impl Counters {
    fn save(&self) -> Vec<usize> {
        let mut saved = vec![self.executions.load(Relaxed)];
        saved.extend(self.reaches.iter().map(Reach::count));
        saved
    }

    fn restore(&self, saved: &[usize]) {
        self.executions.store(saved[0], Relaxed);
        for (reach, &count) in self.reaches.iter().zip(&saved[1..]) {
            reach.hits.store(count, Relaxed);
        }
    }
}

/// A per-execution boolean that is not a scheduling point: models use it to
/// record what one thread saw of another's progress, for reachability
/// only, never to synchronise.
///
/// Prefer it to a loom atomic for such labels: it adds no interleavings
/// (a loom atomic's accesses are scheduling points and, Relaxed, may read
/// stale values, multiplying executions that differ only in the label),
/// and it reads what the other thread has actually done so far. Under
/// loom a flag's write lands with its thread's previous operation (loom
/// switches threads only at operations), so a flag can tell apart only
/// orders that some operation separates. A model keeps a loom atomic
/// where the label needs a point of its own (a read right after `spawn`
/// would otherwise always come first) or where loom must order something
/// by it (an assertion that relies on what the flag says happened
/// before).
#[derive(Clone, Debug, Default)]
pub struct Flag(Arc<AtomicBool>);

impl Flag {
    /// Raises the flag.
    pub fn set(&self) {
        self.0.store(true, Relaxed);
    }

    /// Whether the flag was raised.
    pub fn get(&self) -> bool {
        self.0.load(Relaxed)
    }
}

/// A per-execution count that is not a scheduling point: [`Flag`]'s
/// counterpart for labels that count (how many polls began, how many
/// ended), with the same rules. Under loom and shuttle a read gives exactly
/// what the other threads have done up to this thread's last operation;
/// on real threads it may lag, so a model asserts on it only under loom
/// and shuttle.
#[derive(Clone, Debug, Default)]
pub struct Tally(Arc<AtomicUsize>);

impl Tally {
    /// Counts one more.
    pub fn add_one(&self) {
        self.0.fetch_add(1, Relaxed);
    }

    /// The count so far.
    pub fn get(&self) -> usize {
        self.0.load(Relaxed)
    }
}

/// A std stress run's repetitions unless `MODELSYNC_STRESS_ITERS` says
/// otherwise: what `cargo test` runs, where a model's std run only shows
/// that its scenario runs on real threads (it promises no interleaving).
/// The nightly's std stage runs many more (`ci/nightly`).
pub const STRESS_ITERS: usize = 50;

fn env_parse<T: std::str::FromStr>(name: &str, what: &str) -> Option<T> {
    let value = std::env::var(name).ok()?;
    Some(
        value
            .parse()
            .unwrap_or_else(|_| panic!("{name}={value:?} is not {what}")),
    )
}

/// A scenario to run under the active backend, with the interleavings it
/// must reach. Built by [`model!`].
pub struct Model {
    name: String,
    reaches: Vec<Reach>,
    /// The loom preemption bound this model runs at when
    /// `LOOM_MAX_PREEMPTIONS` is not set; `None` is a complete run.
    default_bound: Option<usize>,
    /// The highest bound a numeric `LOOM_MAX_PREEMPTIONS` may raise this
    /// model to (see `max_preemption_bound`).
    max_bound: Option<usize>,
    /// The bound above which loom's exploration of this model does not end
    /// (see `loom_ends_only_up_to`): a cap under every setting.
    ends_only_up_to: Option<usize>,
    /// Which tier its loom run belongs to (see [`Model::nightly`]).
    tier: Tier,
}

/// Which CI run a model's loom run belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tier {
    /// The main job: every pull request, and the README's command.
    PullRequest,
    /// Only the nightly (`MODELSYNC_TIER=nightly`).
    Nightly,
}

impl Tier {
    /// As result lines print it.
    pub fn label(self) -> &'static str {
        match self {
            Tier::PullRequest => "pr",
            Tier::Nightly => "nightly",
        }
    }
}

/// Whether this process runs the nightly tier's loom models too:
/// `MODELSYNC_TIER=nightly` (both tiers), or `pr` (the default: the main
/// job's alone).
pub fn nightly_tier_runs() -> bool {
    match std::env::var("MODELSYNC_TIER").as_deref() {
        Err(_) | Ok("pr") => false,
        Ok("nightly") => true,
        Ok(v) => panic!("MODELSYNC_TIER={v:?} is neither `pr` nor `nightly`"),
    }
}

impl Model {
    /// A model named `name` (what [`model!`] derives): no declared
    /// interleaving, no bound, in the main job's tier.
    pub fn new(name: String) -> Self {
        // libtest runs each test on a thread named after it: the derived
        // name must be the one `cargo test` filters on.
        if let Some(thread) = std::thread::current().name() {
            if thread != "main" {
                assert_eq!(
                    thread, name,
                    "the model's derived name is not its test's name"
                );
            }
        }
        Model {
            name,
            reaches: Vec::new(),
            default_bound: None,
            max_bound: None,
            ends_only_up_to: None,
            tier: Tier::PullRequest,
        }
    }

    /// Moves this model's loom run from the main job to the nightly tier
    /// (see the module documentation): the nightly runs it at its declared
    /// setting and beyond, the main job prints a `skipped` line. Allowed
    /// only where `ci/kill_matrix.py check` agrees: every bug it kills is
    /// killed by a main-job model, or it kills none and is costly.
    pub fn nightly(mut self) -> Self {
        self.tier = Tier::Nightly;
        self
    }

    /// Whether this process runs the model's loom run; if not, prints the
    /// line that says so. Always true under shuttle and std.
    pub fn runs_in_this_tier(&self) -> bool {
        if !cfg!(loom) || self.tier == Tier::PullRequest || nightly_tier_runs() {
            return own_process::runs_here(&self.name);
        }
        emit(&format!(
            "model {} backend=loom tier=nightly skipped: the nightly tier runs it \
             (MODELSYNC_TIER=nightly)",
            self.name
        ));
        false
    }

    /// Declares an interleaving this model exists to reach.
    pub fn reach(mut self, reach: &Reach) -> Self {
        self.reaches.push(reach.clone());
        self
    }

    /// Runs this model at preemption bound `bound` unless
    /// `LOOM_MAX_PREEMPTIONS` says otherwise, because its complete run is
    /// too long for pull-request CI (VERIFICATION.md's model table gives the
    /// measured complete run, which the nightly repeats).
    pub fn preemption_bound(mut self, bound: usize) -> Self {
        self.default_bound = Some(bound);
        self
    }

    /// Runs this model at `bound` at most when `LOOM_MAX_PREEMPTIONS` asks
    /// for a higher number (the mutation runs ask for 2), because one bound
    /// more does not finish in minutes; the printed line shows the bound
    /// actually run. `LOOM_MAX_PREEMPTIONS=none` (the nightly's complete
    /// attempt, with its budget fallback) is not capped.
    pub fn max_preemption_bound(mut self, bound: usize) -> Self {
        self.max_bound = Some(bound);
        self.preemption_bound(bound)
    }

    /// Runs this model at `bound` at most under every setting, `none`
    /// included, and at `bound` by default, because above it loom's
    /// exploration does not end: two threads in spin loops that yield
    /// can yield to each other forever while the thread both wait for is
    /// never scheduled (loom bounds preemptions, not switches at a yield).
    /// The result line says so (`capped:loom-does-not-end-above-N`).
    pub fn loom_ends_only_up_to(mut self, bound: usize) -> Self {
        self.ends_only_up_to = Some(bound);
        self.max_preemption_bound(bound)
    }

    /// The model's name (`queue::basic`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Prints a result line for a run made elsewhere (generated scenarios:
    /// `scenario.rs`), with `counts` as its declared interleavings, and
    /// fails, as [`check`](Self::check) does, if one of them is zero under
    /// loom or shuttle. `extra` is appended to the setting.
    /// `tail` ends the line (the real-time pass's counts).
    pub fn report(
        self,
        setting: &str,
        executions: usize,
        elapsed: std::time::Duration,
        counts: &[(&'static str, usize)],
        extra: &str,
        tail: &str,
    ) {
        let backend = sync::BACKEND;
        let mut setting = format!("{setting}{extra}");
        if audit_run() {
            setting = format!("{} {setting}", audit_accesses());
        }
        let reached: Vec<String> = counts.iter().map(|(n, c)| format!("{n}={c}")).collect();
        emit(&format!(
            "model {} backend={backend} tier={} {setting} executions={executions} time={:.2}s reached[{}]{tail}",
            self.name,
            self.tier.label(),
            elapsed.as_secs_f64(),
            reached.join(" "),
        ));
        if backend != "std" {
            for (what, count) in counts {
                assert!(
                    *count > 0,
                    "model {}: no execution reached `{what}` ({setting}); the model is vacuous for it",
                    self.name
                );
            }
        }
    }

    /// Runs `scenario` under the active backend, prints the result line and
    /// fails if any declared interleaving was never reached (loom and
    /// shuttle only).
    pub fn check<F>(self, scenario: F)
    where
        F: Fn() + Send + Sync + 'static,
    {
        assert_overflow_checks();
        if !self.runs_in_this_tier() {
            return;
        }
        let executions = Arc::new(AtomicUsize::new(0));
        let counted = {
            let executions = executions.clone();
            Arc::new(move || {
                executions.fetch_add(1, Relaxed);
                scenario();
            })
        };
        let counters = Counters {
            executions: executions.clone(),
            reaches: self.reaches.clone(),
        };
        let start = Instant::now();
        set_access_mode(audit_run());
        let checked_before = recorder::histories_checked();
        let (backend, mut setting) = run(
            self.default_bound,
            self.max_bound,
            self.ends_only_up_to,
            &counters,
            counted.clone(),
        );
        if audit_run() {
            // The audit run (ci/loom-audit): its lines must not pass for
            // the normal run's.
            setting = format!("{} {setting}", audit_accesses());
        }
        let real_time =
            if cfg!(loom) && !audit_run() && recorder::histories_checked() > checked_before {
                self.real_time_pass(&counters, counted)
            } else {
                String::new()
            };
        // Both passes: what the model costs the main job.
        let elapsed = start.elapsed();

        let reached: Vec<String> = self
            .reaches
            .iter()
            .map(|r| format!("{}={}", r.name, r.count()))
            .collect();
        let line = format!(
            "model {} backend={backend} tier={} {setting} executions={} time={:.2}s reached[{}]{real_time}",
            self.name,
            self.tier.label(),
            executions.load(Relaxed),
            elapsed.as_secs_f64(),
            reached.join(" "),
        );
        emit(&line);

        if backend != "std" {
            for r in &self.reaches {
                assert!(
                    r.count() > 0,
                    "model {}: no execution reached `{}` ({setting}); the model is vacuous for it",
                    self.name,
                    r.name
                );
            }
        }
    }

    /// The real-time pass of a history-checking loom model (see the module
    /// documentation): the model again with every atomic access a
    /// read-modify-write, so that its histories are checked in real-time
    /// order. Read-modify-writes conflict with every access, so loom's
    /// reduction prunes less and the pass can be far larger than the first
    /// (`queue::multi_stealer`'s is: its complete first pass fits a pull
    /// request, its complete real-time pass does not): it
    /// starts at the bound the first pass ran at and explores within
    /// [`execution_budget`] executions per attempt, falling back to lower
    /// bounds as the generated scenarios do, and its result says where it
    /// finished. Returns the text its result line ends with. The reach
    /// counters and the execution count are restored to the first run's:
    /// what the line's other fields report.
    fn real_time_pass(&self, counters: &Counters, scenario: Arc<dyn Fn() + Send + Sync>) -> String {
        let first = counters.save();
        // Histories checked before the attempt that counts.
        let checked = Arc::new(AtomicUsize::new(0));
        let start = Instant::now();
        set_access_mode(true);
        let bound = {
            let (executions, checked, before) =
                (counters.executions.clone(), checked.clone(), first[0]);
            explore_within(
                scenario,
                execution_budget(),
                move || {
                    executions.store(before, Relaxed);
                    checked.store(recorder::histories_checked(), Relaxed);
                },
                self.first_bound(),
            )
        };
        set_access_mode(false);
        let executions = counters.executions.load(Relaxed) - first[0];
        counters.restore(&first);
        format!(
            " real_time_pass[{}preemption_bound={} executions={executions} time={:.2}s histories_checked={}]",
            real_time_pass_accesses(),
            bound.map_or("none".to_string(), |b| b.to_string()),
            start.elapsed().as_secs_f64(),
            recorder::histories_checked() - checked.load(Relaxed)
        )
    }

    /// The bound this model's first loom pass runs at without a budget
    /// (`None`: complete).
    fn first_bound(&self) -> Option<usize> {
        #[cfg(loom)]
        {
            loom_bound(self.default_bound, self.max_bound, self.ends_only_up_to)
        }
        #[cfg(not(loom))]
        {
            None
        }
    }
}

/// The loom budget of one generated scenario's pass, and of a model's
/// real-time pass, in executions per attempt (see [`explore_within`]):
/// `MODELSYNC_EXECUTION_BUDGET` (default 10,000, a few seconds).
pub fn execution_budget() -> usize {
    env_parse::<usize>("MODELSYNC_EXECUTION_BUDGET", "a number").unwrap_or(10_000)
}

/// Whether this process runs every loom model with every atomic access a
/// read-modify-write, once (`MODELSYNC_EVERY_ACCESS_RMW=1`, the audit run
/// of `ci/loom-audit`), instead of weak memory first.
pub fn audit_run() -> bool {
    #[cfg(loom)]
    {
        loom_settings().every_access_rmw
    }
    #[cfg(not(loom))]
    {
        false
    }
}

/// Makes the loom models this thread runs from now on use every atomic
/// access as a read-modify-write, or loom's own accesses, through the hook
/// the code under test registered ([`set_access_mode_hook`]). Nothing
/// without a hook, and nothing under the other backends, whose accesses
/// are never stale.
pub fn set_access_mode(every_access_rmw: bool) {
    #[cfg(loom)]
    if let Some(hook) = ACCESS_MODE_HOOK.get() {
        (hook.set)(every_access_rmw);
    }
    #[cfg(not(loom))]
    let _ = every_access_rmw;
}

/// The code under test's switch of its atomic accesses (see
/// [`set_access_mode_hook`]).
#[derive(Clone, Copy)]
struct AccessModeHook {
    #[cfg_attr(not(loom), allow(dead_code))] // only loom switches accesses
    set: fn(bool),
    current: fn() -> bool,
}

static ACCESS_MODE_HOOK: std::sync::OnceLock<AccessModeHook> = std::sync::OnceLock::new();

/// Registers the code under test's switch that makes every atomic access
/// a read-modify-write under loom: `set` turns it on or off for the loom
/// models the calling OS thread runs from then on, and `current` says
/// whether it is on for this OS thread (modelsync's are its `sync` module's
/// `set_every_access_rmw` and `every_access_rmw`).
/// The harness turns it on for a history-checking model's real-time pass
/// and for the audit run (`MODELSYNC_EVERY_ACCESS_RMW=1`), and off again
/// after; the recorder asks `current` which order a history is checked in.
///
/// Register it before any model runs (a project's own `model!` wrapper
/// can, as modelsync's models do). Only the first registration in a
/// process counts; later ones are ignored, so registering on every model
/// is harmless. Returns whether this call registered it.
///
/// Code under test with no such switch (none registered) still gets a
/// real-time pass, but one that changes no access: its histories are
/// checked in happens-before order, as in the first pass, because a read
/// may still return a stale value, which real-time order would wrongly
/// reject. Such a pass only repeats the first, and its result line says
/// so (`real_time_pass[accesses=unchanged(no-access-mode-hook) ...]`, and
/// `accesses=unchanged(no-access-mode-hook)` for the audit run). Only
/// loom builds use the hook.
pub fn set_access_mode_hook(set: fn(bool), current: fn() -> bool) -> bool {
    ACCESS_MODE_HOOK
        .set(AccessModeHook { set, current })
        .is_ok()
}

/// Whether the loom models this OS thread runs make every atomic access a
/// read-modify-write: the registered hook's answer (see
/// [`set_access_mode_hook`]); false without a hook, or outside loom.
pub fn every_access_rmw() -> bool {
    if !cfg!(loom) {
        return false;
    }
    ACCESS_MODE_HOOK.get().is_some_and(|hook| (hook.current)())
}

/// How the audit run's result lines describe its accesses.
fn audit_accesses() -> &'static str {
    if ACCESS_MODE_HOOK.get().is_some() {
        "accesses=all-read-modify-write"
    } else {
        "accesses=unchanged(no-access-mode-hook)"
    }
}

/// What a real-time pass's result says before its bound: nothing when the
/// code under test registered its switch (the pass is what the module
/// documentation says), else that it changed no access.
pub(crate) fn real_time_pass_accesses() -> &'static str {
    if ACCESS_MODE_HOOK.get().is_some() {
        ""
    } else {
        "accesses=unchanged(no-access-mode-hook) "
    }
}

/// Prints a result line to stderr and, with `MODELSYNC_REPORT=<file>`,
/// appends it there.
fn emit(line: &str) {
    let _ = writeln!(std::io::stderr(), "{line}");
    if let Ok(path) = std::env::var("MODELSYNC_REPORT") {
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .unwrap_or_else(|e| panic!("cannot open MODELSYNC_REPORT={path}: {e}"));
        writeln!(file, "{line}").expect("write MODELSYNC_REPORT");
    }
}

/// The build's backend name, as result lines print it.
pub fn backend_name() -> &'static str {
    sync::BACKEND
}

/// Runs `body` under the build's backend for a generated scenario, or for
/// a model's real-time pass. Under loom each attempt explores at most
/// `max_executions` executions (a budget in executions, not time, so that
/// the outcome is the same on every machine): complete if that finishes
/// it, else the highest bound up to 3 that does, found by climbing from 0
/// (`reset` clears the caller's counts before each attempt; the answer's
/// are the ones left). With `highest` set, the first
/// attempt is at that bound instead of complete (a model's real-time pass
/// starts where its first pass ran). Returns the loom bound it finished at
/// (`None`: complete, or not loom). A numeric `LOOM_MAX_PREEMPTIONS` is the
/// highest bound tried (the mutation runs ask for 2), within the same
/// budget.
pub fn explore_within(
    body: Arc<dyn Fn() + Send + Sync>,
    max_executions: usize,
    reset: impl Fn(),
    highest: Option<usize>,
) -> Option<usize> {
    assert_overflow_checks();
    #[cfg(loom)]
    {
        // A numeric override is the highest bound tried; `none` (the
        // nightly's) is the default.
        let top = match (loom_settings().bound_override, highest) {
            (Some(Some(asked)), Some(highest)) => Some(asked.min(highest)),
            (Some(Some(asked)), None) => Some(asked),
            (_, highest) => highest,
        };
        let ran = Arc::new(AtomicUsize::new(0));
        let counted: Arc<dyn Fn() + Send + Sync> = {
            let ran = ran.clone();
            Arc::new(move || {
                ran.fetch_add(1, Relaxed);
                body()
            })
        };
        // One attempt at `bound`: whether it finished within the budget.
        let attempt = |bound: Option<usize>| {
            reset();
            ran.store(0, Relaxed);
            let mut builder = loom::model::Builder::new();
            builder.preemption_bound = bound;
            // loom looks at the budget before it runs an execution,
            // counting from 1: `max_permutations = n` runs n - 1. So n is
            // one more than the budget, and a run stopped by it has run
            // exactly the budget. (It was the budget until 2026-11-26: a
            // scenario stopped one execution short of the budget was
            // reported complete.)
            builder.max_permutations = Some(max_executions + 1);
            // loom checks the budget only every `checkpoint_interval`
            // executions.
            builder.checkpoint_interval = max_executions + 1;
            builder.max_duration = None;
            let run = counted.clone();
            builder.check(move || run());
            // Exactly the budget may be a complete run that size: counted
            // as out of budget, the same on every machine.
            ran.load(Relaxed) < max_executions
        };
        // The top first (complete, or the highest bound asked for); if it
        // runs out of budget, the highest bound below it that finishes.
        // A bound's executions include every lower bound's, so that is
        // found climbing from 0 until one runs out: at most one more
        // attempt spends the whole budget, where trying the bounds from
        // the top down spends it on each bound above the answer (a
        // scenario that finishes only at bound 0 spent four budgets).
        // The answer's counts are then its own: it runs once more, within
        // its (smaller) executions, after the attempt that ran out.
        if attempt(top) {
            return top;
        }
        let highest_below = top.map_or(3, |top| top.saturating_sub(1));
        if top == Some(0) {
            panic!(
                "a scenario finishes at no bound (not even 0) within {max_executions} executions"
            );
        }
        let mut finished = None;
        for bound in 0..=highest_below {
            if !attempt(Some(bound)) {
                break;
            }
            finished = Some(bound);
        }
        let Some(bound) = finished else {
            panic!(
                "a scenario finishes at no bound (not even 0) within {max_executions} executions"
            );
        };
        if bound < highest_below {
            // The last attempt ran out: the answer's counts again.
            assert!(
                attempt(Some(bound)),
                "loom explored bound {bound} differently twice"
            );
        }
        Some(bound)
    }
    #[cfg(not(loom))]
    {
        let _ = (max_executions, &reset, highest);
        let counters = Counters {
            executions: Arc::new(AtomicUsize::new(0)),
            reaches: Vec::new(),
        };
        run(None, None, None, &counters, body);
        None
    }
}

/// The highest loom bound a numeric `LOOM_MAX_PREEMPTIONS` asks for
/// (`None`: no override, or `none`, or not loom): what `explore_within`
/// returns for a scenario that finishes within its budget.
pub fn bound_asked() -> Option<usize> {
    #[cfg(loom)]
    {
        loom_settings().bound_override.flatten()
    }
    #[cfg(not(loom))]
    {
        None
    }
}

/// The setting a shuttle or std run uses, as its result line prints it.
pub fn backend_setting() -> String {
    if cfg!(shuttle) {
        format!(
            "seed={} iters={} pct_depth={}",
            env_parse::<u64>("SHUTTLE_RANDOM_SEED", "a decimal u64").unwrap_or(24301),
            env_parse::<usize>("MODELSYNC_SHUTTLE_ITERS", "a number").unwrap_or(1000),
            env_parse::<usize>("MODELSYNC_SHUTTLE_PCT_DEPTH", "a number").unwrap_or(3),
        )
    } else if cfg!(loom) {
        "preemption_bound=none".to_string()
    } else {
        format!(
            "stress_iters={}",
            env_parse::<usize>("MODELSYNC_STRESS_ITERS", "a number").unwrap_or(if cfg!(miri) {
                2
            } else {
                STRESS_ITERS
            })
        )
    }
}

/// Seeded bug `queue-plain-add-on-tail` (a `+` that must wrap) is caught
/// only by overflow checks, which stable Rust cannot test for at compile
/// time (`cfg(overflow_checks)` is unstable): a build without them fails
/// every model here instead.
/// The probe is this crate's code, so it sees this crate's setting: a
/// per-package profile override that treats this crate and the code under
/// test differently escapes it. (modelsync's `models/main.rs` also refuses
/// to compile without debug assertions.)
fn assert_overflow_checks() {
    if cfg!(not(any(loom, shuttle))) {
        return;
    }
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    let on = *ON.get_or_init(|| {
        const PROBE: &str = "modelsync-overflow-probe";
        // The probe's panic is expected: keep it out of the test output.
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if std::thread::current().name() != Some(PROBE) {
                previous(info);
            }
        }));
        std::thread::Builder::new()
            .name(PROBE.into())
            .spawn(|| std::hint::black_box(u32::MAX) + 1)
            .expect("spawn the overflow probe")
            .join()
            .is_err()
    });
    assert!(
        on,
        "model builds need overflow checks: set `overflow-checks = true` under \
         `[profile.release]` in the workspace's Cargo.toml (modelsync's does), and do not \
         override it (e.g. CARGO_PROFILE_RELEASE_OVERFLOW_CHECKS)"
    );
}

/// loom's settings, read once per process: `LOOM_MAX_PREEMPTIONS=none` is
/// ours (loom itself accepts only numbers), so it is taken out of the
/// environment before loom's `Builder::new` reads it.
#[cfg(loom)]
struct LoomSettings {
    /// `None`: each model's default. `Some(None)`: unbounded for all.
    bound_override: Option<Option<usize>>,
    budget: Option<Duration>,
    /// `MODELSYNC_EVERY_ACCESS_RMW=1`: see [`audit_run`].
    every_access_rmw: bool,
}

#[cfg(loom)]
fn loom_settings() -> &'static LoomSettings {
    static SETTINGS: std::sync::OnceLock<LoomSettings> = std::sync::OnceLock::new();
    SETTINGS.get_or_init(|| {
        let bound_override = match std::env::var("LOOM_MAX_PREEMPTIONS") {
            Err(_) => None,
            Ok(v) if v == "none" => {
                // Edition 2021: safe. std serialises its own environment
                // accesses, and loom reads the environment only through std.
                std::env::remove_var("LOOM_MAX_PREEMPTIONS");
                Some(None)
            }
            Ok(v) => Some(Some(v.parse().unwrap_or_else(|_| {
                panic!("LOOM_MAX_PREEMPTIONS={v:?} is neither a number nor `none`")
            }))),
        };
        let budget = env_parse::<u64>("MODELSYNC_LOOM_BUDGET", "a number of seconds")
            .map(Duration::from_secs);
        let every_access_rmw = match std::env::var("MODELSYNC_EVERY_ACCESS_RMW").as_deref() {
            Err(_) | Ok("0") => false,
            Ok("1") => true,
            Ok(v) => panic!("MODELSYNC_EVERY_ACCESS_RMW={v:?} is neither 0 nor 1"),
        };
        LoomSettings {
            bound_override,
            budget,
            every_access_rmw,
        }
    })
}

/// The bound a model runs at without a budget (`None`: complete): its
/// own unless `LOOM_MAX_PREEMPTIONS` overrides it, never above its caps.
#[cfg(loom)]
fn loom_bound(
    default_bound: Option<usize>,
    max_bound: Option<usize>,
    ends_only_up_to: Option<usize>,
) -> Option<usize> {
    let bound = match (loom_settings().bound_override, max_bound) {
        (Some(Some(asked)), Some(max)) => Some(asked.min(max)),
        (Some(asked), _) => asked,
        (None, _) => default_bound,
    };
    match ends_only_up_to {
        Some(cap) => Some(bound.map_or(cap, |b| b.min(cap))),
        None => bound,
    }
}

/// One loom run at `bound`; returns whether it finished (explored every
/// execution) rather than running out of `budget`.
#[cfg(loom)]
fn loom_run(
    bound: Option<usize>,
    budget: Option<Duration>,
    scenario: &Arc<dyn Fn() + Send + Sync>,
) -> bool {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = bound;
    if budget.is_some() {
        builder.max_duration = budget;
        // loom checks its time budget only every `checkpoint_interval`
        // executions (20,000 by default).
        builder.checkpoint_interval = 500;
    }
    let start = Instant::now();
    let scenario = scenario.clone();
    builder.check(move || scenario());
    // loom returns early only once the budget has passed.
    builder.max_duration.map_or(true, |b| start.elapsed() < b)
}

#[cfg(loom)]
fn run(
    default_bound: Option<usize>,
    max_bound: Option<usize>,
    ends_only_up_to: Option<usize>,
    counters: &Counters,
    scenario: Arc<dyn Fn() + Send + Sync>,
) -> (&'static str, String) {
    let settings = loom_settings();
    let bound = loom_bound(default_bound, max_bound, ends_only_up_to);
    let show = |b: Option<usize>| b.map_or("none".to_string(), |b| b.to_string());
    if let Some(cap) = ends_only_up_to {
        // No budget of ours: the capped run is short.
        let finished = loom_run(bound, None, &scenario);
        return (
            "loom",
            format!(
                "preemption_bound={} capped:loom-does-not-end-above-{cap}{}",
                show(bound),
                if finished {
                    ""
                } else {
                    " TRUNCATED(not-exhaustive)"
                }
            ),
        );
    }
    // LOOM_MAX_DURATION is loom's own budget; ours takes precedence.
    let budget = settings
        .budget
        .or_else(|| loom::model::Builder::new().max_duration);
    if loom_run(bound, budget, &scenario) {
        return ("loom", format!("preemption_bound={}", show(bound)));
    }
    let budget_secs = budget.map_or(0, |b| b.as_secs());
    if bound.is_some() || settings.budget.is_none() {
        return (
            "loom",
            format!(
                "preemption_bound={} TRUNCATED-AFTER-{budget_secs}s(not-exhaustive)",
                show(bound)
            ),
        );
    }
    // The nightly's fallback: the highest bound that finishes in budget,
    // reported with that run's counts.
    let zero = vec![0; counters.reaches.len() + 1];
    let mut finished = None;
    // From 1: a model capped at bound 1 reports 1. From 0 for a model
    // capped at 0, whose bound 1 may not finish within a short budget.
    for b in max_bound.map_or(1, |max| max.min(1)).. {
        counters.restore(&zero);
        if !loom_run(Some(b), budget, &scenario) {
            break;
        }
        finished = Some((b, counters.save()));
    }
    let (highest, counts) = finished.unwrap_or_else(|| {
        panic!("not even preemption bound 1 finishes within the {budget_secs}s budget")
    });
    counters.restore(&counts);
    (
        "loom",
        format!("preemption_bound={highest} unbounded=out-of-budget({budget_secs}s)"),
    )
}

#[cfg(shuttle)]
fn run(
    _default_bound: Option<usize>,
    _max_bound: Option<usize>,
    _ends_only_up_to: Option<usize>,
    _counters: &Counters,
    scenario: Arc<dyn Fn() + Send + Sync>,
) -> (&'static str, String) {
    use shuttle::scheduler::{PctScheduler, RandomScheduler};
    use shuttle::{Config, Runner};

    let iters = env_parse("MODELSYNC_SHUTTLE_ITERS", "a number").unwrap_or(1000);
    // shuttle also reads SHUTTLE_RANDOM_SEED itself and accepts only
    // decimal, so this does too.
    let seed = env_parse("SHUTTLE_RANDOM_SEED", "a decimal u64").unwrap_or(24301);
    let depth = env_parse("MODELSYNC_SHUTTLE_PCT_DEPTH", "a number").unwrap_or(3);
    let budget =
        env_parse::<u64>("MODELSYNC_SHUTTLE_SECS", "a number of seconds").map(Duration::from_secs);
    let config = || {
        let mut config = Config::new();
        // Each scheduler gets half the budget.
        config.max_time = budget.map(|b| b / 2);
        config
    };
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
fn run(
    _default_bound: Option<usize>,
    _max_bound: Option<usize>,
    _ends_only_up_to: Option<usize>,
    _counters: &Counters,
    scenario: Arc<dyn Fn() + Send + Sync>,
) -> (&'static str, String) {
    let default = if cfg!(miri) { 2 } else { STRESS_ITERS };
    let iters = env_parse("MODELSYNC_STRESS_ITERS", "a number").unwrap_or(default);
    for _ in 0..iters {
        scenario();
    }
    ("std", format!("stress_iters={iters}"))
}
