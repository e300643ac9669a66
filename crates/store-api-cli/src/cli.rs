//! The command line: every command, flag and its `--help` text (clap derive).

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use store_api::model::{
    DecorationMethod, FulfillmentStatus, OrderStatus, PaymentStatus, ProductStatus,
};

use crate::global::{GlobalArgs, Secret};

/// Exit codes, also listed in `--help`.
const EXIT_CODES: &str = "\
Exit codes:
  0  success
  1  a check failed (webhook signature), or the embedded emulator could not start
  2  usage error (bad flags, missing credentials, unreadable input file)
  3  the API refused the request (4xx), or the pre-flight check found problems
  4  transport failure, timeout, 5xx, the rate limit still exceeded after retries, or an order
     file another run still holds after --lock-timeout";

/// `orders submit --lock-timeout`'s default: longer than one submission of another run can take (the
/// SDK's submit policy retries for up to 5 minutes, and the lookups that settle it come after).
pub const DEFAULT_LOCK_TIMEOUT_SECONDS: u64 = 600;

/// `store-api`: the command line of the print-on-demand Store API 2026-08.
///
/// Reads the catalog and products, uploads artwork, places orders exactly once and follows them.
/// Credentials come from flags, the environment or a profile (`--profile`) and are never printed.
/// `--emulator` runs every command against an embedded local emulator instead of the real service.
#[derive(Debug, Parser)]
#[command(name = "store-api", version, after_help = EXIT_CODES, propagate_version = true)]
pub struct Cli {
    /// Connection and output options, accepted before or after the command.
    #[command(flatten)]
    pub global: GlobalArgs,
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Check reachability and credentials (GET /status).
    Status,
    /// Check the spec's statements and assumptions against the service, read-only: a bounded number
    /// of GETs with the session's key, under the rate limit; prints per fact held, differs (with what
    /// was seen) or not checked, and exits with 1 when something differs. With --cassette, checks
    /// recorded traffic instead and sends nothing; with --compare too, sends the recorded requests
    /// again and compares the answers with the recorded ones.
    Doctor(DoctorArgs),
    /// Browse the printable blanks available to the store (read-only, no prices).
    #[command(subcommand)]
    Catalog(CatalogCommand),
    /// Read the store's products (read-only; created and edited in the app).
    #[command(subcommand)]
    Products(ProductsCommand),
    /// Upload artwork images by HTTPS URL and read them back.
    #[command(subcommand)]
    Artworks(ArtworksCommand),
    /// Validate, place (exactly once), list and follow orders.
    #[command(subcommand)]
    Orders(OrdersCommand),
    /// Verify webhook deliveries offline, or receive them here (`listen`).
    #[command(subcommand)]
    Webhooks(WebhooksCommand),
    /// Run the local emulator as a server, exactly like `store-api-emulator`.
    Emulator(EmulatorArgs),
    /// Keep a store's address, id and key in a profile, so later commands need no credentials.
    ///
    /// Writes the profile --profile names (default: `default`) into the configuration file
    /// ($STORE_API_CONFIG, else $XDG_CONFIG_HOME/store-api/config.toml or
    /// ~/.config/store-api/config.toml), the rest of the file kept; the key goes to
    /// keys/NAME.key beside it, created with mode 600, and is never printed. The settings come from
    /// --base-url, --store-id and --api-key (or their STORE_API_* variables); --with-key reads the key
    /// from standard input instead; --from-emulator asks a running emulator for a store's (the one
    /// --store-id names, else its first active store). The profile becomes the default when the file
    /// has none, or with --default.
    Login(LoginArgs),
    /// Send any request with the session's key and store: prints the answer's body (pretty JSON when
    /// JSON) on stdout and its status on stderr.
    ///
    /// PATH is relative to the store (`/orders?limit=5`) or absolute under the version prefix
    /// (`/store-api/2026-08/stores/ID/status`). GETs are retried like the SDK's (5xx, timeouts, 429);
    /// other methods only when nothing was processed (429, no connection). A 4xx answer exits with 3, a
    /// 5xx or a transport failure with 4.
    Api(ApiArgs),
    /// Record traffic into cassettes, or replay it with nothing behind, for test suites in any language.
    ///
    /// `--record DIR` forwards every request to the origin of the session's base URL (--base-url, the
    /// environment, a profile, or --emulator) and writes each exchange to `DIR/NAME.json` as it
    /// happens; `--replay DIR` answers from those cassettes with no network. NAME comes from the
    /// request header `X-Store-Api-Cassette` (default `proxy`; never forwarded); a cassette recorded
    /// again starts over. Prints one line on stdout when ready, ending with the base URL to give the
    /// code under test (`... listening on http://127.0.0.1:PORT/store-api/2026-08`); then one line
    /// per exchange on stderr (`recorded|replayed|missed STATUS METHOD PATH (CASSETTE)`, the path as
    /// the cassette keeps it: no key, no customer data); Ctrl-C or SIGTERM writes the cassettes,
    /// prints the counts per cassette on stderr and exits 0. One recording proxy per DIR: a second
    /// one exits 4 (DIR/.store-api-proxy.lock is held).
    ///
    /// A replay serves any number of runs of a suite without a restart. Reads may repeat. Within a
    /// run, writes are answered once each, in the recorded order: the same write twice is a miss
    /// unless it was recorded twice. A cassette's run starts over when its first recorded request
    /// comes again and the run in progress cannot answer it: a read, once the run has answered a
    /// write; a write, once the run has answered every recorded exchange. So a suite that starts
    /// as it was recorded runs again as is; stderr says `cassette NAME: run N begins`.
    ///
    /// Transparent: no retries, no rate limiting, no validation of its own; answers (a 3xx included,
    /// never followed) pass back as received. The caller's X-API-Key goes to the service but never
    /// into a cassette; a replay accepts any key or none. Customer data (names, addresses, emails,
    /// phone numbers) is replaced by placeholders unless --keep-customer-data. Answers the proxy makes
    /// itself carry the header `X-Store-Api-Proxy`: a request naming another host, one whose Host is
    /// not a loopback one, and (recording) the emulator's control plane are refused (403), a
    /// request no cassette holds is a 500 "Cassette Miss" whose message (also on stderr) is the diff
    /// against the nearest recorded request, an origin that does not answer is a 502.
    Proxy(ProxyArgs),
    /// Compute where a design goes in a print area.
    #[command(subcommand)]
    Placement(PlacementCommand),
    /// Print a shell completion script.
    Completions(CompletionsArgs),
    /// Walk through the whole API on the embedded emulator, no set-up needed.
    Demo,
}

