//! The probe's requests: `GET` only, each sent once (no retry) through the client's escape hatch
//! ([`Client::request`]: its limiter, hooks, timeout, size cap, origin guard and redirect refusal), its
//! answer read whole, and counted against the probe's budget.

use store_api::hook::Method;
use store_api::{ApiKey, ApiResponse, Client};
use store_api_raw::contract::{GET_STATUS, Operation};

/// A route of the spec (its template, from the generated contract) with the values of its
/// parameters after the store's id, and a query string written as the service reads it
/// (`filter[status]=a,b`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Target<'a> {
    pub template: &'a str,
    pub params: &'a [&'a str],
    /// A last segment after the template's (an unserved path).
    pub extra: Option<&'a str>,
    pub query: &'a str,
}

impl<'a> Target<'a> {
    /// `operation`'s route, its parameters after the store's id given by `params`.
    pub fn new(operation: &'a Operation, params: &'a [&'a str], query: &'a str) -> Target<'a> {
        Target {
            template: operation.path,
            params,
            extra: None,
            query,
        }
    }

    /// A path under the store that no operation of the spec serves: the store's part of every
    /// route, then `segment`.
    pub fn unserved(segment: &'a str) -> Target<'a> {
        // Every route starts with the store's part, `/stores/{storeId}` (the status route is that
        // part and one segment).
        let status = GET_STATUS.path;
        let store_part = &status[..status.rfind('/').unwrap_or(status.len())];
        Target {
            template: store_part,
            params: &[],
            extra: Some(segment),
            query: "",
        }
    }
}

/// Which key a request carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Key {
    /// The client's own key.
    Own,
    /// A copy of the client's key with its last character changed: a key the service cannot accept.
    Wrong,
}

/// An answer, read whole, and the path it answered.
#[derive(Debug)]
pub(crate) struct Answer {
    pub response: ApiResponse,
    /// The URL's path, as the service saw it.
    pub path: String,
}

impl Answer {
    /// The HTTP status.
    pub fn status(&self) -> u16 {
        self.response.status()
    }

    /// The body, as it came.
    pub fn body(&self) -> &[u8] {
        self.response.body()
    }

    /// The body as JSON, if it is JSON.
    pub fn json(&self) -> Option<serde_json::Value> {
        serde_json::from_slice(self.body()).ok()
    }

    /// A header read as an unsigned integer.
    pub fn header_u64(&self, name: &str) -> Option<u64> {
        self.response
            .headers()
            .get(name)?
            .to_str()
            .ok()?
            .trim()
            .parse()
            .ok()
    }

    /// The status and the start of the body, for a note.
    pub fn describe(&self) -> String {
        let text = String::from_utf8_lossy(self.body());
        let text: String = text.chars().take(160).collect();
        format!("{} {}", self.status(), text.trim())
    }
}

/// Why a request was not answered.
#[derive(Debug, Clone)]
pub(crate) enum NotSent {
    /// Sending it would exceed the budget.
    Budget(u32),
    /// It failed on the way (no connection, a timeout, a body over the size limit).
    Failed(String),
}

impl NotSent {
    pub fn why(&self) -> String {
        match self {
            NotSent::Budget(max) => format!("over the probe's budget of {max} requests"),
            NotSent::Failed(reason) => format!("no answer: {reason}"),
        }
    }
}

/// Sends the probe's requests and counts them.
pub(crate) struct Wire<'c> {
    client: &'c Client,
    pub sent: u32,
    pub max: u32,
}

