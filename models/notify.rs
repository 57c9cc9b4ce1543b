//! Models of `Notify` (`src/notify.rs`): tokio's nine loom models of its
//! Notify, with what they check made explicit (each waiter's completions
//! counted, what a notifier wrote read after the wait), plus what tokio's
//! do not cover: `notify_last`, `enable` then poll, a waker replaced when
//! the future moves to another task, FIFO order with three waiters, at most
//! one stored permit, a waiter dropped or registered while `notify_waiters`
//! runs, re-entrant and panicking wakers, and `OwnedNotified`.
//!
//! Written once for loom, shuttle and std stress (see `check/src/lib.rs`).
//! Futures are polled by hand with counting wakers, or driven by
//! `modelsync::block_on` (modelled in `models/block_on.rs`). Model builds
//! use a `notify_waiters` wake batch of 2, so three waiters cross a batch
//! boundary.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use crate::harness::recorder::{Recorder, ThreadRecorder};
use crate::harness::scenario::{self, Scenario, Small, Subject, Waiter};
use crate::harness::scope;
use crate::harness::{
    callback_waker, counting_waker, model, Callbacks, Flag, Handoff, Ledger, Reach, WakeCount,
};
use crate::specs::notify as spec;
use modelsync::notify::Notify;
use modelsync::sync::atomic::{AtomicBool, Ordering::*};
use modelsync::sync::{thread, Arc};
use proptest::strategy::BoxedStrategy;

/// Polls `future` once with `waker`; whether it is ready.
fn poll<F: Future>(future: Pin<&mut F>, waker: &Waker) -> bool {
    future.poll(&mut Context::from_waker(waker)).is_ready()
}

/// A history of one `Notify`'s operations, checked against
/// `specs/notify.rs` at the end of the execution; its main thread's end.
fn history() -> (Recorder<spec::Notify>, ThreadRecorder<spec::Notify>) {
    let history = Recorder::new(spec::Notify::default());
    let main = history.thread(0);
    (history, main)
}

/// `poll`, recorded as a poll of future `id` (the waker is the recording
/// thread's).
fn poll_recorded<F: Future>(
    rec: &ThreadRecorder<spec::Notify>,
    id: u64,
    future: Pin<&mut F>,
    waker: &Waker,
) -> bool {
    poll_with(rec, id, rec.thread_index(), future, waker)
}

/// `poll`, recorded as a poll of future `id` with the specification's
/// waker `waker_index` (a thread that polls with two wakers names them).
fn poll_with<F: Future>(
    rec: &ThreadRecorder<spec::Notify>,
    id: u64,
    waker_index: usize,
    future: Pin<&mut F>,
    waker: &Waker,
) -> bool {
    rec.op(
        spec::Op::Poll(id, waker_index),
        || poll(future, waker),
        |&ready| spec::Ret::Ready(ready),
    )
}

/// `count` new futures of `notify`, recorded as futures `0..count`.
fn created<'a>(
    rec: &ThreadRecorder<spec::Notify>,
    notify: &'a Notify,
    count: u64,
) -> Vec<Pin<Box<modelsync::notify::Notified<'a>>>> {
    (0..count).map(|id| create(rec, id, notify)).collect()
}

/// A new future of `notify`, recorded as future `id`.
fn create<'a>(
    rec: &ThreadRecorder<spec::Notify>,
    id: u64,
    notify: &'a Notify,
) -> Pin<Box<modelsync::notify::Notified<'a>>> {
    rec.op(spec::Op::Create(id), || Box::pin(notify.notified()), unit)
}

/// Future `id` dropped, recorded (a chosen waiter's drop passes its
/// notification on: N-4).
fn drop_recorded<F>(rec: &ThreadRecorder<spec::Notify>, id: u64, future: F) {
    rec.op(spec::Op::Drop(id), || drop(future), unit);
}

fn notify_one(rec: &ThreadRecorder<spec::Notify>, notify: &Notify) {
    rec.op(spec::Op::NotifyOne, || notify.notify_one(), unit);
}

fn notify_last(rec: &ThreadRecorder<spec::Notify>, notify: &Notify) {
    rec.op(spec::Op::NotifyLast, || notify.notify_last(), unit);
}

fn notify_waiters(rec: &ThreadRecorder<spec::Notify>, notify: &Notify) {
    rec.op(spec::Op::NotifyWaiters, || notify.notify_waiters(), unit);
}

fn unit<T>(_: &T) -> spec::Ret {
    spec::Ret::Unit
}

/// A future that counts its polls, so a model can tell whether
/// `block_on` had to wait, and records each as a poll of future `id` with
/// the thread's waker.
struct RecordedPolls<'r, F> {
    inner: Pin<Box<F>>,
    polls: usize,
    rec: &'r ThreadRecorder<spec::Notify>,
    id: u64,
}

impl<F: Future> Future for RecordedPolls<'_, F> {
    type Output = usize;
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<usize> {
        self.polls += 1;
        let this = &mut *self;
        let inner = this.inner.as_mut();
        let ready = this.rec.op(
            spec::Op::Poll(this.id, this.rec.thread_index()),
            || inner.poll(cx).is_ready(),
            |&ready| spec::Ret::Ready(ready),
        );
        if ready {
            Poll::Ready(this.polls)
        } else {
            Poll::Pending
        }
    }
}

/// Waits for `future`, future `id`, on this thread with `block_on`, each
/// poll recorded; returns how many polls it took.
fn wait_recorded<F: Future>(rec: &ThreadRecorder<spec::Notify>, id: u64, future: F) -> usize {
    modelsync::block_on(RecordedPolls {
        inner: Box::pin(future),
        polls: 0,
        rec,
        id,
    })
}

/// What a re-entrant waker calls on its `Notify`.
#[derive(Clone, Copy)]
enum CallBack {
    Nothing,
    NotifyOne,
    NotifyWaiters,
}

/// A waker that calls back into `notify` when it is cloned, woken and
/// dropped, as the three arguments say: if `Notify` ran any of them under
/// its lock, the call would deadlock (N-6).
fn reentrant_waker(
    notify: &Arc<Notify>,
    on_clone: CallBack,
    on_wake: CallBack,
    on_drop: CallBack,
) -> (Waker, WakeCount) {
    let back = |call: CallBack| -> Option<Box<dyn Fn() + Send + Sync>> {
        let notify = notify.clone();
        match call {
            CallBack::Nothing => None,
            CallBack::NotifyOne => Some(Box::new(move || notify.notify_one())),
            CallBack::NotifyWaiters => Some(Box::new(move || notify.notify_waiters())),
        }
    };
    callback_waker(Callbacks {
        on_clone: back(on_clone),
        on_wake: back(on_wake),
        on_drop: back(on_drop),
    })
}

/// tokio's `notify_one` model: a thread notifies while another waits; the
/// wait ends, and sees what the notifier wrote before notifying (N-9),
/// whether the notification came as the permit or by waking the waiter.
///
/// Checks: N-1, N-8, N-9.
#[test]
fn notify_one_wakes_waiting_thread() {
    let waited = Reach::new("waiter_pended_before_notify");
    let stored = Reach::new("notify_stored_the_permit");
    let (r_waited, r_stored) = (waited.clone(), stored.clone());
    model!().reach(&waited).reach(&stored).check(move || {
        let (history, main) = history();
        let notify = Arc::new(Notify::new());
        let note = Handoff::new();
        let notifier = {
            let (notify, note) = (notify.clone(), note.clone());
            main.spawn(1, move |rec| {
                note.write(1);
                notify_one(&rec, &notify);
            })
        };
        let future = create(&main, 0, &notify);
        let polls = wait_recorded(&main, 0, future);
        assert_eq!(
            note.read(),
            1,
            "the wait ended before the notifier's write was visible"
        );
        if !r_waited.hit_if(polls > 1) {
            r_stored.hit();
        }
        notifier.join().unwrap();
        history.check();
    });
}

/// tokio's `notify_waiters` model: two futures created before the call,
/// never polled before it, both complete; so do two that registered.
///
/// Checks: N-3, N-9.
#[test]
fn notify_waiters_completes_every_earlier_future() {
    let registered = Reach::new("a_future_registered_before_notify_waiters");
    let r = registered.clone();
    model!().reach(&registered).check(move || {
        let (history, main) = history();
        let notify = Arc::new(Notify::new());
        let note = Handoff::new();
        let mut futures = created(&main, &notify, 2);
        let (f2, f1) = (futures.pop().unwrap(), futures.pop().unwrap());
        let notifier = {
            let (notify, note) = (notify.clone(), note.clone());
            main.spawn(1, move |rec| {
                note.write(1);
                notify_waiters(&rec, &notify);
            })
        };
        let polls = wait_recorded(&main, 0, f1) + wait_recorded(&main, 1, f2);
        r.hit_if(polls > 2);
        assert_eq!(
            note.read(),
            1,
            "completed before the notifier's write was visible"
        );
        notifier.join().unwrap();
        history.check();
    });
}

