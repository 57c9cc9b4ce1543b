//! A keyed worker pool: one receiver hands account updates to four worker
//! threads. Updates to one account are applied one at a time and in the
//! order they were sent, though any worker may apply them; a transfer
//! carries both of its accounts' keys and waits for both. The keys are
//! released when a worker drops the message.
//!
//! ```sh
//! cargo run --example keyed_worker_pool
//! ```

use std::collections::BTreeMap;
use std::sync::{mpsc, Arc, Mutex};
use std::thread;
use std::time::Duration;

use modelsync::keyed::{sync_channel, Message};

#[derive(Debug)]
enum Update {
    Deposit {
        account: &'static str,
        amount: i64,
    },
    Transfer {
        from: &'static str,
        to: &'static str,
        amount: i64,
    },
}

/// Per account: the balance and the sequence numbers of the updates
/// applied to it, in the order they were applied.
type Ledger = Mutex<BTreeMap<&'static str, (i64, Vec<u32>)>>;

const ACCOUNTS: [&str; 4] = ["alice", "bob", "carol", "dave"];
const WORKERS: usize = 4;

fn main() {
    let (tx, mut rx) = sync_channel::<&'static str, (u32, Update)>(4);

    // Producers: two threads, each sending numbered updates. The keys are
    // the accounts an update touches.
    let producers: Vec<_> = (0..2u32)
        .map(|producer| {
            let tx = tx.clone();
            thread::spawn(move || {
                for i in 0..20u32 {
                    let seq = producer * 1000 + i;
                    let index = (i + producer) as usize % ACCOUNTS.len();
                    let account = ACCOUNTS[index];
                    if i % 5 == 4 {
                        let to = ACCOUNTS[(index + 1) % ACCOUNTS.len()];
                        let update = Update::Transfer {
                            from: account,
                            to,
                            amount: 5,
                        };
                        tx.send([account, to], (seq, update)).unwrap();
                    } else {
                        let update = Update::Deposit {
                            account,
                            amount: 10,
                        };
                        tx.send([account], (seq, update)).unwrap();
                    }
                }
            })
        })
        .collect();
    drop(tx);

    // The pool: each worker applies the messages it is handed, then drops
    // them, which releases their keys.
    let ledger: Arc<Ledger> = Arc::default();
    let (work, queue) = mpsc::channel::<Message<&'static str, (u32, Update)>>();
    let queue = Arc::new(Mutex::new(queue));
    let workers: Vec<_> = (0..WORKERS)
        .map(|_| {
            let (queue, ledger) = (queue.clone(), ledger.clone());
            thread::spawn(move || loop {
                let Ok(message) = queue.lock().unwrap().recv() else {
                    return;
                };
                let (seq, update) = message.value();
                thread::sleep(Duration::from_millis(1)); // the work itself
                let mut ledger = ledger.lock().unwrap();
                let mut apply = |account, amount| {
                    let (balance, applied) = ledger.entry(account).or_default();
                    *balance += amount;
                    applied.push(*seq);
                };
                match *update {
                    Update::Deposit { account, amount } => apply(account, amount),
                    Update::Transfer { from, to, amount } => {
                        apply(from, -amount);
                        apply(to, amount);
                    }
                }
                // `message` drops here: its keys go back to the channel.
            })
        })
        .collect();

    // The receiver only hands messages on: it never holds one itself, so
    // `recv` can always make progress (see the README's pitfall).
    while let Ok(message) = rx.recv() {
        work.send(message).unwrap();
    }
    drop(work);
    for thread in producers.into_iter().chain(workers) {
        thread.join().unwrap();
    }

    // Per account, the updates of each producer were applied in the order
    // it sent them.
    for (account, (balance, applied)) in ledger.lock().unwrap().iter() {
        for producer in 0..2 {
            let sent: Vec<u32> = applied
                .iter()
                .copied()
                .filter(|s| s / 1000 == producer)
                .collect();
            assert!(
                sent.windows(2).all(|w| w[0] < w[1]),
                "{account}: out of order {sent:?}"
            );
        }
        // Producer 0's updates as a0, a1, ..., producer 1's as b0, b1, ...
        let labels: Vec<String> = applied
            .iter()
            .map(|s| format!("{}{}", if s / 1000 == 0 { 'a' } else { 'b' }, s % 1000))
            .collect();
        println!(
            "{account:>6}: balance {balance:>4}, applied {}",
            labels.join(" ")
        );
    }
    println!("per-account order held across {WORKERS} workers");
}
