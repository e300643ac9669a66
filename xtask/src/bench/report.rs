//! The run as a terminal table and as `BENCHMARKS.md`.

use std::fmt::Write as _;

use super::figures::{self, Gate, Row, Verdict};
use super::machine::Load;
use super::metrics::Metrics;
use super::{Mode, Summary, prism};

/// The figures as a plain-text table for the terminal.
pub fn table(summary: &Summary) -> String {
    let header = ["figure", "target", "measured", "result", "gate"];
    let cells: Vec<[String; 5]> = summary
        .rows
        .iter()
        .map(|row| {
            [
                row.figure.label.to_owned(),
                row.figure.target.describe(row.figure.unit),
                measured(row),
                row.verdict.describe(),
                gate(row),
            ]
        })
        .collect();
    let mut widths = header.map(|h| h.chars().count());
    for row in &cells {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let line = |cells: [&str; 5]| {
        let mut text = String::new();
        for (cell, width) in cells.iter().zip(widths) {
            let pad = width.saturating_sub(cell.chars().count());
            let _ = write!(text, "{cell}{}  ", " ".repeat(pad));
        }
        text.trim_end().to_owned()
    };
    let mut out = format!(
        "\n{} on {} ({} cores, {}), {}\n\n",
        summary.mode.command(),
        summary.machine.date,
        summary.machine.cores,
        summary.machine.memory(),
        summary.machine.rustc
    );
    out.push_str(&line(header));
    out.push('\n');
    for row in &cells {
        out.push_str(&line([&row[0], &row[1], &row[2], &row[3], &row[4]]));
        out.push('\n');
    }
    let _ = write!(
        out,
        "\nbuild {:.0} s (not counted); measurements {:.0} s; {}",
        summary.build_time.as_secs_f64(),
        summary.measurement_time.as_secs_f64(),
        load(summary.load.as_ref())
    );
    for step in &summary.steps {
        let _ = write!(
            out,
            "\n  {:<28} {:>6.1} s  {}{}",
            step.run.measures,
            step.run.elapsed.as_secs_f64(),
            load(step.load.as_ref()),
            step.run
                .failure
                .as_ref()
                .map_or(String::new(), |f| format!("  FAILED: {f}"))
        );
    }
    // Repeated last: a log cut to its tail (a CI page) still names what failed.
    for row in summary.rows.iter().filter(|r| r.fails()) {
        let why = match &row.verdict {
            Verdict::NotMeasured(why) => format!(" ({why})"),
            _ => String::new(),
        };
        let _ = write!(
            out,
            "\nFAILS: {}: measured {}{why}, target {}, {}",
            row.figure.label,
            measured(row),
            row.figure.target.describe(row.figure.unit),
            gate(row)
        );
    }
    out
}

/// The machine's other load, as text.
fn load(load: Option<&Load>) -> String {
    load.map_or("load unknown".to_owned(), Load::describe)
}

fn measured(row: &Row) -> String {
    match (row.value, &row.verdict) {
        (Some(value), _) => row.figure.format(value),
        (None, Verdict::NotMeasured(why)) if why.contains("--quick") => {
            "(full run only)".to_owned()
        }
        (None, _) => "not measured".to_owned(),
    }
}

fn gate(row: &Row) -> String {
    if row.figure.target == super::figures::Target::None {
        "—".to_owned()
    } else {
        row.figure.gate.describe()
    }
}

/// `BENCHMARKS.md`.
pub fn markdown(summary: &Summary, metrics: &Metrics) -> String {
    let machine = &summary.machine;
    let mut out = String::new();
    out.push_str("# Benchmarks\n\n");
    let _ = writeln!(
        out,
        "Written by `{}` from the run below; run it again to refresh this file (do not edit by hand). \
         {}\n",
        summary.mode.command(),
        match summary.mode {
            Mode::Full => "This is a full run.",
            Mode::Quick => {
                "This is a **quick run** (`--quick`: reduced sizes, no build-cost builds); run \
                 `cargo xtask bench` for the full figures."
            }
        }
    );
    out.push_str("| | |\n|---|---|\n");
    let _ = writeln!(out, "| date | {} |", machine.date);
    let _ = writeln!(out, "| command | `{}` |", summary.mode.command());
    let _ = writeln!(out, "| CPU | {} × {} |", machine.cores, machine.cpu);
    let _ = writeln!(out, "| memory | {} |", machine.memory());
    let _ = writeln!(out, "| rustc | {} |", machine.rustc);
    let _ = writeln!(
        out,
        "| build of the benches | {:.0} s (`cargo bench --no-run`, and `--profile dev` for the start bench, at the start of this run, not counted below; near 0 when they were already built) |",
        summary.build_time.as_secs_f64()
    );
    let _ = writeln!(
        out,
        "| measurements | {:.0} s |",
        summary.measurement_time.as_secs_f64()
    );
    let _ = writeln!(
        out,
        "| machine load during the measurements | {} of all CPU time |",
        load(summary.load.as_ref())
    );
    out.push_str(
        "\nThe machine is shared: other builds and tests may run during a measurement, and as a VM it loses CPU \
         time to the hypervisor. \"Other processes\" is the CPU time used by processes other than this \
         command and what it ran, \"CPU steal\" the time the hypervisor took, both as shares of all CPU \
         time (from /proc/stat and /proc/self/stat), for the whole run above and per step below. Ratios are \
         measured side by side inside one process, so both sides see the same load; absolute rates and \
         latencies do not, which is why their gates are \"report only\" (see [Gates](#gates-when-the-command-fails)).\n",
    );

    out.push_str(
        "\n## Results\n\n| figure | target | measured | result | gate |\n|---|---|---|---|---|\n",
    );
    for row in &summary.rows {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} |",
            row.figure.label,
            row.figure.target.describe(row.figure.unit),
            measured(row),
            bold_verdict(&row.verdict),
            gate(row)
        );
    }

    let misses: Vec<&Row> = summary
        .rows
        .iter()
        .filter(|r| matches!(r.verdict, Verdict::Miss { .. }))
        .collect();
    out.push_str("\n## Misses\n\n");
    if misses.is_empty() {
        out.push_str("None: every figure with a target met it.\n");
    }
    for row in misses {
        let Some(value) = row.value else { continue };
        let consequence = match (&row.verdict, row.figure.gate) {
            (Verdict::Miss { fails: true }, _) => "This miss fails the command.",
            (_, Gate::Margin(_)) => "Within the noise margin: reported, does not fail the command.",
            _ => "Report only: does not fail the command.",
        };
        let cause = if row.figure.known_cause.is_empty() {
            "No cause established: rerun to see whether it is noise of the shared machine."
        } else {
            row.figure.known_cause
        };
        let _ = writeln!(
            out,
            "- **{}**: measured {}, target {}: {}. {consequence}\n  Cause: {cause}",
            row.figure.label,
            row.figure.format(value),
            row.figure.target.describe(row.figure.unit),
            row.figure.target.gap(value, row.figure.unit),
        );
    }
    let unmeasured: Vec<&Row> = summary
        .rows
        .iter()
        .filter(|r| matches!(&r.verdict, Verdict::NotMeasured(why) if !why.contains("--quick")))
        .collect();
    if !unmeasured.is_empty() {
        out.push_str("\nNot measured in this run:\n\n");
        for row in unmeasured {
            if let Verdict::NotMeasured(why) = &row.verdict {
                let _ = writeln!(out, "- {}: {why}", row.figure.label);
            }
        }
    }

    out.push_str(&matrix(metrics));
    out.push_str(&plots(summary));
    out.push_str(&methods(summary, metrics));
    out.push_str(GATES);

    out.push_str(
        "\n## Steps of this run\n\n| step | command | time | machine load |\n|---|---|---|---|\n",
    );
    let _ = writeln!(
        out,
        "| build | `cargo bench --no-run` of every bench below (`--profile dev` for the start bench) | {:.0} s | |",
        summary.build_time.as_secs_f64()
    );
    for step in &summary.steps {
        let _ = writeln!(
            out,
            "| {} | `{}` | {:.1} s{} | {} |",
            step.run.measures,
            step.run.command.replace('|', "\\|"),
            step.run.elapsed.as_secs_f64(),
            step.run
                .failure
                .as_ref()
                .map_or(String::new(), |f| format!(" — **failed**: {f}")),
            load(step.load.as_ref())
        );
    }
    out
}

