//! The runtime's sequential specification (`src/runtime/`), as its users
//! see it: tasks through their `JoinHandle`s, tokio's contract as a state
//! machine. The models' histories are checked against it
//! (`models/runtime.rs`); the runtime's internal components (the task
//! state word, the idle/sleep handshake) are specified where they are
//! checked (`specs/task_state.rs`, `specs/idle.rs`, ...).
//!
//! State: each task's stage. A spawned task is running until it finishes
//! with what its future gives (an output or a panic) or, once aborted,
//! cancelled. The finishing is an operation of the history, `Finish`,
//! recorded by the task's own future (`FinishRecorded`, at the end of
//! this file): the outcome it reached, called at the last moment
//! the runtime could still have ended the task another way (the end of
//! the poll before the final one, or the spawn; for a cancellation, the
//! dropping of the future), and never returned (the completion that
//! makes it visible is the runtime's, after the future's code). So every
//! other operation's answer is checked against where the task really was:
//! `is_finished` answers true only after the final poll began, and a join
//! gives the outcome the future reached.
//!
//! Nondeterministic only where tokio is, and only with its reason in the
//! history (L-6): a task aborted while its final poll is under way may
//! still complete with its output (tokio's documented race: "awaiting a
//! cancelled task might complete as usual if the task was already
//! completed at the time it was cancelled"); the abort must then overlap
//! the `Finish`, that is, not have returned before the final poll's window
//! began. An abort that returned before it cancels the task.
//!
//! Real-time promises this checks: `is_finished` never goes back to false
//! and is true once a join returned; an abort that began after
//! `is_finished` answered true (or after the task's join returned)
//! changes nothing; a task never aborted is never `Cancelled`, and
//! one whose future returns is never reported as panicked.
//! Blocking: `Join` returns only once its task finished. An operation that
//! never returned took no effect (a join) or its effect (an abort).
//! A runtime dropped with tasks unfinished cancels them; the
//! models record no `Finish` for those, as no operation follows.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use crate::harness::linearizability::{Overlap, Spec};
use crate::harness::recorder::ThreadRecorder;
use crate::harness::Flag;
use modelsync::runtime::JoinError;

/// What a task's future does when it is polled to the end.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Body {
    /// Returns the item `item`.
    Returns(usize),
    Panics,
}

/// What a task finished with: what its `JoinHandle` gives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Outcome {
    Output(usize),
    Panicked,
    Cancelled,
}

