//! One simulated world: an emulator, a client on the simulated network, and the scenarios run in it
//! with the invariants each must keep.

use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use futures::{FutureExt as _, StreamExt as _};
use store_api::model::Order;
use store_api::{
    AttemptResult, Client, Error, Jitter, Limiter, LimiterFuture, ListOrdersQuery, Page,
    RetryPolicy, Submission, Submitted,
};
use store_api_fixtures::Emulator;
use tokio::time::Instant;

use super::network::{HOME, SimNetwork, Tape};
use crate::{ALPHA, key_of, tee_submission};

/// How many submissions one emulator takes before a fresh one replaces it (its orders are kept in
/// memory; a fresh one keeps a long exploration's memory flat).
const SUBMISSIONS_PER_EMULATOR: u64 = 20_000;
/// The orders the read scenarios read, and the page size they read them with.
const READ_ORDERS: usize = 5;
const READ_PAGE: u64 = 2;

/// A scenario of the model: one call of the client's, run under a schedule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scenario {
    /// `Orders::submit` of a new order (the money path).
    Submit,
    /// `Orders::get` of an existing order.
    Get,
    /// `Orders::pages` of every order, two per page.
    Pages,
    /// `Orders::stream` of every order, two per page.
    Stream,
}

impl Scenario {
    /// Every scenario.
    pub const ALL: [Scenario; 4] = [
        Scenario::Submit,
        Scenario::Get,
        Scenario::Pages,
        Scenario::Stream,
    ];
    /// The scenarios that only read.
    pub const READS: [Scenario; 3] = [Scenario::Get, Scenario::Pages, Scenario::Stream];

    /// Its name, in reports and replays.
    pub fn name(self) -> &'static str {
        match self {
            Scenario::Submit => "submit",
            Scenario::Get => "get",
            Scenario::Pages => "pages",
            Scenario::Stream => "stream",
        }
    }

    /// The scenario named `name`.
    pub fn named(name: &str) -> Option<Scenario> {
        Scenario::ALL.into_iter().find(|s| s.name() == name)
    }

    /// The invariants its runs check: an exploration of it that never checked one of them (never
    /// billed an order, say) has shown nothing about that one.
    pub fn invariants(self) -> &'static [Invariant] {
        match self {
            Scenario::Submit => &[
                Invariant::OneOrderBilled,
                Invariant::BilledIsReported,
                Invariant::UnbilledIsNeverOk,
                Invariant::KeyStaysHome,
                Invariant::AttemptsAreThePostsSent,
                Invariant::NoPanic,
                Invariant::WithinBudget,
            ],
            _ => &[
                Invariant::KeyStaysHome,
                Invariant::NoPanic,
                Invariant::WithinBudget,
                Invariant::ReadsAreGenuine,
            ],
        }
    }
}

/// A property every run must keep.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Invariant {
    /// At most one order is billed for an external id.
    OneOrderBilled,
    /// A billed order is reported: `Ok(Created | AlreadyExisted)` of that very order, or an error that
    /// says it may have been processed.
    BilledIsReported,
    /// An order not billed is never reported as `Ok`.
    UnbilledIsNeverOk,
    /// The API key is never sent to another origin than the base URL's.
    KeyStaysHome,
    /// `Submission::attempts` lists exactly the `POST`s that were sent.
    AttemptsAreThePostsSent,
    /// No panic.
    NoPanic,
    /// The call ends within its configured budget of (simulated) time, and reads no more of an answer
    /// than its size limit.
    WithinBudget,
    /// What a read returns is what the service holds: never an intermediary's answer decoded into a
    /// resource, never an item twice.
    ReadsAreGenuine,
}

impl Invariant {
    /// The invariants every run judges, whatever the call answered: a run whose verdict lacks one
    /// did not end as a run must (it is not counted as run).
    pub const EVERY_RUN: [Invariant; 3] = [
        Invariant::KeyStaysHome,
        Invariant::NoPanic,
        Invariant::WithinBudget,
    ];

    /// Every invariant, in report order.
    pub const ALL: [Invariant; 8] = [
        Invariant::OneOrderBilled,
        Invariant::BilledIsReported,
        Invariant::UnbilledIsNeverOk,
        Invariant::KeyStaysHome,
        Invariant::AttemptsAreThePostsSent,
        Invariant::NoPanic,
        Invariant::WithinBudget,
        Invariant::ReadsAreGenuine,
    ];

    /// Its name, in reports and figures.
    pub fn name(self) -> &'static str {
        match self {
            Invariant::OneOrderBilled => "one_order_billed",
            Invariant::BilledIsReported => "billed_is_reported",
            Invariant::UnbilledIsNeverOk => "unbilled_is_never_ok",
            Invariant::KeyStaysHome => "key_stays_home",
            Invariant::AttemptsAreThePostsSent => "attempts_are_the_posts_sent",
            Invariant::NoPanic => "no_panic",
            Invariant::WithinBudget => "within_budget",
            Invariant::ReadsAreGenuine => "reads_are_genuine",
        }
    }
}

