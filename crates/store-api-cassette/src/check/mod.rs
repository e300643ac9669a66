//! The recordings as a check of the spec: every statement a recording can show and every assumption
//! of the spec (`x-assumption`), judged held, differs (with the exchange that shows it) or not seen.
//!
//! Unlike `store-api doctor`'s probe, which sends only `GET`s, a recording holds what a team's own
//! code sent: orders created, refused and retried. So it shows what a read-only probe cannot: how a
//! create-order request is validated and in which order, `null` fields, empty ids, the body size limit.
//! Every detector is precise: a recording of a service that behaves as the spec says (the emulator by
//! default) is reported held or not seen throughout, never differs.
//!
//! ```
//! use store_api_cassette::{Cassette, CustomerData, check};
//!
//! let report = check(&Cassette::new(CustomerData::Redacted));
//! assert_eq!(report.differing().count(), 0);
//! println!("{report}");
//! ```

mod answers;
mod bodies;
mod exchange;
mod limits;
mod lists;
mod orders;
mod report;
mod run;

pub use report::{Finding, RecordingsReport, Verdict};
pub use run::check;

#[cfg(test)]
mod tests;
