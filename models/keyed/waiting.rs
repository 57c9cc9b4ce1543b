// The keyed channel's waiting (`src/keyed/waiting.rs`), over the real room
// and slot list: its subject, scope, regimes and models, checked against
// `specs/waiting.rs`. Included by `models/keyed.rs` (`include!`, not a
// module), so that its tests keep their names (`keyed::waiting_...`),
// which the mutation records, the kill matrix and VERIFICATION.md use.

use crate::specs::waiting as wspec;
use modelsync::internals::keyed::{WaitingChannel, WaitingReceiver};

/// The waiting's flavours as its scenarios run them: the async flavour's
/// operations wait through the scenario's `Waiter` and may be given up;
/// the sync flavour's block their thread, so its scenarios are drawn so
/// that each can complete (`sync_completable`).
trait WaitingFlavour: 'static {
    const NAME: &'static str;
    const RUST_TYPE: &'static str;
    const SYNC: bool;
    fn channel(
        capacity: usize,
    ) -> (
        std::sync::Arc<WaitingChannel<Tracked>>,
        WaitingReceiver<Tracked>,
    );
    /// `None`: given up.
    fn send(
        channel: &WaitingChannel<Tracked>,
        value: Tracked,
        waiter: &Waiter,
    ) -> Option<Result<(), Tracked>>;
    fn recv(receiver: &mut WaitingReceiver<Tracked>, waiter: &Waiter) -> Option<Tracked>;
    /// One poll of the async send, the future dropped after it: `None`
    /// if it was pending.
    fn send_polled_once(
        _channel: &WaitingChannel<Tracked>,
        _value: Tracked,
    ) -> Option<Result<(), Tracked>> {
        unreachable!("the sync flavour has no futures")
    }
    /// One poll of the async receive, the future dropped after it.
    fn recv_polled_once(_receiver: &mut WaitingReceiver<Tracked>) -> Option<Tracked> {
        unreachable!("the sync flavour has no futures")
    }
}

/// Polls `future` once with a waker that does nothing (a task that polls
/// once and moves on), then drops it.
fn poll_once<F: Future>(future: F) -> Option<F::Output> {
    struct Nothing;
    impl std::task::Wake for Nothing {
        fn wake(self: std::sync::Arc<Self>) {}
    }
    let waker = std::task::Waker::from(std::sync::Arc::new(Nothing));
    let future = std::pin::pin!(future);
    match future.poll(&mut Context::from_waker(&waker)) {
        std::task::Poll::Ready(out) => Some(out),
        std::task::Poll::Pending => None,
    }
}

impl WaitingFlavour for Blocking {
    const NAME: &'static str = "keyed_waiting (sync)";
    const RUST_TYPE: &'static str = "WaitingSubject<Blocking>";
    const SYNC: bool = true;
    fn channel(
        capacity: usize,
    ) -> (
        std::sync::Arc<WaitingChannel<Tracked>>,
        WaitingReceiver<Tracked>,
    ) {
        WaitingChannel::sync(capacity)
    }
    fn send(
        channel: &WaitingChannel<Tracked>,
        value: Tracked,
        _: &Waiter,
    ) -> Option<Result<(), Tracked>> {
        Some(channel.send_blocking(value))
    }
    fn recv(receiver: &mut WaitingReceiver<Tracked>, _: &Waiter) -> Option<Tracked> {
        Some(receiver.recv_blocking())
    }
}

impl WaitingFlavour for Async {
    const NAME: &'static str = "keyed_waiting (async)";
    const RUST_TYPE: &'static str = "WaitingSubject<Async>";
    const SYNC: bool = false;
    fn channel(
        capacity: usize,
    ) -> (
        std::sync::Arc<WaitingChannel<Tracked>>,
        WaitingReceiver<Tracked>,
    ) {
        WaitingChannel::asynchronous(capacity)
    }
    fn send(
        channel: &WaitingChannel<Tracked>,
        value: Tracked,
        waiter: &Waiter,
    ) -> Option<Result<(), Tracked>> {
        poll_until(channel.send(value), waiter)
    }
    fn recv(receiver: &mut WaitingReceiver<Tracked>, waiter: &Waiter) -> Option<Tracked> {
        poll_until(receiver.recv(), waiter)
    }
    fn send_polled_once(
        channel: &WaitingChannel<Tracked>,
        value: Tracked,
    ) -> Option<Result<(), Tracked>> {
        poll_once(channel.send(value))
    }
    fn recv_polled_once(receiver: &mut WaitingReceiver<Tracked>) -> Option<Tracked> {
        poll_once(receiver.recv())
    }
}

