//! A registry of fake public artwork resources, for tests and the demo.

use std::collections::HashMap;
use std::sync::{Arc, PoisonError, RwLock};
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use bytes::Bytes;
use serde::{Deserialize, Serialize};
use store_api_rules::artwork_url::{UrlViolation, check_url};
use url::Url;

/// What a fake URL serves: one value of the `PUT /_emulator/artwork-hosts` body, e.g.
/// `{"contentBase64": "iVBORw0KGgo...", "contentType": "image/png"}`, `{"status": 404}` or
/// `{"delayMs": 40000}`.
///
/// ```
/// use std::collections::HashMap;
/// use store_api_fixtures::artwork::FakeResource;
///
/// let body = r#"{
///     "https://cdn.example.com/art.png": {"contentBase64": "iVBORw0KGgo=", "contentType": "image/png"},
///     "https://cdn.example.com/gone.png": {"status": 404},
///     "https://cdn.example.com/slow.png": {"delayMs": 40000}
/// }"#;
/// let hosts: HashMap<String, FakeResource> = serde_json::from_str(body).unwrap();
/// assert_eq!(hosts["https://cdn.example.com/gone.png"], FakeResource::Status { status: 404 });
/// ```
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged, deny_unknown_fields)]
pub enum FakeResource {
    /// A 200 response with this body. The type the emulator records is sniffed from the bytes, never
    /// taken from `contentType`, just as the service ignores the `Content-Type` header.
    Content {
        /// The body, standard base64 with padding.
        #[serde(rename = "contentBase64")]
        content_base64: String,
        /// The `Content-Type` the fake server claims; informative only.
        #[serde(
            rename = "contentType",
            default,
            skip_serializing_if = "Option::is_none"
        )]
        content_type: Option<String>,
    },
    /// A response with this HTTP status (100..=599) and no image body; every such download fails
    /// (3xx because redirects are not followed, 2xx because an empty body is not an image).
    Status {
        /// The HTTP status code.
        status: u16,
    },
    /// A server that answers nothing for this long; the download fails once the timeout passes
    /// (or, for a shorter delay, when the delay ends without an image).
    Delay {
        /// How long the server stays silent, in milliseconds.
        #[serde(rename = "delayMs")]
        delay_ms: u64,
    },
}

impl FakeResource {
    /// A resource serving `bytes` (base64-encoded here), with no claimed content type.
    pub fn image(bytes: &[u8]) -> FakeResource {
        FakeResource::Content {
            content_base64: BASE64.encode(bytes),
            content_type: None,
        }
    }

    /// A resource answering with `status` and no image.
    pub fn status(status: u16) -> FakeResource {
        FakeResource::Status { status }
    }

    /// A resource that stays silent for `delay`.
    pub fn delay(delay: Duration) -> FakeResource {
        FakeResource::Delay {
            delay_ms: u64::try_from(delay.as_millis()).unwrap_or(u64::MAX),
        }
    }
}

/// Why a fake resource could not be registered.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FakeHostError {
    /// The URL key breaks the artwork URL rules, so the emulator would refuse it before any download.
    #[error("fake artwork url {url:?} breaks the url rules: {violation}")]
    InvalidUrl {
        /// The URL key as given.
        url: String,
        /// The rule it breaks.
        violation: UrlViolation,
    },
    /// `contentBase64` is not standard base64.
    #[error("fake artwork url {url:?} has content that is not valid base64")]
    InvalidBase64 {
        /// The URL key as given.
        url: String,
    },
    /// `status` is not an HTTP status code.
    #[error("fake artwork url {url:?} has status {status} outside 100..=599")]
    InvalidStatus {
        /// The URL key as given.
        url: String,
        /// The status given.
        status: u16,
    },
}

/// A resource as served: content already decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Served {
    Content(Bytes),
    Status(u16),
    Delay(Duration),
}

/// What the registry says about a URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Lookup {
    /// The host is not registered: the URL is not fake.
    UnknownHost,
    /// The host is registered but this exact URL is not, like a 404 on that host.
    UnknownPath,
    /// The registered resource for this exact URL.
    Found(Served),
}

/// Fake public artwork resources keyed by exact URL, shared by every clone.
///
/// A host that has at least one registered URL counts as public and reachable: its URLs are served
/// from here and never resolved or fetched. Keys are normalized like the URLs they match
/// (lower-case scheme and host, default port dropped, fragment ignored).
#[derive(Debug, Clone, Default)]
pub struct FakeHosts {
    resources: Arc<RwLock<HashMap<String, Served>>>,
}

impl FakeHosts {
    /// An empty registry.
    pub fn new() -> FakeHosts {
        FakeHosts::default()
    }

    /// Replaces every registered resource with `map` (the `PUT /_emulator/artwork-hosts` body).
    /// All or nothing: on an error the registry is left unchanged.
    pub fn replace(&self, map: HashMap<String, FakeResource>) -> Result<(), FakeHostError> {
        let mut validated = HashMap::with_capacity(map.len());
        for (url, resource) in map {
            let (key, served) = validate(&url, resource)?;
            validated.insert(key, served);
        }
        *self.write() = validated;
        Ok(())
    }

