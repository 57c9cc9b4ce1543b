//! Records one execution's history for the linearizability check
//! (`linearizability.rs`): each operation's call and return, and the
//! events that order operations of different threads.
//!
//! # Which order is "before"
//!
//! Linearizability keeps every operation after the operations that
//! completed before it began. What "before" may mean depends on what the
//! backend runs:
//!
//! | build | order | why it is sound |
//! |---|---|---|
//! | shuttle | real time: the recorder's clock | one thread runs at a time, and every access is sequentially consistent: a return earlier on the clock is visible to every later call |
//! | std (real threads) | real time: the recorder's clock | the clock is a `SeqCst` read-modify-write at every call and return, so a return earlier on it happens-before every later call |
//! | loom, every access a read-modify-write (the code under test's switch, [`set_access_mode_hook`](crate::set_access_mode_hook): the real-time pass of every history-checking model, and the audit run) | real time: the recorder's clock | every atomic access is a read-modify-write, which reads the latest value: no access reads a value older than one the clock says was written before |
//! | loom, weak memory (the normal pass) | happens-before the recorder can see: program order, spawn and join, and the scenario's hand-offs; and real time into the operations whose contract promises real time (`Spec::real_time`) | loom's weak memory lets a load read a value that an earlier (on the clock) store has already replaced, when nothing orders the two: real time would call such a run non-linearizable though no thread could tell, unless the contract promises the answer in real time, as on hardware with store buffers such a read is a stale one |
//!
//! Under loom's weak memory the clock still orders the printed history;
//! the precedence is happens-before, and a real-time promise between
//! threads is checked there through a hand-off (one thread waits for
//! another's operation to return before it calls its own: `scenario.rs`),
//! or, for an operation whose specification says its answer is promised
//! in real time (`Spec::real_time`), by the clock itself: every operation
//! that returned before it was called, on the schedule loom ran, comes
//! before it.
//! So every loom model that checks a history runs twice
//! (`Model::check`, `scenario::generated`): with weak memory and
//! happens-before, which finds what a missing ordering breaks, and with
//! every access a read-modify-write and real time, which finds every
//! real-time promise a logic mistake breaks, in every interleaving the
//! pass explores.
//!
//! # Recording changes nothing
//!
//! The log and the clock are std types, outside the model: no scheduling
//! point, no synchronisation that loom or shuttle could see. (Under std the
//! clock's read-modify-writes do order real threads; stress runs check
//! real-time order, not memory orderings, which are loom's job.) A call is
//! recorded just before the operation's first access and a return just
//! after its last, with no scheduling point in between, so under loom and
//! shuttle the clock gives the order of the operations' accesses.
//! modelsync's `oneshot::recording_changes_no_execution` runs a scenario
//! with and without recording and compares the executions.

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
use std::sync::{Arc, Mutex};

use crate::linearizability::{check, History, Operation, Spec, MAX_OPERATIONS};

/// What "before" means in a history (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Precedence {
    /// `a` before `b` iff `a` returned before `b` was called, on the
    /// recorder's clock.
    RealTime,
    /// `a` before `b` iff `a`'s return happens-before `b`'s call through
    /// program order, spawn and join, and hand-offs.
    HappensBefore,
}

/// The precedence of the history this thread records now (see the module
/// documentation): under loom it follows the access mode the model runs
/// in, which `loom::model`'s one OS thread shares with its checks. Without
/// a registered switch ([`set_access_mode_hook`](crate::set_access_mode_hook))
/// no access is ever a read-modify-write, so a loom history is always
/// ordered by happens-before.
pub fn precedence() -> Precedence {
    if cfg!(loom) && !crate::every_access_rmw() {
        return Precedence::HappensBefore;
    }
    Precedence::RealTime
}