/// `notify_waiters` racing `notify_one` with no registered waiter (tokio
/// #3660): the permit `notify_one` stores survives, whatever the order,
/// because `notify_waiters` advances the generation with a
/// read-modify-write, and the futures it completes leave the permit alone.
///
/// Checks: N-1, N-3.
#[test]
fn notify_waiters_keeps_racing_permit() {
    let permit_first = Reach::new("permit_stored_before_notify_waiters");
    let r = permit_first.clone();
    model!().reach(&permit_first).check(move || {
        let (history, main) = history();
        let notify = Arc::new(Notify::new());
        let mut futures = created(&main, &notify, 2);
        let one = {
            let notify = notify.clone();
            main.spawn(1, move |rec| notify_one(&rec, &notify))
        };
        let all = {
            let notify = notify.clone();
            main.spawn(2, move |rec| notify_waiters(&rec, &notify))
        };
        one.join().unwrap();
        all.join().unwrap();
        let (w, _) = counting_waker();
        assert!(
            futures
                .iter_mut()
                .zip(0..)
                .all(|(f, id)| poll_recorded(&main, id, f.as_mut(), &w)),
            "notify_waiters missed a future"
        );
        let mut after = create(&main, 2, &notify);
        let ready = poll_recorded(&main, 2, after.as_mut(), &w);
        r.hit_if(ready);
        assert!(ready, "the permit notify_one stored was lost");
        history.check();
    });
}

/// tokio's `notify_multi` model: a chain of three wake-ups: this thread
/// notifies, each of two waiting threads notifies the next when woken, and
/// the last notification waits as the permit for this thread's own wait.
///
/// Checks: N-1, N-2.
#[test]
fn chain_of_three_wakeups() {
    let stored = Reach::new("a_link_went_through_the_permit");
    let r = stored.clone();
    model!().preemption_bound(3).reach(&stored).check(move || {
        let (history, main) = history();
        let notify = Arc::new(Notify::new());
        let links: Vec<_> = (1..=2)
            .map(|t| {
                let notify = notify.clone();
                main.spawn(t, move |rec| {
                    let future = create(&rec, t as u64, &notify);
                    let polls = wait_recorded(&rec, t as u64, future);
                    notify_one(&rec, &notify);
                    polls
                })
            })
            .collect();
        notify_one(&main, &notify);
        let polls: Vec<usize> = links.into_iter().map(|l| l.join().unwrap()).collect();
        // The last link's notification waits as the permit for this wait.
        let future = create(&main, 0, &notify);
        wait_recorded(&main, 0, future);
        r.hit_if(polls.contains(&1));
        history.check();
    });
}

/// tokio's `notify_drop` model: the waiter `notify_one` chose is dropped
/// before it completes; the notification passes on to the other waiter
/// (N-4), which therefore always completes, and sees the notifier's write.
///
/// Checks: N-4, N-8, N-9.
#[test]
fn dropped_chosen_waiter_forwards() {
    dropped_chosen_waiter_forwards_by(model!(), false);
}

/// As above for `notify_last`, which chooses the newest waiter: dropped
/// before it completes, it passes the notification on to the older one
/// (N-4), as tokio's `Notified` does for both strategies.
///
/// Checks: N-4, N-8, N-9.
#[test]
fn dropped_chosen_waiter_forwards_after_notify_last() {
    dropped_chosen_waiter_forwards_by(model!(), true);
}

/// Two registered waiters; the one the notification chooses (the first
/// for `notify_one`, the second for `notify_last`) is dropped.
fn dropped_chosen_waiter_forwards_by(model: crate::harness::Model, last: bool) {
    let forwarded = Reach::new("chosen_waiter_was_dropped");
    let r = forwarded.clone();
    model.reach(&forwarded).check(move || {
        let (history, main) = history();
        let notify = Arc::new(Notify::new());
        let note = Handoff::new();
        let (w1, woken1) = counting_waker();
        let (w2, woken2) = counting_waker();
        let mut f1 = create(&main, 0, &notify);
        let mut f2 = create(&main, 1, &notify);
        // Two wakers of this thread: the specification's 0 and 1.
        assert!(
            !poll_with(&main, 0, 0, f1.as_mut(), &w1) && !poll_with(&main, 1, 1, f2.as_mut(), &w2)
        );
        let notifier = {
            let (notify, note) = (notify.clone(), note.clone());
            main.spawn(1, move |rec| {
                note.write(1);
                if last {
                    notify_last(&rec, &notify);
                } else {
                    notify_one(&rec, &notify);
                }
            })
        };
        let (other, id) = if last {
            drop_recorded(&main, 1, f2);
            r.hit_if(woken2.get() > 0);
            (f1, 0)
        } else {
            drop_recorded(&main, 0, f1);
            r.hit_if(woken1.get() > 0);
            (f2, 1)
        };
        wait_recorded(&main, id, other);
        assert_eq!(
            note.read(),
            1,
            "completed before the notifier's write was visible"
        );
        notifier.join().unwrap();
        history.check();
    });
}

/// tokio's `notify_waiters_poll_consistency` model: two registered futures
/// polled in turn while `notify_waiters` runs: once one is ready, the
/// other is too (the call is one step for every future it completes).
///
/// Checks: N-3.
#[test]
fn poll_consistency_around_notify_waiters() {
    poll_consistency(model!(), 2);
}

/// As above with three futures, more than one wake batch (2 in model
/// builds): the futures in the second batch are completed as one with the
/// first, though the lock is released between batches.
///
/// Checks: N-3.
#[test]
fn poll_consistency_across_wake_batches() {
    poll_consistency(model!(), 3);
}

fn poll_consistency(model: crate::harness::Model, futures: usize) {
    let split = Reach::new("first_ready_while_notify_waiters_ran");
    let r = split.clone();
    model.reach(&split).check(move || {
        let (history, main) = history();
        let notify = Arc::new(Notify::new());
        let (w, _) = counting_waker();
        let mut all = created(&main, &notify, futures as u64);
        for (id, f) in (0..).zip(&mut all) {
            assert!(!poll_recorded(&main, id, f.as_mut(), &w));
        }
        // A loom atomic, not a `Flag`: loom must see it to order the polls
        // before it. Relaxed: it only labels the execution.
        let returned = Arc::new(AtomicBool::new(false));
        let notifier = {
            let (notify, returned) = (notify.clone(), returned.clone());
            main.spawn(1, move |rec| {
                rec.op(spec::Op::NotifyWaiters, || notify.notify_waiters(), unit);
                returned.store(true, Relaxed);
            })
        };
        thread::yield_now();
        let mut seen_ready = false;
        for (id, f) in (0..).zip(&mut all) {
            let ready = poll_recorded(&main, id, f.as_mut(), &w);
            assert!(
                ready || !seen_ready,
                "a later future missed a notify_waiters an earlier one saw"
            );
            seen_ready |= ready;
        }
        r.hit_if(seen_ready && !returned.load(Relaxed));
        notifier.join().unwrap();
        for (id, f) in (0..).zip(&mut all) {
            assert!(
                poll_recorded(&main, id, f.as_mut(), &w),
                "notify_waiters missed a future"
            );
        }
        history.check();
    });
}

