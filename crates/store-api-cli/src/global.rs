//! The options every command accepts ([`GlobalArgs`]), the [`Secret`] they may carry, and the command
//! line's own environment variables: what the command line (`cli`) declares and the configuration
//! (`config`) reads.

use std::fmt;
use std::path::PathBuf;

use clap::Args;

/// The variable naming the profile to use (like `--profile`).
pub const ENV_PROFILE: &str = "STORE_API_PROFILE";
/// The variable holding the path of the configuration file, instead of the platform's place.
pub const ENV_CONFIG: &str = "STORE_API_CONFIG";

/// Options every command accepts.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Global options")]
pub struct GlobalArgs {
    /// The store's API key (sent as X-API-Key, never printed).
    #[arg(long, env = store_api::ENV_API_KEY, hide_env_values = true, global = true)]
    pub api_key: Option<Secret>,
    /// The store id that matches the key.
    #[arg(
        long,
        env = store_api::ENV_STORE_ID,
        hide_env_values = true,
        global = true
    )]
    pub store_id: Option<String>,
    /// The service's address, for example https://host (with or without /store-api/2026-08).
    #[arg(
        long,
        env = store_api::ENV_BASE_URL,
        hide_env_values = true,
        global = true
    )]
    pub base_url: Option<String>,
    /// Take the settings no flag or variable gives from this profile of the configuration file
    /// ($STORE_API_CONFIG, else $XDG_CONFIG_HOME/store-api/config.toml or ~/.config/store-api/config.toml).
    #[arg(
        long,
        env = ENV_PROFILE,
        hide_env_values = true,
        value_name = "NAME",
        global = true
    )]
    pub profile: Option<String>,
    /// Start the local emulator inside this process and use its first active store (not the real
    /// service; credential flags are ignored). It serves a sample 3000x2400 PNG at
    /// `https://demo-assets.example.test/sunset-3000x2400.png` for `artworks create`.
    #[arg(long, global = true)]
    pub emulator: bool,
    /// Allow an http:// --base-url to a host that is not loopback: the API key, and the names and
    /// addresses of orders, then cross the network in clear text. Only on a network you trust (a
    /// TLS-terminating sidecar, a private test network); https needs nothing.
    #[arg(long, global = true)]
    pub allow_insecure_http: bool,
    /// With --emulator: load the emulator's state from this file if it exists and save it back on
    /// exit, so successive commands see the same orders and artworks.
    #[arg(long, value_name = "FILE", global = true)]
    pub emulator_state: Option<PathBuf>,
    /// Print machine-readable JSON (the API's own shapes) instead of tables.
    #[arg(long, global = true)]
    pub json: bool,
    /// Filter the JSON with a jq expression (jaq) and print each result on a line, strings raw, other
    /// values as compact JSON; implies --json. A list is `{"items": [...], "totalItems": N, ...}`:
    /// `--jq '.items[].id'` prints one id a line.
    #[arg(long, value_name = "EXPR", global = true)]
    pub jq: Option<String>,
    /// Show the traffic on stderr, never the key: -v one line per try (method, full URL, status or
    /// error, time, resends, rate limit left), -vv the headers too, -vvv the bodies too (customer
    /// data as placeholders). A wait of 1 s or more on the store's rate limit is said even without -v
    /// (with --json, only with -v). Colours only at a terminal without NO_COLOR. RUST_LOG adds its log.
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    pub verbose: u8,
    /// Show the traffic's bodies too, customer data redacted: the same as -vvv.
    #[arg(long, global = true)]
    pub debug: bool,
}

/// A secret given on the command line or in the environment (an API key): its `Debug` never shows it,
/// so printing the parsed arguments (`{:?}`, a panic message, a trace) cannot leak it.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// The secret itself, for the one place that sends or signs with it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl From<String> for Secret {
    fn from(value: String) -> Self {
        Secret(value)
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(<redacted>)")
    }
}