impl Outcome {
    /// What a join's `result` says; `output` names the item an output is.
    pub fn of<T>(result: &Result<T, JoinError>, output: impl Fn(&T) -> usize) -> Self {
        match result {
            Ok(value) => Outcome::Output(output(value)),
            Err(e) if e.is_cancelled() => Outcome::Cancelled,
            Err(_) => Outcome::Panicked,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Stage {
    /// Spawned, not finished; `aborted` once an abort returned.
    Running { body: Body, aborted: bool },
    Finished(Outcome),
}

/// The tasks, by the index `Spawn` gave them (a scenario's own numbering).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Runtime {
    pub tasks: Vec<Option<Stage>>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Op {
    /// `spawn` of task `task`, whose future does `body`.
    Spawn(usize, Body),
    /// `JoinHandle::abort`.
    Abort(usize),
    /// `JoinHandle::is_finished`.
    IsFinished(usize),
    /// The `JoinHandle` awaited (or `block_on`): waits for the task.
    Join(usize),
    /// Task `task`'s future ended with `outcome`: its final poll returned
    /// (or panicked), or it was dropped unfinished (`Cancelled`).
    /// Recorded by the future itself, never returned (see the module
    /// documentation).
    Finish(usize, Outcome),
}

#[derive(Clone, Debug, PartialEq)]
pub enum Ret {
    Unit,
    Bool(bool),
    Joined(Outcome),
}

impl Op {
    /// The task the operation names.
    pub fn task(&self) -> usize {
        match *self {
            Op::Spawn(task, _)
            | Op::Abort(task)
            | Op::IsFinished(task)
            | Op::Join(task)
            | Op::Finish(task, _) => task,
        }
    }
}

impl Body {
    /// What a poll to the end gives.
    fn outcome(self) -> Outcome {
        match self {
            Body::Returns(item) => Outcome::Output(item),
            Body::Panics => Outcome::Panicked,
        }
    }
}

impl Runtime {
    fn stage(&self, task: usize) -> Option<Stage> {
        self.tasks.get(task).copied().flatten()
    }

    fn with(&self, task: usize, stage: Stage) -> Self {
        let mut next = self.clone();
        if next.tasks.len() <= task {
            next.tasks.resize(task + 1, None);
        }
        next.tasks[task] = Some(stage);
        next
    }
}

impl Spec for Runtime {
    type Op = Op;
    type Ret = Ret;

    fn outcomes(&self, op: &Op) -> Vec<(Ret, Self)> {
        let task = op.task();
        let stage = self.stage(task);
        if let Op::Spawn(_, body) = *op {
            assert!(stage.is_none(), "task {task} spawned twice");
            let running = Stage::Running {
                body,
                aborted: false,
            };
            return vec![(Ret::Unit, self.with(task, running))];
        }
        // A task's future records its `Finish` from the spawn on, and the
        // spawn may linearize after that call: nothing before it.
        let Some(stage) = stage else {
            return Vec::new();
        };
        match (op, stage) {
            (Op::Spawn(..), _) => unreachable!("handled above"),
            (Op::Abort(_), Stage::Running { body, .. }) => {
                let aborted = Stage::Running {
                    body,
                    aborted: true,
                };
                vec![(Ret::Unit, self.with(task, aborted))]
            }
            (Op::Abort(_), Stage::Finished(_)) => vec![(Ret::Unit, self.clone())],
            (Op::IsFinished(_), stage) => {
                let finished = matches!(stage, Stage::Finished(_));
                vec![(Ret::Bool(finished), self.clone())]
            }
            (Op::Join(_), Stage::Finished(outcome)) => vec![(Ret::Joined(outcome), self.clone())],
            (Op::Join(_), Stage::Running { .. }) => Vec::new(), // waits
            (&Op::Finish(_, outcome), Stage::Running { body, aborted }) => {
                // Cancelled only once aborted; what the body gives always
                // (once aborted, only with the abort's overlap: below).
                let allowed = if outcome == Outcome::Cancelled {
                    aborted
                } else {
                    outcome == body.outcome()
                };
                if allowed {
                    vec![(Ret::Unit, self.with(task, Stage::Finished(outcome)))]
                } else {
                    Vec::new()
                }
            }
            (Op::Finish(..), Stage::Finished(_)) => Vec::new(), // finishes once
        }
    }

    /// An aborted task that still ends with what its future gives: the
    /// abort came while the final poll was under way (tokio's race), so
    /// an abort of the task overlapped its `Finish`.
    fn needs_overlap(&self, op: &Op, _: &Ret, _: &Self) -> Option<Overlap<Op, Ret>> {
        let Op::Finish(task, outcome) = *op else {
            return None;
        };
        let aborted = matches!(self.stage(task), Some(Stage::Running { aborted: true, .. }));
        (aborted && outcome != Outcome::Cancelled).then(|| {
            Overlap::new(
                format!("an abort of task {task} during its final poll"),
                move |other, _| *other == Op::Abort(task),
            )
        })
    }

    /// Tasks are independent objects: each operation names one task, so
    /// the history is checked task by task (Herlihy and Wing's locality).
    fn partition(&self, ops: &[(&Op, Option<&Ret>)]) -> Option<Vec<Vec<usize>>> {
        let mut parts: Vec<Vec<usize>> = Vec::new();
        for (i, (op, _)) in ops.iter().enumerate() {
            let task = op.task();
            if parts.len() <= task {
                parts.resize(task + 1, Vec::new());
            }
            parts[task].push(i);
        }
        parts.retain(|part| !part.is_empty());
        Some(parts)
    }

    /// A join that never returned took nothing; an abort that never
    /// returned may have marked its task (an abort cannot block, so this
    /// is only a cancelled scenario's); a `Finish` (never returned) took
    /// its effect.
    fn unreturned(&self, op: &Op) -> Vec<Self> {
        match op {
            Op::Join(_) | Op::IsFinished(_) => Vec::new(),
            Op::Spawn(..) | Op::Abort(_) | Op::Finish(..) => {
                self.outcomes(op).into_iter().map(|(_, s)| s).collect()
            }
        }
    }
}

// ---------------------------------------------------------------------
// How a history records `Finish`.

/// Task `task`'s future as the history sees it: records `Op::Finish`
/// when the future ends. The outcome's call is placed where the final
/// poll's window begins, the last moment the runtime could still have
/// ended the task another way:
///
/// - under loom and shuttle, the poll's first instruction. The worker's
///   transition to RUNNING (the read-modify-write that decides between
///   polling and cancelling) and the future's first instruction are one
///   step of the schedule: no atomic access, so no scheduling point, lies
///   between them (`src/runtime/task.rs`, `poll`), and an abort cannot
///   land in between. A runtime change that put one there would show as
///   a false alarm in `runtime::abort_racing_wake_of_a_real_task`, never
///   as a bug missed;
/// - on real threads, where an abort can land between that transition
///   and the future's code, the end of the poll before (or the spawn).
///
/// A cancellation's call is the dropping of the future, which the
/// runtime does before it completes the task. Recorded on `column`, a
/// column of the workers' own (they are no thread of the scenario:
/// nothing happens-before their records but what real time says, and a
/// `Finish` never returns, so it orders nothing). `output` names the item
/// an output is. Under shutdown (`stopped` set before the runtime is
/// dropped) a dropped future records nothing: no operation follows.
pub struct FinishRecorded<F: Future> {
    future: Pin<Box<F>>,
    rec: ThreadRecorder<Runtime>,
    task: usize,
    output: fn(&F::Output) -> usize,
    /// Where the final poll's window begins if this poll, or the next,
    /// is the last (see above).
    quiet: u64,
    finished: bool,
    stopped: Flag,
}

impl<F: Future> FinishRecorded<F> {
    pub fn new(
        future: F,
        rec: &ThreadRecorder<Runtime>,
        column: usize,
        task: usize,
        output: fn(&F::Output) -> usize,
        stopped: &Flag,
    ) -> Self {
        let rec = rec.column(column);
        FinishRecorded {
            future: Box::pin(future),
            quiet: rec.now(),
            rec,
            task,
            output,
            finished: false,
            stopped: stopped.clone(),
        }
    }

    fn finish(&mut self, outcome: Outcome, at: Option<u64>) {
        self.finished = true;
        let op = Op::Finish(self.task, outcome);
        let call = match at {
            Some(at) => self.rec.call_at(op, at),
            None => self.rec.call(op),
        };
        self.rec.abandoned(call);
    }
}

impl<F: Future> Future for FinishRecorded<F> {
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = &mut *self;
        if cfg!(any(loom, shuttle)) {
            // One step with the transition to RUNNING (see above).
            this.quiet = this.rec.now();
        }
        // A panic in the future's poll ends the task as panicked; the
        // runtime catches it as it would have.
        let polled = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            this.future.as_mut().poll(cx)
        }));
        let polled = polled.unwrap_or_else(|payload| {
            this.finish(Outcome::Panicked, Some(this.quiet));
            std::panic::resume_unwind(payload)
        });
        match polled {
            Poll::Ready(value) => {
                let outcome = Outcome::Output((this.output)(&value));
                this.finish(outcome, Some(this.quiet));
                Poll::Ready(value)
            }
            Poll::Pending => {
                // The next poll's window, on real threads.
                this.quiet = this.rec.now();
                Poll::Pending
            }
        }
    }
}

impl<F: Future> Drop for FinishRecorded<F> {
    fn drop(&mut self) {
        if !self.finished && !self.stopped.get() {
            self.finish(Outcome::Cancelled, None);
        }
    }
}

