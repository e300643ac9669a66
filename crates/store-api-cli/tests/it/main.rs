//! The `store-api` binary end to end, against the local emulator (one test binary).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

// Commands that read: status, catalog, products, and the failures every command shares.
mod reads;
// artworks create|list|get.
mod artworks;
// orders submit|list|get|find, and the deprecated orders create.
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
// Issue 38: the emulator's banner, `login`, the default ports, a frozen clock's 429.
mod login;
// `orders schema` and `webhooks schema` against the spec's examples.
mod schema;
// `proxy --record|--replay`, driven by curl.
mod proxy;
// `--help` of every command.
mod help;
// Issue 37: -v, -vv, -vvv/--debug show the traffic; the wait on the rate limit said.
mod traffic;
// Issue 38: `webhooks listen` registered at the emulator, verifying and forwarding.
mod listen;
// Issue 38, point 3: --jq, the JSON form of lists, tab-separated rows, filter values, api -H/-i/--paginate.
mod scripting;
