//! Models of the oneshot channel (`src/oneshot.rs`): tokio's seven oneshot
//! loom models, asserting identity (the value is delivered at most once
//! and dropped exactly once, never on the sender's thread after a
//! successful send), plus what tokio's suite does not cover: both ends
//! dropped concurrently, `try_recv` racing `send`, a `closed()` wait racing
//! `close`, and closing publishing the receiver's writes. Then generated
//! scenarios, bounded and complete, every history checked against
//! `specs/oneshot.rs`.
//!
//! Written once for loom, shuttle and std stress (see `check/src/lib.rs`).
//! Futures are driven by `modelsync::block_on` (itself modelled in
//! `models/block_on.rs`) or polled by hand with a counting waker.

use std::cell::Cell;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use crate::harness::recorder::{Recorder, ThreadRecorder};
use crate::harness::scenario::{self, Scenario, Small, Subject, Waiter};
use crate::harness::scope;
use crate::harness::{counting_waker, model, Flag, Handoff, Ledger, Model, Reach, Tracked};
use crate::specs::oneshot as spec;
use modelsync::oneshot::{self, error::TryRecvError};
use modelsync::sync::{thread, thread_local};
use proptest::strategy::BoxedStrategy;

thread_local! {
    // loom's and shuttle's `thread_local!` do not accept `const { .. }`.
    #[allow(clippy::missing_const_for_thread_local)]
    /// Set on the thread that called `send`, so a value can tell where it
    /// is dropped.
    static ON_SENDER_THREAD: Cell<bool> = Cell::new(false);
}

/// The value sent: an identity for the ledger, and a record of whether it
/// was dropped on the sender's thread.
struct Value {
    item: Option<Tracked>,
    dropped_on_sender: Flag,
}

impl Value {
    /// The identity, handed to the ledger on delivery.
    fn into_item(mut self) -> Tracked {
        self.item.take().expect("an item is taken once")
    }

    fn id(&self) -> usize {
        self.item.as_ref().expect("not yet delivered").id()
    }
}

impl Drop for Value {
    fn drop(&mut self) {
        if ON_SENDER_THREAD.with(Cell::get) {
            self.dropped_on_sender.set();
        }
    }
}

/// Item `id` as a value to send, and the flag its drop on the sender's
/// thread sets.
fn value(ledger: &Ledger, id: usize) -> (Value, Flag) {
    let flag = Flag::default();
    (
        Value {
            item: Some(ledger.item(id)),
            dropped_on_sender: flag.clone(),
        },
        flag,
    )
}

/// Sends from a thread marked as the sender, for the length of the call.
fn send_on_sender_thread(tx: oneshot::Sender<Value>, value: Value) -> Result<(), Value> {
    ON_SENDER_THREAD.with(|on| on.set(true));
    let sent = tx.send(value);
    ON_SENDER_THREAD.with(|on| on.set(false));
    sent
}

/// Sends from a thread marked as the sender; returns whether it succeeded.
/// A value that comes back is dropped here, on the sender's thread.
fn send_marked(tx: oneshot::Sender<Value>, value: Value) -> bool {
    send_on_sender_thread(tx, value).is_ok()
}

/// A history of the channel's operations, checked against
/// `specs/oneshot.rs` at the end of the execution; its main thread's end.
fn history() -> (Recorder<spec::Oneshot>, ThreadRecorder<spec::Oneshot>) {
    let history = Recorder::new(spec::Oneshot::default());
    let main = history.thread(0);
    (history, main)
}

/// A send's return as the specification names it (the value is item 0).
fn sent_ret(ok: &bool) -> spec::Ret {
    spec::Ret::Sent(if *ok { Ok(()) } else { Err(0) })
}

fn try_ret(got: &Result<Value, TryRecvError>) -> spec::Ret {
    spec::Ret::TryRecv(match got {
        Ok(v) => Ok(v.id()),
        Err(TryRecvError::Empty) => Err(spec::TryRecv::Empty),
        Err(TryRecvError::Closed) => Err(spec::TryRecv::Closed),
    })
}

fn recv_ret<T: ValueId>(got: &Result<T, oneshot::error::RecvError>) -> spec::Ret {
    spec::Ret::Recv(Some(got.as_ref().map(ValueId::value_id).map_err(|_| ())))
}

fn poll_ret<T: ValueId>(polled: &Poll<Result<T, oneshot::error::RecvError>>) -> spec::Ret {
    match polled {
        Poll::Ready(got) => recv_ret(got),
        Poll::Pending => spec::Ret::Recv(None),
    }
}

/// What a received value's id is, as the specification names it: a
/// `Value`'s ledger id; a plain number is the value itself (the models that
/// send no item).
trait ValueId {
    fn value_id(&self) -> usize;
}

impl ValueId for Value {
    fn value_id(&self) -> usize {
        self.id()
    }
}

impl ValueId for usize {
    fn value_id(&self) -> usize {
        *self
    }
}

/// A value sent on one thread is received on another; `sender_first`
/// yields before the first poll so that loom also starts with the sender.
fn send_recv_scenario(sender_first: bool, ready: &Reach, waited: &Reach) {
    let ledger = Ledger::new(1);
    let (history, main) = history();
    let (tx, mut rx) = oneshot::channel();
    let (v, on_sender) = value(&ledger, 0);
    let sender = main.spawn(1, move |rec| {
        rec.op(spec::Op::Send(0), || send_marked(tx, v), sent_ret)
    });
    if sender_first {
        thread::yield_now();
    }
    let (waker, _) = counting_waker();
    let polled = main.op(
        spec::Op::PollRecv(0),
        || Pin::new(&mut rx).poll(&mut Context::from_waker(&waker)),
        poll_ret,
    );
    let got = match polled {
        Poll::Ready(got) => {
            ready.hit();
            got
        }
        Poll::Pending => {
            waited.hit();
            main.op(spec::Op::Recv, || modelsync::block_on(rx), recv_ret)
        }
    };
    ledger.deliver(got.expect("the sender sent").into_item());
    assert!(sender.join().unwrap());
    assert!(!on_sender.get(), "value dropped on the sender's thread");
    ledger.assert_all_delivered_once();
    history.check();
}