    /// Registers (or overwrites) one resource.
    pub fn insert(&self, url: &str, resource: FakeResource) -> Result<(), FakeHostError> {
        let (key, served) = validate(url, resource)?;
        self.write().insert(key, served);
        Ok(())
    }

    /// Unregisters one URL; returns whether it was registered.
    pub fn remove(&self, url: &str) -> bool {
        match check_url(url) {
            Ok(parsed) => self.write().remove(&key_of(&parsed)).is_some(),
            Err(_) => false,
        }
    }

    /// Unregisters everything.
    pub fn clear(&self) {
        self.write().clear();
    }

    /// The registered URLs (normalized), sorted.
    pub fn urls(&self) -> Vec<String> {
        let mut urls: Vec<String> = self.read().keys().cloned().collect();
        urls.sort();
        urls
    }

    /// How many URLs are registered.
    pub fn len(&self) -> usize {
        self.read().len()
    }

    /// Whether no URL is registered.
    pub fn is_empty(&self) -> bool {
        self.read().is_empty()
    }

    /// Whether `url`'s host has a registered URL (and so is served from here).
    pub fn is_registered_host(&self, url: &Url) -> bool {
        self.lookup(url) != Lookup::UnknownHost
    }

    /// Whether `url`'s host has any registered resource: when not, a failed download of it is worth a
    /// hint that names `PUT /_emulator/artwork-hosts`.
    pub(crate) fn knows_host(&self, url: &Url) -> bool {
        !matches!(self.lookup(url), Lookup::UnknownHost)
    }

    pub(super) fn lookup(&self, url: &Url) -> Lookup {
        let resources = self.read();
        if let Some(served) = resources.get(&key_of(url)) {
            return Lookup::Found(served.clone());
        }
        let host_registered = url.host_str().is_some_and(|host| {
            resources
                .keys()
                .filter_map(|key| Url::parse(key).ok())
                .any(|key| key.host_str() == Some(host))
        });
        if host_registered {
            Lookup::UnknownPath
        } else {
            Lookup::UnknownHost
        }
    }

