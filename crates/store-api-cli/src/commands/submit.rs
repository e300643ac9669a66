//! `orders submit` (and the deprecated `orders create`, which runs it with `--no-write`): the one way
//! the command line places an order, exactly once.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;
use store_api::model::Order;
use store_api::{
    AttemptResult, IdentifiedOrder, NewOrder, SubmitOptions, Submitted, new_external_order_id,
};

use super::order_file::{
    LockError, OrderFileLock, external_id_keys, parse_order, read_order, refuse_hard_links,
    rewrite_order_file, with_external_id,
};
use super::retry_command::retry_command;
use crate::cli::SubmitArgs;
use crate::error::CliError;
use crate::output::Output;
use crate::render;
use crate::session::Session;

/// Who asked for the submission: `orders submit`, or the deprecated `orders create`, whose `--json`
/// keeps printing the order alone (the shape it always had) for the release it stays.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Caller {
    /// `orders submit`.
    Submit,
    /// `orders create`, deprecated.
    DeprecatedCreate,
}

/// The JSON of a submission: how it ended, around the order in the API's shape.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SubmitResult<'a> {
    outcome: &'static str,
    external_order_id: &'a str,
    attempts: usize,
    /// True when this run created the order, or one of its attempts may have (its answer was lost).
    may_have_been_created_by_this_run: bool,
    order: &'a Order,
}

/// Runs `orders submit` with `args`.
pub async fn run(
    session: &Session,
    args: SubmitArgs,
    caller: Caller,
    out: Output,
) -> Result<(), CliError> {
    if args.dry_run {
        return dry_run(session, &args, out).await;
    }
    let file = args.file.as_path();
    let stdin = crate::input::is_stdin(file);
    // Held to the end of this function: from the read of the file to the end of the submission.
    let (_lock, target) = if args.external_id.is_none() && !args.no_write && !stdin {
        lock_order_file(file, Duration::from_secs(args.lock_timeout)).await?
    } else {
        // The file is never written: nothing for two runs to disagree on.
        (None, None)
    };
    let mut order = read_with_id(file, args.external_id.as_deref())?;
    let source = match (&order.external_order_id, target) {
        (Some(id), _) => IdSource::Given(id.to_string()),
        (None, _) if args.no_write => IdSource::InMemory,
        (None, _) if stdin => {
            // Nowhere to keep a generated id: a rerun would send another one and could bill twice.
            return Err(CliError::Usage(
                "an order read from standard input needs an externalOrderId (in the order or --external-id): there is no file to write a generated one into, so a rerun could bill twice; nothing was sent. Or pass --no-write: an id is then generated for this run and printed with the command that retries with it".into(),
            ));
        }
        (None, Some(target)) => IdSource::IntoFile(target),
        (None, None) => {
            // The lock could not be taken (`lock_order_file` allows that only for a file that
            // already holds an id); the file was read under no lock and holds none now.
            return Err(CliError::Busy(format!(
                "{} changed while it was read (it no longer holds an externalOrderId); nothing was sent",
                file.display()
            )));
        }
    };
    // The check before an id is generated: an order it refuses is neither sent nor written, and no
    // id is announced for it.
    let preflight = !args.no_preflight;
    if preflight {
        session
            .with_store_copy(out, session.client.orders().preflight(&order))
            .await?;
    }
    let external_id = match source {
        IdSource::Given(id) => id,
        IdSource::InMemory => {
            let id = new_external_order_id();
            order.external_order_id = Some(parse_generated(&id)?);
            // Before sending: whatever happens to this run, the id that may place the order has
            // been said, with the command that retries with it.
            eprintln!(
                "generated externalOrderId {id} for this run only ({} has none; --no-write: not written into it). If this run does not report its order, retry with the same id, or a second order may be billed:\n  {}",
                file.display(),
                retry_command(std::env::args_os(), &id, caller == Caller::DeprecatedCreate)
            );
            id
        }
        IdSource::IntoFile(target) => {
            let id = new_external_order_id();
            // Into the file before sending: a rerun of the same command (after a timeout, a crash)
            // then sends the same id and cannot bill a second order.
            order = record_external_id(file, &target, &order, &id)?;
            eprintln!(
                "generated externalOrderId {id} and wrote it into {} ({} had none): rerunning this command is safe",
                file.display(),
                file.display()
            );
            id
        }
    };
    // The same exit code as before the type carried the rule: an unusable id is an invalid argument.
    let order = IdentifiedOrder::try_from(order).map_err(|e| CliError::Api(e.into()))?;
    // Checked above already.
    let options = SubmitOptions::new().preflight(false);
    let submission = session
        .client
        .orders()
        .submit_with(&order, &options)
        .await?;
    let attempts = submission.attempts.len();
    let this_run = submission
        .attempts
        .iter()
        .find(|attempt| attempt.result.may_have_been_processed());
    let (outcome, headline, by_this_run) = match (&submission.submitted, this_run) {
        (Submitted::AlreadyExisted(existing), Some(attempt)) => (
            "alreadyExisted",
            format!(
                "order {} holds externalOrderId {external_id}, and this run may have placed it: its attempt {} {}; it is one order for this id, billed once",
                existing.id,
                attempt.number,
                what_it_got(&attempt.result)
            ),
            true,
        ),
        (Submitted::AlreadyExisted(existing), None) => (
            "alreadyExisted",
            format!(
                "order {} already existed for externalOrderId {external_id} (409): nothing new was billed",
                existing.id
            ),
            false,
        ),
        (other, _) => (
            "created",
            format!(
                "created order {} ({}) for externalOrderId {external_id} in {attempts} attempt(s)",
                other.order().id,
                other.order().name.as_deref().unwrap_or("-")
            ),
            true,
        ),
    };
    match caller {
        Caller::Submit => out.json(&SubmitResult {
            outcome,
            external_order_id: &external_id,
            attempts,
            may_have_been_created_by_this_run: by_this_run,
            order: submission.order(),
        })?,
        Caller::DeprecatedCreate => out.json(submission.order())?,
    }
    out.line(headline);
    let (summary, items) = render::order_detail(submission.order());
    out.table(&summary);
    out.table(&items);
    Ok(())
}

