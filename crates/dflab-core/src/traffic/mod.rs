//! Synthetic traffic: destination patterns ([`pattern`]) and injection processes
//! ([`injection`]).

pub mod injection;
pub mod pattern;
pub mod spec;

pub use injection::{Injector, LOCKSTEP_START};
pub use pattern::{Pattern, PatternSampler};
pub use spec::{PatternSpec, PATTERNS};