/// The waiting as generated scenarios see it, at capacity 1: thread 1
/// receives (it owns the receiver) and may close, the other threads send;
/// the main thread sends and receives before and after.
struct WaitingSubject<F>(std::marker::PhantomData<F>);

#[derive(Clone, Debug, PartialEq)]
enum WaitOp {
    Send(usize),
    Recv,
    Close,
    /// The async flavour's: one poll of a send, dropped if pending.
    SendPolledOnce(usize),
    /// The async flavour's: one poll of a receive, dropped if pending.
    RecvPolledOnce,
}

struct WaitEnds {
    channel: std::sync::Arc<WaitingChannel<Tracked>>,
    receiver: Option<WaitingReceiver<Tracked>>,
}

const WAITING_CAPACITY: usize = 1;

/// Makes a scenario's sync operations able to complete in every
/// schedule, since a blocked thread cannot be given up: the sequential
/// parts never block (a send on a full channel becomes a receive, a
/// receive on an empty one a send), the receiver receives no more than
/// is sent before it closes, and what is sent beyond what it receives
/// fits (else it closes last, which ends every blocked send). No
/// hand-offs (one could wait on a thread that waits on it).
fn sync_completable(mut scenario: Scenario<WaitOp>) -> Scenario<WaitOp> {
    fn sequential(ops: &mut [WaitOp], queued: &mut usize, closed: bool) {
        for op in ops {
            match op {
                WaitOp::Send(_) if !closed && *queued == WAITING_CAPACITY => *op = WaitOp::Recv,
                WaitOp::Recv if *queued == 0 => *op = WaitOp::Send(0),
                _ => {}
            }
            match op {
                WaitOp::Send(_) if !closed => *queued += 1,
                WaitOp::Recv => *queued -= 1,
                _ => {}
            }
        }
    }
    scenario.handoffs.clear();
    let mut queued = 0;
    sequential(&mut scenario.init, &mut queued, false);
    let sent: usize = scenario.threads[1..]
        .iter()
        .flatten()
        .filter(|op| matches!(op, WaitOp::Send(_)))
        .count();
    let receiver = &mut scenario.threads[0];
    let closes = receiver.contains(&WaitOp::Close);
    receiver.retain(|op| *op == WaitOp::Recv);
    receiver.truncate(queued + sent);
    let received = receiver.len();
    let closed = closes || queued + sent - received > WAITING_CAPACITY || receiver.is_empty();
    if closed {
        receiver.push(WaitOp::Close);
    } else {
        queued = queued + sent - received;
    }
    if closed {
        // How much got in before the close depends on the schedule: the
        // final part only sends (each refused).
        scenario.post.retain(|op| matches!(op, WaitOp::Send(_)));
    } else {
        sequential(&mut scenario.post, &mut queued, false);
    }
    scenario
}

impl<F: WaitingFlavour> Subject for WaitingSubject<F> {
    type Spec = wspec::Waiting;
    type Op = WaitOp;
    type Actor = WaitEnds;
    const NAME: &'static str = F::NAME;
    const RUST_TYPE: &'static str = F::RUST_TYPE;

    fn items(scenario: &Scenario<WaitOp>) -> usize {
        scenario
            .ops()
            .filter(|op| matches!(op, WaitOp::Send(_) | WaitOp::SendPolledOnce(_)))
            .count()
    }

    fn canonical(mut scenario: Scenario<WaitOp>) -> Scenario<WaitOp> {
        let mut next = 0;
        for op in scenario.ops_mut() {
            if let WaitOp::Send(item) | WaitOp::SendPolledOnce(item) = op {
                *item = next;
                next += 1;
            }
        }
        scenario
    }

    fn setup(_: &Scenario<WaitOp>) -> (wspec::Waiting, WaitEnds) {
        let (channel, receiver) = F::channel(WAITING_CAPACITY);
        let ends = WaitEnds {
            channel,
            receiver: Some(receiver),
        };
        (wspec::Waiting::new(WAITING_CAPACITY), ends)
    }

