//! The keyed channel's bookkeeping, single-threaded (the receiver owns
//! it): which messages are queued, which keys are held, and which message
//! waits for which key.
//!
//! # Rules
//!
//! - A key is *held* from the moment a message carrying it becomes ready
//!   (not when it is received) until that message is dropped. Reserving at
//!   promotion is what keeps two live messages from sharing a key (K-1):
//!   a later message on the key finds it held and waits.
//! - A message that cannot be ready at once joins the waiting queue of
//!   *every* one of its keys, so that it keeps later messages on each of
//!   them behind it even while some of its keys are free (K-2).
//! - A key's waiting queue is a list threaded through the waiting
//!   messages themselves: the key's entry names the first and the last,
//!   each message names the next one on each of its keys. Joining and
//!   leaving a queue allocate nothing, and an entry stays small (two
//!   to a cache line for 8-byte keys), which is what a receive pays for
//!   when many keys are waited for at once.
//! - `blocked` counts the keys of a waiting message where it is not yet
//!   at the head of a free key. Only a release of a key can lower it (the
//!   key's head becomes head of a free key), so a release costs the
//!   released message's keys plus the keys of the messages it promotes
//!   (K-6), and no scan of the queue is ever needed.
//! - A key's entry exists exactly while it is held or waited for (K-6), so
//!   a message that finds its key's entry waits, and one that finds none
//!   reserves the key.
//! - Every key comes with its hash, computed once by the sender
//!   (`KeySet::new`): the table (`table.rs`) never hashes a key, so the
//!   receiver, which serialises the channel, does no hashing at all, and a
//!   key's `Hash` never runs on its thread.
//! - The user's code here is a key's `Eq` (lookups) and `Clone` (a new
//!   entry keeps a clone). It runs before anything it could leave half
//!   done: filing a message looks up and clones every key first and
//!   changes the table only once all have returned, and making a waiting
//!   message ready looks up all its keys before it moves any. So a panic
//!   in either leaves every queue and entry consistent: a message being
//!   filed is not filed at all (the caller drops it), and a release that
//!   panics has freed the keys before the one that panicked, while that
//!   key and the rest stay held (as does, if its promotion panicked, the
//!   message that was to take them: it keeps waiting at their heads, and
//!   no later release reaches it). Every other key works as before, and
//!   no queue ever names a message that is not there (K-1, K-5).
//! - Ready messages wait in `ready`, in the order they became ready;
//!   only waiting messages take a place in the slab (where their keys'
//!   queues can name them), so a message ready when it is queued costs
//!   its key lookups and nothing else.

use std::collections::VecDeque;
use std::hash::{BuildHasher, Hash};

use super::table::Table;

/// A waiting message's place in the slab. 32 bits: at most 2^31 - 1
/// messages are queued (the channel's capacity is at most that, `room.rs`),
/// so places stay below 2^31, and `NONE` is never one.
type Index = u32;

/// No message: the end of a key's waiting queue.
const NONE: Index = Index::MAX;

/// What the core queues: anything that knows its (deduplicated) keys.
pub(crate) trait Keyed<K> {
    fn keys(&self) -> &KeySet<K>;
}

/// A message waiting for at least one key.
struct Waiting<M> {
    message: M,
    /// Keys where this message is not the head of a free key's queue;
    /// it is ready when this reaches 0.
    blocked: usize,
    /// For each of its keys, in `KeySet` order, the message behind it in
    /// that key's queue.
    behind: Behind,
}

/// The next message in each of a waiting message's key queues, or `NONE`.
/// One key, the common case, needs no allocation.
enum Behind {
    One(Index),
    Many(Box<[Index]>),
}

impl Behind {
    /// Nobody behind on any of `keys` keys.
    fn none(keys: usize) -> Self {
        if keys == 1 {
            Behind::One(NONE)
        } else {
            Behind::Many(vec![NONE; keys].into_boxed_slice())
        }
    }

    fn slot(&mut self, place: usize) -> &mut Index {
        match self {
            Behind::One(next) => {
                debug_assert_eq!(place, 0, "one key, one place");
                next
            }
            Behind::Many(next) => &mut next[place],
        }
    }
}