/// The plots written beside this file, linked.
fn plots(summary: &Summary) -> String {
    if summary.plots.is_empty() {
        return String::new();
    }
    let mut out = String::from("\n## Plots\n\n");
    for plot in &summary.plots {
        let _ = writeln!(
            out,
            "- [{}]({})\n\n  ![{}]({})\n",
            plot.title, plot.path, plot.title, plot.path
        );
    }
    out
}

/// The exactly-once fault matrix as its own table: one row per fault kind, every column must be 0.
fn matrix(metrics: &Metrics) -> String {
    let mut out = String::from(
        "\n## Exactly-once fault matrix\n\n\
         `submit` calls per rare fault kind (`tests/src/matrix.rs`, 125 per kind in both modes), judged \
         against what the emulator holds. Every column of the first four must be 0.\n\n\
         | fault kind | duplicates | lost | wrong outcome | undecided | refused (definite, correct) | faults injected |\n\
         |---|---|---|---|---|---|---|\n",
    );
    let cell = |name: String| {
        metrics
            .get(&name)
            .map_or("not measured".to_owned(), |v| format!("{v:.0}"))
    };
    for (kind, label) in figures::MATRIX_KINDS {
        let _ = writeln!(
            out,
            "| {label} | {} | {} | {} | {} | {} | {} |",
            cell(format!("exactly_once_matrix_{kind}_duplicates")),
            cell(format!("exactly_once_matrix_{kind}_lost")),
            cell(format!("exactly_once_matrix_{kind}_wrong")),
            cell(format!("exactly_once_matrix_{kind}_undecided")),
            cell(format!("exactly_once_matrix_{kind}_refused")),
            cell(format!("exactly_once_matrix_{kind}_faults")),
        );
    }
    out
}

fn bold_verdict(verdict: &Verdict) -> String {
    match verdict {
        Verdict::Pass => "PASS".to_owned(),
        Verdict::Miss { .. } => format!("**{}**", verdict.describe()),
        other => other.describe(),
    }
}

