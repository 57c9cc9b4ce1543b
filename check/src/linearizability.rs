//! Linearizability of recorded histories against a sequential
//! specification: the Wing-Gong search with Lowe's memoisation, and Horn
//! and Kroening's P-compositionality where the specification partitions.
//!
//! Generic: nothing here knows a primitive. A primitive brings a [`Spec`]
//! (its sequential specification: `specs/<p>.rs`), a run brings a
//! [`History`] (its operations, what each returned, and which had to come
//! before which), and [`check`] answers with a linearization or a
//! [`Failure`] that prints the history one column per thread, the longest
//! linearizable prefix found, and the operations that could not be placed
//! next. It depends on std alone, so that it could become a crate.
//!
//! # What is checked
//!
//! A history is linearizable when its operations can be put in one order
//! that (a) keeps every operation after every operation that [`History`]
//! says must precede it (real time, or happens-before: the recorder
//! decides, see `recorder.rs`), and (b) the specification, stepped
//! through that order from the history's initial state, allows every
//! operation's recorded return. An operation that never returned (still
//! blocked when the run ended, or cancelled) may be left out, or placed
//! with any effect [`Spec::unreturned`] allows; it precedes nothing.
//!
//! Blocking operations (a `recv` that waits, a `park`) need nothing
//! special: the specification gives no outcome where the operation could
//! not return, so the search places it only where it could (a dual data
//! structure's request and follow-up, seen from outside). One left
//! blocked when nothing else could run (the scenario harness gives it up
//! then) brings a give-up check ([`Operation::gave_up`]): at that moment
//! the specification must also have it wait, or a wake-up was lost.
//!
//! # The search
//!
//! Depth-first over (operations placed, specification state): the
//! candidates are the operations not yet placed whose predecessors all
//! are; each outcome the specification allows for a candidate, with the
//! recorded return, is a child. A pair already explored is not explored
//! again (Lowe's memoisation: the specification's state must be `Eq +
//! Hash`, and equal states must behave alike). The search succeeds when
//! every returned operation is placed. Its cost is bounded by the number
//! of distinct pairs, which the precedence keeps small for the histories
//! the models record (a few threads of a few operations each).
//!
//! # Nondeterminism that needs a reason
//!
//! Where a contract allows an outcome only because something ran at the
//! same time (a steal may give up only while another steal of its ring is
//! in progress), the specification says so ([`Spec::needs_overlap`]):
//! such an outcome is allowed only if the history holds an operation of
//! the kind it names that overlapped this one, that is, one that neither
//! came before nor after it in the history's order. The kind may depend
//! on what the other operation returned (a steal that gave up claimed
//! nothing, so it is no reason for another to give up). So a specification
//! may be nondeterministic "because of concurrency" without letting a
//! single-threaded bug through: a steal that gave up with nobody else
//! stealing fails the check, whatever the state. An operation that never
//! returned takes a conditioned outcome under the same rule: it overlaps
//! every operation that did not return before its call, so its reason may
//! come later than it (a task's `Finish`, which the runtime's models record
//! unreturned, is the one that relies on it).
//!
//! P-compositionality: when [`Spec::partition`] splits a history into
//! parts that touch disjoint parts of the state (the keyed channel's
//! independent keys), each part is checked alone from the same initial
//! state, and the history is linearizable iff every part is (Herlihy and
//! Wing's locality, for an object that is a product of independent
//! objects).

use std::collections::{HashMap, HashSet};
use std::fmt::{self, Debug, Write as _};
use std::hash::Hash;

/// A sequential specification: a state machine whose states are the
/// object's abstract states.
pub trait Spec: Clone + Eq + Hash + Debug {
    /// An operation with its arguments.
    type Op: Clone + Debug + PartialEq;
    /// What an operation returns.
    type Ret: Clone + Debug + PartialEq;

    /// Every outcome `op` may have in this state: its return and the state
    /// after it. Several where the contract is nondeterministic; none where
    /// `op` cannot return in this state (a blocking operation waits).
    fn outcomes(&self, op: &Self::Op) -> Vec<(Self::Ret, Self)>;