/// A key's entry in the table: present exactly while the key is held or
/// waited for.
struct KeyState<K> {
    key: K,
    /// The key's hash, as its sender computed it.
    hash: u64,
    /// The oldest queued message waiting for this key, or `NONE`.
    first: Index,
    /// The newest, if any (`first` says), and the key's place among its
    /// keys, so that the next message joins behind it without a search.
    last: Index,
    last_place: u32,
    held: bool,
}

/// Waiting messages in a slab, addressed by index (a key's queue holds
/// indices); freed slots are reused.
struct Slab<T> {
    slots: Vec<Option<T>>,
    free: Vec<Index>,
    len: usize,
}

impl<T> Slab<T> {
    fn new() -> Self {
        Slab {
            slots: Vec::new(),
            free: Vec::new(),
            len: 0,
        }
    }

    /// The index the next `insert` will use.
    fn next_index(&self) -> Index {
        match self.free.last() {
            Some(&index) => index,
            None => Index::try_from(self.slots.len())
                .ok()
                .filter(|&index| index != NONE)
                .expect("at most 2^32 - 1 messages are queued"),
        }
    }

    fn insert(&mut self, value: T) -> Index {
        let index = self.next_index();
        self.len += 1;
        match self.free.pop() {
            Some(_) => self.slots[index as usize] = Some(value),
            None => self.slots.push(Some(value)),
        }
        index
    }

    fn remove(&mut self, index: Index) -> T {
        let value = self.slots[index as usize].take().expect("a queued message");
        self.free.push(index);
        self.len -= 1;
        value
    }

    fn get(&self, index: Index) -> &T {
        self.slots[index as usize]
            .as_ref()
            .expect("a queued message")
    }

    fn get_mut(&mut self, index: Index) -> &mut T {
        self.slots[index as usize]
            .as_mut()
            .expect("a queued message")
    }
}

/// The channel's bookkeeping. See the module documentation for its rules.
pub(crate) struct Core<K, M> {
    waiting: Slab<Waiting<M>>,
    /// Messages ready to be received (their keys held), in the order they
    /// became ready. A message ready when it is queued never enters the
    /// slab.
    ready: VecDeque<M>,
    /// Keyed by the senders' hashes: see `KeySet`.
    keys: Table<KeyState<K>>,
    /// What the lookups of one message's keys found (`push`, `promote`),
    /// kept between calls so that filing allocates nothing once warm.
    found: Vec<Lookup>,
    /// Clones of the keys a message being filed is the first to track,
    /// made before the table changes (`push`); empty between calls.
    fresh: Vec<K>,
}

/// Where a key's entry is (`Ok`), or the free place where it would go
/// (`Err`).
type Lookup = Result<usize, usize>;

/// Empties the clones made for a message being filed, also when a later
/// key's `Eq` or `Clone` panics, so that they drop with the panic.
struct ClearOnDrop<'a, K>(&'a mut Vec<K>);

impl<K> Drop for ClearOnDrop<'_, K> {
    fn drop(&mut self) {
        self.0.clear();
    }
}

/// A message's keys, without repeats, in first-seen order (K-8), each with
/// its hash. One key, the common case, is kept inline: no allocation.
pub(crate) enum KeySet<K> {
    One { key: K, hash: u64 },
    Many { keys: Box<[K]>, hashes: Box<[u64]> },
}

impl<K: Eq + Hash> KeySet<K> {
    /// `keys` without repeats, in first-seen order (K-8), hashed with
    /// `hasher` (the channel's own `RandomState`, so that the table stays
    /// resistant to keys chosen to collide). Runs on the sender's thread.
    pub(crate) fn new(keys: impl IntoIterator<Item = K>, hasher: &impl BuildHasher) -> Self {
        Self::new_counting(keys, hasher).0
    }

