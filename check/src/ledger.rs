//! Identity accounting: every item is delivered exactly once and dropped
//! exactly once, checked by id, not by count (a duplicate plus a loss keeps
//! the count right and is caught here).

use std::sync::{Arc, Mutex};

#[derive(Debug, Default)]
struct Log {
    delivered: Vec<usize>,
    dropped: Vec<usize>,
}

/// One execution's record of which items were delivered and dropped.
#[derive(Debug, Clone)]
pub struct Ledger {
    items: usize,
    log: Arc<Mutex<Log>>,
}

/// An item with an identity that reports its own drop to its ledger.
#[derive(Debug)]
pub struct Tracked {
    id: usize,
    log: Arc<Mutex<Log>>,
}

impl Ledger {
    /// A ledger for items `0..items`.
    pub fn new(items: usize) -> Self {
        Ledger {
            items,
            log: Arc::default(),
        }
    }

    /// Creates item `id`.
    pub fn item(&self, id: usize) -> Tracked {
        assert!(
            id < self.items,
            "item {id} is outside the ledger's 0..{}",
            self.items
        );
        Tracked {
            id,
            log: self.log.clone(),
        }
    }

    /// Records that `item` reached a consumer, then drops it.
    pub fn deliver(&self, item: Tracked) {
        self.log.lock().unwrap().delivered.push(item.id);
    }

    /// Records that item `id` reached a consumer that keeps it (a keyed
    /// message holds its value until it is dropped).
    pub fn delivered_id(&self, id: usize) {
        self.log.lock().unwrap().delivered.push(id);
    }

    /// Ids delivered so far.
    pub fn delivered(&self) -> Vec<usize> {
        self.log.lock().unwrap().delivered.clone()
    }

    /// Ids dropped so far. Like [`Flag`](crate::Flag), a label for
    /// reachability: under loom and shuttle it reads exactly what the other
    /// threads have done so far.
    pub fn dropped(&self) -> Vec<usize> {
        self.log.lock().unwrap().dropped.clone()
    }

    /// Every item was delivered exactly once and dropped exactly once.
    pub fn assert_all_delivered_once(&self) {
        let log = self.log.lock().unwrap();
        assert_each_once("delivered", &log.delivered, self.items);
        assert_each_once("dropped", &log.dropped, self.items);
    }

    /// Every item was dropped exactly once and delivered at most once: for
    /// scenarios that end with items still queued, which the queue's own drop
    /// must release.
    pub fn assert_all_dropped_once(&self) {
        let log = self.log.lock().unwrap();
        let mut seen = vec![0usize; self.items];
        for &id in &log.delivered {
            seen[id] += 1;
            assert!(
                seen[id] == 1,
                "item {id} delivered twice: {:?}",
                log.delivered
            );
        }
        assert_each_once("dropped", &log.dropped, self.items);
    }
}

fn assert_each_once(what: &str, ids: &[usize], items: usize) {
    let mut seen = vec![0usize; items];
    for &id in ids {
        seen[id] += 1;
    }
    let wrong: Vec<(usize, usize)> = seen
        .iter()
        .enumerate()
        .filter(|&(_, &n)| n != 1)
        .map(|(id, &n)| (id, n))
        .collect();
    assert!(
        wrong.is_empty(),
        "items {what} other than exactly once, as (id, times): {wrong:?}"
    );
}

impl Tracked {
    /// The item's identity, as its ledger knows it.
    pub fn id(&self) -> usize {
        self.id
    }
}

impl Drop for Tracked {
    fn drop(&mut self) {
        // A poisoned log means another assertion already failed; record
        // anyway so that one failure does not cascade into an abort.
        let mut log = self.log.lock().unwrap_or_else(|e| e.into_inner());
        log.dropped.push(self.id);
    }
}