/// tokio's `send_recv`: the receiver polls, waits, and gets the value.
///
/// Checks: O-1, O-3.
#[test]
fn send_recv() {
    let ready = Reach::new("first_poll_found_value");
    let waited = Reach::new("receiver_waited_for_value");
    let r_waited = waited.clone();
    model!()
        .reach(&waited)
        .check(move || send_recv_scenario(false, &ready, &r_waited));
}

/// `send_recv` started with the sender (loom 0.7 does not run a new thread
/// before the spawner's next access unless it yields): the receiver's first
/// poll also finds the value already sent.
///
/// Checks: O-1, O-3.
#[test]
fn send_recv_sender_first() {
    let ready = Reach::new("first_poll_found_value");
    let waited = Reach::new("receiver_waited_for_value");
    let (r_ready, r_waited) = (ready.clone(), waited.clone());
    model!()
        .reach(&ready)
        .reach(&waited)
        .check(move || send_recv_scenario(true, &r_ready, &r_waited));
}

/// tokio's `changing_rx_task`: the receiver is polled by one task, then
/// awaited by another, while the value is sent; the second waker must be
/// the one woken.
///
/// Checks: O-1, O-4.
#[test]
fn changing_rx_task() {
    let changed = Reach::new("second_task_waited");
    let r = changed.clone();
    model!().reach(&changed).check(move || {
        let ledger = Ledger::new(1);
        let (history, main) = history();
        let (tx, mut rx) = oneshot::channel();
        let (v, _) = value(&ledger, 0);
        let sender = main.spawn(1, move |rec| {
            rec.op(spec::Op::Send(0), || send_marked(tx, v), sent_ret)
        });
        let mut poll_with = |w: usize| {
            let (waker, _) = counting_waker();
            main.op(
                spec::Op::PollRecv(w),
                || Pin::new(&mut rx).poll(&mut Context::from_waker(&waker)),
                poll_ret,
            )
        };
        let got = match poll_with(0) {
            Poll::Ready(got) => got,
            Poll::Pending => match poll_with(1) {
                Poll::Ready(got) => got,
                Poll::Pending => {
                    r.hit();
                    main.op(spec::Op::Recv, || modelsync::block_on(rx), recv_ret)
                }
            },
        };
        ledger.deliver(got.expect("the sender sent").into_item());
        assert!(sender.join().unwrap());
        ledger.assert_all_delivered_once();
        history.check();
    });
}

/// tokio's close-racing-send: `close` on the receiver races `send`, and the
/// receiver polls while the send may still be in flight. Either the send
/// succeeds and the receiver gets the value, or it fails and the value
/// comes back; never both, never neither. After the race, `try_recv`
/// agrees with the poll.
///
/// Checks: O-1, O-2, O-3.
#[test]
fn close_races_send() {
    let sent = Reach::new("send_won");
    let refused = Reach::new("send_refused_after_close");
    let (r_sent, r_refused) = (sent.clone(), refused.clone());
    model!().reach(&sent).reach(&refused).check(move || {
        let ledger = Ledger::new(1);
        let (history, main) = history();
        let (tx, mut rx) = oneshot::channel();
        let (v, _) = value(&ledger, 0);
        let sender = main.spawn(1, move |rec| {
            rec.op(spec::Op::Send(0), || send_marked(tx, v), sent_ret)
        });
        main.op(spec::Op::Close, || rx.close(), |_| spec::Ret::Unit);
        let (waker, _) = counting_waker();
        // After `close` the receiver is ready at once: with the value if the
        // send completed first, with `RecvError` otherwise.
        let polled = main.op(
            spec::Op::PollRecv(0),
            || Pin::new(&mut rx).poll(&mut Context::from_waker(&waker)),
            poll_ret,
        );
        let polled = match polled {
            Poll::Ready(polled) => polled,
            Poll::Pending => panic!("a closed receiver returned Pending"),
        };
        let ok = sender.join().unwrap();
        match polled {
            Ok(v) => {
                assert!(ok, "received a value whose send failed");
                ledger.deliver(v.into_item());
                r_sent.hit();
            }
            Err(_) => {
                assert!(!ok, "send succeeded but the receiver got RecvError");
                r_refused.hit();
            }
        }
        let again = main.op(spec::Op::TryRecv, || rx.try_recv(), try_ret);
        assert_eq!(again.map(|v| v.id()), Err(TryRecvError::Closed));
        drop(rx);
        ledger.assert_all_dropped_once();
        history.check();
    });
}

/// tokio's `changing_tx_task`: the sender's `closed()` is polled by one
/// task, then by another, then awaited, while the receiver is dropped.
/// Whichever path sees the close, the sender then sees what the receiver
/// wrote before dropping (the close happens-before `closed()` returning).
///
/// Checks: O-1, O-4, O-6.
#[test]
fn changing_tx_task() {
    let changed = Reach::new("second_task_waited_for_close");
    let r = changed.clone();
    model!().reach(&changed).check(move || {
        let (history, main) = history();
        let (mut tx, rx) = oneshot::channel::<usize>();
        let note = Handoff::new();
        let receiver = {
            let note = note.clone();
            main.spawn(1, move |rec| {
                note.write(7);
                rec.op(spec::Op::DropReceiver, || drop(rx), |_| spec::Ret::Unit);
            })
        };
        let mut poll_closed = |w: usize| {
            let (waker, _) = counting_waker();
            main.op(
                spec::Op::PollClosed(w),
                || tx.poll_closed(&mut Context::from_waker(&waker)).is_ready(),
                |&ready| spec::Ret::Bool(ready),
            )
        };
        if !poll_closed(0) && !poll_closed(1) {
            r.hit();
            main.op(
                spec::Op::Closed,
                || modelsync::block_on(tx.closed()),
                |_| spec::Ret::Unit,
            );
        }
        assert!(main.op(
            spec::Op::IsClosed,
            || tx.is_closed(),
            |&c| spec::Ret::Bool(c)
        ));
        assert_eq!(
            note.read(),
            7,
            "closed() returned before the receiver's write was visible"
        );
        receiver.join().unwrap();
        main.op(spec::Op::DropSender, || drop(tx), |_| spec::Ret::Unit);
        history.check();
    });
}

