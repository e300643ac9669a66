//! The delivery span (issue 37, docs/telemetry.md): `store_api.webhooks.delivery` with the verify,
//! claim, handler and complete steps as children, and the verdict; the metrics with `otel-metrics`.
//!
//! A delivery is verified in one place (`Verifier::verify`, `verify_headers` or the axum extractor)
//! and processed in another (`process_once`), which gets only the event id. So verifying opens the
//! delivery span and parks it here, keyed by the task and the event id, held alive by the [`Event`]
//! ([`DeliveryLink`]); `process_once` in the same task takes it and closes it with the verdict.
//! Without a verified event to take over, `process_once` opens a delivery span of its own.
//!
//! Nothing is parked while no subscriber wants the span (and the metrics are off): the cost is then
//! `tracing`'s interest check per span. No span carries the key, a signature or the body.

use tracing::Span;
use tracing::field::Empty;

use crate::delivery_link::{DeliveryLink, take_parked};
use crate::error::WebhookError;
use crate::event::{Event, Topic};
pub(crate) use crate::verdict::Verdict;

/// Spans' target (contract item 5).
const TARGET: &str = "store_api_webhooks";

/// A new delivery span, child of the current span (a request span of the server, say).
pub(crate) fn delivery_span() -> Span {
    tracing::info_span!(
        target: TARGET,
        "store_api.webhooks.delivery",
        otel.name = "store_api.webhooks.delivery",
        otel.kind = "consumer",
        store_api.webhook.topic = Empty,
        store_api.webhook.event_id = Empty,
        store_api.webhook.verdict = Empty,
        otel.status_code = Empty,
        error.type = Empty,
    )
}

/// The step spans, children of the delivery span `parent` (`tracing` wants each name literal).
macro_rules! step_span {
    ($parent:expr, $name:literal) => {
        tracing::info_span!(target: TARGET, parent: $parent, $name, otel.name = $name, otel.kind = "internal")
    };
}

pub(crate) fn verify_span(delivery: &Span) -> Span {
    step_span!(delivery, "store_api.webhooks.verify")
}

pub(crate) fn claim_span(delivery: &Span) -> Span {
    step_span!(delivery, "store_api.webhooks.claim")
}

pub(crate) fn handler_span(delivery: &Span) -> Span {
    step_span!(delivery, "store_api.webhooks.handler")
}

/// Around `complete` after a success, and around `abandon` after a failure.
pub(crate) fn complete_span(delivery: &Span) -> Span {
    step_span!(delivery, "store_api.webhooks.complete")
}

/// Records the verdict on `span` (and counts it with `otel-metrics`).
fn record_verdict(span: &Span, verdict: Verdict, topic: Option<&Topic>) {
    span.record("store_api.webhook.verdict", verdict.as_str());
    if verdict.is_error() {
        span.record("otel.status_code", "error");
    }
    #[cfg(feature = "otel-metrics")]
    crate::metrics::delivery(verdict, topic);
    #[cfg(not(feature = "otel-metrics"))]
    let _ = topic;
}

/// Ends the verify step of `delivery`: a refusal closes it with its verdict; a verified event carries
/// it on to `process_once`.
pub(crate) fn verified(
    delivery: Span,
    result: Result<Event, WebhookError>,
) -> Result<Event, WebhookError> {
    match result {
        Err(error) => {
            record_verdict(&delivery, Verdict::of_refusal(&error), None);
            Err(error)
        }
        Ok(mut event) => {
            delivery.record("store_api.webhook.topic", event.topic.as_str());
            delivery.record("store_api.webhook.event_id", event.id.as_str());
            // Parked only when it serves: a span someone listens to, or the topic of the metrics.
            if !delivery.is_disabled() || cfg!(feature = "otel-metrics") {
                event.delivery = DeliveryLink::park(&event.id, event.topic.clone(), delivery);
            }
            Ok(event)
        }
    }
}

/// `process_once`'s side of a delivery: the span it records the steps and the verdict on.
pub(crate) struct Run {
    pub(crate) span: Span,
    topic: Option<Topic>,
}

impl Run {
    /// Takes over the delivery verified for `event_id` in this task, or opens a new delivery span.
    pub(crate) fn start(event_id: &str) -> Run {
        if let Some((span, topic)) = take_parked(event_id) {
            return Run {
                span,
                topic: Some(topic),
            };
        }
        let span = delivery_span();
        span.record("store_api.webhook.event_id", event_id);
        Run { span, topic: None }
    }

    /// The topic, when a verification told it.
    #[cfg_attr(not(feature = "otel-metrics"), allow(dead_code))]
    pub(crate) fn topic(&self) -> Option<&Topic> {
        self.topic.as_ref()
    }

    /// Records the verdict; `error_type` says why a failed store made the delivery `busy`.
    pub(crate) fn finish(&self, verdict: Verdict, error_type: Option<&'static str>) {
        if let Some(error_type) = error_type {
            self.span.record("error.type", error_type);
            self.span.record("otel.status_code", "error");
        }
        record_verdict(&self.span, verdict, self.topic.as_ref());
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::panic::{RefUnwindSafe, UnwindSafe};

    use super::*;
    use crate::delivery_link::{entries, parked_count};

    #[test]
    fn an_event_carrying_its_delivery_keeps_its_traits_equality_and_debug() {
        fn traits<T: Send + Sync + Unpin + UnwindSafe + RefUnwindSafe>() {}
        traits::<Event>();
        let plain = Event::new("store_1", Topic::OrdersCreate, "ord_1");
        let mut linked = plain.clone();
        linked.delivery = DeliveryLink::park(&linked.id, linked.topic.clone(), Span::none());
        assert_eq!(linked, plain);
        assert_eq!(format!("{linked:?}"), format!("{plain:?}"));
        assert!(!format!("{linked:?}").contains("DeliveryLink"));
    }

    #[test]
    fn a_parked_delivery_is_taken_once_in_its_thread_and_dropped_events_leave_nothing() {
        let mut event = Event::new("store_1", Topic::ProductsUpdate, "prod_1");
        event.id = "evt_parked_once".into();
        event.delivery = DeliveryLink::park(&event.id, event.topic.clone(), Span::none());
        let elsewhere = std::thread::scope(|scope| {
            scope
                .spawn(|| take_parked("evt_parked_once").is_some())
                .join()
                .unwrap()
        });
        assert!(!elsewhere, "another thread's delivery is not taken");
        let (_, topic) = take_parked("evt_parked_once").unwrap();
        assert_eq!(topic, Topic::ProductsUpdate);
        assert!(take_parked("evt_parked_once").is_none(), "taken once");

        // Events dropped without `process_once`: their entries are swept, not kept.
        for number in 0..1000 {
            let mut event = Event::new("store_1", Topic::OrdersCreate, "ord_1");
            event.id = format!("evt_dropped_{number}");
            event.delivery = DeliveryLink::park(&event.id, event.topic.clone(), Span::none());
        }
        let entries = entries();
        assert!(
            entries < 200,
            "{entries} entries left for 1000 dropped events"
        );
        assert!(parked_count() <= 2, "only other tests' live events");
    }
}
