//! The receiver's key table: entries filed under the hashes their senders
//! computed, in one array, by open addressing with linear probing.
//!
//! Why not a general-purpose table: the receiver inserts a key for every
//! message it files and removes it at the message's release, so in the
//! common case (keys that do not conflict) the table holds a handful of
//! entries and churns one in and one out per message. A SIMD-group table
//! (hashbrown, used before) pays for that churn in tombstones and in-place
//! rehashes at its smallest sizes: a loop of one insert and one remove at
//! one entry was several times slower with it than with this table
//! (HISTORY.md has the measurement; end to end: BENCHMARKS.md). This one deletes by shifting the rest of a
//! probe run back (Knuth's algorithm R), so it never has tombstones, and
//! it keeps at most half of its places in use, so runs stay short.
//!
//! The hashes are std's `RandomState` (SipHash) under the channel's own
//! random key (`KeySet::new`), so nobody can choose keys that share a run.
//!
//! Memory: nothing until the first insert; then the array doubles when it
//! is half full, and shrinks when at most a sixteenth of it is in use, to
//! the smallest power of two at least four times what it holds (so that
//! it is a quarter full or less, and the next resize either way is a
//! doubling of what it holds away: hysteresis). The array follows what is
//! tracked, not its peak, while each key's entry (the key itself, its
//! queue) is freed as soon as nothing holds or waits for it (K-6).
//!
//! When it shrinks is the receiver's choice: after it takes in releases
//! (`shrink_if_sparse`, the only time entries go). An array of
//! `SHRINK_AT_ONCE` places or more shrinks then, to fit what it holds. A
//! smaller one is judged over windows of `BUSY_SHRINK_AFTER` times its
//! places in inserts and removes: it shrinks at the end of a window in
//! which it never held more than a sixteenth of its places, to fit the
//! most it held in that window. The windows are the hysteresis: a table
//! that swings between few entries and many keeps its size (a steady
//! swing allocates nothing, K-6), while one that stays sparse gives its
//! memory back. On traces of the conflict benchmark, whose tracked keys
//! swing between none and thousands within a run, shrinking whenever the
//! array was sparse resized it again and again within a run, a large
//! share of the run's time; shrinking at once from 4,096 places still
//! shrank its arrays a few times a run and slowed the sync conflict run
//! (HISTORY.md has the measurements), since each shrink is followed by
//! the doublings back and their fresh memory; so only arrays past the conflict
//! benchmark's (65,536 places: 2 MiB with 8-byte keys, the memory a
//! one-off burst leaves) shrink at once. Either way a
//! resize of `n` places follows at least `n / 16` inserts or removes since
//! the last (a sixteenth full after half full, or a window), so resizing
//! costs amortised O(1) per operation. The array starts at `MIN_PLACES`
//! and never shrinks below it, so that a channel whose keys never
//! conflict resizes nothing after its first message.

/// Places in the smallest table that holds anything.
const MIN_PLACES: usize = 64;

/// A sparse array this large (2 MiB with 8-byte keys) shrinks at the
/// receiver's next call.
const SHRINK_AT_ONCE: usize = 65_536;

/// A smaller array is judged over windows of this many times its places
/// in inserts and removes.
const BUSY_SHRINK_AFTER: usize = 16;

/// Entries under their hashes. Where an entry is (a place) stays valid
/// until the next resize or remove (an insert only fills a free place).
pub(super) struct Table<T> {
    /// A power of two long (or empty); at most half in use.
    places: Box<[Option<T>]>,
    len: usize,
    /// Inserts and removes since the window began (the last resize, or the
    /// last window's end).
    changes: usize,
    /// The most entries held since the window began.
    peak: usize,
}

impl<T> Table<T> {
    pub(super) fn new() -> Self {
        Table {
            places: Box::new([]),
            len: 0,
            changes: 0,
            peak: 0,
        }
    }

    pub(super) fn len(&self) -> usize {
        self.len
    }

    fn mask(&self) -> usize {
        self.places.len() - 1
    }

    /// Where the probe run for `hash` starts.
    fn home(&self, hash: u64) -> usize {
        // Truncating is the point: the low bits of a SipHash are as good
        // as any.
        hash as usize & self.mask()
    }

    /// The place of the entry with `hash` for which `is` holds.
    pub(super) fn find(&self, hash: u64, is: impl Fn(&T) -> bool) -> Option<usize> {
        if self.len == 0 {
            return None;
        }
        self.probe(hash, is).ok()
    }

    /// Makes room for `more` entries: until they are inserted, no resize
    /// moves an entry, so the places `probe` gives stay valid.
    pub(super) fn make_room(&mut self, more: usize, hash_of: impl Fn(&T) -> u64) {
        let needed = (self.len + more) * 2;
        if needed > self.places.len() {
            let places = needed
                .next_power_of_two()
                .max(self.places.len() * 2)
                .max(MIN_PLACES);
            self.resize(places, &hash_of);
        }
    }

