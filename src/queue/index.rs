//! Ring indices: free-running `u32` counters, reduced modulo the capacity
//! only when a slot is addressed.
//!
//! The head word packs two of them into one `u64`, so that a stealer can
//! claim slots and later release them with single atomic operations:
//! the high half is `steal` (the first slot a stealer may still be reading),
//! the low half is `real` (the first slot not yet claimed by anyone). When no
//! steal is in progress `steal == real`.
//!
//! Indices must only be compared through `wrapping_sub`: they wrap at
//! `u32::MAX` and every distance is at most the capacity, which is at most
//! `2^31`, so a wrapped difference is always the true distance.

/// Packs `(steal, real)` into the head word.
#[inline]
pub(crate) fn pack(steal: u32, real: u32) -> u64 {
    (u64::from(steal) << 32) | u64::from(real)
}

/// Splits the head word into `(steal, real)`.
#[inline]
pub(crate) fn unpack(head: u64) -> (u32, u32) {
    ((head >> 32) as u32, head as u32)
}

/// Number of slots in `[from, to)`, correct across `u32::MAX`.
#[inline]
pub(crate) fn distance(from: u32, to: u32) -> u32 {
    to.wrapping_sub(from)
}

/// How many items a steal takes when `available` are visible: half, rounded
/// up, so that a stealer always makes progress on a queue of one item.
#[inline]
pub(crate) fn steal_count(available: u32) -> u32 {
    available - available / 2
}

#[cfg(all(test, not(loom), not(shuttle)))]
mod tests {
    use super::*;

    #[test]
    fn pack_round_trips_at_the_extremes() {
        for (steal, real) in [
            (0, 0),
            (u32::MAX, 0),
            (0, u32::MAX),
            (u32::MAX, u32::MAX - 1),
        ] {
            assert_eq!(unpack(pack(steal, real)), (steal, real));
        }
    }

    #[test]
    fn distance_is_correct_across_wraparound() {
        assert_eq!(distance(u32::MAX - 1, 2), 4);
        assert_eq!(distance(5, 5), 0);
        assert_eq!(distance(u32::MAX, u32::MAX.wrapping_add(4)), 4);
    }

    #[test]
    fn steal_count_is_half_rounded_up() {
        let expected = [
            (0, 0),
            (1, 1),
            (2, 1),
            (3, 2),
            (4, 2),
            (255, 128),
            (256, 128),
        ];
        for (available, taken) in expected {
            assert_eq!(steal_count(available), taken, "available = {available}");
        }
    }
}
