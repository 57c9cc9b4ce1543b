//! State-machine test of the oneshot channel's single-threaded behaviour
//! against a sequential reference model: every operation's result, which
//! waker is woken and how often, and that every value is dropped exactly
//! once.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use crate::harness::counting_waker as counting;
use modelsync::oneshot::{self, error::TryRecvError};

use crate::support::{panic_message, DropLog, Item};
use proptest::prelude::*;

#[derive(Debug, Clone, Copy)]
enum Op {
    Send,
    DropSender,
    /// Poll the receiver with waker 0 or 1 (a task change when it differs
    /// from the last one).
    PollRecv(usize),
    TryRecv,
    Close,
    DropReceiver,
    /// Poll `closed` with waker 0 or 1.
    PollClosed(usize),
    IsClosed,
    IsEmpty,
    IsTerminated,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        Just(Op::Send),
        Just(Op::DropSender),
        (0..2usize).prop_map(Op::PollRecv),
        Just(Op::TryRecv),
        Just(Op::Close),
        Just(Op::DropReceiver),
        (0..2usize).prop_map(Op::PollClosed),
        Just(Op::IsClosed),
        Just(Op::IsEmpty),
        Just(Op::IsTerminated),
    ]
}

/// The reference model: what each end has done, and which wakers wait.
#[derive(Debug, Default)]
struct Model {
    sender_gone: bool,
    sent: Option<u32>,
    receiver_gone: bool,
    receiver_closed: bool,
    received: bool,
    /// Which waker the receiver / the sender registered last, if any.
    rx_waiting: Option<usize>,
    tx_waiting: Option<usize>,
    /// Wakes per waker.
    rx_wakes: [usize; 2],
    tx_wakes: [usize; 2],
}

impl Model {
    fn closed_for_sender(&self) -> bool {
        self.receiver_closed || self.receiver_gone
    }
    fn complete(&mut self) {
        if let Some(waker) = self.rx_waiting {
            self.rx_wakes[waker] += 1;
        }
    }
    fn close(&mut self) {
        if let Some(waker) = self
            .tx_waiting
            .filter(|_| !self.sender_gone && !self.receiver_closed)
        {
            self.tx_wakes[waker] += 1;
        }
        self.receiver_closed = true;
    }
}

