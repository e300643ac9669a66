//! What a failed check reports: the rule broken ([`ViolationKind`]), where ([`Violation::path`]) and the
//! service's message for it; and the service's wording of a failed rule of the spec's request schemas
//! ([`rule_message`]), the one place that wording lives.

use store_api_raw::rule::{JsonType, Property, Rule, RuleFailure};
use store_api_raw::types;

/// One broken rule of a create-order request.
///
/// `path` names the offending field with the wire's field names, joined by dots, array elements by their
/// 0-based index: `lineItems.0.decorations.1.physicalWidth`, `shippingAddress.address.country`. A rule about a
/// whole line item points at the item (`lineItems.2`). This is also the form the service uses in its
/// validation messages.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{}", self.message())]
#[non_exhaustive]
pub struct Violation {
    /// The rule that was broken.
    pub kind: ViolationKind,
    /// The offending field, for example `lineItems.0.decorations.1.physicalWidth`.
    pub path: String,
    /// For ordering rules: what follows the prefix in the service's message (the ids or values involved),
    /// empty when the service's message is the prefix alone. For field rules: the rejected value, for
    /// diagnostics only; it is not part of [`Violation::message`].
    pub detail: String,
}

impl Violation {
    /// A violation of `kind` at `path`. The emulator uses this to report rules it checks itself (a
    /// duplicate external order id, a missing field of a control body) with the same messages.
    pub fn new(kind: ViolationKind, path: impl Into<String>, detail: impl Into<String>) -> Self {
        Self {
            kind,
            path: path.into(),
            detail: detail.into(),
        }
    }

    /// The service's message for this violation.
    ///
    /// For an ordering rule it is `"<prefix>: <detail>"` (the prefix alone when there is no detail), for
    /// example `No product found in the store for a line item: productVariantId var_123`. For a field rule
    /// it is `"<path> <constraint>"`, for example
    /// `shippingAddress.address.country must be an ISO 3166-1 alpha-2 country code`.
    pub fn message(&self) -> String {
        if self.is_field_validation() {
            format!("{} {}", self.path, self.kind.prefix())
        } else if self.detail.is_empty() {
            self.kind.prefix().to_owned()
        } else {
            format!("{}: {}", self.kind.prefix(), self.detail)
        }
    }

    /// Whether this is a body-validation failure, which the service reports in a message array (all of
    /// them at once), rather than an ordering rule, which it reports as one message string.
    pub fn is_field_validation(&self) -> bool {
        self.kind.is_field_validation()
    }
}

/// The `message` of the service's error envelope for these violations, as ordered by
/// [`validate_order`](super::validate_order): every field violation as an array when there is any,
/// otherwise the first ordering-rule violation as a string. `None` when there are no violations.
pub fn service_message(violations: &[Violation]) -> Option<types::ErrorMessage> {
    let field_messages: Vec<String> = violations
        .iter()
        .filter(|violation| violation.is_field_validation())
        .map(Violation::message)
        .collect();
    if !field_messages.is_empty() {
        return Some(types::ErrorMessage::Array(field_messages));
    }
    violations
        .first()
        .map(|violation| types::ErrorMessage::String(violation.message()))
}

/// The property whose wrong length the service reports as [`ViolationKind::InvalidCountry`]: a code of
/// the wrong length is not a code at all.
const COUNTRY: Property = Property {
    schema: "AddressInput",
    name: "country",
};

/// The validator's kind for a failed schema rule, when the service words the failure as one of the
/// validator's own rules (`lastName should not be empty`, `lineItems.0.quantity must not be less than 1`).
/// `None` for the rules it words generically ([`rule_message`]).
pub fn rule_kind(failure: &RuleFailure) -> Option<ViolationKind> {
    Some(match failure.rule {
        Rule::Required => ViolationKind::MissingField,
        Rule::MinLength(_) | Rule::MaxLength(_) if failure.property == COUNTRY => {
            ViolationKind::InvalidCountry
        }
        Rule::MinLength(1) => ViolationKind::EmptyString,
        Rule::MinItems(1) => ViolationKind::EmptyLineItems,
        Rule::Minimum {
            min: 1.0,
            exclusive: false,
        } => ViolationKind::QuantityBelowOne,
        Rule::Minimum {
            min: 0.0,
            exclusive: false,
        } => ViolationKind::NegativeOffset,
        Rule::Minimum {
            min: 0.0,
            exclusive: true,
        } => ViolationKind::NonPositiveSize,
        Rule::Finite => ViolationKind::NotFiniteNumber,
        _ => return None,
    })
}