/// Options of `doctor`.
#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// The most requests to send (every one a GET); probes beyond it are reported as not checked.
    #[arg(long, default_value_t = store_api_conformance::DEFAULT_MAX_REQUESTS)]
    pub max_requests: u32,
    /// Check recorded traffic instead of probing: every *.json cassette in DIR and every insta
    /// snapshot (*.snap) in it whose body is a cassette (others are skipped, named on stderr), or one
    /// cassette FILE (a .snap too). Judges per statement and assumption held, differs (with the
    /// exchange that shows it) or not checked, including what a probe cannot see (order creation, null
    /// fields, empty ids, body size), and every recorded answer against the answers the spec declares
    /// (statuses, fields, types, closed enums, headers); nothing is sent. Prints a summary per
    /// cassette: the counts, what differs in full, the ids of the facts held (--full: every fact,
    /// with what shows it or why it was not checked). Exits with 1 when something differs. With
    /// --json (always whole): one file's {report, conformance}, or for a folder a list of {file,
    /// report, conformance}.
    #[arg(long, value_name = "DIR|FILE")]
    pub cassette: Option<std::path::PathBuf>,
    /// With --cassette: print every statement and assumption with its verdict and what shows it, and
    /// the notes on the recorded answers, instead of the summary.
    #[arg(long, requires = "cassette")]
    pub full: bool,
    /// With --cassette: after the check, send each cassette's requests again, in order, to the
    /// session's service (--base-url, the environment, a profile, or --emulator) with no retries, and
    /// compare each answer with the recorded one in what the spec fixes (status, headers and their
    /// bounds, fields and their types, list envelopes); values that vary between runs are not
    /// compared, answers that depend on state the service lacks are not comparable. Exits with 1 when
    /// an answer differs. With --json: {report, conformance, comparison} for one file, {file, report,
    /// conformance, comparison} for each of a folder's. Against an emulator, run it in deterministic mode with the recording's seed
    /// (`store-api emulator --deterministic SEED`, then its address as --base-url) so that ids and
    /// keys match the recording's; the embedded --emulator is not deterministic. This sends the
    /// recorded writes (orders included): point it at an emulator, not a production store.
    #[arg(long, requires = "cassette")]
    pub compare: bool,
}