    fn split(main: &mut WaitEnds, _: &Scenario<WaitOp>, thread: usize) -> WaitEnds {
        WaitEnds {
            channel: main.channel.clone(),
            receiver: if thread == 1 {
                main.receiver.take()
            } else {
                None
            },
        }
    }

    fn merge(main: &mut WaitEnds, joined: WaitEnds) {
        if joined.receiver.is_some() {
            main.receiver = joined.receiver;
        }
    }

    fn run(
        ends: &mut WaitEnds,
        op: &WaitOp,
        rec: &ThreadRecorder<wspec::Waiting>,
        waiter: &Waiter,
        ledger: &Ledger,
    ) {
        use wspec::{Op, Ret};
        match *op {
            WaitOp::Send(item) => {
                let value = ledger.item(item);
                let call = rec.call(Op::Send(item));
                match F::send(&ends.channel, value, waiter) {
                    Some(Ok(())) => rec.returned(call, Ret::Sent),
                    Some(Err(_refused)) => rec.returned(call, Ret::Closed),
                    None => rec.gave_up(call),
                }
            }
            WaitOp::Recv => {
                let Some(receiver) = ends.receiver.as_mut() else {
                    return;
                };
                let call = rec.call(Op::Recv);
                match F::recv(receiver, waiter) {
                    Some(value) => {
                        rec.returned(call, Ret::Received(value.id()));
                        ledger.deliver(value);
                    }
                    None => rec.gave_up(call),
                }
            }
            WaitOp::Close => {
                let Some(receiver) = ends.receiver.as_mut() else {
                    return;
                };
                rec.op(Op::Close, || receiver.close(), |_| Ret::Unit);
            }
            WaitOp::SendPolledOnce(item) => {
                let value = ledger.item(item);
                rec.op(
                    Op::SendPolledOnce(item),
                    || F::send_polled_once(&ends.channel, value),
                    |sent| match sent {
                        Some(Ok(())) => Ret::Sent,
                        Some(Err(_refused)) => Ret::Closed,
                        None => Ret::Pending,
                    },
                );
            }
            WaitOp::RecvPolledOnce => {
                let Some(receiver) = ends.receiver.as_mut() else {
                    return;
                };
                let received = rec.op(
                    Op::RecvPolledOnce,
                    || F::recv_polled_once(receiver),
                    |received| match received {
                        Some(value) => Ret::Received(value.id()),
                        None => Ret::Pending,
                    },
                );
                if let Some(value) = received {
                    ledger.deliver(value);
                }
            }
        }
    }

    fn rust(op: &WaitOp) -> String {
        format!("WaitOp::{op:?}")
    }

    fn scenarios() -> BoxedStrategy<Scenario<WaitOp>> {
        use proptest::prelude::*;
        let main = prop_oneof![
            1 => Just(WaitOp::Send(0)),
            1 => Just(WaitOp::Recv),
        ]
        .boxed();
        let receiver = prop_oneof![
            4 => Just(WaitOp::Recv),
            1 => Just(WaitOp::Close),
        ]
        .boxed();
        let sender = Just(WaitOp::Send(0)).boxed();
        (2usize..=3)
            .prop_flat_map(move |threads| {
                let mut parts = vec![receiver.clone()];
                parts.extend((1..threads).map(|_| sender.clone()));
                scenario::shape(main.clone(), parts, main.clone(), [2, 3, 2])
            })
            .prop_map(|scenario| {
                let mut scenario = if F::SYNC {
                    sync_completable(scenario)
                } else {
                    scenario
                };
                // The receiver closes once, and receives nothing after.
                let mut closed = false;
                for op in scenario.threads[0]
                    .iter_mut()
                    .chain(scenario.post.iter_mut())
                {
                    if closed && matches!(op, WaitOp::Close) {
                        *op = WaitOp::Recv;
                    }
                    closed |= *op == WaitOp::Close;
                }
                // Items numbered in scenario order, as a scope's are.
                Self::canonical(scenario)
            })
            .boxed()
    }
}