/// What one run kept and broke.
#[derive(Debug, Default)]
pub struct Verdict {
    /// The invariants checked in the run, each once: `None` when it held, else what first broke it.
    pub checks: BTreeMap<Invariant, Option<String>>,
}

impl Verdict {
    /// Records a check of `invariant`; the run breaks it if any of its checks failed.
    fn check(&mut self, invariant: Invariant, held: bool, why: impl FnOnce() -> String) {
        let first = self.checks.entry(invariant).or_default();
        if first.is_none() && !held {
            *first = Some(why());
        }
    }

    /// The broken invariants, with what broke each.
    pub fn violations(&self) -> impl Iterator<Item = (Invariant, &str)> {
        self.checks
            .iter()
            .filter_map(|(invariant, why)| why.as_deref().map(|why| (*invariant, why)))
    }
}

/// A limiter that honours pauses in (simulated) tokio time and has no bucket of its own: the
/// emulator's limit is off, and what is modelled is the service's or an intermediary's 429.
#[derive(Debug, Default)]
struct PauseOnly {
    until: Mutex<Option<Instant>>,
}

impl PauseOnly {
    fn reset(&self) {
        *self.until.lock().unwrap_or_else(PoisonError::into_inner) = None;
    }
}

impl Limiter for PauseOnly {
    fn acquire(&self) -> LimiterFuture<'_> {
        let until = *self.until.lock().unwrap_or_else(PoisonError::into_inner);
        Box::pin(async move {
            if let Some(until) = until {
                tokio::time::sleep_until(until).await;
            }
        })
    }

    fn pause_for(&self, duration: Duration) -> LimiterFuture<'_> {
        let end = Instant::now().checked_add(duration);
        let mut until = self.until.lock().unwrap_or_else(PoisonError::into_inner);
        *until = (*until).max(end);
        Box::pin(std::future::ready(()))
    }

    fn observe_remaining(&self, _: u64) -> LimiterFuture<'_> {
        Box::pin(std::future::ready(()))
    }
}

/// An emulator, a client on the simulated network to it, and what the scenarios need.
#[derive(Debug)]
pub struct World {
    network: Arc<SimNetwork>,
    limiter: Arc<PauseOnly>,
    client: Client,
    /// Names the external ids of this world's submissions.
    tag: String,
    submissions: u64,
    /// The orders the read scenarios read, by id.
    orders: HashMap<String, Order>,
    /// Those ids in the list's default order (newest first).
    listed: Vec<String>,
    /// The submit policy's and the read policy's budget, and one attempt's timeout.
    submit_policy: RetryPolicy,
    read_policy: RetryPolicy,
    timeout: Duration,
}

impl World {
    /// A world with a fresh emulator; `tag` keeps its external ids apart from other worlds'.
    pub async fn new(tag: &str) -> World {
        let emulator = Arc::new(start_emulator().await);
        let network = Arc::new(SimNetwork::new(emulator.clone()));
        let limiter = Arc::new(PauseOnly::default());
        let timeout = store_api::DEFAULT_TIMEOUT;
        // The defaults, with a fixed jitter (the largest wait) so a replay waits as the run did.
        let submit_policy = RetryPolicy::submit().with_jitter(Jitter::Fixed(1.0));
        let read_policy = RetryPolicy::default().with_jitter(Jitter::Fixed(1.0));
        let client = Client::builder()
            .base_url(HOME)
            // A simulated network: nothing leaves the process, and `HOME` names no real host.
            .allow_insecure_http(true)
            .store_id(ALPHA)
            .api_key(key_of(&emulator, ALPHA))
            .network(network.clone())
            .limiter(limiter.clone())
            .submit_retry_policy(submit_policy)
            .retry_policy(read_policy)
            .timeout(timeout)
            // The catalog and products pre-flight reads are fetched once per world, undisturbed: the
            // model is about the order's exchanges.
            .cache_ttl(Duration::from_secs(10 * 365 * 86_400))
            // Lower than the default, so an endless body costs the exploration 1 MiB, not 8.
            .max_response_bytes(1 << 20)
            .build()
            .expect("valid settings");
        let mut world = World {
            network,
            limiter,
            client,
            tag: tag.to_owned(),
            submissions: 0,
            orders: HashMap::new(),
            listed: Vec::new(),
            submit_policy,
            read_policy,
            timeout,
        };
        world.place_read_orders().await;
        world
    }

