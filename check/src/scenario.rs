//! Generated scenarios, in Lincheck's shape: an initial sequential part, 2
//! or 3 threads of 1 to 3 operations each, a final sequential part, and at
//! most one hand-off (a thread waits for another's operation to return
//! before it calls its own). A primitive describes itself as a [`Subject`]:
//! its specification, the operations a scenario draws, and how each runs
//! on the real primitive. [`generated`] draws scenarios with proptest from
//! a fixed seed, runs each under the build's backend (loom: complete
//! within a per-scenario budget, else the highest bound that finishes;
//! shuttle: random and PCT schedules; std: repetitions on real threads),
//! and checks every execution's history against the specification
//! (`recorder.rs`, `linearizability.rs`) and its items against a ledger
//! (each dropped exactly once, delivered at most once). A failure is
//! shrunk to a minimal scenario and printed as a model to paste into
//! `models/<p>.rs`, with the history that failed.
//!
//! Blocking operations wait through a [`Waiter`]: the thread parks until
//! the operation's waker wakes it, and gives the operation up (it is then
//! recorded as never returned, and cancelled) once every thread of the
//! scenario is finished or waiting too, so that a scenario whose
//! operations cannot all complete ends instead of deadlocking. The
//! specification says what an operation that never returned may have done
//! (`Spec::unreturned`).

use std::fmt::{self, Debug, Write as _};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::task::{Wake, Waker};
use std::time::Instant;

use crate::sync::atomic::{AtomicBool as AtomicFlag, Ordering::*};
use crate::sync::thread;
use proptest::strategy::BoxedStrategy;
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestError, TestRng, TestRunner};
use std::sync::atomic::AtomicBool;

use crate::linearizability::Spec;
use crate::recorder::{histories_checked, Recorder, ThreadRecorder};
use crate::{Ledger, Model, Reach};

/// A scenario: what the main thread does first, what each thread does
/// concurrently, what the main thread does after joining them, and the
/// hand-offs between threads.
#[derive(Clone, Debug)]
pub struct Scenario<Op> {
    /// The main thread's operations before it spawns the others.
    pub init: Vec<Op>,
    /// Thread `t + 1`'s operations (the main thread is thread 0).
    pub threads: Vec<Vec<Op>>,
    /// The main thread's operations after it joined the others.
    pub post: Vec<Op>,
    /// The hand-offs between threads (at most one).
    pub handoffs: Vec<Handoff>,
}

/// Thread `from.0`'s operation `from.1` returns before thread `to.0` calls
/// its operation `to.1` (threads numbered from 1, `from.0 != to.0`). A
/// scenario has at most one, so hand-offs cannot wait on each other in a
/// cycle.
///
/// `synchronised`: the hand-off is a Release/Acquire pair, so the first
/// operation happens-before the second, as a channel or a lock between
/// the threads would make it. Otherwise it orders the two in real time
/// only (a `Relaxed` flag: the second thread saw the first finish, as a
/// clock or any unsynchronised look would tell it), so that a read in the
/// second operation may still return a value older than the first's
/// writes under weak memory: what a contract that promises real time
/// (`Spec::real_time`) must answer exactly anyway. The recorder's clock
/// cannot order a thread's first call after another thread's work by
/// itself: loom runs a thread it spawns at once up to its first access,
/// and explores other orders only where accesses depend on each other,
/// never the recorder's (which is outside the model).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Handoff {
    /// (thread, operation index) whose return is waited for.
    pub from: (usize, usize),
    /// (thread, operation index) called only after it.
    pub to: (usize, usize),
    /// Whether the wait carries happens-before (see above).
    pub synchronised: bool,
}

/// What a complete run draws ([`generated_complete`]): `scenarios` of
/// them under loom in a pull request, each of at most `threads` threads
/// (2 or 3), an initial part of at most `sizes[0]` operations, threads of
/// at most `sizes[1]`, a final part of at most `sizes[2]`.
#[derive(Clone, Copy, Debug)]
pub struct Small {
    /// How many scenarios to draw.
    pub scenarios: u64,
    /// The most threads of a scenario's concurrent part.
    pub threads: usize,
    /// The most operations of the initial part, of each thread, and of
    /// the final part.
    pub sizes: [usize; 3],
}

thread_local! {
    /// Set while [`generated_complete`] draws on this thread: [`shape`]
    /// clamps every part to it, so a subject's one strategy, with its
    /// roles and fix-ups, also draws its small scenarios.
    static SMALL: std::cell::Cell<Option<Small>> = const { std::cell::Cell::new(None) };
}

/// At most `threads`, or fewer while a complete run draws: how many
/// threads a strategy that names other threads' objects (as Notify's
/// initial part names their futures) should count on.
pub fn threads_at_most(threads: usize) -> usize {
    SMALL
        .with(std::cell::Cell::get)
        .map_or(threads, |small| threads.min(small.threads))
}

/// A scenario thread's last act if it panics on real threads: it signals
/// every hand-off it owes and counts as finished, so that no other thread
/// waits for it for ever and the join reports the panic (else `ci/test`
/// would hang until CI's time limit). Loom and shuttle end the execution
/// at the panic themselves.
struct Abandon<'a> {
    waiter: &'a Waiter,
    flags: &'a [crate::sync::Arc<AtomicFlag>],
    handoffs: &'a [Handoff],
    me: usize,
}

impl Drop for Abandon<'_> {
    fn drop(&mut self) {
        if !std::thread::panicking() || crate::sync::BACKEND != "std" {
            return;
        }
        for (h, handoff) in self.handoffs.iter().enumerate() {
            if handoff.from.0 == self.me {
                self.waiter
                    .signal(&self.flags[h], handoff.to.0, handoff.synchronised);
            }
        }
        self.waiter.finish();
    }
}