/// The waiting's complete run, sync flavour: generated scenarios of a
/// receiver thread receiving (and perhaps closing) and a sender thread,
/// at most 2 operations each, at capacity 1 over the real room and slot
/// list, with at most 2 operations before and after; every execution of
/// each explored (both passes, no preemption bound; the run fails
/// otherwise); every history checked against `specs/waiting.rs`, and a
/// lost wake-up is a deadlock loom reports.
///
/// Nightly: the main job's complete run is `keyed::waiting_sync_scope_complete`, every
/// scenario of a stated scope; these drawn scenarios complement it (their
/// initial and final parts drawn, where the scope fixes them).
///
/// Checks: K-3, K-7.
#[test]
fn waiting_sync_complete_scenarios() {
    scenario::generated_complete::<WaitingSubject<Blocking>>(
        model!().nightly(),
        Small {
            scenarios: 16,
            threads: 2,
            sizes: [2, 2, 2],
        },
    );
}

/// The waiting's complete run, async flavour: a receiving thread and a
/// sending thread of 1 operation each, with up to 3 before (so that the
/// channel may be full or empty when they start) and 2 after; a blocked
/// send or receive is given up (cancelled) when nothing else can run, and
/// its give-up check fails the history if the specification lets it
/// return (a lost wake-up). Two operations per thread do not all finish
/// with no preemption bound within the budget (2 of 16 with weak memory, 3 in the
/// real-time pass, measured 2026-11-27).
///
/// Nightly: the main job's complete run is `keyed::waiting_async_scope_complete`, every
/// scenario of a stated scope; these drawn scenarios complement it (their
/// initial and final parts drawn, where the scope fixes them).
///
/// Checks: K-3, K-7.
#[test]
fn waiting_async_complete_scenarios() {
    scenario::generated_complete::<WaitingSubject<Async>>(
        model!().nightly(),
        Small {
            scenarios: 32,
            threads: 2,
            sizes: [3, 1, 2],
        },
    );
}

/// The waiting's scope, async flavour, at `threads` threads of `lengths`
/// operations each (waiting-async-2x1, the main job's; waiting-async-3x1
/// and waiting-async-2x2, the nightly's one size up): the receiver's
/// thread calls receive, one poll of a receive, close; each sender's
/// thread send, one poll of a send; at capacity 1 over the real room and
/// slot list; from each regime of the waiting's state; then the main
/// thread polls a receive once (what is left). The receiver is one
/// thread's role alone, so the third thread of waiting-async-3x1 is a
/// second sender: the senders are interchangeable.
///
/// The regimes are the situations the waiting's parts can be in when a
/// race begins (`src/keyed/waiting.rs`): fresh; full (a send must
/// sleep); drained (the senders' view of the room stale, the next place
/// the second of its block); the receiver's announcement standing (a
/// receive that waited and was cancelled: the next write must wake, and
/// nobody is there); a wake-up kept for the receiver (the write that
/// answered that announcement notified nobody: the `Notify` keeps a
/// permit, so the next receive's wait ends at once and it must look
/// again); closed with a value left; and a block read and recycled with
/// the room's counts wrapped (three sends and receives). A notification
/// kept for the senders (`space`'s permit) is no regime: it is left only
/// by a sleeper chosen and cancelled at once, which needs a race; the
/// concurrent part reaches it. A sender counted asleep is no regime
/// either: a sleeper is a thread in the middle of its call. At capacity
/// 1 the senders' view of the room lags by one receive at most, so the
/// larger sizes need no other regime. One operation per thread is what
/// the races need once a regime is set up: a receive racing a send on an
/// empty channel (the announcement and the write: exactly one sees the
/// other), a receive racing a sleeping send on a full one (the room's
/// count and the wake), a close racing a sleeping send. One size up: two
/// senders asleep on a full channel racing one receive's wake and the
/// close (three threads: most of those scenarios exceed the complete
/// run's budget, HISTORY.md, 2026-11-28, hence a bound where one does
/// not), or a thread's two calls (a cancelled poll and the next call)
/// racing the other's. The whole channel's hand-written models race two
/// senders for the room too (`senders_share_the_room`,
/// `capacity_freed_by_a_concurrent_receive`).
fn waiting_scope(threads: usize, lengths: (usize, usize)) -> scope::Scope<WaitingSubject<Async>> {
    use WaitOp::*;
    let mut alphabets = vec![vec![Recv, RecvPolledOnce, Close]];
    alphabets.extend((1..threads).map(|_| vec![Send(0), SendPolledOnce(0)]));
    let main_job = threads == 2 && lengths.1 == 1;
    // No commuting-threads cut one size up (`Subject::footprint`): every
    // call goes through the room, the slot list and the wake-ups, which
    // the receiver and every sender share.
    scope::Scope {
        name: match (threads, lengths.1) {
            (2, 1) => "waiting-async-2x1",
            (3, 1) => "waiting-async-3x1",
            (2, 2) => "waiting-async-2x2",
            other => unreachable!("no async waiting scope {other:?}"),
        },
        threads: alphabets,
        lengths,
        post: vec![RecvPolledOnce],
        ordered_threads: false,
        contract: scope::any_operations,
        shard_of: None,
        real_time_orders: main_job,
        regimes: waiting_regimes(true),
    }
}

