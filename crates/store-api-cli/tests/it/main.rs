//! The `store-api` binary end to end, against the local emulator (one test binary).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

// Commands that read: status, catalog, products, and the failures every command shares.
mod reads;
// artworks create|list|get.
mod artworks;
// orders create|submit|list|get|find.
mod orders;
// Issue 34: the copy of the store kept on disk between runs.
mod store_copy;
// orders watch, with and without --advance.
mod watch;
// webhooks verify, placement fit, completions.
mod offline;
// The `emulator` server command and the embedded `--emulator`.
mod emulator;
// The quick-start demo.
mod demo;
// `api METHOD PATH`: any request.
mod api;
// `doctor`: the spec's assumptions checked against the service, read-only.
mod doctor;
// Profiles of the configuration file and the precedence of settings.
mod profiles;
// `orders schema` and `webhooks schema` against the spec's examples.
mod schema;
// `proxy --record|--replay`, driven by curl.
mod proxy;
// `--help` of every command.
mod help;
// Issue 37: -v, -vv, -vvv/--debug show the traffic; the wait on the rate limit said.
mod traffic;