/// `close` happens-before the sender observing it through `is_closed`:
/// a receiver that writes, then closes, publishes the write to a sender
/// that sees the channel closed.
///
/// Checks: O-6.
#[test]
fn close_publishes_receiver_writes() {
    let seen = Reach::new("sender_saw_close");
    let r = seen.clone();
    model!().reach(&seen).check(move || {
        let (history, main) = history();
        let (tx, mut rx) = oneshot::channel::<usize>();
        let note = Handoff::new();
        let receiver = {
            let note = note.clone();
            main.spawn(1, move |rec| {
                note.write(7);
                rec.op(spec::Op::Close, || rx.close(), |_| spec::Ret::Unit);
                rx
            })
        };
        thread::yield_now();
        let closed = main.op(
            spec::Op::IsClosed,
            || tx.is_closed(),
            |&c| spec::Ret::Bool(c),
        );
        if r.hit_if(closed) {
            assert_eq!(
                note.read(),
                7,
                "is_closed saw the close but not the write before it"
            );
        }
        let rx = receiver.join().unwrap();
        main.op(spec::Op::DropReceiver, || drop(rx), |_| spec::Ret::Unit);
        main.op(spec::Op::DropSender, || drop(tx), |_| spec::Ret::Unit);
        history.check();
    });
}

/// tokio's check that a value sent successfully is never dropped on the
/// sender's thread, here with the receiver dropped concurrently.
///
/// Checks: O-2, O-3.
#[test]
fn sent_value_not_dropped_on_sender_thread() {
    let dropped_by_rx = Reach::new("receiver_drop_dropped_value");
    receiver_leaves_during_a_send(model!().reach(&dropped_by_rx), dropped_by_rx, false);
}

/// The same, with the receiver closing the channel before it is dropped,
/// while `send` is between its completion and its return: the close
/// leaves the value in the slot (a value sent is still received after a
/// close), so the receiver's drop must still drop it. A drop that took a
/// close for "the sender took its value back" leaves it to the last
/// handle, which may be the sender's, inside `send` (written blind from
/// the docs: it passed every other model, scope oneshot-2x1 included, as
/// the race needs two calls on the receiver's side during one `send`).
///
/// Checks: O-3.
#[test]
fn sent_value_not_dropped_on_sender_thread_after_a_close() {
    let dropped_by_rx = Reach::new("close_then_drop_after_the_value_was_sent");
    receiver_leaves_during_a_send(model!().reach(&dropped_by_rx), dropped_by_rx, true);
}

/// A send racing the receiver's drop (after a `close` if `close_first`):
/// a send that returned `Ok` left its value to the receiver's side (O-3),
/// counted in `sent_ok`; the value dropped once, the history checked.
fn receiver_leaves_during_a_send(model: Model, sent_ok: Reach, close_first: bool) {
    model.check(move || {
        let ledger = Ledger::new(1);
        let (history, main) = history();
        let (tx, mut rx) = oneshot::channel();
        let (v, on_sender) = value(&ledger, 0);
        let sender = main.spawn(1, move |rec| {
            rec.op(spec::Op::Send(0), || send_marked(tx, v), sent_ret)
        });
        if close_first {
            main.op(spec::Op::Close, || rx.close(), |_| spec::Ret::Unit);
        }
        main.op(spec::Op::DropReceiver, || drop(rx), |_| spec::Ret::Unit);
        let ok = sender.join().unwrap();
        if ok {
            sent_ok.hit();
            assert!(
                !on_sender.get(),
                "send returned Ok, value dropped on the sender's thread"
            );
        }
        ledger.assert_all_dropped_once();
        history.check();
    });
}

/// tokio's rx-dropped-after-poll: the receiver registers a waker, then is
/// dropped while the value is sent; the value is dropped exactly once and
/// the stale waker is never used after it is freed.
///
/// Checks: O-1, O-3.
#[test]
fn rx_dropped_after_poll_races_send() {
    let pended = Reach::new("receiver_pended_then_dropped");
    let r = pended.clone();
    model!().reach(&pended).check(move || {
        let ledger = Ledger::new(1);
        let (history, main) = history();
        let (tx, mut rx) = oneshot::channel();
        let (v, _) = value(&ledger, 0);
        let sender = main.spawn(1, move |rec| {
            rec.op(spec::Op::Send(0), || send_marked(tx, v), sent_ret)
        });
        let (waker, _) = counting_waker();
        let polled = main.op(
            spec::Op::PollRecv(0),
            || Pin::new(&mut rx).poll(&mut Context::from_waker(&waker)),
            poll_ret,
        );
        match polled {
            Poll::Ready(got) => ledger.deliver(got.expect("the sender sent").into_item()),
            Poll::Pending => {
                r.hit();
                main.op(spec::Op::DropReceiver, || drop(rx), |_| spec::Ret::Unit);
            }
        }
        sender.join().unwrap();
        ledger.assert_all_dropped_once();
        history.check();
    });
}

