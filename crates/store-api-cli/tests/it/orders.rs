//! orders submit|list|get|find, and the deprecated orders create.

use store_api_fixtures::AppAction;

use crate::common::{Env, IMAGE_URL, Run, data};
use crate::snap;

#[test]
fn submit_dry_run_runs_the_preflight_check_only() {
    let env = Env::start();
    let invalid = env
        .run(&[
            "orders",
            "submit",
            "--file",
            &data("invalid_order.json"),
            "--dry-run",
        ])
        .code(3);
    snap!("orders_submit_invalid", invalid.stderr);
    // Without --dry-run the same check comes first: nothing generated, written or sent.
    let (dir, file) = order_file(|_| std::fs::read_to_string(data("invalid_order.json")).unwrap());
    let before = std::fs::read(&file).unwrap();
    for extra in [&[][..], &["--no-write"]] {
        let mut args = vec!["orders", "submit", "--file", file.to_str().unwrap()];
        args.extend_from_slice(extra);
        let refused = env.run(&args).code(3);
        assert_eq!(refused.stderr, invalid.stderr, "{extra:?}");
        assert_eq!(std::fs::read(&file).unwrap(), before, "{extra:?}");
    }
    assert_eq!(env.emu.order_count(&env.store), 0);

    let (dir_ok, ok_file) = order_file(|text| text);
    let ok_path = ok_file.to_str().unwrap();
    let ok = env
        .run(&["orders", "submit", "--file", ok_path, "--dry-run"])
        .code(0);
    snap!("orders_submit_dry_run_human", ok.stdout);
    assert_eq!(ok.stderr, "");
    let ok = env
        .run(&["orders", "submit", "--file", ok_path, "--dry-run", "--json"])
        .code(0);
    assert_eq!(ok.json(), serde_json::json!({ "valid": true }));
    // Nothing written: no id in the file, no lock file beside it; nothing sent.
    assert_eq!(
        std::fs::read_to_string(&ok_file).unwrap(),
        std::fs::read_to_string(data("order.json")).unwrap()
    );
    assert_eq!(entries(dir_ok.path()), ["order.json"]);
    // (The run that would have written the file took its lock before reading it.)
    assert_eq!(entries(dir.path()), [".order.json.lock", "order.json"]);
    assert_eq!(env.emu.order_count(&env.store), 0);
    // --dry-run checks what --external-id would send, and skips nothing.
    let bad_id = env
        .run(&[
            "orders",
            "submit",
            "--file",
            ok_path,
            "--dry-run",
            "--external-id",
            "",
        ])
        .code(2);
    assert!(bad_id.stderr.contains("--external-id"), "{bad_id:?}");
    let both = env
        .run(&[
            "orders",
            "submit",
            "--file",
            ok_path,
            "--dry-run",
            "--no-preflight",
        ])
        .code(2);
    assert!(both.stderr.contains("cannot be used with"), "{both:?}");
}

/// The names in `dir`, sorted.
fn entries(dir: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    names
}

#[test]
fn files_that_are_not_requests() {
    let env = Env::start();
    let empty = env
        .run(&[
            "orders",
            "submit",
            "--no-write",
            "--file",
            &data("empty_last_name.json"),
        ])
        .code(3);
    assert!(
        empty
            .stderr
            .contains("  shippingAddress.lastName should not be empty\n"),
        "{empty:?}"
    );
    let broken = env
        .run(&[
            "orders",
            "submit",
            "--dry-run",
            "--file",
            &data("not_json.json"),
        ])
        .code(2);
    assert!(broken.stderr.contains("is not JSON"), "{broken:?}");
    let missing = env
        .run(&["orders", "submit", "--file", &data("no_such_file.json")])
        .code(2);
    assert!(missing.stderr.contains("cannot read"), "{missing:?}");
}

/// What a run of `orders submit --no-write` printed on stderr, with the paths that change from run to
/// run (the binary's, the order file's folder) written as `store-api` and `[DIR]`.
fn portable(stderr: &str, dir: &std::path::Path) -> String {
    let bin = assert_cmd::cargo::cargo_bin("store-api");
    stderr
        .replace(bin.to_str().unwrap(), "store-api")
        .replace(dir.to_str().unwrap(), "[DIR]")
}