/// A primitive as the scenarios see it.
pub trait Subject: 'static {
    /// The primitive's sequential specification (`specs/<p>.rs`).
    type Spec: Spec<Op: Send + Sync, Ret: Send + Sync> + Send + Sync + 'static;
    /// An operation a scenario draws: the specification's, plus whatever
    /// says which handle or held object it uses.
    type Op: Clone + Debug + Send + Sync + 'static;
    /// What one thread holds while it runs: the handles it owns, the
    /// values and futures it keeps between operations.
    type Actor: Send + 'static;

    /// The primitive's name, for the result line and the seed.
    const NAME: &'static str;
    /// The subject's type as a model names it (`scenario_model::<T>`).
    const RUST_TYPE: &'static str;
    /// Scenarios a pull request draws under loom: 8 (up to a few seconds
    /// each with both passes, and the main job's time is the limit), more
    /// where a scenario costs next to nothing (oneshot: 32). Doubling
    /// Notify's and the parker's cost the main job too much of its time
    /// (HISTORY.md, 2026-11-27), two models at a time slowing each other.
    const LOOM_SCENARIOS: u64 = 8;

    /// How many ledger items `scenario` creates (items `0..n`).
    fn items(scenario: &Scenario<Self::Op>) -> usize;
    /// A fresh primitive for one execution: the specification's initial
    /// state, and the main thread's actor, holding every handle.
    fn setup(scenario: &Scenario<Self::Op>) -> (Self::Spec, Self::Actor);
    /// What thread `thread` (from 1) takes from the main thread's actor
    /// for its operations.
    fn split(main: &mut Self::Actor, scenario: &Scenario<Self::Op>, thread: usize) -> Self::Actor;
    /// A joined thread's actor, back to the main thread.
    fn merge(main: &mut Self::Actor, joined: Self::Actor);
    /// Runs `op`, recording its call and return with `rec` (or its call
    /// alone, if it blocked and `waiter` gave it up), delivering and
    /// creating items through `ledger`.
    fn run(
        actor: &mut Self::Actor,
        op: &Self::Op,
        rec: &ThreadRecorder<Self::Spec>,
        waiter: &Waiter,
        ledger: &Ledger,
    );
    /// `op` as a Rust expression, for printing a scenario as a model.
    fn rust(op: &Self::Op) -> String;
    /// `scenario` with its values and keys renamed to a canonical form, so
    /// that scenarios that differ only in names count once in a scope
    /// (`scope.rs`). The default renames nothing.
    fn canonical(scenario: Scenario<Self::Op>) -> Scenario<Self::Op> {
        scenario
    }
    /// The parts of the primitive `op` reads or writes, as a set of bits
    /// (one per part: a ring, the inject queue, ...), if the subject can
    /// say: operations with disjoint parts touch disjoint memory, so they
    /// commute (every interleaving of them is equivalent to one order: the
    /// independence that dynamic partial-order reduction rests on,
    /// Flanagan and Godefroid, POPL 2005). A one-size-up scope uses it
    /// to leave out a scenario with a thread independent of all the others
    /// (`scope.rs`, "Commuting threads"). `None` (the default): every part.
    fn footprint(op: &Self::Op) -> Option<u64> {
        let _ = op;
        None
    }
    /// The scenarios to draw.
    fn scenarios() -> BoxedStrategy<Scenario<Self::Op>>;
}

// ---------------------------------------------------------------------
// Waiting.

/// What the threads of one part of a scenario share to decide when a
/// blocked operation gives up. Flags and counts outside the model (std
/// atomics: no scheduling point); the parks and unparks are the backend's.
///
/// A thread is unparked only while it is parked here: a waker woken at any
/// other time sets the thread's flag, which it reads before it parks. (An
/// unpark that reached a thread blocked elsewhere would wake it there: the
/// main thread, in a join, is never unparked.)
struct Waiting {
    /// The part's threads, by index, once each has started.
    threads: Mutex<Vec<Option<thread::Thread>>>,
    /// Per thread: woken since it last looked.
    woken: Vec<AtomicBool>,
    /// Per thread: unparked by [`Waiting::nudge`] (or a wake-up), which a return from
    /// `thread::park` alone does not say: shuttle's may return spuriously.
    /// Set with every unpark, so it stays paired with the unpark token: a
    /// token left by a wake the thread saw before it parked makes its next
    /// park return at once, with the flag still set, as before the flag.
    /// (Not derivable from `parked`: that bit is set again by then.)
    unparked: Vec<AtomicBool>,
    /// Threads parked in a wait; a bit per thread.
    parked: AtomicU64,
    finished: AtomicUsize,
    total: usize,
}

impl Waiting {
    fn new(threads: usize, total: usize) -> Arc<Self> {
        Arc::new(Waiting {
            threads: Mutex::new(vec![None; threads]),
            woken: (0..threads).map(|_| AtomicBool::new(false)).collect(),
            unparked: (0..threads).map(|_| AtomicBool::new(false)).collect(),
            parked: AtomicU64::new(0),
            finished: AtomicUsize::new(0),
            total,
        })
    }

    /// Wakes thread `t`: sets its flag, and unparks it if it is parked
    /// here. (SeqCst on both sides: the thread sets its parked bit, then
    /// reads its flag; the waker sets the flag, then reads the bit: one of
    /// them sees the other.)
    fn wake(&self, t: usize) {
        self.woken[t].store(true, SeqCst);
        self.nudge(t);
    }

    /// Makes thread `t` look again if it is parked, without counting as a
    /// wake-up: a thread that finds every other one stuck nudges them and
    /// gives up unless it was woken itself. (Were a nudge a wake-up, two
    /// threads stuck at once could nudge each other into looking again
    /// for ever: on real threads, two waits on futures nobody notifies
    /// did, until the history's length ran out.)
    fn nudge(&self, t: usize) {
        // Uncounted as parked from now on, not once it runs again: until
        // then, another thread must not take it for stuck and give its
        // own operation up while this one is about to go on (the
        // history's give-up check would call that a lost wake-up).
        if self.parked.fetch_and(!(1 << t), SeqCst) & (1 << t) != 0 {
            self.unparked[t].store(true, SeqCst);
            // Out of the lock before unparking: under loom and shuttle an
            // unpark is a scheduling point, and their threads share one OS
            // thread, so another model thread taking this (real) lock while
            // we hold it would block that OS thread for good.
            let handle = self.threads.lock().unwrap()[t].clone();
            if let Some(handle) = handle {
                handle.unpark();
            }
        }
    }
}

/// A thread's end of a scenario part's waiting: the waker its blocked
/// operations poll with, and the park that gives up when nothing else can
/// happen.
#[derive(Clone)]
pub struct Waiter {
    waiting: Arc<Waiting>,
    me: usize,
}

struct ThreadWaker {
    waiting: Arc<Waiting>,
    thread: usize,
}

impl Wake for ThreadWaker {
    fn wake(self: Arc<Self>) {
        self.waiting.wake(self.thread);
    }
}

