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
//! later, past what was left of its claim (issue 35, defect 13), or be frozen after its effect past
//! its lease (its renewals frozen with it) and send its `complete` stale when it wakes (issue 39).
//! The store is the real [`MemoryDedupe`](store_api_webhooks::dedupe::MemoryDedupe) or [`SimRedis`], a
//! transcription of `RedisDedupe`'s scripts and client with Redis's failures: a lost reply (the script
//! ran, the caller gets an error), a request that times out, a failover that loses what no replica had,
//! a replica that falls behind (a `WAIT` answers 0) before its primary fails over, a restart without
//! persistence, a lease or a done marker that expires.
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
//!
//! A schedule counts as run once every invariant was judged on its history ([`Report::schedules`]);
//! one that ended without ([`Report::unjudged`]) counts for nothing, and the bench's figure of
//! schedules asked for but not judged must be zero.
//!
//! # What the worlds cover, and what they do not
//!
//! Covered: two receivers (tasks of one process on `MemoryDedupe`, or processes on Redis), one or
//! two events, the service's five attempts; handlers short, longer than the lease, failing, dying
//! before or after their effect, restarting the process, cut off from the store, answered late by
//! it, frozen past their lease; Redis exchanges answered, their reply lost, timed out, after a
//! failover, after a restart, or with the replica behind until the primary fails over; done markers
//! that expire, a `MemoryDedupe` full of claims. Each of these is reached by the exhaustive set of
//! `cargo test` (or, for the two-event worlds, by its random schedules), and these hand-made
//! mutations are caught (issue 39; the test that catches each is named in `tests/it/receivers.rs`):
//! the transcription without its own-token branch, `MemoryDedupe`'s `complete` without its fence,
//! `WAIT`'s answer ignored, `WAIT` not sent.
//!
//! Not covered: more than two receivers or events; a process frozen before its effect (it is told
//! and skips it) or while a handler blocks its thread in other ways than a whole freeze; clocks that
//! disagree (one clock, tokio's, for all); Redis Cluster (slots that move, `MOVED`, one primary short
//! of replicas among several: `RedisDedupe`'s probe write is not transcribed), Redis's own
//! persistence (a restart always loses everything), the redis library's connection handling, and
//! `WAIT` with more than one replica; the real `RedisDedupe` only through the differential test
//! (every script path, with no `WAIT`, a `WAIT` a live replica acknowledges and one it cannot), never
//! inside the worlds; handlers whose effects are not one instant (half an effect, then a death).

mod choice;
mod explore;
pub mod redis;
mod replay;
mod world;

pub use choice::{Point, Tape};
pub use explore::{Report, Run, Violation, exhaustive, random, random_runs, replay, replay_run};
pub use redis::SimRedis;
pub use replay::Replay;
pub use world::{Invariant, Price, Scenario, StoreKind, TICK, Verdict, World};