/// tokio's `recv_closed`: the sender is dropped without sending while the
/// receiver waits; the receiver gets `RecvError`.
///
/// Checks: O-1, O-4.
#[test]
fn sender_dropped_while_receiver_waits() {
    let waited = Reach::new("receiver_waited_for_close");
    let r = waited.clone();
    model!().reach(&waited).check(move || {
        let (history, main) = history();
        let (tx, mut rx) = oneshot::channel::<usize>();
        let sender = main.spawn(1, move |rec| {
            rec.op(spec::Op::DropSender, || drop(tx), |_| spec::Ret::Unit)
        });
        let (waker, _) = counting_waker();
        let polled = main.op(
            spec::Op::PollRecv(0),
            || Pin::new(&mut rx).poll(&mut Context::from_waker(&waker)),
            poll_ret,
        );
        let got = match polled {
            Poll::Ready(got) => got,
            Poll::Pending => {
                r.hit();
                main.op(spec::Op::Recv, || modelsync::block_on(rx), recv_ret)
            }
        };
        assert!(got.is_err(), "received a value nobody sent");
        sender.join().unwrap();
        history.check();
    });
}

/// Gap in tokio's suite: both ends dropped concurrently, after a send
/// attempt or not; the value is dropped exactly once and nothing leaks
/// (loom checks the allocation).
///
/// Checks: O-3.
#[test]
fn both_ends_dropped_concurrently() {
    let rx_last = Reach::new("sender_dropped_value_back");
    let r = rx_last.clone();
    model!().reach(&rx_last).check(move || {
        let ledger = Ledger::new(1);
        let (history, main) = history();
        let (tx, rx) = oneshot::channel();
        let (v, _) = value(&ledger, 0);
        let sender = main.spawn(1, move |rec| {
            rec.op(spec::Op::Send(0), || send_marked(tx, v), sent_ret)
        });
        let receiver = main.spawn(2, move |rec| {
            rec.op(spec::Op::DropReceiver, || drop(rx), |_| spec::Ret::Unit)
        });
        let sent = sender.join().unwrap();
        receiver.join().unwrap();
        r.hit_if(!sent);
        ledger.assert_all_dropped_once();
        history.check();
    });
}

/// Gap in tokio's suite: `try_recv` races `send`: it returns the value
/// exactly when the send completed first, and `Empty` otherwise.
///
/// Checks: O-1, O-3, O-4.
#[test]
fn try_recv_races_send() {
    let early = Reach::new("try_recv_saw_empty");
    let late = Reach::new("try_recv_got_value");
    let (r_early, r_late) = (early.clone(), late.clone());
    model!().reach(&early).reach(&late).check(move || {
        let ledger = Ledger::new(1);
        let (history, main) = history();
        let (tx, mut rx) = oneshot::channel();
        let (v, _) = value(&ledger, 0);
        let sender = main.spawn(1, move |rec| {
            rec.op(spec::Op::Send(0), || send_marked(tx, v), sent_ret)
        });
        // loom 0.7 never runs a new thread before the spawner's next load
        // unless the spawner yields (see VERIFICATION.md); without this the
        // "got value" case was unreachable.
        thread::yield_now();
        match main.op(spec::Op::TryRecv, || rx.try_recv(), try_ret) {
            Ok(v) => {
                r_late.hit();
                ledger.deliver(v.into_item());
            }
            Err(TryRecvError::Empty) => {
                r_early.hit();
                assert!(sender.join().unwrap());
                let got = main.op(spec::Op::TryRecv, || rx.try_recv(), try_ret);
                ledger.deliver(got.expect("sent and joined").into_item());
                ledger.assert_all_delivered_once();
                history.check();
                return;
            }
            Err(TryRecvError::Closed) => panic!("closed while the sender is alive"),
        }
        assert!(sender.join().unwrap());
        ledger.assert_all_delivered_once();
        history.check();
    });
}

/// Gap in tokio's suite: the sender waits in `closed()` (changing wakers
/// from a hand poll to `block_on`) while the receiver closes, then sends:
/// the wait always ends, and the send after it always fails, giving the
/// value back.
///
/// Checks: O-2, O-4.
#[test]
fn closed_wait_races_close_then_send() {
    let waited = Reach::new("sender_waited_for_close");
    let r = waited.clone();
    model!().reach(&waited).check(move || {
        let ledger = Ledger::new(1);
        let (history, main) = history();
        let (mut tx, mut rx) = oneshot::channel();
        let receiver = main.spawn(1, move |rec| {
            rec.op(spec::Op::Close, || rx.close(), |_| spec::Ret::Unit);
            rec.op(spec::Op::TryRecv, || rx.try_recv(), try_ret)
                .map(|v: Value| v.id())
        });
        let (waker, _) = counting_waker();
        let ready = main.op(
            spec::Op::PollClosed(0),
            || tx.poll_closed(&mut Context::from_waker(&waker)).is_ready(),
            |&ready| spec::Ret::Bool(ready),
        );
        if !ready {
            r.hit();
            main.op(
                spec::Op::Closed,
                || modelsync::block_on(tx.closed()),
                |_| spec::Ret::Unit,
            );
        }
        let (v, _) = value(&ledger, 0);
        let sent = main.op(spec::Op::Send(0), || send_marked(tx, v), sent_ret);
        assert!(!sent, "send succeeded after closed() returned");
        assert_eq!(receiver.join().unwrap(), Err(TryRecvError::Closed));
        ledger.assert_all_dropped_once();
        history.check();
    });
}

/// `is_empty` races `send`: a receiver that sees the value waiting may read
/// it (`is_empty` looks at the value slot, so its load must acquire the
/// sender's write), and receives exactly it.
///
/// Checks: O-1, O-7.
#[test]
fn is_empty_races_send() {
    let seen = Reach::new("is_empty_saw_the_value");
    let early = Reach::new("is_empty_before_the_send");
    let (r_seen, r_early) = (seen.clone(), early.clone());
    model!().reach(&seen).reach(&early).check(move || {
        let ledger = Ledger::new(1);
        let (history, main) = history();
        let (tx, mut rx) = oneshot::channel();
        let (v, _) = value(&ledger, 0);
        let sender = main.spawn(1, move |rec| {
            rec.op(spec::Op::Send(0), || send_marked(tx, v), sent_ret)
        });
        thread::yield_now();
        let is_empty = |rx: &oneshot::Receiver<Value>| {
            main.op(spec::Op::IsEmpty, || rx.is_empty(), |&b| spec::Ret::Bool(b))
        };
        if is_empty(&rx) {
            r_early.hit();
            assert!(sender.join().unwrap());
        } else {
            r_seen.hit();
            assert!(sender.join().unwrap());
        }
        assert!(!is_empty(&rx) && !rx.is_terminated());
        let got = main.op(spec::Op::TryRecv, || rx.try_recv(), try_ret);
        ledger.deliver(got.expect("sent").into_item());
        assert!(is_empty(&rx) && rx.is_terminated());
        ledger.assert_all_delivered_once();
        history.check();
    });
}