/// tokio #7965 / #7996: a future created before `notify_waiters`, first
/// polled after it and after a `notify_one`, is completed by
/// `notify_waiters` and leaves the permit to the next future (N-3); the
/// permit carries the notifier's write (N-9).
///
/// Checks: N-3, N-9.
#[test]
fn notify_waiters_completion_leaves_later_permit() {
    let late = Reach::new("first_poll_after_both_notifications");
    let r = late.clone();
    model!().reach(&late).check(move || {
        let (history, main) = history();
        let notify = Arc::new(Notify::new());
        let note = Handoff::new();
        let done = Flag::default();
        let mut early = create(&main, 0, &notify);
        let notifier = {
            let (notify, note, done) = (notify.clone(), note.clone(), done.clone());
            main.spawn(1, move |rec| {
                notify_waiters(&rec, &notify);
                note.write(1);
                notify_one(&rec, &notify);
                done.set();
            })
        };
        let (w, _) = counting_waker();
        // Let the notifier run first (loom 0.7 does not start a new thread
        // before the spawner's next access; see VERIFICATION.md).
        thread::yield_now();
        let after_both = done.get();
        let ready = poll_recorded(&main, 0, early.as_mut(), &w);
        r.hit_if(after_both);
        notifier.join().unwrap();
        assert!(
            ready || poll_recorded(&main, 0, early.as_mut(), &w),
            "notify_waiters missed an earlier future"
        );
        // The next future takes the permit (or, had `early` registered
        // before `notify_waiters`, it too).
        let next = create(&main, 1, &notify);
        wait_recorded(&main, 1, next);
        assert_eq!(
            note.read(),
            1,
            "the permit did not carry the notifier's write"
        );
        history.check();
    });
}

/// tokio's "created after `notify_waiters` returned" model: such a future
/// is not completed by it, and a `notify_one` racing its wait completes it.
///
/// Checks: N-3.
#[test]
fn future_created_after_notify_waiters_waits() {
    let waited = Reach::new("later_future_waited_for_notify_one");
    let r = waited.clone();
    model!().reach(&waited).check(move || {
        let (history, main) = history();
        let notify = Arc::new(Notify::new());
        let all = {
            let notify = notify.clone();
            main.spawn(1, move |rec| notify_waiters(&rec, &notify))
        };
        all.join().unwrap();
        let (w, _) = counting_waker();
        let mut later = create(&main, 0, &notify);
        assert!(
            !poll_recorded(&main, 0, later.as_mut(), &w),
            "completed by an earlier notify_waiters"
        );
        let one = {
            let notify = notify.clone();
            main.spawn(2, move |rec| notify_one(&rec, &notify))
        };
        r.hit_if(wait_recorded(&main, 0, later) > 1);
        one.join().unwrap();
        history.check();
    });
}

/// A future that registers while `notify_waiters` is between wake batches
/// (tokio #5396 / #5458) is not completed by it: it was created after the
/// call began.
///
/// Checks: N-3.
#[test]
fn waiter_registered_during_notify_waiters_waits() {
    let during = Reach::new("registered_between_wake_batches");
    let r = during.clone();
    model!().reach(&during).check(move || {
        let (history, main) = history();
        let notify = Arc::new(Notify::new());
        let began = Arc::new(AtomicBool::new(false));
        let (first, _) = {
            let began = began.clone();
            callback_waker(Callbacks {
                // Release: publishes nothing; the flag only tells the main
                // thread that notify_waiters has begun.
                on_wake: Some(Box::new(move || began.store(true, Release))),
                ..Callbacks::default()
            })
        };
        let (wakers, woken): (Vec<_>, Vec<_>) = (0..3).map(|_| counting_waker()).unzip();
        let mut earlier = created(&main, &notify, 3);
        // This thread's wakers: `first` is the specification's 1, the
        // counting ones 0, 2 and 3.
        assert!(!poll_with(&main, 0, 1, earlier[0].as_mut(), &first));
        assert!(
            !poll_with(&main, 1, 2, earlier[1].as_mut(), &wakers[1])
                && !poll_with(&main, 2, 3, earlier[2].as_mut(), &wakers[2])
        );
        let all = {
            let notify = notify.clone();
            main.spawn(1, move |rec| notify_waiters(&rec, &notify))
        };
        // Acquire: pairs with the waker's store; only labels the execution.
        let created_during = began.load(Acquire);
        let mut new = create(&main, 3, &notify);
        let ready_at_once = poll_with(&main, 3, 0, new.as_mut(), &wakers[0]);
        // The third earlier future is in the second wake batch.
        r.hit_if(created_during && woken[2].get() == 0);
        all.join().unwrap();
        if created_during {
            assert!(
                !ready_at_once && !poll_with(&main, 3, 0, new.as_mut(), &wakers[0]),
                "notify_waiters completed a future created after it began"
            );
        }
        assert!(
            earlier.iter_mut().zip(0..).all(|(f, id)| poll_with(
                &main,
                id,
                0,
                f.as_mut(),
                &wakers[0]
            )),
            "notify_waiters missed a future"
        );
        history.check();
    });
}

fn all_ready<F: Future>(futures: &mut [Pin<Box<F>>], w: &Waker) -> bool {
    futures.iter_mut().all(|f| poll(f.as_mut(), w))
}

/// `notify_last` wakes the newest of three registered waiters (N-2), while
/// that waiter's task blocks on it; the others stay pending.
///
/// Checks: N-2, N-9.
#[test]
fn notify_last_wakes_newest() {
    let waited = Reach::new("newest_blocked_before_notify_last");
    let r = waited.clone();
    model!().reach(&waited).check(move || {
        let (history, main) = history();
        let notify = Arc::new(Notify::new());
        let note = Handoff::new();
        let (w, _) = counting_waker();
        let mut all = created(&main, &notify, 3);
        for (f, id) in all.iter_mut().zip(0..) {
            assert!(!poll_recorded(&main, id, f.as_mut(), &w));
        }
        let notifier = {
            let (notify, note) = (notify.clone(), note.clone());
            main.spawn(1, move |rec| {
                note.write(1);
                notify_last(&rec, &notify);
            })
        };
        let newest = all.pop().unwrap();
        r.hit_if(wait_recorded(&main, 2, newest) > 1);
        assert_eq!(
            note.read(),
            1,
            "completed before the notifier's write was visible"
        );
        notifier.join().unwrap();
        for (f, id) in all.iter_mut().zip(0..) {
            assert!(
                !poll_recorded(&main, id, f.as_mut(), &w),
                "notify_last woke an older waiter"
            );
        }
        history.check();
    });
}

/// FIFO with three registered waiters: two `notify_one` calls from another
/// thread complete the two oldest, in order; the newest stays pending.
///
/// Checks: N-2.
#[test]
fn fifo_order_with_three_waiters() {
    let between = Reach::new("oldest_done_while_second_pending");
    let r = between.clone();
    model!().reach(&between).check(move || {
        let (history, main) = history();
        let notify = Arc::new(Notify::new());
        let (w, _) = counting_waker();
        let mut all = created(&main, &notify, 3);
        for (id, f) in (0..).zip(&mut all) {
            assert!(!poll_recorded(&main, id, f.as_mut(), &w));
        }
        let notifier = {
            let notify = notify.clone();
            main.spawn(1, move |rec| {
                rec.op(spec::Op::NotifyOne, || notify.notify_one(), unit);
                rec.op(spec::Op::NotifyOne, || notify.notify_one(), unit);
            })
        };
        thread::yield_now();
        // Newest first: a notification, once given, stays; so if a newer
        // waiter was notified when polled, every older one polled after it
        // must be too (FIFO).
        let mut ready: Vec<bool> = all
            .iter_mut()
            .enumerate()
            .rev()
            .map(|(id, f)| poll_recorded(&main, id as u64, f.as_mut(), &w))
            .collect();
        ready.reverse();
        assert!(
            ready.windows(2).all(|p| p[0] || !p[1]),
            "not FIFO: {ready:?}"
        );
        r.hit_if(ready == [true, false, false]);
        notifier.join().unwrap();
        let ready: Vec<bool> = (0..)
            .zip(&mut all)
            .map(|(id, f)| poll_recorded(&main, id, f.as_mut(), &w))
            .collect();
        assert_eq!(ready, [true, true, false]);
        history.check();
    });
}

/// `enable` registers without a waker (tokio #4745 / #4747): a
/// `notify_one` after it chooses this future; a later poll stores its
/// waker, which the notification then wakes, or finds the notification.
///
/// Checks: N-2, N-5.
#[test]
fn enable_then_poll() {
    let waited = Reach::new("poll_after_enable_waited");
    let r = waited.clone();
    model!().reach(&waited).check(move || {
        let (history, main) = history();
        let notify = Arc::new(Notify::new());
        let mut f = create(&main, 0, &notify);
        let enabled = main.op(
            spec::Op::Enable(0),
            || f.as_mut().enable(),
            |&ready| spec::Ret::Ready(ready),
        );
        assert!(!enabled, "no permit, no notification yet");
        let notifier = {
            let notify = notify.clone();
            main.spawn(1, move |rec| notify_one(&rec, &notify))
        };
        r.hit_if(wait_recorded(&main, 0, f) > 1);
        notifier.join().unwrap();
        // The notification went to the enabled future, not into the permit.
        let (w, _) = counting_waker();
        assert!(
            !poll_recorded(&main, 1, create(&main, 1, &notify).as_mut(), &w),
            "a permit was left over"
        );
        history.check();
    });
}