/// Options of `proxy`.
#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("mode").required(true).args(["record", "replay"])))]
pub struct ProxyArgs {
    /// Address to listen on; port 0 picks a free port. A non-loopback address needs --allow-remote
    /// and --allow-insecure-http (callers' keys would cross the network in clear text). The default
    /// port is not the emulator's (8080), so the proxy can stand in front of one started with its own.
    #[arg(long, default_value = "127.0.0.1:8081")]
    pub listen: std::net::SocketAddr,
    /// Answer requests whatever host their Host header names. Without it only a loopback Host
    /// (localhost, 127.0.0.0/8, [::1]) is answered: a web page whose name was pointed at 127.0.0.1
    /// (DNS rebinding) is refused, as the emulator refuses it.
    #[arg(long)]
    pub allow_remote: bool,
    /// When recording, also forward the emulator's control plane: its /_emulator/... endpoints (which
    /// list every store's key) and its X-Emulator-Fault header. Without it they are refused (403).
    #[arg(long, requires = "record")]
    pub forward_control_plane: bool,
    /// Forward to the service and record every exchange into this directory (created if needed).
    #[arg(long, value_name = "DIR")]
    pub record: Option<PathBuf>,
    /// Answer from the cassettes in this directory, with nothing behind the proxy.
    #[arg(long, value_name = "DIR")]
    pub replay: Option<PathBuf>,
    /// When recording, keep names, addresses, emails and phone numbers instead of placeholders.
    #[arg(long, requires = "record")]
    pub keep_customer_data: bool,
    /// When recording, bodies longer than this many bytes are kept as their size and SHA-256 only: such
    /// a request still matches on replay, but such an answer cannot be replayed.
    #[arg(long, value_name = "BYTES", requires = "record", default_value_t = store_api_cassette::DEFAULT_MAX_KEPT_BODY)]
    pub max_kept_body: usize,
}

/// Options of `login`.
#[derive(Debug, Args)]
pub struct LoginArgs {
    /// Read the key from standard input (its first line) instead of --api-key: it then stays out of
    /// the shell's history and the process list (`store-api login --with-key < key.txt`).
    #[arg(long, conflicts_with = "from_emulator")]
    pub with_key: bool,
    /// Take the address, the store and its key from the running emulator at URL
    /// (http://127.0.0.1:PORT), from its GET /_emulator/stores: the store --store-id names, else its
    /// first active store.
    #[arg(long, value_name = "URL")]
    pub from_emulator: Option<String>,
    /// Make this profile the default one (`default_profile`) even when the file names another.
    #[arg(long)]
    pub default: bool,
}

/// Options of `api`.
#[derive(Debug, Args)]
pub struct ApiArgs {
    /// The HTTP method, for example GET or POST.
    pub method: String,
    /// The path, relative to the store (`/orders?limit=5`) or starting with the version prefix.
    pub path: String,
    /// The JSON body: inline JSON, `@FILE` to read a file, `-` (or `@-`) to read standard input.
    #[arg(long, short = 'd', value_name = "JSON|@FILE|-")]
    pub data: Option<String>,
    /// Add a request header, `Name: value` (repeatable). X-API-Key is refused: the key is the
    /// session's.
    #[arg(long = "header", short = 'H', value_name = "NAME: VALUE")]
    pub headers: Vec<String>,
    /// Print the answer's status line and headers (never the key) before its body, on stdout.
    #[arg(long, short = 'i')]
    pub include: bool,
    /// GET a list path page after page (its `page` parameter, keeping the rest of the query) and
    /// print every item in the lists' JSON form: `{"items": [...], "totalItems": N}`.
    #[arg(long)]
    pub paginate: bool,
}

/// `catalog` subcommands.
#[derive(Debug, Subcommand)]
pub enum CatalogCommand {
    /// List blanks (GET /catalog-products).
    List(CatalogListArgs),
    /// Show one blank with its print locations and variants.
    Get {
        /// The catalog product id, for example cp_bc3001.
        id: String,
    },
}

