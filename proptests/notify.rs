//! `Notify` against its sequential specification (`specs/notify.rs`, the
//! one the models' histories are checked against): one permit, a queue of
//! registered waiters (FIFO for `notify_one`, LIFO for `notify_last`), the
//! generation `notify_waiters` advances, forwarding by dropped waiters, and
//! which waker each notification wakes. Random sequences of create /
//! enable / poll (with one of three wakers) / drop / notify_one /
//! notify_last / notify_waiters are applied to both and compared after
//! every step: which futures are ready, and how many times each waker was
//! woken.

use std::future::Future;
use std::pin::Pin;
use std::task::Context;

use crate::harness::{counting_waker, WakeCount};
use crate::specs::notify::{Notify as Spec, Op as SpecOp, Ret};
use crate::support::step;
use modelsync::notify::{Notified, Notify};
use proptest::prelude::*;

const WAKERS: usize = 3;
const FUTURES: usize = 4;

#[derive(Debug, Clone, Copy)]
enum Op {
    /// Creates future `slot` (dropping the one there, if any).
    Create(usize),
    Enable(usize),
    /// Polls future `slot` with waker `waker`.
    Poll(usize, usize),
    Drop(usize),
    NotifyOne,
    NotifyLast,
    NotifyWaiters,
}

fn op() -> impl Strategy<Value = Op> {
    let slot = 0..FUTURES;
    prop_oneof![
        3 => slot.clone().prop_map(Op::Create),
        1 => slot.clone().prop_map(Op::Enable),
        4 => (slot.clone(), 0..WAKERS).prop_map(|(s, w)| Op::Poll(s, w)),
        2 => slot.prop_map(Op::Drop),
        2 => Just(Op::NotifyOne),
        1 => Just(Op::NotifyLast),
        1 => Just(Op::NotifyWaiters),
    ]
}