/// The waiting's regimes (`waiting_scope` says why these), the async
/// flavour's two announcement regimes only with `polls` (the sync
/// flavour cannot leave a receive's announcement behind: a blocking
/// receive returns only with a value).
fn waiting_regimes<F: WaitingFlavour>(polls: bool) -> Vec<scope::Regime<WaitingSubject<F>>> {
    use WaitOp::*;
    let regime = scope::Regime::<WaitingSubject<F>>::new;
    fn view<F: WaitingFlavour>(e: &WaitEnds) -> modelsync::internals::keyed::WaitingInternals {
        e.receiver.as_ref().expect("the main thread's").internals()
    }
    let mut regimes = vec![
        regime("fresh", vec![], |e| {
            let v = view::<F>(e);
            v.room == (0, 0, false, false, false) && v.slots == (0, 0, false)
        }),
        regime("full", vec![Send(0)], |e| {
            let v = view::<F>(e);
            v.room == (1, 0, false, false, false) && v.slots == (1, 0, false)
        }),
        regime("drained", vec![Send(0), Recv], |e| {
            let v = view::<F>(e);
            v.room == (0, 0, true, false, false) && v.slots == (1, 1, false)
        }),
        regime("closed_with_a_value_left", vec![Send(0), Close], |e| {
            let v = view::<F>(e);
            v.room == (1, 0, false, false, true)
        }),
        regime(
            "block_recycled_counts_wrapped",
            vec![Send(0), Recv, Send(0), Recv, Send(0), Recv],
            |e| {
                let v = view::<F>(e);
                let (queued, sleepers, _, wrapped, closed) = v.room;
                (queued, sleepers, wrapped, closed) == (0, 0, true, false)
                    && v.slots == (4, 1, true)
            },
        ),
    ];
    if polls {
        regimes.push(regime("receiver_announced", vec![RecvPolledOnce], |e| {
            let v = view::<F>(e);
            v.receiver_announced && !v.receiver_permit && v.room.0 == 0
        }));
        regimes.push(regime(
            "receiver_wake_kept",
            vec![RecvPolledOnce, Send(0)],
            |e| {
                let v = view::<F>(e);
                v.receiver_permit && !v.receiver_announced && v.room.0 == 1
            },
        ));
    }
    regimes
}

/// Whether every blocking call of a sync scenario completes in every
/// schedule after `prefix` (the sync flavour cannot give a call up): at
/// capacity 1, the receiver's receives find values whatever the order,
/// and every send, of every sender's thread (one or two), finds room or
/// meets the close. Counts decide it: a receive blocks only while nothing
/// is queued, and a send only while the one place is taken, so what the
/// senders send in all, less what the receiver receives, must fit.
fn waiting_sync_completes(
    prefix: &[WaitOp],
    threads: &[Vec<WaitOp>],
    _order: Option<(usize, usize)>,
) -> bool {
    let mut queued = 0usize;
    let mut closed = false;
    for op in prefix {
        match op {
            WaitOp::Send(_) if !closed => queued += 1,
            WaitOp::Recv => queued -= 1,
            WaitOp::Close => closed = true,
            _ => {}
        }
    }
    let count = |ops: &[WaitOp], f: fn(&WaitOp) -> bool| ops.iter().filter(|op| f(op)).count();
    let receives = count(&threads[0], |op| *op == WaitOp::Recv);
    let sends: usize = threads[1..]
        .iter()
        .map(|ops| count(ops, |op| matches!(op, WaitOp::Send(_))))
        .sum();
    if closed || threads[0].contains(&WaitOp::Close) {
        // Sends end either way; a receive is sure of a value only if the
        // prefix left it.
        receives <= queued
    } else {
        receives <= queued + sends && queued + sends - receives <= WAITING_CAPACITY
    }
}