/// A future polled by one task, then by another (its waker changes), while
/// `notify_one` runs: the waker woken is the latest one (N-5; the second
/// half of tokio #4745, fixed by #4751).
///
/// Checks: N-5.
#[test]
fn waker_replaced_when_task_changes() {
    let moved = Reach::new("notified_after_the_task_changed");
    let r = moved.clone();
    model!().reach(&moved).check(move || {
        let (history, main) = history();
        let notify = Arc::new(Notify::new());
        let (first, first_woken) = counting_waker();
        let (second, second_woken) = counting_waker();
        let mut f = create(&main, 0, &notify);
        // Two wakers of this thread: the specification's 0 and 1.
        assert!(!poll_with(&main, 0, 0, f.as_mut(), &first));
        let notifier = {
            let notify = notify.clone();
            main.spawn(1, move |rec| notify_one(&rec, &notify))
        };
        let ready = poll_with(&main, 0, 1, f.as_mut(), &second);
        notifier.join().unwrap();
        if !ready {
            r.hit();
            assert_eq!(second_woken.get(), 1, "the latest waker was not woken");
            assert_eq!(first_woken.get(), 0, "a replaced waker was woken");
            assert!(poll_with(&main, 0, 1, f.as_mut(), &second));
        }
        history.check();
    });
}

/// Two futures wait, registered oldest first; the oldest is polled by
/// another task (its waker changes) while `notify_one` runs. The
/// notification goes to the oldest, whatever the order: a waker change
/// keeps a waiter's place (N-2, N-5). Nothing here asserts which future
/// was chosen: the history does, against the specification, since the
/// younger future's last poll is `Ready` only if it was chosen.
///
/// Checks: N-2, N-5.
#[test]
fn waker_change_keeps_the_waiters_place() {
    let during = Reach::new("oldest_notified_before_its_poll_returned");
    let after = Reach::new("oldest_notified_after_its_poll_returned");
    let (r_during, r_after) = (during.clone(), after.clone());
    model!().reach(&during).reach(&after).check(move || {
        let (history, main) = history();
        let notify = Arc::new(Notify::new());
        let (first, _) = counting_waker();
        let (second, _) = counting_waker();
        let mut futures = created(&main, &notify, 2);
        for (id, f) in (0..).zip(futures.iter_mut()) {
            assert!(!poll_with(&main, id, 0, f.as_mut(), &first));
        }
        let notifier = {
            let notify = notify.clone();
            main.spawn(1, move |rec| notify_one(&rec, &notify))
        };
        let ready = poll_with(&main, 0, 1, futures[0].as_mut(), &second);
        notifier.join().unwrap();
        r_during.hit_if(ready);
        r_after.hit_if(!ready);
        // Each future once more, with the waker it registered last: the
        // history says whether the right one was chosen.
        poll_with(&main, 0, 1, futures[0].as_mut(), &second);
        poll_with(&main, 1, 0, futures[1].as_mut(), &first);
        history.check();
    });
}

/// Two `notify_one` calls race with nobody waiting: one permit is stored
/// (N-1), and a future that consumes it after both calls sees both
/// notifiers' writes: a stored permit is rewritten by the second notifier
/// (not merely observed), so that its writes are published too (N-9).
///
/// Checks: N-1, N-8, N-9.
#[test]
fn racing_notifies_store_one_permit() {
    let consumed = Reach::new("permit_consumed_after_both_notifies");
    let r = consumed.clone();
    model!().reach(&consumed).check(move || {
        let (history, main) = history();
        let notify = Arc::new(Notify::new());
        let notes: Vec<_> = (0..2).map(|_| Handoff::new()).collect();
        let returned: Vec<Flag> = (0..2).map(|_| Flag::default()).collect();
        let notifiers: Vec<_> = (1..)
            .zip(notes.iter().zip(&returned))
            .map(|(t, (note, returned))| {
                let (notify, note, returned) = (notify.clone(), note.clone(), returned.clone());
                main.spawn(t, move |rec| {
                    note.write(1);
                    rec.op(spec::Op::NotifyOne, || notify.notify_one(), unit);
                    returned.set();
                })
            })
            .collect();
        let (w, _) = counting_waker();
        thread::yield_now();
        thread::yield_now();
        let both_returned = returned.iter().all(Flag::get);
        let mut futures = created(&main, &notify, 1);
        let mut first = futures.pop().expect("one");
        if poll_recorded(&main, 0, first.as_mut(), &w) && r.hit_if(both_returned) {
            assert!(notes.iter().all(|n| n.read() == 1));
        }
        for n in notifiers {
            n.join().unwrap();
        }
        main.op(spec::Op::Drop(0), || drop(first), unit);
        // Whatever was consumed or forwarded, at most one permit is left.
        let mut second = main.op(spec::Op::Create(1), || Box::pin(notify.notified()), unit);
        let mut third = main.op(spec::Op::Create(2), || Box::pin(notify.notified()), unit);
        poll_recorded(&main, 1, second.as_mut(), &w);
        assert!(
            !poll_recorded(&main, 2, third.as_mut(), &w),
            "two permits were stored"
        );
        history.check();
    });
}

/// A waiter dropped while `notify_waiters` holds it in its ring, between
/// wake batches (three waiters, batches of 2), while a `notify_one` stores
/// the permit in the same window (the first waiter's waker calls it): the
/// drop unlinks the node safely (loom checks every access to it), and it
/// leaves the permit alone, moving the state only from WAITING to EMPTY
/// (tokio #3652).
///
/// Checks: N-1, N-3, N-4.
#[test]
fn waiter_dropped_while_notify_waiters_runs() {
    let in_ring = Reach::new("dropped_while_in_the_ring_with_a_permit_stored");
    let r = in_ring.clone();
    model!().reach(&in_ring).check(move || {
        let notify = Arc::new(Notify::new());
        let (first, first_woken) = {
            let notify = notify.clone();
            callback_waker(Callbacks {
                on_wake: Some(Box::new(move || notify.notify_one())),
                ..Callbacks::default()
            })
        };
        let (w, last_woken) = counting_waker();
        let mut all: Vec<_> = (0..3).map(|_| Box::pin(notify.notified())).collect();
        assert!(!poll(all[0].as_mut(), &first));
        assert!(!poll(all[1].as_mut(), &w) && !poll(all[2].as_mut(), &w));
        let notifier = {
            let notify = notify.clone();
            thread::spawn(move || notify.notify_waiters())
        };
        let last = all.pop().unwrap();
        thread::yield_now();
        // The first batch is woken (so the permit may be stored) and the
        // last waiter's batch is not: it is still in the ring.
        r.hit_if(first_woken.get() == 1 && last_woken.get() < 2);
        drop(last);
        notifier.join().unwrap();
        assert!(all_ready(&mut all, &w), "notify_waiters missed a future");
        let mut after = Box::pin(notify.notified());
        assert!(
            poll(after.as_mut(), &w),
            "the permit stored meanwhile was lost"
        );
    });
}

/// A waker whose clone calls `notify_one` on the same `Notify` while
/// another waiter is registered, so the call takes the lock (tokio #4129):
/// `Notify` clones wakers before taking its lock, so this cannot deadlock.
///
/// Checks: N-6.
#[test]
fn waker_cloned_outside_the_lock() {
    use CallBack::*;
    reentrant_scenario(model!(), [NotifyOne, Nothing, Nothing]);
}

/// A waker whose wake calls `notify_one` on the same `Notify`: wakers are
/// woken after the lock is released.
///
/// Checks: N-6.
#[test]
fn waker_woken_outside_the_lock() {
    use CallBack::*;
    reentrant_scenario(model!(), [Nothing, NotifyOne, Nothing]);
}

/// A waker whose drop calls `notify_waiters` on the same `Notify` (tokio
/// #5429 / #5471): a replaced waker is dropped after the lock is released.
///
/// Checks: N-6.
#[test]
fn waker_dropped_outside_the_lock() {
    use CallBack::*;
    reentrant_scenario(model!(), [Nothing, Nothing, NotifyWaiters]);
}

