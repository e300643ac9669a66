//! Integration tests of the emulator through real HTTP on 127.0.0.1: one binary, one module per area.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

/// Shared helpers: emulator start-up, the HTTP client, error-envelope checks, a webhook receiver.
mod common;

/// Creating artworks from (fake) URLs: the stored copy and every URL-rule message.
mod artworks;
/// The two 401s, keys of other stores, inactive stores, no 403, no 429 for unauthenticated floods.
mod auth;
/// The `store-api-emulator` binary: its ready line and banner, the sample artwork, a frozen clock.
mod binary;
/// The deviations that only requests with bodies show: each changes exactly the answers it is about.
mod deviations;
/// Faults on demand: every kind over the control API and in process.
mod faults;
/// The order lifecycle driven by the control endpoints, and auto-advance.
mod lifecycle;
/// List conventions of the four list endpoints: paging, limits, filters, sorts, the envelope.
mod lists;
/// Resource 404s (own messages, other stores' ids, private blanks) and `Cannot <METHOD> <path>`.
mod not_found;
/// Every row of the seed's order-creation and custom-line-item 400 tables.
mod order_rules;
/// Creating orders: 201, costs, field validation, unknown fields, the 409, orders_create.
mod orders;
/// The per-store rate limit (burst 10, then 2/s) with its headers and 429.
mod rate_limit;
/// Loopback-only control plane and webhooks, explicit remote access, SIGTERM keeps the state.
mod safety;
/// Persisting the state across restarts.
mod state_file;
/// `updatedAt` moves on every change of a product or catalog product; `sort[updatedAt]` follows it.
mod updated_at;
/// Webhook delivery: payload, signature, retries, topics, product events, key rotation.
mod webhooks;