    // A panic while holding the lock cannot leave the map half-written (every write is one
    // statement), so a poisoned lock is still safe to use.
    fn read(&self) -> std::sync::RwLockReadGuard<'_, HashMap<String, Served>> {
        self.resources
            .read()
            .unwrap_or_else(PoisonError::into_inner)
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, HashMap<String, Served>> {
        self.resources
            .write()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

/// The registry key of a URL: its normalized form without the fragment (never sent to a server).
fn key_of(url: &Url) -> String {
    let mut url = url.clone();
    url.set_fragment(None);
    url.into()
}

fn validate(url: &str, resource: FakeResource) -> Result<(String, Served), FakeHostError> {
    let parsed = check_url(url).map_err(|violation| FakeHostError::InvalidUrl {
        url: url.to_owned(),
        violation,
    })?;
    let served = match resource {
        FakeResource::Content { content_base64, .. } => BASE64
            .decode(content_base64.as_bytes())
            .map(|bytes| Served::Content(Bytes::from(bytes)))
            .map_err(|_| FakeHostError::InvalidBase64 {
                url: url.to_owned(),
            })?,
        FakeResource::Status { status } if (100..=599).contains(&status) => Served::Status(status),
        FakeResource::Status { status } => {
            return Err(FakeHostError::InvalidStatus {
                url: url.to_owned(),
                status,
            });
        }
        FakeResource::Delay { delay_ms } => Served::Delay(Duration::from_millis(delay_ms)),
    };
    Ok((key_of(&parsed), served))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn url(raw: &str) -> Url {
        Url::parse(raw).unwrap()
    }

    #[test]
    fn control_endpoint_json_shapes() {
        let cases: &[(&str, Option<FakeResource>)] = &[
            (
                r#"{"contentBase64": "AAE=", "contentType": "image/png"}"#,
                Some(FakeResource::Content {
                    content_base64: "AAE=".into(),
                    content_type: Some("image/png".into()),
                }),
            ),
            (
                r#"{"contentBase64": "AAE="}"#,
                Some(FakeResource::Content {
                    content_base64: "AAE=".into(),
                    content_type: None,
                }),
            ),
            (r#"{"status": 404}"#, Some(FakeResource::status(404))),
            (
                r#"{"delayMs": 40000}"#,
                Some(FakeResource::delay(Duration::from_secs(40))),
            ),
            (r#"{}"#, None),
            (r#"{"status": "404"}"#, None),
            (r#"{"status": 404, "delayMs": 5}"#, None),
            (r#"{"content_base64": "AAE="}"#, None),
            (r#"{"delayMs": -1}"#, None),
            (r#""AAE=""#, None),
        ];
        for (json, expected) in cases {
            let parsed = serde_json::from_str::<FakeResource>(json).ok();
            assert_eq!(&parsed, expected, "json {json}");
            if let Some(resource) = parsed {
                let round_trip: FakeResource =
                    serde_json::from_value(serde_json::to_value(&resource).unwrap()).unwrap();
                assert_eq!(round_trip, resource);
            }
        }
    }

    #[test]
    fn registration_errors() {
        let content = |b64: &str| FakeResource::Content {
            content_base64: b64.into(),
            content_type: None,
        };
        let cases: Vec<(&str, FakeResource, Option<FakeHostError>)> = vec![
            ("https://cdn.example.com/a.png", content("AAE="), None),
            ("https://cdn.example.com/s", FakeResource::status(599), None),
            (
                "http://cdn.example.com/a.png",
                content("AAE="),
                Some(FakeHostError::InvalidUrl {
                    url: "http://cdn.example.com/a.png".into(),
                    violation: UrlViolation::NotHttps,
                }),
            ),
            (
                "https://10.0.0.1/a.png",
                content("AAE="),
                Some(FakeHostError::InvalidUrl {
                    url: "https://10.0.0.1/a.png".into(),
                    violation: UrlViolation::PrivateAddress,
                }),
            ),
            (
                "https://cdn.example.com/a.png",
                content("not base64!"),
                Some(FakeHostError::InvalidBase64 {
                    url: "https://cdn.example.com/a.png".into(),
                }),
            ),
            (
                "https://cdn.example.com/a.png",
                FakeResource::status(600),
                Some(FakeHostError::InvalidStatus {
                    url: "https://cdn.example.com/a.png".into(),
                    status: 600,
                }),
            ),
            (
                "https://cdn.example.com/a.png",
                FakeResource::status(99),
                Some(FakeHostError::InvalidStatus {
                    url: "https://cdn.example.com/a.png".into(),
                    status: 99,
                }),
            ),
        ];
        for (raw, resource, expected) in cases {
            let hosts = FakeHosts::new();
            assert_eq!(hosts.insert(raw, resource).err(), expected, "url {raw}");
            assert_eq!(hosts.len(), usize::from(expected.is_none()), "url {raw}");
        }
    }

    #[test]
    fn replace_is_all_or_nothing_and_drops_old_entries() {
        let hosts = FakeHosts::new();
        hosts
            .insert("https://old.example.com/a.png", FakeResource::image(&[1]))
            .unwrap();

        let bad = HashMap::from([
            (
                "https://new.example.com/a.png".to_owned(),
                FakeResource::image(&[1]),
            ),
            (
                "https://new.example.com/b.png".to_owned(),
                FakeResource::status(1000),
            ),
        ]);
        assert!(matches!(
            hosts.replace(bad),
            Err(FakeHostError::InvalidStatus { status: 1000, .. })
        ));
        assert_eq!(hosts.urls(), ["https://old.example.com/a.png"]);

        let good = HashMap::from([
            (
                "https://new.example.com/a.png".to_owned(),
                FakeResource::image(&[1]),
            ),
            (
                "https://new.example.com/b.png".to_owned(),
                FakeResource::status(404),
            ),
        ]);
        hosts.replace(good).unwrap();
        assert_eq!(
            hosts.urls(),
            [
                "https://new.example.com/a.png",
                "https://new.example.com/b.png"
            ]
        );
        hosts.replace(HashMap::new()).unwrap();
        assert!(hosts.is_empty());
    }

    #[test]
    fn lookup_normalizes_and_distinguishes_host_from_path() {
        let hosts = FakeHosts::new();
        hosts
            .insert(
                "HTTPS://CDN.Example.COM:443/a.png#ignored",
                FakeResource::image(&[7]),
            )
            .unwrap();
        let cases = [
            (
                "https://cdn.example.com/a.png",
                Lookup::Found(Served::Content(Bytes::from_static(&[7]))),
            ),
            (
                "https://cdn.example.com/a.png#other",
                Lookup::Found(Served::Content(Bytes::from_static(&[7]))),
            ),
            ("https://cdn.example.com/b.png", Lookup::UnknownPath),
            ("https://cdn.example.com/a.png?v=2", Lookup::UnknownPath),
            ("https://cdn.example.com:8443/a.png", Lookup::UnknownPath),
            ("https://example.com/a.png", Lookup::UnknownHost),
            ("https://other.example.com/a.png", Lookup::UnknownHost),
        ];
        for (raw, expected) in cases {
            assert_eq!(hosts.lookup(&url(raw)), expected, "url {raw}");
        }
    }

    #[test]
    fn clones_share_the_registry() {
        let hosts = FakeHosts::new();
        let clone = hosts.clone();
        clone
            .insert("https://cdn.example.com/a.png", FakeResource::status(404))
            .unwrap();
        assert!(hosts.is_registered_host(&url("https://cdn.example.com/zzz")));
        assert!(hosts.remove("https://cdn.example.com/a.png"));
        assert!(!hosts.remove("https://cdn.example.com/a.png"));
        assert!(clone.is_empty());
    }
}
