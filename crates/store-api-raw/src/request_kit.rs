//! What the generated request builders ([`crate::requests`]) share: the URL of a route, the query
//! string in the service's form, the request itself, and why one cannot be built.
//!
//! Hand-written once; the builders, one per operation of the spec, are generated beside it.

use std::fmt;

use http::header::{ACCEPT, CONTENT_TYPE, HeaderValue};

use crate::contract::{Bounds, HttpMethod, Operation, OutOfBounds};

/// A request of the API, built and not yet sent: no key yet (whoever sends it adds `X-API-Key`,
/// for example with [`set_api_key`](crate::auth::set_api_key) on [`headers`](Self::headers)). Its parts
/// are the `http` crate's types and a parsed [`url::Url`] (reqwest's `Url`): this crate builds no HTTP
/// client and depends on none. For reqwest, `reqwest::Request::new(request.method, request.url)` with the
/// headers and body moved over (no parsing again); for any client of the `http` crate's types,
/// [`into_http`](Self::into_http).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Request {
    /// The operation of the spec it reaches: known where it is built, so whoever sends it (the
    /// client's spans, metrics and hooks) never matches the URL against the spec's routes again.
    pub operation: &'static Operation,
    /// The HTTP method.
    pub method: http::Method,
    /// The whole URL: the base URL, the route and the query.
    pub url: url::Url,
    /// `Accept: application/json`, and `Content-Type: application/json` with a body.
    pub headers: http::HeaderMap,
    /// The JSON body; empty for a request without one.
    pub body: Vec<u8>,
}

impl Request {
    /// As the `http` crate's request (hyper, and any client that takes it). Its URI is the URL, parsed
    /// again: fails only for a URL that `http` does not accept as a URI.
    pub fn into_http(self) -> Result<http::Request<Vec<u8>>, http::Error> {
        let mut builder = http::Request::builder()
            .method(self.method)
            .uri(self.url.as_str());
        if let Some(headers) = builder.headers_mut() {
            *headers = self.headers;
        }
        builder.body(self.body)
    }
}

/// Why a request could not be built: an argument the spec does not allow (named), or a base URL
/// that cannot hold the route. Nothing was sent.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum BuildError {
    /// The base URL is not an absolute URL with a path (`https://host/store-api/2026-08`).
    BaseUrl {
        /// The base URL given.
        base_url: String,
        /// Why it cannot be used.
        reason: String,
    },
    /// A path parameter is empty: the request would reach another route.
    EmptyPathParameter {
        /// The spec's name of the parameter (`orderId`).
        parameter: &'static str,
    },
    /// A number outside the bounds the spec gives the parameter.
    OutOfBounds {
        /// The spec's name of the parameter (`limit`).
        parameter: &'static str,
        /// The value given.
        value: u64,
        /// The bound it crosses.
        bound: OutOfBounds,
    },
    /// A filter value containing a comma: the service reads commas as separators of values, so it
    /// could never match that value.
    CommaInFilterValue {
        /// The spec's name of the parameter (`filter[externalOrderId]`).
        parameter: &'static str,
        /// The value given.
        value: String,
    },
    /// The body could not be encoded as JSON.
    Body(String),
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::BaseUrl { base_url, reason } => {
                write!(f, "the base URL {base_url:?} cannot be used: {reason}")
            }
            Self::EmptyPathParameter { parameter } => write!(f, "{parameter} must not be empty"),
            Self::OutOfBounds {
                parameter,
                value,
                bound: OutOfBounds::BelowMinimum(min),
            } => write!(f, "{parameter} must be at least {min}, not {value}"),
            Self::OutOfBounds {
                parameter,
                value,
                bound: OutOfBounds::AboveMaximum(max),
            } => write!(f, "{parameter} must be at most {max}, not {value}"),
            Self::CommaInFilterValue { parameter, value } => write!(
                f,
                "{parameter}: the value {value:?} contains a comma, which the service reads as a separator of values, so nothing could match it"
            ),
            Self::Body(reason) => write!(f, "the body cannot be encoded as JSON: {reason}"),
        }
    }
}

impl std::error::Error for BuildError {}

