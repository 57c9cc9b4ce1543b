//! Request and reply: clients send a request with a oneshot sender for
//! its answer; a server task answers each. `modelsync::oneshot` here is
//! `tokio::sync::oneshot` with the import changed, in a tokio program;
//! the last request is answered to a plain thread through `blocking_recv`.
//!
//! ```sh
//! cargo run --example oneshot_request_reply
//! ```

#[cfg(any(loom, shuttle))]
fn main() {} // the model builds check the models; tokio does not build there

#[cfg(not(any(loom, shuttle)))]
#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    // use tokio::sync::oneshot;
    use modelsync::oneshot;

    type Request = (u64, oneshot::Sender<u64>);
    let (requests, mut incoming) = tokio::sync::mpsc::channel::<Request>(10);

    let server = tokio::spawn(async move {
        while let Some((n, reply)) = incoming.recv().await {
            // A client that gave up has dropped its receiver: `send`
            // then hands the answer back, and the server moves on.
            let _ = reply.send(n * n);
        }
    });

    let clients: Vec<_> = (1..=5u64)
        .map(|n| {
            let requests = requests.clone();
            tokio::spawn(async move {
                let (reply, answer) = oneshot::channel();
                requests.send((n, reply)).await.unwrap();
                (n, answer.await.expect("the server answers every request"))
            })
        })
        .collect();
    for client in clients {
        let (n, square) = client.await.unwrap();
        println!("{n}^2 = {square}");
        assert_eq!(square, n * n);
    }

    // From a thread outside the runtime, `blocking_recv` waits for the
    // answer. (Inside a task it would block a worker: it panics there.)
    let requests_from_thread = requests.clone();
    let asked = std::thread::spawn(move || {
        let (reply, answer) = oneshot::channel();
        requests_from_thread.blocking_send((12, reply)).unwrap();
        answer.blocking_recv().unwrap()
    });
    let square = tokio::task::spawn_blocking(move || asked.join().unwrap())
        .await
        .unwrap();
    println!("12^2 = {square} (asked from a plain thread)");
    assert_eq!(square, 144);

    drop(requests);
    server.await.unwrap();
}
