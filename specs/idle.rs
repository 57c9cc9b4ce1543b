//! The runtime's searching and sleeping workers (`src/runtime/idle.rs`),
//! a component on its own: which workers run, search for work or sleep,
//! and which sleeper a push wakes. The property test
//! `runtime::idle_counters_match_reference` steps it beside the real
//! counters; the models' histories are checked against it
//! (`models/runtime/idle.rs`).
//!
//! State: each worker's stage (running, searching, sleeping), the
//! sleepers in the order they went to sleep, the workers that looked
//! and may start searching, and whether a hand-off is owed.
//!
//! - Starting to search is two steps, as the code takes them: a look at
//!   the searching count, which allows it while fewer than half of the
//!   workers search, then the count's increment. Another worker may
//!   start between the two, so more than half may search at once, but only
//!   by workers that each looked while fewer did (`transition_worker_to_searching`
//!   reads the count with a plain load: a cap on contention, not a
//!   synchronisation). A history records both steps with the call's
//!   interval, so the look and the increment may fall anywhere in it, in
//!   that order.
//! - A searcher that stops is told whether it was the last (it must then
//!   wake another: R-8). A last searcher that stops while every worker is
//!   awake can wake nobody: a hand-off is then owed. A worker going to
//!   sleep is told whether it must check every queue once more: it
//!   was the last searcher, or it did not search, none does, and a
//!   hand-off is owed; either way the hand-off is then paid
//!   (`src/runtime/idle.rs` says why a worker that did not search checks
//!   only then).
//! - After a push, the newest sleeper is woken, and counts as searching,
//!   exactly when no worker searches.
//!
//! Deterministic: one outcome per operation. An operation its worker's
//! stage does not allow (a sleeping worker going to sleep, a search
//! started without a look that allowed it) has none: the caller's
//! contract, below, rules it out.
//!
//! Contract with its callers (kept by `worker.rs`): a worker changes only
//! its own stage (a push wakes another through `WorkerToNotify` alone);
//! it starts searching only from running, stops only while searching,
//! and parks only while awake.

use crate::harness::linearizability::Spec;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Stage {
    Running,
    Searching,
    Sleeping,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Workers {
    pub stages: Vec<Stage>,
    /// Oldest first: a push wakes the last.
    pub sleepers: Vec<usize>,
    /// Workers whose look allowed them to search, not yet counted.
    pub looked: Vec<bool>,
    /// The last searcher stopped while every worker was awake, and woke
    /// nobody: the next worker to sleep leaving no searcher checks for it.
    pub handoff_owed: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Op {
    /// `transition_worker_to_searching`'s look at the count.
    LookToSearch(usize),
    /// Its increment, after a look that allowed it.
    StartSearching(usize),
    /// `transition_worker_from_searching`.
    FromSearching(usize),
    /// `transition_worker_to_parked`.
    ToParked(usize),
    /// `worker_to_notify`, after a push.
    WorkerToNotify,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Ret {
    Unit,
    /// A look's answer, "was the last searcher" (a stop), or "check every
    /// queue before sleeping" (a park).
    Bool(bool),
    /// The worker to wake.
    Woke(Option<usize>),
}

impl Workers {
    /// `workers` workers, all running.
    pub fn new(workers: usize) -> Self {
        Workers {
            stages: vec![Stage::Running; workers],
            sleepers: Vec::new(),
            looked: vec![false; workers],
            handoff_owed: false,
        }
    }

    pub fn searching(&self) -> usize {
        self.stages.iter().filter(|&&s| s == Stage::Searching).count()
    }

    pub fn unparked(&self) -> usize {
        self.stages.iter().filter(|&&s| s != Stage::Sleeping).count()
    }

    /// `op`'s outcome, or `None` if the worker's stage does not allow it.
    fn step(&self, op: &Op) -> Option<(Ret, Self)> {
        let mut s = self.clone();
        let searching = self.searching();
        let ret = match *op {
            Op::LookToSearch(w) if s.stages[w] == Stage::Running && !s.looked[w] => {
                let ok = 2 * searching < s.stages.len();
                s.looked[w] = ok;
                Ret::Bool(ok)
            }
            Op::StartSearching(w) if s.looked[w] => {
                s.looked[w] = false;
                s.stages[w] = Stage::Searching;
                Ret::Unit
            }
            Op::FromSearching(w) if s.stages[w] == Stage::Searching => {
                let last = searching == 1;
                s.handoff_owed |= last && self.unparked() == s.stages.len();
                s.stages[w] = Stage::Running;
                Ret::Bool(last)
            }
            Op::ToParked(w) if s.stages[w] != Stage::Sleeping && !s.looked[w] => {
                let must_check = if s.stages[w] == Stage::Searching {
                    searching == 1
                } else {
                    searching == 0 && s.handoff_owed
                };
                s.handoff_owed &= !must_check;
                s.stages[w] = Stage::Sleeping;
                s.sleepers.push(w);
                Ret::Bool(must_check)
            }
            Op::WorkerToNotify => {
                let woken = if searching == 0 { s.sleepers.pop() } else { None };
                if let Some(w) = woken {
                    s.stages[w] = Stage::Searching;
                }
                Ret::Woke(woken)
            }
            _ => return None,
        };
        Some((ret, s))
    }

    /// `transition_worker_to_searching` as one step, as a single thread
    /// sees it: the look, then the increment if the look allowed it.
    pub fn to_searching(&self, w: usize) -> Option<(bool, Self)> {
        let (Ret::Bool(ok), looked) = self.step(&Op::LookToSearch(w))? else {
            unreachable!("a look answers with a bool")
        };
        if !ok {
            return Some((false, looked));
        }
        let (_, started) = looked.step(&Op::StartSearching(w))?;
        Some((true, started))
    }
}

impl Spec for Workers {
    type Op = Op;
    type Ret = Ret;

    fn outcomes(&self, op: &Op) -> Vec<(Ret, Self)> {
        self.step(op).into_iter().collect()
    }
}
