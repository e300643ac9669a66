//! A deterministic model of the webhook receiver side, explored (issue 29).
//!
//! N receivers (processes, or tasks of one process) share one dedupe store; the service delivers each
//! event up to five times on the emulator's schedule (attempts 1, 2, 4 and 8 s after the previous one
//! ended, each with a 10 s timeout), and each delivery is answered, times out (its answer lost) or is
//! refused. Every receiver runs the real [`process_once`](store_api_webhooks::dedupe::process_once)
//! around a handler of a chosen duration (shorter or longer than the lease) with an explicit effect
//! point, checked against [`Lease::is_held`](store_api_webhooks::dedupe::Lease::is_held) right before
//! it; a receiver may die before or after that effect (before `complete`), or be cut off from the store,
//! and a run may return right before its first renewal and have its `complete` answered only 9 ticks
//! later, past what was left of its claim (issue 35, defect 13).
//! The store is the real [`MemoryDedupe`](store_api_webhooks::dedupe::MemoryDedupe) or [`SimRedis`], a
//! transcription of `RedisDedupe`'s scripts and client with Redis's failures: a lost reply (the script
//! ran, the caller gets an error), a request that times out, a failover that loses what no replica had,
//! a restart without persistence, a lease or a done marker that expires.
//!
//! Time is tokio's paused clock, discretised: every delay the model schedules is a whole number of
//! [`TICK`]s (the delivery schedule, the delivery timeout, the handlers, the cuts), the lease is the
//! default 10 ticks and `process_once` renews every third of it on its own timer. A run is a pure
//! function of its schedule, the choices made at its branch points ([`Point`]).
//!
//! [`exhaustive`] runs every schedule of a [`Scenario`] up to its exhaustive limits, [`random`] seeded
//! schedules beyond, [`replay`] one schedule again. After every run each [`Invariant`] is checked on the
//! run's history; what the issue calls the documented price of a failure (a second run after a death
//! past the effect, a store that lost its markers, an overlap after a partition longer than the lease, a
//! fail-closed refusal) is counted per [`Price`], never as a violation. A violation prints the run and
//! the one command that replays it. [`redis::Server`] also answers the script operations one by one, so
//! a differential test can put the transcription beside the real scripts on a real `redis-server`.

mod choice;
mod explore;
pub mod redis;
mod replay;
mod world;

pub use choice::{Point, Tape};
pub use explore::{Report, Violation, exhaustive, random, replay};
pub use redis::SimRedis;
pub use replay::Replay;
pub use world::{Invariant, Price, Scenario, StoreKind, TICK, Verdict, World};