/// Filters of `catalog list`.
#[derive(Debug, Args)]
pub struct CatalogListArgs {
    /// Only blanks of these product types (comma-separated or repeated), for example t-shirt,hoodie.
    #[arg(long, value_delimiter = ',')]
    pub product_type: Vec<String>,
    /// Only blanks supporting any of these decoration methods somewhere (comma-separated or repeated).
    #[arg(long, value_delimiter = ',', value_parser = known(DecorationMethod::KNOWN, DecorationMethod::as_str))]
    pub method: Vec<String>,
    /// Which page to show.
    #[command(flatten)]
    pub paging: PagingArgs,
}

/// `products` subcommands.
#[derive(Debug, Subcommand)]
pub enum ProductsCommand {
    /// List products of every status (GET /products).
    List(ProductsListArgs),
    /// Show one product with its variants, SKUs, prices and costs.
    Get {
        /// The product id, for example prod_alpha_sunset_tee.
        id: String,
    },
}

/// Filters of `products list`.
#[derive(Debug, Args)]
pub struct ProductsListArgs {
    /// Only products with any of these statuses (comma-separated or repeated).
    #[arg(long, value_delimiter = ',', value_parser = known(ProductStatus::KNOWN, ProductStatus::as_str))]
    pub status: Vec<String>,
    /// Which page to show.
    #[command(flatten)]
    pub paging: PagingArgs,
}

/// `artworks` subcommands.
#[derive(Debug, Subcommand)]
pub enum ArtworksCommand {
    /// Upload an artwork: the service downloads the image (PNG or JPEG, HTTPS, public host) and keeps
    /// its own copy. Not idempotent: running it twice makes two artworks.
    Create {
        /// Name of the artwork (names are not unique).
        #[arg(long)]
        name: String,
        /// HTTPS address of the image.
        #[arg(long)]
        url: String,
    },
    /// List artworks (GET /artworks).
    List {
        /// Which page to show.
        #[command(flatten)]
        paging: PagingArgs,
    },
    /// Show one artwork.
    Get {
        /// The artwork id.
        id: String,
    },
}

/// `orders` subcommands.
#[derive(Debug, Subcommand)]
pub enum OrdersCommand {
    /// Place an order exactly once: a rerun of the same command never bills a second order.
    ///
    /// The order is sent under its externalOrderId and retried with that same id. A file without one
    /// gets a new one, written into the file before anything is sent, so running the same command
    /// again (a script retrying after a timeout) answers with the existing order. Pass --no-write for
    /// a file that must not be rewritten (read-only, generated, under version control): the generated
    /// id is then kept for this run's retries only and printed on stderr with the command that
    /// retries with it (`--external-id ID`); a rerun without that id could bill a second order. An
    /// order on standard input (`--file -`) needs an externalOrderId, --external-id or --no-write.
    ///
    /// The pre-flight check comes first: every problem with its field path, and nothing sent or
    /// written when there is one (--dry-run runs the check alone). If the file cannot be written,
    /// nothing is sent. An externalOrderId already used by a different order is an error that names
    /// the differences; nothing new is billed.
    ///
    /// A run that writes the file holds a lock on it (`.FILE.lock` beside it) from its read to the end
    /// of its submission: a second run of the same file waits for it, then reads the id the first one
    /// wrote and answers with that order. The rewritten file keeps its mode (and owner where allowed);
    /// a symbolic link stays a link and its target gets the id.
    Submit(SubmitArgs),
    /// Deprecated (removed in 0.4.0): runs `orders submit --no-write` with the same flags.
    ///
    /// Prints a note saying so on stderr. Under --json it still prints the order alone, as it did;
    /// `orders submit` prints the submission (`.order` is the order).
    #[command(hide = true)]
    Create(CreateArgs),
    /// List orders, newest first (GET /orders).
    List(OrdersListArgs),
    /// Show one order with its line items, costs and tracking.
    Get {
        /// The order id.
        id: String,
    },
    /// Find the order with an external order id (your own order number).
    Find {
        /// The externalOrderId to look up (exact match).
        #[arg(long)]
        external_id: String,
    },
    /// Poll an order and show its way up the fulfillment ladder until fulfilled or canceled.
    Watch(WatchArgs),
    /// Print the JSON Schema of a create-order request (the file of `orders submit`), for an
    /// editor to check and complete order files as they are typed. Needs no credentials.
    Schema,
}

