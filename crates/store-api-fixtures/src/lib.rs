#![doc = include_str!("../README.md")]
#![deny(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod artwork;
mod clock;
mod control;
mod deviation;
pub mod durable;
mod emulator;
mod error;
mod events;
pub mod faults;
mod logs;
mod loopback;
mod orders;
mod ratelimit;
mod remote;
pub mod seed;
mod serve;
mod server;
#[cfg(feature = "insta")]
#[cfg_attr(docsrs, doc(cfg(feature = "insta")))]
pub mod snapshot;
mod state;
mod wire;

pub use clock::DETERMINISTIC_START;
pub use control::StoreCredentials;
pub use deviation::Deviation;
pub use emulator::{ControlError, DEFAULT_SAVE_INTERVAL, Emulator, EmulatorBuilder, EmulatorError};
pub use events::MAX_ATTEMPTS as WEBHOOK_ATTEMPTS;
pub use faults::{FAULT_HEADER, Fault, FaultKind};
pub use logs::{Delivery, LOG_CAP, LOG_PATH_BYTES, LOG_RETENTION, RequestRecord};
pub use loopback::is_loopback_host;
pub use orders::AppAction;
pub use remote::{RemoteEmulator, RemoteError};
pub use seed::Seed;
pub use serve::{ServeArgs, ServeError, stop_signal};
pub use server::{API_PREFIX, MAX_BODY_BYTES};
pub use state::DEFAULT_IMAGE_BYTES_CAP;