enum Event {
    Call {
        op: usize,
        thread: usize,
    },
    Return {
        op: usize,
        thread: usize,
    },
    Fork {
        parent: usize,
        child: usize,
    },
    Join {
        parent: usize,
        child: usize,
    },
    Signal {
        handoff: usize,
        thread: usize,
    },
    /// `synchronised`: the hand-off carries happens-before (see
    /// `scenario::Handoff`); otherwise only the clock orders across it.
    Wait {
        handoff: usize,
        thread: usize,
        synchronised: bool,
    },
}

struct Log<S: Spec> {
    ops: Vec<Operation<S>>,
    /// With their clock readings.
    events: Vec<(u64, Event)>,
}

struct Shared<S: Spec> {
    /// Off: nothing is recorded or checked (to show that recording changes
    /// no execution: `oneshot::recording_changes_no_execution`).
    enabled: bool,
    initial: S,
    clock: AtomicU64,
    log: Mutex<Log<S>>,
}

/// One execution's recorder; [`Recorder::thread`] hands each thread its
/// end of it.
pub struct Recorder<S: Spec> {
    shared: Arc<Shared<S>>,
}

/// A thread's end of a [`Recorder`].
pub struct ThreadRecorder<S: Spec> {
    shared: Arc<Shared<S>>,
    thread: usize,
}

impl<S: Spec> Clone for ThreadRecorder<S> {
    fn clone(&self) -> Self {
        ThreadRecorder {
            shared: self.shared.clone(),
            thread: self.thread,
        }
    }
}

/// An operation called and not yet returned.
#[must_use = "record the return with `returned`, or let it go unreturned with `abandoned`"]
pub struct Call {
    op: usize,
}

thread_local! {
    /// Histories checked on this thread (the test's, where every backend
    /// runs a scenario's last part): the model harness reports the count.
    static CHECKED: Cell<usize> = const { Cell::new(0) };
}

/// Histories checked on this thread so far.
pub fn histories_checked() -> usize {
    CHECKED.with(Cell::get)
}

impl<S: Spec> Recorder<S> {
    /// A recorder for a history that starts from `initial`.
    pub fn new(initial: S) -> Self {
        Self::with(initial, true)
    }

    /// A recorder that records and checks nothing.
    pub fn off(initial: S) -> Self {
        Self::with(initial, false)
    }

    fn with(initial: S, enabled: bool) -> Self {
        Recorder {
            shared: Arc::new(Shared {
                enabled,
                initial,
                clock: AtomicU64::new(0),
                log: Mutex::new(Log {
                    ops: Vec::new(),
                    events: Vec::new(),
                }),
            }),
        }
    }

    /// Thread `thread`'s end (0 is the thread that runs the scenario; the
    /// number is its column in a printed history).
    pub fn thread(&self, thread: usize) -> ThreadRecorder<S> {
        ThreadRecorder {
            shared: self.shared.clone(),
            thread,
        }
    }

    /// The history so far, with the precedence of the mode it ran in.
    pub fn history(&self) -> History<S> {
        self.history_by(precedence())
    }

    /// The history so far, with `precedence`.
    pub fn history_by(&self, precedence: Precedence) -> History<S> {
        let log = self.shared.log.lock().unwrap();
        let ops = log.ops.clone();
        let initial = self.shared.initial.clone();
        let mut history = match precedence {
            Precedence::RealTime => History::real_time(initial, ops),
            Precedence::HappensBefore => {
                let mut before = happens_before(&log);
                let promised: Vec<usize> = (0..ops.len())
                    .filter(|&b| promised_in_real_time::<S>(&ops[b].op))
                    .collect();
                for &b in &promised {
                    for (a, op) in ops.iter().enumerate() {
                        if op.returned.is_some_and(|returned| returned < ops[b].called) {
                            before[b] |= 1 << a;
                        }
                    }
                }
                let order = if promised.is_empty() {
                    "happens-before (program order, spawn and join, hand-offs)"
                } else {
                    "happens-before (program order, spawn and join, hand-offs), and real time \
                     into the operations the contract promises in real time"
                };
                History::with_order(initial, ops, before, order)
            }
        };
        history.marks = log
            .events
            .iter()
            .filter_map(|(at, event)| match *event {
                Event::Fork { parent, child } => {
                    Some((*at, parent, format!("spawns thread {child}")))
                }
                Event::Join { parent, child } => {
                    Some((*at, parent, format!("joined thread {child}")))
                }
                Event::Signal { handoff, thread } => {
                    Some((*at, thread, format!("hands off #{handoff}")))
                }
                Event::Wait {
                    handoff,
                    thread,
                    synchronised,
                } => Some((
                    *at,
                    thread,
                    if synchronised {
                        format!("took hand-off #{handoff}")
                    } else {
                        format!("saw hand-off #{handoff} (real time only)")
                    },
                )),
                Event::Call { .. } | Event::Return { .. } => None,
            })
            .collect();
        history
    }