// ---------------------------------------------------------------------
// Generated scenarios, checked against the specification.

/// The channel as generated scenarios see it (`check/src/scenario.rs`):
/// thread 1 owns the sender, thread 2 the receiver; the initial and final
/// parts may use either end. An operation on an end already consumed is
/// skipped, and so is awaiting a receiver that completed (a panic, O-5).
///
/// A poll names its waker: 0 is the polling thread's own, the one its
/// awaits use too; 1 stands for another task's (one that polled this end
/// and moved on): it wakes no thread here. So a poll with waker 1 then an
/// await is a waker change, which a racing event must not leave with the
/// other task: that wake-up would be lost, and the await given up.
///
/// The value sent is a [`Value`], which knows the thread it is dropped on:
/// a send that returns `Ok` having dropped it on the sender's thread fails
/// the scenario (O-3), in every scenario and every scope.
struct OneshotChannel;

/// The waker a poll names (see [`OneshotChannel`]).
fn poll_waker(waiter: &Waiter, w: usize) -> std::task::Waker {
    match w {
        0 => waiter.waker(),
        _ => counting_waker().0,
    }
}

/// The ends one thread holds.
#[derive(Default)]
struct Ends {
    tx: Option<oneshot::Sender<Value>>,
    rx: Option<oneshot::Receiver<Value>>,
    /// The receiver completed (a value or `Closed` was returned).
    rx_done: bool,
}

impl Subject for OneshotChannel {
    type Spec = spec::Oneshot;
    type Op = spec::Op;
    type Actor = Ends;
    const NAME: &'static str = "oneshot";
    const RUST_TYPE: &'static str = "OneshotChannel";
    /// As many as under shuttle and std: every scenario completes, in about a hundred executions.
    const LOOM_SCENARIOS: u64 = 32;

    /// One item, if a send happens: the first `Send` on the sender's
    /// timeline (initial part, thread 1, final part) before its drop.
    fn items(scenario: &Scenario<spec::Op>) -> usize {
        let timeline = scenario
            .init
            .iter()
            .chain(scenario.threads.first().into_iter().flatten())
            .chain(&scenario.post);
        for op in timeline {
            match op {
                spec::Op::Send(_) => return 1,
                spec::Op::DropSender => return 0,
                _ => {}
            }
        }
        0
    }

    fn setup(_: &Scenario<spec::Op>) -> (spec::Oneshot, Ends) {
        let (tx, rx) = oneshot::channel();
        let ends = Ends {
            tx: Some(tx),
            rx: Some(rx),
            rx_done: false,
        };
        (spec::Oneshot::default(), ends)
    }

    fn split(main: &mut Ends, _: &Scenario<spec::Op>, thread: usize) -> Ends {
        match thread {
            1 => Ends {
                tx: main.tx.take(),
                ..Ends::default()
            },
            _ => Ends {
                rx: main.rx.take(),
                rx_done: main.rx_done,
                ..Ends::default()
            },
        }
    }

    fn merge(main: &mut Ends, joined: Ends) {
        if joined.tx.is_some() {
            main.tx = joined.tx;
        }
        if joined.rx.is_some() {
            main.rx = joined.rx;
            main.rx_done = joined.rx_done;
        }
    }

