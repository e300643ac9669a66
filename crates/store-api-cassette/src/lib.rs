#![doc = include_str!("../README.md")]
#![deny(missing_docs)]

mod compare;
mod conformance;
mod format;

pub use compare::{Compared, Comparison, Outcome, compare};
pub use conformance::{Conformance, Finding, Undeclared, conformance};
pub use format::{
    Cassette, CassetteError, CustomerData, Exchange, FORMAT, RecordedAnswer, RecordedBody,
    RecordedRequest,
};
