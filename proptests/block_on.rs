//! `block_on` against a reference count of polls: a future that wakes
//! itself (synchronously, or from another thread) `n` times is polled
//! exactly `n + 1` times and returns its output; nested calls panic.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use crate::support::panic_message;
use proptest::prelude::*;

/// Completes after `wakes.len()` pending polls; before each pending return
/// it wakes its waker on this thread (`false`) or from a new thread
/// (`true`). Counts its polls.
struct WakesThenCompletes {
    wakes: Vec<bool>,
    polls: usize,
    wakers: Vec<modelsync::sync::thread::JoinHandle<()>>,
}

impl Future for WakesThenCompletes {
    type Output = (usize, Vec<modelsync::sync::thread::JoinHandle<()>>);
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        self.polls += 1;
        let Some(from_thread) = self.wakes.pop() else {
            return Poll::Ready((self.polls, std::mem::take(&mut self.wakers)));
        };
        let waker = cx.waker().clone();
        if from_thread {
            self.wakers
                .push(modelsync::sync::thread::spawn(move || waker.wake()));
        } else {
            waker.wake();
        }
        Poll::Pending
    }
}

proptest! {
    #![proptest_config(crate::support::proptest_config(256))]

    /// Every wake, from this thread or another, leads to exactly one more
    /// poll, across several calls on the same thread: a stale permit
    /// carried into the next call would cost an extra poll, and a missed
    /// wake would hang.
    ///
    /// Checks: B-1, B-2.
    #[test]
    fn polls_once_per_wake(calls in proptest::collection::vec(
        proptest::collection::vec(any::<bool>(), 0..6), 1..4)
    ) {
        for wakes in calls {
            let expected = wakes.len() + 1;
            let (polls, wakers) = modelsync::block_on(WakesThenCompletes {
                wakes,
                polls: 0,
                wakers: Vec::new(),
            });
            for waker in wakers {
                waker.join().unwrap();
            }
            prop_assert_eq!(polls, expected);
        }
    }
}

/// `block_on` inside `block_on` on the same thread panics with a message,
/// and the thread's cached parker works again afterwards.
///
/// Checks: B-3.
#[test]
fn nested_block_on_panics_with_message() {
    let nested = std::panic::catch_unwind(|| {
        modelsync::block_on(async { modelsync::block_on(async { 1 }) })
    });
    let message = panic_message(nested.expect_err("nested block_on"));
    assert!(
        message.contains("inside another block_on"),
        "message: {message}"
    );
    assert_eq!(modelsync::block_on(async { 2 }), 2);
}
