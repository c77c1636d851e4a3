//! Error types of the engine. User mistakes are `Config`; a stuck network is `Deadlock`;
//! a broken invariant is `Invariant` (always a bug in dflab, never a user error).

use thiserror::Error;

#[derive(Debug, Error, Clone, PartialEq)]
pub enum Error {
    /// Bad input: names the dotted field and what is allowed.
    #[error("{field}: {message}")]
    Config { field: String, message: String },
    /// The watchdog saw no packet move for the configured time while packets were in flight.
    #[error("deadlock: {0}")]
    Deadlock(String),
    /// The run's observer asked it to stop (an interrupt).
    #[error("interrupted: {0}")]
    Interrupted(String),
    /// An internal consistency check failed.
    #[error("invariant violated: {0}")]
    Invariant(String),
}

impl Error {
    pub fn config(field: impl Into<String>, message: impl Into<String>) -> Self {
        Error::Config { field: field.into(), message: message.into() }
    }
}

pub type Result<T> = std::result::Result<T, Error>;
