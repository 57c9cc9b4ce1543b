//! Every scenario of a stated scope, in place of a sample.
//!
//! A [`Scope`] names what a component's complete run covers: the threads
//! of the concurrent part, each with its alphabet (every operation it may
//! call, arguments included), how many operations each calls, the final
//! part that observes what is left, and the starting regimes: situations
//! of the component's internal state (a counter wrapped, a list turned
//! over, a worker already asleep), each reached by a sequential prefix.
//! A prefix costs loom nothing (one thread: no choices), so a regime that
//! only a long history reaches is a starting point like any other.
//!
//! [`every_scenario`] enumerates the scope: for each regime, every choice
//! of each thread's operations, then deduplicates them up to symmetry
//! (threads with the same alphabet are interchangeable, and the subject
//! may rename its values or keys: [`Subject::canonical`]), and runs each
//! left complete under loom, both passes (weak memory, then every access a
//! read-modify-write with histories in real-time order), every history
//! checked against the specification and every item against the ledger.
//! The result line says the scope, how many scenarios it holds before and
//! after symmetry, and how many finished complete; a regime whose prefix
//! did not reach it (its `reached` test, asked of the main thread's actor
//! after the prefix) leaves its count at zero, and the run fails.
//!
//! Under shuttle and on real threads (`cargo test`) the same scenarios
//! run, each with the backend's own setting, about [`NOT_LOOM_MAX`] of
//! them evenly spaced within each regime (every regime at least once), and
//! the line says how many: the completeness claim is loom's.

use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;
use std::time::Instant;

use crate::scenario::{self, Scenario, Subject};
use crate::Model;

/// A situation of a component's internal state that a concurrent part
/// starts from, and the sequential prefix that reaches it.
pub struct Regime<P: Subject> {
    /// As the result line and VERIFICATION.md name it.
    pub name: &'static str,
    /// The scenario's initial part.
    pub prefix: Vec<P::Op>,
    /// Whether the main thread's actor, after the prefix, is in the regime
    /// (the component's internals, asked directly; `&mut` because a
    /// receiver's internals are reached only through its own handle, which
    /// the question must leave as it was).
    pub reached: fn(&mut P::Actor) -> bool,
}

impl<P: Subject> Regime<P> {
    /// Regime `name`, reached by `prefix`, which `reached` recognises.
    pub fn new(name: &'static str, prefix: Vec<P::Op>, reached: fn(&mut P::Actor) -> bool) -> Self {
        Regime {
            name,
            prefix,
            reached,
        }
    }
}

/// What a complete run covers.
pub struct Scope<P: Subject> {
    /// A short name for the result line (no spaces).
    pub name: &'static str,
    /// One alphabet per thread of the concurrent part: every operation the
    /// thread may call. Threads with equal alphabets are interchangeable
    /// unless `ordered_threads`.
    pub threads: Vec<Vec<P::Op>>,
    /// How many operations each thread calls: every length from the first
    /// to the second, inclusive.
    pub lengths: (usize, usize),
    /// The final part, the same in every scenario.
    pub post: Vec<P::Op>,
    /// The starting regimes.
    pub regimes: Vec<Regime<P>>,
    /// Threads with equal alphabets are not interchangeable (a thread's
    /// index means something to the subject beyond its operations).
    pub ordered_threads: bool,
    /// Whether each scenario also runs in the orders where one thread's
    /// operations all finish, in real time only, before another thread's
    /// begin: a real-time-only hand-off (`scenario::Handoff`) from each
    /// thread's last operation to each other thread's first. The
    /// recorder's clock alone cannot make loom explore those orders (a
    /// thread's first call is recorded when loom starts the thread, and
    /// loom orders only dependent accesses), and they are where an answer
    /// from a stale view shows: a logic mistake in the real-time pass, a
    /// stale read under weak memory where the contract promises real time
    /// (`Spec::real_time`). The result line counts them
    /// (`real_time_orders`).
    pub real_time_orders: bool,
    /// Whether the component's contract allows the threads' operations
    /// after the regime's prefix (for example: a parker's owner parks at
    /// most as often as permits can be given; a sync channel's blocking
    /// calls can all complete). Scenarios it refuses are not in the scope;
    /// the result line says how many were left out.
    pub contract: Contract<P::Op>,
    /// `Some(n)` when this is a shard of a scope of `n` regimes
    /// ([`Scope::only_regimes`]): the shard spreads its share of the
    /// scope's PCT runs ([`pct_iterations`]), so that a scope costs a pull
    /// request's shuttle run the same however it is sharded. `None`: the
    /// whole scope.
    pub shard_of: Option<usize>,
}