    /// The states `op` may leave when it returns `ret`: the outcomes with
    /// that return. A specification may compute it more directly (one
    /// receive rather than every one that was possible).
    fn after(&self, op: &Self::Op, ret: &Self::Ret) -> Vec<Self> {
        self.outcomes(op)
            .into_iter()
            .filter(|(allowed, _)| allowed == ret)
            .map(|(_, state)| state)
            .collect()
    }

    /// The states `op` may leave if it took effect but never returned (it
    /// was still blocked when the run ended, or it was cancelled). By
    /// default every outcome's state: the operation may have taken effect
    /// before it was stopped. A specification whose operations take no
    /// effect unless they return (a cancelled receive loses no message)
    /// returns none. The search also always tries leaving it out.
    fn unreturned(&self, op: &Self::Op) -> Vec<Self> {
        self.outcomes(op)
            .into_iter()
            .map(|(_, state)| state)
            .collect()
    }

    /// Why `op`'s outcome returning `ret` and leaving `next` is allowed, if
    /// the state alone does not allow it: the operations that must have
    /// overlapped `op` for it (see the module documentation). `None` (the
    /// default): the state allows it alone.
    fn needs_overlap(
        &self,
        op: &Self::Op,
        ret: &Self::Ret,
        next: &Self,
    ) -> Option<Overlap<Self::Op, Self::Ret>> {
        let _ = (op, ret, next);
        None
    }

    /// Whether the contract promises `op`'s answer in real time, whatever
    /// synchronises the threads: every operation that returned before
    /// `op` was called takes effect before it. Under loom's weak memory,
    /// whose histories are otherwise ordered by happens-before alone, the
    /// recorder adds exactly those edges into `op` (`recorder.rs`), so an
    /// answer read from a value older than an operation that had already
    /// returned (a stale load, as a store buffer gives on hardware) fails
    /// the history. `false` (the default): happens-before is the promise.
    fn real_time(op: &Self::Op) -> bool {
        let _ = op;
        false
    }

    /// Parts of a history that touch disjoint parts of the state, if the
    /// specification is a product of independent objects and these
    /// operations stay within one each: the indices of each part's
    /// operations. `None` (the default): no partition, check it whole.
    fn partition(&self, ops: &[(&Self::Op, Option<&Self::Ret>)]) -> Option<Vec<Vec<usize>>> {
        let _ = ops;
        None
    }
}

/// An outcome's reason (see [`Spec::needs_overlap`]): it is allowed only if
/// an operation for which `by` holds overlapped the one it is the outcome
/// of. `by` sees the other operation and what it returned (`None`: it
/// never returned). `what` names it for a failure's printout.
pub struct Overlap<Op, Ret> {
    /// The reason's name, for a failure's printout.
    pub what: String,
    /// Whether another operation (with its return) is the reason.
    pub by: Box<OverlapTest<Op, Ret>>,
}

/// Whether an operation, with what it returned (`None`: it never
/// returned), is the reason an `Overlap` names.
pub type OverlapTest<Op, Ret> = dyn Fn(&Op, Option<&Ret>) -> bool;

impl<Op, Ret> Overlap<Op, Ret> {
    /// The reason `what`, given by any operation for which `by` holds.
    pub fn new(what: impl Into<String>, by: impl Fn(&Op, Option<&Ret>) -> bool + 'static) -> Self {
        Overlap {
            what: what.into(),
            by: Box::new(by),
        }
    }
}

/// One operation of a history.
#[derive(Clone, Debug)]
pub struct Operation<S: Spec> {
    /// Which thread ran it: a column of the printed history.
    pub thread: usize,
    /// The operation, with its arguments.
    pub op: S::Op,
    /// `None`: it never returned (blocked when the run ended, or
    /// cancelled).
    pub ret: Option<S::Ret>,
    /// When it was called and when it returned, on the recorder's clock:
    /// for printing, and for real-time precedence.
    pub called: u64,
    /// `None`: it never returned.
    pub returned: Option<u64>,
    /// `Some(i)`: not an operation but a give-up check. Operation `i`,
    /// blocked, was given up at this moment because every other thread
    /// had finished or was waiting too: nothing could ever wake it. The
    /// specification must agree that `i` waits here (no outcome), with
    /// `i` not placed before; otherwise a wake-up it should have had was
    /// lost. Placed like an operation (it must be), changing nothing.
    pub gave_up: Option<usize>,
}