/// How each figure is measured, with the sizes of this mode and facts of this run.
fn methods(summary: &Summary, metrics: &Metrics) -> String {
    let quick = summary.mode == Mode::Quick;
    let number = |name: &str| {
        metrics
            .get(name)
            .map_or("?".to_owned(), |v| format!("{v:.0}"))
    };
    let mut out = String::from("\n## How each figure is measured\n\n");
    let _ = writeln!(
        out,
        "Every bench is built once in release mode (`cargo bench --no-run`), but for the start bench, \
         built in the dev profile (`--profile dev`: a user's tests run in a debug build); then each \
         executable runs with the arguments `cargo bench -p CRATE --bench NAME --{}` gives it (so no \
         measurement waits for Cargo's lock), against the emulator in-process on 127.0.0.1, and prints \
         `name=value` lines that this command reads.\n",
        if quick { " --quick" } else { "" }
    );
    let _ = writeln!(
        out,
        "- **Rate-limit efficiency** (`tests/benches/rate_limit.rs`): {} tasks share one client and \
         each walks every page (100 orders) of a store of {} orders, against the emulator with the \
         service's limit (burst 10, then 2 requests/s). Figure: wall time ÷ the least any client could \
         take, `(requests − 10) / 2` s ({} requests here). 429s are counted from the client's own request \
         spans.",
        if quick { 4 } else { 8 },
        if quick { 600 } else { 3_000 },
        number("rate_limit_requests")
    );
    let _ = writeln!(
        out,
        "- **Exactly-once under faults** (`tests/benches/exactly_once.rs`): {} `submit` calls, 16 in \
         flight, through the fault-injecting proxy of `tests/src/proxy.rs` (30% of exchanges: answer \
         dropped after commit, 500, at most six 429s, reset, answer held past the 500 ms client timeout). \
         Then the emulator's orders are counted per external id: orders held, duplicates (more than one \
         order per id), lost (an id with no order), and calls that returned an error. Extra requests per \
         fault = (requests through the proxy − one `POST` per call − the snapshot reads that succeeded) ÷ \
         faults injected ({} faults, {} requests here).",
        if quick { 200 } else { 1_000 },
        number("exactly_once_faults"),
        number("exactly_once_requests")
    );
    let _ = writeln!(
        out,
        "- **Exactly-once fault matrix** (same bench, `tests/src/matrix.rs`): for each rare fault, 125 \
         `submit` calls (1,000 in all, in both modes) against a fresh emulator: through the proxy with the \
         fault on each order's first `POST` (500 after commit, 409 with an HTML body, 201 with half its \
         body, answer lost then two lookups that do not show the order yet, 429 with an absurd \
         Retry-After, reset in the middle of the body), or in two runs (the product archived between \
         them; a different order under the same external id). Duplicates: orders beyond one per id; lost: \
         `Ok` with no order held; wrong outcome: a success carrying another order, `ExternalIdReused` for \
         the same order, or a definite failure for an order that is held; undecided: an error with \
         `may_have_been_processed()`. The store-wide pause is capped at 20 ms in this run so that absurd \
         Retry-After values do not stall the batch."
    );
    let _ = writeln!(
        out,
        "- **The model of the network** (`tests/benches/sim.rs`, `tests/src/sim`): `store_api::Client` \
         against the emulator in the same process (`Emulator::answer`) through a simulated network, on \
         tokio's paused clock, 2 threads each with its own world. First every schedule of the exhaustive \
         set ({} schedules: each of a submission's first 3 `POST`s and 3 lookups, and each of the first \
         3 reads of `get`, `pages` and `stream`, drawn from 11 kinds: delivered, lost before the \
         service, processed and the answer lost, reset, truncated, late, endless, a redirect to another \
         host, a 4xx or a 5xx page of something on the way, a 429; their parameters turn with the \
         position), then seeded random schedules of any length over every parameter and a cache's stale \
         answer ({} schedules, seed {}; nine in ten submissions, the rest shared by the three reads). \
         After each run each invariant is checked against what the emulator holds and counted once \
         for the run; a violation prints the run and the one command that replays it.",
        number("sim_exhaustive_schedules"),
        number("sim_random_schedules"),
        number("sim_seed")
    );
    let _ = writeln!(
        out,
        "- **The receiver side as a model** (`tests/benches/receiver_model.rs`, `tests/src/receivers`): \
         two receivers share one dedupe store, the real `MemoryDedupe` or `RedisDedupe`'s scripts and \
         client transcribed onto a simulated Redis (a primary, a replica 0.5 s behind, `WAIT`, failover, \
         restart without persistence; a differential test keeps the transcription equal to the real \
         scripts on `redis-server`). The service delivers each event up to 5 times (1, 2, 4, 8 s after \
         the previous attempt ended, 10 s timeout), each answered, its answer lost or refused; every \
         receiver runs the real `process_once` (lease 10 s, renewed every third) around a handler short \
         or longer than the lease whose effect is guarded by `Lease::is_held`; a receiver dies before or \
         after the effect, or is cut off from the store for 15 s; every exchange with Redis may lose its \
         reply, time out, or meet a failover or a restart. Tokio's paused clock, whole seconds. First \
         every schedule of the small worlds ({} schedules: 2 receivers, 1 event, every delivery; the \
         memory store's first two runs, Redis's first run and first two exchanges), then seeded random \
         schedules of six worlds ({} schedules, seed {}; two events, a full memory store, a short done \
         TTL among them). Each invariant is checked once per run; the documented prices (a second run \
         after a death past the effect, a cut longer than the lease or a store that lost its markers; a \
         fail-closed refusal) are counted, not failed.",
        number("receiver_model_exhaustive_schedules"),
        number("receiver_model_random_schedules"),
        number("receiver_model_seed")
    );
    let _ = writeln!(
        out,
        "- **Rate limit shared by processes** (`store-api-redis/benches/shared_limit.rs`): 4 OS processes \
         × 8 tasks × {} `GET /status` calls on one store ({} requests here), against the emulator with the \
         service's limit and a private `redis-server`, all starting at one instant. Shared: every process \
         uses a `RedisLimiter`; unshared: each its own in-process limiter (today's default); restart: \
         shared, with Redis killed at 40% of the run and started again, empty, a second later (the \
         processes fall back to 1/4 of the limit each meanwhile). Cluster: shared, on a private Redis \
         Cluster of 3 primaries and 3 replicas on loopback (node timeout 1 s), the processes given its \
         nodes as seeds; failover: the same with the primary holding the store's keys killed (SIGKILL) \
         at 40% of the run, until its replica took over ({} s here). Figure: wall time ÷ `(requests − \
         10) / 2` s; 429s counted in each process (the transport calls the limiter's `pause_for` for \
         429s only).",
        if quick { 2 } else { 4 },
        number("shared_limit_shared_requests"),
        metrics
            .get("shared_limit_failover_outage_s")
            .map_or("?".to_owned(), |v| format!("{v:.1}"))
    );
    let _ = writeln!(
        out,
        "- **Webhooks once across receivers** (`store-api-redis/benches/receivers.rs`): {} orders \
         created, one `orders_create` event each, delivered by the emulator (retries 200 ms doubling, 5 \
         attempts) through a round-robin loopback proxy to 3 receiver processes, each verifying and \
         running `process_once` on a `RedisDedupe` (1 s lease); one receiver is killed (SIGKILL) a third \
         of the way through and started again a second later. Each receiver appends the ids it \
         processed to its own file; the figures count them against the events emitted ({} delivery \
         attempts here). On the Redis Cluster the same, with the primary of one slot also killed half \
         way through ({} s until its replica took over; {} delivery attempts), a 5 s lease (longer than \
         the failover, which a `complete` waits out within it) and retries from 500 ms (longer in all \
         than a killed receiver's lease); there each claim, renewal and done marker counts only once a \
         replica of its own primary acknowledged it (`WAIT` right behind the write, the dedupe's \
         default on a cluster; fewer acknowledgements fail closed), and the killed node is started \
         again after the failover and rejoins as the promoted primary's replica, so the crash loses none.",
        if quick { 300 } else { 1_000 },
        number("receivers_attempts"),
        metrics
            .get("receivers_cluster_outage_s")
            .map_or("?".to_owned(), |v| format!("{v:.1}")),
        number("receivers_cluster_attempts")
    );
    let _ = writeln!(
        out,
        "- **Webhook verification** (`store-api-webhooks/benches/verify_ratio.rs`): \
         `Verifier::verify_signature` (hex header, size check, HMAC, constant-time compare; no parse) of \
         a {}-byte event ÷ a bare `Hmac<Sha256>` keyed per call over the same bytes compared with a \
         pre-decoded tag, timed in alternating batches of 2,000 calls ({} rounds). The verifier keys its \
         MAC once, in `Verifier::new`, which is why it can be faster than the bare HMAC; the bench also \
         prints verify ÷ a pre-keyed clone (`webhook_verify_ratio_prekeyed` = {}), the wrapper's own cost. \
         Parsing into `Event` is timed separately.",
        number("webhook_body_bytes"),
        if quick { 200 } else { 2_000 },
        metrics
            .get("webhook_verify_ratio_prekeyed")
            .map_or("?".to_owned(), |v| format!("{v:.3}"))
    );
    let _ = writeln!(
        out,
        "- **Page decode** (`tests/benches/decode.rs`): one real emulator page of 100 varied orders \
         decoded the client's way (`OrderList`, then `Order::from` per item) ÷ decoded into \
         `serde_json::Value`, alternately, {} rounds (after a criterion run of each).",
        if quick { 200 } else { 2_000 }
    );
    let _ = writeln!(
        out,
        "- **Emulator throughput** (`store-api-fixtures/benches/throughput.rs`): the load generator is \
         that bench's own tokio + reqwest client, 16 concurrent keep-alive connections sending requests \
         back to back for {} s per scenario after a 300 ms warm-up, in the same process as the emulator \
         (it shares the machine's cores with the server, so the rates are lower bounds). `GET \
         /orders?limit=100` on a store of 300 orders answers {} bytes. **Prism**: \
         `@stoplight/prism-cli@{}` (`prism mock spec/store-api.yaml`, installed by this command into \
         `{}`), loaded by the same bench binary in its `--target-url` mode with the same connections and \
         duration, on `GET {}` (of the spec's paths with and without the `/store-api/2026-08` base path, \
         the one Prism answered; the query has no bracketed names, which Prism mishandles). Prism answers \
         the spec's static example, one order of {} bytes, so it does far less work per request than the \
         emulator; the ratio is emulator req/s ÷ Prism req/s.",
        if quick { 1 } else { 5 },
        number("emulator_get_orders_bytes"),
        prism::VERSION,
        prism::PREFIX,
        summary
            .prism_path
            .as_deref()
            .unwrap_or("(Prism did not run)"),
        number("target_get_bytes")
    );
    let _ = writeln!(
        out,
        "- **Build cost** (full run only): a clean debug `cargo build -p store-api` (default features: \
         HTTPS through rustls with ring) into a fresh `--target-dir` ÷ a clean build of a scratch crate \
         generated in `target/bench-scratch` that depends only on reqwest (the workspace's line: \
         `default-features = false`, `json`, `query`, `stream`, plus `rustls-no-provider`), rustls (ring), \
         tokio, serde and serde_json, with the workspace's `Cargo.lock` and dependency profile; both \
         `--offline`. Beside it, a clean build of a webhook receiver: `store-api-webhooks` without \
         features (no HTTP client, no TLS). Each is timed in wall time and in CPU time (user + system of Cargo and the \
         compilers, from /proc/self/stat after the build was waited for). Then \
         `crates/store-api-raw/src/generated.rs` is touched and `store-api` rebuilt in the first target \
         folder (incremental, wall time)."
    );
    let _ = writeln!(
        out,
        "- **Validator** (`tests/benches/validator.rs`): `validate_order` on one thread, on a 50-item \
         custom order (two decorations per item where the blank has two locations sharing a method) built \
         from the client's cached store snapshot, fetched from the emulator (the seed's 11 blanks of \
         `store_alpha`); the order is checked valid first, so every rule runs. {} rounds of 1,000 calls, \
         each round beside 1,000 `serde_json` decodings of the same order's request body (the side \
         going first alternates); the rate is from the mean, the ratio is the median of the rounds' \
         ratios. Heap allocations are counted by a counting global allocator (`stats_alloc`) over 1,000 \
         validations.",
        if quick { 100 } else { 1_000 }
    );
    let _ = writeln!(
        out,
        "- **Emulator cost against the store's size** (`store-api-fixtures/benches/growth.rs`): one \
         emulator per size ({}), each store grown through the emulator's in-process API (the rules of \
         `POST /orders`; one order in two pending, one in four on hold, one in four canceled); then \
         `GET /orders?limit=100`, the same with `filter[status]=pending`, and with \
         `filter[externalOrderId]` of one order, over HTTP on 127.0.0.1, one request at a time, the \
         sizes in turn (so a busy machine's noise falls on all sizes alike), 61 timed requests each \
         after 5 untimed, each with its own ignored `sample=N` parameter so that none is answered \
         from the page the emulator keeps for a repeated query (the figures measure the indexes); \
         the figure is the median at the largest size ÷ the median at 1,000. Memory: \
         the process's RSS growth while the largest store was seeded ÷ its orders. What keeps each flat, \
         so a change that breaks it is easy to spot: **the default list** reads its page off the store's \
         `OrderBook` index in creation order (`BTreeMap` by `createdAt` then creation sequence, \
         `crates/store-api-fixtures/src/state/book.rs`), skipping to the page without filtering or \
         sorting; **the status list** reads the same order off the `status` value's set of that book's \
         filter index (one per `listOrders` filter of the spec); **the externalOrderId lookup** is one \
         hash lookup in the same filter index. All three hold only the state's *read* lock (an \
         `RwLock`, so reads never wait for each other), and only while the page's items (each order's \
         JSON, written when the order last changed) are copied into the answer; the rest of the \
         envelope is written after the lock is released. \
         Any other sort (`sort[updatedAt]`) or several filter values still sort, but only the orders \
         of the most selective filter.",
        if quick {
            "1,000 and 10,000 orders"
        } else {
            "1,000, 10,000 and 100,000 orders"
        }
    );
    let _ = writeln!(
        out,
        "- **Emulator against its floor** (`store-api-fixtures/benches/throughput.rs`): the \
         throughput bench's `GET /orders?limit=100` alternates, in {} rounds, with a bare axum server \
         on tokio in the same process answering the same page's bytes from memory, under the same \
         load generator and connections; each figure is the median of the rounds' emulator req/s ÷ \
         bare req/s. Two emulator figures: the same query every time (a poller, the gated figure: \
         the emulator answers with the page it kept for that query, `state/pages.rs`, retired by any \
         change to the store's orders, so it still authenticates, spends a token, checks for faults \
         and logs every request), and a query made distinct by an ignored `sample=N` parameter \
         (reported: every page read off the indexes and its 100 orders' JSON copied into a new body).",
        number("emulator_floor_rounds")
    );
    let _ = writeln!(
        out,
        "- **Client overhead** (`tests/benches/client_overhead.rs`): against the emulator on 127.0.0.1 \
         (its rate limit off) holding at least 100 orders of `store_alpha`, one request in flight, \
         `client.orders().list(limit 100)` (the client's limiter on, 10,000 requests/s, so it does not \
         bind; its retries on) against a bare `reqwest` GET with the API key, decoded by `serde_json` \
         into the same `OrderList`; and `client.orders().submit` (pre-flight against the warm snapshot \
         cache, then one POST) against one bare POST of the same kind of order decoded into the same \
         `Order`. Both sides share one `reqwest::Client` (the client sends through a `Network` over the bare side's), so one pool. \
         {} rounds of 10 requests per side, the side going first alternating; each ratio is the median \
         of the rounds' ratios.",
        number("client_overhead_rounds")
    );
    let _ = writeln!(
        out,
        "- **Telemetry overhead** (`tests/benches/telemetry_overhead.rs`, issue 37): the client overhead's \
         two calls (`client.orders().list(limit 100)` on a store of at least 100 orders, and `submit` of a \
         fresh order, pre-flight on the warm cache) in two processes of the same build (store-api with \
         `otel-metrics`), each with its own emulator: one with no `tracing` subscriber and no meter \
         provider, one with a `tracing_subscriber` registry (INFO) and `tracing-opentelemetry`'s layer \
         over the SDK's batch span processor and in-memory exporter, and an `SdkMeterProvider` (periodic \
         reader, in-memory exporter) as the global meter provider (two processes because the client takes \
         its instruments from the global provider once per process). {} rounds of 10 requests per side, \
         the sides' order turning over between rounds; each ratio is the median of the rounds' ratios \
         (with ÷ without, ≤ 1.02), and the side with telemetry must have exported spans and \
         `http.client.request.duration`. The side without also times a bare `reqwest` call as the client \
         overhead does: that ratio, set beside the client overhead figure measured before issue 37 (one \
         `store_api.request` span per try), is what the issue's \"feature off ÷ before\" comes down to \
         (the code before the issue cannot be built beside it). Each side also times the same bare \
         request inside two spans with a name and a kind only (an operation's and its try's, entered on \
         every poll as the client enters its own): that ratio, with the layer ÷ without, is the floor, \
         what the layer costs for the spans any operation must export, whatever they carry.",
        number("telemetry_rounds")
    );
    let _ = writeln!(
        out,
        "- **Pre-flight at merchant scale** (`tests/benches/store_scale.rs`, issue 34; quick and full \
         runs alike): `store_alpha` grown to {} products with copies of the seed's Sunset Tee (each with \
         its own product id, variant ids and SKUs) through the emulator's in-process API; its rate limit \
         off, every client's limiter relaxed; requests counted from the emulator's request log. Cold: a \
         new client's first submission (the first fill, every page of both lists, then the `POST`); \
         warm: 20 more (requests per submission, median time). After 10 product changes \
         (`Emulator::update_product`) with the copy's TTL (1 s) left to expire: with the default \
         background refresh, the submission validates against the copy it has and its requests are \
         counted once the refresh it started ended (the `POST`, 1 catalog page, the product pages); with \
         `background_refresh(false)` the refresh runs on the submission's path. Refreshes after k \
         changes: `StoreCache::refresh` after k products changed, its pages of each list (the log's \
         count, checked against `Refreshed`) at most ⌈k/100⌉ + 1. Latency: a client whose every \
         request waits {} ms first (a `Network` that sleeps, then sends: on loopback scheduling noise \
         alone would exceed the ratio), TTL 5 s, {} submissions at a fixed pace of 64 per lifetime (78 ms) \
         while a product changes every 100 ms ({} refreshes started here); p99 (nearest rank: the third \
         slowest) ÷ median must stay ≤ 1.2, so three refreshes that each stalled the submission that \
         started them (1.4% of the samples) fail it: the bench's `--inline-refresh` runs the same with \
         `background_refresh(false)` to show it, and `--no-refresh` with a TTL of an hour to show the \
         harness's own noise (the figure `store_scale_latency_control` must be 0). A thread reads the \
         client's copy (`StoreCache::current`, what every validation does first) every millisecond \
         meanwhile; the longest read is reported.",
        number("store_scale_products"),
        number("store_scale_latency_network_ms"),
        number("store_scale_latency_samples"),
        number("store_scale_latency_refreshes")
    );
    let _ = writeln!(
        out,
        "- **Emulator start** (`store-api-fixtures/benches/start.rs`, built in the dev profile: a user's \
         tests run in a debug build, and the bench prints `emulator_start_debug=1` only there): what a \
         test that starts its own emulator pays. `Emulator::start()` (the built-in seed, the rate limit \
         on), one `GET /status` with the store's key, drop; against a bare axum server started on a free \
         loopback port, one GET, drop (its stop signalled, not awaited, as the emulator's drop does). One \
         `reqwest::Client` sends both sides' requests (a new connection each time: each server has a new \
         port), on a current-thread runtime like `#[tokio::test]`'s; {} rounds of 5 starts per side, \
         alternating, after 2 rounds thrown away; the figure is the median of the rounds' ratios. What \
         the profile showed (`perf record` of this bench, and the start's phases timed, before the change): \
         of 8.1 ms per start (0.64 ms for bare axum, 12.3×), 2.9 ms went to parsing the built-in seed's \
         JSON and 3.5 ms to writing every seed record's JSON (the catalog's and the products', through the \
         wire format), both on every start; 0.55 ms to building the router (about 30 routes, a layer per \
         Store API route holding the emulator's state); 0.02 ms to the webhook client. Now the state of \
         the built-in seed is built once per process (`OnceLock`) and copied for each emulator (0.08 ms: \
         records share their JSON bytes); the routes are built once per process (per `allow_remote`, \
         their one setting) and given each emulator's state (0.05 ms; the gate wraps each handler instead \
         of being a layer that held the state); the webhook client is built by the first delivery. A \
         start costs about 0.17 ms; the rest of the gap to the floor is the gate's work on the one \
         request (fault check, authentication, a token, the request log) and the status answer's wire \
         JSON.",
        number("emulator_start_rounds")
    );
    let _ = writeln!(
        out,
        "- **Exactly-once throughput** (`tests/benches/exactly_once.rs`): {} `submit` calls, 16 in \
         flight, through the fault proxy on a fresh emulator, first with no fault (`FaultPlan::none()`; \
         the run must hold every order once or the bench fails), then with the 30% faults above; orders \
         per second of wall time. Gated against floors of about a quarter (no faults) and a third \
         (faults) of a quick run on the loaded 2-core machine, so only a real regression fails.",
        if quick { 200 } else { 1_000 }
    );
    let _ = writeln!(
        out,
        "- **The proxy under load** (`store-api-cli/benches/proxy.rs`, issue 35; quick and full runs \
         alike): the release-built `store-api` binary, started as processes of its own, over HTTP on \
         127.0.0.1: `store-api emulator --no-rate-limit` (the server of `store-api-emulator`) and \
         `store-api proxy`. *Recording*: `proxy --record` in front of the emulator, {} exchanges sent \
         one after the other in a cycle of 10 kinds (GETs of products, the catalog, order lists, one \
         order, a lookup by external id and the status, of two stores, and 2 `POST /orders` with \
         customer data, each with its store's key), the store holding a full page of orders from the \
         start; time per exchange of the first and of the last 100 (for each kind the median of its 10, \
         averaged over the kinds, so one stall of the machine does not move it); the figure is the last \
         ÷ the first (≤ 1.5; a save that rewrote the whole cassette made it 5× at 250 exchanges), and \
         after SIGTERM the cassette must hold every exchange. The cassettes are written in `/dev/shm`: \
         the proxy syncs the file after each exchange, and on the shared disk that sync alone swung \
         from 0.2 to 7 ms with the neighbours' writes, the same for the first exchange and the last. \
         *Replay miss*: a cassette recorded through the proxy (a few requests, then many `GET /status`) \
         replayed by `proxy --replay`; the usual time of that GET alone (median of 50); then a `POST \
         /orders` of a 40 MB JSON order that no cassette holds, from another thread and connection, \
         while the GET is sent every 5 ms until the miss is answered ({} GETs here). Figures: the \
         miss's answer time, the upload included (≤ 1 s), and the slowest GET meanwhile, ≤ 50 ms rather \
         than a ratio to the usual 0.05 ms: a GET that waits for a core busy with the miss's upload or \
         digest waits for the scheduler (4 to 14 ms under a load average of 6), one held behind the \
         miss waits for its work (75 to 119 ms with the replay's lock taken before the digest; 14 s in \
         the issue). What the first run of this bench showed: the miss took 1.3 to 2.3 s and 760 MB, \
         spent in finding the key in the 40 MB body before its digest (a table of one 16-byte range \
         per byte, built even for a text without a `%`, and a comparison at every byte); the view of \
         a text without escapes is now the text itself, and each scan compares a byte before anything \
         else (the proxy's peak RSS {} MB here).",
        number("proxy_record_exchanges"),
        number("proxy_miss_concurrent_gets"),
        number("proxy_miss_peak_rss_mb")
    );
    out
}

