//! Webhook events: built when something changes and delivered to the topic's URL with up to five
//! attempts and exponential backoff. Each attempt is signed with the store's key in force at that
//! attempt: the seed makes a rotation effective at once for signatures too, and receivers switch their
//! verification key at once, so a retry signed with the old key would be refused.

use std::sync::Arc;
use std::time::Duration;

use store_api_raw::open::WebhookTopic;
use store_api_raw::types;
use store_api_webhooks::{SIGNATURE_HEADER, sign};

use crate::logs::Delivery;
use crate::state::Shared;

/// Attempts per event (the seed's limit).
pub const MAX_ATTEMPTS: u32 = 5;

/// Something changed; an event is owed to the store's URL for the topic, if one is registered.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PendingEvent {
    pub store_id: String,
    pub topic: WebhookTopic,
    pub data_id: String,
}

impl PendingEvent {
    pub fn new(store_id: &str, topic: WebhookTopic, data_id: &str) -> PendingEvent {
        PendingEvent {
            store_id: store_id.to_owned(),
            topic,
            data_id: data_id.to_owned(),
        }
    }
}

/// One delivery job: the event's bytes, signed anew at each attempt.
struct Job {
    store_id: String,
    event_id: String,
    topic: String,
    url: String,
    body: bytes::Bytes,
}

/// Queues `events`: a topic with no registered URL is never queued or sent.
pub(crate) fn emit(shared: &Arc<Shared>, events: Vec<PendingEvent>) {
    for event in events {
        let job = {
            let state = shared.read();
            let Some(store) = state.stores.get(&event.store_id) else {
                continue;
            };
            let Some(url) = store.webhooks.get(event.topic.as_str()) else {
                continue;
            };
            let mut payload = types::WebhookEvent::new(types::WebhookEventRequired {
                data: types::WebhookEventData::new(event.data_id),
                id: shared.clock.new_id("evt"),
                store_id: event.store_id.clone(),
                topic: event.topic.clone(),
            });
            payload.is_test = Some(false);
            payload.created_at = Some(shared.clock.now());
            let Ok(body) = crate::wire::to_vec(&payload) else {
                continue;
            };
            Job {
                store_id: event.store_id,
                event_id: payload.id,
                topic: event.topic.to_string(),
                url: url.clone(),
                body: body.into(),
            }
        };
        let shared = shared.clone();
        shared.runtime.clone().spawn(deliver(shared, job));
    }
}

/// Delivers one event: any 2xx counts as delivered; otherwise the next attempt waits
/// `backoff × 2^(attempt − 1)` of emulator time (in deterministic mode, until the test advances the
/// clock that far). Every attempt is recorded.
async fn deliver(shared: Arc<Shared>, job: Job) {
    for attempt in 1..=MAX_ATTEMPTS {
        let Some(signature) = current_signature(&shared, &job) else {
            // The store is gone (state replaced): nobody is left to deliver for.
            return;
        };
        let result = http(&shared)
            .post(&job.url)
            .header("content-type", "application/json")
            .header(SIGNATURE_HEADER, signature)
            .body(job.body.clone())
            .send()
            .await;
        let (status, error) = match result {
            Ok(response) => (Some(response.status().as_u16()), None),
            Err(e) => (None, Some(describe(&e))),
        };
        let delivered = status.is_some_and(|s| (200..300).contains(&s));
        // Read with the attempt recorded: whoever sees the attempt in the log and then advances a
        // deterministic clock releases the retry.
        let attempted = {
            let mut state = shared.lock();
            let at = shared.clock.now();
            if let Some(store) = state.stores.get_mut(&job.store_id) {
                let delivery = Delivery {
                    event_id: job.event_id.clone(),
                    topic: job.topic.clone(),
                    url: job.url.clone(),
                    attempt,
                    status,
                    error,
                    delivered,
                    at,
                };
                crate::logs::push(&mut store.deliveries, delivery, at);
            }
            shared.clock.elapsed()
        };
        if delivered || attempt == MAX_ATTEMPTS {
            return;
        }
        let factor = 1u32 << (attempt - 1);
        let backoff = shared.config.webhook_backoff.saturating_mul(factor);
        shared
            .clock
            .sleep_until(attempted.saturating_add(backoff))
            .await;
    }
}

/// The job's signature with the store's key of this moment.
fn current_signature(shared: &Shared, job: &Job) -> Option<String> {
    let state = shared.read();
    let store = state.stores.get(&job.store_id)?;
    Some(sign(&store.api_key, &job.body))
}

fn describe(error: &reqwest::Error) -> String {
    if error.is_timeout() {
        "timed out".into()
    } else if error.is_connect() {
        "connection failed".into()
    } else {
        "request failed".into()
    }
}

/// The delivery timeout of one attempt.
const DELIVERY_TIMEOUT: Duration = Duration::from_secs(10);

/// The deliveries' client (built by the first delivery): no redirect followed, one attempt's timeout.
fn http(shared: &Shared) -> &reqwest::Client {
    shared.http.get_or_init(|| {
        reqwest::Client::builder()
            .timeout(DELIVERY_TIMEOUT)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap_or_default()
    })
}
