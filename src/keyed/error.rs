//! Errors of the keyed channel. Like std's channel errors, they implement
//! `Debug` without requiring the value to (the value is shown as `..`),
//! `Display` and `std::error::Error`, and convert as std's do
//! (`SendError` into `TrySendError::Disconnected`, `RecvError` into
//! `TryRecvError::Disconnected` and `RecvTimeoutError::Disconnected`).

use std::error::Error;
use std::fmt;

/// `send` failed because the receiver is gone; the value comes back.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct SendError<V>(pub V);

/// Why `try_send` did not send; the value comes back in either case.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum TrySendError<V> {
    /// The channel holds `capacity` messages not yet received.
    Full(V),
    /// The receiver is gone.
    Disconnected(V),
}

impl<V> TrySendError<V> {
    /// The value that was not sent.
    pub fn into_inner(self) -> V {
        match self {
            TrySendError::Full(v) | TrySendError::Disconnected(v) => v,
        }
    }
}

/// `recv` failed: every sender is gone and nothing is queued.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecvError;

/// Why `try_recv` returned no message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TryRecvError {
    /// Nothing is queued; a sender is still alive.
    Empty,
    /// Messages are queued, but each waits for a key a live message holds
    /// (or for an earlier message on one of its keys).
    Conflicted,
    /// Every sender is gone and nothing is queued.
    Disconnected,
}

/// Why `recv_timeout` returned no message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecvTimeoutError {
    /// Nothing was deliverable before the timeout.
    Timeout,
    /// Every sender is gone and nothing is queued.
    Disconnected,
}

impl<V> fmt::Debug for SendError<V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SendError { .. }")
    }
}

impl<V> fmt::Debug for TrySendError<V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TrySendError::Full(_) => f.write_str("Full(..)"),
            TrySendError::Disconnected(_) => f.write_str("Disconnected(..)"),
        }
    }
}

impl<V> fmt::Display for SendError<V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("sending on a closed keyed channel")
    }
}

impl<V> fmt::Display for TrySendError<V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TrySendError::Full(_) => f.write_str("sending on a full keyed channel"),
            TrySendError::Disconnected(_) => f.write_str("sending on a closed keyed channel"),
        }
    }
}

impl fmt::Display for RecvError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("receiving on a closed keyed channel")
    }
}

impl fmt::Display for TryRecvError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TryRecvError::Empty => "receiving on an empty keyed channel",
            TryRecvError::Conflicted => {
                "every queued message waits for a key another message holds"
            }
            TryRecvError::Disconnected => "receiving on a closed keyed channel",
        })
    }
}

impl fmt::Display for RecvTimeoutError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            RecvTimeoutError::Timeout => "timed out waiting on a keyed channel",
            RecvTimeoutError::Disconnected => "receiving on a closed keyed channel",
        })
    }
}

/// As std's: a failed `send` is a `try_send` that found the receiver gone.
impl<V> From<SendError<V>> for TrySendError<V> {
    fn from(SendError(value): SendError<V>) -> Self {
        TrySendError::Disconnected(value)
    }
}

/// As std's: `recv`'s only failure is `try_recv`'s `Disconnected`.
impl From<RecvError> for TryRecvError {
    fn from(RecvError: RecvError) -> Self {
        TryRecvError::Disconnected
    }
}

/// As std's: `recv`'s only failure is `recv_timeout`'s `Disconnected`.
impl From<RecvError> for RecvTimeoutError {
    fn from(RecvError: RecvError) -> Self {
        RecvTimeoutError::Disconnected
    }
}

impl<V> Error for SendError<V> {}
impl<V> Error for TrySendError<V> {}
impl Error for RecvError {}
impl Error for TryRecvError {}
impl Error for RecvTimeoutError {}
