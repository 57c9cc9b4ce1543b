//! The run queue's sequential specification (`src/queue/`): rings of
//! fixed capacity, each with one owner, and the shared inject queue. The
//! property tests step it beside the real queues (`proptests/queue.rs`),
//! and the models' histories are checked against it (`models/queue.rs`).
//!
//! - `push` appends to the owner's ring; into a full ring it moves
//!   the oldest half, then the item, to the inject queue, in order, in one
//!   batch.
//! - `pop` takes the oldest item of the owner's ring.
//! - A steal takes at least one and at most half, rounded up, of what the
//!   source ring holds at its linearization point, limited by the room in
//!   the destination plus the one it returns; it returns the last item it
//!   took and appends the others to the destination in order.
//! - The inject queue is a FIFO.
//!
//! Nondeterministic exactly where the contract is, and only with the
//! reason the contract gives, checked on the history
//! (`Spec::needs_overlap`: an operation of the kind named must have
//! overlapped this one). A steal in progress holds slots of its source
//! ring that the specification, which moved its items at the steal's
//! linearization point, no longer counts; that is the only reason, so the
//! overlapping steal must be one that claimed (it took items, or never
//! returned: one that returned `None` claimed nothing):
//!
//! - a steal may return `None` from a ring that is not empty only while
//!   another steal of the same ring overlaps it: it found that steal's
//!   claim (`Steal::steal_into`: "none when the ring is empty or another
//!   steal is in progress"). A steal that gives up on any other
//!   contention (the owner popping, say) fails the history;
//! - a steal may take fewer than half (but at least one) only while a
//!   steal from its destination overlaps it: that steal's claimed slots
//!   count against the destination's room;
//! - a push into a ring that is not full may send its item alone to the
//!   inject queue only while a steal of that ring overlaps it: while a
//!   steal is in progress every slot from its claim to the owner's head is
//!   held (the items it claimed, and those the owner popped after them),
//!   so the ring looks full with as little as nothing in it, and then only
//!   the item moves (`Local::spill`), as tokio's `push_back_or_overflow`
//!   does. (`queue::steal_across_u32_max`'s history showed it: three
//!   items, a steal claims two, the owner pops the third and pushes two,
//!   and the second push, with one item in the ring, sends its item
//!   alone.)
//!
//! A steal also need not see a push that does not come before it in the
//! history's order (happens-before in the weak-memory pass, real time in
//! the real-time pass): it reads the ring's tail with an acquire load,
//! which sees every push that happens before the steal and may miss one
//! that does not. So a steal may return `None` from a ring that is not
//! empty, or take fewer than half, also while the operation that put
//! there the first item it did not see overlaps it: that item's push, or
//! a steal into the ring (whose return names only the item it kept, so
//! any steal into the ring that took items counts). This is the queue's order, weaker than
//! linearizability in real time: two owners that each push into their
//! own ring and then steal from the other's may both find the other's
//! ring empty (the store-buffering shape; the queue's two-operation scope
//! found it: queue-2x2, `queue::scope_two_ops_from_<regime>`). tokio's queue is the same (a release
//! store of the tail, an acquire load by stealers) and promises no more.
//! It is enough for the runtime: a worker that finds nothing goes to
//! sleep through the idle word's read-modify-write, which a pusher's
//! read-modify-write meets after its push, so one of the two sees
//! the other whatever the ring's loads missed. Where an item must be
//! seen, a happens-before edge (a join, a channel, a lock) makes it so.
//!
//! Every other outcome is deterministic, and with items' identities a
//! steal's return says how many it took. That a steal does take items
//! when no other steal runs is then part of the specification, not only a
//! progress property for the models' reachability counts.

use std::collections::VecDeque;

use crate::harness::linearizability::{Overlap, Spec};