/// One waiter registered; a second polled with a re-entrant waker, then
/// with a plain one (so the copy it stored is replaced and dropped), while
/// another thread notifies. Nothing deadlocks, and a final
/// `notify_waiters` completes both.
fn reentrant_scenario(model: crate::harness::Model, [on_clone, on_wake, on_drop]: [CallBack; 3]) {
    let registered = Reach::new("registered_with_the_reentrant_waker");
    let r = registered.clone();
    model.reach(&registered).check(move || {
        let notify = Arc::new(Notify::new());
        let (reentrant, _) = reentrant_waker(&notify, on_clone, on_wake, on_drop);
        let (plain, _) = counting_waker();
        let mut first = Box::pin(notify.notified());
        assert!(!poll(first.as_mut(), &plain));
        let notifier = {
            let notify = notify.clone();
            thread::spawn(move || notify.notify_one())
        };
        let mut f = Box::pin(notify.notified());
        // The re-entrant waker is kept alive until the end, so the copy
        // `f` stored is the one a replacement drops.
        if r.hit_if(!poll(f.as_mut(), &reentrant)) {
            poll(f.as_mut(), &plain);
        }
        notifier.join().unwrap();
        drop(reentrant);
        notify.notify_waiters();
        assert!(poll(first.as_mut(), &plain) && poll(f.as_mut(), &plain));
    });
}

/// A waker that panics when `notify_waiters` wakes it: every other waiter
/// is still notified and woken, the panic reaches the caller afterwards,
/// and the `Notify` keeps working (N-6). Not a shuttle scenario: shuttle
/// fails a test on any panic in a task, even one that is caught.
///
/// Checks: N-3, N-6.
#[cfg(not(shuttle))]
#[test]
fn panicking_waker_in_notify_waiters() {
    let caught = Reach::new("panic_reached_the_caller");
    let r = caught.clone();
    model!().reach(&caught).check(move || {
        let notify = Arc::new(Notify::new());
        let (panics, _) = callback_waker(Callbacks {
            on_wake: Some(Box::new(|| panic!("a waker panics on purpose"))),
            ..Callbacks::default()
        });
        let (w, woken) = counting_waker();
        let mut all: Vec<_> = (0..3).map(|_| Box::pin(notify.notified())).collect();
        assert!(!poll(all[0].as_mut(), &panics));
        assert!(!poll(all[1].as_mut(), &w) && !poll(all[2].as_mut(), &w));
        let notifier = {
            let notify = notify.clone();
            thread::spawn(move || {
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| notify.notify_waiters()))
                    .is_err()
            })
        };
        r.hit_if(notifier.join().unwrap());
        assert_eq!(woken.get(), 2, "a panicking waker stopped the others");
        assert!(all_ready(&mut all, &w), "notify_waiters missed a future");
        notify.notify_one();
        assert!(
            poll(Box::pin(notify.notified()).as_mut(), &w),
            "the Notify stopped working"
        );
    });
}

/// `OwnedNotified` (`notified_owned`) moved to another thread and awaited
/// there while this thread notifies.
///
/// Checks: N-1, N-9.
#[test]
fn owned_notified_on_another_thread() {
    let waited = Reach::new("owned_future_waited");
    let r = waited.clone();
    model!().reach(&waited).check(move || {
        let (history, main) = history();
        let notify = std::sync::Arc::new(Notify::new());
        let note = Handoff::new();
        let owned = main.op(
            spec::Op::Create(0),
            || notify.clone().notified_owned(),
            unit,
        );
        let waiter = {
            let note = note.clone();
            main.spawn(1, move |rec| {
                let polls = wait_recorded(&rec, 0, owned);
                assert_eq!(
                    note.read(),
                    1,
                    "completed before the notifier's write was visible"
                );
                polls
            })
        };
        note.write(1);
        notify_one(&main, &notify);
        r.hit_if(waiter.join().unwrap() > 1);
        history.check();
    });
}

/// A future holding no registration races a `notify_waiters` while a
/// permit this thread stored is there: it completes by the permit, or by
/// the new generation, read by its first load or by its failed permit CAS.
/// When the permit is still there afterwards it completed by the
/// generation, and then it sees the notifier's write (N-9), which only the
/// generation carries here.
///
/// Checks: N-1, N-3, N-8, N-9.
#[test]
fn unpolled_future_races_permit_and_notify_waiters() {
    let by_generation = Reach::new("completed_by_the_generation_with_the_permit_left");
    let r = by_generation.clone();
    model!().reach(&by_generation).check(move || {
        let (history, main) = history();
        let notify = Arc::new(Notify::new());
        let note = Handoff::new();
        notify_one(&main, &notify);
        let mut early = create(&main, 0, &notify);
        let notifier = {
            let (notify, note) = (notify.clone(), note.clone());
            main.spawn(1, move |rec| {
                note.write(1);
                notify_waiters(&rec, &notify);
            })
        };
        let (w, _) = counting_waker();
        thread::yield_now();
        let ready = poll_recorded(&main, 0, early.as_mut(), &w);
        // `has_permit` synchronises with nothing: only the completion
        // itself may order the read below. (Not an operation of the
        // specification: it labels the execution.)
        if ready && r.hit_if(notify.has_permit()) {
            assert_eq!(
                note.read(),
                1,
                "completed before the notifier's write was visible"
            );
        }
        notifier.join().unwrap();
        assert!(
            ready || poll_recorded(&main, 0, early.as_mut(), &w),
            "notify_waiters missed the future"
        );
        history.check();
    });
}

/// A registered future that is completed by `notify_waiters`'s generation,
/// not by its own notification, because it is polled for the first time
/// after the call: its poll sees the notifier's write while another future
/// stays registered (N-9).
///
/// Checks: N-3, N-8, N-9.
#[test]
fn generation_completes_a_future_beside_a_waiter() {
    let by_generation = Reach::new("unpolled_future_completed_by_the_generation");
    let r = by_generation.clone();
    model!().reach(&by_generation).check(move || {
        let (history, main) = history();
        let notify = Arc::new(Notify::new());
        let note = Handoff::new();
        let (w, _) = counting_waker();
        let mut registered = create(&main, 0, &notify);
        assert!(!poll_recorded(&main, 0, registered.as_mut(), &w));
        let mut unpolled = create(&main, 1, &notify);
        let notifier = {
            let (notify, note) = (notify.clone(), note.clone());
            main.spawn(1, move |rec| {
                note.write(1);
                notify_waiters(&rec, &notify);
            })
        };
        thread::yield_now();
        if r.hit_if(poll_recorded(&main, 1, unpolled.as_mut(), &w)) {
            assert_eq!(
                note.read(),
                1,
                "completed before the notifier's write was visible"
            );
        }
        notifier.join().unwrap();
        assert!(
            poll_recorded(&main, 1, unpolled.as_mut(), &w)
                && poll_recorded(&main, 0, registered.as_mut(), &w)
        );
        history.check();
    });
}

/// `notify_one` sees a waiter registered, takes the lock, and finds the
/// list emptied by that waiter's drop: it stores the permit instead, under
/// the lock, and the future that consumes it sees the notifier's write.
///
/// Checks: N-1, N-4, N-8, N-9.
#[test]
fn notify_finds_the_last_waiter_gone() {
    let consumed = Reach::new("later_future_consumed_a_permit");
    let r = consumed.clone();
    model!().reach(&consumed).check(move || {
        let (history, main) = history();
        let notify = Arc::new(Notify::new());
        let note = Handoff::new();
        let (w, _) = counting_waker();
        let mut leaving = create(&main, 0, &notify);
        assert!(!poll_recorded(&main, 0, leaving.as_mut(), &w));
        let notifier = {
            let (notify, note) = (notify.clone(), note.clone());
            main.spawn(1, move |rec| {
                note.write(1);
                notify_one(&rec, &notify);
            })
        };
        // Let the notifier see WAITING first, and then take the lock as soon
        // as the drop releases it: loom 0.7 runs neither a new thread nor one
        // blocked on a mutex before this thread's next access unless it
        // yields (see VERIFICATION.md on loom's schedule).
        thread::yield_now();
        drop_recorded(&main, 0, leaving);
        thread::yield_now();
        // Whether the notification reached the waiter (and was forwarded
        // into the permit by its drop) or the permit directly, this waits
        // for it and sees the write.
        let next = create(&main, 1, &notify);
        r.hit_if(wait_recorded(&main, 1, next) == 1);
        assert_eq!(
            note.read(),
            1,
            "completed before the notifier's write was visible"
        );
        notifier.join().unwrap();
        history.check();
    });
}

