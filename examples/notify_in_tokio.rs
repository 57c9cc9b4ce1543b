//! `modelsync::notify::Notify` in a tokio program, in place of
//! `tokio::sync::Notify`: the import is the only change. The program is
//! tokio's documented unbounded channel built from a `Notify` and a queue.
//!
//! ```sh
//! cargo run --example notify_in_tokio
//! ```

#[cfg(any(loom, shuttle))]
fn main() {} // the model builds check the models; tokio does not build there

#[cfg(not(any(loom, shuttle)))]
mod channel {
    // use tokio::sync::Notify;
    use modelsync::notify::Notify;

    use std::collections::VecDeque;
    use std::sync::Mutex;

    /// An unbounded queue whose receiver waits on a `Notify`.
    pub struct Channel<T> {
        values: Mutex<VecDeque<T>>,
        notify: Notify,
    }

    impl<T> Channel<T> {
        pub fn new() -> Self {
            Channel {
                values: Mutex::new(VecDeque::new()),
                notify: Notify::new(),
            }
        }

        pub fn send(&self, value: T) {
            self.values.lock().unwrap().push_back(value);
            // Wakes the receiver, or stores a permit if it is not waiting:
            // the next `notified().await` then returns at once.
            self.notify.notify_one();
        }

        pub async fn recv(&self) -> T {
            loop {
                if let Some(value) = self.values.lock().unwrap().pop_front() {
                    return value;
                }
                self.notify.notified().await;
            }
        }
    }
}

#[cfg(not(any(loom, shuttle)))]
#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    use std::sync::Arc;

    let channel = Arc::new(channel::Channel::new());
    let sender = {
        let channel = channel.clone();
        tokio::spawn(async move {
            for i in 0..10u32 {
                channel.send(i);
                tokio::task::yield_now().await;
            }
        })
    };
    let mut received = Vec::new();
    while received.len() < 10 {
        received.push(channel.recv().await);
    }
    sender.await.unwrap();
    assert_eq!(received, (0..10).collect::<Vec<_>>());
    println!("received {received:?} through modelsync's Notify on tokio");
}