impl Waiter {
    fn new(waiting: &Arc<Waiting>, me: usize) -> Self {
        Waiter {
            waiting: waiting.clone(),
            me,
        }
    }

    /// The main thread, alone: a blocked operation gives up at once.
    fn alone() -> Self {
        Waiter::new(&Waiting::new(1, 1), 0)
    }

    fn start(&self) {
        // Asked before the lock is taken, as in `Waiting::wake`.
        let me = thread::current();
        self.waiting.threads.lock().unwrap()[self.me] = Some(me);
    }

    /// A waker that wakes this thread (see `Waiting`).
    pub fn waker(&self) -> Waker {
        Waker::from(Arc::new(ThreadWaker {
            waiting: self.waiting.clone(),
            thread: self.me,
        }))
    }

    /// Every thread is finished or parked.
    fn stuck(&self) -> bool {
        let parked = self.waiting.parked.load(SeqCst).count_ones() as usize;
        parked + self.waiting.finished.load(SeqCst) >= self.waiting.total
    }

    fn nudge_parked(&self) {
        let parked = self.waiting.parked.load(SeqCst);
        for t in 0..self.waiting.woken.len() {
            if t != self.me && parked & (1 << t) != 0 {
                self.waiting.nudge(t);
            }
        }
    }

    /// Parks until woken, unless a wake already came (true: look again);
    /// with `give_up`, returns false instead when every other thread is
    /// finished or parked, so that nothing could wake this one.
    fn park_or_stuck(&self, give_up: bool) -> bool {
        let bit = 1u64 << self.me;
        self.waiting.parked.fetch_or(bit, SeqCst);
        if self.waiting.woken[self.me].swap(false, SeqCst) {
            self.waiting.parked.fetch_and(!bit, SeqCst);
            return true;
        }
        if self.stuck() {
            // The others look again: one of them may give up, and what
            // it does next may free this thread.
            self.nudge_parked();
            if give_up {
                self.waiting.parked.fetch_and(!bit, SeqCst);
                // A wake that came after the look above and before the
                // other thread finished (it wakes, then finishes): look
                // again rather than give up an operation that may go on
                // (the history's give-up check would call it lost).
                return self.waiting.woken[self.me].swap(false, SeqCst);
            }
        }
        // Until unparked by a wake: a spurious return (shuttle's park has
        // them) would poll again as if woken, and two threads doing that
        // could outrun any history's length.
        thread::park();
        while !self.waiting.unparked[self.me].swap(false, SeqCst) {
            thread::park();
        }
        self.waiting.parked.fetch_and(!bit, SeqCst);
        self.waiting.woken[self.me].store(false, SeqCst);
        true
    }

    /// Called after a blocked operation's poll returned `Pending`: parks
    /// until woken and returns true (poll again); or returns false when
    /// every other thread is finished or parked too: give the operation
    /// up.
    pub fn park(&self) -> bool {
        self.park_or_stuck(true)
    }

    /// Waits until `flag` is set (a hand-off). Never gives up: the thread
    /// that sets it always does, after its operation returns or gives up.
    fn wait_for(&self, flag: &AtomicFlag, synchronised: bool) {
        // Acquire if `synchronised`: pairs with the signaller's Release
        // store, which comes after its operation returned: that return
        // happens-before this thread's next call. Relaxed otherwise: real
        // time only (see `Handoff`). A read-modify-write, which reads the
        // latest value: a load could keep reading `false` under loom after
        // the signal, and park for good.
        let ordering = if synchronised { Acquire } else { Relaxed };
        while !flag.fetch_or(false, ordering) {
            self.park_or_stuck(false);
        }
    }

    /// Sets a hand-off's `flag` and wakes thread `to`, which waits for it
    /// (`wait_for`).
    fn signal(&self, flag: &AtomicFlag, to: usize, synchronised: bool) {
        // Release if `synchronised`: see `wait_for`. A read-modify-write,
        // as the waiter's: loom 0.7.3 may place a plain store inside
        // another thread's read-modify-write (tokio-rs/loom issue 254),
        // and the waiter's would then read `false` after it.
        flag.fetch_or(true, if synchronised { Release } else { Relaxed });
        self.waiting.wake(to);
    }

    /// This thread has run all its operations.
    fn finish(&self) {
        self.waiting.finished.fetch_add(1, SeqCst);
        self.nudge_parked();
    }
}

/// Wake-ups one operation hands to a thread asleep after another (a
/// sender asleep for room, woken by a receive that answered "wake"; a
/// task queued for the worker), for components whose sleeping or queueing
/// is their caller's: a token per wake, counted outside the model (std
/// types: no scheduling point). [`Tokens::carrying`] also carries each
/// token by one model atomic, so that what the giver did before it
/// happens-before what the taker does after, as a real queue makes it
/// (a component whose parties hand data over needs it; one that only
/// counts, as the room, does not, and is spared the scheduling points).
#[derive(Default)]
pub struct Tokens {
    tokens: Mutex<usize>,
    sleepers: Mutex<Vec<Waker>>,
    carrier: Option<crate::sync::atomic::AtomicUsize>,
}

impl Tokens {
    /// Tokens that carry happens-before from giver to taker.
    pub fn carrying() -> Self {
        Tokens {
            carrier: Some(crate::sync::atomic::AtomicUsize::new(0)),
            ..Tokens::default()
        }
    }

    /// Hands out one wake-up and wakes the threads waiting for one.
    pub fn give(&self) {
        // Release: the taker's Acquire read-modify-write below reads this
        // or a later one of the same release sequence (all are RMWs).
        if let Some(carrier) = &self.carrier {
            carrier.fetch_add(1, Release);
        }
        *self.tokens.lock().unwrap() += 1;
        let sleepers = std::mem::take(&mut *self.sleepers.lock().unwrap());
        for waker in sleepers {
            waker.wake();
        }
    }

    /// Takes a wake-up if one is there, without waiting.
    pub fn try_take(&self) -> bool {
        let there = {
            let mut tokens = self.tokens.lock().unwrap();
            let there = *tokens > 0;
            *tokens -= usize::from(there);
            there
        };
        if there {
            self.acquire();
        }
        there
    }

    fn acquire(&self) {
        if let Some(carrier) = &self.carrier {
            // Acquire: see `give`.
            carrier.fetch_add(0, Acquire);
        }
    }