/// The command `orders submit --no-write` printed to retry with its id (the line under its note),
/// without the program: the arguments to run it with.
fn printed_retry(stderr: &str) -> Vec<String> {
    let line = stderr
        .lines()
        .skip_while(|line| !line.starts_with("generated externalOrderId"))
        .nth(1)
        .unwrap_or_else(|| panic!("no retry command: {stderr}"));
    // The test's paths hold nothing a shell would read: the words split on spaces.
    line.split_whitespace().skip(1).map(str::to_owned).collect()
}

// Issue 38, point 7: a file that must not be rewritten is left byte for byte as it was; the id
// generated for the run is printed with the command that retries with it, and that command answers
// with the same order, billing nothing new.
#[test]
fn submit_no_write_leaves_the_file_and_prints_the_retry() {
    let env = Env::start();
    let (dir, file) = order_file(|text| text);
    let before = std::fs::read(&file).unwrap();
    let first = env
        .run(&[
            "orders",
            "submit",
            "--no-write",
            "--file",
            file.to_str().unwrap(),
            "--json",
        ])
        .code(0);
    assert_eq!(
        std::fs::read(&file).unwrap(),
        before,
        "the file was written"
    );
    assert_eq!(entries(dir.path()), ["order.json"], "a lock file was made");
    let generated = first.json()["externalOrderId"].as_str().unwrap().to_owned();
    assert_eq!(first.json()["outcome"], "created");
    assert!(first.stderr.contains(&generated), "{first:?}");
    snap!(
        "orders_submit_no_write_stderr",
        portable(&first.stderr, dir.path())
    );

    let retry = printed_retry(&first.stderr);
    assert_eq!(
        retry[retry.len() - 2..],
        ["--external-id".to_owned(), generated.clone()]
    );
    let args: Vec<&str> = retry.iter().map(String::as_str).collect();
    let again = env.run(&args).code(0);
    assert_eq!(again.json()["outcome"], "alreadyExisted");
    assert_eq!(again.json()["externalOrderId"], generated.as_str());
    assert_eq!(again.json()["order"]["id"], first.json()["order"]["id"]);
    assert_eq!(again.json()["mayHaveBeenCreatedByThisRun"], false);
    assert_eq!(again.stderr, "", "nothing generated the second time");
    assert_eq!(env.emu.order_count(&env.store), 1, "billed once");
    assert_eq!(std::fs::read(&file).unwrap(), before);

    // A read-only file in a read-only folder: nothing to write or lock, the same.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let (locked_dir, locked) = order_file(|text| text);
        std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o444)).unwrap();
        std::fs::set_permissions(locked_dir.path(), std::fs::Permissions::from_mode(0o555))
            .unwrap();
        let run = env
            .run(&[
                "orders",
                "submit",
                "--no-write",
                "--file",
                locked.to_str().unwrap(),
            ])
            .code(0);
        std::fs::set_permissions(locked_dir.path(), std::fs::Permissions::from_mode(0o755))
            .unwrap();
        assert!(run.stdout.starts_with("created order "), "{run:?}");
        assert_eq!(std::fs::read(&locked).unwrap(), before);
        assert_eq!(entries(locked_dir.path()), ["order.json"]);
        assert_eq!(env.emu.order_count(&env.store), 2);
    }
}

