//! Where a verified delivery's span waits for `process_once`: keyed by the task (or thread) that
//! verified it and the event id, held alive by the `Event` ([`DeliveryLink`]), taken once. A module of
//! its own below both `event` (which carries the link) and `telemetry` (which parks and takes spans).

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError, Weak};

use store_api_raw::open::WebhookTopic as Topic;
use tracing::Span;

/// The delivery span a verified `Event` carries to `process_once` (crate-private; an event compares
/// equal and prints the same with or without it).
#[derive(Clone, Default)]
pub(crate) struct DeliveryLink {
    /// Held, never read: the registry's entry lives as long as the event (or a clone of it).
    _parked: Option<Arc<Parked>>,
}

impl PartialEq for DeliveryLink {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for DeliveryLink {}

impl fmt::Debug for DeliveryLink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("DeliveryLink")
    }
}

/// A verified delivery waiting for `process_once`. A `Mutex`, so `Event` stays `RefUnwindSafe`.
struct Parked {
    span: Mutex<Option<Span>>,
    topic: Topic,
}

/// Which delivery a parked span belongs to: the task that verified it (axum's extractor and handler
/// run in one task), or the thread outside a task, and the event id.
type Key = (Owner, String);

#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Owner {
    Task(tokio::task::Id),
    Thread(std::thread::ThreadId),
}

impl Owner {
    fn current() -> Owner {
        match tokio::task::try_id() {
            Some(task) => Owner::Task(task),
            None => Owner::Thread(std::thread::current().id()),
        }
    }
}

/// Parked deliveries; weak, so an event dropped without `process_once` leaves nothing behind (its span
/// then closes without a verdict).
struct Registry {
    parked: HashMap<Key, Vec<Weak<Parked>>>,
    /// When to sweep dead entries next (doubling, so sweeping stays amortised O(1)).
    sweep_at: usize,
}

static REGISTRY: Mutex<Option<Registry>> = Mutex::new(None);

impl DeliveryLink {
    pub(crate) fn park(event_id: &str, topic: Topic, span: Span) -> DeliveryLink {
        let parked = Arc::new(Parked {
            span: Mutex::new(Some(span)),
            topic,
        });
        let key = (Owner::current(), event_id.to_owned());
        let mut registry = REGISTRY.lock().unwrap_or_else(PoisonError::into_inner);
        let registry = registry.get_or_insert_with(|| Registry {
            parked: HashMap::new(),
            sweep_at: 64,
        });
        registry
            .parked
            .entry(key)
            .or_default()
            .push(Arc::downgrade(&parked));
        if registry.parked.len() >= registry.sweep_at {
            registry.parked.retain(|_, waiting| {
                waiting.retain(|weak| weak.strong_count() > 0);
                !waiting.is_empty()
            });
            registry.sweep_at = (registry.parked.len() * 2).max(64);
        }
        DeliveryLink {
            _parked: Some(parked),
        }
    }
}

/// The oldest delivery of `event_id` parked by this task and not yet taken.
pub(crate) fn take_parked(event_id: &str) -> Option<(Span, Topic)> {
    let parked = {
        let mut registry = REGISTRY.lock().unwrap_or_else(PoisonError::into_inner);
        let registry = registry.as_mut()?;
        // Skips the lookup's allocation while nothing is parked (no listener, metrics off).
        if registry.parked.is_empty() {
            return None;
        }
        let key = (Owner::current(), event_id.to_owned());
        let waiting = registry.parked.get_mut(&key)?;
        let mut found = None;
        while !waiting.is_empty() {
            if let Some(parked) = waiting.remove(0).upgrade() {
                found = Some(parked);
                break;
            }
        }
        if waiting.is_empty() {
            registry.parked.remove(&key);
        }
        found
    }?;
    // Outside the registry's lock: this may be the last handle, and a span closing runs the subscriber.
    let span = parked
        .span
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .take()?;
    Some((span, parked.topic.clone()))
}

/// How many keys the registry holds, dead entries included until swept.
#[cfg(test)]
pub(crate) fn entries() -> usize {
    let registry = REGISTRY.lock().unwrap_or_else(PoisonError::into_inner);
    registry
        .as_ref()
        .map_or(0, |registry| registry.parked.len())
}

/// How many parked deliveries are alive (the tests' view of the registry).
#[cfg(test)]
pub(crate) fn parked_count() -> usize {
    let registry = REGISTRY.lock().unwrap_or_else(PoisonError::into_inner);
    registry.as_ref().map_or(0, |registry| {
        registry
            .parked
            .values()
            .flatten()
            .filter(|weak| weak.strong_count() > 0)
            .count()
    })
}