/// Rings a history may use.
pub const RINGS: usize = 3;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Queue {
    pub capacity: [usize; RINGS],
    /// Each ring's items (ids), oldest first.
    pub rings: [VecDeque<usize>; RINGS],
    pub inject: VecDeque<usize>,
    /// Per ring, an overflow's batch (the oldest half and the pushed
    /// item) between its claim and its landing in the inject queue: the
    /// overflow is two steps (see `Op::OverflowLands`).
    pub in_flight: [Vec<usize>; RINGS],
}

#[derive(Clone, Debug, PartialEq)]
pub enum Op {
    /// The owner of `ring` pushes `item`.
    Push(usize, usize),
    Pop(usize),
    /// `from`'s stealer steals into `into` (by `into`'s owner).
    Steal { from: usize, into: usize },
    InjectPush(usize),
    InjectPop,
    /// The second step of the owner of `ring`'s push, recorded with the
    /// push's interval: an overflow claims the oldest half of the ring
    /// with its compare-and-swap, then pushes the batch into the inject
    /// queue under its lock, so an operation between the two finds the
    /// batch in neither (a steal of the ring sees it gone, the inject
    /// queue does not have it yet). Moves the ring's batch in flight, if
    /// any, to the inject queue; nothing otherwise.
    OverflowLands(usize),
}

#[derive(Clone, Debug, PartialEq)]
pub enum Ret {
    Unit,
    Item(Option<usize>),
}

impl Queue {
    pub fn new(capacity: [usize; RINGS]) -> Self {
        Queue {
            capacity,
            rings: Default::default(),
            inject: VecDeque::new(),
            in_flight: Default::default(),
        }
    }

    /// The deterministic push: append, or move half and the item.
    fn push_whole(&self, ring: usize, item: usize) -> Self {
        let mut next = self.clone();
        if next.rings[ring].len() == self.capacity[ring] {
            let half = self.capacity[ring] / 2;
            let moved: Vec<usize> = next.rings[ring].drain(..half).collect();
            next.inject.extend(moved);
            next.inject.push_back(item);
        } else {
            next.rings[ring].push_back(item);
        }
        next
    }

    /// The sequential steal, taking `count` items.
    fn steal_count(&self, from: usize, into: usize, count: usize) -> (Option<usize>, Self) {
        let mut next = self.clone();
        let mut taken: Vec<usize> = next.rings[from].drain(..count).collect();
        let returned = taken.pop();
        next.rings[into].extend(taken);
        (returned, next)
    }

    /// How many a sequential steal takes: half rounded up, limited by the
    /// destination's room plus the returned one.
    pub fn steal_size(&self, from: usize, into: usize) -> usize {
        let available = self.rings[from].len();
        let room = self.capacity[into] - self.rings[into].len();
        (available - available / 2).min(room + 1)
    }

    /// The outcomes a single-threaded run allows: every push and steal
    /// deterministic (no steal can be in progress).
    pub fn sequential(&self, op: &Op) -> (Ret, Self) {
        match *op {
            Op::Push(ring, item) => (Ret::Unit, self.push_whole(ring, item)),
            Op::Steal { from, into } => {
                let (got, next) = self.steal_count(from, into, self.steal_size(from, into));
                (Ret::Item(got), next)
            }
            _ => self.outcomes(op).remove(0),
        }
    }
}

impl Spec for Queue {
    type Op = Op;
    type Ret = Ret;

