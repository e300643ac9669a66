//! The open enumeration macro: a string enum whose unknown values decode into `Unknown(String)`.
//!
//! The invocations are generated (`crate::contract::open_enums`, one per schema the spec writes as an
//! open enumeration); the macro stays hand-written. Paths are absolute because the macro expands
//! in the generated module.

/// Defines an open string enum with its wire names, `Unknown(String)` fallback and string conversions.
macro_rules! open_enum {
    (
        $(#[$meta:meta])*
        $name:ident {
            $( $(#[$vmeta:meta])* $variant:ident => $wire:literal, )+
        }
    ) => {
        $(#[$meta])*
        // No `PartialOrd`/`Ord` derive: it would order values by their place in the spec's list, and a value
        // added within the version may land anywhere in it. An order that means something is stated in the
        // spec (`x-ladder`) and implemented from it.
        #[derive(Clone, Debug, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum $name {
            $( $(#[$vmeta])* $variant, )+
            /// A value this version of the SDK does not know; kept verbatim.
            Unknown(::std::string::String),
        }

        impl $name {
            /// Every value known to this SDK, in the specification's order.
            pub const KNOWN: &'static [$name] = &[ $( $name::$variant, )+ ];

            /// The wire form of the value.
            pub fn as_str(&self) -> &str {
                match self {
                    $( $name::$variant => $wire, )+
                    $name::Unknown(other) => other.as_str(),
                }
            }

            /// Whether this value is one the SDK knows (not `Unknown`).
            pub fn is_known(&self) -> bool {
                !matches!(self, $name::Unknown(_))
            }
        }

        impl ::std::convert::From<&str> for $name {
            fn from(value: &str) -> Self {
                match value {
                    $( $wire => $name::$variant, )+
                    other => $name::Unknown(other.to_owned()),
                }
            }
        }

        impl ::std::convert::From<::std::string::String> for $name {
            fn from(value: ::std::string::String) -> Self {
                match $name::from(value.as_str()) {
                    $name::Unknown(_) => $name::Unknown(value),
                    known => known,
                }
            }
        }

        impl ::std::str::FromStr for $name {
            type Err = ::std::convert::Infallible;

            fn from_str(value: &str) -> Result<Self, Self::Err> {
                Ok($name::from(value))
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl ::serde::Serialize for $name {
            fn serialize<S: ::serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }

        impl<'de> ::serde::Deserialize<'de> for $name {
            fn deserialize<D: ::serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                <::std::string::String as ::serde::Deserialize>::deserialize(deserializer).map($name::from)
            }
        }

        // Any string is accepted (a value added within the version must not fail a document); the known
        // values are `examples`, which editors offer as completions.
        #[cfg(feature = "schemars")]
        impl ::schemars::JsonSchema for $name {
            fn schema_name() -> ::std::borrow::Cow<'static, str> {
                ::std::borrow::Cow::Borrowed(stringify!($name))
            }

            fn json_schema(_: &mut ::schemars::SchemaGenerator) -> ::schemars::Schema {
                ::schemars::json_schema!({
                    "type": "string",
                    "examples": [ $( $wire ),+ ],
                })
            }
        }
    };
}

pub(crate) use open_enum;