    /// Waits for a wake-up and takes it; false if none can come (every
    /// other thread is finished or waiting: see [`Waiter::park`]).
    pub fn take(&self, waiter: &Waiter) -> bool {
        loop {
            // Registered before the look, so a `give` after it wakes us.
            self.sleepers.lock().unwrap().push(waiter.waker());
            {
                let mut tokens = self.tokens.lock().unwrap();
                if *tokens > 0 {
                    *tokens -= 1;
                    drop(tokens);
                    self.acquire();
                    return true;
                }
            }
            if !waiter.park() {
                return false;
            }
        }
    }
}

// ---------------------------------------------------------------------
// Running one scenario, one execution.

/// What a scope's run asks of the main thread's actor once the initial
/// part has run: whether the prefix reached its regime (`scope.rs`).
pub type AfterInit = Arc<dyn Fn(&mut dyn std::any::Any) + Send + Sync>;

thread_local! {
    /// The hook [`execute`] calls after the initial part, while
    /// [`with_after_init`] runs on this thread. A thread-local of the test's
    /// thread, outside the model: loom and shuttle run an execution's main
    /// thread on it, as the std backend does.
    static AFTER_INIT: std::cell::RefCell<Option<AfterInit>> = const { std::cell::RefCell::new(None) };
}

/// Runs `f` with `hook` called after every execution's initial part.
pub fn with_after_init<T>(hook: AfterInit, f: impl FnOnce() -> T) -> T {
    struct Unset;
    impl Drop for Unset {
        fn drop(&mut self) {
            AFTER_INIT.with(|hook| *hook.borrow_mut() = None);
        }
    }
    AFTER_INIT.with(|slot| *slot.borrow_mut() = Some(hook));
    let _unset = Unset;
    f()
}

/// Runs one execution of `scenario`: the initial part, the threads (with
/// their hand-offs), the final part; then checks the ledger (every item
/// dropped once, delivered at most once) and the history against the
/// specification (panicking with the report if it is not linearizable).
/// Returns whether the linearization found reordered the calls. With
/// `record` off, nothing is recorded or checked but the ledger.
pub fn execute<P: Subject>(scenario: &Arc<Scenario<P::Op>>, record: bool) -> bool {
    assert!(
        scenario
            .handoffs
            .iter()
            .all(|h| scenario.names(h.from) && scenario.names(h.to) && h.from.0 != h.to.0),
        "a hand-off names no operation: {:?}",
        scenario.handoffs
    );
    let ledger = Ledger::new(P::items(scenario));
    let (initial, mut main) = P::setup(scenario);
    let recorder = if record {
        Recorder::new(initial)
    } else {
        Recorder::off(initial)
    };
    let rec = recorder.thread(0);
    let alone = Waiter::alone();
    for op in &scenario.init {
        P::run(&mut main, op, &rec, &alone, &ledger);
    }
    let after_init = AFTER_INIT.with(|hook| hook.borrow().clone());
    if let Some(hook) = after_init {
        hook(&mut main);
    }
    // Index 0 unused: the threads are numbered from 1.
    let waiting = Waiting::new(scenario.threads.len() + 1, scenario.threads.len());
    let flags: Vec<crate::sync::Arc<AtomicFlag>> = scenario
        .handoffs
        .iter()
        .map(|_| crate::sync::Arc::new(AtomicFlag::new(false)))
        .collect();
    let mut running = Vec::new();
    for t in 1..=scenario.threads.len() {
        let mut actor = P::split(&mut main, scenario, t);
        rec.fork(t);
        let (scenario, rec, ledger) = (scenario.clone(), recorder.thread(t), ledger.clone());
        let waiter = Waiter::new(&waiting, t);
        let flags = flags.clone();
        running.push(thread::spawn(move || {
            waiter.start();
            let _on_panic = Abandon {
                waiter: &waiter,
                flags: &flags,
                handoffs: &scenario.handoffs,
                me: t,
            };
            for (i, op) in scenario.threads[t - 1].iter().enumerate() {
                for (h, handoff) in scenario.handoffs.iter().enumerate() {
                    if handoff.to == (t, i) {
                        waiter.wait_for(&flags[h], handoff.synchronised);
                        rec.waited(h, handoff.synchronised);
                    }
                }
                P::run(&mut actor, op, &rec, &waiter, &ledger);
                for (h, handoff) in scenario.handoffs.iter().enumerate() {
                    if handoff.from == (t, i) {
                        rec.signal(h);
                        waiter.signal(&flags[h], handoff.to.0, handoff.synchronised);
                    }
                }
            }
            waiter.finish();
            actor
        }));
    }
    for (t, handle) in running.into_iter().enumerate() {
        let actor = handle.join().expect("a scenario thread panicked");
        rec.join(t + 1);
        P::merge(&mut main, actor);
    }
    for op in &scenario.post {
        P::run(&mut main, op, &rec, &alone, &ledger);
    }
    drop(main);
    ledger.assert_all_dropped_once();
    recorder.check()
}

// ---------------------------------------------------------------------
// Printing a scenario as a model.

impl<Op> Scenario<Op> {
    /// Whether `(thread, op)` names an operation of a thread.
    fn names(&self, (thread, op): (usize, usize)) -> bool {
        thread >= 1
            && self
                .threads
                .get(thread - 1)
                .is_some_and(|ops| op < ops.len())
    }

    /// Drops the hand-offs that name no operation: a subject's rules or
    /// proptest's shrinking removed it.
    pub fn keep_valid_handoffs(mut self) -> Self {
        let handoffs = std::mem::take(&mut self.handoffs);
        self.handoffs = handoffs
            .into_iter()
            .filter(|h| self.names(h.from) && self.names(h.to))
            .collect();
        self
    }

    /// The parts in scenario order: the initial part, each thread's, the
    /// final part.
    pub fn parts(&self) -> impl Iterator<Item = &Vec<Op>> {
        std::iter::once(&self.init)
            .chain(&self.threads)
            .chain(std::iter::once(&self.post))
    }

    /// As [`parts`](Self::parts), to rewrite them.
    pub fn parts_mut(&mut self) -> impl Iterator<Item = &mut Vec<Op>> {
        std::iter::once(&mut self.init)
            .chain(self.threads.iter_mut())
            .chain(std::iter::once(&mut self.post))
    }