proptest! {
    #![proptest_config(crate::support::proptest_config(1024))]

    /// Random operation sequences agree with the specification after
    /// every step: readiness of every poll and `enable`, the wake count of
    /// every waker, and the permit.
    ///
    /// Checks: N-1, N-2, N-3, N-4, N-5.
    #[test]
    fn matches_reference_model(ops in proptest::collection::vec(op(), 1..40)) {
        let notify = Notify::new();
        let (wakers, counts): (Vec<_>, Vec<WakeCount>) = (0..WAKERS).map(|_| counting_waker()).unzip();
        let mut spec = Spec::default();
        let mut futures: Vec<Option<(u64, Pin<Box<Notified<'_>>>)>> = (0..FUTURES).map(|_| None).collect();
        let mut next_id = 0u64;
        for op in ops {
            match op {
                Op::Create(slot) => {
                    if let Some((id, f)) = futures[slot].take() {
                        drop(f);
                        step(&mut spec, &SpecOp::Drop(id), Ret::Unit)?;
                    }
                    futures[slot] = Some((next_id, Box::pin(notify.notified())));
                    step(&mut spec, &SpecOp::Create(next_id), Ret::Unit)?;
                    next_id += 1;
                }
                Op::Enable(slot) => {
                    let Some((id, f)) = futures[slot].as_mut() else { continue };
                    let ready = f.as_mut().enable();
                    step(&mut spec, &SpecOp::Enable(*id), Ret::Ready(ready))?;
                }
                Op::Poll(slot, waker) => {
                    let Some((id, f)) = futures[slot].as_mut() else { continue };
                    let ready = f.as_mut().poll(&mut Context::from_waker(&wakers[waker])).is_ready();
                    step(&mut spec, &SpecOp::Poll(*id, waker), Ret::Ready(ready))?;
                }
                Op::Drop(slot) => {
                    if let Some((id, f)) = futures[slot].take() {
                        drop(f);
                        step(&mut spec, &SpecOp::Drop(id), Ret::Unit)?;
                    }
                }
                Op::NotifyOne => {
                    notify.notify_one();
                    step(&mut spec, &SpecOp::NotifyOne, Ret::Unit)?;
                }
                Op::NotifyLast => {
                    notify.notify_last();
                    step(&mut spec, &SpecOp::NotifyLast, Ret::Unit)?;
                }
                Op::NotifyWaiters => {
                    notify.notify_waiters();
                    step(&mut spec, &SpecOp::NotifyWaiters, Ret::Unit)?;
                }
            }
            let wakes: Vec<usize> = counts.iter().map(WakeCount::get).collect();
            prop_assert_eq!(&wakes[..], &spec.wakes[..WAKERS], "wake counts after {:?}", op);
            prop_assert_eq!(notify.has_permit(), spec.permit, "permit after {:?}", op);
        }
        // Dropping the rest may forward notifications (N-4).
        for slot in futures.iter_mut() {
            if let Some((id, f)) = slot.take() {
                drop(f);
                step(&mut spec, &SpecOp::Drop(id), Ret::Unit)?;
            }
        }
        // At most one permit (N-1): a new future finds it exactly when the
        // specification holds it, and a second one does not.
        let mut probe = Box::pin(notify.notified());
        let mut cx = Context::from_waker(&wakers[0]);
        prop_assert_eq!(probe.as_mut().poll(&mut cx).is_ready(), spec.permit);
        let mut second = Box::pin(notify.notified());
        prop_assert!(second.as_mut().poll(&mut cx).is_pending(), "a second permit was stored");
    }
}

/// A waiter chosen by `notify_one` or `notify_last` and dropped before it
/// completes passes the notification on by the strategy that chose it, as
/// tokio's does: to the oldest waiter left after `notify_one`, to the newest
/// after `notify_last`, and again by the same strategy when that one is
/// dropped in turn. Each waiter has its own waker, so the test sees which
/// one was woken, not only how many. (The reference model covers this too,
/// but reaches it only when a random sequence happens to register three
/// waiters before a `notify_last`.)
///
/// Checks: N-4.
#[test]
fn forwarding_keeps_the_strategy() {
    for lifo in [false, true] {
        let notify = Notify::new();
        let (wakers, counts): (Vec<_>, Vec<WakeCount>) = (0..4).map(|_| counting_waker()).unzip();
        let mut waiters: Vec<_> = (0..4).map(|_| Some(Box::pin(notify.notified()))).collect();
        for (waiter, waker) in waiters.iter_mut().zip(&wakers) {
            let waiter = waiter.as_mut().expect("created");
            assert!(waiter
                .as_mut()
                .poll(&mut Context::from_waker(waker))
                .is_pending());
        }
        if lifo {
            notify.notify_last();
        } else {
            notify.notify_one();
        }
        // Chosen, then forwarded to, in registration order 0..4.
        let order: [usize; 3] = if lifo { [3, 2, 1] } else { [0, 1, 2] };
        for forwarded in 1..order.len() {
            let dropped = order[forwarded - 1];
            drop(waiters[dropped].take());
            // Woken once each: the chosen waiter and every one forwarded to.
            let mut expected = [0; 4];
            for &w in &order[..=forwarded] {
                expected[w] = 1;
            }
            let woken: Vec<usize> = counts.iter().map(WakeCount::get).collect();
            assert_eq!(
                woken, expected,
                "lifo {lifo}: after dropping waiter {dropped}"
            );
        }
        let last = order[2];
        for (i, (waiter, waker)) in waiters.iter_mut().zip(&wakers).enumerate() {
            let Some(waiter) = waiter else { continue };
            let ready = waiter
                .as_mut()
                .poll(&mut Context::from_waker(waker))
                .is_ready();
            assert_eq!(ready, i == last, "lifo {lifo}: waiter {i}");
        }
        assert!(
            !notify.has_permit(),
            "lifo {lifo}: a forwarded notification was also stored"
        );
    }
}

/// Registering, waiting, being notified (one, last, all) and forwarding on
/// drop allocate nothing: a waiter is a node inside its own future, and
/// `notify_waiters` wakes from a fixed batch on its stack.
///
/// Checks: N-7.
#[test]
fn waiting_allocates_nothing() {
    let notify = Notify::new();
    let (waker, _) = counting_waker();
    let mut cx = Context::from_waker(&waker);
    let before = crate::support::allocations::on_this_thread();
    for _ in 0..50 {
        let mut b = std::pin::pin!(notify.notified());
        let mut c = std::pin::pin!(notify.notified());
        {
            // `pin!` keeps a future until its scope ends: `a` is dropped at
            // the end of this block.
            let mut a = std::pin::pin!(notify.notified());
            assert!(a.as_mut().poll(&mut cx).is_pending());
            assert!(!b.as_mut().enable());
            assert!(c.as_mut().poll(&mut cx).is_pending());
            notify.notify_last();
            assert!(c.as_mut().poll(&mut cx).is_ready());
            notify.notify_one(); // chooses `a`, the oldest
        } // `a` dropped unconsumed: forwards to `b`
        assert!(b.as_mut().poll(&mut cx).is_ready());
        let mut d = std::pin::pin!(notify.notified());
        assert!(d.as_mut().poll(&mut cx).is_pending());
        notify.notify_waiters();
        assert!(d.as_mut().poll(&mut cx).is_ready());
        notify.notify_one();
        assert!(std::pin::pin!(notify.notified()).poll(&mut cx).is_ready());
    }
    let allocated = crate::support::allocations::on_this_thread() - before;
    assert_eq!(allocated, 0, "waiting allocated {allocated} times");
}

/// `notify_waiters` completes and wakes every earlier waiter when there are
/// more of them than it wakes in one batch with the lock released (32 in
/// std builds; the models cross a batch of 2): every registered future
/// once, each waker once, an enabled future without a waker too, a future
/// created before it but never polled too, and one created after it not at
/// all.
///
/// Checks: N-3.
#[test]
fn notify_waiters_wakes_more_than_a_batch() {
    const WAITERS: usize = 100;
    let notify = Notify::new();
    let (wakers, counts): (Vec<_>, Vec<WakeCount>) = (0..WAITERS).map(|_| counting_waker()).unzip();
    let mut futures: Vec<_> = (0..WAITERS).map(|_| Box::pin(notify.notified())).collect();
    for (i, future) in futures.iter_mut().enumerate() {
        // Every third one only enabled: notified, with no waker to wake.
        let pending = if i % 3 == 0 {
            !future.as_mut().enable()
        } else {
            let mut cx = Context::from_waker(&wakers[i]);
            future.as_mut().poll(&mut cx).is_pending()
        };
        assert!(pending, "future {i} completed before any notification");
    }
    let mut unpolled = Box::pin(notify.notified());
    notify.notify_waiters();
    for (i, future) in futures.iter_mut().enumerate() {
        let expected = usize::from(i % 3 != 0);
        assert_eq!(
            counts[i].get(),
            expected,
            "waker {i} woken {} times",
            counts[i].get()
        );
        let mut cx = Context::from_waker(&wakers[i]);
        assert!(
            future.as_mut().poll(&mut cx).is_ready(),
            "future {i} not completed"
        );
    }
    let mut cx = Context::from_waker(&wakers[0]);
    assert!(
        unpolled.as_mut().poll(&mut cx).is_ready(),
        "created before, never polled: completed too"
    );
    let mut after = Box::pin(notify.notified());
    assert!(
        after.as_mut().poll(&mut cx).is_pending(),
        "created after: not completed"
    );
    assert!(!notify.has_permit(), "notify_waiters stored a permit");
}

static STATIC_NOTIFY: Notify = Notify::const_new();

/// The API a tokio user relies on: a `static` through `const_new`,
/// `Default`, `Debug`, `Send + Sync` for `Notify` and both futures,
/// `UnwindSafe + RefUnwindSafe` for `Notify`, fused futures, and
/// `notified_owned` giving a `'static` future.
///
/// Checks: N-1, N-6.
#[test]
fn tokio_compatible_api() {
    fn send_sync<T: Send + Sync>() {}
    fn unwind_safe<T: std::panic::UnwindSafe + std::panic::RefUnwindSafe>() {}
    fn is_static<T: 'static>(_: &T) {}
    send_sync::<Notify>();
    send_sync::<Notified<'static>>();
    send_sync::<modelsync::notify::OwnedNotified>();
    unwind_safe::<Notify>();

    let (waker, _) = counting_waker();
    let mut cx = Context::from_waker(&waker);
    STATIC_NOTIFY.notify_one();
    let mut fused = std::pin::pin!(STATIC_NOTIFY.notified());
    assert!(fused.as_mut().poll(&mut cx).is_ready());
    assert!(fused.as_mut().poll(&mut cx).is_ready(), "not fused");

    let notify = std::sync::Arc::new(Notify::default());
    let owned = notify.clone().notified_owned();
    is_static(&owned);
    let mut owned = std::pin::pin!(owned);
    assert!(owned.as_mut().poll(&mut cx).is_pending());
    assert!(format!("{notify:?}").contains("waiting"), "{notify:?}");
    notify.notify_waiters();
    assert!(owned.as_mut().poll(&mut cx).is_ready());
    assert!(
        format!("{notify:?}").contains("notify_waiters_calls: 1"),
        "{notify:?}"
    );
}

fn multi_thread_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(4)
        .build()
        .unwrap()
}

