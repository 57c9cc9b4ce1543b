//! A task: one allocation holding the header (state word, vtable, the
//! runtime it belongs to), the future or its output, and the trailer (the
//! `JoinHandle`'s waker). The type-erased parts of the runtime hold a
//! `RawTask` (a pointer to the header) and reach the typed code through the
//! vtable; the state word (`state.rs`) decides which party may touch which
//! part, and the comments at each access name the rule.
//!
//! Ownership rules, each relied on below:
//! 1. The stage (future or output) belongs to whoever set RUNNING until it
//!    clears RUNNING or sets COMPLETE.
//! 2. After COMPLETE, the output belongs to the `JoinHandle` while
//!    JOIN_INTEREST is set, else to the completer.
//! 3. The join waker belongs to the `JoinHandle` while JOIN_WAKER is unset,
//!    to the runtime while it is set.
//! 4. Every `RawTask` copy that outlives a call holds a reference; the last
//!    one frees the allocation.

use std::any::Any;
use std::fmt;
use std::future::Future;
use std::marker::PhantomData;
use std::mem::ManuallyDrop;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::ptr::NonNull;
use std::task::{Context, Poll, RawWaker, RawWakerVTable, Waker};

use super::live::Listed;
use super::state::{State, ToIdle, ToNotified, ToRunning};
use super::worker::{self, Shared};
use crate::sync::{Arc, UnsafeCell};

pub(super) struct Header {
    pub(super) state: State,
    vtable: &'static Vtable,
    /// The runtime the task is scheduled on; kept alive by the task so that
    /// a waker that outlives the runtime is safe to wake.
    pub(super) shared: Arc<Shared>,
    /// The task's index in its shard of the live-task list; accessed only
    /// under that shard's lock.
    pub(super) owned_slot: UnsafeCell<usize>,
}

/// The typed allocation; the header first, so that a pointer to the cell
/// is a pointer to its header.
#[repr(C)]
struct Cell<F: Future> {
    header: Header,
    stage: UnsafeCell<Stage<F>>,
    join_waker: UnsafeCell<Option<Waker>>,
}

enum Stage<F: Future> {
    Running(F),
    Finished(Result<F::Output, JoinError>),
    Consumed,
}

struct Vtable {
    poll: unsafe fn(NonNull<Header>),
    dealloc: unsafe fn(NonNull<Header>),
    try_read_output: unsafe fn(NonNull<Header>, *mut (), &Waker),
    drop_join_handle: unsafe fn(NonNull<Header>),
    shutdown: unsafe fn(NonNull<Header>),
}

/// A pointer to a task's header. Copying it does not take a reference:
/// the code that copies it says whose reference the copy uses.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) struct RawTask(NonNull<Header>);

// SAFETY: a task is shared between threads by design; every access to its
// parts is ordered by the state word (rules 1-4 above), and the future and
// output are `Send` (required by `spawn`).
unsafe impl Send for RawTask {}
// SAFETY: as for `Send`.
unsafe impl Sync for RawTask {}

impl Listed for RawTask {
    fn shard_key(&self) -> usize {
        // Allocations are aligned: the low bits say nothing.
        self.addr() >> 4
    }

    fn slot(&self) -> &UnsafeCell<usize> {
        &self.header().owned_slot
    }
}

impl RawTask {
    /// Allocates a task for `future` on `shared`, with the three
    /// references of `State::new` (queue, `JoinHandle`, live-task list).
    pub(super) fn new<F>(future: F, shared: Arc<Shared>) -> RawTask
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        let cell = Box::new(Cell {
            header: Header {
                state: State::new(),
                vtable: vtable::<F>(),
                shared,
                owned_slot: UnsafeCell::new(usize::MAX),
            },
            stage: UnsafeCell::new(Stage::Running(future)),
            join_waker: UnsafeCell::new(None),
        });
        RawTask(NonNull::from(Box::leak(cell)).cast())
    }

    pub(super) fn header(&self) -> &Header {
        // SAFETY: the caller holds a reference (rule 4), so the allocation
        // is live; the header is never mutated after creation except
        // through its atomics and cells.
        unsafe { self.0.as_ref() }
    }

    /// An address for hashing the task to a shard.
    pub(super) fn addr(&self) -> usize {
        self.0.as_ptr() as usize
    }

    /// Shuts the task down, using the caller's live-task-list reference.
    pub(super) fn shutdown(self) {
        // SAFETY: the caller passes its reference on (rule 4).
        unsafe { (self.header().vtable.shutdown)(self.0) }
    }

    /// Drops one reference.
    pub(super) fn drop_reference(self) {
        if self.header().state.ref_dec() {
            // SAFETY: that was the last reference (rule 4).
            unsafe { (self.header().vtable.dealloc)(self.0) }
        }
    }
}