/// [`Scope::contract`]: whether the threads' operations (the second
/// argument), after the regime's prefix (the first), are within the
/// component's contract; the third, `Some((from, to))`, asks it of a
/// real-time order (`Scope::real_time_orders`): thread `from` (numbered
/// from 1) finishes its operations before thread `to` begins, so a
/// blocking call of `from` cannot be released by `to`.
pub type Contract<Op> = fn(&[Op], &[Vec<Op>], Option<(usize, usize)>) -> bool;

/// A [`Scope::contract`] that allows every scenario, in every order.
pub fn any_operations<Op>(_: &[Op], _: &[Vec<Op>], _: Option<(usize, usize)>) -> bool {
    true
}

impl<P: Subject> Scope<P> {
    /// The part of the scope that starts from the regimes `names` alone:
    /// a shard of a scope too large for one model's time (the nightly
    /// runs one model per shard). Each name must be one of its regimes.
    pub fn only_regimes(mut self, names: &[&str]) -> Self {
        for name in names {
            assert!(
                self.regimes.iter().any(|r| r.name == *name),
                "{}: no regime {name}",
                self.name
            );
        }
        self.shard_of.get_or_insert(self.regimes.len());
        self.regimes.retain(|r| names.contains(&r.name));
        self
    }
}

/// Scenarios a shuttle or real-thread run of a scope runs at most.
pub const NOT_LOOM_MAX: usize = 24;

/// Every sequence of `len` operations of `alphabet`, as indices.
fn sequences(alphabet: usize, (min, max): (usize, usize)) -> Vec<Vec<usize>> {
    let mut out = Vec::new();
    for len in min..=max {
        let mut seq = vec![0; len];
        loop {
            out.push(seq.clone());
            // The next sequence in lexicographic order, or done.
            let Some(i) = (0..len).rev().find(|&i| seq[i] + 1 < alphabet) else {
                break;
            };
            seq[i] += 1;
            seq[i + 1..].iter_mut().for_each(|x| *x = 0);
        }
    }
    out
}

/// Scenarios left after symmetry, each with the index of its regime.
pub type Enumerated<Op> = Vec<(usize, Scenario<Op>)>;

/// The real-time orders of `scenario` its contract allows, if
/// `real_time_orders`: one copy per ordered pair of its threads, with a
/// real-time-only hand-off from the first's last operation to the
/// second's first.
fn orders<Op: Clone>(
    scenario: &Scenario<Op>,
    real_time_orders: bool,
    contract: Contract<Op>,
) -> Vec<Scenario<Op>> {
    let mut out = Vec::new();
    if !real_time_orders {
        return out;
    }
    let n = scenario.threads.len();
    for from in 1..=n {
        for to in (1..=n).filter(|&to| to != from) {
            if !contract(&scenario.init, &scenario.threads, Some((from, to))) {
                continue;
            }
            let mut ordered = scenario.clone();
            ordered.handoffs = vec![scenario::Handoff {
                from: (from, scenario.threads[from - 1].len() - 1),
                to: (to, 0),
                synchronised: false,
            }];
            out.push(ordered);
        }
    }
    out
}