    /// Every operation, in scenario order.
    pub fn ops(&self) -> impl Iterator<Item = &Op> {
        self.parts().flatten()
    }

    /// As [`ops`](Self::ops), to rewrite them (numbering items).
    pub fn ops_mut(&mut self) -> impl Iterator<Item = &mut Op> {
        self.parts_mut().flatten()
    }

    /// Operations in all.
    pub fn len(&self) -> usize {
        self.ops().count()
    }

    /// Whether it has no operation at all.
    pub fn is_empty(&self) -> bool {
        self.ops().next().is_none()
    }

    /// This scenario as a model for `models/<p>.rs`, named `name`.
    pub fn as_model<P: Subject<Op = Op>>(&self, name: &str, note: &str) -> String {
        let list = |ops: &[Op], indent: &str| -> String {
            if ops.is_empty() {
                return "vec![]".to_string();
            }
            let items: Vec<String> = ops
                .iter()
                .map(|op| format!("{indent}    {},\n", P::rust(op)))
                .collect();
            format!("vec![\n{}{indent}]", items.concat())
        };
        let mut out = String::new();
        let _ = writeln!(out, "/// {note}");
        let _ = writeln!(out, "///");
        let _ = writeln!(out, "/// Checks: <the IDs of the promise it broke>.");
        let _ = writeln!(out, "#[test]");
        let _ = writeln!(out, "fn {name}() {{");
        let _ = writeln!(out, "    let scenario = Scenario {{");
        let _ = writeln!(out, "        init: {},", list(&self.init, "        "));
        let threads: Vec<String> = self
            .threads
            .iter()
            .map(|ops| format!("            {},\n", list(ops, "            ")))
            .collect();
        let _ = writeln!(
            out,
            "        threads: vec![\n{}        ],",
            threads.concat()
        );
        let _ = writeln!(out, "        post: {},", list(&self.post, "        "));
        let handoffs: Vec<String> = self
            .handoffs
            .iter()
            .map(|h| {
                format!(
                    "Handoff {{ from: {:?}, to: {:?}, synchronised: {} }}",
                    h.from, h.to, h.synchronised
                )
            })
            .collect();
        let _ = writeln!(out, "        handoffs: vec![{}],", handoffs.join(", "));
        let _ = writeln!(out, "    }};");
        let _ = writeln!(
            out,
            "    scenario_model::<{}>(model!(), scenario);",
            P::RUST_TYPE
        );
        let _ = writeln!(out, "}}");
        out
    }
}

/// The executions of `scenario` under the build's backend (within the
/// generated scenarios' budget), with or without recording.
pub fn executions_of<P: Subject>(
    scenario: &Arc<Scenario<P::Op>>,
    record: bool,
) -> (usize, Option<usize>) {
    crate::set_access_mode(crate::audit_run());
    let executions = Arc::new(AtomicUsize::new(0));
    let body = {
        let (scenario, executions) = (scenario.clone(), executions.clone());
        Arc::new(move || {
            executions.fetch_add(1, SeqCst);
            execute::<P>(&scenario, record);
        }) as Arc<dyn Fn() + Send + Sync>
    };
    let bound = crate::explore_within(
        body,
        crate::execution_budget(),
        || executions.store(0, SeqCst),
        None,
    );
    (executions.load(SeqCst), bound)
}

/// A fixed scenario as a model: `model` names it; it runs under the
/// build's backend with `model`'s settings, every execution checked.
/// Declares the interleaving it exists for: an execution whose
/// linearization reorders the calls.
pub fn scenario_model<P: Subject>(model: Model, scenario: Scenario<P::Op>) {
    let reordered = Reach::new("linearization_reordered_the_calls");
    let r = reordered.clone();
    let scenario = Arc::new(scenario.keep_valid_handoffs());
    model.reach(&reordered).check(move || {
        r.hit_if(execute::<P>(&scenario, true));
    });
}

// ---------------------------------------------------------------------
// Generating and running many.

fn env_usize(name: &str) -> Option<u64> {
    std::env::var(name).ok().map(|v| {
        v.parse()
            .unwrap_or_else(|_| panic!("{name}={v:?} is not a number"))
    })
}

/// How many scenarios a run draws: `MODELSYNC_SCENARIOS`, or the build's
/// default (pull requests: the main job's time is the limit): under loom
/// the subject's own count.
fn scenario_count<P: Subject>() -> u64 {
    env_usize("MODELSYNC_SCENARIOS").unwrap_or(if cfg!(miri) {
        2
    } else if cfg!(loom) {
        P::LOOM_SCENARIOS
    } else {
        32
    })
}

/// The seed the scenarios are drawn from: `MODELSYNC_SCENARIO_SEED`, or a
/// fixed one per primitive (pull requests: the same scenarios every run).
fn scenario_seed(primitive: &str) -> u64 {
    env_usize("MODELSYNC_SCENARIO_SEED").unwrap_or_else(|| {
        primitive.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
        })
    })
}

/// What the runs of one drawn scenario gave: the run under the build's
/// backend, and under loom the real-time pass (every atomic access a
/// read-modify-write, histories in real-time order: `recorder.rs`).
pub(super) struct Ran {
    first: Pass,
    real_time: Option<Pass>,
}

impl Ran {
    /// A run of `executions` executions of one scenario outside loom (a
    /// PCT run: `scope::every_scenario_complete_or_bounded`), `reordered`
    /// of them reordering its calls, every history checked.
    #[cfg_attr(not(shuttle), allow(dead_code))] // PCT is shuttle's
    pub(super) fn from_runs(
        executions: usize,
        reordered: usize,
        time: std::time::Duration,
    ) -> Self {
        Ran {
            first: Pass {
                executions,
                bound: None,
                reordered,
                checked: executions,
                time,
            },
            real_time: None,
        }
    }
}

/// One exploration of a scenario.
struct Pass {
    executions: usize,
    /// The loom bound it finished at (`None`: complete; shuttle and std
    /// runs report `None` too).
    bound: Option<usize>,
    reordered: usize,
    /// Histories checked (one per execution of the attempt that counts).
    checked: usize,
    time: std::time::Duration,
}