/// The most operations one history may hold: the precedence and the
/// search's sets are bitsets of one `u128`.
pub const MAX_OPERATIONS: usize = 128;

/// A run's operations and the order among them that any linearization
/// must keep.
#[derive(Clone, Debug)]
pub struct History<S: Spec> {
    /// The specification's state before the first operation.
    pub initial: S,
    /// The operations; `before` and a linearization name them by index.
    pub ops: Vec<Operation<S>>,
    /// For each operation, the set of operations that must come before it.
    pub before: Vec<u128>,
    /// What `before` means, for the printed history (e.g. "real time",
    /// "happens-before").
    pub order: &'static str,
    /// Events that are no operation but order them (a spawn, a join, a
    /// hand-off), for the printed history: (clock, thread, text).
    pub marks: Vec<(u64, usize, String)>,
}

impl<S: Spec> History<S> {
    /// A history whose precedence is real time: `a` comes before `b` iff
    /// `a` returned before `b` was called.
    pub fn real_time(initial: S, ops: Vec<Operation<S>>) -> Self {
        let before = ops
            .iter()
            .map(|b| {
                ops.iter()
                    .enumerate()
                    .fold(0u128, |set, (i, a)| match a.returned {
                        Some(returned) if returned < b.called => set | 1 << i,
                        _ => set,
                    })
            })
            .collect();
        Self::with_order(initial, ops, before, "real time")
    }

    /// A history with a precedence given operation by operation (e.g.
    /// happens-before, from vector clocks).
    pub fn with_order(
        initial: S,
        ops: Vec<Operation<S>>,
        before: Vec<u128>,
        order: &'static str,
    ) -> Self {
        assert!(
            ops.len() <= MAX_OPERATIONS,
            "a history of {} operations: at most {MAX_OPERATIONS} are checked",
            ops.len()
        );
        assert_eq!(before.len(), ops.len());
        for (i, set) in before.iter().enumerate() {
            assert_eq!(set & (1 << i), 0, "operation {i} precedes itself");
            assert!(
                (0..ops.len()).all(|j| set & (1 << j) == 0 || ops[j].returned.is_some()),
                "operation {i} comes after one that never returned"
            );
        }
        History {
            initial,
            ops,
            before,
            order,
            marks: Vec::new(),
        }
    }

    /// The operations in `indices`, with their precedence among
    /// themselves.
    fn part(&self, indices: &[usize]) -> History<S> {
        let ops = indices
            .iter()
            .map(|&i| {
                let mut op = self.ops[i].clone();
                // A give-up check names its operation by index: renumbered.
                op.gave_up = op.gave_up.map(|blocked| {
                    indices
                        .iter()
                        .position(|&j| j == blocked)
                        .expect("a partition keeps a give-up check with its operation")
                });
                op
            })
            .collect();
        let before = indices
            .iter()
            .map(|&b| {
                indices.iter().enumerate().fold(0u128, |set, (new, &a)| {
                    if self.before[b] & (1 << a) != 0 {
                        set | 1 << new
                    } else {
                        set
                    }
                })
            })
            .collect();
        History {
            initial: self.initial.clone(),
            ops,
            before,
            order: self.order,
            marks: self.marks.clone(),
        }
    }
}

impl<S: Spec> History<S> {
    /// Whether operations `a` and `b` overlapped: neither comes before the
    /// other in the history's order.
    pub fn overlapped(&self, a: usize, b: usize) -> bool {
        a != b && self.before[a] & (1 << b) == 0 && self.before[b] & (1 << a) == 0
    }

    /// The states operation `i` may leave, returning `ret` from `state`:
    /// the specification's, less those whose reason (an overlapping
    /// operation) the history does not hold.
    fn allowed_after(&self, i: usize, state: &S, ret: &S::Ret) -> Vec<S> {
        let op = &self.ops[i].op;
        state
            .after(op, ret)
            .into_iter()
            .filter(|next| self.reason_holds(i, state, ret, next))
            .collect()
    }

