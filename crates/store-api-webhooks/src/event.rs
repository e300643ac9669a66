//! The event a delivery carries, and where it points.

use std::fmt;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use store_api_raw::types::WebhookEvent;

use crate::delivery_link::DeliveryLink;

/// The event name of a webhook event: the raw crate's open enum, so an unknown topic arrives as
/// `Topic::Unknown(name)` instead of failing the delivery.
pub use store_api_raw::open::WebhookTopic as Topic;

/// A webhook event: says that a resource changed, not how. Fetch the current resource to see the change.
///
/// Unknown fields are ignored and an unknown topic is kept as [`Topic::Unknown`], so events of a newer
/// service still parse.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Event {
    /// Id of the event. Redeliveries of one event carry the same id (assumed), so deduplicate on it.
    pub id: String,
    /// Id of the store the event belongs to.
    pub store_id: String,
    /// What happened; route on it.
    pub topic: Topic,
    /// The resource the event is about.
    pub data: EventData,
    /// Whether this is a test delivery (its meaning is not shown by the specification); `false` when absent.
    #[serde(default)]
    pub is_test: bool,
    /// When the event was created, if the service says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<DateTime<Utc>>,
    /// The delivery span a verification opened, for `process_once` to go on with (never on the wire;
    /// equal and invisible in `Debug` whatever it holds).
    #[serde(skip)]
    #[cfg_attr(feature = "schemars", schemars(skip))]
    pub(crate) delivery: DeliveryLink,
}

// By hand, to leave out the delivery span: what an event prints is what it says.
impl fmt::Debug for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Event")
            .field("id", &self.id)
            .field("store_id", &self.store_id)
            .field("topic", &self.topic)
            .field("data", &self.data)
            .field("is_test", &self.is_test)
            .field("created_at", &self.created_at)
            .finish()
    }
}

/// The id of an [`Event::new`].
pub const TEST_EVENT_ID: &str = "evt_test";

/// The resource an event is about.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct EventData {
    /// Product id for `products_*` topics, order id for `orders_*` topics.
    pub id: String,
}

/// The resource an event points at, from its topic: what to fetch (or remove) next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Resource<'a> {
    /// A product id (`products_create`, `products_update`, `products_delete`).
    Product(&'a str),
    /// An order id (`orders_create`, `orders_update`).
    Order(&'a str),
    /// A topic this SDK does not know; the specification says to ignore it.
    Unknown {
        /// The topic as sent.
        topic: &'a str,
        /// `data.id` as sent.
        id: &'a str,
    },
}

impl Event {
    /// An event of store `store_id` about `resource_id`, for tests of your own handlers: its id is
    /// [`TEST_EVENT_ID`] (set `id` to tell several apart), `is_test` false, no creation time.
    pub fn new(store_id: impl Into<String>, topic: Topic, resource_id: impl Into<String>) -> Self {
        Self {
            id: TEST_EVENT_ID.to_owned(),
            store_id: store_id.into(),
            topic,
            data: EventData {
                id: resource_id.into(),
            },
            is_test: false,
            created_at: None,
            delivery: DeliveryLink::default(),
        }
    }

    /// The resource this event is about, by topic.
    ///
    /// ```
    /// use store_api_webhooks::{Event, Resource, Topic};
    ///
    /// let event = Event::new("store_1", Topic::OrdersUpdate, "ord_1");
    /// match event.resource() {
    ///     Resource::Order(id) => assert_eq!(id, "ord_1"),
    ///     Resource::Product(_) => unreachable!("an orders_* topic"),
    ///     _ => {} // a topic this SDK does not know: ignore it
    /// }
    /// ```
    pub fn resource(&self) -> Resource<'_> {
        let id = self.data.id.as_str();
        match &self.topic {
            Topic::ProductsCreate | Topic::ProductsUpdate | Topic::ProductsDelete => {
                Resource::Product(id)
            }
            Topic::OrdersCreate | Topic::OrdersUpdate => Resource::Order(id),
            other => Resource::Unknown {
                topic: other.as_str(),
                id,
            },
        }
    }
}

impl From<WebhookEvent> for Event {
    fn from(event: WebhookEvent) -> Self {
        Self {
            id: event.id,
            store_id: event.store_id,
            topic: event.topic,
            data: EventData { id: event.data.id },
            is_test: event.is_test.unwrap_or(false),
            created_at: event.created_at,
            delivery: DeliveryLink::default(),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use store_api_raw::types::{WebhookEventData, WebhookEventRequired};

    fn wire_event(topic: Topic, is_test: Option<bool>, with_time: bool) -> WebhookEvent {
        let data = WebhookEventData::new("res_1".into());
        let mut event = WebhookEvent::new(WebhookEventRequired {
            data,
            id: "evt_1".into(),
            store_id: "store_1".into(),
            topic,
        });
        event.is_test = is_test;
        event.created_at = with_time.then(|| "2026-08-01T12:00:00Z".parse().unwrap());
        event
    }

    #[test]
    fn decodes_exactly_what_the_wire_type_encodes() {
        let topics = Topic::KNOWN
            .iter()
            .cloned()
            .chain([Topic::Unknown("returns_create".into())]);
        for topic in topics {
            for is_test in [None, Some(false), Some(true)] {
                for with_time in [false, true] {
                    let wire = wire_event(topic.clone(), is_test, with_time);
                    let bytes = serde_json::to_vec(&wire).unwrap();
                    let event: Event = serde_json::from_slice(&bytes).unwrap();
                    assert_eq!(event, Event::from(wire.clone()), "{wire:?}");
                    // And back: what this crate writes, the wire type reads.
                    let again: WebhookEvent =
                        serde_json::from_slice(&serde_json::to_vec(&event).unwrap()).unwrap();
                    assert_eq!(again.topic, wire.topic);
                    assert_eq!(again.is_test.unwrap_or(false), is_test.unwrap_or(false));
                    assert_eq!(again.created_at, wire.created_at);
                }
            }
        }
    }

    #[test]
    fn unknown_fields_are_ignored() {
        let event: Event = serde_json::from_str(
            r#"{"id":"e","storeId":"s","topic":"orders_create","data":{"id":"o","extra":1},"newField":[1,2]}"#,
        )
        .unwrap();
        let mut expected = Event::new("s", Topic::OrdersCreate, "o");
        expected.id = "e".into();
        assert_eq!(event, expected);
    }

    #[test]
    fn resource_follows_the_topic() {
        let cases = [
            ("products_create", Resource::Product("r")),
            ("products_update", Resource::Product("r")),
            ("products_delete", Resource::Product("r")),
            ("orders_create", Resource::Order("r")),
            ("orders_update", Resource::Order("r")),
            (
                "returns_create",
                Resource::Unknown {
                    topic: "returns_create",
                    id: "r",
                },
            ),
        ];
        for (topic, expected) in cases {
            let event = Event::new("s", Topic::from(topic), "r");
            assert_eq!(event.resource(), expected, "{topic}");
        }
    }
}