    fn run(
        ends: &mut Ends,
        op: &spec::Op,
        rec: &ThreadRecorder<spec::Oneshot>,
        waiter: &Waiter,
        ledger: &Ledger,
    ) {
        use spec::{Op, Ret, TryRecv};
        match *op {
            Op::Send(id) => {
                let Some(tx) = ends.tx.take() else { return };
                let (sent_value, dropped_on_sender) = value(ledger, id);
                let sent = rec.op(
                    op.clone(),
                    || send_on_sender_thread(tx, sent_value),
                    |r| Ret::Sent(r.as_ref().map(|_| ()).map_err(Value::id)),
                );
                assert!(
                    sent.is_err() || !dropped_on_sender.get(),
                    "send returned Ok, value dropped on the sender's thread (O-3)"
                );
                drop(sent); // a value handed back goes here
            }
            Op::DropSender => {
                let Some(tx) = ends.tx.take() else { return };
                rec.op(op.clone(), || drop(tx), |_| Ret::Unit);
            }
            Op::IsClosed => {
                let Some(tx) = ends.tx.as_ref() else { return };
                rec.op(op.clone(), || tx.is_closed(), |&b| Ret::Bool(b));
            }
            Op::Closed => {
                let Some(tx) = ends.tx.as_mut() else { return };
                let call = rec.call(op.clone());
                let waker = waiter.waker();
                loop {
                    if tx.poll_closed(&mut Context::from_waker(&waker)).is_ready() {
                        rec.returned(call, Ret::Unit);
                        break;
                    }
                    if !waiter.park() {
                        rec.gave_up(call);
                        break;
                    }
                }
            }
            Op::TryRecv => {
                let Some(rx) = ends.rx.as_mut() else { return };
                let got = rec.op(
                    op.clone(),
                    || rx.try_recv(),
                    |r| {
                        Ret::TryRecv(match r {
                            Ok(value) => Ok(value.id()),
                            Err(TryRecvError::Empty) => Err(TryRecv::Empty),
                            Err(TryRecvError::Closed) => Err(TryRecv::Closed),
                        })
                    },
                );
                match got {
                    Ok(value) => {
                        ends.rx_done = true;
                        ledger.deliver(value.into_item());
                    }
                    Err(TryRecvError::Closed) => ends.rx_done = true,
                    Err(TryRecvError::Empty) => {}
                }
            }
            Op::Recv => {
                if ends.rx_done {
                    return;
                }
                let Some(rx) = ends.rx.as_mut() else { return };
                let call = rec.call(op.clone());
                let waker = waiter.waker();
                loop {
                    if let Poll::Ready(got) =
                        Pin::new(&mut *rx).poll(&mut Context::from_waker(&waker))
                    {
                        ends.rx_done = true;
                        let ret = got.as_ref().map(Value::id).map_err(|_| ());
                        rec.returned(call, Ret::Recv(Some(ret)));
                        if let Ok(value) = got {
                            ledger.deliver(value.into_item());
                        }
                        break;
                    }
                    if !waiter.park() {
                        rec.gave_up(call);
                        break;
                    }
                }
            }
            Op::Close => {
                let Some(rx) = ends.rx.as_mut() else { return };
                rec.op(op.clone(), || rx.close(), |_| Ret::Unit);
            }
            Op::DropReceiver => {
                let Some(rx) = ends.rx.take() else { return };
                rec.op(op.clone(), || drop(rx), |_| Ret::Unit);
            }
            Op::IsEmpty => {
                let Some(rx) = ends.rx.as_ref() else { return };
                rec.op(op.clone(), || rx.is_empty(), |&b| Ret::Bool(b));
            }
            Op::IsTerminated => {
                let Some(rx) = ends.rx.as_ref() else { return };
                rec.op(op.clone(), || rx.is_terminated(), |&b| Ret::Bool(b));
            }
            Op::PollRecv(w) => {
                if ends.rx_done {
                    return;
                }
                let Some(rx) = ends.rx.as_mut() else { return };
                let waker = poll_waker(waiter, w);
                let polled = rec.op(
                    op.clone(),
                    || Pin::new(&mut *rx).poll(&mut Context::from_waker(&waker)),
                    |p| match p {
                        Poll::Ready(got) => {
                            Ret::Recv(Some(got.as_ref().map(Value::id).map_err(|_| ())))
                        }
                        Poll::Pending => Ret::Recv(None),
                    },
                );
                if let Poll::Ready(got) = polled {
                    ends.rx_done = true;
                    if let Ok(value) = got {
                        ledger.deliver(value.into_item());
                    }
                }
            }
            Op::PollClosed(w) => {
                let Some(tx) = ends.tx.as_mut() else { return };
                let waker = poll_waker(waiter, w);
                let _ = rec.op(
                    op.clone(),
                    || tx.poll_closed(&mut Context::from_waker(&waker)),
                    |p| Ret::Bool(p.is_ready()),
                );
            }
        }
    }

    fn rust(op: &spec::Op) -> String {
        format!("Op::{op:?}")
    }

    /// A thread's operations on an end consumed before them (the sender
    /// by a send or its drop, the receiver by its drop, in the initial
    /// part or earlier on the thread) are skipped when run (see `run`), so
    /// they are left out: scenarios that differ only in them count once.
    fn canonical(mut scenario: Scenario<spec::Op>) -> Scenario<spec::Op> {
        use spec::Op::*;
        let consumes_sender = |op: &spec::Op| matches!(op, Send(_) | DropSender);
        let is_sender_op =
            |op: &spec::Op| matches!(op, Send(_) | DropSender | IsClosed | PollClosed(_) | Closed);
        let tx_gone = scenario.init.iter().any(consumes_sender);
        let rx_gone = scenario.init.contains(&DropReceiver);
        for thread in &mut scenario.threads {
            let (mut tx_gone, mut rx_gone) = (tx_gone, rx_gone);
            thread.retain(|op| {
                let callable = if is_sender_op(op) { !tx_gone } else { !rx_gone };
                tx_gone |= consumes_sender(op);
                rx_gone |= *op == DropReceiver;
                callable
            });
        }
        scenario
    }

    fn scenarios() -> BoxedStrategy<Scenario<spec::Op>> {
        use proptest::prelude::*;
        use spec::Op;
        // Waker 1 is another task's (see `OneshotChannel`): a poll with
        // it, then an await, changes the waker. How often each waker is
        // woken is the property tests' concern; here a lost wake-up shows
        // as an await given up.
        let sender = prop_oneof![
            3 => Just(Op::Send(0)),
            1 => Just(Op::DropSender),
            1 => Just(Op::IsClosed),
            1 => (0..2usize).prop_map(Op::PollClosed),
            1 => Just(Op::Closed),
        ];
        let receiver = prop_oneof![
            2 => Just(Op::TryRecv),
            2 => (0..2usize).prop_map(Op::PollRecv),
            2 => Just(Op::Recv),
            1 => Just(Op::Close),
            1 => Just(Op::DropReceiver),
            1 => Just(Op::IsEmpty),
            1 => Just(Op::IsTerminated),
        ];
        let either = prop_oneof![sender.clone(), receiver.clone()];
        scenario::shape(
            either.clone().boxed(),
            vec![sender.boxed(), receiver.boxed()],
            either.boxed(),
            [1, 3, 2],
        )
    }
}

/// Generated scenarios of both ends (`check/src/scenario.rs`): the sender's
/// operations on one thread, the receiver's on another, with initial and
/// final parts and hand-offs; every execution's history checked against
/// `specs/oneshot.rs` (a value is received iff sent, `try_recv` finds a
/// value whose `send` returned, closing is seen, an await is woken after
/// its waker changed), every item dropped once.
///
/// Checks: O-2, O-3, O-4, O-6, O-7.
#[test]
fn generated_scenarios() {
    scenario::generated::<OneshotChannel>(model!());
}