/// The scenarios' passes, summed for a result line: `scenarios=..
/// complete=.. bounded=..(lowest_bound=..)`, executions, reorderings,
/// histories checked, time.
fn summed<'a>(passes: impl Iterator<Item = &'a Pass>) -> (String, usize, usize, usize, f64) {
    let passes: Vec<&Pass> = passes.collect();
    let complete = passes.iter().filter(|p| p.bound.is_none()).count();
    let lowest = passes.iter().filter_map(|p| p.bound).min();
    (
        format!(
            "scenarios={} complete={complete} bounded={}{}",
            passes.len(),
            passes.len() - complete,
            lowest.map_or(String::new(), |b| format!("(lowest_bound={b})")),
        ),
        passes.iter().map(|p| p.executions).sum(),
        passes.iter().map(|p| p.reordered).sum(),
        passes.iter().map(|p| p.checked).sum(),
        passes.iter().map(|p| p.time.as_secs_f64()).sum(),
    )
}

/// Draws scenarios for `P` and runs each under the build's backend, every
/// execution checked; prints one result line in the models' format. On a
/// failure, shrinks the scenario and panics with it, as a model, and the
/// failure.
pub fn generated<P: Subject>(model: Model) {
    run_generated::<P>(model, None);
}

/// The complete run of `P`'s generated scenarios: as [`generated`], but
/// drawn no larger than `small`, and under loom each one (both passes)
/// must finish complete, with no preemption bound, within
/// [`complete_budget`] executions; the model fails, naming the scenarios
/// that did not, otherwise. (A numeric `LOOM_MAX_PREEMPTIONS`, as the
/// mutation runs set, still bounds it, and then nothing is required.)
/// Under loom, `small.scenarios` scenarios unless `MODELSYNC_SCENARIOS`
/// says otherwise.
pub fn generated_complete<P: Subject>(model: Model, small: Small) {
    struct Unset;
    impl Drop for Unset {
        fn drop(&mut self) {
            SMALL.with(|s| s.set(None));
        }
    }
    SMALL.with(|s| s.set(Some(small)));
    let _unset = Unset;
    run_generated::<P>(model, Some(small));
}

/// The executions one scenario's pass may take unless an environment
/// variable says otherwise: complete runs' `MODELSYNC_COMPLETE_BUDGET`
/// and one-size-up scopes' `MODELSYNC_BOUNDED_SCOPE_BUDGET`.
pub const DEFAULT_SCENARIO_BUDGET: usize = 50_000;

/// The loom budget of one scenario's pass in a complete run:
/// `MODELSYNC_COMPLETE_BUDGET` (default [`DEFAULT_SCENARIO_BUDGET`]). A
/// scenario that needs more fails the run: the budget is a limit, not a
/// fallback.
pub fn complete_budget() -> usize {
    env_usize("MODELSYNC_COMPLETE_BUDGET").map_or(DEFAULT_SCENARIO_BUDGET, |n| n as usize)
}

fn run_generated<P: Subject>(model: Model, small: Option<Small>) {
    if !model.runs_in_this_tier() {
        return;
    }
    let name = model.name().to_string();
    let (count, budget, seed) = match small {
        Some(small) => (
            if cfg!(loom) {
                env_usize("MODELSYNC_SCENARIOS").unwrap_or(small.scenarios)
            } else {
                scenario_count::<P>()
            },
            complete_budget(),
            // The complete run's own seed: other draws than the bounded run's.
            scenario_seed(&format!("{}/complete", P::NAME)),
        ),
        None => (
            scenario_count::<P>(),
            crate::execution_budget(),
            scenario_seed(P::NAME),
        ),
    };
    let config = Config {
        cases: count as u32,
        failure_persistence: None,
        // Shrinking reruns the whole exploration: keep it bounded.
        max_shrink_iters: 256,
        ..Config::default()
    };
    let mut seed_bytes = [0u8; 32];
    seed_bytes[..8].copy_from_slice(&seed.to_le_bytes());
    let mut runner = TestRunner::new_with_rng(
        config,
        TestRng::from_seed(RngAlgorithm::ChaCha, &seed_bytes),
    );
    let totals = Arc::new(Mutex::new(Vec::<(usize, String, Ran)>::new()));
    let start = Instant::now();
    let strategy = P::scenarios();
    let time_limit = scenario_time_limit();
    let skipped = Arc::new(AtomicUsize::new(0));
    let result = {
        let (totals, skipped) = (totals.clone(), skipped.clone());
        runner.run(&strategy, move |scenario| {
            if time_limit.is_some_and(|limit| start.elapsed() >= limit) {
                skipped.fetch_add(1, SeqCst);
                return Ok(());
            }
            let scenario = Arc::new(scenario.keep_valid_handoffs());
            let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                run_one::<P>(&scenario, budget)
            }))
            .map_err(|payload| TestCaseError::fail(panic_text(payload)))?;
            totals
                .lock()
                .unwrap()
                .push((scenario.len(), scenario.summary(), ran));
            Ok(())
        })
    };
    if let Err(error) = result {
        match error {
            TestError::Fail(reason, scenario) => {
                let scenario = scenario.keep_valid_handoffs();
                panic!(
                    "{name}: a generated scenario failed (seed {seed}); shrunk to {} operations. \
                 As a model for models/{}.rs:\n\n{}\n{reason}",
                    scenario.len(),
                    name.split("::").next().unwrap_or(P::NAME),
                    scenario.as_model::<P>(
                        &format!("{}_shrunk", name.rsplit("::").next().unwrap_or("generated")),
                        &format!("Found by `{name}` (seed {seed}), shrunk by proptest."),
                    )
                )
            }
            TestError::Abort(why) => panic!("{name}: aborted: {why}"),
        }
    }
    let totals = totals.lock().unwrap();
    let skipped = match skipped.load(SeqCst) {
        0 => String::new(),
        n => format!(" not_run_for_time={n}"),
    };
    report_totals(
        model,
        &format!("seed={seed}"),
        &totals,
        budget,
        start,
        &[],
        &skipped,
    );
    if small.is_some() {
        require_complete(&name, &totals, budget);
    }
}

