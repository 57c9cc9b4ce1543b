//! Wakers for polling futures by hand: one that counts its wakes, and one
//! that runs callbacks when it is cloned, woken or dropped (to check that a
//! primitive runs no user code under its lock, or survives a waker that
//! panics). Their counts are std atomics: they observe the model, they are
//! not part of it.

use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::Arc;
use std::task::{RawWaker, RawWakerVTable, Wake, Waker};

/// How many times a waker made here was woken.
#[derive(Clone, Debug)]
pub struct WakeCount(Arc<AtomicUsize>);

impl WakeCount {
    pub fn get(&self) -> usize {
        self.0.load(Relaxed)
    }
}

/// A waker that counts its wakes.
pub fn counting_waker() -> (Waker, WakeCount) {
    struct Counting(Arc<AtomicUsize>);
    impl Wake for Counting {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Relaxed);
        }
    }
    let wakes = Arc::new(AtomicUsize::new(0));
    (
        Waker::from(Arc::new(Counting(wakes.clone()))),
        WakeCount(wakes),
    )
}

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
    wakes: Arc<AtomicUsize>,
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
        state(data).wakes.fetch_add(1, Relaxed);
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
    let wakes = Arc::new(AtomicUsize::new(0));
    let data = Arc::into_raw(Arc::new(CallbackWaker {
        callbacks,
        wakes: wakes.clone(),
    })) as *const ();
    // SAFETY: the vtable upholds `RawWaker`'s contract over a counted `Arc`.
    let waker = unsafe { Waker::from_raw(RawWaker::new(data, &VTABLE)) };
    (waker, WakeCount(wakes))
}
