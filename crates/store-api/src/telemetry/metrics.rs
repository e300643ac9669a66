//! The client's metrics (feature `otel-metrics`), from the `opentelemetry` crate's global meter
//! provider under the scope `store-api`: the instruments are made once, on first use, so set the
//! provider before the first request. Attributes never carry an id or the key.

use std::borrow::Cow;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use opentelemetry::metrics::{Counter, Histogram};
use opentelemetry::{InstrumentationScope, KeyValue, Value, global};

/// The conventions' advice for `http.client.request.duration`, in seconds.
pub(crate) const DURATION_BOUNDARIES: [f64; 14] = [
    0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0,
];

struct Instruments {
    request_duration: Histogram<f64>,
    retries: Counter<u64>,
    pauses: Counter<u64>,
    wait_duration: Histogram<f64>,
    submissions: Counter<u64>,
}

fn instruments() -> &'static Instruments {
    static INSTRUMENTS: OnceLock<Instruments> = OnceLock::new();
    INSTRUMENTS.get_or_init(|| {
        let scope = InstrumentationScope::builder("store-api")
            .with_version(env!("CARGO_PKG_VERSION"))
            .build();
        let meter = global::meter_with_scope(scope);
        Instruments {
            request_duration: meter
                .f64_histogram("http.client.request.duration")
                .with_unit("s")
                .with_description("Duration of HTTP client requests (one per try).")
                .with_boundaries(DURATION_BOUNDARIES.to_vec())
                .build(),
            retries: meter
                .u64_counter("store_api.client.retries")
                .with_unit("{retry}")
                .with_description("Tries sent again after a retryable outcome.")
                .build(),
            pauses: meter
                .u64_counter("store_api.client.rate_limit.pauses")
                .with_unit("{pause}")
                .with_description("Store-wide pauses the service's rate-limit answers imposed.")
                .build(),
            wait_duration: meter
                .f64_histogram("store_api.client.rate_limit.wait.duration")
                .with_unit("s")
                .with_description("The rate limiter's wait before a try that waited.")
                .with_boundaries(DURATION_BOUNDARIES.to_vec())
                .build(),
            submissions: meter
                .u64_counter("store_api.orders.submissions")
                .with_unit("{submission}")
                .with_description("Orders::submit calls, by outcome.")
                .build(),
        }
    })
}

/// The server of a client's base URL, as its tries' points carry it: built once per client, so a try
/// copies a reference count instead of allocating its host.
#[derive(Debug, Clone)]
pub(crate) struct Server {
    pub address: Arc<str>,
    pub port: Option<u16>,
}

impl Server {
    pub(crate) fn of(base_url: &url::Url) -> Server {
        Server {
            address: Arc::from(base_url.host_str().unwrap_or_default()),
            port: base_url.port_or_known_default(),
        }
    }
}

/// What one try's point of `http.client.request.duration` carries.
pub(crate) struct TryPoint<'a> {
    pub method: &'a reqwest::Method,
    pub address: Arc<str>,
    pub port: Option<u16>,
    pub template: Option<&'a Cow<'static, str>>,
    pub status: Option<u16>,
    pub error_type: Option<&'a Cow<'static, str>>,
}

/// `http.request.method`: the standard methods as static text (no allocation per try).
fn method_value(method: &reqwest::Method) -> Value {
    Value::from(match method.as_str() {
        "GET" => "GET",
        "POST" => "POST",
        "PUT" => "PUT",
        "PATCH" => "PATCH",
        "DELETE" => "DELETE",
        "HEAD" => "HEAD",
        "OPTIONS" => "OPTIONS",
        other => return Value::from(other.to_owned()),
    })
}

/// One try of `duration`. The attributes are built on the stack, of static or shared text: with no
/// meter provider installed the instrument is a no-op, and this costs next to nothing.
pub(crate) fn record_try(point: &TryPoint<'_>, duration: Duration) {
    let mut attributes: [KeyValue; 6] = [
        KeyValue::new("http.request.method", method_value(point.method)),
        KeyValue::new("server.address", Value::from(point.address.clone())),
        unused(),
        unused(),
        unused(),
        unused(),
    ];
    let mut len = 2;
    let mut push = |attribute: KeyValue| {
        if let Some(slot) = attributes.get_mut(len) {
            *slot = attribute;
            len += 1;
        }
    };
    if let Some(port) = point.port {
        push(KeyValue::new("server.port", i64::from(port)));
    }
    if let Some(template) = point.template {
        push(KeyValue::new("url.template", template.clone()));
    }
    if let Some(status) = point.status {
        push(KeyValue::new(
            "http.response.status_code",
            i64::from(status),
        ));
    }
    if let Some(error_type) = point.error_type {
        push(KeyValue::new("error.type", error_type.clone()));
    }
    instruments()
        .request_duration
        .record(duration.as_secs_f64(), attributes.get(..len).unwrap_or(&[]));
}

/// A free slot of [`record_try`]'s attributes (never recorded).
fn unused() -> KeyValue {
    KeyValue::new("", false)
}

/// A try of `operation` that ended with `error_type` is sent again.
pub(crate) fn record_retry(operation: &'static str, error_type: Cow<'static, str>) {
    instruments().retries.add(
        1,
        &[
            KeyValue::new("store_api.operation", operation),
            KeyValue::new("error.type", error_type),
        ],
    );
}

/// The service's answer paused the store: `429` or `remaining_zero`.
pub(crate) fn record_pause(reason: &'static str) {
    instruments()
        .pauses
        .add(1, &[KeyValue::new("store_api.rate_limit.reason", reason)]);
}

/// The limiter held a try back for `waited`.
pub(crate) fn record_wait(waited: Duration) {
    instruments()
        .wait_duration
        .record(waited.as_secs_f64(), &[]);
}

/// A submission ended with `outcome`.
pub(crate) fn record_submission(outcome: &'static str) {
    instruments()
        .submissions
        .add(1, &[KeyValue::new("store_api.submit.outcome", outcome)]);
}
