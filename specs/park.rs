//! The parker's sequential specification (`src/park.rs`): one permit.
//! The property tests step it beside the real parker
//! (`proptests/park.rs`), and the models' histories are checked against it
//! (`models/park.rs`).
//!
//! Any number of unparks store one permit (P-2); `park` waits for it and
//! consumes it (P-1, P-3): it returns only where a permit is there, a
//! blocking operation; a timed park consumes a permit if there is one,
//! and otherwise returns at its timeout (P-5), leaving none either way.
//! Deterministic.

use crate::harness::linearizability::Spec;

#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Parker {
    pub permit: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Op {
    Unpark,
    /// `park()`: waits for the permit.
    Park,
    /// `park_timeout` or `park_deadline`.
    ParkTimeout,
    HasPermit,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Ret {
    Unit,
    Bool(bool),
}

impl Spec for Parker {
    type Op = Op;
    type Ret = Ret;

    fn outcomes(&self, op: &Op) -> Vec<(Ret, Self)> {
        let taken = Parker { permit: false };
        match op {
            Op::Unpark => vec![(Ret::Unit, Parker { permit: true })],
            Op::Park if self.permit => vec![(Ret::Unit, taken)],
            Op::Park => Vec::new(), // waits
            Op::ParkTimeout => vec![(Ret::Unit, taken)],
            Op::HasPermit => vec![(Ret::Bool(self.permit), self.clone())],
        }
    }

    /// A park that did not return took no permit.
    fn unreturned(&self, _op: &Op) -> Vec<Self> {
        Vec::new()
    }
}
