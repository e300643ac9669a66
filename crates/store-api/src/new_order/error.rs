//! What a builder refuses.

use crate::validate::{PlacementError, Violation};

/// A value the request cannot carry, or a rule it breaks; every variant names the field by its wire path.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// The field's type cannot hold the value (empty, too long, a country code of the wrong length, a
    /// quantity of 0, an external id that could never be looked up, a design with no placement).
    #[error("{field}: {reason}")]
    Field {
        /// The wire path, for example `shippingAddress.lastName`.
        field: String,
        /// Why, in lower case.
        reason: String,
    },
    /// A design's placement breaks rule 5 in the print area it was given, or is not a placement at all.
    #[error("{field}: {source}")]
    Placement {
        /// The wire path of the decoration field, for example `lineItems.0.decorations.0.physicalWidth`.
        field: String,
        /// The broken rule.
        #[source]
        source: PlacementError,
    },
    /// Body rules of the service ([`validate_fields`](crate::validate::validate_fields)), each naming
    /// its field in [`Violation::path`].
    #[error("{}", violations.iter().map(Violation::message).collect::<Vec<_>>().join("; "))]
    Invalid {
        /// Every broken rule, in the wire's field order; never empty.
        violations: Vec<Violation>,
    },
}

impl BuildError {
    /// The wire path of the (first) offending field.
    pub fn field(&self) -> &str {
        match self {
            BuildError::Field { field, .. } | BuildError::Placement { field, .. } => field,
            BuildError::Invalid { violations } => {
                violations.first().map_or("", |v| v.path.as_str())
            }
        }
    }

    /// A [`BuildError::Field`].
    pub(crate) fn at(field: impl Into<String>, reason: impl std::fmt::Display) -> Self {
        BuildError::Field {
            field: field.into(),
            reason: reason.to_string(),
        }
    }

    /// Prefixes the field path with `prefix.` (a builder of a part reports paths from its own root).
    pub(crate) fn under(self, prefix: &str) -> Self {
        match self {
            BuildError::Field { field, reason } => BuildError::Field {
                field: format!("{prefix}.{field}"),
                reason,
            },
            BuildError::Placement { field, source } => BuildError::Placement {
                field: format!("{prefix}.{field}"),
                source,
            },
            invalid @ BuildError::Invalid { .. } => invalid,
        }
    }
}

impl From<BuildError> for crate::Error {
    /// So that `?` works in code returning [`store_api::Result`](crate::Result): broken body rules are
    /// [`Error::Invalid`](crate::Error::Invalid) (as the pre-flight check reports them), the rest
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) with the field in its text. Nothing
    /// was sent either way.
    fn from(error: BuildError) -> Self {
        match error {
            BuildError::Invalid { violations } => crate::Error::Invalid { violations },
            other => crate::Error::invalid_argument_from(other.to_string(), other),
        }
    }
}
