//! The runtime's live-task list (`src/runtime/live.rs`), a component on
//! its own: which tasks each shard lists, and whether shutdown has closed
//! it. The property test `runtime::live_tasks_match_reference` steps it
//! beside the real list; the models' histories are checked against it
//! (`models/runtime/live_tasks.rs`).
//!
//! State: per shard, the entries it lists and whether it is closed. An
//! operation names the shard of its entry (the list's `shard_of`: fixed
//! for an entry), so the specification partitions by shard.
//!
//! - `Insert` lists the entry and answers true, or answers false once the
//!   shard is closed.
//! - `Remove` answers whether the entry was listed, unlisting it.
//! - `CloseShard` closes one shard and answers the entries it listed,
//!   oldest index first. `close_and_take_all` is one `CloseShard` per
//!   shard, all recorded with the call's interval: the whole close is not
//!   one step (an insert into a shard not reached yet succeeds after an
//!   insert into a closed one was refused), and the specification says so
//!   by having none.
//!
//! Deterministic: one outcome per operation. Contract with its callers
//! (kept by the runtime, and by the models' scenarios): an entry is
//! inserted at most once, and removed only after its insert returned.

use std::collections::BTreeSet;

use crate::harness::linearizability::Spec;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct LiveTasks {
    pub shards: Vec<Shard>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Shard {
    pub listed: BTreeSet<usize>,
    pub closed: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Op {
    Insert { entry: usize, shard: usize },
    Remove { entry: usize, shard: usize },
    CloseShard(usize),
}

#[derive(Clone, Debug, PartialEq)]
pub enum Ret {
    Bool(bool),
    /// The entries a closed shard listed, in index order.
    Taken(Vec<usize>),
}

impl LiveTasks {
    /// An empty list of `shards` shards.
    pub fn new(shards: usize) -> Self {
        LiveTasks {
            shards: vec![Shard::default(); shards],
        }
    }

    /// `op`'s outcome.
    pub fn step(&self, op: &Op) -> (Ret, Self) {
        let mut next = self.clone();
        let ret = match *op {
            Op::Insert { entry, shard } => {
                let shard = &mut next.shards[shard];
                Ret::Bool(!shard.closed && shard.listed.insert(entry))
            }
            Op::Remove { entry, shard } => Ret::Bool(next.shards[shard].listed.remove(&entry)),
            Op::CloseShard(shard) => {
                let shard = &mut next.shards[shard];
                shard.closed = true;
                Ret::Taken(std::mem::take(&mut shard.listed).into_iter().collect())
            }
        };
        (ret, next)
    }
}

impl Spec for LiveTasks {
    type Op = Op;
    type Ret = Ret;

    fn outcomes(&self, op: &Op) -> Vec<(Ret, Self)> {
        vec![self.step(op)]
    }
}