    /// Orders for the read scenarios, placed undisturbed.
    async fn place_read_orders(&mut self) {
        for n in 0..READ_ORDERS {
            let id = format!("{}-read-{n}", self.tag);
            self.client
                .orders()
                .submit(&tee_submission(&id))
                .await
                .expect("an undisturbed submission");
        }
        let all = self
            .client
            .orders()
            .list(&ListOrdersQuery::new().limit(100))
            .await
            .expect("an undisturbed list");
        self.listed = all.items.iter().map(|o| o.id.clone()).collect();
        self.orders = all.items.into_iter().map(|o| (o.id.clone(), o)).collect();
    }

    /// Runs `scenario` once on `tape`; returns what each invariant said and the tape as it was run.
    pub async fn run(&mut self, scenario: Scenario, tape: Tape) -> (Verdict, Tape) {
        self.limiter.reset();
        self.network.load(tape);
        let verdict = match scenario {
            Scenario::Submit => self.submit().await,
            Scenario::Get => self.get().await,
            Scenario::Pages => self.pages().await,
            Scenario::Stream => self.stream().await,
        };
        let mut verdict = verdict;
        let tape = self.network.load(Tape::default());
        verdict.check(Invariant::KeyStaysHome, tape.leaks.is_empty(), || {
            format!("the key went to {:?}", tape.leaks)
        });
        verdict.check(Invariant::WithinBudget, !tape.overread, || {
            format!(
                "the client read {} MiB of an endless body",
                super::network::OVERREAD >> 20
            )
        });
        (verdict, tape)
    }

    async fn submit(&mut self) -> Verdict {
        self.submissions += 1;
        if self.submissions.is_multiple_of(SUBMISSIONS_PER_EMULATOR) {
            self.network
                .replace_emulator(Arc::new(start_emulator().await));
        }
        let external_id = format!("{}-{}", self.tag, self.submissions);
        let order = tee_submission(&external_id);
        let client = self.client.clone();
        let budget = self.submit_policy.max_elapsed
            + self.read_policy.max_elapsed
            + (self.timeout + store_api::DEFAULT_MAX_RATE_LIMIT_PAUSE) * 2;
        let mut verdict = Verdict::default();
        let Some(result) = watch(&mut verdict, "submit", budget, async move {
            client.orders().submit(&order).await
        })
        .await
        else {
            return verdict;
        };
        let held = self.held(&external_id).await;
        verdict.check(Invariant::OneOrderBilled, held.len() <= 1, || {
            format!("{} orders billed for one external id", held.len())
        });
        match held.first() {
            Some(billed) => {
                let reported = match &result {
                    Ok(submission) => submission.order().id == billed.id,
                    Err(error) => error.may_have_been_processed(),
                };
                verdict.check(Invariant::BilledIsReported, reported, || {
                    format!(
                        "order {} was billed, and submit said {}",
                        billed.id,
                        said(&result)
                    )
                });
            }
            None => verdict.check(Invariant::UnbilledIsNeverOk, result.is_err(), || {
                format!("nothing was billed, and submit said {}", said(&result))
            }),
        }
        if let Ok(submission) = &result {
            let listed = submission
                .attempts
                .iter()
                .filter(|attempt| attempt.result != AttemptResult::NotSent)
                .count();
            let sent = self.network.tape().posts();
            verdict.check(Invariant::AttemptsAreThePostsSent, listed == sent, || {
                format!("{sent} POSTs were sent and the submission lists {listed}")
            });
        }
        verdict
    }

    async fn get(&mut self) -> Verdict {
        let id = self.listed.first().cloned().unwrap_or_default();
        let client = self.client.clone();
        let wanted = id.clone();
        let mut verdict = Verdict::default();
        let budget = self.read_budget(1);
        let returned = watch(&mut verdict, "get", budget, async move {
            client.orders().get(&wanted).await
        })
        .await;
        if let Some(Ok(order)) = &returned {
            let genuine = self.orders.get(&id) == Some(order);
            verdict.check(Invariant::ReadsAreGenuine, genuine, || {
                format!(
                    "get({id}) returned {:?}, not the order the service holds",
                    order.id
                )
            });
        }
        verdict
    }

    async fn pages(&mut self) -> Verdict {
        let client = self.client.clone();
        let mut verdict = Verdict::default();
        let budget = self.read_budget(self.page_count());
        let returned = watch(&mut verdict, "pages", budget, async move {
            client
                .orders()
                .pages(&ListOrdersQuery::new().limit(READ_PAGE))
                .collect::<Vec<Result<Page<Order>, Error>>>()
                .await
        })
        .await;
        if let Some(pages) = &returned {
            let items: Vec<&Order> = pages.iter().flatten().flat_map(|p| &p.items).collect();
            let complete = pages.iter().all(Result::is_ok);
            self.check_items(&mut verdict, items, complete);
        }
        verdict
    }