/// Whether one of `threads` calls only operations whose parts
/// ([`Subject::footprint`]) are disjoint from every other thread's: such
/// a thread commutes with the rest, so every execution of the scenario
/// is one of the other threads' scenario with this thread's calls before
/// or after it, checked by the smaller scope (one thread fewer), whose
/// every scenario the main job runs with no preemption bound, and by the
/// sequential specification.
/// A subject that cannot say (`None`) has no independent thread.
fn has_independent_thread<P: Subject>(threads: &[Vec<P::Op>]) -> bool {
    let parts: Option<Vec<u64>> = threads
        .iter()
        .map(|ops| {
            ops.iter()
                .map(P::footprint)
                .try_fold(0, |all, p| p.map(|p| all | p))
        })
        .collect();
    let Some(parts) = parts else { return false };
    (0..parts.len()).any(|t| {
        let others = parts
            .iter()
            .enumerate()
            .filter(|&(u, _)| u != t)
            .fold(0, |all, (_, &p)| all | p);
        parts[t] & others == 0
    })
}

/// The scope's scenarios: (how many it holds, how many the contract left
/// out, those left after symmetry, each with the index of its regime).
/// With `real_time_orders`, each held scenario counts once, and the
/// scenarios left include its real-time orders (see `orders`). With
/// `commuting_cut` (one-size-up scopes), a scenario with a thread
/// independent of the others is left out too (`has_independent_thread`);
/// the fourth count says how many.
pub fn enumerate<P: Subject>(scope: &Scope<P>) -> (usize, usize, Enumerated<P::Op>) {
    let (held, refused, left, _) = enumerate_with(scope, Cuts::Symmetry);
    (held, refused, left)
}

/// Which cuts of a scope's cost apply (VERIFICATION.md, "Cuts"): none
/// (every held scenario runs, in every real-time order), symmetry (a
/// class of scenarios equal up to interchangeable threads and the
/// subject's renaming runs once), or symmetry and commuting threads
/// (`has_independent_thread`; one-size-up scopes only). A complete scope
/// runs with symmetry; `MODELSYNC_SCOPE_CUTS=none|symmetry|all` overrides
/// it, so that a cut is measured, before and after, on the same scope,
/// and checked to lose nothing (the scope's verdict is the same).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Cuts {
    /// Every held scenario, in every real-time order.
    None,
    /// One scenario of each class equal up to symmetry.
    Symmetry,
    /// Symmetry, and commuting threads where they apply.
    All,
}

impl Cuts {
    /// The cuts a run applies: `default`, unless `MODELSYNC_SCOPE_CUTS`
    /// names others.
    fn from_env(default: Cuts) -> Cuts {
        match std::env::var("MODELSYNC_SCOPE_CUTS").as_deref() {
            Err(_) => default,
            Ok("none") => Cuts::None,
            Ok("symmetry") => Cuts::Symmetry,
            Ok("all") => Cuts::All,
            Ok(other) => panic!("MODELSYNC_SCOPE_CUTS={other:?} is none of none, symmetry, all"),
        }
    }

    fn label(self) -> &'static str {
        match self {
            Cuts::None => "none",
            Cuts::Symmetry => "symmetry",
            Cuts::All => "symmetry+commuting",
        }
    }
}

