//! The emulator as a server process: the options of `store-api-emulator` and of `store-api emulator`
//! (one definition, flattened into both command lines) and the serve-until-stopped loop they share.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use store_api_raw::open::WebhookTopic;

use crate::control::StoreCredentials;
use crate::deviation::Deviation;
use crate::emulator::{Emulator, EmulatorBuilder, EmulatorError};
use crate::seed::Seed;

/// The emulator server's command-line options.
#[derive(Debug, Clone, clap::Args)]
#[non_exhaustive]
pub struct ServeArgs {
    /// Address to listen on; port 0 picks a free port. A non-loopback address needs --allow-remote.
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub listen: SocketAddr,
    /// Seed file replacing the built-in data (format: crates/store-api-fixtures/seed/README.md).
    #[arg(long, value_name = "FILE")]
    pub seed: Option<PathBuf>,
    /// Turn the per-store rate limit off (for load tests).
    #[arg(long)]
    pub no_rate_limit: bool,
    /// Load the state from this file on start (if it exists); write it there after changes and on
    /// shutdown.
    #[arg(long, value_name = "FILE")]
    pub state: Option<PathBuf>,
    /// With --state: how long changes may wait before they are written (what a crash can lose).
    #[arg(long, value_name = "MS", default_value_t = 200)]
    pub save_interval_ms: u64,
    /// Move every movable order one rung up the fulfillment ladder this often, in milliseconds.
    #[arg(long, value_name = "MS")]
    pub auto_advance_ms: Option<u64>,
    /// Wait before the second webhook attempt, doubled for each further one, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 1000)]
    pub webhook_backoff_ms: u64,
    /// Listen on a non-loopback address and answer the control endpoints (which list every store's API
    /// key) for any Host. Anyone who can reach the address can then read the keys.
    #[arg(long)]
    pub allow_remote: bool,
    /// Deliver webhooks to non-loopback addresses too (by default only 127.0.0.0/8, ::1 and localhost).
    #[arg(long)]
    pub allow_remote_webhooks: bool,
    /// Register every webhook topic of every store to this URL on start (a local receiver under
    /// development), e.g. http://127.0.0.1:3000/webhooks.
    #[arg(long, value_name = "URL")]
    pub forward_to: Option<String>,
    /// Deterministic mode: ids and keys from a sequence seeded by SEED, and a clock standing at
    /// 2026-08-01T00:00:00Z that only `POST /_emulator/clock/advance {"ms": N}` moves.
    #[arg(long, value_name = "SEED")]
    pub deterministic: Option<u64>,
    /// Differ from the spec on this assumption, named by its id in the spec (repeatable): to see that
    /// `store-api doctor` (or its recordings check) notices, or to rehearse a service that differs.
    #[arg(
        long,
        value_name = "ASSUMPTION",
        value_parser = clap::builder::PossibleValuesParser::new(
            Deviation::ALL.iter().map(|deviation| deviation.assumption())
        )
    )]
    pub deviate: Vec<String>,
}

/// Why the server could not run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServeError {
    /// The options are wrong (an unreadable seed file).
    #[error("{0}")]
    Usage(String),
    /// The emulator could not start.
    #[error(transparent)]
    Start(#[from] EmulatorError),
}

impl ServeArgs {
    /// Registers every topic of every store to `--forward-to`, if given.
    pub fn forward(&self, emulator: &Emulator) -> Result<(), ServeError> {
        let Some(url) = &self.forward_to else {
            return Ok(());
        };
        let urls: BTreeMap<String, String> = WebhookTopic::KNOWN
            .iter()
            .map(|topic| (topic.to_string(), url.clone()))
            .collect();
        for store in emulator.stores() {
            emulator
                .set_webhooks(&store.id, urls.clone())
                .map_err(|e| ServeError::Usage(format!("--forward-to: {}", e.message)))?;
        }
        Ok(())
    }

    /// The emulator these options describe.
    pub fn builder(&self) -> Result<EmulatorBuilder, ServeError> {
        let mut builder = Emulator::builder()
            .listen(self.listen)
            .rate_limit(!self.no_rate_limit)
            .webhook_backoff(Duration::from_millis(self.webhook_backoff_ms))
            .allow_remote(self.allow_remote)
            .allow_remote_webhooks(self.allow_remote_webhooks)
            .sample_artwork(true);
        if let Some(path) = &self.seed {
            let seed = Seed::from_file(path).map_err(|e| ServeError::Usage(e.to_string()))?;
            builder = builder.seed(seed);
        }
        if let Some(path) = &self.state {
            builder = builder
                .state_file(path)
                .save_interval(Duration::from_millis(self.save_interval_ms));
        }
        if let Some(seed) = self.deterministic {
            builder = builder.deterministic(seed);
        }
        for name in &self.deviate {
            let deviation = Deviation::breaking(name)
                .ok_or_else(|| ServeError::Usage(format!("--deviate: no deviation {name:?}")))?;
            builder = builder.deviate(deviation);
        }
        if let Some(ms) = self.auto_advance_ms {
            builder = builder.auto_advance(Duration::from_millis(ms.max(1)));
        }
        Ok(builder)
    }