proptest! {
    #![proptest_config(crate::support::proptest_config(1024))]

    /// Random sequences of operations on both ends agree with the model.
    ///
    /// Checks: O-2, O-3, O-4, O-5, O-7.
    #[test]
    fn matches_reference_model(ops in proptest::collection::vec(op(), 1..12)) {
        let mut log = DropLog::default();
        let (tx, rx) = oneshot::channel::<Item>();
        let (mut tx, mut rx) = (Some(tx), Some(rx));
        let mut model = Model::default();
        let (rx_wakers, rx_wakes): (Vec<_>, Vec<_>) = (0..2).map(|_| counting()).unzip();
        let (tx_wakers, tx_wakes): (Vec<_>, Vec<_>) = (0..2).map(|_| counting()).unzip();

        for op in ops {
            match op {
                Op::Send => {
                    let Some(sender) = tx.take() else { continue };
                    let item = log.item();
                    let id = item.id;
                    let result = sender.send(item);
                    model.sender_gone = true;
                    if model.closed_for_sender() {
                        let back = result.expect_err("send to a closed channel succeeded");
                        prop_assert_eq!(back.id, id);
                    } else {
                        prop_assert!(result.is_ok(), "send to an open channel failed");
                        model.sent = Some(id);
                        model.complete();
                    }
                }
                Op::DropSender => {
                    if tx.take().is_some() {
                        model.sender_gone = true;
                        if !model.closed_for_sender() {
                            model.complete();
                        }
                    }
                }
                Op::PollRecv(waker) => {
                    let Some(receiver) = rx.as_mut() else { continue };
                    if model.received {
                        // Terminated, by a ready poll or by `try_recv`
                        // returning a value or `Closed`: polling panics (O-5).
                        let cx = &mut Context::from_waker(&rx_wakers[waker]);
                        let polled = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                            let _ = Pin::new(&mut *receiver).poll(cx);
                        }));
                        prop_assert!(polled.is_err(), "a terminated receiver was polled without a panic");
                        continue;
                    }
                    let poll = Pin::new(receiver).poll(&mut Context::from_waker(&rx_wakers[waker]));
                    match (poll, model.sent, model.sender_gone || model.receiver_closed) {
                        (Poll::Ready(Ok(item)), Some(id), _) => {
                            prop_assert_eq!(item.id, id);
                            model.received = true;
                        }
                        (Poll::Ready(Err(_)), None, true) => model.received = true,
                        (Poll::Pending, None, false) => model.rx_waiting = Some(waker),
                        (poll, sent, done) => prop_assert!(false, "poll gave {:?}; model sent={:?} done={}", poll.map(|r| r.map(|i| i.id)), sent, done),
                    }
                }
                Op::TryRecv => {
                    let Some(receiver) = rx.as_mut() else { continue };
                    let got = receiver.try_recv().map(|item| item.id);
                    let expected = if model.received {
                        Err(TryRecvError::Closed)
                    } else if let Some(id) = model.sent {
                        model.received = true;
                        Ok(id)
                    } else if model.sender_gone || model.receiver_closed {
                        model.received = true;
                        Err(TryRecvError::Closed)
                    } else {
                        Err(TryRecvError::Empty)
                    };
                    prop_assert_eq!(got, expected);
                }
                Op::Close => {
                    let Some(receiver) = rx.as_mut() else { continue };
                    receiver.close();
                    if !(model.received || model.sent.is_some() || model.sender_gone) {
                        model.close();
                    } else if !model.received {
                        model.receiver_closed = true;
                    }
                }
                Op::DropReceiver => {
                    if rx.take().is_some() {
                        if !model.received && model.sent.is_none() && !model.sender_gone {
                            model.close();
                        }
                        model.receiver_gone = true;
                    }
                }
                Op::PollClosed(waker) => {
                    let Some(sender) = tx.as_mut() else { continue };
                    let poll = sender.poll_closed(&mut Context::from_waker(&tx_wakers[waker]));
                    prop_assert_eq!(poll.is_ready(), model.closed_for_sender());
                    if poll.is_pending() {
                        model.tx_waiting = Some(waker);
                    }
                }
                Op::IsClosed => {
                    let Some(sender) = tx.as_ref() else { continue };
                    prop_assert_eq!(sender.is_closed(), model.closed_for_sender());
                }
                Op::IsEmpty => {
                    let Some(receiver) = rx.as_ref() else { continue };
                    // A value is waiting iff it was sent and not received
                    // (a close after the send leaves it receivable).
                    prop_assert_eq!(receiver.is_empty(), model.received || model.sent.is_none());
                }
                Op::IsTerminated => {
                    let Some(receiver) = rx.as_ref() else { continue };
                    prop_assert_eq!(receiver.is_terminated(), model.received);
                }
            }
            prop_assert_eq!([rx_wakes[0].get(), rx_wakes[1].get()], model.rx_wakes, "receiver wakes");
            prop_assert_eq!([tx_wakes[0].get(), tx_wakes[1].get()], model.tx_wakes, "sender wakes");
        }
        drop((tx, rx));
        prop_assert_eq!(log.each_dropped_once(), Ok(()), "every value dropped exactly once");
    }
}

/// Polling a receiver after it completed panics with a message, whether
/// it completed by a poll or by `try_recv` returning `Closed` (as tokio's).
///
/// Checks: O-5, O-7.
#[test]
fn poll_after_completion_panics_with_message() {
    let (tx, mut rx) = oneshot::channel::<u32>();
    drop(tx);
    assert_eq!(rx.try_recv(), Err(TryRecvError::Closed));
    assert!(rx.is_terminated() && rx.is_empty());
    let (waker, _) = counting();
    let polled = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let _ = Pin::new(&mut rx).poll(&mut Context::from_waker(&waker));
    }));
    assert!(polled.is_err(), "polled after try_recv returned Closed");

    let (tx, mut rx) = oneshot::channel::<u32>();
    tx.send(1).unwrap();
    let (waker, _) = counting();
    let mut cx = Context::from_waker(&waker);
    assert!(matches!(
        Pin::new(&mut rx).poll(&mut cx),
        Poll::Ready(Ok(1))
    ));
    let again = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let _ = Pin::new(&mut rx).poll(&mut cx);
    }));
    let message = panic_message(again.expect_err("poll after completion"));
    assert!(message.contains("after it completed"), "message: {message}");
    assert!(
        message.starts_with("called after complete"),
        "tokio's message: {message}"
    );
}