// Issue 38, point 7: `orders create` is a hidden alias of `orders submit --no-write` for 0.3.0: a
// note on stderr, the file untouched, an id for the run, and under --json the order alone, as before.
#[test]
fn the_deprecated_create_runs_submit_no_write() {
    let env = Env::start();
    let (dir, file) = order_file(|text| text);
    let before = std::fs::read(&file).unwrap();
    let path = file.to_str().unwrap();
    let created = env.run(&["orders", "create", "--file", path]).code(0);
    let stderr = portable(&created.stderr, dir.path());
    assert!(
        stderr.starts_with("note: `orders create` is deprecated and goes in 0.4.0: it runs `orders submit --no-write`"),
        "{stderr}"
    );
    snap!("orders_create_deprecated_stderr", stderr);
    snap!("orders_create_human", created.stdout);
    assert_eq!(std::fs::read(&file).unwrap(), before);
    assert_eq!(entries(dir.path()), ["order.json"]);
    assert_eq!(env.emu.order_count(&env.store), 1);

    // Its retry command is `orders submit --no-write ... --external-id ID`: the same order.
    let retry = printed_retry(&created.stderr);
    assert_eq!(retry[..3], ["orders", "submit", "--no-write"]);
    let args: Vec<&str> = retry.iter().map(String::as_str).collect();
    let again = env.run(&[&args[..], &["--json"]].concat()).code(0);
    assert_eq!(again.json()["outcome"], "alreadyExisted");
    assert_eq!(env.emu.order_count(&env.store), 1);

    // --json: the order itself (the shape `orders create` always printed), not the submission.
    let json = env
        .run(&["orders", "create", "--file", path, "--json"])
        .code(0);
    let order = json.json();
    assert!(order["id"].as_str().unwrap().starts_with("ord_"), "{order}");
    assert!(order.get("outcome").is_none(), "{order}");
    assert!(order["externalOrderId"].is_string(), "{order}");
    // Its flags: --dry-run and --no-preflight as before.
    let dry = env
        .run(&["orders", "create", "--file", path, "--dry-run", "--json"])
        .code(0);
    assert_eq!(dry.json(), serde_json::json!({ "valid": true }));
    env.run(&["orders", "create", "--file", &data("invalid_order.json")])
        .code(3);
    assert_eq!(env.emu.order_count(&env.store), 2);
    assert_eq!(std::fs::read(&file).unwrap(), before);

    // Hidden from `orders --help`, and its own help says what it does now.
    let listed = env.run(&["orders", "--help"]).code(0);
    assert!(
        !listed
            .stdout
            .lines()
            .any(|line| line.trim_start().starts_with("create")),
        "{listed:?}"
    );
    let help = env.run(&["orders", "create", "--help"]).code(0);
    assert!(
        help.stdout
            .starts_with("Deprecated (removed in 0.4.0): runs `orders submit --no-write`"),
        "{help:?}"
    );
}

#[test]
fn submit_is_exactly_once() {
    let env = Env::start();
    // No id in the file: one is generated, written into the file and printed before sending.
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("order.json");
    std::fs::copy(data("order.json"), &copy).unwrap();
    let first = env
        .run(&[
            "orders",
            "submit",
            "--file",
            copy.to_str().unwrap(),
            "--json",
        ])
        .code(0);
    let generated = first.json()["externalOrderId"].as_str().unwrap().to_owned();
    assert!(
        first
            .stderr
            .contains(&format!("generated externalOrderId {generated}")),
        "{first:?}"
    );
    assert_eq!(first.json()["outcome"], "created");

    // The same request again (a lost response, a crashed run): 409, the same order.
    let again = env
        .run(&[
            "orders",
            "submit",
            "--file",
            &data("order.json"),
            "--external-id",
            &generated,
            "--json",
        ])
        .code(0);
    assert_eq!(again.json()["outcome"], "alreadyExisted");
    assert_eq!(again.json()["order"]["id"], first.json()["order"]["id"]);
    assert_eq!(env.emu.order_count(&env.store), 1);
    snap!("orders_submit_again_json", again.stdout);

    let human = env
        .run(&[
            "orders",
            "submit",
            "--file",
            &data("order.json"),
            "--external-id",
            &generated,
        ])
        .code(0);
    snap!("orders_submit_again_human", human.stdout);
    let fresh = env
        .run(&[
            "orders",
            "submit",
            "--file",
            &data("order.json"),
            "--external-id",
            "fresh-1",
        ])
        .code(0);
    snap!("orders_submit_created_human", fresh.stdout);
    assert_eq!(env.emu.order_count(&env.store), 2);
}

#[test]
fn a_custom_order_with_an_artwork() {
    let env = Env::start();
    let artwork = env
        .run(&[
            "artworks", "create", "--name", "Logo", "--url", IMAGE_URL, "--json",
        ])
        .code(0);
    let artwork_id = artwork.json()["id"].as_str().unwrap().to_owned();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("custom.json");
    std::fs::write(
        &file,
        std::fs::read_to_string(data("custom_order.json"))
            .unwrap()
            .replace("ARTWORK_ID", &artwork_id),
    )
    .unwrap();
    let created = env
        .run(&["orders", "submit", "--file", file.to_str().unwrap()])
        .code(0);
    snap!("orders_submit_custom_human", created.stdout);
}