fn enumerate_with<P: Subject>(
    scope: &Scope<P>,
    cuts: Cuts,
) -> (usize, usize, Enumerated<P::Op>, usize) {
    let commuting_cut = cuts == Cuts::All;
    assert!(
        scope.lengths.0 >= 1 && scope.lengths.0 <= scope.lengths.1,
        "{}: a thread calls at least one operation",
        scope.name
    );
    let per_thread: Vec<Vec<Vec<usize>>> = scope
        .threads
        .iter()
        .map(|alphabet| sequences(alphabet.len(), scope.lengths))
        .collect();
    let mut held = 0;
    let mut refused = 0;
    let mut commuting = 0;
    let mut seen = HashSet::new();
    let mut left = Vec::new();
    for (r, regime) in scope.regimes.iter().enumerate() {
        let mut choice = vec![0usize; per_thread.len()];
        'all: loop {
            let threads: Vec<Vec<P::Op>> = choice
                .iter()
                .enumerate()
                .map(|(t, &c)| {
                    per_thread[t][c]
                        .iter()
                        .map(|&i| scope.threads[t][i].clone())
                        .collect()
                })
                .collect();
            if !(scope.contract)(&regime.prefix, &threads, None) {
                refused += 1;
            } else if commuting_cut && has_independent_thread::<P>(&threads) {
                held += 1;
                commuting += 1;
            } else {
                held += 1;
                let scenario = Scenario {
                    init: regime.prefix.clone(),
                    threads,
                    post: scope.post.clone(),
                    handoffs: vec![],
                };
                let ordered = orders(&scenario, scope.real_time_orders, scope.contract);
                for (o, ordered) in std::iter::once(scenario).chain(ordered).enumerate() {
                    let (key, ordered) = canonical::<P>(scope, ordered, &choice);
                    // With no cuts, every choice and order is its own class.
                    let key = if cuts == Cuts::None {
                        format!("{choice:?} {o}")
                    } else {
                        key
                    };
                    if seen.insert((r, key)) {
                        left.push((r, ordered));
                    }
                }
            }
            // The next choice, the last thread fastest.
            for t in (0..choice.len()).rev() {
                choice[t] += 1;
                if choice[t] < per_thread[t].len() {
                    continue 'all;
                }
                choice[t] = 0;
            }
            break;
        }
    }
    (held, refused, left, commuting)
}

/// The scenario's class under the scope's symmetries: the operation lists
/// of threads with equal alphabets put in the order of their enumeration
/// index (a hand-off's threads renumbered with them, and ties between
/// equal lists broken by the hand-off), then the subject's renaming of
/// values and keys.
fn canonical<P: Subject>(
    scope: &Scope<P>,
    scenario: Scenario<P::Op>,
    choice: &[usize],
) -> (String, Scenario<P::Op>) {
    // The scenario runs with the subject's names (items numbered, keys
    // renamed), as every scenario does; a real-time order whose thread the
    // subject left with nothing to call (a call on an end the prefix
    // consumed) is the scenario itself.
    let runs = P::canonical(scenario).keep_valid_handoffs();
    let mut scenario = runs.clone();
    if !scope.ordered_threads {
        let alphabet = |t: usize| format!("{:?}", scope.threads[t]);
        let n = choice.len();
        // moved_to[t]: where thread t's list goes (threads from 0 here,
        // from 1 in hand-offs).
        let mut moved_to: Vec<usize> = (0..n).collect();
        let roles: Vec<usize> = (0..n)
            .map(|t| {
                scenario.handoffs.first().map_or(0, |h| {
                    usize::from(h.from.0 == t + 1) * 2 + usize::from(h.to.0 == t + 1)
                })
            })
            .collect();
        for first in 0..n {
            if (0..first).any(|u| alphabet(u) == alphabet(first)) {
                continue;
            }
            let members: Vec<usize> = (first..n)
                .filter(|&u| alphabet(u) == alphabet(first))
                .collect();
            let mut lists: Vec<(usize, usize, usize, Vec<P::Op>)> = members
                .iter()
                .map(|&u| (choice[u], roles[u], u, scenario.threads[u].clone()))
                .collect();
            lists.sort_by_key(|(c, role, _, _)| (*c, *role));
            for (&slot, (_, _, from, ops)) in members.iter().zip(lists) {
                moved_to[from] = slot;
                scenario.threads[slot] = ops;
            }
        }
        for h in &mut scenario.handoffs {
            h.from.0 = moved_to[h.from.0 - 1] + 1;
            h.to.0 = moved_to[h.to.0 - 1] + 1;
        }
    }
    let key = P::canonical(scenario);
    (
        format!("{:?} {:?} {:?}", key.init, key.threads, key.handoffs),
        runs,
    )
}

