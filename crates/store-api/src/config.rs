//! Configuration from the environment: the variables the `store-api` command line reads too.

use std::ffi::OsString;

/// The variable holding the store's API key (never printed, not even in errors).
pub const ENV_API_KEY: &str = "STORE_API_KEY";
/// The variable holding the store id that matches the key.
pub const ENV_STORE_ID: &str = "STORE_API_STORE_ID";
/// The variable holding the service's address (`https://host`, with or without `/store-api/2026-08`).
pub const ENV_BASE_URL: &str = "STORE_API_BASE_URL";

/// Why the environment does not configure a client. Names the variable, never shows the key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The variable is not set, or set to an empty value.
    #[error("{variable} is not set")]
    Missing {
        /// The variable's name, for example [`ENV_API_KEY`].
        variable: &'static str,
    },
    /// The variable is set but its value cannot be used.
    #[error("{variable} is invalid: {reason}")]
    Invalid {
        /// The variable's name.
        variable: &'static str,
        /// What is wrong with it (never the value of the key).
        reason: String,
    },
}

/// The three settings, as read from the environment.
#[derive(Debug)]
pub(crate) struct EnvSettings {
    pub api_key: String,
    pub store_id: String,
    pub base_url: String,
}

impl EnvSettings {
    /// Reads the variables through `lookup` (the process's environment, or a test's map); `base_url`
    /// says why a base URL is unusable, if it is.
    pub(crate) fn read(
        lookup: impl Fn(&str) -> Option<OsString>,
        base_url: impl Fn(&str) -> Result<(), String>,
    ) -> Result<EnvSettings, ConfigError> {
        let read = |variable: &'static str| -> Result<String, ConfigError> {
            let value = lookup(variable)
                .filter(|value| !value.is_empty())
                .ok_or(ConfigError::Missing { variable })?;
            value.into_string().map_err(|_| ConfigError::Invalid {
                variable,
                reason: "not valid Unicode".into(),
            })
        };
        let api_key = read(ENV_API_KEY)?;
        if reqwest::header::HeaderValue::from_str(&api_key).is_err() {
            return Err(ConfigError::Invalid {
                variable: ENV_API_KEY,
                reason: "contains characters that cannot be sent in an HTTP header".into(),
            });
        }
        let store_id = read(ENV_STORE_ID)?;
        let url = read(ENV_BASE_URL)?;
        base_url(&url).map_err(|reason| ConfigError::Invalid {
            variable: ENV_BASE_URL,
            reason,
        })?;
        Ok(EnvSettings {
            api_key,
            store_id,
            base_url: url,
        })
    }
}