#[test]
fn list_get_and_find() {
    let env = Env::start();
    let first = env.submit("list-1");
    let second = env.submit("list-2");
    let third = env.submit("list-3");
    env.emu
        .app_action(&env.store, &second, AppAction::MarkPaid)
        .unwrap();
    for _ in 0..4 {
        env.emu.advance_order(&env.store, &third).unwrap();
    }

    let (first, second, third) = (first.as_str(), second.as_str(), third.as_str());
    let list = env.run(&["orders", "list"]).code(0);
    snap!("orders_list_human", list.stdout);

    let ids = |args: &[&str]| -> Vec<String> {
        let mut all = vec!["orders", "list", "--json"];
        all.extend_from_slice(args);
        env.run(&all).code(0).json()["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| o["id"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(ids(&[]), [third, second, first]);
    assert_eq!(ids(&["--external-id", "list-2"]), [second]);
    assert_eq!(ids(&["--status", "pending"]), [second, first]);
    assert_eq!(
        ids(&["--fulfillment-status", "fulfilled,in_production"]),
        [third]
    );
    assert_eq!(ids(&["--payment-status", "paid"]), [second]);
    assert_eq!(ids(&["--all", "--limit", "1"]), [third, second, first]);
    assert_eq!(ids(&["--page", "2", "--limit", "1"]), [second]);
    let paged = env
        .run(&["orders", "list", "--page", "2", "--limit", "1"])
        .code(0);
    assert!(
        paged
            .stderr
            .ends_with("page 2 of 3, 3 orders in all (--page N for more, --all for every page)\n"),
        "{paged:?}"
    );

    let fulfilled = env.run(&["orders", "get", third]).code(0);
    snap!("orders_get_fulfilled_human", fulfilled.stdout);
    let json = env.run(&["orders", "get", third, "--json"]).code(0);
    snap!("orders_get_fulfilled_json", json.stdout);

    let found = env
        .run(&["orders", "find", "--external-id", "list-1", "--json"])
        .code(0);
    assert_eq!(found.json()["id"], first);
    let not_found = env
        .run(&["orders", "find", "--external-id", "nope"])
        .code(3);
    assert_eq!(
        not_found.stderr,
        "error: 404 Not Found: no order has externalOrderId nope\n"
    );
}

// Issue 10: a reused externalOrderId with a different order is an error naming the difference, never
// "nothing new was billed".
#[test]
fn a_reused_external_id_with_another_order_is_an_error() {
    let env = Env::start();
    env.submit("reused-1");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("other.json");
    std::fs::write(
        &file,
        std::fs::read_to_string(data("order.json"))
            .unwrap()
            .replace("\"quantity\": 2", "\"quantity\": 5"),
    )
    .unwrap();
    let run = env.run(&[
        "orders",
        "submit",
        "--file",
        file.to_str().unwrap(),
        "--external-id",
        "reused-1",
    ]);
    assert_eq!(run.code, 3, "{run:?}");
    assert!(!run.stdout.contains("nothing new was billed"), "{run:?}");
    assert!(run.stderr.contains("quantity"), "{run:?}");
    // Issue 22, defect 6: the advice was "Use a new externalOrderId for a new order", which places and
    // bills a second order. Now: which order holds the id, what differs, what a new id would do.
    assert!(!run.stderr.contains("Use a new"), "{run:?}");
    snap!("orders_submit_reused_id_human", run.stderr);
    assert_eq!(env.emu.order_count(&env.store), 1);
}

#[test]
fn an_order_can_come_from_standard_input_with_its_external_id() {
    let env = Env::start();
    let order = std::fs::read_to_string(data("order.json")).unwrap();
    let without_id: serde_json::Value = serde_json::from_str(&order).unwrap();
    assert!(without_id.get("externalOrderId").is_none());
    // No file to write a generated id into: refused before anything is sent.
    let refused = Run::from(
        env.cmd()
            .args(["orders", "submit", "--file", "-"])
            .write_stdin(order.clone())
            .output()
            .unwrap(),
    );
    assert_eq!(refused.code, 2, "{refused:?}");
    assert!(
        refused.stderr.contains("needs an externalOrderId"),
        "{refused:?}"
    );
    assert!(refused.stderr.contains("--no-write"), "{refused:?}");
    assert_eq!(env.emu.order_count(&env.store), 0);
    // With --no-write: an id for this run, printed with the command that retries with it, which,
    // given the same order on standard input, answers with the same order.
    let generated = Run::from(
        env.cmd()
            .args(["orders", "submit", "--file", "-", "--no-write", "--json"])
            .write_stdin(order.clone())
            .output()
            .unwrap(),
    )
    .code(0);
    let retry = printed_retry(&generated.stderr);
    let again = Run::from(
        env.cmd()
            .args(&retry)
            .write_stdin(order.clone())
            .output()
            .unwrap(),
    )
    .code(0);
    assert_eq!(again.json()["order"]["id"], generated.json()["order"]["id"]);
    assert_eq!(env.emu.order_count(&env.store), 1);
    // With --external-id, twice: billed once.
    for _ in 0..2 {
        let run = Run::from(
            env.cmd()
                .args([
                    "orders",
                    "submit",
                    "--file",
                    "-",
                    "--external-id",
                    "stdin-1",
                ])
                .write_stdin(order.clone())
                .output()
                .unwrap(),
        );
        assert_eq!(run.code, 0, "{run:?}");
    }
    assert_eq!(env.emu.order_count(&env.store), 2);
}

/// `tests/it/data/order.json` in a fresh folder, with its text changed by `edit`.
fn order_file(edit: impl FnOnce(String) -> String) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("order.json");
    std::fs::write(
        &file,
        edit(std::fs::read_to_string(data("order.json")).unwrap()),
    )
    .unwrap();
    (dir, file)
}

/// How often `externalOrderId` is a key of the file's top-level object, and the value a JSON parser
/// keeps (the last).
fn external_ids_in(file: &std::path::Path) -> (usize, serde_json::Value) {
    let text = std::fs::read_to_string(file).unwrap();
    let value: serde_json::Value = serde_json::from_str(&text).unwrap();
    (
        text.matches("\"externalOrderId\"").count(),
        value["externalOrderId"].clone(),
    )
}

// Issue 10: the same command run twice on a file without externalOrderId (a script retrying after a
// timeout) bills one order: the generated id is written into the file before sending.
// Issue 22, defect 4: with `"externalOrderId": null` the generated id was written in front of the
// `null`, the file then held the key twice and still read `null`, and the next run generated another
// id: two orders for one file. The key is now replaced, and the file read back before sending.
#[test]
fn a_rerun_on_a_file_without_an_external_id_bills_once() {
    let env = Env::start();
    let missing: fn(String) -> String = |text| text;
    let null: fn(String) -> String =
        |text| text.replacen('{', "{\n  \"externalOrderId\": null,", 1);
    for (round, edit) in [missing, null].into_iter().enumerate() {
        let (_dir, file) = order_file(edit);
        let path = file.to_str().unwrap();
        let first = env
            .run(&["orders", "submit", "--file", path, "--json"])
            .code(0);
        let second = env
            .run(&["orders", "submit", "--file", path, "--json"])
            .code(0);
        assert_eq!(
            env.emu.order_count(&env.store),
            round + 1,
            "{first:?} {second:?}"
        );
        assert_eq!(second.json()["outcome"], "alreadyExisted");
        assert_eq!(second.json()["order"]["id"], first.json()["order"]["id"]);
        let generated = first.json()["externalOrderId"].clone();
        assert_eq!(external_ids_in(&file), (1, generated.clone()));
        // The rest of the text is as it was: only the id is new.
        let expected = std::fs::read_to_string(data("order.json"))
            .unwrap()
            .replacen('{', &format!("{{\n  \"externalOrderId\": {generated},"), 1);
        assert_eq!(std::fs::read_to_string(&file).unwrap(), expected);
    }
}

// Issue 22, defect 4: the write-back used a fixed temporary name (`order.json.tmp`) and wrote through
// whatever was there, a symbolic link included, before renaming it over the order file.
#[cfg(unix)]
#[test]
fn a_link_at_the_temporary_name_is_not_followed() {
    let env = Env::start();
    let (dir, file) = order_file(|text| text);
    let elsewhere = tempfile::tempdir().unwrap();
    let victim = elsewhere.path().join("victim.txt");
    std::fs::write(&victim, "not yours").unwrap();
    let link = dir.path().join("order.json.tmp");
    std::os::unix::fs::symlink(&victim, &link).unwrap();
    let run = env
        .run(&[
            "orders",
            "submit",
            "--file",
            file.to_str().unwrap(),
            "--json",
        ])
        .code(0);
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "not yours");
    assert!(std::fs::symlink_metadata(&link).unwrap().is_symlink());
    assert!(std::fs::symlink_metadata(&file).unwrap().is_file());
    assert_eq!(
        external_ids_in(&file),
        (1, run.json()["externalOrderId"].clone())
    );
    let mut left: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .collect();
    left.sort();
    // No temporary file is left; the lock file stays (issue 29, defect 1).
    assert_eq!(left, [".order.json.lock", "order.json", "order.json.tmp"]);
}