/// Where the externalOrderId a submission sends comes from.
enum IdSource {
    /// The file's, or --external-id.
    Given(String),
    /// Generated for this run only (--no-write).
    InMemory,
    /// Generated and written into the file at this path (its target, every link resolved).
    IntoFile(PathBuf),
}

/// A generated id as the request holds it (a UUID always parses; the error is kept, not unwrapped).
fn parse_generated<T>(id: &str) -> Result<T, CliError>
where
    T: std::str::FromStr<Err: std::fmt::Display>,
{
    id.parse()
        .map_err(|e| CliError::Failed(format!("the generated externalOrderId {id}: {e}")))
}

/// `--dry-run`: the order read as a submission would read it (`--external-id` applied, the id checked
/// when there is one), then the pre-flight check; no lock, no id generated, nothing written or sent.
async fn dry_run(session: &Session, args: &SubmitArgs, out: Output) -> Result<(), CliError> {
    let order = read_with_id(&args.file, args.external_id.as_deref())?;
    if order.external_order_id.is_some() {
        IdentifiedOrder::try_from(order.clone()).map_err(|e| CliError::Api(e.into()))?;
    }
    let client = &session.client;
    session
        .with_store_copy(out, client.orders().preflight(&order))
        .await?;
    out.json(&serde_json::json!({ "valid": true }))?;
    out.line("pre-flight check passed: the request keeps every rule of the service (--dry-run, nothing sent)");
    Ok(())
}

/// The order in `file`, under `external_id` when one is given.
fn read_with_id(file: &Path, external_id: Option<&str>) -> Result<NewOrder, CliError> {
    let mut order = read_order(file)?;
    if let Some(id) = external_id {
        order.external_order_id = Some(
            id.parse()
                .map_err(|e| CliError::Usage(format!("--external-id: {e}")))?,
        );
    }
    Ok(order)
}

/// What an attempt got, after "attempt N".
fn what_it_got(result: &AttemptResult) -> String {
    match result {
        AttemptResult::Timeout => "timed out".to_owned(),
        AttemptResult::Connection => "lost its connection before an answer came".to_owned(),
        AttemptResult::Status(status) => format!("was answered {status}"),
        AttemptResult::CreatedUnreadable => {
            "was answered with a success whose body could not be read".to_owned()
        }
        AttemptResult::Redirected(status) => format!("was redirected ({status}, not followed)"),
        AttemptResult::Intermediary(status) => {
            format!("was answered {status} by something on the way, not the service")
        }
        other => format!("ended with {other:?}"),
    }
}

