//! The webhook metrics (feature `otel-metrics`; docs/telemetry.md): `store_api.webhooks.deliveries` by
//! verdict and topic, `store_api.webhooks.handler.duration`. From the global meter provider, created
//! once; attributes are low-cardinality (never an event id: an unknown topic counts as `_OTHER`).

use std::sync::OnceLock;
use std::time::Duration;

use opentelemetry::metrics::{Counter, Histogram};
use opentelemetry::{InstrumentationScope, KeyValue, global};

use crate::event::Topic;
use crate::verdict::Verdict;

/// The conventions' advice for durations in seconds (the client's `http.client.request.duration` too).
const BOUNDARIES: [f64; 14] = [
    0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0,
];

struct Instruments {
    deliveries: Counter<u64>,
    handler_duration: Histogram<f64>,
}

fn instruments() -> &'static Instruments {
    static INSTRUMENTS: OnceLock<Instruments> = OnceLock::new();
    INSTRUMENTS.get_or_init(|| {
        let meter = global::meter_with_scope(
            InstrumentationScope::builder("store-api-webhooks")
                .with_version(env!("CARGO_PKG_VERSION"))
                .build(),
        );
        Instruments {
            deliveries: meter
                .u64_counter("store_api.webhooks.deliveries")
                .with_unit("{delivery}")
                .with_description("Webhook deliveries received, by verdict.")
                .build(),
            handler_duration: meter
                .f64_histogram("store_api.webhooks.handler.duration")
                .with_unit("s")
                .with_description("How long the event handler run by process_once took.")
                .with_boundaries(BOUNDARIES.to_vec())
                .build(),
        }
    })
}

fn attributes(verdict: Verdict, topic: Option<&Topic>) -> Vec<KeyValue> {
    let mut attributes = vec![KeyValue::new("store_api.webhook.verdict", verdict.as_str())];
    if let Some(topic) = topic {
        // The known topics are a fixed set; an unknown one is whatever the sender wrote.
        let name = if topic.is_known() {
            topic.as_str().to_owned()
        } else {
            "_OTHER".to_owned()
        };
        attributes.push(KeyValue::new("store_api.webhook.topic", name));
    }
    attributes
}

/// Counts a delivery with its verdict.
pub(crate) fn delivery(verdict: Verdict, topic: Option<&Topic>) {
    instruments().deliveries.add(1, &attributes(verdict, topic));
}

/// Records how long a handler ran and what became of its delivery.
pub(crate) fn handler_duration(elapsed: Duration, verdict: Verdict, topic: Option<&Topic>) {
    instruments()
        .handler_duration
        .record(elapsed.as_secs_f64(), &attributes(verdict, topic));
}