// Issue 22, defect 4: a file that already holds the key twice (as the old write-back left it, an id
// in front of a `null`) may have been sent under the first: no new id is sent for it.
#[test]
fn a_file_holding_the_key_twice_is_refused() {
    let env = Env::start();
    let (_dir, file) = order_file(|text| {
        text.replacen(
            '{',
            "{\n  \"externalOrderId\": \"sent-before\",\n  \"externalOrderId\": null,",
            1,
        )
    });
    let before = std::fs::read_to_string(&file).unwrap();
    let run = env
        .run(&["orders", "submit", "--file", file.to_str().unwrap()])
        .code(2);
    assert!(run.stderr.contains("externalOrderId 2 times"), "{run:?}");
    assert!(run.stderr.contains("\"sent-before\""), "{run:?}");
    assert!(run.stderr.contains("nothing was sent"), "{run:?}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), before);
    assert_eq!(env.emu.order_count(&env.store), 0);
}

/// `orders submit` of `tests/it/data/order.json` under `external_id`, with `extra` arguments.
fn submit_with_id(env: &Env, external_id: &str, extra: &[&str]) -> Run {
    let file = data("order.json");
    let mut args = vec![
        "orders",
        "submit",
        "--file",
        &file,
        "--external-id",
        external_id,
    ];
    args.extend_from_slice(extra);
    env.run(&args)
}

// Issue 22, defect 6: when this run's first attempt created the order and its answer was lost, the
// retry's 409 was reported as "nothing new was billed".
#[test]
fn an_order_this_run_may_have_created_is_not_reported_as_nothing_billed() {
    use store_api_fixtures::{Fault, FaultKind};
    let env = Env::start();
    let lost_answer = || {
        env.emu
            .inject_fault(
                Fault::new(FaultKind::DropAfterCommit)
                    .operation("create_order")
                    .store(&env.store),
            )
            .unwrap();
    };
    lost_answer();
    let human = submit_with_id(&env, "lost-1", &[]).code(0);
    assert!(
        !human.stdout.contains("nothing new was billed"),
        "{human:?}"
    );
    snap!("orders_submit_lost_answer_human", human.stdout);
    lost_answer();
    let json = submit_with_id(&env, "lost-2", &["--json"]).code(0);
    assert_eq!(json.json()["outcome"], "alreadyExisted");
    assert_eq!(json.json()["mayHaveBeenCreatedByThisRun"], true);
    assert_eq!(env.emu.order_count(&env.store), 2, "one order per id");
    // Found at once by a later run: that run placed nothing.
    let again = submit_with_id(&env, "lost-2", &["--json"]).code(0);
    assert_eq!(again.json()["mayHaveBeenCreatedByThisRun"], false);
}

/// rust-analyzer's switch: the slow tier runs only when `RUN_SLOW_TESTS` is set (CI sets it).
fn skip_slow_tests() -> bool {
    let skip = std::env::var_os("RUN_SLOW_TESTS").is_none();
    if skip {
        eprintln!("skipped: a slow test (set RUN_SLOW_TESTS=1 to run it)");
    }
    skip
}

/// The lock file `orders submit` holds while it reads, writes and submits `file`.
fn lock_file_of(file: &std::path::Path) -> std::fs::File {
    let name = format!(".{}.lock", file.file_name().unwrap().to_str().unwrap());
    std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(file.with_file_name(name))
        .unwrap()
}

/// `orders submit --file FILE --json`, started and not waited for.
fn spawn_submit(env: &Env, file: &std::path::Path, extra: &[&str]) -> std::process::Child {
    env.std_cmd()
        .args([
            "orders",
            "submit",
            "--file",
            file.to_str().unwrap(),
            "--json",
        ])
        .args(extra)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

/// `trials` times: two runs of `orders submit` on one new file without an id, started together. Each
/// trial bills exactly one order, both runs report it, and the file holds its id.
fn two_runs_of_one_file(trials: usize) {
    let env = Env::start();
    for trial in 0..trials {
        let (_dir, file) = order_file(|text| text);
        let (first, second) = (
            spawn_submit(&env, &file, &[]),
            spawn_submit(&env, &file, &[]),
        );
        let first = Run::from(first.wait_with_output().unwrap()).code(0);
        let second = Run::from(second.wait_with_output().unwrap()).code(0);
        assert_eq!(
            env.emu.order_count(&env.store),
            trial + 1,
            "trial {trial}: {first:?} {second:?}"
        );
        assert_eq!(first.json()["order"]["id"], second.json()["order"]["id"]);
        let (keys, id) = external_ids_in(&file);
        assert_eq!((keys, &id), (1, &first.json()["externalOrderId"]));
        assert_eq!(id, second.json()["externalOrderId"]);
        let outcomes = [
            first.json()["outcome"].clone(),
            second.json()["outcome"].clone(),
        ];
        assert!(
            outcomes.contains(&"created".into()) && outcomes.contains(&"alreadyExisted".into()),
            "trial {trial}: {outcomes:?}"
        );
    }
}

// Issue 29, defect 1: two runs of one file without an externalOrderId (two cron jobs, a retry wrapper
// that fires early) each generated an id, wrote it and sent it: two orders, and the file recorded one
// (1 trial in 12). A run now holds a lock beside the file from its read to the end of its submission.
#[test]
fn two_concurrent_runs_of_one_file_bill_one_order() {
    two_runs_of_one_file(5);
}

// The same in 100 of 100 trials (slow tier).
#[test]
fn two_concurrent_runs_of_one_file_bill_one_order_in_100_trials() {
    if skip_slow_tests() {
        return;
    }
    two_runs_of_one_file(100);
}

// Issue 29, defect 1: a second run waits for the lock (saying so on stderr), then reads the id the
// first run wrote and resumes that submission: 409, the existing order, nothing new billed.
#[test]
fn a_second_run_waits_for_the_first_and_resumes_its_order() {
    let env = Env::start();
    let (_dir, file) = order_file(|text| text);
    let lock = lock_file_of(&file);
    fs4::FileExt::lock(&lock).unwrap();
    let mut waiting = spawn_submit(&env, &file, &[]);
    // Its stderr line by line, to see it wait (a fixed sleep would race a slow start).
    let stderr = waiting.stderr.take().unwrap();
    let (lines, received) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        use std::io::BufRead as _;
        for line in std::io::BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            if lines.send(line).is_err() {
                break;
            }
        }
    });
    let mut said = Vec::new();
    while !said
        .last()
        .is_some_and(|line: &String| line.contains("waiting"))
    {
        match received.recv_timeout(std::time::Duration::from_secs(60)) {
            Ok(line) => said.push(line),
            // Its stderr closed (it ended) or it said nothing: it did not wait.
            Err(end) => panic!("the second run did not wait for the lock ({end:?}): {said:?}"),
        }
    }
    assert!(
        said.last().unwrap().contains(".order.json.lock"),
        "{said:?}"
    );
    assert_eq!(waiting.try_wait().unwrap(), None, "{said:?}");
    assert_eq!(env.emu.order_count(&env.store), 0);
    // What the first run does under the lock: write an id into the file, and send it.
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(
        &file,
        text.replacen('{', "{\n  \"externalOrderId\": \"first-run\",", 1),
    )
    .unwrap();
    let placed = env.submit("first-run");
    fs4::FileExt::unlock(&lock).unwrap();
    let output = waiting.wait_with_output().unwrap();
    reader.join().unwrap();
    said.extend(received.try_iter());
    let second = Run {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8(output.stdout).unwrap(),
        stderr: said.join("\n"),
    }
    .code(0);
    assert!(!second.stderr.contains("generated"), "{second:?}");
    assert_eq!(second.json()["outcome"], "alreadyExisted");
    assert_eq!(second.json()["externalOrderId"], "first-run");
    assert_eq!(second.json()["order"]["id"], placed.as_str());
    assert_eq!(env.emu.order_count(&env.store), 1);
}