    /// As `new`, and the work its deduplication did (`SeenKeys::work`).
    fn new_counting(keys: impl IntoIterator<Item = K>, hasher: &impl BuildHasher) -> (Self, usize) {
        let mut keys = keys.into_iter();
        let Some(first) = keys.next() else {
            return (KeySet::empty(), 0);
        };
        let first_hash = hasher.hash_one(&first);
        let Some(second) = keys.next() else {
            let one = KeySet::One {
                key: first,
                hash: first_hash,
            };
            return (one, 0);
        };
        let mut unique = Vec::with_capacity(2 + keys.size_hint().0);
        let mut hashes = Vec::with_capacity(unique.capacity());
        unique.push(first);
        hashes.push(first_hash);
        let mut seen = SeenKeys::new();
        for key in std::iter::once(second).chain(keys) {
            let hash = hasher.hash_one(&key);
            let repeat = seen.find_or_add(hash, &hashes, |at| unique[at] == key);
            if !repeat {
                unique.push(key);
                hashes.push(hash);
            }
        }
        let set = if unique.len() == 1 {
            KeySet::One {
                key: unique.pop().expect("one key"),
                hash: first_hash,
            }
        } else {
            KeySet::Many {
                keys: unique.into_boxed_slice(),
                hashes: hashes.into_boxed_slice(),
            }
        };
        (set, seen.work)
    }
}

/// The keys of one message seen so far, for `KeySet::new` to drop repeats
/// in O(1) expected per key (K-6: a send costs O(keys)). Up to
/// `SCAN_UP_TO` keys it compares the new key's hash with every earlier
/// one's, which for the one- and two-key messages most channels carry is
/// a few compares and no allocation; past that it files positions under
/// their hashes in a table of its own (open addressing, at most half
/// full), so that a message of n keys costs O(n), not O(n^2). `Eq` runs
/// only between keys whose hashes are equal, either way.
struct SeenKeys {
    /// Positions in the key list, by hash; `EMPTY` where none. Empty while
    /// scanning.
    places: Vec<u32>,
    /// Its work so far: earlier keys whose hashes were compared with a new
    /// key's, and keys refiled when the table grew. What `deduplicate`
    /// reports, for the test that holds the cost linear.
    work: usize,
}

/// Keys compared by scanning, before the table is built.
const SCAN_UP_TO: usize = 16;

impl SeenKeys {
    const EMPTY: u32 = u32::MAX;

    fn new() -> Self {
        SeenKeys {
            places: Vec::new(),
            work: 0,
        }
    }

    /// Whether a key with `hash` for which `is` holds (given its place) is
    /// among those seen, whose hashes are `hashes`; if not, it is recorded
    /// as the next (the caller appends it).
    fn find_or_add(&mut self, hash: u64, hashes: &[u64], is: impl Fn(usize) -> bool) -> bool {
        let next = hashes.len();
        if self.places.is_empty() {
            self.work += next;
            if hashes
                .iter()
                .enumerate()
                .any(|(at, &h)| h == hash && is(at))
            {
                return true;
            }
            if next >= SCAN_UP_TO {
                self.rebuild(hashes);
                self.file(hash, next);
            }
            return false;
        }
        let mask = self.places.len() - 1;
        let mut at = hash as usize & mask;
        loop {
            let place = self.places[at];
            if place == Self::EMPTY {
                break;
            }
            self.work += 1;
            if hashes[place as usize] == hash && is(place as usize) {
                return true;
            }
            at = (at + 1) & mask;
        }
        if 2 * (next + 1) > self.places.len() {
            self.rebuild(hashes);
            self.file(hash, next);
        } else {
            self.places[at] = u32::try_from(next).expect("fewer than 2^32 keys in a message");
        }
        false
    }

    /// Files the keys seen, `hashes`, in a table at most half full once
    /// one more is added (doubling at least: amortised O(1) per key).
    fn rebuild(&mut self, hashes: &[u64]) {
        self.work += hashes.len();
        self.places.clear();
        self.places
            .resize((2 * (hashes.len() + 1)).next_power_of_two(), Self::EMPTY);
        for (place, &hash) in hashes.iter().enumerate() {
            self.file(hash, place);
        }
    }

    fn file(&mut self, hash: u64, place: usize) {
        let mask = self.places.len() - 1;
        let mut at = hash as usize & mask;
        while self.places[at] != Self::EMPTY {
            at = (at + 1) & mask;
        }
        self.places[at] = u32::try_from(place).expect("fewer than 2^32 keys in a message");
    }
}