    /// The states operation `i`, which never returned, may leave from
    /// `state`: the specification's, less those that only an outcome
    /// whose reason the history does not hold leaves (an unreturned
    /// operation overlaps every operation that did not return before its
    /// call, so its reason may come late).
    fn allowed_unreturned(&self, i: usize, state: &S) -> Vec<S> {
        let op = &self.ops[i].op;
        let unreturned = state.unreturned(op);
        // Most specifications' unreturned operations take no effect: no
        // outcome to condition, and none computed.
        if unreturned.is_empty() {
            return unreturned;
        }
        let outcomes = state.outcomes(op);
        unreturned
            .into_iter()
            .filter(|next| {
                let mut leaving = outcomes.iter().filter(|(_, s)| s == next).peekable();
                leaving.peek().is_none()
                    || leaving.any(|(ret, s)| self.reason_holds(i, state, ret, s))
            })
            .collect()
    }

    /// Whether operation `i`'s outcome `ret`, leaving `next` from `state`,
    /// is allowed by the state alone or has its reason in the history.
    fn reason_holds(&self, i: usize, state: &S, ret: &S::Ret, next: &S) -> bool {
        let op = &self.ops[i].op;
        state.needs_overlap(op, ret, next).map_or(true, |why| {
            (0..self.ops.len()).any(|j| {
                self.ops[j].gave_up.is_none()
                    && self.overlapped(i, j)
                    && (why.by)(&self.ops[j].op, self.ops[j].ret.as_ref())
            })
        })
    }
}

/// A linearization: the operations in the order found, by index, with the
/// pending ones that were placed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Linearization(pub Vec<usize>);

/// Why a history is not linearizable, with what it takes to see it.
#[derive(Clone)]
pub struct Failure<S: Spec> {
    /// The history that has no linearization.
    pub history: History<S>,
    /// The longest sequence of operations the search could place, in
    /// order, and the state it left.
    pub prefix: Vec<usize>,
    /// The specification's state after that prefix.
    pub state: S,
    /// The operations that were candidates after that prefix, none of
    /// which could be placed: each with the returns the specification
    /// allowed it there.
    pub stuck: Vec<(usize, Vec<S::Ret>)>,
}

/// Checks `history` against its specification.
pub fn check<S: Spec>(history: &History<S>) -> Result<Linearization, Box<Failure<S>>> {
    let views: Vec<(&S::Op, Option<&S::Ret>)> = history
        .ops
        .iter()
        .map(|o| (&o.op, o.ret.as_ref()))
        .collect();
    if let Some(parts) = history.initial.partition(&views) {
        debug_assert!(
            {
                let mut all: Vec<usize> = parts.iter().flatten().copied().collect();
                all.sort_unstable();
                all == (0..history.ops.len()).collect::<Vec<_>>()
            },
            "a partition must cover every operation once"
        );
        // A give-up check and its operation in different parts (the
        // specification partitioned by what each returned): check whole.
        let together = history.ops.iter().enumerate().all(|(i, o)| {
            o.gave_up.map_or(true, |blocked| {
                parts.iter().any(|p| p.contains(&i) && p.contains(&blocked))
            })
        });
        if parts.len() > 1 && together {
            let mut order = Vec::new();
            for indices in &parts {
                match search(&history.part(indices)) {
                    Ok(Linearization(found)) => order.extend(found.iter().map(|&i| indices[i])),
                    // Report the failing part alone: it is the smaller
                    // history that shows the problem.
                    Err(failure) => return Err(failure),
                }
            }
            return Ok(Linearization(order));
        }
    }
    search(history)
}

