//! Cross-crate integration tests: `store_api::Client` over real HTTP on 127.0.0.1 against the emulator of
//! `store-api-fixtures`. One test binary; each test starts its own emulator.

#![allow(clippy::unwrap_used, clippy::expect_used)]

// Issue 31: cassettes recorded against the emulator and replayed with no network.
mod cassettes;
// Issue 31: recorded answers checked against the spec, and the emulator held to a recording.
mod compare;
// Issue 24: store-api doctor against the emulator and against emulators that deviate from the spec.
mod doctor;
// The client's pre-flight check and the emulator agree on random orders (a differential proptest).
mod differential;
// The emulator's faults on demand against the real client.
mod emulator_faults;
// Every endpoint end to end, typed results snapshotted.
mod endpoints;
// Typed errors, and what is refused locally is never sent.
mod errors;
// Exactly-once submission through a fault-injecting proxy.
mod exactly_once;
// Issue 39: the decisions of a submission no other test checked, each found by cargo-mutants.
mod submit_outcomes;
// Issue 22: redirects, firewall pages, forged successes and endless bodies over real HTTP.
mod hostile_network;
// Issue 35: hostile requests recorded over real HTTP; no name, email, phone or key in any file written.
mod hostile_recordings;
// One KeyHandle rotates a client, its clones and a webhook Verifier together, mid-traffic (issue 16).
mod key_rotation;
// Streaming every page, with orders arriving between pages.
mod pagination;
// The client's limiter against the emulator's real limit.
mod rate_limit;
// Issue 30: every caller (typed operations, submit, doctor, the escape hatch) takes the one request
// path: key, hooks, limiter, deadline, size cap, origin guard and redirect refusal, each for all four.
mod one_path;
// Issue 31: a recorded session, clean and with each deviation, judged by the recordings check.
mod recordings;
// The rare faults of issue 10: each one billed an order while the caller was told otherwise.
mod rare_faults;
// Issue 34: the copy of the store pre-flight validates against, at a merchant's size.
mod store_cache;
// Client, Error and Page cross threads (compile-time).
mod send_sync;
// Issue 29: settings at their extremes (`Duration::MAX`) and the clear-text base URLs `build` refuses.
mod settings;
// The money path and the reads under a model of the network, every schedule explored (issue 22).
mod sim;
// The receiver side under a model of deliveries, deaths and store failures, explored (issue 29).
mod receivers;
// Issue 37: the client's spans through OpenTelemetry's SDK, against the emulator with faults.
// store-api-webhooks end to end: the emulator's signed deliveries to an axum receiver, key rotation,
// follow_up (here rather than in that crate, which keeps its dev-dependencies free of an HTTP client).
mod webhook_emulator;
// store-api-webhooks' axum extractor and dedupe against a real server on 127.0.0.1.
mod webhook_receiver;
// Issue 37: the span per delivery (verify, claim, handler, complete, verdict) through OpenTelemetry's SDK.