// ---------------------------------------------------------------------
// Generated scenarios, checked against the specification.

/// `Notify` as generated scenarios see it (`check/src/scenario.rs`). Each
/// thread creates, polls, enables, waits for and drops futures of its own
/// (`notified_owned`: a scenario keeps its futures between operations, so
/// they own their `Notify`; `Notified` is the same waiter inside), and any
/// thread notifies. Future `t * 10 + k` belongs to thread `t` while the
/// threads run; the initial part may create and register any future, which
/// its thread then takes over (polling it with its own waker: a waker
/// change), and the final part may poll any, so that what a concurrent
/// notification chose is seen after the threads are joined. A poll, enable
/// or wait of a future not yet created creates it first. A wait is
/// recorded as the polls it makes (and, if it gives up, the future's
/// drop).
struct NotifySubject;

#[derive(Clone, Debug, PartialEq)]
enum NotifyOp {
    Create(u64),
    Poll(u64),
    /// A poll with a waker that calls back into the `Notify` once when it
    /// is cloned, once when woken and once when dropped (a
    /// `notify_waiters`, recorded as an operation of its own): user code
    /// the contract lets call back in (N-6). Were any of them run under
    /// the internal lock, its call would deadlock.
    PollCallingBack(u64),
    Enable(u64),
    /// Polls until ready, parking in between; drops the future if nothing
    /// else can happen.
    Wait(u64),
    Drop(u64),
    NotifyOne,
    NotifyLast,
    NotifyWaiters,
}

/// The waker `NotifyOp::PollCallingBack` registers, to the specification:
/// one no thread's own poll uses (`spec::WAKERS` has room for it).
const CALLING_BACK_WAKER: usize = spec::WAKERS - 1;

/// The first of the history's columns for calling-back wakers' calls:
/// after every thread's.
const CALLBACK_COLUMNS: usize = 10;

/// One thread's futures, and the `Notify` they wait on.
struct Futures {
    notify: std::sync::Arc<Notify>,
    live: std::collections::BTreeMap<u64, Pin<Box<modelsync::notify::OwnedNotified>>>,
}

impl NotifySubject {
    /// Future `id`, created first (the creation recorded) if it is not yet.
    fn future<'a>(
        futures: &'a mut Futures,
        id: u64,
        rec: &ThreadRecorder<spec::Notify>,
    ) -> Pin<&'a mut modelsync::notify::OwnedNotified> {
        let notify = &futures.notify;
        futures
            .live
            .entry(id)
            .or_insert_with(|| {
                let notify = notify.clone();
                let future = rec.op(
                    spec::Op::Create(id),
                    || notify.notified_owned(),
                    |_| spec::Ret::Unit,
                );
                Box::pin(future)
            })
            .as_mut()
    }

    fn poll(
        futures: &mut Futures,
        id: u64,
        rec: &ThreadRecorder<spec::Notify>,
        waiter: &Waiter,
        me: usize,
    ) -> bool {
        let future = Self::future(futures, id, rec);
        let waker = waiter.waker();
        rec.op(
            spec::Op::Poll(id, me),
            || poll(future, &waker),
            |&ready| spec::Ret::Ready(ready),
        )
    }

    /// The waker `PollCallingBack` polls with: each of its clone, wake and
    /// drop calls `notify_waiters` once (its first time), recorded in a
    /// column of its own (thread `me`'s callbacks may run on another
    /// thread, during another operation: a notifier's wake).
    fn calling_back_waker(
        notify: &std::sync::Arc<Notify>,
        rec: &ThreadRecorder<spec::Notify>,
        me: usize,
    ) -> Waker {
        // Whether a callback ran is the harness's, outside the model, as the
        // recorder's columns are.
        use std::sync::atomic::{AtomicBool, Ordering::SeqCst}; // shim-exempt: outside the model
        let back = |kind: usize| -> Option<Box<dyn Fn() + Send + Sync>> {
            let notify = notify.clone();
            let column = rec.column(CALLBACK_COLUMNS + 3 * me + kind);
            let fired = AtomicBool::new(false);
            Some(Box::new(move || {
                if !fired.swap(true, SeqCst) {
                    column.op(
                        spec::Op::NotifyWaiters,
                        || notify.notify_waiters(),
                        |_| spec::Ret::Unit,
                    );
                }
            }))
        };
        callback_waker(Callbacks {
            on_clone: back(0),
            on_wake: back(1),
            on_drop: back(2),
        })
        .0
    }

    fn drop_future(futures: &mut Futures, id: u64, rec: &ThreadRecorder<spec::Notify>) {
        if let Some(future) = futures.live.remove(&id) {
            rec.op(spec::Op::Drop(id), || drop(future), |_| spec::Ret::Unit);
        }
    }
}

impl Subject for NotifySubject {
    type Spec = spec::Notify;
    type Op = NotifyOp;
    type Actor = Futures;
    const NAME: &'static str = "notify";
    const RUST_TYPE: &'static str = "NotifySubject";

    fn items(_: &Scenario<NotifyOp>) -> usize {
        0
    }

    fn setup(_: &Scenario<NotifyOp>) -> (spec::Notify, Futures) {
        let futures = Futures {
            notify: std::sync::Arc::new(Notify::new()),
            live: Default::default(),
        };
        (spec::Notify::default(), futures)
    }

    fn split(main: &mut Futures, _: &Scenario<NotifyOp>, thread: usize) -> Futures {
        // The futures the initial part made for this thread.
        let ids = thread as u64 * 10..thread as u64 * 10 + 10;
        let taken: Vec<u64> = main.live.range(ids).map(|(&id, _)| id).collect();
        Futures {
            notify: main.notify.clone(),
            live: taken
                .into_iter()
                .filter_map(|id| main.live.remove_entry(&id))
                .collect(),
        }
    }

    fn merge(main: &mut Futures, joined: Futures) {
        main.live.extend(joined.live);
    }

    fn run(
        futures: &mut Futures,
        op: &NotifyOp,
        rec: &ThreadRecorder<spec::Notify>,
        waiter: &Waiter,
        _: &Ledger,
    ) {
        use spec::{Op, Ret};
        let me = rec.thread_index();
        match *op {
            NotifyOp::Create(id) => {
                Self::future(futures, id, rec);
            }
            NotifyOp::Poll(id) => {
                Self::poll(futures, id, rec, waiter, me);
            }
            NotifyOp::PollCallingBack(id) => {
                let waker = Self::calling_back_waker(&futures.notify, rec, me);
                let future = Self::future(futures, id, rec);
                rec.op(
                    Op::Poll(id, CALLING_BACK_WAKER),
                    || poll(future, &waker),
                    |&ready| Ret::Ready(ready),
                );
            }
            NotifyOp::Enable(id) => {
                let future = Self::future(futures, id, rec);
                rec.op(Op::Enable(id), || future.enable(), |&r| Ret::Ready(r));
            }
            NotifyOp::Wait(id) => {
                loop {
                    if Self::poll(futures, id, rec, waiter, me) {
                        break;
                    }
                    if !waiter.park() {
                        // Given up: the specification must have the wait
                        // wait now (no notification it was owed a wake
                        // for), or a wake-up was lost.
                        rec.gave_up(rec.call(Op::Await(id, me)));
                        Self::drop_future(futures, id, rec);
                        break;
                    }
                }
            }
            NotifyOp::Drop(id) => Self::drop_future(futures, id, rec),
            NotifyOp::NotifyOne => {
                rec.op(Op::NotifyOne, || futures.notify.notify_one(), |_| Ret::Unit)
            }
            NotifyOp::NotifyLast => rec.op(
                Op::NotifyLast,
                || futures.notify.notify_last(),
                |_| Ret::Unit,
            ),
            NotifyOp::NotifyWaiters => rec.op(
                Op::NotifyWaiters,
                || futures.notify.notify_waiters(),
                |_| Ret::Unit,
            ),
        }
    }

    fn rust(op: &NotifyOp) -> String {
        format!("NotifyOp::{op:?}")
    }