/// A queued task: owns the queue's reference.
pub(super) struct Notified(RawTask);

impl Notified {
    /// # Safety
    /// `raw`'s reference, which the caller gives up, is the queue's: the
    /// task's NOTIFIED bit is set on its behalf.
    pub(super) unsafe fn from_raw(raw: RawTask) -> Notified {
        Notified(raw)
    }

    /// Polls (or cancels) the task, consuming the queue's reference.
    pub(super) fn run(self) {
        let raw = ManuallyDrop::new(self).0;
        // SAFETY: the reference passes to the poll (rule 4).
        unsafe { (raw.header().vtable.poll)(raw.0) }
    }
}

impl Drop for Notified {
    fn drop(&mut self) {
        self.0.drop_reference();
    }
}

impl fmt::Debug for Notified {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Notified({:?})", self.0.header().state)
    }
}

fn vtable<F>() -> &'static Vtable
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    &Vtable {
        poll: poll::<F>,
        dealloc: dealloc::<F>,
        try_read_output: try_read_output::<F>,
        drop_join_handle: drop_join_handle::<F>,
        shutdown: shutdown::<F>,
    }
}

/// # Safety (every function below)
/// `ptr` is the header of a live `Cell<F>` and the caller holds the
/// reference the function's comment names.
unsafe fn cell<'a, F: Future>(ptr: NonNull<Header>) -> &'a Cell<F> {
    // SAFETY: the header is the first field of a `#[repr(C)]` `Cell<F>`,
    // allocated by `RawTask::new::<F>`; the caller keeps it alive.
    unsafe { ptr.cast::<Cell<F>>().as_ref() }
}

/// The worker's entry: consumes the queue's reference.
unsafe fn poll<F: Future>(ptr: NonNull<Header>) {
    // SAFETY: the queue's reference keeps the cell alive.
    let cell = unsafe { cell::<F>(ptr) };
    let state = &cell.header.state;
    match state.transition_to_running() {
        ToRunning::Success => {}
        ToRunning::Cancelled => return cancel_and_complete::<F>(ptr),
    }
    // The poll borrows the queue's reference; a clone takes its own.
    // SAFETY: the waker vtable's contract: `ptr` is a task header with a
    // reference held for as long as this waker lives (the poll's).
    let waker = ManuallyDrop::new(unsafe { Waker::from_raw(raw_waker(ptr)) });
    let mut cx = Context::from_waker(&waker);
    worker::polling_with(Some(&waker));
    let polled = catch_unwind(AssertUnwindSafe(|| {
        // As tokio's: a future whose poll panics is dropped while that
        // panic unwinds, so its `Drop` sees `std::thread::panicking()` (a
        // panic in that drop then aborts the process, as it does in
        // tokio: Rust cannot unwind two panics at once).
        let drop_on_unwind = DropStageOnUnwind(cell);
        let polled = cell.stage.with_mut(|stage| {
            // SAFETY: RUNNING is ours (rule 1): no other access to the
            // stage; the future is never moved out while Running.
            match unsafe { &mut *stage } {
                Stage::Running(future) => unsafe { Pin::new_unchecked(future) }.poll(&mut cx),
                _ => unreachable!("a RUNNING task's stage holds its future"),
            }
        });
        std::mem::forget(drop_on_unwind);
        polled
    }));
    worker::polling_with(None);
    let output = match polled {
        Ok(Poll::Pending) => match state.transition_to_idle() {
            ToIdle::Ok => return,
            ToIdle::OkNotified => {
                // SAFETY: the poll's reference becomes the queue's; the
                // state word kept NOTIFIED for it.
                let notified = unsafe { Notified::from_raw(RawTask(ptr)) };
                return cell.header.shared.schedule(notified, true);
            }
            ToIdle::Cancelled => return cancel_and_complete::<F>(ptr),
        },
        Ok(Poll::Ready(output)) => Ok(output),
        Err(panic) => Err(JoinError::panic(panic)),
    };
    // The future is dropped before the output is stored; a panic in its
    // drop becomes the task's result.
    let output = match drop_stage(cell) {
        Ok(()) => output,
        Err(panic) => Err(JoinError::panic(panic)),
    };
    store_and_complete::<F>(ptr, output);
}