/// The query of a list operation, as generic paging code needs it (`store_api`'s streams walk any
/// list with it). Generated for every operation of the spec with a `page` and a `limit` parameter
/// whose only path parameter is the store's.
pub trait ListQuery: Clone + Default + fmt::Debug + Send + Sync + 'static {
    /// The page the service answers.
    type Page: ListPage;

    /// The operation this query is for.
    const OPERATION: &'static Operation;

    /// The request of this query, to the store `store_id` of the API at `base_url`.
    fn request(&self, base_url: &str, store_id: &str) -> Result<Request, BuildError>;

    /// The page asked for (`page`), if set.
    fn page_number(&self) -> Option<u64>;

    /// The page size asked for (`limit`), if set.
    fn page_size(&self) -> Option<u64>;

    /// This query at page `page`, with its page size, or `size` when it sets none.
    #[must_use]
    fn at_page(self, page: u64, size: u64) -> Self;
}

/// A resource the API reads by id (`GET /stores/{storeId}/orders/{orderId}`). Generated for every
/// operation of the spec that reads one item of the store by one id.
pub trait GetById: serde::de::DeserializeOwned + Send + 'static {
    /// The operation that reads it.
    const OPERATION: &'static Operation;

    /// The request that reads the item `id` of the store `store_id` of the API at `base_url`.
    fn request(base_url: &str, store_id: &str, id: &str) -> Result<Request, BuildError>;

    /// The item's id.
    fn id(&self) -> &str;
}

/// A page of a list, as the service answers it: its items and its envelope. Generated for every
/// page schema of the spec (`items`, `totalItems`, `totalPages`, the `query` echo).
pub trait ListPage: serde::de::DeserializeOwned + Send + 'static {
    /// The items' type.
    type Item;

    /// The page's parts.
    fn into_parts(self) -> PageParts<Self::Item>;
}

/// What a [`ListPage`] holds. Counts are as sent (absent when the service omits them).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct PageParts<T> {
    /// The items of this page.
    pub items: Vec<T>,
    /// Items matching the query over all pages (`totalItems`).
    pub total_items: Option<i64>,
    /// Pages for this page size (`totalPages`).
    pub total_pages: Option<i64>,
    /// The query the service says it answered (`query`).
    pub query: Option<crate::types::ListQuery>,
}

/// A resource the API lists and reads by id: its list's query. Generated for every item type that
/// has both a [`ListQuery`] and a [`GetById`], which is all generic code needs to list, stream and
/// read it (`store_api::Client::collection`).
pub trait Listable: GetById {
    /// The query of its list.
    type Query: ListQuery<Page: ListPage<Item = Self>>;
}

/// One segment of a route: literal, or a path parameter's value.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Segment<'a> {
    Literal(&'static str),
    Param(&'static str, &'a str),
}

/// `base_url` with the route's segments appended (each value percent-encoded as one segment).
pub(crate) fn url(base_url: &str, segments: &[Segment<'_>]) -> Result<url::Url, BuildError> {
    let bad = |reason: &dyn fmt::Display| BuildError::BaseUrl {
        base_url: base_url.to_owned(),
        reason: reason.to_string(),
    };
    let mut url = url::Url::parse(base_url).map_err(|e| bad(&e))?;
    if url.query().is_some() || url.fragment().is_some() {
        return Err(bad(&"it has a query or a fragment"));
    }
    {
        let mut path = url
            .path_segments_mut()
            .map_err(|()| bad(&"it cannot hold a path"))?;
        path.pop_if_empty();
        for segment in segments {
            match segment {
                Segment::Literal(text) => path.push(text),
                Segment::Param(parameter, "") => {
                    return Err(BuildError::EmptyPathParameter { parameter });
                }
                Segment::Param(_, value) => path.push(value),
            };
        }
    }
    Ok(url)
}

/// A query string in the service's form: `filter[status]=pending,on_hold&limit=5`, brackets and the
/// commas between values literal, every value form-encoded (`a b` is `a+b`, `%` is `%25`).
#[derive(Debug, Default)]
pub(crate) struct QueryString(String);

impl QueryString {
    fn pair(&mut self, name: &str, encoded: &str) {
        if !self.0.is_empty() {
            self.0.push('&');
        }
        self.0.push_str(name);
        self.0.push('=');
        self.0.push_str(encoded);
    }

    /// A comma-separated filter, when it has values; a value with a comma is refused.
    pub(crate) fn list<'v>(
        &mut self,
        parameter: &'static str,
        values: impl IntoIterator<Item = &'v str>,
    ) -> Result<(), BuildError> {
        let mut joined = String::new();
        for value in values {
            if value.contains(',') {
                return Err(BuildError::CommaInFilterValue {
                    parameter,
                    value: value.to_owned(),
                });
            }
            if !joined.is_empty() {
                joined.push(',');
            }
            joined.extend(url::form_urlencoded::byte_serialize(value.as_bytes()));
        }
        if !joined.is_empty() {
            self.pair(parameter, &joined);
        }
        Ok(())
    }

    /// A single value, when set.
    pub(crate) fn value(&mut self, parameter: &'static str, value: Option<&str>) {
        if let Some(value) = value {
            let encoded: String = url::form_urlencoded::byte_serialize(value.as_bytes()).collect();
            self.pair(parameter, &encoded);
        }
    }

    /// A number within the spec's bounds, when set.
    pub(crate) fn bounded(
        &mut self,
        parameter: &'static str,
        value: Option<u64>,
        bounds: Bounds,
    ) -> Result<(), BuildError> {
        if let Some(value) = value {
            bounds
                .check(value)
                .map_err(|bound| BuildError::OutOfBounds {
                    parameter,
                    value,
                    bound,
                })?;
            self.pair(parameter, &value.to_string());
        }
        Ok(())
    }

    /// The query string, without its `?`; empty when no parameter is set.
    pub(crate) fn finish(self) -> String {
        self.0
    }
}