/// `blocking_recv` inside a runtime's task, or inside `Runtime::block_on`,
/// panics with tokio's message, even when the value is already there or
/// the sender gone: blocking the thread that drives the tasks could
/// deadlock them. The task's panic reaches its handle, and the runtime
/// keeps working.
///
/// Checks: O-5.
#[test]
fn blocking_recv_inside_a_runtime_panics() {
    const TOKIO_MESSAGE: &str = "Cannot block the current thread from within a runtime";
    let rt = modelsync::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .build()
        .unwrap();
    let (tx, rx) = oneshot::channel::<u32>();
    drop(tx);
    let in_task = rt.spawn(async move { rx.blocking_recv() });
    let error = rt
        .block_on(in_task)
        .expect_err("blocking_recv returned in a task");
    assert!(error.is_panic());
    let message = panic_message(error.into_panic());
    assert!(message.contains(TOKIO_MESSAGE), "message: {message}");

    let (tx, rx) = oneshot::channel::<u32>();
    tx.send(1).unwrap();
    let in_block_on = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        rt.block_on(async move { rx.blocking_recv() })
    }));
    let message = panic_message(in_block_on.expect_err("blocking_recv returned in block_on"));
    assert!(message.contains(TOKIO_MESSAGE), "message: {message}");
    assert_eq!(rt.block_on(rt.spawn(async { 7 })).unwrap(), 7);
}

/// With the `tokio` feature, `blocking_recv` panics with tokio's message
/// wherever tokio's own does (a tokio task, a tokio runtime's `block_on`,
/// multi-thread or current-thread) and receives where tokio allows
/// blocking (`spawn_blocking`, `block_in_place`, a thread that only
/// entered a runtime's handle, any other thread), even when the value is
/// already there. Without the feature a tokio task is not detected, as
/// `blocking_recv`'s documentation says: the value is received.
///
/// Checks: O-5.
#[test]
fn blocking_recv_inside_tokio_follows_tokio() {
    const TOKIO_MESSAGE: &str = "Cannot block the current thread from within a runtime";
    let ready = || {
        let (tx, rx) = oneshot::channel::<u32>();
        tx.send(3).unwrap();
        rx
    };
    let detected = cfg!(feature = "tokio");
    let tokio_rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .build()
        .unwrap();

    let rx = ready();
    match tokio_rt.block_on(tokio_rt.spawn(async move { rx.blocking_recv() })) {
        Err(error) if detected => {
            let message = panic_message(error.into_panic());
            assert!(message.contains(TOKIO_MESSAGE), "message: {message}");
        }
        Ok(received) if !detected => assert_eq!(received, Ok(3)),
        other => panic!("in a tokio task, `tokio` feature {detected}: {other:?}"),
    }
    let rx = ready();
    let in_block_on = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        tokio_rt.block_on(async move { rx.blocking_recv() })
    }));
    match in_block_on {
        Err(payload) if detected => {
            let message = panic_message(payload);
            assert!(message.contains(TOKIO_MESSAGE), "message: {message}");
        }
        Ok(received) if !detected => assert_eq!(received, Ok(3)),
        other => panic!("in tokio's block_on, `tokio` feature {detected}: {other:?}"),
    }
    let current_thread = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let rx = ready();
    let in_current_thread = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        current_thread.block_on(async move { rx.blocking_recv() })
    }));
    assert_eq!(in_current_thread.is_err(), detected);

    // Where tokio allows blocking, the value arrives, feature or not.
    let rx = ready();
    let in_spawn_blocking = tokio_rt.spawn_blocking(move || rx.blocking_recv());
    assert_eq!(tokio_rt.block_on(in_spawn_blocking).unwrap(), Ok(3));
    let rx = ready();
    let in_block_in_place =
        tokio_rt.spawn(async move { tokio::task::block_in_place(move || rx.blocking_recv()) });
    assert_eq!(tokio_rt.block_on(in_block_in_place).unwrap(), Ok(3));
    let _entered = tokio_rt.enter();
    assert_eq!(ready().blocking_recv(), Ok(3));
}

/// `blocking_recv` returns the value sent from another thread, or
/// `RecvError` when the sender is dropped, and the errors say what
/// happened.
///
/// Checks: O-4, O-5.
#[test]
fn blocking_recv_returns_value_or_error() {
    let (tx, rx) = oneshot::channel();
    let sender = modelsync::sync::thread::spawn(move || tx.send(5u32).unwrap());
    assert_eq!(rx.blocking_recv(), Ok(5));
    sender.join().unwrap();
    let (tx, rx) = oneshot::channel::<u32>();
    drop(tx);
    let error = rx.blocking_recv().expect_err("the sender was dropped");
    assert_eq!(error.to_string(), "channel closed");
    assert_eq!(TryRecvError::Empty.to_string(), "channel empty");
    assert_eq!(TryRecvError::Closed.to_string(), "channel closed");
}