/// Drops the stage (the future) if dropped itself: during the unwinding
/// of a panic in the poll, which forgets it when the poll returns.
struct DropStageOnUnwind<'a, F: Future>(&'a Cell<F>);

impl<F: Future> Drop for DropStageOnUnwind<'_, F> {
    fn drop(&mut self) {
        // RUNNING is ours (rule 1), and the poll's access to the stage
        // ended with its unwinding. (A panic in the future's drop here is
        // a second panic during an unwinding: the process aborts.)
        let _ = drop_stage(self.0);
    }
}

/// Replaces the stage by `Consumed`, dropping what it held; a panic in
/// that drop is returned.
fn drop_stage<F: Future>(cell: &Cell<F>) -> Result<(), Box<dyn Any + Send>> {
    catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: the caller owns the stage (rule 1 or 2).
        cell.stage
            .with_mut(|stage| unsafe { *stage = Stage::Consumed })
    }))
}

/// The caller owns the future (RUNNING) and the queue's or shutdown's
/// reference: drops the future and completes as cancelled.
///
/// This and `store_and_complete` take the pointer, not a `&Cell`: they may
/// free the cell, and a reference argument would outlive it (Miri's
/// Stacked Borrows rejects freeing memory that a reference argument still
/// protects).
fn cancel_and_complete<F: Future>(ptr: NonNull<Header>) {
    // SAFETY: the caller's reference keeps the cell alive until the
    // completion below releases it.
    let cell = unsafe { cell::<F>(ptr) };
    let output = match drop_stage(cell) {
        Ok(()) => Err(JoinError::cancelled()),
        Err(panic) => Err(JoinError::panic(panic)),
    };
    store_and_complete::<F>(ptr, output);
}

fn store_and_complete<F: Future>(ptr: NonNull<Header>, output: Result<F::Output, JoinError>) {
    // SAFETY: the caller's reference keeps the cell alive until
    // `transition_to_terminal` below releases it; `cell` is not used after.
    let cell = unsafe { cell::<F>(ptr) };
    // SAFETY: RUNNING is ours (rule 1) and the stage is Consumed: storing
    // drops nothing.
    cell.stage
        .with_mut(|stage| unsafe { *stage = Stage::Finished(output) });
    let state = &cell.header.state;
    let snapshot = state.transition_to_complete();
    // User code (the output's drop, the join waker) may panic: the task
    // must still release its references.
    let _ = catch_unwind(AssertUnwindSafe(|| {
        if snapshot.is_join_interested() {
            if snapshot.has_join_waker() {
                // SAFETY: JOIN_WAKER is set, so the waker is the runtime's
                // (rule 3) until `unset_waker_after_complete`.
                cell.join_waker.with(|waker| match unsafe { &*waker } {
                    Some(waker) => waker.wake_by_ref(),
                    None => unreachable!("JOIN_WAKER is set with a waker"),
                });
                if !state.unset_waker_after_complete().is_join_interested() {
                    // The handle was dropped meanwhile and left the waker
                    // to us (it saw JOIN_WAKER set).
                    // SAFETY: rule 3; the handle no longer touches it.
                    cell.join_waker.with_mut(|waker| unsafe { *waker = None });
                }
            }
        } else {
            // Rule 2: nobody will read the output; the completer drops it.
            let _ = drop_stage(cell);
        }
    }));
    // The caller's reference, and the live-task list's if the task was
    // still listed (shutdown takes tasks out of the list first).
    let released = 1 + usize::from(cell.header.shared.remove_task(RawTask(ptr)));
    if state.transition_to_terminal(released) {
        // SAFETY: those were the last references.
        unsafe { dealloc::<F>(ptr) }
    }
}

/// Frees the task. Caller: the last reference.
unsafe fn dealloc<F: Future>(ptr: NonNull<Header>) {
    // SAFETY: the last reference (rule 4): nothing else can reach the
    // cell; it was allocated as a `Box<Cell<F>>`.
    drop(unsafe { Box::from_raw(ptr.cast::<Cell<F>>().as_ptr()) });
}