/// Runs every scenario of `scope` (see the module documentation) and
/// prints one result line; fails if a scenario did not finish complete
/// under loom, a history or the ledger failed, or a regime was never
/// reached.
pub fn every_scenario<P: Subject>(model: Model, scope: Scope<P>) {
    run_scope(model, scope, Claim::Complete);
}

/// A scope one size up from a component's complete one (three threads of
/// one call, or two threads of one or two calls): as [`every_scenario`],
/// but under loom a scenario whose every execution (no preemption bound)
/// does not fit within the budget runs, in each pass, at the highest preemption bound that does,
/// and the run does not fail for it: the result line says how many
/// finished complete and the lowest bound of the rest
/// (`complete=X bounded=Y(lowest_bound=N)`), which the status states
/// ("complete in scope S for X of Y scenarios, bounded at N for the
/// rest"). Under shuttle every scenario runs, not a sample, under PCT at
/// depths 2 and 3, [`pct_iterations`] runs each, and the result line
/// gives the lower bound PCT guarantees, per run, of finding a bug of
/// each depth, for the scope's weakest scenario (see [`pct_bound`]).
pub fn every_scenario_complete_or_bounded<P: Subject>(model: Model, scope: Scope<P>) {
    run_scope(model, scope, Claim::CompleteOrBounded);
}

/// What a scope's run claims, and so what it requires.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Claim {
    /// Every scenario complete under loom, in both passes.
    Complete,
    /// Each scenario complete, or at the highest bound that finishes.
    CompleteOrBounded,
}

/// The loom budget of each pass of a one-size-up scope's scenario:
/// `MODELSYNC_BOUNDED_SCOPE_BUDGET` (default
/// [`scenario::DEFAULT_SCENARIO_BUDGET`] executions), within
/// which it runs complete or climbs to its highest finishing bound. Not
/// the complete runs' `MODELSYNC_COMPLETE_BUDGET`, which the nightly
/// raises for scopes that must finish complete: a larger budget here
/// would buy a few scenarios a complete run at the cost of every bounded
/// one spending it first.
pub fn bounded_scope_budget() -> usize {
    std::env::var("MODELSYNC_BOUNDED_SCOPE_BUDGET")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(scenario::DEFAULT_SCENARIO_BUDGET)
}

/// PCT runs per scenario and depth of a one-size-up scope under shuttle:
/// `MODELSYNC_SCOPE_PCT_ITERS`, or, unset, as many as spread
/// [`PCT_RUNS_PER_SCOPE`] runs of each depth over the scope's scenarios
/// (at least 2, at most 1,000), so that a pull request's shuttle run
/// costs about the same for every scope; the result line states the
/// guarantee that gives. A shard of `regimes.1` regimes holding
/// `regimes.0` of them, with `scenarios` scenarios, spreads that share of
/// the runs.
pub fn pct_iterations(scenarios: usize, regimes: (usize, usize)) -> usize {
    std::env::var("MODELSYNC_SCOPE_PCT_ITERS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| {
            let share = PCT_RUNS_PER_SCOPE * regimes.0 / regimes.1.max(1);
            (share / scenarios.max(1)).clamp(2, 1_000)
        })
}

/// PCT runs of each depth a one-size-up scope spreads over its scenarios
/// under shuttle, unless `MODELSYNC_SCOPE_PCT_ITERS` says otherwise.
pub const PCT_RUNS_PER_SCOPE: usize = 100_000;

/// PCT's guarantee (Burckhardt, Kothari, Musuvathi and Nagarakatte, "A
/// randomized scheduler with probabilistic guarantees of finding bugs",
/// ASPLOS 2010, Theorem 1): one run of depth `depth` over `threads` threads
/// and `steps` steps finds a given bug of that depth with probability at
/// least `1 / (threads * steps^(depth - 1))`; `runs` independent runs miss
/// it with probability at most `(1 - p)^runs`. Returns the probability
/// that `runs` runs find it.
pub fn pct_bound(threads: usize, steps: usize, depth: u32, runs: usize) -> f64 {
    let per_run = 1.0 / (threads as f64 * (steps.max(1) as f64).powi(depth as i32 - 1));
    1.0 - (1.0 - per_run).powi(runs as i32)
}