/// The violation for a failed schema rule, when the service words it as one of [`ViolationKind`]'s rules
/// (see [`rule_kind`]).
pub fn rule_violation(failure: &RuleFailure) -> Option<Violation> {
    rule_kind(failure).map(|kind| Violation::new(kind, failure.path.clone(), ""))
}

/// The service's message for a failed rule of the spec's request schemas: `<path> <constraint>`, the
/// validator's own message where the service words it as one of [`ViolationKind`]'s rules.
pub fn rule_message(failure: &RuleFailure) -> String {
    if let Some(kind) = rule_kind(failure) {
        return say(&failure.path, kind.prefix());
    }
    let constraint = match failure.rule {
        Rule::Type(JsonType::Object) => "must be an object".to_owned(),
        Rule::Type(JsonType::Array) => "must be an array".to_owned(),
        Rule::Type(JsonType::String) => "must be a string".to_owned(),
        Rule::Type(JsonType::Integer) => "must be an integer number".to_owned(),
        Rule::Type(JsonType::Number) => "must be a number".to_owned(),
        Rule::Type(JsonType::Boolean) => "must be a boolean value".to_owned(),
        Rule::MinItems(min) => format!("must contain at least {min} elements"),
        Rule::MinLength(min) => format!("must be longer than or equal to {min} characters"),
        Rule::MaxLength(max) => format!("must be shorter than or equal to {max} characters"),
        Rule::Minimum {
            min,
            exclusive: true,
        } => format!("must be greater than {min}"),
        Rule::Minimum {
            min,
            exclusive: false,
        } => format!("must not be less than {min}"),
        Rule::Enum(allowed) => format!(
            "must be one of the following values: {}",
            allowed.join(", ")
        ),
        Rule::DateTime => "must be a valid ISO 8601 date string".to_owned(),
        Rule::OneOf => "does not have an accepted shape".to_owned(),
        Rule::Required => ViolationKind::MissingField.prefix().to_owned(),
        Rule::Finite => ViolationKind::NotFiniteNumber.prefix().to_owned(),
        Rule::NotNull => "must not be null".to_owned(),
    };
    say(&failure.path, &constraint)
}

/// `<path> <text>`, or the text alone for the body itself.
fn say(path: &str, text: &str) -> String {
    if path.is_empty() {
        text.to_owned()
    } else {
        format!("{path} {text}")
    }
}

