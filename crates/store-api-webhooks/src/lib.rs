#![doc = include_str!("../README.md")]
#![deny(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

#[cfg(feature = "axum")]
pub mod axum;
pub mod dedupe;
mod delivery_link;
mod error;
mod event;
#[cfg(feature = "client")]
mod follow_up;
#[cfg(feature = "otel-metrics")]
mod metrics;
mod signature;
mod telemetry;
mod verdict;
mod verifier;

pub use error::{PayloadError, WebhookError};
pub use event::{Event, EventData, Resource, TEST_EVENT_ID, Topic};
#[cfg(feature = "client")]
pub use follow_up::{FollowUp, follow_up, keep_store_cache};
pub use signature::{SIGNATURE_HEADER, sign};
pub use verifier::{DEFAULT_MAX_BODY_BYTES, Verifier};