/// The result line of a run of many scenarios (`totals`: each one's
/// operations, summary and passes): `scenarios=.. <setting> complete=..
/// bounded=.. budget=..` under loom, the backend's setting otherwise; the
/// reordering and history counts, and `counts`, as its reach.
pub(super) fn report_totals(
    model: Model,
    setting: &str,
    totals: &[(usize, String, Ran)],
    budget: usize,
    start: Instant,
    counts: &[(&'static str, usize)],
    extra: &str,
) {
    let (scenarios, executions, reordered, checked, _) =
        summed(totals.iter().map(|(_, _, r)| &r.first));
    let largest = totals.iter().map(|(ops, _, _)| *ops).max().unwrap_or(0);
    let setting = match crate::backend_name() {
        "loom" => {
            let (scenarios, rest) = scenarios.split_once(' ').unwrap_or((&scenarios, ""));
            format!("{scenarios} {setting} {rest} budget={budget}_executions")
        }
        // A scope's PCT tier says its own setting (`pct[...]`, in `extra`).
        _ if extra.contains(" pct[") => format!("scenarios={} {setting}", totals.len()),
        _ => format!(
            "scenarios={} {setting} {}",
            totals.len(),
            crate::backend_setting()
        ),
    };
    let real_time: Vec<&Pass> = totals
        .iter()
        .filter_map(|(_, _, r)| r.real_time.as_ref())
        .collect();
    let real_time = if real_time.is_empty() {
        String::new()
    } else {
        let (how, executions, _, checked, secs) = summed(real_time.into_iter());
        format!(
            " real_time_pass[{}{how} executions={executions} time={secs:.2}s histories_checked={checked}]",
            crate::real_time_pass_accesses()
        )
    };
    // One counter the harness asserts, as every model's reach: an
    // execution whose linearization reordered the calls. Not for a
    // scope's run outside loom, a sample of its scenarios whose claim is
    // loom's (`scope.rs`): it reports the count and requires the regimes.
    let mut reached = vec![("histories_checked", checked)];
    if cfg!(loom) || !setting.contains("scope=") {
        reached.insert(0, ("linearization_reordered_the_calls", reordered));
    }
    reached.extend_from_slice(counts);
    model.report(
        &setting,
        executions,
        start.elapsed(),
        &reached,
        &format!(" largest_scenario={largest}_operations{extra}"),
        &real_time,
    );
}

/// A complete run's scenarios that loom did not finish complete (either
/// pass), under loom with no numeric bound asked for: the run fails.
pub(super) fn require_complete(name: &str, totals: &[(usize, String, Ran)], budget: usize) {
    if !cfg!(loom) || crate::bound_asked().is_some() {
        return;
    }
    let unfinished: Vec<String> = totals
        .iter()
        .filter(|(_, _, ran)| {
            ran.first.bound.is_some() || ran.real_time.as_ref().is_some_and(|p| p.bound.is_some())
        })
        .map(|(_, summary, ran)| {
            let bound = |p: &Pass| {
                p.bound
                    .map_or("complete".to_string(), |b| format!("bound {b}"))
            };
            format!(
                "  {summary}\n    finished at: {}{}",
                bound(&ran.first),
                ran.real_time
                    .as_ref()
                    .map_or(String::new(), |p| format!("; real-time pass: {}", bound(p)))
            )
        })
        .collect();
    assert!(
        unfinished.is_empty(),
        "{name}: a complete run, but {} of {} scenarios did not finish complete within \
         {budget} executions (MODELSYNC_COMPLETE_BUDGET); draw smaller ones (the model's \
         `Small`) or raise the budget:\n{}",
        unfinished.len(),
        totals.len(),
        unfinished.join("\n")
    );
}

/// `MODELSYNC_SCENARIO_SECS`: once this much time has passed, the
/// remaining scenarios are drawn but not run, and the result line counts
/// them (`not_run_for_time`). The nightly sets it to its per-model budget,
/// so many scenarios fit a partition's time; pull requests leave it unset,
/// so that their scenarios are the same on every machine.
fn scenario_time_limit() -> Option<std::time::Duration> {
    env_usize("MODELSYNC_SCENARIO_SECS").map(std::time::Duration::from_secs)
}

/// Runs one scenario under the build's backend; under loom, then again in
/// the real-time pass (see [`Ran`]), unless this is the audit run, whose
/// one pass is already that.
pub(super) fn run_one<P: Subject>(scenario: &Arc<Scenario<P::Op>>, budget: usize) -> Ran {
    if std::env::var_os("MODELSYNC_SCENARIO_TRACE").is_some() {
        eprintln!("scenario: {}", scenario.summary());
    }
    let audit = crate::audit_run();
    crate::set_access_mode(audit);
    let first = explore::<P>(scenario, None, budget);
    let real_time = (cfg!(loom) && !audit).then(|| {
        crate::set_access_mode(true);
        // From where the first pass finished: a scenario too large to
        // finish complete with weak memory is larger still with every
        // access a read-modify-write, which loom's reduction prunes less.
        let pass = explore::<P>(scenario, first.bound, budget);
        crate::set_access_mode(false);
        pass
    });
    Ran { first, real_time }
}

/// What a PCT run of one scenario found out about it: how many
/// executions ran and the most scheduling steps any took (the `k` of
/// PCT's bound), and how many of them reordered the calls.
#[cfg_attr(not(shuttle), allow(dead_code))] // PCT is shuttle's
pub(super) struct PctRun {
    pub executions: usize,
    pub max_steps: usize,
    pub reordered: usize,
}

/// Runs `scenario` `iterations` times under shuttle's PCT scheduler of
/// depth `depth` (Burckhardt et al., ASPLOS 2010), every execution's
/// history checked, counting each execution's scheduling steps (a step is
/// one choice of the next task: shuttle's own measure, the `k` its PCT
/// draws its change points from).
#[cfg(shuttle)]
pub(super) fn pct_run<P: Subject>(
    scenario: &Arc<Scenario<P::Op>>,
    depth: usize,
    iterations: usize,
    seed: u64,
) -> PctRun {
    use shuttle::scheduler::{PctScheduler, Schedule, Scheduler, Task, TaskId};

    /// A scheduler that counts the steps of each execution of the one it
    /// wraps, and keeps the most.
    struct Counting<S> {
        inner: S,
        steps: usize,
        max_steps: Arc<AtomicUsize>,
    }

    impl<S: Scheduler> Scheduler for Counting<S> {
        fn new_execution(&mut self) -> Option<Schedule> {
            self.max_steps.fetch_max(self.steps, SeqCst);
            self.steps = 0;
            self.inner.new_execution()
        }

        fn next_task(
            &mut self,
            runnable: &[&Task],
            current: Option<TaskId>,
            is_yielding: bool,
        ) -> Option<TaskId> {
            self.steps += 1;
            self.inner.next_task(runnable, current, is_yielding)
        }

        fn next_u64(&mut self) -> u64 {
            self.inner.next_u64()
        }
    }

    let max_steps = Arc::new(AtomicUsize::new(0));
    let executions = Arc::new(AtomicUsize::new(0));
    let reordered = Arc::new(AtomicUsize::new(0));
    let scheduler = Counting {
        inner: PctScheduler::new_from_seed(seed, depth, iterations),
        steps: 0,
        max_steps: max_steps.clone(),
    };
    let runner = shuttle::Runner::new(scheduler, shuttle::Config::new());
    {
        let (scenario, executions, reordered) =
            (scenario.clone(), executions.clone(), reordered.clone());
        runner.run(move || {
            executions.fetch_add(1, SeqCst);
            if execute::<P>(&scenario, true) {
                reordered.fetch_add(1, SeqCst);
            }
        });
    }
    PctRun {
        executions: executions.load(SeqCst),
        max_steps: max_steps.load(SeqCst),
        reordered: reordered.load(SeqCst),
    }
}

/// One exploration of `scenario`, every execution checked: complete within
/// the budget, else the highest bound from `highest` (or 3) down that
/// finishes within it.
fn explore<P: Subject>(
    scenario: &Arc<Scenario<P::Op>>,
    highest: Option<usize>,
    budget: usize,
) -> Pass {
    let start = Instant::now();
    let executions = Arc::new(AtomicUsize::new(0));
    let reordered = Arc::new(AtomicUsize::new(0));
    // Histories checked before the attempt that counts (a loom run out of
    // budget is run again at a bound).
    let checked_from = Arc::new(AtomicUsize::new(histories_checked()));
    let body = {
        let (scenario, executions, reordered) =
            (scenario.clone(), executions.clone(), reordered.clone());
        Arc::new(move || {
            executions.fetch_add(1, SeqCst);
            if execute::<P>(&scenario, true) {
                reordered.fetch_add(1, SeqCst);
            }
        }) as Arc<dyn Fn() + Send + Sync>
    };
    let bound = crate::explore_within(
        body,
        budget,
        || {
            executions.store(0, SeqCst);
            reordered.store(0, SeqCst);
            checked_from.store(histories_checked(), SeqCst);
        },
        highest,
    );
    Pass {
        executions: executions.load(SeqCst),
        bound,
        reordered: reordered.load(SeqCst),
        checked: histories_checked() - checked_from.load(SeqCst),
        time: start.elapsed(),
    }
}

pub(super) fn panic_text(payload: Box<dyn std::any::Any + Send>) -> String {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "a panic without a message".to_string())
}

impl fmt::Display for Handoff {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "thread {} op {} -> thread {} op {}{}",
            self.from.0,
            self.from.1,
            self.to.0,
            self.to.1,
            if self.synchronised {
                ""
            } else {
                " (real time only)"
            }
        )
    }
}