impl<K> KeySet<K> {
    /// No keys (no allocation).
    pub(crate) fn empty() -> Self {
        KeySet::Many {
            keys: Box::new([]),
            hashes: Box::new([]),
        }
    }

    pub(crate) fn as_slice(&self) -> &[K] {
        match self {
            KeySet::One { key, .. } => std::slice::from_ref(key),
            KeySet::Many { keys, .. } => keys,
        }
    }

    /// Each key with its hash.
    fn hashed(&self) -> impl Iterator<Item = (&K, u64)> {
        let hashes = match self {
            KeySet::One { hash, .. } => std::slice::from_ref(hash),
            KeySet::Many { hashes, .. } => hashes,
        };
        self.as_slice().iter().zip(hashes.iter().copied())
    }
}

/// Puts the message `index`, being filed (not yet in `waiting`; `behind`
/// is its own list of who is behind it), at the end of a key's queue;
/// `place` is the key's place among its keys.
fn join_queue<K, M>(
    state: &mut KeyState<K>,
    waiting: &mut Slab<Waiting<M>>,
    behind: &mut Behind,
    index: Index,
    place: usize,
) {
    if state.first == NONE {
        state.first = index;
    } else if state.last == index {
        // Two of its keys found one entry: only a key whose `Eq` is not an
        // equivalence does that. It waits behind itself, so stays waiting
        // (as a `HashMap` with such keys, valid but unspecified).
        *behind.slot(state.last_place as usize) = index;
    } else {
        *waiting
            .get_mut(state.last)
            .behind
            .slot(state.last_place as usize) = index;
    }
    state.last = index;
    state.last_place = u32::try_from(place).expect("at most 2^32 keys in a message");
}

/// Finds `key`'s entry among those in its run: by its hash first, so
/// that the user's `Eq` runs only on keys with an equal hash.
fn is<K: Eq>(key: &K, hash: u64) -> impl Fn(&KeyState<K>) -> bool + '_ {
    move |state| state.hash == hash && state.key == *key
}

/// The hash the table files an entry under (and rehashes it by, when it
/// grows): the sender's.
fn hash_of<K>(state: &KeyState<K>) -> u64 {
    state.hash
}

impl<K: Eq + Hash + Clone, M: Keyed<K>> Core<K, M> {
    pub(crate) fn new() -> Self {
        Core {
            waiting: Slab::new(),
            ready: VecDeque::new(),
            keys: Table::new(),
            found: Vec::new(),
            fresh: Vec::new(),
        }
    }

    /// Whether no message is queued (ready or waiting).
    pub(crate) fn is_empty(&self) -> bool {
        self.waiting.len == 0 && self.ready.is_empty()
    }

    /// Gives back most of the key table's array if few of its places are
    /// in use (`Table::shrink_if_sparse`): called after releases, the only
    /// time keys go.
    pub(crate) fn shrink_if_sparse(&mut self) {
        self.keys.shrink_if_sparse(hash_of);
    }

    /// Places in the key table's array. A diagnostic (K-6).
    pub(crate) fn key_places(&self) -> usize {
        self.keys.places()
    }

    /// Keys with an entry: held or waited for. A diagnostic (K-6).
    pub(crate) fn tracked_keys(&self) -> usize {
        self.keys.len()
    }

    /// Messages filed: (ready, waiting for a key). A diagnostic for the
    /// models' regimes.
    pub(crate) fn queued(&self) -> (usize, usize) {
        (self.ready.len(), self.waiting.len)
    }

