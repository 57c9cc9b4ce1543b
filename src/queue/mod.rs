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