/// Options of `orders submit`.
#[derive(Debug, Args)]
pub struct SubmitArgs {
    /// The create-order request as JSON (lineItems, shippingAddress, optional externalOrderId); `-`
    /// reads standard input.
    #[arg(long, value_name = "FILE")]
    pub file: PathBuf,
    /// Use this externalOrderId (your own order number) instead of the file's; the file is then
    /// never written.
    #[arg(long)]
    pub external_id: Option<String>,
    /// Only run the pre-flight check: send nothing, write nothing.
    #[arg(long, conflicts_with = "no_preflight")]
    pub dry_run: bool,
    /// Never write into the file: an id generated for a file without one is kept for this run's
    /// retries only and printed on stderr with the command that retries with it.
    #[arg(long)]
    pub no_write: bool,
    /// How long to wait for another run that holds the file's lock before giving up with nothing
    /// sent (exit code 4). The default outlasts one submission (its retries take up to 5 minutes).
    #[arg(long, value_name = "SECONDS", default_value_t = DEFAULT_LOCK_TIMEOUT_SECONDS)]
    pub lock_timeout: u64,
    /// Skip the local pre-flight check (and the first read of the store it needs): the service
    /// validates the order and refuses a bad one with its 400, nothing billed.
    #[arg(long)]
    pub no_preflight: bool,
}

/// Options of the deprecated `orders create`: the flags it had, all of which `orders submit` takes.
#[derive(Debug, Args)]
pub struct CreateArgs {
    /// The create-order request as JSON; `-` reads standard input.
    #[arg(long, value_name = "FILE")]
    pub file: PathBuf,
    /// Only run the pre-flight check; send nothing.
    #[arg(long, conflicts_with = "no_preflight")]
    pub dry_run: bool,
    /// Skip the local pre-flight check.
    #[arg(long)]
    pub no_preflight: bool,
}

impl From<CreateArgs> for SubmitArgs {
    /// `orders submit --no-write` with the deprecated command's flags.
    fn from(create: CreateArgs) -> SubmitArgs {
        SubmitArgs {
            file: create.file,
            external_id: None,
            dry_run: create.dry_run,
            no_write: true,
            lock_timeout: DEFAULT_LOCK_TIMEOUT_SECONDS,
            no_preflight: create.no_preflight,
        }
    }
}

/// Filters of `orders list`.
#[derive(Debug, Args)]
pub struct OrdersListArgs {
    /// Only orders with any of these statuses (comma-separated or repeated).
    #[arg(long, value_delimiter = ',', value_parser = known(OrderStatus::KNOWN, OrderStatus::as_str))]
    pub status: Vec<String>,
    /// Only orders at any of these fulfillment stages (comma-separated or repeated).
    #[arg(long, value_delimiter = ',', value_parser = known(FulfillmentStatus::KNOWN, FulfillmentStatus::as_str))]
    pub fulfillment_status: Vec<String>,
    /// Only orders with any of these payment statuses (comma-separated or repeated).
    #[arg(long, value_delimiter = ',', value_parser = known(PaymentStatus::KNOWN, PaymentStatus::as_str))]
    pub payment_status: Vec<String>,
    /// Only the order with this externalOrderId.
    #[arg(long)]
    pub external_id: Option<String>,
    /// Which page to show.
    #[command(flatten)]
    pub paging: PagingArgs,
}

/// Options of `orders watch`.
#[derive(Debug, Args)]
pub struct WatchArgs {
    /// The order id.
    pub id: String,
    /// Time between polls, in milliseconds (the client's rate limiter spaces requests further when
    /// needed).
    #[arg(long, value_name = "MS", default_value_t = 5000)]
    pub interval_ms: u64,
    /// Emulator only: move the order one rung up the ladder after each poll (through the embedded
    /// emulator, or the control endpoint of the emulator at --base-url), so the watch ends.
    #[arg(long)]
    pub advance: bool,
}