    /// Queues a message: ready at once if every key is free and nobody
    /// waits for it (it takes its keys), waiting otherwise.
    ///
    /// The keys' `Eq` and `Clone` all run before the first change (see the
    /// module documentation): if one panics, nothing was filed, and the
    /// caller's unwinding drops the message.
    pub(crate) fn push(&mut self, message: M) {
        let Core {
            waiting,
            ready,
            keys: table,
            found,
            fresh,
        } = self;
        let keys = message.keys();
        // Room for every key first, so that no resize moves an entry
        // between the lookups and the changes they lead to.
        table.make_room(keys.as_slice().len(), hash_of);
        if let KeySet::One { key, hash } = keys {
            // The same two phases with nothing to keep between them: the
            // one lookup and clone (the user's code) come before any change.
            match table.probe(*hash, is(key, *hash)) {
                Ok(at) => {
                    let index = waiting.next_index();
                    let mut behind = Behind::One(NONE);
                    join_queue(table.get_mut(at), waiting, &mut behind, index, 0);
                    let at = waiting.insert(Waiting {
                        message,
                        blocked: 1,
                        behind,
                    });
                    debug_assert_eq!(at, index, "waited under another index");
                }
                Err(vacancy) => {
                    let state = KeyState {
                        key: key.clone(),
                        hash: *hash,
                        first: NONE,
                        last: NONE,
                        last_place: 0,
                        held: true, // reserved (K-1)
                    };
                    table.insert_from(vacancy, state);
                    ready.push_back(message);
                }
            }
            return;
        }
        // Phase 1, the user's code: one lookup per key, and a clone of each
        // key no entry tracks yet (the entry keeps it).
        found.clear();
        let fresh = ClearOnDrop(fresh);
        let mut blocked = 0;
        for (key, hash) in keys.hashed() {
            let lookup = table.probe(hash, is(key, hash));
            match lookup {
                Ok(_) => blocked += 1,
                Err(_) => fresh.0.push(key.clone()),
            }
            found.push(lookup);
        }
        // Phase 2, no user code: file it. A key held, or waited for by an
        // earlier message, is waited on behind them; a key untracked is
        // reserved (K-1) if the message is ready at once, and otherwise
        // waited on with this message at the head of its queue, so that it
        // keeps later messages on every one of its keys behind it (K-2).
        let mut clones = fresh.0.drain(..);
        let index = if blocked == 0 {
            NONE
        } else {
            waiting.next_index()
        };
        let mut behind = if blocked == 0 {
            Behind::One(NONE) // never waits: no list needed
        } else {
            Behind::none(keys.as_slice().len())
        };
        for (place, ((_, hash), lookup)) in keys.hashed().zip(found.iter()).enumerate() {
            match *lookup {
                Ok(at) => {
                    let state = table.get_mut(at);
                    debug_assert!(state.held || state.first != NONE, "a stale entry");
                    join_queue(state, waiting, &mut behind, index, place);
                }
                Err(vacancy) => {
                    let key = clones.next().expect("a clone per untracked key");
                    let held = blocked == 0;
                    let state = KeyState {
                        key,
                        hash,
                        first: if held { NONE } else { index },
                        last: index,
                        last_place: u32::try_from(place).expect("at most 2^32 keys in a message"),
                        held,
                    };
                    table.insert_from(vacancy, state);
                }
            }
        }
        debug_assert!(clones.next().is_none(), "a clone left over");
        drop(clones);
        if blocked == 0 {
            ready.push_back(message);
            return;
        }
        let at = waiting.insert(Waiting {
            message,
            blocked,
            behind,
        });
        debug_assert_eq!(at, index, "waited under another index");
    }

    /// Removes the oldest ready message, whose keys stay held until the
    /// caller releases them.
    pub(crate) fn pop_ready(&mut self) -> Option<M> {
        self.ready.pop_front()
    }

    /// Releases the keys a received message held; a waiting message that
    /// was waiting only for them becomes ready.
    pub(crate) fn release(&mut self, keys: &KeySet<K>) {
        for (key, hash) in keys.hashed() {
            // A panic in the lookup's `Eq` leaves this key and the rest
            // held; the keys before it are released (module docs).
            let at = self
                .keys
                .find(hash, is(key, hash))
                .expect("a held key's entry");
            let state = self.keys.get_mut(at);
            debug_assert!(state.held, "released a key nobody held");
            let head = state.first;
            if head == NONE {
                self.keys.remove_at(at, hash_of); // nobody waits: the key is done (K-6)
                continue;
            }
            state.held = false;
            let head_message = self.waiting.get_mut(head);
            head_message.blocked -= 1;
            if head_message.blocked == 0 {
                self.promote(head);
            }
        }
    }

