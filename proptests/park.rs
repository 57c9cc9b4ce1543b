//! The parker's permit against its sequential specification
//! (`specs/park.rs`: one bit, the one the models' histories are checked
//! against), and its timeouts on real time (loom and shuttle do not model
//! time, so P-5 lives here).

use std::time::{Duration, Instant};

use crate::specs::park::{Op as SpecOp, Parker as Spec, Ret};
use crate::support::step;
use modelsync::park::Parker;
use proptest::prelude::*;

#[derive(Debug, Clone, Copy)]
enum Op {
    Unpark,
    /// `park_timeout(0)`: returns at once, consuming a permit if stored.
    ParkTimeoutZero,
    /// `park_deadline(now)`: the same through the deadline API.
    ParkDeadlineNow,
    /// `park()`, only when the model holds a permit (it would block).
    ParkWithPermit,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => Just(Op::Unpark),
        1 => Just(Op::ParkTimeoutZero),
        1 => Just(Op::ParkDeadlineNow),
        2 => Just(Op::ParkWithPermit),
    ]
}

proptest! {
    #![proptest_config(crate::support::proptest_config(512))]

    /// Random unparks and parks agree with the specification's one-bit
    /// permit: any number of unparks store one permit, and every park
    /// consumes it.
    ///
    /// Checks: P-2, P-5.
    #[test]
    fn matches_reference_model(ops in proptest::collection::vec(op(), 1..40)) {
        let parker = Parker::new();
        let unparker = parker.unparker().clone();
        let mut spec = Spec::default();
        for op in ops {
            match op {
                Op::Unpark => {
                    unparker.unpark();
                    step(&mut spec, &SpecOp::Unpark, Ret::Unit)?;
                }
                Op::ParkTimeoutZero => {
                    parker.park_timeout(Duration::ZERO);
                    step(&mut spec, &SpecOp::ParkTimeout, Ret::Unit)?;
                }
                Op::ParkDeadlineNow => {
                    parker.park_deadline(Instant::now());
                    step(&mut spec, &SpecOp::ParkTimeout, Ret::Unit)?;
                }
                Op::ParkWithPermit => {
                    if !spec.permit {
                        continue; // it would wait: the specification has no outcome
                    }
                    parker.park();
                    step(&mut spec, &SpecOp::Park, Ret::Unit)?;
                }
            }
            step(&mut spec, &SpecOp::HasPermit, Ret::Bool(parker.has_permit()))?;
        }
    }
}

/// Without a permit a timed park waits out its timeout (spurious returns
/// are allowed, needless early ones are not); with one, any park returns at
/// once and consumes it.
///
/// Checks: P-5.
#[test]
fn timeouts_wait_and_permits_end_any_park() {
    let parker = Parker::new();
    let timeout = Duration::from_millis(20);
    let start = Instant::now();
    parker.park_timeout(timeout);
    assert!(
        start.elapsed() >= timeout,
        "park_timeout returned after {:?}",
        start.elapsed()
    );
    let deadline = Instant::now() + timeout;
    parker.park_deadline(deadline);
    assert!(
        Instant::now() >= deadline,
        "park_deadline returned before its deadline"
    );
    // A timeout too large for `Instant` is no timeout, not a panic.
    parker.unparker().unpark();
    parker.park_timeout(Duration::MAX);
    assert!(!parker.has_permit());
    parker.unparker().unpark();
    let start = Instant::now();
    parker.park_deadline(Instant::now() + Duration::from_secs(3600));
    assert!(start.elapsed() < Duration::from_secs(60));
    assert!(!parker.has_permit());
}