/// The one parser of every filter flag whose values are an enumeration of the spec (`x-filter-values`):
/// the values the generated open enum knows (`KNOWN`, in the spec's order). Any other value is refused
/// by clap with exit 2 and the known values listed, instead of a filter that matches nothing; --help
/// and the shell completions offer them. A value the service adds within the version needs a newer
/// CLI here (`api` sends any filter as written).
fn known<E>(
    values: &'static [E],
    name: fn(&'static E) -> &'static str,
) -> clap::builder::PossibleValuesParser {
    clap::builder::PossibleValuesParser::new(values.iter().map(name))
}

/// Page options of list commands.
#[derive(Debug, Clone, Copy, Args)]
pub struct PagingArgs {
    /// Page number, from 1.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..), conflicts_with = "all")]
    pub page: Option<u64>,
    /// Page size, 1 to 100 (the service's default is 50; --all uses 100).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=store_api::MAX_PAGE_SIZE))]
    pub limit: Option<u64>,
    /// Fetch every page (streamed, with a progress spinner on a terminal).
    #[arg(long)]
    pub all: bool,
}

/// `webhooks` subcommands.
#[derive(Debug, Subcommand)]
pub enum WebhooksCommand {
    /// Check a delivery's X-Service-Signature against the exact body, then print the parsed event.
    Verify {
        /// The X-Service-Signature header value.
        #[arg(long)]
        signature: String,
        /// The raw request body, byte for byte as received; `-` reads standard input.
        #[arg(long, value_name = "FILE")]
        file: PathBuf,
        /// The store's API key the delivery was signed with (default: --api-key / STORE_API_KEY). An
        /// empty key is refused: anyone can sign with it.
        #[arg(long)]
        key: Option<Secret>,
    },
    /// Print the JSON Schema of a webhook event (a delivery's body).
    Schema,
    /// Receive deliveries on this machine, verified and passed on, as `stripe listen` does.
    ///
    /// Each delivery is verified with the store's key and printed as one line on stdout: topic,
    /// event id, resource, verdict (verified, bad signature, refused) and, with --forward-to, the
    /// receiver's status (the sender gets it too); --json prints one object per line instead.
    ///
    /// Against the emulator (its /_emulator control plane answers at --base-url) the listener
    /// registers itself for the store's topics (--store-id) and verifies with the key the emulator
    /// holds; Ctrl-C or SIGTERM removes the registration and puts back what it displaced. Against
    /// the real service, where webhooks are registered in the app, it says what to register (a
    /// public URL that reaches --listen) and verifies with --api-key.
    Listen(ListenArgs),
}

/// Options of `webhooks listen`.
#[derive(Debug, Args)]
pub struct ListenArgs {
    /// Pass each verified delivery on to this URL (your receiver) with its original headers and body,
    /// and answer the sender with its status; a forged delivery is never passed on.
    #[arg(long, value_name = "URL", value_parser = parse_http_url)]
    pub forward_to: Option<reqwest::Url>,
    /// Only these topics (comma-separated or repeated; default: every topic).
    #[arg(
        long,
        value_name = "TOPIC",
        value_delimiter = ',',
        value_parser = clap::builder::PossibleValuesParser::new(
            store_api_webhooks::Topic::KNOWN.iter().map(store_api_webhooks::Topic::as_str)
        ),
    )]
    pub topics: Vec<String>,
    /// Address to listen on. Default: a free loopback port against the emulator (it is told which);
    /// 127.0.0.1:8765 against the real service, so a tunnel's target stays the same.
    #[arg(long, value_name = "ADDR")]
    pub listen: Option<std::net::SocketAddr>,
}

/// An absolute http(s) URL.
fn parse_http_url(text: &str) -> Result<reqwest::Url, String> {
    reqwest::Url::parse(text)
        .ok()
        .filter(|url| matches!(url.scheme(), "http" | "https") && url.has_host())
        .ok_or_else(|| format!("{text:?} is not an absolute http or https URL"))
}

/// Options of `emulator`: the same as `store-api-emulator`'s, defined once in the emulator crate; or
/// `emulator trigger`, which drives an emulator already running at --base-url.
#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct EmulatorArgs {
    /// Drive a running emulator instead of starting one.
    #[command(subcommand)]
    pub action: Option<EmulatorAction>,
    #[command(flatten)]
    pub serve: store_api_fixtures::ServeArgs,
}