    /// Makes the waiting message `index`, at the head of every one of its
    /// keys' queues with every key free, ready: it takes its keys.
    ///
    /// Every key is looked up before anything moves: if a key's `Eq`
    /// panics, the message stays waiting at the head of its keys' queues,
    /// its keys free and its count at 0, which no later release changes
    /// (module docs).
    fn promote(&mut self, index: Index) {
        self.found.clear();
        for (key, hash) in self.waiting.get(index).message.keys().hashed() {
            let at = self.keys.find(hash, is(key, hash)).expect("a tracked key");
            self.found.push(Ok(at));
        }
        let Waiting {
            message,
            mut behind,
            ..
        } = self.waiting.remove(index);
        for (place, lookup) in self.found.iter().enumerate() {
            let state = self.keys.get_mut(lookup.expect("found above"));
            debug_assert_eq!(state.first, index, "promoted a message not at the head");
            debug_assert!(!state.held, "promoted onto a held key");
            state.first = *behind.slot(place);
            state.held = true; // reserved before it is received (K-1)
        }
        self.ready.push_back(message);
    }
}

/// The core on its own, for its property test against its specification
/// (`specs/key_core.rs`, through the hidden `modelsync::internals`): a
/// message is an id with keys. Not an API for users.
pub struct CoreOfIds<K> {
    core: Core<K, IdWithKeys<K>>,
    hasher: std::collections::hash_map::RandomState,
    /// Received (popped) messages' keys, until they are released.
    received: Vec<IdWithKeys<K>>,
}

struct IdWithKeys<K> {
    id: usize,
    keys: KeySet<K>,
}

impl<K> Keyed<K> for IdWithKeys<K> {
    fn keys(&self) -> &KeySet<K> {
        &self.keys
    }
}

impl<K> std::fmt::Debug for CoreOfIds<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CoreOfIds")
            .field("received", &self.received.len())
            .finish_non_exhaustive()
    }
}

impl<K: Eq + Hash + Clone> Default for CoreOfIds<K> {
    fn default() -> Self {
        Self::new()
    }
}

impl<K: Eq + Hash + Clone> CoreOfIds<K> {
    /// An empty core.
    pub fn new() -> Self {
        CoreOfIds {
            core: Core::new(),
            hasher: Default::default(),
            received: Vec::new(),
        }
    }

    /// Queues message `id` with `keys` (repeats dropped, K-8).
    pub fn push(&mut self, id: usize, keys: impl IntoIterator<Item = K>) {
        let keys = KeySet::new(keys, &self.hasher);
        self.core.push(IdWithKeys { id, keys });
    }

    /// The oldest ready message, received: its keys stay held until
    /// `release`.
    pub fn pop_ready(&mut self) -> Option<usize> {
        let message = self.core.pop_ready()?;
        let id = message.id;
        self.received.push(message);
        Some(id)
    }

    /// Releases received message `id`'s keys.
    ///
    /// # Panics
    /// If `id` is not a received message.
    pub fn release(&mut self, id: usize) {
        let at = self
            .received
            .iter()
            .position(|m| m.id == id)
            .expect("released a message that was not received");
        let message = self.received.swap_remove(at);
        self.core.release(message.keys());
    }

    /// `keys` as a send files them (K-8: repeats dropped, first-seen
    /// order), and the work the deduplication did: keys looked at and
    /// refiled, linear in the keys (K-6).
    pub fn deduplicate(&self, keys: impl IntoIterator<Item = K>) -> (Vec<K>, usize) {
        let (set, work) = KeySet::new_counting(keys, &self.hasher);
        let keys = match set {
            KeySet::One { key, .. } => vec![key],
            KeySet::Many { keys, .. } => keys.into_vec(),
        };
        (keys, work)
    }

    /// Keys held or waited for (K-6).
    pub fn tracked_keys(&self) -> usize {
        self.core.tracked_keys()
    }

    /// Whether no message is queued, ready or waiting.
    pub fn is_empty(&self) -> bool {
        self.core.is_empty()
    }
}
