#![doc = include_str!("../README.md")]
#![deny(missing_docs)]

mod check;
mod format;

pub use check::{Finding, RecordingsReport, Verdict, check};
pub use format::{
    Cassette, CassetteError, CustomerData, Exchange, FORMAT, RecordedAnswer, RecordedBody,
    RecordedRequest,
};