/// The request of `operation` (its method) to `url` with `query` (when not empty),
/// `Accept: application/json`, and `body` as JSON.
pub(crate) fn request<B: serde::Serialize + ?Sized>(
    operation: &'static Operation,
    mut url: url::Url,
    query: &str,
    body: Option<&B>,
) -> Result<Request, BuildError> {
    if !query.is_empty() {
        url.set_query(Some(query));
    }
    let mut headers = http::HeaderMap::new();
    headers.insert(ACCEPT, HeaderValue::from_static("application/json"));
    let body = match body {
        Some(body) => {
            let bytes = serde_json::to_vec(body).map_err(|e| BuildError::Body(e.to_string()))?;
            headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
            bytes
        }
        None => Vec::new(),
    };
    Ok(Request {
        operation,
        method: http_method(operation.method),
        url,
        headers,
        body,
    })
}

/// The `http` crate's method of an operation's.
fn http_method(method: HttpMethod) -> http::Method {
    match method {
        HttpMethod::Get => http::Method::GET,
        HttpMethod::Put => http::Method::PUT,
        HttpMethod::Post => http::Method::POST,
        HttpMethod::Delete => http::Method::DELETE,
        HttpMethod::Options => http::Method::OPTIONS,
        HttpMethod::Head => http::Method::HEAD,
        HttpMethod::Patch => http::Method::PATCH,
        HttpMethod::Trace => http::Method::TRACE,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_are_encoded_one_by_one_and_empty_ones_refused() {
        let built = url(
            "http://h/store-api/2026-08/",
            &[
                Segment::Literal("stores"),
                Segment::Param("storeId", "s 1/x"),
            ],
        )
        .unwrap();
        assert_eq!(
            built.as_str(),
            "http://h/store-api/2026-08/stores/s%201%2Fx"
        );
        assert_eq!(
            url("http://h/v", &[Segment::Param("orderId", "")]),
            Err(BuildError::EmptyPathParameter {
                parameter: "orderId"
            })
        );
        assert!(matches!(
            url("not a url", &[]),
            Err(BuildError::BaseUrl { .. })
        ));
    }

    #[test]
    fn filters_join_their_values_and_refuse_a_comma() {
        let mut query = QueryString::default();
        query
            .list("filter[status]", ["pending", "on hold"])
            .unwrap();
        query.value("sort[name]", Some("asc"));
        query
            .bounded(
                "limit",
                Some(5),
                Bounds {
                    min: Some(1),
                    max: Some(100),
                    default: None,
                },
            )
            .unwrap();
        query.list("filter[x]", std::iter::empty()).unwrap();
        assert_eq!(
            query.finish(),
            "filter[status]=pending,on+hold&sort[name]=asc&limit=5"
        );
        let mut query = QueryString::default();
        assert_eq!(
            query.list("filter[externalOrderId]", ["a,b"]),
            Err(BuildError::CommaInFilterValue {
                parameter: "filter[externalOrderId]",
                value: "a,b".into()
            })
        );
        assert_eq!(
            query
                .bounded(
                    "limit",
                    Some(101),
                    Bounds {
                        min: Some(1),
                        max: Some(100),
                        default: None
                    }
                )
                .unwrap_err()
                .to_string(),
            "limit must be at most 100, not 101"
        );
    }
}