    /// Walks the run from `hash`'s home: the place of the matching entry
    /// (`Ok`), or the first free place (`Err`), where it belongs. Ends
    /// because at most half the places are in use; only after
    /// `make_room` (the array is not empty).
    pub(super) fn probe(&self, hash: u64, is: impl Fn(&T) -> bool) -> Result<usize, usize> {
        let mask = self.mask();
        let mut at = self.home(hash);
        loop {
            match &self.places[at] {
                None => return Err(at),
                Some(entry) if is(entry) => return Ok(at),
                Some(_) => at = (at + 1) & mask,
            }
        }
    }

    /// Puts an entry no other entry matches at the first free place from
    /// `vacancy`, a free place `probe` gave for its hash since the last
    /// `make_room`: entries inserted since may have taken it, and since
    /// inserts only fill places, the run from its home still reaches
    /// there unbroken. No entry moves.
    pub(super) fn insert_from(&mut self, vacancy: usize, entry: T) {
        let mask = self.mask();
        let mut at = vacancy;
        while self.places[at].is_some() {
            at = (at + 1) & mask;
        }
        debug_assert!((self.len + 1) * 2 <= self.places.len(), "no room made");
        self.places[at] = Some(entry);
        self.len += 1;
        self.changes += 1;
        self.peak = self.peak.max(self.len);
    }

    pub(super) fn get_mut(&mut self, at: usize) -> &mut T {
        self.places[at].as_mut().expect("an entry")
    }

    /// Drops the entry at `at`, closing the gap: every later entry of the
    /// run that may sit earlier (its home is not between the gap and it)
    /// moves into the gap, which moves on to where it was.
    ///
    /// Dropped in place rather than returned: moving the entry out through
    /// an `Option` cost a failed store-to-load forwarding per release, a
    /// measurable share of a message's whole cost (HISTORY.md).
    pub(super) fn remove_at(&mut self, at: usize, hash_of: impl Fn(&T) -> u64) {
        debug_assert!(self.places[at].is_some(), "removed an empty place");
        self.places[at] = None;
        self.len -= 1;
        self.changes += 1;
        let mask = self.mask();
        let mut gap = at;
        let mut next = at;
        loop {
            next = (next + 1) & mask;
            let Some(entry) = &self.places[next] else {
                break;
            };
            let home = self.home(hash_of(entry));
            // Distances along the run, wrapping: the entry may move back to
            // the gap if its home is at least as far behind it as the gap.
            if next.wrapping_sub(home) & mask >= next.wrapping_sub(gap) & mask {
                self.places[gap] = self.places[next].take();
                gap = next;
            }
        }
    }

    /// Places in use or free: what the table's array holds.
    pub(super) fn places(&self) -> usize {
        self.places.len()
    }

    /// Shrinks the array if it is sparse: at once if it is large
    /// (`SHRINK_AT_ONCE`) and at most a sixteenth of it is in use; if it is
    /// smaller, at the end of a window in which it never held more than a
    /// sixteenth (see the module documentation). Its new size is the
    /// smallest power of two at least four times what it must hold (what
    /// it holds, or the window's peak), never below `MIN_PLACES`. Returns
    /// whether it shrank.
    pub(super) fn shrink_if_sparse(&mut self, hash_of: impl Fn(&T) -> u64) -> bool {
        let places = self.places.len();
        if places <= MIN_PLACES {
            return false;
        }
        let must_hold = if places >= SHRINK_AT_ONCE {
            self.len
        } else if self.changes / BUSY_SHRINK_AFTER >= places {
            let peak = std::mem::replace(&mut self.peak, self.len);
            self.changes = 0; // the next window begins
            peak
        } else {
            return false;
        };
        if must_hold * 16 > places {
            return false;
        }
        self.resize(
            (must_hold * 4).next_power_of_two().max(MIN_PLACES),
            &hash_of,
        );
        true
    }

    /// Refiles every entry into `places` places.
    fn resize(&mut self, places: usize, hash_of: &impl Fn(&T) -> u64) {
        debug_assert!(places.is_power_of_two() && places >= self.len * 2);
        self.changes = 0;
        self.peak = self.len;
        let old = std::mem::replace(&mut self.places, (0..places).map(|_| None).collect());
        let mask = self.mask();
        for entry in old.into_vec().into_iter().flatten() {
            let mut at = self.home(hash_of(&entry));
            while self.places[at].is_some() {
                at = (at + 1) & mask;
            }
            self.places[at] = Some(entry);
        }
    }
}