    fn outcomes(&self, op: &Op) -> Vec<(Ret, Self)> {
        match *op {
            Op::Push(ring, item) => {
                let mut outcomes = vec![(Ret::Unit, self.push_whole(ring, item))];
                if self.rings[ring].len() == self.capacity[ring] && self.in_flight[ring].is_empty() {
                    // The overflow's claim alone; its batch lands later.
                    let mut claimed = self.clone();
                    let half = self.capacity[ring] / 2;
                    let mut batch: Vec<usize> = claimed.rings[ring].drain(..half).collect();
                    batch.push(item);
                    claimed.in_flight[ring] = batch;
                    outcomes.push((Ret::Unit, claimed));
                }
                if self.rings[ring].len() < self.capacity[ring] {
                    let mut alone = self.clone();
                    alone.inject.push_back(item);
                    outcomes.push((Ret::Unit, alone));
                }
                outcomes
            }
            Op::Pop(ring) => {
                let mut next = self.clone();
                let got = next.rings[ring].pop_front();
                vec![(Ret::Item(got), next)]
            }
            Op::Steal { from, into } => {
                let mut outcomes = vec![(Ret::Item(None), self.clone())];
                for count in 1..=self.steal_size(from, into) {
                    let (got, next) = self.steal_count(from, into, count);
                    outcomes.push((Ret::Item(got), next));
                }
                outcomes
            }
            Op::InjectPush(item) => {
                let mut next = self.clone();
                next.inject.push_back(item);
                vec![(Ret::Unit, next)]
            }
            Op::InjectPop => {
                let mut next = self.clone();
                let got = next.inject.pop_front();
                vec![(Ret::Item(got), next)]
            }
            Op::OverflowLands(ring) => {
                let mut next = self.clone();
                let batch = std::mem::take(&mut next.in_flight[ring]);
                next.inject.extend(batch);
                vec![(Ret::Unit, next)]
            }
        }
    }

    fn needs_overlap(&self, op: &Op, ret: &Ret, next: &Self) -> Option<Overlap<Op, Ret>> {
        match (op, ret) {
            (&Op::Steal { from, .. }, Ret::Item(None)) if !self.rings[from].is_empty() => {
                // Unseen, the oldest item: then every later one too.
                let unseen = self.rings[from][0];
                Some(Overlap::new(
                    format!(
                        "a steal from ring {from} that claimed, or the push of item {unseen} \
                         or a steal into ring {from} (which a steal need not see)"
                    ),
                    move |other, ret| {
                        claimed_from(other, ret, from) || put_into(other, ret, from, &[unseen])
                    },
                ))
            }
            (&Op::Steal { from, into }, Ret::Item(Some(_)))
                if self.rings[from].len() - next.rings[from].len() < self.steal_size(from, into) =>
            {
                // Taking k, the steal saw 2k - 1 or 2k items: the first it
                // did not see is the one at either index.
                let taken = self.rings[from].len() - next.rings[from].len();
                let unseen: Vec<usize> = [2 * taken - 1, 2 * taken]
                    .iter()
                    .filter_map(|&i| self.rings[from].get(i).copied())
                    .collect();
                Some(Overlap::new(
                    format!(
                        "a steal from ring {into} (the destination) that claimed, or the push \
                         of one of items {unseen:?} or a steal into ring {from} (which a steal \
                         need not see)"
                    ),
                    move |other, ret| {
                        claimed_from(other, ret, into) || put_into(other, ret, from, &unseen)
                    },
                ))
            }
            (&Op::Push(ring, item), Ret::Unit)
                if next.in_flight[ring].is_empty() && *next != self.push_whole(ring, item) =>
            {
                Some(Overlap::new(
                    format!("a steal from ring {ring} that claimed"),
                    move |other, ret| claimed_from(other, ret, ring),
                ))
            }
            _ => None,
        }
    }
}

/// Whether `op`, returning `ret`, may have put one of `items` into `ring`:
/// a push of one of them, or a steal into the ring that took items (its
/// return names only the item it kept, not those it moved).
fn put_into(op: &Op, ret: Option<&Ret>, ring: usize, items: &[usize]) -> bool {
    match *op {
        Op::Push(r, item) => r == ring && items.contains(&item),
        Op::Steal { into, .. } => into == ring && matches!(ret, Some(Ret::Item(Some(_)))),
        _ => false,
    }
}

/// Whether `op`, returning `ret`, is a steal from `ring` that claimed
/// slots while it ran: one that took items, or never returned. A steal
/// that returned `None` gave up before its claim (`steal_into` claims with
/// its compare-and-swap and then always takes), so it held nothing that
/// could make another operation of the ring give up or take less.
fn claimed_from(op: &Op, ret: Option<&Ret>, ring: usize) -> bool {
    matches!(*op, Op::Steal { from, .. } if from == ring) && ret != Some(&Ret::Item(None))
}