/// `JoinHandle::poll`. Caller: the handle's reference. Writes
/// `Poll::Ready(output)` to `dst` (a `Poll<Result<F::Output, JoinError>>`)
/// if the task completed; otherwise registers `waker`.
unsafe fn try_read_output<F: Future>(ptr: NonNull<Header>, dst: *mut (), waker: &Waker) {
    // SAFETY: the handle's reference keeps the cell alive.
    let cell = unsafe { cell::<F>(ptr) };
    if !can_read_output(cell, waker) {
        return;
    }
    // SAFETY: COMPLETE with JOIN_INTEREST: the output is the handle's
    // (rule 2), and `can_read_output` acquired the completer's writes.
    let stage = cell
        .stage
        .with_mut(|stage| unsafe { std::mem::replace(&mut *stage, Stage::Consumed) });
    let output = match stage {
        Stage::Finished(output) => output,
        _ => panic!("JoinHandle polled after completion"),
    };
    // SAFETY: the caller passes a valid, initialised `Poll` of this type.
    unsafe { *(dst as *mut Poll<Result<F::Output, JoinError>>) = Poll::Ready(output) };
}

/// True if the output can be read; otherwise the join waker is `waker`.
fn can_read_output<F: Future>(cell: &Cell<F>, waker: &Waker) -> bool {
    let state = &cell.header.state;
    let snapshot = state.load();
    if snapshot.is_complete() {
        return true;
    }
    if snapshot.has_join_waker() {
        // SAFETY: the runtime owns the waker now but only reads it (it
        // wakes by reference) until COMPLETE; reading here is shared.
        let same = cell.join_waker.with(|stored| {
            unsafe { &*stored }
                .as_ref()
                .is_some_and(|w| w.will_wake(waker))
        });
        if same {
            return false;
        }
        // Take the waker back to replace it; fails if the task completed.
        if state.unset_join_waker().is_err() {
            return true;
        }
    }
    // SAFETY: JOIN_WAKER is unset: the waker is the handle's (rule 3).
    cell.join_waker
        .with_mut(|stored| unsafe { *stored = Some(waker.clone()) });
    if state.set_join_waker().is_err() {
        // Completed before the waker was published: it stays ours.
        // SAFETY: rule 3, JOIN_WAKER still unset.
        cell.join_waker.with_mut(|stored| unsafe { *stored = None });
        return true;
    }
    false
}

/// `JoinHandle::drop`. Caller: the handle's reference, which this drops.
unsafe fn drop_join_handle<F: Future>(ptr: NonNull<Header>) {
    // SAFETY: the handle's reference keeps the cell alive.
    let cell = unsafe { cell::<F>(ptr) };
    let dropped = cell.header.state.transition_to_join_handle_dropped();
    let result = catch_unwind(AssertUnwindSafe(|| {
        if dropped.drop_output {
            // Rule 2: COMPLETE seen with our interest: the output is ours.
            let _ = drop_stage(cell);
        }
        if dropped.drop_waker {
            // SAFETY: rule 3: JOIN_WAKER unset, the waker is ours.
            cell.join_waker.with_mut(|waker| unsafe { *waker = None });
        }
    }));
    RawTask(ptr).drop_reference();
    if let Err(panic) = result {
        resume_unwind(panic);
    }
}

/// Shutdown, of a task taken out of the live-task list, with the list's
/// reference, which the completion uses: drops the future of an idle task
/// (`State::transition_to_shutdown` says why it is idle).
unsafe fn shutdown<F: Future>(ptr: NonNull<Header>) {
    // SAFETY: the list's reference keeps the cell alive.
    let cell = unsafe { cell::<F>(ptr) };
    cell.header.state.transition_to_shutdown();
    cancel_and_complete::<F>(ptr);
}

// The waker: a task pointer with one reference per waker.

fn raw_waker(ptr: NonNull<Header>) -> RawWaker {
    RawWaker::new(ptr.as_ptr() as *const (), &WAKER_VTABLE)
}

static WAKER_VTABLE: RawWakerVTable =
    RawWakerVTable::new(waker_clone, waker_wake, waker_wake_by_ref, waker_drop);