    /// Starts the emulator, prints the ready line and then the banner (each active store, its key and an
    /// `export` line a shell takes) on stdout (logs go to stderr), and serves until Ctrl-C or SIGTERM,
    /// then shuts down, writing the state file when one was given.
    pub async fn serve(&self) -> Result<(), ServeError> {
        let emulator = self.builder()?.start().await?;
        self.forward(&emulator)?;
        if !self.listen.ip().is_loopback() {
            eprintln!(
                "warning: listening on {}: anyone who can reach this address can read every store's API key at /_emulator/stores",
                emulator.addr()
            );
        }
        // Listening for SIGTERM before saying ready: a supervisor may send it the moment it reads the line.
        let stopped = stop_signal();
        let ready = format!(
            "store-api-emulator listening on {}\n{}",
            emulator.origin(),
            banner(&emulator.base_url(), emulator.origin(), &emulator.stores())
        );
        // One write, its errors ignored: a supervisor that reads the ready line and closes the pipe
        // (as most do) would otherwise make a later line fail, and `print!` panic, while it serves.
        {
            use std::io::Write as _;
            let mut stdout = std::io::stdout().lock();
            let _ = stdout.write_all(ready.as_bytes());
            let _ = stdout.flush();
        }
        stopped.await;
        emulator.shutdown().await;
        Ok(())
    }
}

/// What the server prints after its ready line: each active store's id and key, and the `export` line
/// that points the `store-api` command line and `Client::from_env` at the first one (the others' as
/// comments), as `stripe listen` prints its signing secret. Every line is one a POSIX shell takes (a
/// comment or an `export`), so `eval "$(sed 1d FILE)"` of the output works.
fn banner(base_url: &str, origin: &str, stores: &[StoreCredentials]) -> String {
    let active: Vec<&StoreCredentials> = stores.iter().filter(|store| store.active).collect();
    let mut text =
        format!("# active stores (every store and its key: GET {origin}/_emulator/stores):\n");
    if active.is_empty() {
        text.push_str("#   none: activate one with PUT /_emulator/stores/STORE_ID/active {\"active\": true}\n");
        return text;
    }
    let width = active.iter().map(|store| store.id.len()).max().unwrap_or(0);
    for store in &active {
        text.push_str(&format!("#   {:width$}  {}\n", store.id, store.api_key));
    }
    let export = |store: &StoreCredentials| {
        format!(
            "export STORE_API_BASE_URL={} STORE_API_STORE_ID={} STORE_API_KEY={}",
            shell_word(base_url),
            shell_word(&store.id),
            shell_word(&store.api_key)
        )
    };
    for (at, store) in active.iter().enumerate() {
        if at == 0 {
            text.push_str(&format!(
                "# use {} from this shell (store-api, Client::from_env):\n",
                store.id
            ));
            text.push_str(&export(store));
            text.push('\n');
        } else {
            text.push_str(&format!("# or {}:\n# {}\n", store.id, export(store)));
        }
    }
    text.push_str(&format!(
        "# or keep one in a profile: store-api login --from-emulator {origin} --profile NAME\n"
    ));
    text
}

/// `word` as one shell word: as it is when it holds only characters no shell treats specially,
/// otherwise in single quotes (a seed file may name a store anything).
fn shell_word(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-./:@%+,=".contains(c));
    if plain {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

/// Waits for Ctrl-C or, on Unix, SIGTERM (what `kill`, systemd and container runtimes send). On Unix
/// both handlers are installed when this is called, not when the future is first polled, so a signal
/// that arrives in between is not lost. What the emulator's server stops on; public so that a server
/// standing beside it (the CLI's `proxy`) stops on the same signals.
pub fn stop_signal() -> impl Future<Output = ()> + Send + 'static {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let handlers = signal(SignalKind::terminate()).and_then(|term| {
            let interrupt = signal(SignalKind::interrupt())?;
            Ok((term, interrupt))
        });
        async move {
            match handlers {
                Ok((mut term, mut interrupt)) => {
                    tokio::select! {
                        _ = term.recv() => {}
                        _ = interrupt.recv() => {}
                    }
                }
                Err(_) => {
                    let _ = tokio::signal::ctrl_c().await;
                }
            }
        }
    }
    #[cfg(not(unix))]
    async {
        let _ = tokio::signal::ctrl_c().await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_word_a_shell_would_split_or_expand_is_quoted() {
        let cases = [
            ("store_alpha", "store_alpha"),
            (
                "http://127.0.0.1:8080/store-api/2026-08",
                "http://127.0.0.1:8080/store-api/2026-08",
            ),
            ("a b", "'a b'"),
            ("$HOME", "'$HOME'"),
            ("it's", "'it'\\''s'"),
            ("", "''"),
        ];
        for (word, expected) in cases {
            assert_eq!(shell_word(word), expected, "{word}");
        }
    }
}