fn run_scope<P: Subject>(model: Model, scope: Scope<P>, claim: Claim) {
    if !model.runs_in_this_tier() {
        return;
    }
    let name = model.name().to_string();
    let start = Instant::now();
    let cuts = Cuts::from_env(match claim {
        Claim::Complete => Cuts::Symmetry,
        Claim::CompleteOrBounded => Cuts::All,
    });
    let (held, refused, left, commuting) = enumerate_with(&scope, cuts);
    let ordered = left.iter().filter(|(_, s)| !s.handoffs.is_empty()).count();
    let distinct = left.len() - ordered;
    // Outside loom, a sample: evenly spaced within each regime, so that
    // every regime is started from (and its reach required); every
    // scenario of a one-size-up scope under shuttle's PCT.
    let pct = cfg!(shuttle) && claim == Claim::CompleteOrBounded;
    // `MODELSYNC_SCOPE_SAMPLE=N`: about N scenarios, spaced as outside
    // loom, to measure what a scope costs before running it whole; the
    // result line then says `sampled=`, and claims nothing of the scope.
    let sample: Option<usize> = std::env::var("MODELSYNC_SCOPE_SAMPLE")
        .ok()
        .and_then(|v| v.parse().ok());
    let chosen: Vec<&(usize, Scenario<P::Op>)> = if (cfg!(loom) || pct) && sample.is_none() {
        left.iter().collect()
    } else {
        let per_regime = (sample.unwrap_or(NOT_LOOM_MAX) / scope.regimes.len()).max(1);
        (0..scope.regimes.len())
            .flat_map(|r| {
                let mine: Vec<&(usize, Scenario<P::Op>)> =
                    left.iter().filter(|(of, _)| *of == r).collect();
                let step = mine.len().div_ceil(per_regime).max(1);
                mine.into_iter().step_by(step)
            })
            .collect()
    };
    let reached: Arc<Vec<AtomicUsize>> =
        Arc::new(scope.regimes.iter().map(|_| AtomicUsize::new(0)).collect());
    let budget = match claim {
        Claim::Complete => scenario::complete_budget(),
        Claim::CompleteOrBounded => bounded_scope_budget(),
    };
    let mut totals = Vec::new();
    // Under PCT: each depth's weakest guarantee over the scenarios, and
    // the most threads and steps seen.
    let regimes = (
        scope.regimes.len(),
        scope.shard_of.unwrap_or(scope.regimes.len()),
    );
    let runs = pct_iterations(chosen.len(), regimes);
    let mut weakest = [1.0f64, 1.0f64];
    let (mut most_threads, mut most_steps) = (0, 0);
    for (index, (r, scenario)) in chosen.into_iter().enumerate() {
        let check = scope.regimes[*r].reached;
        let counter = reached.clone();
        let r = *r;
        let hook: scenario::AfterInit = Arc::new(move |actor: &mut dyn std::any::Any| {
            let actor = actor
                .downcast_mut::<P::Actor>()
                .expect("the hook is the subject's");
            if check(actor) {
                counter[r].fetch_add(1, SeqCst);
            }
        });
        let scenario = Arc::new(scenario.clone());
        let ran = scenario::with_after_init(hook, || {
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                if pct {
                    let (ran, found) = pct_scenario::<P>(&scenario, index, runs);
                    for (weak, bound) in weakest.iter_mut().zip(found.bounds) {
                        *weak = weak.min(bound);
                    }
                    most_threads = most_threads.max(found.threads);
                    most_steps = most_steps.max(found.steps);
                    ran
                } else {
                    scenario::run_one::<P>(&scenario, budget)
                }
            }))
        });
        match ran {
            Ok(ran) => totals.push((scenario.len(), scenario.summary(), ran)),
            Err(payload) => {
                let scenario = (*scenario).clone();
                panic!(
                    "{name}: scenario of scope {} (regime {}) failed. As a model for models/{}.rs:\n\n{}\n{}",
                    scope.name,
                    scope.regimes[r].name,
                    name.split("::").next().unwrap_or(P::NAME),
                    scenario.as_model::<P>(
                        &format!("{}_{}", scope.name.replace('-', "_"), scope.regimes[r].name),
                        &format!("Found by `{name}` in scope {}.", scope.name),
                    ),
                    scenario::panic_text(payload)
                )
            }
        }
    }
    let counts: Vec<(&'static str, usize)> = scope
        .regimes
        .iter()
        .zip(reached.iter())
        .map(|(regime, n)| (regime.name, n.load(SeqCst)))
        .collect();
    let shape = format!(
        "scope={} threads={} ops_per_thread={}..={} alphabet={} regimes={} in_scope={held}{} after_symmetry={distinct}{}{}{}{}",
        scope.name,
        scope.threads.len(),
        scope.lengths.0,
        scope.lengths.1,
        scope
            .threads
            .iter()
            .map(|a| a.len().to_string())
            .collect::<Vec<_>>()
            .join("+"),
        scope.regimes.len(),
        if refused > 0 {
            format!(" outside_contract={refused}")
        } else {
            String::new()
        },
        if scope.real_time_orders {
            format!(" real_time_orders={ordered}")
        } else {
            String::new()
        },
        if commuting > 0 {
            format!(" commuting_threads_cut={commuting}")
        } else {
            String::new()
        },
        if std::env::var_os("MODELSYNC_SCOPE_CUTS").is_some() {
            format!(" cuts={}", cuts.label())
        } else {
            String::new()
        },
        match sample {
            Some(_) => format!(" sampled={}", totals.len()),
            None if cfg!(loom) || pct => String::new(),
            None => format!(" ran={}", totals.len()),
        }
    ) + match claim {
        Claim::Complete => "",
        Claim::CompleteOrBounded => " claim=complete_or_bounded",
    };
    let extra = if pct {
        format!(
            " pct[depths=2,3 runs_per_depth={runs} most_threads={most_threads} \
             most_steps={most_steps} depth2_lower_bound={:.4} depth3_lower_bound={:.6}]",
            weakest[0], weakest[1]
        )
    } else {
        String::new()
    };
    scenario::report_totals(model, &shape, &totals, budget, start, &counts, &extra);
    if claim == Claim::Complete {
        scenario::require_complete(&name, &totals, budget);
    }
}