/// The waiting's scope, sync flavour, at `threads` threads of `lengths`
/// operations each (waiting-sync-2x2, the main job's; waiting-sync-3x1,
/// the nightly's one thread up): the receiver's thread calls receive and
/// close, each sender's thread sends, from the regimes a sync history
/// reaches; scenarios in which some call could block for good are
/// outside the contract (`waiting_sync_completes`, which counts the
/// sends of every sender's thread), since a blocked thread cannot be
/// given up; then nothing (a final receive could block). The receiver is
/// one thread's role alone, so the third thread of waiting-sync-3x1 is a
/// second sender, interchangeable with the first. Two operations, not
/// one, in the main job's: a sync sender yields once before it sleeps,
/// and loom runs the other thread first after a yield, so a lone receive
/// always frees the room before a lone send looks again; a sender sleeps
/// only when the receiver is itself waiting for its second value (the
/// seeded `keyed-waiting-sync-sleeper-locks-after-its-count` needs
/// exactly that). One thread up, two senders on a channel with one place
/// race each other for it while the receiver receives or closes: a
/// sender then also sleeps behind the other sender's value. With one
/// operation each, most of those scenarios exceed the complete run's
/// budget (HISTORY.md, 2026-11-28), hence a bound where one does not.
fn waiting_sync_scope(
    threads: usize,
    lengths: (usize, usize),
) -> scope::Scope<WaitingSubject<Blocking>> {
    use WaitOp::*;
    let mut alphabets = vec![vec![Recv, Close]];
    alphabets.extend((1..threads).map(|_| vec![Send(0)]));
    // No commuting-threads cut, as in `waiting_scope`.
    scope::Scope {
        name: match (threads, lengths.1) {
            (2, 2) => "waiting-sync-2x2",
            (3, 1) => "waiting-sync-3x1",
            other => unreachable!("no sync waiting scope {other:?}"),
        },
        threads: alphabets,
        lengths,
        post: vec![],
        ordered_threads: false,
        contract: waiting_sync_completes,
        shard_of: None,
        real_time_orders: false,
        regimes: waiting_regimes(false),
    }
}

/// Every scenario of the waiting's async scope (`waiting_scope`), complete under loom in both passes; every history
/// checked against `specs/waiting.rs`, a given-up receive or send by its
/// give-up check (a lost wake-up), every item delivered or dropped once.
///
/// Scope: waiting-async-2x1 (the receiver with one operation of 3, a sender with one of 2, from 7 regimes)
///
/// Checks: K-3, K-4, K-7.
#[test]
fn waiting_async_scope_complete() {
    scope::every_scenario(model!(), waiting_scope(2, (1, 1)));
}

/// The waiting's async scope one thread up (`waiting_scope`,
/// waiting-async-3x1): the receiver and two senders (the receiver's role
/// is one thread's alone, so the third thread is a second sender), one
/// operation each, from the seven regimes. Two senders and the receiver
/// at once are what two sleepers on a full channel and one receive's wake
/// (which must reach a sender that is still asleep), or a close racing
/// two sleeping sends, need. Each scenario run with no preemption bound within the budget, or
/// at the highest preemption bound that finishes for it; under shuttle,
/// every scenario under PCT.
///
/// Scope: waiting-async-3x1 (the receiver with one operation of 3, two interchangeable senders with one of 2 each, from 7 regimes)
///
/// Checks: K-3, K-4, K-7.
#[test]
fn waiting_async_scope_three_threads_complete_or_bounded() {
    scope::every_scenario_complete_or_bounded(model!().nightly(), waiting_scope(3, (1, 1)));
}

/// The waiting's async scope one call up (`waiting_scope`,
/// waiting-async-2x2): the receiver with one or two operations, a sender
/// with one or two, from the seven regimes. Two calls on a thread are
/// what a poll cancelled and the call after it (a receive whose
/// announcement its cancelled poll left, a send after a cancelled send
/// that was chosen for a wake), racing the other thread, need. Each
/// scenario run with no preemption bound within the budget, or at the highest preemption
/// bound that finishes for it; under shuttle, every scenario under PCT.
///
/// Scope: waiting-async-2x2 (the receiver with one or two operations of 3, a sender with one or two of 2, from 7 regimes)
///
/// Checks: K-3, K-4, K-7.
#[test]
fn waiting_async_scope_two_ops_complete_or_bounded() {
    scope::every_scenario_complete_or_bounded(model!().nightly(), waiting_scope(2, (1, 2)));
}

