//! The shapes of the generated contract (`crate::contract`) and the one implementation of its checks,
//! which the client and the emulator share (each words its own message).

/// An HTTP method of an operation (the eight an OpenAPI 3.0 path item can hold).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HttpMethod {
    /// GET.
    Get,
    /// PUT.
    Put,
    /// POST.
    Post,
    /// DELETE.
    Delete,
    /// OPTIONS.
    Options,
    /// HEAD.
    Head,
    /// PATCH.
    Patch,
    /// TRACE.
    Trace,
}

impl HttpMethod {
    /// The method's name on the wire (`GET`).
    pub const fn as_str(self) -> &'static str {
        match self {
            HttpMethod::Get => "GET",
            HttpMethod::Put => "PUT",
            HttpMethod::Post => "POST",
            HttpMethod::Delete => "DELETE",
            HttpMethod::Options => "OPTIONS",
            HttpMethod::Head => "HEAD",
            HttpMethod::Patch => "PATCH",
            HttpMethod::Trace => "TRACE",
        }
    }
}

/// One operation of the spec.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Operation {
    /// The spec's `operationId` (`listOrders`).
    pub id: &'static str,
    /// The generated client's method name, also the operation id its hooks see (`list_orders`).
    pub method_name: &'static str,
    /// The HTTP method.
    pub method: HttpMethod,
    /// The path template, relative to [`VERSION_PREFIX`](crate::contract::VERSION_PREFIX).
    pub path: &'static str,
    /// Whether the operation creates a resource (POST): a replay may create it twice.
    pub creates: bool,
    /// The list query rules, for operations that page.
    pub query: Option<&'static ListRules>,
}

impl Operation {
    /// Whether a request of `method` to `path` (relative to
    /// [`VERSION_PREFIX`](crate::contract::VERSION_PREFIX), without its query) reaches this operation:
    /// the method matches (HTTP methods are case-sensitive) and every segment equals the template's or fills one of its parameters.
    pub fn matches(&self, method: &str, path: &str) -> bool {
        let mut template = self.path.split('/');
        let mut segments = path.split('/');
        self.method.as_str() == method
            && loop {
                match (template.next(), segments.next()) {
                    (None, None) => break true,
                    (Some(part), Some(segment)) if part.starts_with('{') || part == segment => {}
                    _ => break false,
                }
            }
    }
}

/// The operation of `operations` a request of `method` to `path` reaches (`path` from the origin,
/// the part before `prefix` and a query skipped): what the generated `contract::operation_at` asks.
pub(crate) fn find_operation(
    operations: &'static [Operation],
    prefix: &str,
    method: &str,
    path: &str,
) -> Option<&'static Operation> {
    let path = path.split_once('?').map_or(path, |(path, _)| path);
    let path = &path[path.find(prefix)? + prefix.len()..];
    operations.iter().find(|op| op.matches(method, path))
}

/// An assumption the spec makes where the service's documentation says a detail is "not shown"
/// (`x-assumption` beside an element, `info.x-assumptions` for the whole API), by its id: what
/// `store-api doctor` checks against a running service.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Assumption {
    /// The id the spec gives it (`rate-limit-reset`); one fact keeps one id wherever it is stated.
    pub id: &'static str,
    /// What is assumed, as the spec first states it.
    pub text: &'static str,
    /// Every place the spec states it (`info`, `GET /stores/{storeId}/products › filter[status]`, …).
    pub stated_at: &'static [&'static str],
}

/// Integer bounds (and default) of a query parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bounds {
    /// Smallest accepted value.
    pub min: Option<u64>,
    /// Largest accepted value.
    pub max: Option<u64>,
    /// Value when the parameter is left out.
    pub default: Option<u64>,
}

/// Why a value is outside its [`Bounds`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutOfBounds {
    /// Smaller than the minimum (carried).
    BelowMinimum(u64),
    /// Larger than the maximum (carried).
    AboveMaximum(u64),
}

impl Bounds {
    /// The value, if within the bounds.
    pub const fn check(&self, value: u64) -> Result<u64, OutOfBounds> {
        if let Some(min) = self.min
            && value < min
        {
            return Err(OutOfBounds::BelowMinimum(min));
        }
        if let Some(max) = self.max
            && value > max
        {
            return Err(OutOfBounds::AboveMaximum(max));
        }
        Ok(value)
    }
}

/// A `filter[field]` or `sort[field]` query parameter of a list operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueryParam {
    /// The name between the brackets.
    pub field: &'static str,
    /// The values the spec allows, when it lists them (`asc`, `desc`); `None` accepts any string.
    pub values: Option<&'static [&'static str]>,
}

impl QueryParam {
    /// Whether the spec allows this value.
    pub fn accepts(&self, value: &str) -> bool {
        self.values.is_none_or(|values| values.contains(&value))
    }
}

/// The query rules of one list operation: accepted filters and sorts, page and page-size bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListRules {
    /// The accepted `filter[...]` parameters.
    pub filters: &'static [QueryParam],
    /// The accepted `sort[...]` parameters.
    pub sorts: &'static [QueryParam],
    /// Bounds of `page`.
    pub page: Bounds,
    /// Bounds and default of `limit`.
    pub limit: Bounds,
}

impl ListRules {
    /// The filter on `field`, if the operation accepts it.
    pub fn filter(&self, field: &str) -> Option<&'static QueryParam> {
        self.filters.iter().find(|p| p.field == field)
    }

    /// The sort on `field`, if the operation accepts it.
    pub fn sort(&self, field: &str) -> Option<&'static QueryParam> {
        self.sorts.iter().find(|p| p.field == field)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_check_both_ends() {
        let bounds = Bounds {
            min: Some(1),
            max: Some(100),
            default: Some(50),
        };
        assert_eq!(bounds.check(1), Ok(1));
        assert_eq!(bounds.check(100), Ok(100));
        assert_eq!(bounds.check(0), Err(OutOfBounds::BelowMinimum(1)));
        assert_eq!(bounds.check(101), Err(OutOfBounds::AboveMaximum(100)));
        let open = Bounds {
            min: None,
            max: None,
            default: None,
        };
        assert_eq!(open.check(u64::MAX), Ok(u64::MAX));
    }

    #[test]
    fn a_param_without_values_accepts_anything() {
        let any = QueryParam {
            field: "status",
            values: None,
        };
        let direction = QueryParam {
            field: "name",
            values: Some(&["asc", "desc"]),
        };
        assert!(any.accepts("whatever"));
        assert!(direction.accepts("asc") && !direction.accepts("up"));
    }
}