/// Takes the lock of the order `file` (see [`OrderFileLock`]), waiting up to `timeout` for another run
/// that holds it, and returns it with the file's target (the path with every symbolic link resolved:
/// the file that is read, locked and rewritten). A file that cannot be locked (a read-only folder) is
/// still submitted when it already holds an externalOrderId: it is never written then, and runs that
/// send one id bill one order. A file that does not exist is left to the read to report.
async fn lock_order_file(
    file: &Path,
    timeout: Duration,
) -> Result<(Option<OrderFileLock>, Option<PathBuf>), CliError> {
    let Ok(target) = std::fs::canonicalize(file) else {
        return Ok((None, None));
    };
    let waiting = |lock: &Path| {
        eprintln!(
            "waiting for another run of `orders submit` on {} to finish (it holds {}); up to {} s (--lock-timeout)",
            file.display(),
            lock.display(),
            timeout.as_secs()
        );
    };
    match OrderFileLock::acquire(&target, timeout, waiting).await {
        Ok(lock) => Ok((Some(lock), Some(target))),
        Err(LockError::TimedOut { path }) => Err(CliError::Busy(format!(
            "another run of `orders submit` still holds {} after {} s (--lock-timeout): nothing was sent. Run this command again once that run has finished: it then finds the externalOrderId that run wrote into {}",
            path.display(),
            timeout.as_secs(),
            file.display()
        ))),
        Err(LockError::Unavailable { path, error }) => {
            let holds_id = read_order(file).is_ok_and(|order| order.external_order_id.is_some());
            if holds_id {
                return Ok((None, None));
            }
            Err(CliError::Usage(format!(
                "cannot lock {} ({}: {error}), which keeps two runs of this command from each writing a new externalOrderId into {}; nothing was sent. Add an externalOrderId to the file or pass --external-id",
                file.display(),
                path.display(),
                file.display()
            )))
        }
    }
}

/// Writes `"externalOrderId": id` into the JSON object in `file` (the key's value replaced, whatever
/// it was, or the key added first; the rest of the text kept) and reads the file back: it must hold
/// the key once, and the request it holds must be `order` under this id, which is what is returned and
/// sent. The file is replaced durably (`store_api_fixtures::durable::replace_file_with_mode`: a
/// temporary file created exclusively beside it, synced, renamed, the folder synced), so once this
/// returns a crash or a power cut cannot lose the id, and a rerun sends the same one. `target` is
/// `file` with its symbolic links resolved: the new file is made beside the target and renamed over
/// it, so a link stays a link; it is created readable by its owner alone and gets the target's mode
/// (and owner where the process may) before anything is written into it. A file with more than one
/// hard link is refused: the other names would keep it without the id.
fn record_external_id(
    file: &Path,
    target: &Path,
    order: &NewOrder,
    id: &str,
) -> Result<NewOrder, CliError> {
    let failed = |e: &dyn std::fmt::Display| {
        CliError::Usage(format!(
            "cannot write the generated externalOrderId into {}: {e}; nothing was sent. Add an externalOrderId to the file or pass --external-id",
            file.display()
        ))
    };
    let text = std::fs::read_to_string(target).map_err(|e| failed(&e))?;
    let updated = with_external_id(&text, id).map_err(|e| failed(&e))?;
    let original = std::fs::metadata(target).map_err(|e| failed(&e))?;
    refuse_hard_links(&original).map_err(|e| failed(&e))?;
    rewrite_order_file(target, &original, &updated).map_err(|e| failed(&e))?;
    let mut expected = order.clone();
    expected.external_order_id = Some(id.parse().map_err(|e| failed(&e))?);
    let written = std::fs::read_to_string(file).map_err(|e| failed(&e))?;
    let read_back = parse_order(&written, file)?;
    if read_back != expected || external_id_keys(&written) != Ok(1) {
        return Err(failed(&format_args!(
            "the file does not read back as this request under externalOrderId {id} (did another program change it?)"
        )));
    }
    Ok(read_back)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_answers_that_say_nothing_was_processed_rule_this_run_out() {
        for result in [
            AttemptResult::NotSent,
            AttemptResult::AlreadyExists,
            AttemptResult::Status(400),
            AttemptResult::Status(401),
            AttemptResult::Status(429),
        ] {
            assert!(!result.may_have_been_processed(), "{result:?}");
        }
        for result in [
            AttemptResult::Created,
            AttemptResult::CreatedUnreadable,
            AttemptResult::Timeout,
            AttemptResult::Connection,
            AttemptResult::Redirected(307),
            AttemptResult::Intermediary(403),
            AttemptResult::Intermediary(408),
            AttemptResult::Status(503),
        ] {
            assert!(result.may_have_been_processed(), "{result:?}");
        }
    }
}
