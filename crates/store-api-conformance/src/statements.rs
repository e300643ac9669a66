//! What the specification states and the checks judge, each under one id with one text, whichever
//! source of evidence judges it. (The assumptions' ids and texts are the spec's own, in
//! `store_api_raw::contract::ASSUMPTIONS`.)

/// A statement of the specification: its id and what it says.
#[derive(Debug)]
pub(crate) struct Statement {
    pub id: &'static str,
    pub says: &'static str,
}

pub(crate) const STATUS: Statement = Statement {
    id: "status",
    says: "GET /status answers 200 with status ok, the API version and the key's store",
};
pub(crate) const UNAUTHORIZED: Statement = Statement {
    id: "unauthorized",
    says: "A wrong or missing key gives 401 with {message, error: Unauthorized, statusCode: 401}",
};
pub(crate) const UNSERVED_PATH: Statement = Statement {
    id: "unserved-path",
    says: "A path the API does not serve gives 404 with the message `Cannot GET <path>`",
};
pub(crate) const ERROR_ENVELOPE: Statement = Statement {
    id: "error-envelope",
    says: "Every error answer is {statusCode, error, message}: statusCode its status, message a string or a string array, error absent only on a 429",
};
pub(crate) const NOT_FOUND: Statement = Statement {
    id: "not-found",
    says: "A nonexistent id gives 404 with the error envelope (statusCode, error Not Found, a message)",
};
pub(crate) const LIST_ENVELOPE: Statement = Statement {
    id: "list-envelope",
    says: "A list answers items, totalItems, startItem, endItem, totalPages and its query (page, limit, filter, sort with createdAt); pages count from 1",
};
pub(crate) const PAGE_SIZE_MAXIMUM: Statement = Statement {
    id: "page-size-maximum",
    says: "A limit above the maximum gives 400 whose message is an array (a validation failure)",
};
pub(crate) const FILTERS_AND_SORTS: Statement = Statement {
    id: "filters-and-sorts",
    says: "filter[field]=a,b keeps the items with any of the values; sort[field]=asc|desc orders them, createdAt last",
};
pub(crate) const ORDER_CREATED: Statement = Statement {
    id: "order-created-201",
    says: "A created order is answered 201 with the order (its id)",
};
pub(crate) const RATE_LIMIT_HEADERS_SENT: Statement = Statement {
    id: "rate-limit-headers-sent",
    says: "Every answer to an identified store carries X-RateLimit-Limit, X-RateLimit-Remaining and X-RateLimit-Reset",
};
pub(crate) const TOO_MANY_REQUESTS: Statement = Statement {
    id: "too-many-requests",
    says: "A 429 carries Retry-After (whole seconds) and the error envelope",
};