/// `emulator` subcommands.
#[derive(Debug, Subcommand)]
pub enum EmulatorAction {
    /// Make the emulator at --base-url (store --store-id) emit a webhook topic by doing what causes it
    /// in the app or at the provider: orders_create (--file, a create-order request), orders_update
    /// (--order: one rung up the fulfillment ladder), products_create (--file, a product),
    /// products_update (--product and --file), products_delete (--product).
    Trigger(TriggerArgs),
}

/// Options of `emulator trigger`.
#[derive(Debug, Args)]
pub struct TriggerArgs {
    /// The webhook topic to cause.
    #[arg(value_enum)]
    pub topic: TriggerTopic,
    /// The order (orders_update).
    #[arg(long)]
    pub order: Option<String>,
    /// The product (products_update, products_delete).
    #[arg(long)]
    pub product: Option<String>,
    /// The JSON body (orders_create, products_create, products_update); `-` reads standard input.
    #[arg(long, value_name = "FILE")]
    pub file: Option<PathBuf>,
}

/// The topics `emulator trigger` can cause.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
#[value(rename_all = "snake_case")]
pub enum TriggerTopic {
    /// An order created in the app.
    OrdersCreate,
    /// An order moved one rung up the fulfillment ladder.
    OrdersUpdate,
    /// A product created in the app.
    ProductsCreate,
    /// A product replaced in the app.
    ProductsUpdate,
    /// A product deleted in the app.
    ProductsDelete,
}

/// `placement` subcommands.
#[derive(Debug, Subcommand)]
pub enum PlacementCommand {
    /// The largest placement of an image in a location's print area that keeps its aspect ratio.
    Fit(FitArgs),
}

/// Options of `placement fit`.
#[derive(Debug, Args)]
pub struct FitArgs {
    /// The blank (catalog product id), for example cp_bc3001.
    #[arg(long)]
    pub catalog_product: String,
    /// The decoration location, for example front.
    #[arg(long)]
    pub location: String,
    /// The image's size in pixels, WIDTHxHEIGHT, for example 3000x2400.
    #[arg(long, value_name = "WxH", value_parser = parse_pixels)]
    pub image_px: (u32, u32),
    /// Where the design sits when it does not fill the area.
    #[arg(long, value_enum, default_value_t = AlignArg::Top)]
    pub align: AlignArg,
}

/// `--align` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum AlignArg {
    /// Centered horizontally, against the top edge (the usual placement on a shirt front).
    Top,
    /// Centered both ways.
    Center,
}

/// Options of `completions`.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to write the script for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// Parses `3000x2400` into two positive pixel counts.
fn parse_pixels(text: &str) -> Result<(u32, u32), String> {
    let (width, height) = text
        .split_once(['x', 'X'])
        .ok_or_else(|| format!("expected WIDTHxHEIGHT in pixels, like 3000x2400, not {text:?}"))?;
    let parse = |part: &str, what: &str| -> Result<u32, String> {
        match part.trim().parse::<u32>() {
            Ok(0) | Err(_) => Err(format!(
                "the {what} must be a whole number of pixels above 0"
            )),
            Ok(value) => Ok(value),
        }
    };
    Ok((parse(width, "width")?, parse(height, "height")?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_command_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn pixel_sizes_parse() {
        let cases: &[(&str, Option<(u32, u32)>)] = &[
            ("3000x2400", Some((3000, 2400))),
            ("12X16", Some((12, 16))),
            ("0x10", None),
            ("10", None),
            ("ax2", None),
            ("-1x2", None),
        ];
        for (text, expected) in cases {
            assert_eq!(parse_pixels(text).ok(), *expected, "{text}");
        }
    }
}

#[cfg(test)]
mod secret_tests {
    use clap::Parser;

    use super::Cli;

    // Issue 10: the parsed arguments never print the key in Debug.
    #[test]
    fn the_parsed_arguments_never_print_a_key() {
        let key = "csk_0123456789abcdef0123456789abcdef";
        let cli = Cli::try_parse_from([
            "store-api",
            "--api-key",
            key,
            "webhooks",
            "verify",
            "--signature",
            "00",
            "--file",
            "body.json",
            "--key",
            key,
        ])
        .unwrap();
        let printed = format!("{cli:?}");
        assert!(!printed.contains("0123456789abcdef"), "{printed}");
    }
}
