#![doc = include_str!("../README.md")]
#![deny(missing_docs)]

mod format;

pub use format::{
    Cassette, CassetteError, CustomerData, Exchange, FORMAT, RecordedAnswer, RecordedBody,
    RecordedRequest,
};