/// # Safety (the four waker functions)
/// `data` is a task header and the waker owns one reference.
unsafe fn task_of(data: *const ()) -> RawTask {
    // SAFETY: wakers are made only by `raw_waker`, from a non-null header.
    RawTask(unsafe { NonNull::new_unchecked(data as *mut Header) })
}

unsafe fn waker_clone(data: *const ()) -> RawWaker {
    // SAFETY: the waker's contract.
    let task = unsafe { task_of(data) };
    task.header().state.ref_inc();
    raw_waker(task.0)
}

unsafe fn waker_wake(data: *const ()) {
    // SAFETY: the waker's contract; this consumes its reference.
    let task = unsafe { task_of(data) };
    match task.header().state.transition_to_notified_by_val() {
        ToNotified::DoNothing => {}
        ToNotified::Submit => {
            // The waker's reference becomes the queue's, so the task may be
            // run and freed before `schedule` returns; if the runtime is
            // being dropped, the task held the last handle to `Shared` but
            // one. This clone keeps `Shared` alive for the call.
            let shared = task.header().shared.clone();
            // SAFETY: the waker's reference is now the queue's.
            let notified = unsafe { Notified::from_raw(task) };
            shared.schedule(notified, false);
        }
        // SAFETY: the waker's reference was the last.
        ToNotified::Dealloc => unsafe { (task.header().vtable.dealloc)(task.0) },
    }
}

unsafe fn waker_wake_by_ref(data: *const ()) {
    // SAFETY: the waker's contract; its reference stays.
    let task = unsafe { task_of(data) };
    if task.header().state.transition_to_notified_by_ref() == ToNotified::Submit {
        // SAFETY: the transition took a new reference for the queue.
        let notified = unsafe { Notified::from_raw(task) };
        task.header().shared.schedule(notified, false);
    }
}

unsafe fn waker_drop(data: *const ()) {
    // SAFETY: the waker's contract; this drops its reference.
    unsafe { task_of(data) }.drop_reference();
}

/// An owned permission to await a spawned task's output.
///
/// Awaiting it returns the task's output, or a [`JoinError`] if the task
/// panicked or was cancelled ([`abort`](Self::abort), or the runtime shut
/// down). Dropping it detaches the task, which keeps running. Polling it
/// again after it returned `Ready` panics, as tokio's does.
pub struct JoinHandle<T> {
    raw: RawTask,
    _output: PhantomData<T>,
}

// SAFETY: the handle hands out `T` by value only, on the thread that polls
// it; `T: Send` lets the output cross from the worker to that thread.
unsafe impl<T: Send> Send for JoinHandle<T> {}
// SAFETY: `&JoinHandle` only reads the state word (`is_finished`) or
// requests cancellation (`abort`), both atomic; the output is reached only
// through `&mut` (poll).
unsafe impl<T: Send> Sync for JoinHandle<T> {}

impl<T> Unpin for JoinHandle<T> {}

// As tokio's: a panic that unwinds through `abort`, `is_finished` or a
// poll of the handle leaves the task's state word consistent (every
// change is one atomic transition), so the handle may be used after it.
impl<T> std::panic::UnwindSafe for JoinHandle<T> {}
impl<T> std::panic::RefUnwindSafe for JoinHandle<T> {}

impl<T> JoinHandle<T> {
    /// # Safety
    /// `raw` is a task whose output is `T`; its handle's reference passes
    /// to the `JoinHandle`.
    pub(super) unsafe fn new(raw: RawTask) -> Self {
        JoinHandle {
            raw,
            _output: PhantomData,
        }
    }

    /// Cancels the task: its future is dropped the next time a worker would
    /// poll it (at once if it is idle, after the current poll if it is
    /// running) and awaiting the handle returns a cancelled [`JoinError`].
    /// A task that already completed keeps its output. Idempotent.
    pub fn abort(&self) {
        if self.raw.header().state.transition_to_notified_and_cancel() {
            // SAFETY: the transition took a new reference for the queue.
            let notified = unsafe { Notified::from_raw(self.raw) };
            self.raw.header().shared.schedule(notified, false);
        }
    }

    /// Whether the task has completed (with output, panic or cancellation).
    pub fn is_finished(&self) -> bool {
        self.raw.header().state.load().is_complete()
    }
}