fn search<S: Spec>(history: &History<S>) -> Result<Linearization, Box<Failure<S>>> {
    let n = history.ops.len();
    let all: u128 = if n == MAX_OPERATIONS {
        u128::MAX
    } else {
        (1u128 << n) - 1
    };
    let must: u128 = history
        .ops
        .iter()
        .enumerate()
        .filter(|(_, o)| o.ret.is_some() || o.gave_up.is_some())
        .fold(0, |set, (i, _)| set | 1 << i);
    // Depth-first, with an explicit stack of frames: (placed, skipped,
    // state, path). `skipped` holds pending operations decided to be left
    // out on this branch (they are then never placed on it).
    struct Frame<S> {
        placed: u128,
        skipped: u128,
        state: S,
        path: Vec<usize>,
    }
    let mut seen: HashSet<(u128, u128, S)> = HashSet::new();
    let mut stack = vec![Frame {
        placed: 0,
        skipped: 0,
        state: history.initial.clone(),
        path: Vec::new(),
    }];
    let mut best: Option<(Vec<usize>, S, u128)> = None;
    while let Some(Frame {
        placed,
        skipped,
        state,
        path,
    }) = stack.pop()
    {
        if placed & must == must {
            return Ok(Linearization(path));
        }
        if !seen.insert((placed, skipped, state.clone())) {
            continue;
        }
        if best.as_ref().map_or(true, |(p, _, _)| path.len() > p.len()) {
            best = Some((path.clone(), state.clone(), placed | skipped));
        }
        let done = placed | skipped;
        let mut children = Vec::new();
        for i in 0..n {
            let bit = 1u128 << i;
            if done & bit != 0 || history.before[i] & !placed & all != 0 {
                continue;
            }
            let op = &history.ops[i];
            if let Some(blocked) = op.gave_up {
                let waits = placed & (1 << blocked) == 0
                    && state.outcomes(&history.ops[blocked].op).is_empty();
                if waits {
                    children.push((placed | bit, skipped, state.clone(), i));
                }
                continue;
            }
            match &op.ret {
                Some(ret) => {
                    for next in history.allowed_after(i, &state, ret) {
                        children.push((placed | bit, skipped, next, i));
                    }
                }
                None => {
                    for next in history.allowed_unreturned(i, &state) {
                        children.push((placed | bit, skipped, next, i));
                    }
                    // Or it never took effect.
                    children.push((placed, skipped | bit, state.clone(), usize::MAX));
                }
            }
        }
        // Pushed in reverse, so that the first candidate is tried first.
        for (placed, skipped, next, i) in children.into_iter().rev() {
            let mut path = path.clone();
            if i != usize::MAX {
                path.push(i);
            }
            stack.push(Frame {
                placed,
                skipped,
                state: next,
                path,
            });
        }
    }
    let (prefix, state, done) = best.expect("the initial state is always explored");
    let stuck = (0..n)
        .filter(|&i| done & (1 << i) == 0 && history.before[i] & !done & all == 0)
        .filter(|&i| history.ops[i].ret.is_some() || history.ops[i].gave_up.is_some())
        .map(|i| {
            let op = history.ops[i].gave_up.unwrap_or(i);
            // What it could return here, given what overlapped it.
            let allowed = state
                .outcomes(&history.ops[op].op)
                .into_iter()
                .map(|(ret, _)| ret)
                .filter(|ret| !history.allowed_after(op, &state, ret).is_empty())
                .collect();
            (i, allowed)
        })
        .collect();
    Err(Box::new(Failure {
        history: history.clone(),
        prefix,
        state,
        stuck,
    }))
}

impl<S: Spec> fmt::Display for Failure<S> {
    /// The history, one column per thread and one row per call or return
    /// in the recorder's order; then the longest linearizable prefix and
    /// the operations that could not come next.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let h = &self.history;
        writeln!(
            f,
            "not linearizable: {} operations on {} threads, ordered by {}",
            h.ops.len(),
            h.ops.iter().map(|o| o.thread).max().map_or(0, |t| t + 1),
            h.order
        )?;
        f.write_str(&render_columns(h, &self.prefix, &self.stuck))?;
        writeln!(f, "initial state: {:?}", h.initial)?;
        writeln!(
            f,
            "longest linearizable prefix ({} of {} operations):",
            self.prefix.len(),
            h.ops.len()
        )?;
        for (step, &i) in self.prefix.iter().enumerate() {
            let o = &h.ops[i];
            writeln!(
                f,
                "  {:>2}. [{i}] thread {}: {:?} -> {}",
                step + 1,
                o.thread,
                o.op,
                show_ret(&o.ret)
            )?;
        }
        writeln!(f, "state after it: {:?}", self.state)?;
        if self.stuck.is_empty() {
            writeln!(
                f,
                "no operation could come next: every one left waits for one not placed"
            )?;
        }
        for (i, allowed) in &self.stuck {
            let o = &h.ops[*i];
            let after: Vec<usize> = (0..h.ops.len())
                .filter(|&j| h.before[*i] & (1 << j) != 0)
                .collect();
            if let Some(blocked) = o.gave_up {
                writeln!(
                    f,
                    "could not place [{i}] thread {}: [{blocked}] {:?} given up as waiting for good \
                     (after {after:?}), but the specification lets it return {allowed:?}: a lost wake-up",
                    o.thread, o.op,
                )?;
                continue;
            }
            writeln!(
                f,
                "could not place [{i}] thread {}: {:?} -> {} (after {after:?}); the specification allows {}",
                o.thread,
                o.op,
                show_ret(&o.ret),
                if allowed.is_empty() {
                    "no return here (it would wait)".to_string()
                } else {
                    format!("{allowed:?}")
                }
            )?;
        }
        // Unreturned operations the specification would let take effect
        // here, but only with a reason the history does not hold.
        let done = self.prefix.iter().fold(0u128, |set, &i| set | 1 << i);
        for (i, o) in h.ops.iter().enumerate() {
            if o.ret.is_some() || o.gave_up.is_some() || done & (1 << i) != 0 {
                continue;
            }
            let refused: Vec<String> = self
                .state
                .outcomes(&o.op)
                .iter()
                .filter(|(ret, next)| !h.reason_holds(i, &self.state, ret, next))
                .filter_map(|(ret, next)| self.state.needs_overlap(&o.op, ret, next))
                .map(|why| why.what)
                .collect();
            if !refused.is_empty() {
                writeln!(
                    f,
                    "[{i}] thread {}: {:?} (never returned) could take effect here only beside {}: none overlapped it",
                    o.thread,
                    o.op,
                    refused.join(" or ")
                )?;
            }
        }
        Ok(())
    }
}