    fn scenarios() -> BoxedStrategy<Scenario<NotifyOp>> {
        use proptest::prelude::*;
        // Thread `t`'s operations, on its futures `t * 10` and `t * 10 + 1`.
        fn ops(t: u64) -> BoxedStrategy<NotifyOp> {
            on(prop_oneof![Just(t * 10), Just(t * 10 + 1)].boxed())
        }
        // The initial and final parts' operations, on any thread's futures
        // (`threads` of them besides the main thread).
        fn main_ops(threads: u64) -> BoxedStrategy<NotifyOp> {
            let ids: Vec<u64> = (0..=threads).flat_map(|t| [t * 10, t * 10 + 1]).collect();
            on(proptest::sample::select(ids).boxed())
        }
        fn on(future: BoxedStrategy<u64>) -> BoxedStrategy<NotifyOp> {
            prop_oneof![
                3 => future.clone().prop_map(NotifyOp::Create),
                2 => future.clone().prop_map(NotifyOp::Poll),
                1 => future.clone().prop_map(NotifyOp::Enable),
                3 => future.clone().prop_map(NotifyOp::Wait),
                1 => future.prop_map(NotifyOp::Drop),
                3 => Just(NotifyOp::NotifyOne),
                1 => Just(NotifyOp::NotifyLast),
                2 => Just(NotifyOp::NotifyWaiters),
            ]
            .boxed()
        }
        (2usize..=3)
            .prop_flat_map(|threads| {
                let main = main_ops(scenario::threads_at_most(threads) as u64);
                scenario::shape(
                    main.clone(),
                    (1..=threads as u64).map(ops).collect(),
                    main,
                    [2, 3, 2],
                )
            })
            .boxed()
    }
}

/// Generated scenarios of 2 or 3 threads creating, polling, enabling,
/// waiting for and dropping futures while others notify
/// (`check/src/scenario.rs`); every execution's history checked against
/// `specs/notify.rs` (one permit, FIFO and LIFO among registered waiters,
/// `notify_waiters` as a snapshot, forwarding on drop).
///
/// Checks: N-1, N-2, N-3, N-4.
#[test]
fn generated_scenarios() {
    scenario::generated::<NotifySubject>(model!().nightly());
}

/// Small generated scenarios, each explored completely under loom (weak
/// memory and the real-time pass; `check/src/scenario.rs`,
/// `generated_complete`): two threads on futures the initial part may
/// have registered for them, every history checked against
/// `specs/notify.rs`.
///
/// Nightly: the main job's complete run is `notify::scope_complete`, every
/// scenario of a stated scope; these drawn scenarios complement it (their
/// initial and final parts drawn, where the scope fixes them).
///
/// Checks: N-1, N-2, N-3, N-4, N-5.
#[test]
fn complete_scenarios() {
    scenario::generated_complete::<NotifySubject>(
        model!().nightly(),
        Small {
            scenarios: 32,
            threads: 2,
            sizes: [2, 3, 2],
        },
    );
}

/// `Notify`'s scope: two threads, each calling one operation of its
/// alphabet (create, poll, enable, wait for and drop its own future, and
/// the three notifications: every operation of `Notify` and of a
/// `Notified`, a poll being the non-blocking view of the wait), from each
/// regime of the state word, the waiter list and a chosen waiter; then the
/// main thread polls both threads' futures and a new one of its own, so
/// that where every notification went (a waiter, the permit, nowhere) is
/// seen.
///
/// The regimes are the situations `src/notify.rs`'s protocol treats
/// differently: nothing stored and nobody waiting; the permit stored; one
/// waiter registered (thread 1's future, registered by the prefix with
/// another waker: its thread's poll is a waker change, N-5); two
/// registered, oldest first; three registered, either thread's future
/// the newest (more than a `notify_waiters` wake batch in model builds,
/// 2: the call releases the lock between batches, and a drop or poll of
/// the waiter left in its ring races it); the oldest chosen by `notify_one` but not
/// yet polled (unlinked, its notification published: its drop forwards
/// FIFO to the other, N-4); the newest chosen by `notify_last` (forwards
/// LIFO); both completed by `notify_waiters` but not yet polled; a future
/// created but not registered before a `notify_waiters` (complete by its
/// generation alone, N-3); the list turned over (its first waiter chosen
/// and completed, a later one now the head); and a permit stored after a
/// generation change (the permit must survive the generation's
/// read-modify-write). One operation per thread is what the races need
/// once a regime is set up: a notification racing a registration, a
/// drop or a waker change of a chosen or registered waiter, two
/// notifications racing over the list or the permit. Not reachable in any
/// scope: the generation wrapping (2^62 `notify_waiters` calls on 64-bit
/// targets).
fn notify_scope(
    threads: usize,
    lengths: (usize, usize),
    calling_back: bool,
) -> scope::Scope<NotifySubject> {
    use NotifyOp::*;
    let alphabet = |future: u64| -> Vec<NotifyOp> {
        let mut ops = vec![Create(future), Poll(future)];
        if calling_back {
            ops.push(PollCallingBack(future));
        }
        ops.extend([
            Enable(future),
            Wait(future),
            Drop(future),
            NotifyOne,
            NotifyLast,
            NotifyWaiters,
        ]);
        ops
    };
    let regime = scope::Regime::<NotifySubject>::new;
    /// A future's stage and notification, `("absent", "none")` if none.
    fn future(f: &Futures, id: u64) -> (&'static str, &'static str) {
        f.live.get(&id).map_or(("absent", "none"), |future| {
            let (stage, notification, _) = future.internals();
            (stage, notification)
        })
    }
    scope::Scope {
        name: match (threads, lengths.1, calling_back) {
            (2, 1, false) => "notify-2x1",
            (2, 1, true) => "notify-2x1-calling-back",
            (3, 1, false) => "notify-3x1",
            (2, 2, false) => "notify-2x2",
            other => unreachable!("no notify scope {other:?}"),
        },
        threads: (1..=threads as u64).map(|t| alphabet(t * 10)).collect(),
        lengths,
        post: (1..=threads as u64)
            .map(|t| Poll(t * 10))
            .chain([Poll(1)])
            .collect(),
        ordered_threads: true,
        contract: scope::any_operations,
        shard_of: None,
        // The main job's scope only: its real-time orders are cheap; one
        // size up, they would multiply scenarios that are costly already.
        real_time_orders: threads == 2 && lengths.1 == 1 && !calling_back,
        regimes: vec![
            regime("empty", vec![], |f| f.notify.internals() == ("empty", 0)),
            regime("permit_stored", vec![NotifyOne], |f| {
                f.notify.internals() == ("notified", 0)
            }),
            regime("one_registered", vec![Poll(10)], |f| {
                f.notify.internals().0 == "waiting" && future(f, 10) == ("waiting", "none")
            }),
            regime("two_registered", vec![Poll(10), Poll(20)], |f| {
                f.notify.internals().0 == "waiting"
                    && future(f, 10) == ("waiting", "none")
                    && future(f, 20) == ("waiting", "none")
            }),
            // Three registered, each thread's future last in one of them:
            // the one in `notify_waiters`' second batch.
            regime(
                "three_registered_thread_2_last",
                vec![Poll(0), Poll(10), Poll(20)],
                |f| {
                    [0, 10, 20]
                        .iter()
                        .all(|&id| future(f, id) == ("waiting", "none"))
                },
            ),
            regime(
                "three_registered_thread_1_last",
                vec![Poll(0), Poll(20), Poll(10)],
                |f| {
                    [0, 10, 20]
                        .iter()
                        .all(|&id| future(f, id) == ("waiting", "none"))
                },
            ),
            regime(
                "oldest_chosen_not_polled",
                vec![Poll(10), Poll(20), NotifyOne],
                |f| future(f, 10) == ("waiting", "fifo") && future(f, 20) == ("waiting", "none"),
            ),
            regime(
                "newest_chosen_not_polled",
                vec![Poll(10), Poll(20), NotifyLast],
                |f| future(f, 20) == ("waiting", "lifo") && future(f, 10) == ("waiting", "none"),
            ),
            regime(
                "all_notified_not_polled",
                vec![Poll(10), Poll(20), NotifyWaiters],
                |f| {
                    f.notify.internals() == ("empty", 1)
                        && future(f, 10) == ("waiting", "all")
                        && future(f, 20) == ("waiting", "all")
                },
            ),
            regime(
                "created_before_notify_waiters",
                vec![Create(10), NotifyWaiters],
                |f| {
                    f.notify.internals() == ("empty", 1)
                        && f.live
                            .get(&10)
                            .is_some_and(|x| x.internals() == ("init", "none", 0))
                },
            ),
            regime(
                "list_turned_over",
                vec![Poll(0), Poll(10), NotifyOne, Poll(0), Poll(20)],
                |f| {
                    future(f, 0) == ("done", "fifo")
                        && future(f, 10) == ("waiting", "none")
                        && future(f, 20) == ("waiting", "none")
                },
            ),
            regime(
                "permit_after_a_generation",
                vec![NotifyWaiters, NotifyOne],
                |f| f.notify.internals() == ("notified", 1),
            ),
        ],
    }
}

