#![doc = include_str!("../README.md")]
#![deny(missing_docs)]

mod probe;
mod recordings;
mod report;
mod statements;

pub use probe::{DEFAULT_MAX_REQUESTS, ProbeOptions, probe};
pub use recordings::recordings;
pub use report::{Evidence, Finding, RecordedExchange, Report, Verdict};