/// The oneshot channel's complete run: generated scenarios as above, each
/// part small enough that loom explores every execution of it, both
/// passes, with no preemption bound (the run fails otherwise); every
/// history checked against `specs/oneshot.rs`, every item dropped once.
/// Dense enough to draw a waker change racing the event it waits for.
///
/// Nightly: the main job's complete run is `oneshot::scope_complete`, every
/// scenario of a stated scope; these drawn scenarios complement it (their
/// initial and final parts drawn, where the scope fixes them).
///
/// Checks: O-2, O-3, O-4, O-6, O-7.
#[test]
fn complete_scenarios() {
    scenario::generated_complete::<OneshotChannel>(
        model!().nightly(),
        Small {
            scenarios: 64,
            threads: 2,
            sizes: [1, 2, 1],
        },
    );
}

/// Recording a history adds no scheduling point and no synchronisation
/// the backend sees: a scenario of both ends, with a hand-off and a wait,
/// explores exactly the same executions with and without recording (under
/// loom the same count, complete; under shuttle and std the same runs).
///
/// Checks: L-5.
#[test]
fn recording_changes_no_execution() {
    use spec::Op;
    let model = model!();
    let scenario = std::sync::Arc::new(Scenario {
        init: vec![Op::IsEmpty],
        threads: vec![
            vec![Op::IsClosed, Op::Send(0)],
            vec![Op::PollRecv(0), Op::Recv, Op::TryRecv],
        ],
        post: vec![Op::TryRecv, Op::IsTerminated],
        handoffs: vec![scenario::Handoff {
            from: (1, 0),
            to: (2, 1),
            synchronised: true,
        }],
    });
    let start = std::time::Instant::now();
    let recorded = scenario::executions_of::<OneshotChannel>(&scenario, true);
    let bare = scenario::executions_of::<OneshotChannel>(&scenario, false);
    assert_eq!(
        recorded, bare,
        "(executions, loom bound) with and without recording"
    );
    assert_eq!(
        recorded.1,
        crate::harness::bound_asked(),
        "complete (or at the bound LOOM_MAX_PREEMPTIONS asks for) within the budget"
    );
    let setting = match (crate::harness::backend_name(), recorded.1) {
        ("loom", bound) => format!(
            "preemption_bound={}",
            bound.map_or("none".to_string(), |b| b.to_string())
        ),
        _ => crate::harness::backend_setting(),
    };
    model.report(
        &setting,
        recorded.0,
        start.elapsed(),
        &[("runs_compared_with_equal_executions", 2)],
        "",
        "",
    );
}

/// Under loom, what "before" means follows the access mode the model runs
/// in: a send that returned on one thread before another thread's
/// `try_recv` began, with nothing ordering the two, may still be missed by
/// that `try_recv` under weak memory (happens-before does not order them,
/// so the history is linearizable), but not with every access a
/// read-modify-write, where the real-time pass checks it (real time
/// orders them, so `Empty` cannot be placed). Under shuttle and std the
/// precedence is real time always.
///
/// Checks: L-5.
#[test]
fn real_time_pass_orders_by_the_clock() {
    use crate::harness::linearizability::check;
    use spec::{Op, Ret, TryRecv};
    let model = model!();
    let start = std::time::Instant::now();
    let recorder = Recorder::new(spec::Oneshot::default());
    let main = recorder.thread(0);
    main.fork(1);
    main.fork(2);
    // Thread 1's send returns, then thread 2's try_recv is called: on the
    // clock, strictly after.
    let sender = recorder.thread(1);
    sender.op(Op::Send(0), || (), |_| Ret::Sent(Ok(())));
    let receiver = recorder.thread(2);
    receiver.op(Op::TryRecv, || (), |_| Ret::TryRecv(Err(TryRecv::Empty)));
    let verdict = |every_access_rmw: bool| {
        crate::harness::set_access_mode(every_access_rmw);
        let ok = check(&recorder.history()).is_ok();
        crate::harness::set_access_mode(crate::harness::audit_run());
        ok
    };
    let (weak, real_time) = (verdict(false), verdict(true));
    assert!(!real_time, "real time orders the send before the try_recv");
    assert_eq!(
        weak,
        cfg!(loom),
        "only loom's weak memory leaves the two unordered"
    );
    model.report(
        &crate::harness::backend_setting(),
        1,
        start.elapsed(),
        &[("rejected_in_real_time", usize::from(!real_time))],
        "",
        "",
    );
}