/// Every scenario of `Notify`'s scope (`notify_scope`: two threads, one
/// operation each, from twelve regimes of the state word, the list and a
/// chosen waiter), complete under loom in both passes; every history
/// checked against `specs/notify.rs`.
///
/// Scope: notify-2x1 (two threads, one operation each of 8, from 12 regimes)
///
/// Checks: N-1, N-2, N-3, N-4, N-5.
#[test]
fn scope_complete() {
    scope::every_scenario(model!(), notify_scope(2, (1, 1), false));
}

/// `Notify`'s scope with its environment (notify-2x1-calling-back): as
/// `scope_complete`, with one more call in each thread's alphabet, a poll
/// whose waker calls back into the `Notify` (a `notify_waiters`, recorded
/// as an operation of its own) once when it is cloned, once when woken and
/// once when dropped, as the contract lets user code do (N-6): run under
/// the internal lock, that call would deadlock. Every waker path meets it:
/// a registration's clone, a waker change's clone and drop, a
/// notification's wake, a completion's or a cancellation's drop. In the
/// main job: a lock held around user code is a bug of one call per
/// thread, which no hand-written model of one waker path finds on another.
///
/// Scope: notify-2x1-calling-back (two threads, one operation each of 9, a poll with a calling-back waker among them, from 12 regimes)
///
/// Checks: N-1, N-2, N-3, N-4, N-5, N-6.
#[test]
fn scope_calling_back_complete() {
    scope::every_scenario(model!(), notify_scope(2, (1, 1), true));
}

/// `Notify`'s scope one thread up (notify-3x1): three threads, one
/// operation each of the same alphabet (each thread's own future), from
/// the same twelve regimes, then the main thread polls every thread's
/// future and one of its own. Three calls at once are what two
/// notifications racing a registration, or a notification racing two
/// drops of chosen waiters, need. Each scenario runs with no preemption bound within the
/// budget, or at the highest preemption bound that finishes for it; under
/// shuttle, every scenario under PCT. The scope has no symmetry between
/// its threads (the regimes name thread 1's and thread 2's futures), so
/// it holds every triple of calls from every regime: the nightly runs it
/// in four shards of three regimes each (`notify_shard`), one model each.
fn notify_shard(
    threads: usize,
    lengths: (usize, usize),
    regimes: &[&str],
) -> scope::Scope<NotifySubject> {
    notify_scope(threads, lengths, false).only_regimes(regimes)
}

/// Scope notify-3x1, the shard from no waiter registered: the state word and the permit alone.
///
/// Scope: notify-3x1 from empty, permit_stored, permit_after_a_generation (three threads, one operation each of 8, from 3 of its 12 regimes)
///
/// Checks: N-1, N-2, N-3, N-4, N-5.
#[test]
fn scope_three_threads_from_permits_complete_or_bounded() {
    scope::every_scenario_complete_or_bounded(
        model!().nightly(),
        notify_shard(
            3,
            (1, 1),
            &["empty", "permit_stored", "permit_after_a_generation"],
        ),
    );
}

/// Scope notify-3x1, the shard from one or two waiters registered, or a future made before a generation.
///
/// Scope: notify-3x1 from one_registered, two_registered, created_before_notify_waiters (three threads, one operation each of 8, from 3 of its 12 regimes)
///
/// Checks: N-1, N-2, N-3, N-4, N-5.
#[test]
fn scope_three_threads_from_one_or_two_registered_complete_or_bounded() {
    scope::every_scenario_complete_or_bounded(
        model!().nightly(),
        notify_shard(
            3,
            (1, 1),
            &[
                "one_registered",
                "two_registered",
                "created_before_notify_waiters",
            ],
        ),
    );
}

/// Scope notify-3x1, the shard from three waiters on the list (notify_waiters' two batches), or the list turned over.
///
/// Scope: notify-3x1 from three_registered_thread_2_last, three_registered_thread_1_last, list_turned_over (three threads, one operation each of 8, from 3 of its 12 regimes)
///
/// Checks: N-1, N-2, N-3, N-4, N-5.
#[test]
fn scope_three_threads_from_three_registered_complete_or_bounded() {
    scope::every_scenario_complete_or_bounded(
        model!().nightly(),
        notify_shard(
            3,
            (1, 1),
            &[
                "three_registered_thread_2_last",
                "three_registered_thread_1_last",
                "list_turned_over",
            ],
        ),
    );
}

/// Scope notify-3x1, the shard from a waiter chosen and not yet polled (by notify_one, notify_last or notify_waiters).
///
/// Scope: notify-3x1 from oldest_chosen_not_polled, newest_chosen_not_polled, all_notified_not_polled (three threads, one operation each of 8, from 3 of its 12 regimes)
///
/// Checks: N-1, N-2, N-3, N-4, N-5.
#[test]
fn scope_three_threads_from_chosen_complete_or_bounded() {
    scope::every_scenario_complete_or_bounded(
        model!().nightly(),
        notify_shard(
            3,
            (1, 1),
            &[
                "oldest_chosen_not_polled",
                "newest_chosen_not_polled",
                "all_notified_not_polled",
            ],
        ),
    );
}

/// `Notify`'s scope one call up (notify-2x2): two threads, one or two
/// operations each of the same alphabet, from the same twelve regimes.
/// Two calls on a thread are what a registration followed by its own
/// drop or waker change, racing a notification, needs. Each scenario
/// run with no preemption bound within the budget, or at the highest preemption bound that
/// finishes for it; under shuttle, every scenario under PCT. No symmetry
/// between its threads either: four shards of three regimes, as notify-3x1.
///
/// This one is the shard from no waiter registered: the state word and the permit alone.
///
/// Scope: notify-2x2 from empty, permit_stored, permit_after_a_generation (two threads, one or two operations each of 8, from 3 of its 12 regimes)
///
/// Checks: N-1, N-2, N-3, N-4, N-5.
#[test]
fn scope_two_ops_from_permits_complete_or_bounded() {
    scope::every_scenario_complete_or_bounded(
        model!().nightly(),
        notify_shard(
            2,
            (1, 2),
            &["empty", "permit_stored", "permit_after_a_generation"],
        ),
    );
}

/// Scope notify-2x2, the shard from one or two waiters registered, or a future made before a generation.
///
/// Scope: notify-2x2 from one_registered, two_registered, created_before_notify_waiters (two threads, one or two operations each of 8, from 3 of its 12 regimes)
///
/// Checks: N-1, N-2, N-3, N-4, N-5.
#[test]
fn scope_two_ops_from_one_or_two_registered_complete_or_bounded() {
    scope::every_scenario_complete_or_bounded(
        model!().nightly(),
        notify_shard(
            2,
            (1, 2),
            &[
                "one_registered",
                "two_registered",
                "created_before_notify_waiters",
            ],
        ),
    );
}

/// Scope notify-2x2, the shard from three waiters on the list (notify_waiters' two batches), or the list turned over.
///
/// Scope: notify-2x2 from three_registered_thread_2_last, three_registered_thread_1_last, list_turned_over (two threads, one or two operations each of 8, from 3 of its 12 regimes)
///
/// Checks: N-1, N-2, N-3, N-4, N-5.
#[test]
fn scope_two_ops_from_three_registered_complete_or_bounded() {
    scope::every_scenario_complete_or_bounded(
        model!().nightly(),
        notify_shard(
            2,
            (1, 2),
            &[
                "three_registered_thread_2_last",
                "three_registered_thread_1_last",
                "list_turned_over",
            ],
        ),
    );
}

/// Scope notify-2x2, the shard from a waiter chosen and not yet polled (by notify_one, notify_last or notify_waiters).
///
/// Scope: notify-2x2 from oldest_chosen_not_polled, newest_chosen_not_polled, all_notified_not_polled (two threads, one or two operations each of 8, from 3 of its 12 regimes)
///
/// Checks: N-1, N-2, N-3, N-4, N-5.
#[test]
fn scope_two_ops_from_chosen_complete_or_bounded() {
    scope::every_scenario_complete_or_bounded(
        model!().nightly(),
        notify_shard(
            2,
            (1, 2),
            &[
                "oldest_chosen_not_polled",
                "newest_chosen_not_polled",
                "all_notified_not_polled",
            ],
        ),
    );
}