/// Every scenario of the waiting's sync scope (`waiting_sync_scope`), complete under loom in both passes; a lost
/// wake-up is a deadlock loom reports.
///
/// Scope: waiting-sync-2x2 (the receiver with one or two of receive and close, a sender sending once or twice, from 5 regimes, scenarios that cannot all complete left out)
///
/// Checks: K-3, K-4, K-7.
#[test]
fn waiting_sync_scope_complete() {
    scope::every_scenario(model!(), waiting_sync_scope(2, (1, 2)));
}

/// The waiting's sync scope one thread up (`waiting_sync_scope`,
/// waiting-sync-3x1): the receiver and two senders (the receiver's role
/// is one thread's alone, so the third thread is a second sender), one
/// operation each, from the five regimes a sync history reaches,
/// scenarios that cannot all complete left out (`waiting_sync_completes`
/// counts both senders' sends). Two senders and the receiver at once are
/// what a sender asleep behind the other sender's value, woken by the
/// receive or the close, needs. Each scenario run with no preemption bound within the budget,
/// or at the highest preemption bound that finishes for it; under
/// shuttle, every scenario under PCT.
///
/// Scope: waiting-sync-3x1 (the receiver with one of receive and close, two interchangeable senders sending once each, from 5 regimes, scenarios that cannot all complete left out)
///
/// Checks: K-3, K-4, K-7.
#[test]
fn waiting_sync_scope_three_threads_complete_or_bounded() {
    scope::every_scenario_complete_or_bounded(model!().nightly(), waiting_sync_scope(3, (1, 1)));
}

/// Two senders asleep on a full channel of capacity 2 while the receiver
/// takes both values, and nothing more until both senders are done: each
/// receive frees room with a sleeper counted and notifies once, and both
/// notifications must reach a sender, since the two receives are all the
/// senders get (a later receive would wake a sender that a lost
/// notification left asleep, and hide the loss). Needs capacity 2 and two
/// senders, which no scope of the waiting holds (three threads exceed the
/// budget; `waiting_scope`). A notification lost (two `notify_one`s before
/// either sleeper registered, collapsing into one permit) leaves a sender
/// asleep on a channel with room: loom reports the deadlock. Every value
/// is delivered once (K-4).
///
/// Checks: K-3, K-4, K-7.
#[test]
fn waiting_async_two_sleepers_woken_by_two_frees() {
    let both_asleep = Reach::new("two_senders_counted_asleep_before_a_receive");
    let r = both_asleep.clone();
    // Bound 2: bound 3 is too long for a pull request, and its complete
    // run far longer (HISTORY.md, 2026-11-28); a lost notification
    // needs no preemption beyond the two senders' pauses between their
    // count and their registration, and bound 2 kills the seeded
    // `keyed-waiting-async-sender-registers-after-count`.
    model!()
        .preemption_bound(2)
        .reach(&both_asleep)
        .check(move || {
            let ledger = Ledger::new(4);
            let (channel, mut receiver) = WaitingChannel::<Tracked>::asynchronous(2);
            for id in 0..2 {
                modelsync::block_on(channel.send(ledger.item(id))).expect("room for two");
            }
            let senders: Vec<_> = (2..4)
                .map(|id| {
                    let (channel, value) = (channel.clone(), ledger.item(id));
                    thread::spawn(move || {
                        modelsync::block_on(channel.send(value)).expect("the receiver is there")
                    })
                })
                .collect();
            // A diagnostic read (no synchronisation): both counted asleep.
            r.hit_if(receiver.internals().room.1 == 2);
            for _ in 0..2 {
                ledger.deliver(modelsync::block_on(receiver.recv()));
            }
            for sender in senders {
                sender.join().unwrap();
            }
            for _ in 0..2 {
                ledger.deliver(modelsync::block_on(receiver.recv()));
            }
            ledger.assert_all_delivered_once();
        });
}