/// 100 tasks on tokio's multi-thread runtime pass a token around a ring
/// 100 times, each waiting on its own `Notify` and notifying the next: a
/// lost wake-up or permit would hang the ring.
///
/// Checks: N-1, N-9.
#[test]
#[cfg_attr(miri, ignore)] // tokio's runtime is too slow under Miri
fn token_ring_on_a_multi_thread_runtime() {
    const TASKS: usize = 100;
    const ROUNDS: usize = 100;
    let rt = multi_thread_runtime();
    let notifies: std::sync::Arc<Vec<Notify>> =
        std::sync::Arc::new((0..TASKS).map(|_| Notify::new()).collect());
    let passes = std::sync::Arc::new(modelsync::sync::atomic::AtomicUsize::new(0));
    rt.block_on(async {
        let tasks: Vec<_> = (0..TASKS)
            .map(|i| {
                let (notifies, passes) = (notifies.clone(), passes.clone());
                tokio::spawn(async move {
                    for _ in 0..ROUNDS {
                        notifies[i].notified().await;
                        passes.fetch_add(1, modelsync::sync::atomic::Ordering::Relaxed);
                        notifies[(i + 1) % TASKS].notify_one();
                    }
                })
            })
            .collect();
        notifies[0].notify_one();
        for t in tasks {
            t.await.unwrap();
        }
    });
    assert_eq!(
        passes.load(modelsync::sync::atomic::Ordering::Relaxed),
        TASKS * ROUNDS
    );
}