    /// Checks the history; panics with the failure report if it is not
    /// linearizable. Returns whether the linearization found differs from
    /// the order of the calls (the run interleaved operations in a way that
    /// mattered).
    pub fn check(&self) -> bool {
        if !self.shared.enabled {
            return false;
        }
        let history = self.history();
        CHECKED.with(|c| c.set(c.get() + 1));
        match check(&history) {
            Ok(found) => {
                let mut by_call: Vec<usize> = (0..history.ops.len()).collect();
                by_call.sort_by_key(|&i| history.ops[i].called);
                by_call.retain(|i| found.0.contains(i));
                found.0 != by_call
            }
            Err(failure) => panic!("{failure}"),
        }
    }
}

impl<S: Spec> ThreadRecorder<S> {
    fn tick(&self) -> u64 {
        // SeqCst read-modify-write: under std, what orders real threads'
        // calls and returns (see the module documentation).
        self.shared.clock.fetch_add(1, SeqCst)
    }

    /// An end of the same recorder for column `thread`: for records made
    /// on threads the scenario does not run (a runtime's workers).
    pub fn column(&self, thread: usize) -> ThreadRecorder<S> {
        ThreadRecorder {
            shared: self.shared.clone(),
            thread,
        }
    }

    /// The thread's number: its column in a printed history.
    pub fn thread_index(&self) -> usize {
        self.thread
    }

    /// Records a call of `op`, now.
    pub fn call(&self, op: S::Op) -> Call {
        if !self.shared.enabled {
            return Call { op: usize::MAX };
        }
        let mut log = self.shared.log.lock().unwrap();
        let at = self.tick();
        self.push_call(&mut log, op, at)
    }

    /// Adds a call of `op` at clock reading `at` to `log`.
    fn push_call(&self, log: &mut Log<S>, op: S::Op, at: u64) -> Call {
        let index = log.ops.len();
        assert!(
            index < MAX_OPERATIONS,
            "more than {MAX_OPERATIONS} operations in one history"
        );
        log.ops.push(Operation {
            thread: self.thread,
            op,
            ret: None,
            called: at,
            returned: None,
            gave_up: None,
        });
        // Events are ordered by their clock when the history is built.
        log.events.push((
            at,
            Event::Call {
                op: index,
                thread: self.thread,
            },
        ));
        Call { op: index }
    }

    /// A reading of the clock, now, for [`ThreadRecorder::call_at`]: a
    /// moment an operation's call may later be placed at.
    pub fn now(&self) -> u64 {
        if !self.shared.enabled {
            return 0;
        }
        let _log = self.shared.log.lock().unwrap();
        self.tick()
    }

    /// Records a call of `op` at the earlier moment `at` (a reading of
    /// [`ThreadRecorder::now`]): for an operation whose call is known only
    /// later (a task's final poll is known to be the last once it
    /// returns). Placing a call earlier than it was only widens the
    /// operation, which allows the history more linearizations, never
    /// fewer.
    pub fn call_at(&self, op: S::Op, at: u64) -> Call {
        if !self.shared.enabled {
            return Call { op: usize::MAX };
        }
        let mut log = self.shared.log.lock().unwrap();
        self.push_call(&mut log, op, at)
    }

