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

pub use compare::{Compared, Comparison, Outcome, compare, compare_refused};
pub use conformance::{Conformance, Nonconformity, Undeclared, conformance};
pub use format::{
    APPENDED_FORMAT, Cassette, CassetteError, CassetteWriter, CustomerData, Exchange, FORMAT,
    MAX_NAME_LEN, RecordedAnswer, RecordedBody, RecordedRequest, cassette_name,
};
pub use record::{
    DEFAULT_MAX_KEPT_BODY, HttpAnswer, HttpRequest, RecordOptions, Recorder, Recording,
};
pub use replay::{Replay, ReplayError, Replayer, request_line};
