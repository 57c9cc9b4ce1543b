//! modelsync's work-stealing runtime: spawn, join, abort, and a task's
//! panic reported as a `JoinError`. It has no I/O and no timers (its
//! module documentation lists what tokio has and it does not): tasks here
//! wait on this crate's channels.
//!
//! ```sh
//! cargo run --example runtime
//! ```

use modelsync::oneshot;
use modelsync::runtime::{spawn, yield_now, Builder};

fn main() {
    let runtime = Builder::new_multi_thread()
        .worker_threads(2)
        .build()
        .unwrap();

    let total = runtime.block_on(async {
        // Spawn and join: each task's output comes back through its handle.
        let tasks: Vec<_> = (1..=10u64)
            .map(|n| {
                spawn(async move {
                    yield_now().await; // let the other tasks run
                    n * n
                })
            })
            .collect();
        let mut total = 0;
        for task in tasks {
            total += task.await.unwrap();
        }
        total
    });
    println!("sum of squares 1..=10 = {total}");
    assert_eq!(total, 385);

    // Abort: a task waiting for a value that never comes is cancelled; its
    // future is dropped, and its handle says so.
    let (_never_sent, never) = oneshot::channel::<()>();
    let waiting = runtime.spawn(async move {
        let _ = never.await;
        unreachable!("the sender is kept alive");
    });
    waiting.abort();
    let cancelled = runtime.block_on(waiting).unwrap_err();
    println!("aborted task: {cancelled}");
    assert!(cancelled.is_cancelled());

    // A panic stays in its task: the handle reports it with its payload,
    // and the worker goes on running other tasks.
    let previous_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {})); // keep the expected panic quiet
    let panicked = runtime.block_on(runtime.spawn(async { panic!("task failed") }));
    std::panic::set_hook(previous_hook);
    let error = panicked.unwrap_err();
    assert!(error.is_panic());
    let payload = error.into_panic();
    println!(
        "panicked task: {:?}",
        payload.downcast_ref::<&str>().unwrap()
    );
    assert_eq!(runtime.block_on(runtime.spawn(async { 7 })).unwrap(), 7);

    // Dropping the runtime stops the workers and drops unfinished tasks.
    drop(runtime);
    println!("runtime shut down");
}