/// The bounded channel tokio's documentation builds from two `Notify`s,
/// registering with `enable` before checking the queue so that no wake-up
/// is lost between the check and the wait: 4 producers send 100,000
/// values to 3 consumers through a capacity of 16. Every value arrives
/// exactly once, and nobody hangs.
///
/// Checks: N-1, N-2.
#[test]
#[cfg_attr(miri, ignore)] // tokio's runtime is too slow under Miri
fn mpmc_channel_from_two_notifies() {
    use std::collections::VecDeque;
    use std::sync::Arc;

    const PRODUCERS: usize = 4;
    const CONSUMERS: usize = 3;
    const PER_PRODUCER: usize = 25_000;
    const CAPACITY: usize = 16;

    struct Channel {
        queue: modelsync::sync::Mutex<VecDeque<Option<usize>>>,
        not_empty: Notify,
        not_full: Notify,
    }

    impl Channel {
        async fn send(&self, value: Option<usize>) {
            loop {
                let mut waiting = std::pin::pin!(self.not_full.notified());
                waiting.as_mut().enable();
                {
                    let mut queue = self.queue.lock();
                    if queue.len() < CAPACITY {
                        queue.push_back(value);
                        drop(queue);
                        self.not_empty.notify_one();
                        return;
                    }
                }
                waiting.await;
            }
        }

        async fn recv(&self) -> Option<usize> {
            loop {
                let mut waiting = std::pin::pin!(self.not_empty.notified());
                waiting.as_mut().enable();
                {
                    let mut queue = self.queue.lock();
                    if let Some(value) = queue.pop_front() {
                        drop(queue);
                        self.not_full.notify_one();
                        return value;
                    }
                }
                waiting.await;
            }
        }
    }

    let rt = multi_thread_runtime();
    let channel = Arc::new(Channel {
        queue: modelsync::sync::Mutex::new(VecDeque::new()),
        not_empty: Notify::new(),
        not_full: Notify::new(),
    });
    let mut received: Vec<usize> = rt.block_on(async {
        let consumers: Vec<_> = (0..CONSUMERS)
            .map(|_| {
                let channel = channel.clone();
                tokio::spawn(async move {
                    let mut got = Vec::new();
                    while let Some(value) = channel.recv().await {
                        got.push(value);
                    }
                    got
                })
            })
            .collect();
        let producers: Vec<_> = (0..PRODUCERS)
            .map(|p| {
                let channel = channel.clone();
                tokio::spawn(async move {
                    for i in 0..PER_PRODUCER {
                        channel.send(Some(p * PER_PRODUCER + i)).await;
                    }
                })
            })
            .collect();
        for p in producers {
            p.await.unwrap();
        }
        for _ in 0..CONSUMERS {
            channel.send(None).await;
        }
        let mut all = Vec::new();
        for c in consumers {
            all.extend(c.await.unwrap());
        }
        all
    });
    received.sort_unstable();
    assert_eq!(
        received.len(),
        PRODUCERS * PER_PRODUCER,
        "values lost or doubled"
    );
    assert!(
        received.iter().enumerate().all(|(i, &v)| i == v),
        "values lost or doubled"
    );
}