/// The oneshot channel's scope: the sender's thread calls one operation of
/// its alphabet (send, drop, `is_closed`, a poll of `closed()` with its own
/// or another task's waker, `closed().await`), the receiver's thread one
/// of its (`try_recv`, a poll with either waker, an await, `close`, drop,
/// `is_empty`, `is_terminated`): every operation of both ends, a poll
/// being the non-blocking view of an await. From each regime of the state
/// word and its two waker slots; then the main thread asks `is_closed`
/// and `is_empty` and tries to receive, so that a value sent and never
/// received, or a close never seen, shows.
///
/// The regimes are the combinations of the state word's bits that
/// `src/oneshot.rs` reaches, each with the slots they publish: nothing
/// set; the receiver's waker stored (another task's: the receiver's poll
/// or await is a waker change, O-4); the sender's waker stored; both; a
/// value sent (complete); a value sent to a waiting receiver (complete,
/// its waker woken); closed by the receiver; closed with the sender's
/// waker stored (woken by the close); the sender dropped without sending
/// (complete, no value); a value sent and then the channel closed (the
/// value can still be received); and the receiver dropped. A regime
/// with the receiver terminated (its value taken) leaves the receiver's
/// thread nothing to call, so it is the dropped receiver's. One operation
/// per thread is what the races need once a regime is set up: a send or
/// the sender's drop racing every receiver operation, a close or the
/// receiver's drop racing every sender operation, each with the other's
/// waker stored or not.
///
/// With `lengths` (1, 2) each thread calls one or two operations
/// (oneshot-2x2): the races of two calls of one end during one call of the
/// other, or two of each (a close then the receiver's drop during a send;
/// a poll of `closed()` with another task's waker, then an await, during a
/// close). A thread's calls on an end it has consumed are skipped, so they
/// are not counted (`OneshotChannel::canonical`).
fn oneshot_scope(lengths: (usize, usize)) -> scope::Scope<OneshotChannel> {
    use spec::Op::*;
    let regime = scope::Regime::<OneshotChannel>::new;
    fn bits(e: &Ends) -> Option<Vec<&'static str>> {
        e.rx.as_ref().and_then(|rx| rx.internals())
    }
    scope::Scope {
        name: if lengths.1 == 1 {
            "oneshot-2x1"
        } else {
            "oneshot-2x2"
        },
        threads: vec![
            vec![
                Send(0),
                DropSender,
                IsClosed,
                PollClosed(0),
                PollClosed(1),
                Closed,
            ],
            vec![
                TryRecv,
                PollRecv(0),
                PollRecv(1),
                Recv,
                Close,
                DropReceiver,
                IsEmpty,
                IsTerminated,
            ],
        ],
        lengths,
        post: vec![IsClosed, IsEmpty, TryRecv],
        ordered_threads: true,
        contract: scope::any_operations,
        shard_of: None,
        // The main job's scope only: one call per thread (see
        // `notify_scope`).
        real_time_orders: lengths.1 == 1,
        regimes: vec![
            regime("nothing_set", vec![], |e| bits(e) == Some(vec![])),
            regime("receiver_waker_stored", vec![PollRecv(1)], |e| {
                bits(e) == Some(vec!["rx_waker"])
            }),
            regime("sender_waker_stored", vec![PollClosed(1)], |e| {
                bits(e) == Some(vec!["tx_waker"])
            }),
            regime(
                "both_wakers_stored",
                vec![PollRecv(1), PollClosed(1)],
                |e| bits(e) == Some(vec!["rx_waker", "tx_waker"]),
            ),
            regime("value_sent", vec![Send(0)], |e| {
                bits(e) == Some(vec!["complete"]) && !e.rx.as_ref().unwrap().is_empty()
            }),
            regime(
                "value_sent_to_a_waiting_receiver",
                vec![PollRecv(1), Send(0)],
                |e| bits(e) == Some(vec!["complete", "rx_waker"]),
            ),
            regime("closed", vec![Close], |e| bits(e) == Some(vec!["closed"])),
            regime(
                "closed_with_the_sender_waker_stored",
                vec![PollClosed(1), Close],
                |e| bits(e) == Some(vec!["closed", "tx_waker"]),
            ),
            regime("sender_dropped", vec![DropSender], |e| {
                bits(e) == Some(vec!["complete"]) && e.rx.as_ref().unwrap().is_empty()
            }),
            regime("value_sent_then_closed", vec![Send(0), Close], |e| {
                bits(e) == Some(vec!["complete", "closed"])
            }),
            regime("receiver_dropped", vec![DropReceiver], |e| {
                e.rx.is_none() && e.tx.as_ref().is_some_and(|tx| tx.is_closed())
            }),
        ],
    }
}

/// Every scenario of the oneshot channel's scope (`oneshot_scope`: the
/// sender's thread and the receiver's, one operation each, from eleven
/// regimes of the state word and its waker slots), complete under loom in
/// both passes; every history checked against `specs/oneshot.rs`, every
/// item dropped once.
///
/// Scope: oneshot-2x1 (the sender's thread with one operation of 6, the receiver's with one of 8, from 11 regimes; a thread's calls on an end it consumed are skipped, so such scenarios count once)
///
/// Checks: O-2, O-3, O-4, O-6, O-7.
#[test]
fn scope_complete() {
    scope::every_scenario(model!(), oneshot_scope((1, 1)));
}

/// Scope oneshot-2x2 in two shards of about equal cost for the nightly's
/// budget per model: from both wakers stored (the most costly regime,
/// each thread's first call a waker change), or from every other regime.
fn two_calls_shard(both_wakers: bool) -> scope::Scope<OneshotChannel> {
    const BOTH_WAKERS: &str = "both_wakers_stored";
    let scope = oneshot_scope((1, 2));
    let names: Vec<&str> = scope
        .regimes
        .iter()
        .map(|r| r.name)
        .filter(|&name| (name == BOTH_WAKERS) == both_wakers)
        .collect();
    scope.only_regimes(&names)
}

/// Every scenario of scope oneshot-2x2 but those from both wakers stored
/// (`scope_two_calls_from_both_wakers_complete` runs those): as
/// `scope_complete`, each thread with one or two operations, so that two
/// calls of one end race one or two of the other's (a receiver that
/// closes and is dropped during a send, O-3). Nightly: the two shards
/// are too long for a pull request (each one's run: verification/oneshot.md);
/// the main job has the 2x1 scope and, for the race that
/// needs two calls, the hand-written models.
///
/// Scope: oneshot-2x2 from every regime but both_wakers_stored (the sender's thread with one or two operations of 6, the receiver's with one or two of 8, from 10 of its 11 regimes)
///
/// Checks: O-2, O-3, O-4, O-6, O-7.
#[test]
fn scope_two_calls_complete() {
    scope::every_scenario(model!().nightly(), two_calls_shard(false));
}

/// Every scenario of scope oneshot-2x2 from its regime with both wakers
/// stored: the other shard of `scope_two_calls_complete`.
///
/// Scope: oneshot-2x2 from both_wakers_stored (as `scope_two_calls_complete`, from its regime with both wakers stored)
///
/// Checks: O-2, O-3, O-4, O-6, O-7.
#[test]
fn scope_two_calls_from_both_wakers_complete() {
    scope::every_scenario(model!().nightly(), two_calls_shard(true));
}