    async fn stream(&mut self) -> Verdict {
        let client = self.client.clone();
        let mut verdict = Verdict::default();
        let budget = self.read_budget(self.page_count());
        let returned = watch(&mut verdict, "stream", budget, async move {
            client
                .orders()
                .stream(&ListOrdersQuery::new().limit(READ_PAGE))
                .collect::<Vec<Result<Order, Error>>>()
                .await
        })
        .await;
        if let Some(items) = &returned {
            let complete = items.iter().all(Result::is_ok);
            self.check_items(&mut verdict, items.iter().flatten().collect(), complete);
        }
        verdict
    }

    /// A walk of every page reads this many pages (the last one may come back empty).
    fn page_count(&self) -> u32 {
        u32::try_from(self.listed.len().div_ceil(READ_PAGE as usize) + 1).unwrap_or(u32::MAX)
    }

    /// What `calls` read calls may take: each its read policy's time and one more attempt (the longest
    /// pause of the limiter, and a timeout).
    fn read_budget(&self, calls: u32) -> Duration {
        (self.read_policy.max_elapsed + store_api::DEFAULT_MAX_RATE_LIMIT_PAUSE + self.timeout)
            * calls
    }

    /// Every item is an order the service holds, none twice; a walk that ended without an error read
    /// them all, in the list's order.
    fn check_items(&self, verdict: &mut Verdict, items: Vec<&Order>, complete: bool) {
        let ids: Vec<String> = items.iter().map(|o| o.id.clone()).collect();
        let genuine = items.iter().all(|o| self.orders.get(&o.id) == Some(*o));
        let unique = ids.iter().collect::<std::collections::HashSet<_>>().len() == ids.len();
        let whole = !complete || ids == self.listed;
        verdict.check(
            Invariant::ReadsAreGenuine,
            genuine && unique && whole,
            || {
                format!(
                    "read {ids:?} (complete: {complete}); the service holds {:?}",
                    self.listed
                )
            },
        );
    }

    /// The orders the emulator holds under `external_id`, asked in process (not through the model).
    async fn held(&self, external_id: &str) -> Vec<Order> {
        let emulator = self.network.emulator();
        let key = key_of(&emulator, ALPHA);
        let target = format!(
            "{}/stores/{ALPHA}/orders?filter[externalOrderId]={external_id}&limit=100",
            store_api_fixtures::API_PREFIX
        );
        let mut request = http::Request::new(bytes::Bytes::new());
        *request.uri_mut() = target.parse().expect("a valid target");
        request
            .headers_mut()
            .insert("x-api-key", key.parse().expect("a valid key"));
        let answer = emulator.answer(request).await;
        let mut list: serde_json::Value =
            serde_json::from_slice(answer.body()).expect("the emulator's order list");
        // An empty list omits its items, as every empty field.
        match list.get_mut("items") {
            Some(items) => serde_json::from_value(items.take())
                .unwrap_or_else(|e| panic!("the emulator's orders: {e}: {list}")),
            None => Vec::new(),
        }
    }
}

/// Runs `call` and checks it returned, without a panic, within `budget`; its value when it returned.
/// A call still running at twice its budget is cut off and reported, so a loop that never ends shows as
/// a violation instead of a test that never ends.
async fn watch<T>(
    verdict: &mut Verdict,
    what: &str,
    budget: Duration,
    call: impl Future<Output = T>,
) -> Option<T> {
    let started = Instant::now();
    let ended = tokio::time::timeout(
        budget * 2,
        std::panic::AssertUnwindSafe(call).catch_unwind(),
    )
    .await;
    let elapsed = started.elapsed();
    verdict.check(Invariant::NoPanic, !matches!(ended, Ok(Err(_))), || {
        format!("{what} panicked")
    });
    verdict.check(
        Invariant::WithinBudget,
        ended.is_ok() && elapsed <= budget,
        || {
            if ended.is_ok() {
                format!("{what} took {elapsed:?}, over its budget of {budget:?}")
            } else {
                format!("{what} had not ended after {elapsed:?} (its budget is {budget:?})")
            }
        },
    );
    ended.ok()?.ok()
}

/// An emulator for the model: deterministic, no rate limit (429s are the schedule's), no downloads.
async fn start_emulator() -> Emulator {
    Emulator::builder()
        .deterministic(22)
        .rate_limit(false)
        .network_downloads(false)
        .start()
        .await
        .expect("the emulator starts")
}

fn said(result: &Result<Submission, Error>) -> String {
    match result {
        Ok(submission) => {
            let how = match submission.submitted {
                Submitted::Created(_) => "Created",
                Submitted::AlreadyExisted(_) => "AlreadyExisted",
                _ => "Ok",
            };
            format!("{how}({})", submission.order().id)
        }
        Err(error) => format!(
            "Err({error}) with may_have_been_processed() == {}",
            error.may_have_been_processed()
        ),
    }
}
