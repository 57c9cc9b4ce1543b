//! A work-stealing run queue in the design of tokio's multi-thread scheduler.
//!
//! Each worker owns a [`Local`]: a fixed, power-of-two ring that only the
//! owner pushes to and pops from. Other workers hold a [`Steal`] handle and
//! take half of the items at once. When the ring is full, the owner moves
//! half of it to the shared [`Inject`] queue in one batch, so that a burst of
//! pushes costs one lock, not one per item.
//!
//! The ring's protocol (the packed head, who writes which index, and why each
//! ordering is what it is) is described once at the top of `local.rs`. The
//! invariants it keeps are listed with IDs `Q-*` in VERIFICATION.md, and the
//! models that check them are in `models/queue.rs`.
//!
//! # Synchronization
//!
//! What a user of the queue may rely on (the IDs are VERIFICATION.md's):
//!
//! - **An item carries its writes.** Everything the owner did before
//!   `push_back(item)` happens-before whatever any thread does with `item`
//!   after receiving it: from the owner's `pop`, from `steal_into` (the
//!   returned item, and the items it moved into the destination ring, which
//!   that ring's own owner and stealers then receive), or from the
//!   `Inject` queue after an overflow (Q-1, Q-11).
//! - **Seeing items is seeing their writes.** A thread whose
//!   `Steal::len` or `Steal::is_empty` reports items also sees everything
//!   the owner wrote before pushing them, so "see work, wake a worker,
//!   steal" needs no other synchronisation (Q-12).
//! - **Exactly once.** Every item pushed is received exactly once, by one
//!   of `pop`, one `steal_into` or `Inject::pop`, or dropped exactly once
//!   with the last handle of the ring or with the `Inject` queue (Q-4, Q-6).
//! - **Order.** The owner pops its own items in FIFO order (Q-9); an
//!   overflow moves the oldest half, in order, ahead of the new item, under
//!   one lock (Q-7); a steal takes the oldest half, rounded up, but no
//!   more than the destination's room plus the item it returns, and takes
//!   fewer only while an operation that `specs/queue.rs` names as its
//!   reason overlaps it (another steal from the destination that claimed
//!   items, or the operation that put there the first item it did not
//!   see: Q-8, L-6).
//!
//! Not promised: `len` and `is_empty` are snapshots that may be stale when
//! the caller reads them; `steal_into` returns `None` while another steal
//! from the same ring is in progress, even if items remain (a worker tries
//! another victim, or again later); there is no order between items taken
//! by different stealers, or between a ring and the `Inject` queue.
//!
//! ```
//! use modelsync::queue::{Inject, Local};
//! # // rustdoc does not see `--cfg loom`; loom types panic outside a model.
//! # if modelsync::sync::BACKEND != "std" { return; }
//!
//! let inject = Inject::new();
//! let mut owner = Local::with_capacity(4);
//! let mut thief = Local::with_capacity(4);
//! for i in 0..4 {
//!     owner.push_back(i, &inject);
//! }
//! // A steal takes half (rounded up): returns one and keeps the rest.
//! assert_eq!(owner.stealer().steal_into(&mut thief), Some(1));
//! assert_eq!(thief.pop(), Some(0));
//! // The owner pops in FIFO order.
//! assert_eq!(owner.pop(), Some(2));
//! assert_eq!(owner.pop(), Some(3));
//! assert_eq!(owner.pop(), None);
//! ```

mod index;
mod inject;
mod local;

pub use inject::Inject;
pub use local::{Local, Steal};
