//! The runtime's sequential specification (`src/runtime/`), as its users
//! see it: tasks through their `JoinHandle`s, tokio's contract as a state
//! machine. The models' histories are checked against it
//! (`models/runtime.rs`); the runtime's internal components (the task
//! state word, the idle/sleep handshake) are specified where they are
//! checked (`proptests/runtime.rs`'s reference models).
//!
//! State: each task's stage. A spawned task is running until it finishes
//! with what its future gives (an output or a panic, fixed when it is
//! spawned) or, once aborted, with either that or `Cancelled`: an abort
//! cancels a task between polls, while one under way when the abort came
//! may still complete and keep its output (tokio's documented race:
//! "awaiting a cancelled task might complete as usual if the task was
//! already completed at the time it was cancelled"). A task finishes on
//! its own, not by any call: every operation may be preceded by the
//! finishing of any running task (internal steps, taken before the
//! operation's linearization point). Tasks are independent, so a history
//! is checked task by task (`partition`).
//!
//! Real-time promises this checks: `is_finished` never goes back to
//! false and is true once a join returned; an abort that began
//! after `is_finished` answered true (or after the task's join returned)
//! changes nothing, so the output is kept; a task never aborted is
//! never `Cancelled`, and one whose future returns is never reported as
//! panicked. Nondeterministic only where tokio is: whether an
//! aborted task ends cancelled or completed. Blocking: `Join` returns only
//! once its task finished. An operation that never returned took no
//! effect but what a finishing task does on its own.

use crate::harness::linearizability::Spec;
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
}

#[derive(Clone, Debug, PartialEq)]
pub enum Ret {
    Unit,
    Bool(bool),
    Joined(Outcome),
}

impl Runtime {
    fn stage(&self, task: usize) -> Stage {
        self.tasks
            .get(task)
            .copied()
            .flatten()
            .unwrap_or_else(|| panic!("task {task} used before it was spawned"))
    }

    fn with(&self, task: usize, stage: Stage) -> Self {
        let mut next = self.clone();
        if next.tasks.len() <= task {
            next.tasks.resize(task + 1, None);
        }
        next.tasks[task] = Some(stage);
        next
    }

    /// Every state the running tasks may have reached on their own: each
    /// running task finished (as its body says, or cancelled if aborted)
    /// or not.
    fn settled(&self) -> Vec<Self> {
        let mut states = vec![self.clone()];
        for (task, stage) in self.tasks.iter().enumerate() {
            let Some(Stage::Running { body, aborted }) = *stage else {
                continue;
            };
            let mut ends = vec![match body {
                Body::Returns(item) => Outcome::Output(item),
                Body::Panics => Outcome::Panicked,
            }];
            if aborted {
                ends.push(Outcome::Cancelled);
            }
            let finished: Vec<Self> = states
                .iter()
                .flat_map(|s| ends.iter().map(move |&end| s.with(task, Stage::Finished(end))))
                .collect();
            states.extend(finished);
        }
        states
    }

    /// `op`'s outcomes in this very state (no task finishing first).
    fn outcomes_now(&self, op: &Op) -> Vec<(Ret, Self)> {
        match *op {
            Op::Spawn(task, body) => {
                assert!(
                    self.tasks.get(task).copied().flatten().is_none(),
                    "task {task} spawned twice"
                );
                let running = Stage::Running {
                    body,
                    aborted: false,
                };
                vec![(Ret::Unit, self.with(task, running))]
            }
            Op::Abort(task) => match self.stage(task) {
                Stage::Running { body, .. } => {
                    let aborted = Stage::Running {
                        body,
                        aborted: true,
                    };
                    vec![(Ret::Unit, self.with(task, aborted))]
                }
                Stage::Finished(_) => vec![(Ret::Unit, self.clone())],
            },
            Op::IsFinished(task) => {
                let finished = matches!(self.stage(task), Stage::Finished(_));
                vec![(Ret::Bool(finished), self.clone())]
            }
            Op::Join(task) => match self.stage(task) {
                Stage::Finished(outcome) => vec![(Ret::Joined(outcome), self.clone())],
                Stage::Running { .. } => Vec::new(), // waits
            },
        }
    }
}

impl Spec for Runtime {
    type Op = Op;
    type Ret = Ret;

    fn outcomes(&self, op: &Op) -> Vec<(Ret, Self)> {
        let mut found: Vec<(Ret, Self)> = Vec::new();
        for state in self.settled() {
            for outcome in state.outcomes_now(op) {
                if !found.contains(&outcome) {
                    found.push(outcome);
                }
            }
        }
        found
    }

    /// Tasks are independent objects: each operation names one task, so
    /// the history is checked task by task (Herlihy and Wing's locality),
    /// which also keeps `settled`'s states to one task's three.
    fn partition(&self, ops: &[(&Op, Option<&Ret>)]) -> Option<Vec<Vec<usize>>> {
        let mut parts: Vec<Vec<usize>> = Vec::new();
        for (i, (op, _)) in ops.iter().enumerate() {
            let task = match **op {
                Op::Spawn(task, _) | Op::Abort(task) | Op::IsFinished(task) | Op::Join(task) => task,
            };
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
    /// is only a cancelled scenario's). Tasks may finish either way.
    fn unreturned(&self, op: &Op) -> Vec<Self> {
        match op {
            Op::Join(_) | Op::IsFinished(_) => self.settled(),
            Op::Spawn(..) | Op::Abort(_) => {
                let mut states = self.settled();
                states.extend(self.outcomes(op).into_iter().map(|(_, s)| s));
                states
            }
        }
    }
}
