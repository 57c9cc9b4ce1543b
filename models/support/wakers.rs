//! A waker that runs callbacks when it is cloned, woken or dropped (to
//! check that a primitive runs no user code under its lock, or survives a
//! waker that panics), and counts its wakes in a
//! [`WakeCount`](crate::harness::WakeCount): it observes the model, it is
//! not part of it.
//!
//! Here rather than in the harness crate (`modelsync-check`, which forbids
//! `unsafe`): a waker whose every clone and drop runs code needs a
//! hand-built `RawWaker`; std's `Wake` clones and drops through its `Arc`
//! alone.

use std::sync::Arc;
use std::task::{RawWaker, RawWakerVTable, Waker};

use crate::harness::WakeCount;

type Callback = Box<dyn Fn() + Send + Sync>;

/// What a [`callback_waker`] runs, besides counting wakes.
#[derive(Default)]
pub struct Callbacks {
    pub on_clone: Option<Callback>,
    pub on_wake: Option<Callback>,
    pub on_drop: Option<Callback>,
}

struct CallbackWaker {
    callbacks: Callbacks,
    wakes: WakeCount,
}

/// A waker that runs `callbacks` on every clone, wake and drop of any of
/// its copies (the last drop included), and counts its wakes.
pub fn callback_waker(callbacks: Callbacks) -> (Waker, WakeCount) {
    fn state(data: *const ()) -> &'static CallbackWaker {
        // SAFETY: `data` came from `Arc::into_raw`, and every waker holds a
        // strong count until its `drop` below.
        unsafe { &*(data as *const CallbackWaker) }
    }
    fn run(callback: &Option<Callback>) {
        if let Some(callback) = callback {
            callback();
        }
    }
    unsafe fn clone(data: *const ()) -> RawWaker {
        // SAFETY: see `state`; the new waker holds its own count.
        unsafe { Arc::increment_strong_count(data as *const CallbackWaker) };
        run(&state(data).callbacks.on_clone);
        RawWaker::new(data, &VTABLE)
    }
    unsafe fn wake_by_ref(data: *const ()) {
        state(data).wakes.add_one();
        run(&state(data).callbacks.on_wake);
    }
    unsafe fn wake(data: *const ()) {
        // This waker's drop, even if the wake callback panics (a by-value
        // wake consumes the waker either way).
        struct Release(*const ());
        impl Drop for Release {
            fn drop(&mut self) {
                // SAFETY: the waker being woken owns this count.
                unsafe { drop(self.0) };
            }
        }
        let _release = Release(data);
        // SAFETY: `data` is a live waker's.
        unsafe { wake_by_ref(data) };
    }
    unsafe fn drop(data: *const ()) {
        run(&state(data).callbacks.on_drop);
        // SAFETY: releases this waker's count.
        unsafe { Arc::decrement_strong_count(data as *const CallbackWaker) };
    }
    static VTABLE: RawWakerVTable = RawWakerVTable::new(clone, wake, wake_by_ref, drop);
    let wakes = WakeCount::default();
    let data = Arc::into_raw(Arc::new(CallbackWaker {
        callbacks,
        wakes: wakes.clone(),
    })) as *const ();
    // SAFETY: the vtable upholds `RawWaker`'s contract over a counted `Arc`.
    let waker = unsafe { Waker::from_raw(RawWaker::new(data, &VTABLE)) };
    (waker, wakes)
}