impl<'c> Wire<'c> {
    pub fn new(client: &'c Client, max: u32) -> Wire<'c> {
        Wire {
            client,
            sent: 0,
            max,
        }
    }

    pub fn store_id(&self) -> &str {
        self.client.store_id()
    }

    /// `GET` the target with `key`, once, through the client's one request path (its limiter,
    /// hooks, deadline, size cap, origin guard and redirect refusal).
    pub async fn get(&mut self, target: Target<'_>, key: Key) -> Result<Answer, NotSent> {
        if self.sent >= self.max {
            return Err(NotSent::Budget(self.max));
        }
        let url = self.url(target)?;
        let path = url.path().to_owned();
        let mut request = self
            .client
            .request(Method::GET, url.as_str())
            .single_attempt();
        if key == Key::Wrong {
            request = request.api_key(wrong(&self.client.key_handle().current()));
        }
        self.sent += 1;
        let response = request
            .send()
            .await
            .map_err(|error| NotSent::Failed(error.to_string()))?;
        Ok(Answer { response, path })
    }

    /// The URL of `target`: the base URL, then the template with the store's id and the target's
    /// parameters in place of its own (percent-encoded), then its query.
    fn url(&self, target: Target<'_>) -> Result<url::Url, NotSent> {
        let mut url = url::Url::parse(self.client.base_url())
            .map_err(|e| NotSent::Failed(format!("the base URL: {e}")))?;
        let mut values =
            std::iter::once(self.client.store_id()).chain(target.params.iter().copied());
        let mut segments = Vec::new();
        for part in target.template.split('/').filter(|part| !part.is_empty()) {
            if part.starts_with('{') {
                let value = values
                    .next()
                    .ok_or_else(|| NotSent::Failed(format!("no value for {part}")))?;
                segments.push(value);
            } else {
                segments.push(part);
            }
        }
        segments.extend(target.extra);
        url.path_segments_mut()
            .map_err(|()| NotSent::Failed("the base URL cannot hold a path".to_owned()))?
            .pop_if_empty()
            .extend(segments);
        if !target.query.is_empty() {
            url.set_query(Some(target.query));
        }
        Ok(url)
    }
}

/// A random key of `key`'s shape, certainly not the store's key: the same length and the same brand
/// prefix (up to and with the first `_`, as `csk_`), random letters and digits after it. Nothing else
/// of the key is in it: the service (and every log of rejected keys on the way) sees only what any key
/// of the brand shows. (It was the key with its last character changed, so such a log held the key to
/// within one character.)
fn wrong(key: &ApiKey) -> ApiKey {
    let key = key.expose_secret();
    let prefix = match key.find('_') {
        // The prefix alone would leave nothing to change: then all of it is random.
        Some(end) if end + 1 < key.len() => &key[..=end],
        _ => "",
    };
    let length = key.chars().count().max(1);
    let random_length = length - prefix.chars().count();
    loop {
        let mut text = String::with_capacity(length);
        text.push_str(prefix);
        text.extend(std::iter::repeat_with(fastrand::alphanumeric).take(random_length));
        if text != key {
            return ApiKey::new(text);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Issue 29, defect 9: the wrong key was the key with its last character changed.
    #[test]
    fn the_wrong_key_has_the_keys_shape_and_nothing_else_of_it() {
        // (key, the prefix the wrong key keeps)
        let cases = [
            ("csk_0123456789abcdef0123456789abcdef", "csk_"),
            ("csk_live_0123456789abcdef0123456789", "csk_"),
            ("0123456789abcdef0123456789abcdef", ""),
            ("csk_", ""),
            ("csk_a", "csk_"),
            ("x", ""),
            ("", ""),
        ];
        for (key, prefix) in cases {
            for _ in 0..50 {
                let wrong = wrong(&ApiKey::new(key));
                let wrong = wrong.expose_secret();
                assert_ne!(wrong, key);
                assert_eq!(wrong.chars().count(), key.chars().count().max(1), "{wrong}");
                assert!(wrong.starts_with(prefix), "{wrong}");
                let rest = &wrong[prefix.len()..];
                assert!(rest.chars().all(|c| c.is_ascii_alphanumeric()), "{wrong}");
            }
            // Random after the prefix: of the key's 32 characters after it, about one in 62 match by
            // chance (eight or more: less than one in 10^8).
            if key.len() > 30 {
                let wrong = wrong(&ApiKey::new(key));
                let same = wrong.expose_secret()[prefix.len()..]
                    .chars()
                    .zip(key[prefix.len()..].chars())
                    .filter(|(a, b)| a == b)
                    .count();
                assert!(same < 8, "{same} characters of the key kept");
            }
        }
    }
}
