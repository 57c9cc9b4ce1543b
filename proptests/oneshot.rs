//! State-machine test of the oneshot channel's single-threaded behaviour
//! against its sequential specification (`specs/oneshot.rs`, the one the
//! models' histories are checked against): every operation's result,
//! which waker is woken and how often, and that every value is dropped
//! exactly once.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use crate::harness::counting_waker as counting;
use crate::specs::oneshot::{Oneshot, Op, Ret, TryRecv};
use crate::support::step;
use modelsync::oneshot::{self, error::TryRecvError};

use crate::support::{panic_message, DropLog, Item};
use proptest::prelude::*;

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        Just(Op::Send(0)),
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

proptest! {
    #![proptest_config(crate::support::proptest_config(1024))]

    /// Random sequences of operations on both ends agree with the
    /// specification after every step: each result, and each waker's wake
    /// count.
    ///
    /// Checks: O-2, O-3, O-4, O-5, O-7.
    #[test]
    fn matches_reference_model(ops in proptest::collection::vec(op(), 1..12)) {
        let mut log = DropLog::default();
        let (tx, rx) = oneshot::channel::<Item>();
        let (mut tx, mut rx) = (Some(tx), Some(rx));
        let mut spec = Oneshot::default();
        let (rx_wakers, rx_wakes): (Vec<_>, Vec<_>) = (0..2).map(|_| counting()).unzip();
        let (tx_wakers, tx_wakes): (Vec<_>, Vec<_>) = (0..2).map(|_| counting()).unzip();

        for op in ops {
            let observed = match op {
                Op::Send(_) => {
                    let Some(sender) = tx.take() else { continue };
                    let item = log.item();
                    let id = item.id as usize;
                    let op = Op::Send(id);
                    let result = sender.send(item).map_err(|back| back.id as usize);
                    step(&mut spec, &op, Ret::Sent(result))?;
                    check_wakes(&spec, &rx_wakes, &tx_wakes)?;
                    continue;
                }
                Op::DropSender => {
                    if tx.take().is_none() { continue }
                    Ret::Unit
                }
                Op::PollRecv(waker) => {
                    let Some(receiver) = rx.as_mut() else { continue };
                    if spec.terminated {
                        // Terminated, by a ready poll or by `try_recv`
                        // returning a value or `Closed`: polling panics (O-5).
                        let cx = &mut Context::from_waker(&rx_wakers[waker]);
                        let polled = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                            let _ = Pin::new(&mut *receiver).poll(cx);
                        }));
                        prop_assert!(polled.is_err(), "a terminated receiver was polled without a panic");
                        continue;
                    }
                    match Pin::new(receiver).poll(&mut Context::from_waker(&rx_wakers[waker])) {
                        Poll::Ready(Ok(item)) => Ret::Recv(Some(Ok(item.id as usize))),
                        Poll::Ready(Err(_)) => Ret::Recv(Some(Err(()))),
                        Poll::Pending => Ret::Recv(None),
                    }
                }
                Op::TryRecv => {
                    let Some(receiver) = rx.as_mut() else { continue };
                    Ret::TryRecv(match receiver.try_recv() {
                        Ok(item) => Ok(item.id as usize),
                        Err(TryRecvError::Empty) => Err(TryRecv::Empty),
                        Err(TryRecvError::Closed) => Err(TryRecv::Closed),
                    })
                }
                Op::Close => {
                    let Some(receiver) = rx.as_mut() else { continue };
                    receiver.close();
                    Ret::Unit
                }
                Op::DropReceiver => {
                    if rx.take().is_none() { continue }
                    Ret::Unit
                }
                Op::PollClosed(waker) => {
                    let Some(sender) = tx.as_mut() else { continue };
                    Ret::Bool(sender.poll_closed(&mut Context::from_waker(&tx_wakers[waker])).is_ready())
                }
                Op::IsClosed => {
                    let Some(sender) = tx.as_ref() else { continue };
                    Ret::Bool(sender.is_closed())
                }
                Op::IsEmpty => {
                    let Some(receiver) = rx.as_ref() else { continue };
                    Ret::Bool(receiver.is_empty())
                }
                Op::IsTerminated => {
                    let Some(receiver) = rx.as_ref() else { continue };
                    Ret::Bool(receiver.is_terminated())
                }
                Op::Recv | Op::Closed => unreachable!("not drawn: they block"),
            };
            step(&mut spec, &op, observed)?;
            check_wakes(&spec, &rx_wakes, &tx_wakes)?;
        }
        drop((tx, rx));
        prop_assert_eq!(log.each_dropped_once(), Ok(()), "every value dropped exactly once");
    }
}

/// Each waker was woken as often as the specification says.
fn check_wakes(
    spec: &Oneshot,
    rx_wakes: &[crate::harness::WakeCount],
    tx_wakes: &[crate::harness::WakeCount],
) -> Result<(), TestCaseError> {
    prop_assert_eq!(
        [rx_wakes[0].get(), rx_wakes[1].get()],
        spec.rx.wakes,
        "receiver wakes"
    );
    prop_assert_eq!(
        [tx_wakes[0].get(), tx_wakes[1].get()],
        spec.tx.wakes,
        "sender wakes"
    );
    Ok(())
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