// Issue 29, defect 1: the wait is bounded (--lock-timeout); a run that gives up sends nothing and
// leaves the file as it was.
#[test]
fn a_run_that_cannot_get_the_lock_in_time_sends_nothing() {
    let env = Env::start();
    let (_dir, file) = order_file(|text| text);
    let before = std::fs::read_to_string(&file).unwrap();
    let lock = lock_file_of(&file);
    fs4::FileExt::lock(&lock).unwrap();
    let started = std::time::Instant::now();
    let run = Run::from(
        spawn_submit(&env, &file, &["--lock-timeout", "1"])
            .wait_with_output()
            .unwrap(),
    );
    assert_eq!(run.code, 4, "{run:?}");
    assert!(started.elapsed() >= std::time::Duration::from_secs(1));
    let error = &run.stderr;
    assert!(error.contains("--lock-timeout"), "{run:?}");
    assert!(error.contains("nothing was sent"), "{run:?}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), before);
    assert_eq!(env.emu.order_count(&env.store), 0);
}

// Issue 29, defect 3: a `chmod 600` order file (a customer's name and address) came back 644 after
// the generated id was written into it.
#[cfg(unix)]
#[test]
fn the_rewritten_order_file_keeps_its_mode() {
    use std::os::unix::fs::MetadataExt as _;
    use std::os::unix::fs::PermissionsExt as _;
    let env = Env::start();
    for mode in [0o600, 0o640, 0o444] {
        let (_dir, file) = order_file(|text| text);
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(mode)).unwrap();
        // Run as root (a container, CI), the owner can be another user's, and is kept too.
        let root = std::fs::metadata(&file).unwrap().uid() == 0;
        if root {
            std::os::unix::fs::chown(&file, Some(65534), Some(65534)).unwrap();
        }
        env.run(&["orders", "submit", "--file", file.to_str().unwrap()])
            .code(0);
        let metadata = std::fs::metadata(&file).unwrap();
        assert_eq!(metadata.permissions().mode() & 0o7777, mode, "{mode:o}");
        if root {
            assert_eq!((metadata.uid(), metadata.gid()), (65534, 65534));
        }
        assert_eq!(external_ids_in(&file).0, 1);
    }
}