impl<T> Future for JoinHandle<T> {
    type Output = Result<T, JoinError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut output: Poll<Result<T, JoinError>> = Poll::Pending;
        // SAFETY: the handle's reference is held; `output` has the type the
        // task was created with (`JoinHandle<T>` is made only by spawn).
        unsafe {
            (self.raw.header().vtable.try_read_output)(
                self.raw.0,
                &mut output as *mut _ as *mut (),
                cx.waker(),
            )
        };
        output
    }
}

impl<T> Drop for JoinHandle<T> {
    fn drop(&mut self) {
        // SAFETY: the handle's reference passes to the call.
        unsafe { (self.raw.header().vtable.drop_join_handle)(self.raw.0) }
    }
}

impl<T> fmt::Debug for JoinHandle<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JoinHandle")
            .field("state", &self.raw.header().state)
            .finish()
    }
}

/// Why a task produced no output: it was cancelled, or it panicked.
pub struct JoinError {
    repr: Repr,
}

enum Repr {
    Cancelled,
    Panic(SyncPanic),
}

/// A panic payload made `Sync` by allowing no shared access to it.
struct SyncPanic(Box<dyn Any + Send + 'static>);

// SAFETY: the payload is reached by value (`into_panic`), or through `&`
// only by `panic_message`, which reads nothing but its type id and, once
// that proves the payload a `&'static str` or `String` (both `Sync`), the
// message; so sharing `&JoinError` shares no access to non-`Sync` data.
unsafe impl Sync for SyncPanic {}

impl JoinError {
    pub(super) fn cancelled() -> Self {
        JoinError {
            repr: Repr::Cancelled,
        }
    }

    pub(super) fn panic(payload: Box<dyn Any + Send + 'static>) -> Self {
        JoinError {
            repr: Repr::Panic(SyncPanic(payload)),
        }
    }

    /// The task was cancelled (aborted, or the runtime shut down).
    pub fn is_cancelled(&self) -> bool {
        matches!(self.repr, Repr::Cancelled)
    }

    /// The task panicked.
    pub fn is_panic(&self) -> bool {
        matches!(self.repr, Repr::Panic(_))
    }

    /// The panic's payload, to resume it with `std::panic::resume_unwind`.
    ///
    /// # Panics
    /// If the task was cancelled, not panicked (as tokio's), at the caller.
    #[track_caller]
    pub fn into_panic(self) -> Box<dyn Any + Send + 'static> {
        self.try_into_panic()
            .expect("`JoinError` reason is not a panic.")
    }

    /// The panic's payload, or the error itself if the task was cancelled.
    pub fn try_into_panic(self) -> Result<Box<dyn Any + Send + 'static>, JoinError> {
        match self.repr {
            Repr::Panic(SyncPanic(payload)) => Ok(payload),
            Repr::Cancelled => Err(self),
        }
    }

    fn panic_message(&self) -> Option<&str> {
        match &self.repr {
            // The one shared access to the payload: `type_id` reads only
            // the vtable, and the data is read only once it is known to be
            // a `&'static str` or a `String`, both `Sync`.
            Repr::Panic(SyncPanic(payload)) => payload
                .downcast_ref::<&'static str>()
                .copied()
                .or_else(|| payload.downcast_ref::<String>().map(String::as_str)),
            Repr::Cancelled => None,
        }
    }
}

impl fmt::Display for JoinError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.repr, self.panic_message()) {
            (Repr::Cancelled, _) => f.write_str("task was cancelled"),
            (Repr::Panic(_), Some(message)) => {
                write!(f, "task panicked with message {message:?}")
            }
            (Repr::Panic(_), None) => f.write_str("task panicked"),
        }
    }
}

impl fmt::Debug for JoinError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.repr, self.panic_message()) {
            (Repr::Cancelled, _) => f.write_str("JoinError::Cancelled"),
            (Repr::Panic(_), Some(message)) => write!(f, "JoinError::Panic({message:?}, ...)"),
            (Repr::Panic(_), None) => f.write_str("JoinError::Panic(...)"),
        }
    }
}

impl std::error::Error for JoinError {}

/// As tokio's: an error of kind `Other` saying whether the task was
/// cancelled or panicked (the panic's payload is dropped).
impl From<JoinError> for std::io::Error {
    fn from(error: JoinError) -> std::io::Error {
        std::io::Error::other(match error.repr {
            Repr::Cancelled => "task was cancelled",
            Repr::Panic(_) => "task panicked",
        })
    }
}