/// What PCT guarantees for one scenario: its threads (the main thread
/// included), its most steps, and the lower bound for depths 2 and 3.
struct PctFound {
    threads: usize,
    steps: usize,
    bounds: [f64; 2],
}

/// One scenario of a one-size-up scope under shuttle: PCT at depths 2 and
/// 3, [`pct_iterations`] runs each, seeded by the scenario's index.
#[cfg(shuttle)]
fn pct_scenario<P: Subject>(
    scenario: &Arc<Scenario<P::Op>>,
    index: usize,
    runs: usize,
) -> (scenario::Ran, PctFound) {
    let start = Instant::now();
    let seed = 24301 + index as u64;
    let two = scenario::pct_run::<P>(scenario, 2, runs, seed);
    let three = scenario::pct_run::<P>(scenario, 3, runs, seed);
    let threads = scenario.threads.len() + 1;
    let steps = two.max_steps.max(three.max_steps);
    let found = PctFound {
        threads,
        steps,
        bounds: [
            pct_bound(threads, steps, 2, runs),
            pct_bound(threads, steps, 3, runs),
        ],
    };
    let executions = two.executions + three.executions;
    let ran =
        scenario::Ran::from_runs(executions, two.reordered + three.reordered, start.elapsed());
    (ran, found)
}

#[cfg(not(shuttle))]
fn pct_scenario<P: Subject>(
    _: &Arc<Scenario<P::Op>>,
    _: usize,
    _: usize,
) -> (scenario::Ran, PctFound) {
    unreachable!("PCT runs under shuttle only")
}
