//! The shapes of the answers the spec declares for each operation ([`crate::contract::RESPONSES`]):
//! status, content type, headers and the body's schema reduced to what a recorded answer is checked
//! against (JSON types, declared properties, required ones, closed and open value lists). Generated
//! from the spec by `cargo xtask codegen`; nothing here is typed by hand.

/// The schema of a JSON value, as far as an answer is checked against it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// Any value (a schema without a type).
    Any,
    /// `true` or `false`.
    Boolean,
    /// A whole number.
    Integer,
    /// Any number.
    Number,
    /// Any string.
    String,
    /// A string from a closed list (`enum`): another value breaks the spec.
    Enum(&'static [&'static str]),
    /// A string of an enumeration the spec lets grow within the version: another value is allowed.
    OpenEnum(&'static OpenEnumShape),
    /// A list whose items have this shape.
    Array(&'static Shape),
    /// An object.
    Object(&'static ObjectShape),
    /// A value of any one of these shapes (`oneOf`, `anyOf`).
    OneOf(&'static [&'static Shape]),
    /// This shape or `null` (`nullable: true`).
    Nullable(&'static Shape),
}

/// An enumeration that may grow within the version, with the values the spec knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpenEnumShape {
    /// The schema's name (`OrderStatus`).
    pub name: &'static str,
    /// The values known in this version.
    pub known: &'static [&'static str],
}

/// An object's declared properties.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ObjectShape {
    /// The schema's name when it is a named schema of `components/schemas` (`Order`).
    pub name: Option<&'static str>,
    /// The declared properties, in the spec's order.
    pub properties: &'static [Property],
    /// The shape of the values of other keys (`additionalProperties`), when the schema allows them;
    /// `None`: a key the spec does not declare is not part of the contract.
    pub additional: Option<&'static Shape>,
}

impl ObjectShape {
    /// The declared property `name`.
    pub fn property(&self, name: &str) -> Option<&'static Property> {
        self.properties.iter().find(|p| p.name == name)
    }
}

/// A declared property of an object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Property {
    /// Its name on the wire.
    pub name: &'static str,
    /// Whether the schema lists it in `required`.
    pub required: bool,
    /// The shape of its value.
    pub shape: &'static Shape,
}

/// A header the spec declares on an answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeaderShape {
    /// Its name, lower case (`x-ratelimit-remaining`).
    pub name: &'static str,
    /// Whether the answer must carry it.
    pub required: bool,
    /// The shape of its value ([`Shape::Integer`] for the rate-limit headers and `Retry-After`).
    pub shape: &'static Shape,
    /// The smallest value of a numeric header (`minimum`).
    pub minimum: Option<i64>,
}

/// One answer the spec declares for an operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResponseShape {
    /// The status as the spec writes it: a code (`404`), a range (`4XX`) or `default`.
    pub status: &'static str,
    /// The media type of the body (`application/json`), when the answer has one.
    pub content_type: Option<&'static str>,
    /// The body's shape, when the answer has one.
    pub body: Option<&'static Shape>,
    /// The declared headers.
    pub headers: &'static [HeaderShape],
}

impl ResponseShape {
    /// Whether this declared answer covers `status` (exactly, by its range, or as `default`).
    pub fn covers(&self, status: u16) -> bool {
        match self.status.as_bytes() {
            b"default" => true,
            [class, b'X' | b'x', b'X' | b'x'] => {
                u16::from(class.wrapping_sub(b'0')) == status / 100
            }
            _ => self.status.parse::<u16>() == Ok(status),
        }
    }
}

/// The answers the spec declares for one operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OperationResponses {
    /// The operation's id (`listOrders`).
    pub operation: &'static str,
    /// Its declared answers, in the spec's order.
    pub responses: &'static [ResponseShape],
}

impl OperationResponses {
    /// The declared answer for `status`: the exact code first, then its range, then `default`.
    pub fn response(&self, status: u16) -> Option<&'static ResponseShape> {
        let exact = self
            .responses
            .iter()
            .find(|r| r.status.parse::<u16>() == Ok(status));
        let range = || {
            self.responses
                .iter()
                .find(|r| r.status != "default" && r.covers(status))
        };
        let default = || self.responses.iter().find(|r| r.status == "default");
        exact.or_else(range).or_else(default)
    }

    /// The declared status codes, as the spec writes them.
    pub fn statuses(&self) -> impl Iterator<Item = &'static str> {
        self.responses.iter().map(|r| r.status)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_status_is_found_exactly_then_by_range_then_by_default() {
        let answer = |status| ResponseShape {
            status,
            content_type: None,
            body: None,
            headers: &[],
        };
        static RESPONSES: [ResponseShape; 3] = [
            ResponseShape {
                status: "4XX",
                content_type: None,
                body: None,
                headers: &[],
            },
            ResponseShape {
                status: "404",
                content_type: None,
                body: None,
                headers: &[],
            },
            ResponseShape {
                status: "default",
                content_type: None,
                body: None,
                headers: &[],
            },
        ];
        let op = OperationResponses {
            operation: "x",
            responses: &RESPONSES,
        };
        assert_eq!(op.response(404).map(|r| r.status), Some("404"));
        assert_eq!(op.response(418).map(|r| r.status), Some("4XX"));
        assert_eq!(op.response(500).map(|r| r.status), Some("default"));
        assert!(answer("201").covers(201) && !answer("201").covers(200));
        assert!(answer("2XX").covers(204) && !answer("2XX").covers(304));
    }
}