/// Declares [`ViolationKind`] with its prefix, its kind of failure and the list of all kinds from one table.
macro_rules! violation_kinds {
    ($( $(#[$doc:meta])* $variant:ident => ($prefix:literal, $field:literal), )+) => {
        /// The rules of a create-order request, one per row of the service's 400 tables (and the 409), plus
        /// the body-validation (field) rules.
        ///
        /// Each variant's documentation gives the service's message prefix. Ordering-rule messages are
        /// `"<prefix>: <detail>"`; field-rule messages are `"<path> <prefix>"`.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum ViolationKind {
            $( $(#[$doc])* $variant, )+
        }

        impl ViolationKind {
            /// Every kind, in the order of the service's tables, field rules last.
            pub const ALL: &'static [ViolationKind] = &[ $( ViolationKind::$variant, )+ ];

            /// The service's message prefix; for a field rule, the constraint that follows the field path.
            pub fn prefix(&self) -> &'static str {
                match self {
                    $( ViolationKind::$variant => $prefix, )+
                }
            }

            /// Whether the service reports this as a body-validation failure (message array).
            pub fn is_field_validation(&self) -> bool {
                match self {
                    $( ViolationKind::$variant => $field, )+
                }
            }
        }
    };
}

violation_kinds! {
    // ---- Order creation 400s and 409
    /// `Each line item must have a product variant ID or a SKU`: a standard line item with neither.
    MissingVariantIdOrSku => ("Each line item must have a product variant ID or a SKU", false),
    /// `No product found in the store for a line item: ...`: the variant id or SKU is not in this store.
    ProductNotFound => ("No product found in the store for a line item", false),
    /// `Product variant and SKU do not match for a line item: ...`: both sent, naming different variants.
    VariantSkuMismatch => ("Product variant and SKU do not match for a line item", false),
    /// `The same product variant appears in more than one line item: ...`: merge duplicates by raising the
    /// quantity (see [`merge_duplicates`](super::merge_duplicates)).
    DuplicateVariant => ("The same product variant appears in more than one line item", false),
    /// `Products that are not active or unlisted cannot be ordered: ...`: a draft or archived product (or
    /// one whose status is unknown to this SDK or missing, which cannot be shown to be orderable).
    ProductNotOrderable => ("Products that are not active or unlisted cannot be ordered", false),
    /// `Discontinued or out of stock product variants cannot be ordered: ...`: a discontinued product or
    /// product variant.
    VariantUnavailable => ("Discontinued or out of stock product variants cannot be ordered", false),
    /// `An order already exists with this external order ID`: the 409. Never produced by
    /// [`validate_order`](super::validate_order), which cannot see past orders; the emulator reports it.
    DuplicateExternalOrderId => ("An order already exists with this external order ID", false),

    // ---- Custom line item 400s
    /// `A custom line item must have a catalog product variant ID`: `isCustom` true, no blank.
    CustomMissingCatalogVariant => ("A custom line item must have a catalog product variant ID", false),
    /// `A custom line item must have at least one decoration`: decorations missing or empty.
    CustomMissingDecorations => ("A custom line item must have at least one decoration", false),
    /// `A custom line item cannot have a product variant ID`: `isCustom` with `productVariantId`.
    CustomWithProductVariantId => ("A custom line item cannot have a product variant ID", false),
    /// `Only a custom line item can have a catalog product variant ID or decorations`: custom fields on a
    /// standard line item.
    CustomFieldsOnStandardItem => ("Only a custom line item can have a catalog product variant ID or decorations", false),
    /// `All decorations of a line item must use the same decoration method`: mixed methods.
    MixedDecorationMethods => ("All decorations of a line item must use the same decoration method", false),
    /// `Decoration locations must be unique within a line item`: a location repeated.
    DuplicateDecorationLocation => ("Decoration locations must be unique within a line item", false),
    /// `No catalog product variant found for a line item: ...`: not a catalog variant id of this store.
    CatalogVariantNotFound => ("No catalog product variant found for a line item", false),
    /// `Discontinued or out of stock product variants cannot be ordered: ...`: the blank (catalog product)
    /// or the catalog variant of a custom line item is discontinued. The service shows no message of its
    /// own for this, so the standard items' message is used.
    CatalogVariantUnavailable => ("Discontinued or out of stock product variants cannot be ordered", false),
    /// `Artworks not found in the store: ...`: an artwork id that is not this store's.
    ArtworksNotFound => ("Artworks not found in the store", false),
    /// `The print method is not available for the catalog product: ...`: the blank lacks the method.
    MethodNotAvailableForProduct => ("The print method is not available for the catalog product", false),
    /// `The print location is not available for the catalog product: ...`: the blank lacks the location.
    LocationNotAvailableForProduct => ("The print location is not available for the catalog product", false),
    /// `The print method is not available for the print location: ...`: the location excludes the method.
    MethodNotAvailableForLocation => ("The print method is not available for the print location", false),
    /// `The design is larger than the print area for the print location: ...`: width or height exceeds
    /// the area.
    DesignLargerThanPrintArea => ("The design is larger than the print area for the print location", false),
    /// `The design is placed outside the print area for the print location: ...`: the offsets cross an edge.
    DesignOutsidePrintArea => ("The design is placed outside the print area for the print location", false),

    // ---- Body validation (message array)
    /// `<path> should not be null or undefined`: a required field is missing. Only the emulator reports it
    /// (the typed request cannot lack a required field).
    MissingField => ("should not be null or undefined", true),
    /// `<path> should not be empty`: an empty `lastName`, `streetAddress`, `cityOrTown` or
    /// `externalOrderId`.
    EmptyString => ("should not be empty", true),
    /// `lineItems must contain at least 1 elements`: no line items.
    EmptyLineItems => ("must contain at least 1 elements", true),
    /// `<path> must not be less than 1`: a quantity of 0 (unrepresentable in the typed request, whose
    /// quantity is a `NonZeroU64`; the emulator reports it from the spec's `minimum`, see [`rule_kind`]).
    QuantityBelowOne => ("must not be less than 1", true),
    /// `<path> must be an ISO 3166-1 alpha-2 country code`: not an officially assigned code in upper case.
    InvalidCountry => ("must be an ISO 3166-1 alpha-2 country code", true),
    /// `<path> must be an existing US state`: for country `US`, `stateOrProvince` is neither the USPS code
    /// nor the name of one of the 50 states or DC.
    UnknownUsState => ("must be an existing US state", true),
    /// `<path> must be a finite number`: a NaN or infinite placement number (only constructible in Rust;
    /// JSON cannot carry them).
    NotFiniteNumber => ("must be a finite number", true),
    /// `<path> must be a positive number`: a `physicalWidth` or `physicalHeight` of 0 or less.
    NonPositiveSize => ("must be a positive number", true),
    /// `<path> must not be less than 0`: a negative `verticalOffsetFromTop`.
    NegativeOffset => ("must not be less than 0", true),
}

impl ViolationKind {
    /// The HTTP status the service answers with: 409 for [`ViolationKind::DuplicateExternalOrderId`],
    /// 400 for everything else.
    pub fn status_code(&self) -> u16 {
        match self {
            ViolationKind::DuplicateExternalOrderId => 409,
            _ => 400,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_follow_the_two_formats() {
        let rule = Violation::new(
            ViolationKind::ProductNotFound,
            "lineItems.0.productVariantId",
            "productVariantId var_123",
        );
        assert_eq!(
            rule.message(),
            "No product found in the store for a line item: productVariantId var_123"
        );
        assert_eq!(rule.to_string(), rule.message());
        assert!(!rule.is_field_validation());

        let bare = Violation::new(ViolationKind::MissingVariantIdOrSku, "lineItems.0", "");
        assert_eq!(
            bare.message(),
            "Each line item must have a product variant ID or a SKU"
        );

        let field = Violation::new(
            ViolationKind::InvalidCountry,
            "shippingAddress.address.country",
            "us",
        );
        assert_eq!(
            field.message(),
            "shippingAddress.address.country must be an ISO 3166-1 alpha-2 country code"
        );
        assert!(field.is_field_validation());
    }

    #[test]
    fn prefixes_are_distinct_except_the_shared_discontinued_message() {
        for (i, a) in ViolationKind::ALL.iter().enumerate() {
            for b in &ViolationKind::ALL[i + 1..] {
                let shared = matches!(
                    (a, b),
                    (
                        ViolationKind::VariantUnavailable,
                        ViolationKind::CatalogVariantUnavailable
                    )
                );
                assert_eq!(a.prefix() == b.prefix(), shared, "{a:?} {b:?}");
            }
        }
    }

    #[test]
    fn every_rule_the_typed_order_checks_can_report_is_worded_as_a_kind() {
        use store_api_raw::rule::BodyRules;
        for (property, rule) in types::CreateOrderRequest::TYPED_RULES {
            let failure = RuleFailure {
                path: "at".into(),
                property: *property,
                rule: *rule,
            };
            // A new bound in the spec needs a kind (and a message) before `validate_fields` can report it.
            assert!(rule_kind(&failure).is_some(), "{failure:?}");
        }
    }

    #[test]
    fn schema_rules_read_as_the_service_words_them() {
        let failure = |name: &'static str, rule: Rule| RuleFailure {
            path: "a.b".into(),
            property: Property {
                schema: "AddressInput",
                name,
            },
            rule,
        };
        for (failure, message) in [
            (
                failure("x", Rule::Required),
                "a.b should not be null or undefined",
            ),
            (failure("x", Rule::MinLength(1)), "a.b should not be empty"),
            (
                failure("x", Rule::MinLength(3)),
                "a.b must be longer than or equal to 3 characters",
            ),
            (
                failure("country", Rule::MaxLength(2)),
                "a.b must be an ISO 3166-1 alpha-2 country code",
            ),
            (
                failure(
                    "x",
                    Rule::Minimum {
                        min: 2.5,
                        exclusive: true,
                    },
                ),
                "a.b must be greater than 2.5",
            ),
            (
                failure("x", Rule::Enum(&["a", "b"])),
                "a.b must be one of the following values: a, b",
            ),
            (failure("x", Rule::Finite), "a.b must be a finite number"),
        ] {
            assert_eq!(rule_message(&failure), message);
        }
    }

    #[test]
    fn only_the_external_order_id_conflict_is_a_409() {
        for kind in ViolationKind::ALL {
            let expected = if *kind == ViolationKind::DuplicateExternalOrderId {
                409
            } else {
                400
            };
            assert_eq!(kind.status_code(), expected, "{kind:?}");
        }
    }

    #[test]
    fn service_message_is_the_field_array_or_the_first_rule() {
        let field = |path: &str| Violation::new(ViolationKind::EmptyString, path, "");
        let rule =
            |detail: &str| Violation::new(ViolationKind::ArtworksNotFound, "lineItems.0", detail);

        assert_eq!(service_message(&[]), None);
        assert_eq!(
            service_message(&[rule("art_1"), rule("art_2")]),
            Some(types::ErrorMessage::String(
                "Artworks not found in the store: art_1".into()
            ))
        );
        assert_eq!(
            service_message(&[
                field("shippingAddress.lastName"),
                field("externalOrderId"),
                rule("art_1")
            ]),
            Some(types::ErrorMessage::Array(vec![
                "shippingAddress.lastName should not be empty".into(),
                "externalOrderId should not be empty".into(),
            ]))
        );
    }
}