    /// Records that `call` returned `ret`, now.
    pub fn returned(&self, call: Call, ret: S::Ret) {
        if !self.shared.enabled {
            return;
        }
        let mut log = self.shared.log.lock().unwrap();
        let at = self.tick();
        let op = &mut log.ops[call.op];
        op.ret = Some(ret);
        op.returned = Some(at);
        log.events.push((
            at,
            Event::Return {
                op: call.op,
                thread: self.thread,
            },
        ));
    }

    /// `call` will not return (it was cancelled): it stays unreturned.
    pub fn abandoned(&self, call: Call) {
        let _ = call;
    }

    /// `call` blocked, and is given up now because every other thread has
    /// finished or waits too (the scenario harness's `Waiter::park`): it
    /// stays unreturned, and the history checks that the specification
    /// has it wait at this moment (a give-up check,
    /// `Operation::gave_up`).
    pub fn gave_up(&self, call: Call) {
        if !self.shared.enabled {
            return;
        }
        let op = self.shared.log.lock().unwrap().ops[call.op].op.clone();
        let check = self.call(op);
        let mut log = self.shared.log.lock().unwrap();
        let at = self.tick();
        let entry = &mut log.ops[check.op];
        entry.gave_up = Some(call.op);
        entry.returned = Some(at);
        log.events.push((
            at,
            Event::Return {
                op: check.op,
                thread: self.thread,
            },
        ));
    }

    /// Records `op` around `f`: the call just before, the return (as `ret`
    /// maps `f`'s result) just after.
    pub fn op<T>(&self, op: S::Op, f: impl FnOnce() -> T, ret: impl FnOnce(&T) -> S::Ret) -> T {
        let call = self.call(op);
        let result = f();
        self.returned(call, ret(&result));
        result
    }

    /// This thread is about to spawn thread `child`: what it did so far
    /// happens-before everything `child` does.
    pub fn fork(&self, child: usize) {
        self.event(|_| Event::Fork {
            parent: self.thread,
            child,
        });
    }

    /// This thread has joined thread `child`.
    pub fn join(&self, child: usize) {
        self.event(|_| Event::Join {
            parent: self.thread,
            child,
        });
    }

    /// This thread releases hand-off `handoff` (after its operation).
    pub fn signal(&self, handoff: usize) {
        self.event(|_| Event::Signal {
            handoff,
            thread: self.thread,
        });
    }

    /// This thread has taken hand-off `handoff` (before its next
    /// operation): acquired it if `synchronised`, seen it only in real
    /// time otherwise.
    pub fn waited(&self, handoff: usize, synchronised: bool) {
        self.event(|_| Event::Wait {
            handoff,
            thread: self.thread,
            synchronised,
        });
    }

    fn event(&self, make: impl FnOnce(u64) -> Event) {
        if !self.shared.enabled {
            return;
        }
        let mut log = self.shared.log.lock().unwrap();
        let at = self.tick();
        log.events.push((at, make(at)));
    }
}

/// A thread spawned with [`ThreadRecorder::spawn`]: joining it records the
/// join.
pub struct Spawned<S: Spec, T> {
    handle: crate::sync::thread::JoinHandle<T>,
    parent: ThreadRecorder<S>,
    child: usize,
}

impl<S: Spec, T> Spawned<S, T> {
    /// Joins the thread, recording the join on the spawning thread.
    pub fn join(self) -> std::thread::Result<T> {
        let joined = self.handle.join();
        self.parent.join(self.child);
        joined
    }
}

