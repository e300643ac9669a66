//! A deterministic model of the money path's network, explored.
//!
//! `store_api::Client` talks to the emulator in the same process through a simulated network
//! ([`SimNetwork`], a `store_api::network::Network`) whose every exchange can be delivered, lost before
//! the service, processed with its answer lost, answered by something on the way instead (a redirect to
//! another host, an HTML 4xx or 5xx page, a 429 with any `Retry-After`, a reset), answered truncated,
//! answered after the client's deadline, or answered with an endless body ([`Exchange`]). Time is
//! tokio's paused clock, so backoffs and deadlines cost no wall time, and a run is a pure function of its
//! schedule.
//!
//! [`exhaustive`] runs every schedule of a [`Scenario`] up to a depth (the first 3 `POST`s and 3
//! lookups of a submission, the first 3 reads of a read), [`random`] seeded schedules of any length
//! beyond it, and [`replay`] one schedule again. After every run the scenario's [`Invariant`]s are
//! checked against what the emulator holds; a violation prints the run and the one command that
//! replays it.
//!
//! A schedule counts as run once the invariants every run judges ([`Invariant::EVERY_RUN`]) were
//! judged ([`Report::schedules`]; the others are [`Report::unjudged`]), and an exploration must have
//! checked each of its scenario's invariants at least once ([`Report::unchecked`], [`Scenario::invariants`]):
//! an invariant no run checks reports no violation whatever the client does (issue 39).

mod exchange;
mod explore;
mod network;
mod world;

pub use exchange::{Exchange, RetryAfter};
pub use explore::{Replay, Report, Violation, exhaustive, random, replay};
pub use network::{ELSEWHERE, HOME, Limits, OVERREAD, SimNetwork, Step, Tape};
pub use world::{Invariant, Scenario, Verdict, World};
