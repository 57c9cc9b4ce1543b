//! The async keyed channel on a tokio runtime: tasks send events keyed by
//! user; one receiving task spawns a task per event. Events of one user
//! are handled one at a time and in order, events of different users at
//! once. Dropping the message (at the end of its task) releases the key.
//!
//! ```sh
//! cargo run --example keyed_async_tokio
//! ```

// The model builds (`--cfg loom`, `--cfg shuttle`) check the crate's
// models; tokio does not build there, so neither does this example.
#[cfg(any(loom, shuttle))]
fn main() {}

#[cfg(not(any(loom, shuttle)))]
#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    use std::collections::BTreeMap;
    use std::sync::{Arc, Mutex};
    use std::time::Duration;

    let (tx, mut rx) = modelsync::keyed::channel::<u32, (u32, String)>(8);
    let senders: Vec<_> = (0..3u32)
        .map(|session| {
            let tx = tx.clone();
            tokio::spawn(async move {
                for n in 0..5u32 {
                    let user = (session + n) % 4;
                    let event = format!("session {session} event {n}");
                    tx.send([user], (session * 100 + n, event)).await.unwrap();
                }
            })
        })
        .collect();
    drop(tx);

    let seen: Arc<Mutex<BTreeMap<u32, Vec<u32>>>> = Arc::default();
    let mut handlers = Vec::new();
    while let Ok(message) = rx.recv().await {
        let seen = seen.clone();
        handlers.push(tokio::spawn(async move {
            let user = message.keys()[0];
            let (seq, event) = message.value();
            tokio::task::yield_now().await; // handling takes a while
            std::thread::sleep(Duration::from_millis(1));
            println!("user {user}: {event}");
            seen.lock().unwrap().entry(user).or_default().push(*seq);
            // `message` drops here, releasing `user` for its next event.
        }));
    }
    for task in senders.into_iter().chain(handlers) {
        task.await.unwrap();
    }
    for (user, seqs) in seen.lock().unwrap().iter() {
        for session in 0..3 {
            let mine: Vec<u32> = seqs
                .iter()
                .copied()
                .filter(|s| s / 100 == session)
                .collect();
            assert!(
                mine.windows(2).all(|w| w[0] < w[1]),
                "user {user}: {mine:?}"
            );
        }
    }
    println!("every user's events were handled in the order each session sent them");
}