impl<S: Spec> Debug for Failure<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

fn show_ret<R: Debug>(ret: &Option<R>) -> String {
    match ret {
        Some(ret) => format!("{ret:?}"),
        None => "(never returned)".to_string(),
    }
}

/// The history as a table: a row per call or return, in clock order, the
/// operation's text in its thread's column. Operations of the prefix are
/// marked with their place in it, the stuck ones with `!!`.
fn render_columns<S: Spec>(
    h: &History<S>,
    prefix: &[usize],
    stuck: &[(usize, Vec<S::Ret>)],
) -> String {
    let threads = h
        .ops
        .iter()
        .map(|o| o.thread)
        .chain(h.marks.iter().map(|m| m.1))
        .max()
        .map_or(0, |t| t + 1);
    let place: HashMap<usize, usize> = prefix
        .iter()
        .enumerate()
        .map(|(k, &i)| (i, k + 1))
        .collect();
    let mut rows: Vec<(u64, usize, String)> = Vec::new();
    for (i, o) in h.ops.iter().enumerate() {
        let mark = if let Some(k) = place.get(&i) {
            format!("#{k}")
        } else if stuck.iter().any(|(s, _)| *s == i) {
            "!!".to_string()
        } else {
            "  ".to_string()
        };
        if let Some(blocked) = o.gave_up {
            rows.push((
                o.called,
                o.thread,
                format!("{mark} [{i}] gave [{blocked}] up"),
            ));
            continue;
        }
        rows.push((o.called, o.thread, format!("{mark} [{i}] {:?}", o.op)));
        match o.returned {
            Some(at) => rows.push((at, o.thread, format!("    [{i}] -> {}", show_ret(&o.ret)))),
            None => rows.push((u64::MAX, o.thread, format!("    [{i}] (never returned)"))),
        }
    }
    for (at, thread, text) in &h.marks {
        rows.push((*at, *thread, format!("   ({text})")));
    }
    rows.sort_by_key(|&(at, thread, _)| (at, thread));
    let width = rows
        .iter()
        .map(|(_, _, text)| text.chars().count())
        .max()
        .unwrap_or(0)
        .clamp(12, 48);
    let cell = |text: &str| -> String {
        let mut text: String = text.chars().take(width).collect();
        while text.chars().count() < width {
            text.push(' ');
        }
        text
    };
    let mut out = String::new();
    let _ = write!(out, "{:>6} |", "clock");
    for t in 0..threads {
        let _ = write!(out, " {} |", cell(&format!("thread {t}")));
    }
    out.push('\n');
    for (at, thread, text) in rows {
        let clock = if at == u64::MAX {
            "end".to_string()
        } else {
            at.to_string()
        };
        let _ = write!(out, "{clock:>6} |");
        for t in 0..threads {
            let _ = write!(out, " {} |", cell(if t == thread { &text } else { "" }));
        }
        out.push('\n');
    }
    out
}