impl<S: Spec + Send + Sync + 'static> ThreadRecorder<S>
where
    S::Op: Send + Sync,
    S::Ret: Send + Sync,
{
    /// Spawns `f` on a backend thread that is thread `child` of the
    /// history, recording the spawn: everything this thread recorded so far
    /// happens-before everything `f` records. What the hand-written models
    /// use, so that their histories are checked too.
    pub fn spawn<T: Send + 'static>(
        &self,
        child: usize,
        f: impl FnOnce(ThreadRecorder<S>) -> T + Send + 'static,
    ) -> Spawned<S, T> {
        self.fork(child);
        let rec = ThreadRecorder {
            shared: self.shared.clone(),
            thread: child,
        };
        Spawned {
            handle: crate::sync::thread::spawn(move || f(rec)),
            parent: self.clone(),
            child,
        }
    }
}

/// Whether `op`'s answer is checked in real time under weak memory too
/// (`Spec::real_time`). `MODELSYNC_REAL_TIME_EVERYWHERE=1` asks it of every
/// operation: to see which answers depend on a stale read at all.
fn promised_in_real_time<S: Spec>(op: &S::Op) -> bool {
    S::real_time(op) || std::env::var_os("MODELSYNC_REAL_TIME_EVERYWHERE").is_some_and(|v| v == "1")
}

/// For each operation, the operations that happen-before its call, by
/// vector clocks over the recorded events: program order, fork, join and
/// hand-offs.
fn happens_before<S: Spec>(log: &Log<S>) -> Vec<u128> {
    let mut events: Vec<&(u64, Event)> = log.events.iter().collect();
    events.sort_by_key(|(at, _)| *at);
    let threads = 1 + events
        .iter()
        .map(|(_, e)| match *e {
            Event::Call { thread, .. }
            | Event::Return { thread, .. }
            | Event::Signal { thread, .. }
            | Event::Wait { thread, .. } => thread,
            Event::Fork { parent, child } | Event::Join { parent, child } => parent.max(child),
        })
        .max()
        .unwrap_or(0);
    // clocks[t][u]: how many of thread u's operations returned before
    // thread t's present, as far as t can know.
    let mut clocks = vec![vec![0u32; threads]; threads];
    let mut handoffs: Vec<Option<Vec<u32>>> = Vec::new();
    // Per operation: its thread's count of returns once it returned (its
    // "timestamp" in its thread), and the clock at its call.
    let mut returned_as = vec![0u32; log.ops.len()];
    let mut called_at: Vec<Vec<u32>> = vec![Vec::new(); log.ops.len()];
    let join = |into: &mut Vec<u32>, from: &[u32]| {
        for (a, b) in into.iter_mut().zip(from) {
            *a = (*a).max(*b);
        }
    };
    for (_, event) in events {
        match *event {
            Event::Call { op, thread } => called_at[op] = clocks[thread].clone(),
            Event::Return { op, thread } => {
                clocks[thread][thread] += 1;
                returned_as[op] = clocks[thread][thread];
            }
            Event::Fork { parent, child } => clocks[child] = clocks[parent].clone(),
            Event::Join { parent, child } => {
                let child = clocks[child].clone();
                join(&mut clocks[parent], &child);
            }
            Event::Signal { handoff, thread } => {
                if handoffs.len() <= handoff {
                    handoffs.resize(handoff + 1, None);
                }
                handoffs[handoff] = Some(clocks[thread].clone());
            }
            Event::Wait {
                handoff,
                thread,
                synchronised,
            } => {
                let from = handoffs
                    .get(handoff)
                    .cloned()
                    .flatten()
                    .expect("a hand-off waited for before it was signalled");
                // One seen in real time only orders nothing in
                // happens-before.
                if synchronised {
                    join(&mut clocks[thread], &from);
                }
            }
        }
    }
    (0..log.ops.len())
        .map(|b| {
            (0..log.ops.len()).fold(0u128, |set, a| {
                let op = &log.ops[a];
                let known = op.returned.is_some()
                    && a != b
                    && called_at[b].get(op.thread).copied().unwrap_or(0) >= returned_as[a];
                if known {
                    set | 1 << a
                } else {
                    set
                }
            })
        })
        .collect()
}