const GATES: &str = "
## Gates (when the command fails)

The command exits non-zero when any of these holds; `--quick` is meant for CI.

| gate | figures | rule |
|---|---|---|
| zero tolerance | 429 responses, spans exported by the telemetry bench's side with the layer (≥ 1), orders held, duplicates, lost orders, submit errors, emulator GET errors, validator heap allocations per order, the start figure's debug build, the store-scale request and page counts (cold, warm, after 10 changes, each refresh's ≤ ⌈k/100⌉ + 1 pages per list, no full read) and its latency run's refreshes (≥ 3), the proxy's cassette after SIGTERM (every exchange) and its GETs during the replay miss (≥ 1) | any difference from the target fails, and so does a missing value |
| ±5% | rate-limit efficiency, webhook verify ratio, page decode ratio, emulator growth ratios, validator ÷ decoding, client overhead ratios, telemetry overhead ratios (≤ 1.02), store-scale submit latency p99 ÷ median | fails only when worse than the target by more than 5% of it (1.03 → 1.0815, 1.10 → 1.155, 1.0 → 1.05, 2 → 2.1, 1.2 → 1.26, 0.25 → 0.2625, 1.15 → 1.2075, 1.02 → 1.071); a smaller miss is reported as MISS |
| ±10% | build-cost ratio in CPU time (full run only); exactly-once orders/s against its floors; the proxy's replay miss (≤ 1 s) and the slowest GET beside it (≤ 50 ms) | fails above 1.65; the two clean builds run one after the other, and even their CPU time moves when a neighbour shares the cores. The throughput floors (250 orders/s without faults, 15 with) are set well below what the loaded machine measured, so a miss beyond 10% is a regression; so are the proxy's bounds above it (the miss 140 to 300 ms, the slowest GET 4 to 14 ms under a load average of 6) |
| ±25% | emulator ÷ bare axum, the same query; emulator start ÷ bare axum; the proxy's recording, last 100 ÷ first 100 exchanges | the first fails below 0.6, the second above 2.5, the third above 1.875: the median of many short alternating rounds is steady on an idle machine (0.84 to 0.88 in five quick runs; the start 1.43 to 1.47) but a neighbour's load moves the two sides' rounds unequally; the margin catches a lock or a copy added to every request, or work put back into every start, not noise. The proxy's two windows are seconds apart in one run, so a neighbour's load can fall on one only (0.73 to 1.2 under a load average of 6); a save that grows with the cassette is far beyond it |
| report only | build-cost ratio in wall time, emulator ÷ Prism, emulator ÷ bare axum with every page written, p99 latency, incremental build time, validator orders/s | these depend on how busy the shared machine is (other processes stretch one build's wall time and not the other's); a miss is reported as MISS with its gap and never fails the command |

A bench that crashes fails the command too. Prism needs Node.js and npm: when it cannot be installed or \
started, its figures are reported as not measured and the command does not fail on that alone.
";

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::super::figures;
    use super::super::machine::Machine;
    use super::super::runner::BenchRun;
    use super::super::{Step, Summary};
    use super::*;

    fn summary(output: &str) -> (Summary, Metrics) {
        let metrics = Metrics::parse(output);
        let rows = figures::evaluate(figures::all(Mode::Quick), &metrics, Mode::Quick, |_| {
            "crashed".to_owned()
        });
        let summary = Summary {
            mode: Mode::Quick,
            prism_path: Some("/stores/store_alpha/orders?limit=100".to_owned()),
            machine: Machine {
                cores: 2,
                cpu: "Test CPU".to_owned(),
                memory_kib: 2 * 1024 * 1024,
                rustc: "rustc 1.90.0".to_owned(),
                date: "2026-08-14 09:30 UTC".to_owned(),
            },
            build_time: Duration::from_secs(90),
            steps: vec![Step {
                run: BenchRun {
                    command: "cargo bench -p store-api-tests --bench decode -- --quick".to_owned(),
                    measures: "page decode",
                    elapsed: Duration::from_secs(12),
                    metrics: metrics.clone(),
                    failure: None,
                },
                required: true,
                load: None,
            }],
            rows,
            measurement_time: Duration::from_secs(12),
            load: Some(Load {
                steal_percent: 2.4,
                others_percent: 41.2,
            }),
            plots: vec![super::super::plots::Plot {
                title: "emulator: GET /orders latency".to_owned(),
                path: "benchmarks/growth.svg".to_owned(),
            }],
        };
        (summary, metrics)
    }

    #[test]
    fn the_report_states_machine_figures_gaps_and_gates() {
        let (summary, metrics) =
            summary("decode_ratio=1.2\nrate_limit_429=0\nwebhook_verify_ratio=0.8\n");
        let text = markdown(&summary, &metrics);
        for expected in [
            "| CPU | 2 × Test CPU |",
            "| memory | 2.0 GiB |",
            "| machine load during the measurements | other processes 41%, CPU steal 2% of all CPU time |",
            "| page decode | `cargo bench -p store-api-tests --bench decode -- --quick` | 12.0 s | load unknown |",
            "| rustc | rustc 1.90.0 |",
            "| command | `cargo xtask bench --quick` |",
            "| page decode: client path ÷ serde_json::Value | ≤ 1 | 1.200 | **MISS (fails)** | fails beyond ±5% |",
            "| rate-limit 429 responses | = 0 | 0 | PASS | zero tolerance |",
            "0.2 over the limit of 1 (+20.0%). This miss fails the command.",
            "| build: clean store-api | — | (full run only) | not measured | — |",
            "- exactly-once: lost: crashed",
            "## Gates (when the command fails)",
            "![emulator: GET /orders latency](benchmarks/growth.svg)",
        ] {
            assert!(text.contains(expected), "missing {expected:?} in\n{text}");
        }
        assert!(summary.failed());
    }

    #[test]
    fn the_terminal_table_ends_with_what_failed() {
        let (failing, _) = summary("decode_ratio=1.2\nrate_limit_429=0\n");
        let text = table(&failing);
        let tail: Vec<&str> = text
            .lines()
            .rev()
            .take_while(|l| l.starts_with("FAILS: "))
            .collect();
        for expected in [
            "FAILS: page decode: client path ÷ serde_json::Value: measured 1.200, target ≤ 1, fails beyond ±5%",
            "FAILS: exactly-once: lost: measured not measured (crashed), target = 0, zero tolerance",
        ] {
            assert!(
                tail.contains(&expected),
                "missing {expected:?} at the end of\n{text}"
            );
        }
        assert!(
            !tail.iter().any(|l| l.contains("rate-limit 429")),
            "a passing figure listed as failing:\n{text}"
        );
    }

    #[test]
    fn the_terminal_table_aligns_its_columns() {
        let (summary, _) = summary("decode_ratio=0.5\n");
        let text = table(&summary);
        let decode = text.lines().find(|l| l.starts_with("page decode")).unwrap();
        let header = text.lines().find(|l| l.starts_with("figure")).unwrap();
        let column = |line: &str, text: &str| line[..line.find(text).unwrap()].chars().count();
        assert_eq!(column(header, "target"), column(decode, "≤ 1"));
        assert_eq!(column(header, "result"), column(decode, "PASS"));
    }
}