// Issue 29, defect 3: a symbolic link to the order file was replaced by a plain file. The id is now
// written into the link's target (the temporary file beside the target), and the link stays.
#[cfg(unix)]
#[test]
fn a_linked_order_file_stays_a_link_and_its_target_gets_the_id() {
    let env = Env::start();
    let (target_dir, target) = order_file(|text| text);
    let links = tempfile::tempdir().unwrap();
    let link = links.path().join("linked.json");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let run = env
        .run(&[
            "orders",
            "submit",
            "--file",
            link.to_str().unwrap(),
            "--json",
        ])
        .code(0);
    assert!(std::fs::symlink_metadata(&link).unwrap().is_symlink());
    assert_eq!(std::fs::read_link(&link).unwrap(), target);
    assert_eq!(
        external_ids_in(&target),
        (1, run.json()["externalOrderId"].clone())
    );
    // Nothing was left beside the link; beside the target only its lock file.
    assert_eq!(std::fs::read_dir(links.path()).unwrap().count(), 1);
    let mut beside: Vec<String> = std::fs::read_dir(target_dir.path())
        .unwrap()
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .collect();
    beside.sort();
    assert_eq!(beside, [".order.json.lock", "order.json"]);
    // A rerun through the link finds the id: one order.
    env.run(&["orders", "submit", "--file", link.to_str().unwrap()])
        .code(0);
    assert_eq!(env.emu.order_count(&env.store), 1);
}

