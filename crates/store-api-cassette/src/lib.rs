#![doc = include_str!("../README.md")]
#![deny(missing_docs)]

mod compare;
mod conformance;
mod diff;
mod format;
mod matching;
mod record;
mod redact;
mod replay;

pub use compare::{Compared, Comparison, Outcome, compare};
pub use conformance::{Conformance, Finding, Undeclared, conformance};
pub use format::{
    Cassette, CassetteError, CustomerData, Exchange, FORMAT, RecordedAnswer, RecordedBody,
    RecordedRequest,
};
pub use record::{
    DEFAULT_MAX_KEPT_BODY, HttpAnswer, HttpRequest, RecordOptions, Recorder, Recording,
};
pub use replay::{Replay, ReplayError, Replayer};
