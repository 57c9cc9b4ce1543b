//! Models of `block_on` (`src/block_on.rs`): futures woken from another
//! thread, before the first poll, between a poll and the park, or while the
//! thread is parked, and the thread's cached parker reused across calls.
//!
//! Written once for loom, shuttle and std stress (see `check/src/lib.rs`).

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use crate::harness::{model, Reach};
use modelsync::sync::atomic::{AtomicBool, Ordering::*};
use modelsync::sync::{thread, Arc, Mutex};

/// A future that completes once another thread sets its flag and wakes
/// the waker it registered.
struct WokenFromAnotherThread {
    ready: Arc<AtomicBool>,
    waker: Arc<Mutex<Option<Waker>>>,
    polls: usize,
}

impl WokenFromAnotherThread {
    /// The future, and the thread that readies and wakes it.
    fn spawn() -> (Self, thread::JoinHandle<()>) {
        let ready = Arc::new(AtomicBool::new(false));
        let waker: Arc<Mutex<Option<Waker>>> = Arc::new(Mutex::new(None));
        let waking = {
            let (ready, waker) = (ready.clone(), waker.clone());
            thread::spawn(move || {
                // Release: publishes readiness to the future's Acquire load.
                ready.store(true, Release);
                if let Some(w) = waker.lock().take() {
                    w.wake();
                }
            })
        };
        let future = WokenFromAnotherThread {
            ready,
            waker,
            polls: 0,
        };
        (future, waking)
    }
}

impl Future for WokenFromAnotherThread {
    type Output = usize;
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<usize> {
        self.polls += 1;
        *self.waker.lock() = Some(cx.waker().clone());
        // Acquire: pairs with the waking thread's Release store.
        if self.ready.load(Acquire) {
            Poll::Ready(self.polls)
        } else {
            Poll::Pending
        }
    }
}

/// `block_on` of a future woken from another thread: the wake is never
/// lost whether it arrives before the first poll, between poll and park,
/// or while the thread is parked.
///
/// Checks: B-2, P-1.
#[test]
fn block_on_woken_from_another_thread() {
    let pended = Reach::new("future_pended_then_woken");
    let r = pended.clone();
    model!().reach(&pended).check(move || {
        let (future, waking) = WokenFromAnotherThread::spawn();
        let polls = modelsync::block_on(future);
        waking.join().unwrap();
        r.hit_if(polls > 1);
    });
}

/// `block_on` reuses one parker per thread: the wakes of one call do not
/// make a later call on the same thread miss its own wake-up.
///
/// Checks: B-1, B-2.
#[test]
fn block_on_twice_on_one_thread() {
    let second_pended = Reach::new("second_call_pended");
    let r = second_pended.clone();
    model!()
        // Its complete run is too long for a pull request (VERIFICATION.md
        // gives it); the nightly runs it.
        .preemption_bound(3)
        .reach(&second_pended)
        .check(move || {
            for call in 0..2 {
                let (future, waking) = WokenFromAnotherThread::spawn();
                let polls = modelsync::block_on(future);
                if call == 1 {
                    r.hit_if(polls > 1);
                }
                waking.join().unwrap();
            }
        });
}