// Issue 35, defect 11: two hard links to one order file, submitted one after the other: each run
// locked its own name, wrote its generated id through it (a new file renamed over that name only) and
// sent it: 2 ids, 2 orders. A file with more than one link is now refused before anything is written.
#[cfg(unix)]
#[test]
fn two_hard_links_to_one_order_file_never_bill_twice() {
    let env = Env::start();
    let (dir, file) = order_file(|text| text);
    let before = std::fs::read_to_string(&file).unwrap();
    let other = dir.path().join("other.json");
    std::fs::hard_link(&file, &other).unwrap();
    let runs: Vec<Run> = [&file, &other]
        .iter()
        .map(|name| Run::from(spawn_submit(&env, name, &[]).wait_with_output().unwrap()))
        .collect();
    assert!(
        env.emu.order_count(&env.store) <= 1,
        "one file billed twice: {runs:?}"
    );
    for run in runs {
        let run = run.code(2);
        assert!(run.stderr.contains("2 hard links"), "{run:?}");
        assert!(run.stderr.contains("nothing was sent"), "{run:?}");
    }
    assert_eq!(env.emu.order_count(&env.store), 0);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), before);
    // With an id of its own, a linked file is never written: it is sent as it is.
    env.run(&[
        "orders",
        "submit",
        "--file",
        other.to_str().unwrap(),
        "--external-id",
        "linked-0001",
    ])
    .code(0);
    assert_eq!(env.emu.order_count(&env.store), 1);
}