// ---------------------------------------------------------------------
// Drawing scenarios.

/// [`shape`] with 2 or 3 threads whose operations all come from `thread`
/// (workers alike, none with a role of its own).
pub fn alike<Op: Clone + Debug + 'static>(
    init: BoxedStrategy<Op>,
    thread: BoxedStrategy<Op>,
    post: BoxedStrategy<Op>,
    sizes: [usize; 3],
) -> BoxedStrategy<Scenario<Op>> {
    use proptest::prelude::*;
    (2usize..=3)
        .prop_flat_map(move |threads| {
            shape(
                init.clone(),
                vec![thread.clone(); threads],
                post.clone(),
                sizes,
            )
        })
        .boxed()
}

/// Lincheck's shape from per-part operation strategies: 0 to `init_max`
/// operations first, one thread per strategy in `thread_ops` (2 or 3),
/// each of 1 to `thread_max` (at most 3) operations, 0 to `post_max` last,
/// and with probability 1/3 a hand-off from one thread's operation to
/// another thread's.
pub fn shape<Op: Clone + Debug + 'static>(
    init: BoxedStrategy<Op>,
    thread_ops: Vec<BoxedStrategy<Op>>,
    post: BoxedStrategy<Op>,
    [init_max, thread_max, post_max]: [usize; 3],
) -> BoxedStrategy<Scenario<Op>> {
    use proptest::collection::vec;
    use proptest::prelude::*;
    let mut thread_ops = thread_ops;
    let [init_max, thread_max, post_max] = match SMALL.with(std::cell::Cell::get) {
        // The first threads keep their roles (a subject's thread 1 is its
        // reader, taker or receiver).
        Some(Small { threads, sizes, .. }) => {
            thread_ops.truncate(threads);
            [
                init_max.min(sizes[0]),
                thread_max.min(sizes[1]),
                post_max.min(sizes[2]),
            ]
        }
        None => [init_max, thread_max, post_max],
    };
    assert!((1..=3).contains(&thread_max) && (2..=3).contains(&thread_ops.len()));
    let threads: Vec<BoxedStrategy<Vec<Op>>> = thread_ops
        .into_iter()
        .map(|s| vec(s, 1..=thread_max).boxed())
        .collect();
    (
        vec(init, 0..=init_max),
        threads,
        vec(post, 0..=post_max),
        any::<u8>(),
        (any::<usize>(), any::<usize>(), any::<usize>()),
    )
        .prop_map(|(init, threads, post, dice, (a, b, c))| {
            let mut handoffs = Vec::new();
            if dice % 3 == 0 && threads.len() >= 2 {
                let from_thread = 1 + a % threads.len();
                let to_thread = 1 + (from_thread + b % (threads.len() - 1)) % threads.len();
                handoffs.push(Handoff {
                    from: (from_thread, c % threads[from_thread - 1].len()),
                    to: (to_thread, (a / 7) % threads[to_thread - 1].len()),
                    synchronised: dice % 2 == 0,
                });
            }
            Scenario {
                init,
                threads,
                post,
                handoffs,
            }
        })
        .boxed()
}

impl<Op: Debug> Scenario<Op> {
    /// One line per part, for failure messages.
    pub fn summary(&self) -> String {
        let mut out = format!("init {:?}", self.init);
        for (t, ops) in self.threads.iter().enumerate() {
            let _ = write!(out, "; thread {} {:?}", t + 1, ops);
        }
        let _ = write!(out, "; post {:?}", self.post);
        for h in &self.handoffs {
            let _ = write!(out, "; hand-off {h}");
        }
        out
    }
}
