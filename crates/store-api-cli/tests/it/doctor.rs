//! `doctor`: the spec's statements and assumptions checked against the emulator, read-only; the report
//! pinned by a snapshot.

use store_api_raw::open::ProductStatus;
use store_api_raw::types;

use store_api_fixtures::{Deviation, EmulatorBuilder};

use crate::common::{Env, data};
use crate::snap;

/// An emulator (adjusted by `adjust`) with two orders that carry external ids and a product whose
/// status the spec does not list, so that every probe of `doctor` has something to read.
fn env(adjust: impl FnOnce(EmulatorBuilder) -> EmulatorBuilder) -> Env {
    let env = Env::start_with(adjust);
    let order: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(data("order.json")).unwrap()).unwrap();
    for external_id in ["doctor-1", "doctor-2"] {
        let mut order = order.clone();
        order["externalOrderId"] = external_id.into();
        let order: types::CreateOrderRequest = serde_json::from_value(order).unwrap();
        env.emu.create_order_in_app(&env.store, order).unwrap();
    }
    let mut scheduled = types::Product::default();
    scheduled.name = Some("Scheduled tee".into());
    scheduled.status = Some(ProductStatus::from("scheduled"));
    env.emu.create_product(&env.store, scheduled).unwrap();
    env
}

#[test]
fn doctor_reports_every_fact_against_the_emulator_and_sends_only_gets() {
    let env = env(|builder| builder);
    let run = env.run(&["doctor"]).code(0);
    snap!("doctor", run.stdout);
    let requests = env.emu.requests(&env.store).unwrap();
    assert!(!requests.is_empty());
    assert!(requests.iter().all(|r| r.method == "GET"), "{requests:?}");

    let json = env.run(&["doctor", "--json"]).code(0).json();
    assert_eq!(json["requests"].as_u64(), Some(requests.len() as u64));
    let verdicts: Vec<&str> = json["assumptions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|finding| finding["verdict"].as_str().unwrap())
        .collect();
    assert!(verdicts.contains(&"held") && verdicts.contains(&"not_checked"));
    assert!(!verdicts.contains(&"differs"));
}

#[test]
fn doctor_keeps_to_its_budget() {
    let env = env(|builder| builder);
    let run = env.run(&["doctor", "--max-requests", "2"]).code(0);
    assert!(
        run.stdout.contains(": 2 GET requests of at most 2"),
        "{run:?}"
    );
    assert!(run.stdout.contains("over the probe's budget of 2 requests"));
    assert_eq!(env.emu.requests(&env.store).unwrap().len(), 2);
}

#[test]
fn doctor_fails_naming_what_differs() {
    let env = env(|builder| builder.deviate(Deviation::ResetAsUnixTime));
    let run = env.run(&["doctor"]).code(1);
    assert!(
        run.stderr
            .contains("the service differs from the spec: rate-limit-reset"),
        "{run:?}"
    );
    assert!(
        run.stdout.contains("it looks like a Unix time in seconds"),
        "{run:?}"
    );
}

#[test]
fn doctor_cassette_holds_every_recorded_answer_to_the_spec() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("grown.json");
    let mut grown: serde_json::Value = serde_json::from_str(&cassette(400)).unwrap();
    // A field the spec does not declare, in the order the service created.
    grown["exchanges"][0]["answer"]["body"]["json"]["giftWrap"] = true.into();
    std::fs::write(&file, grown.to_string()).unwrap();
    let run: crate::common::Run = crate::common::bare()
        .args(["doctor", "--cassette", file.to_str().unwrap()])
        .output()
        .unwrap()
        .into();
    let run = run.code(1);
    assert!(
        run.stderr
            .contains("recorded answers the spec does not declare: ")
            && run.stderr.contains("grown.json #0"),
        "{run:?}"
    );
    assert!(run.stdout.contains("giftWrap"), "{run:?}");
    let json: crate::common::Run = crate::common::bare()
        .args(["doctor", "--json", "--cassette", file.to_str().unwrap()])
        .output()
        .unwrap()
        .into();
    let json = json.code(1).json();
    assert_eq!(json["conformance"]["findings"][0]["exchange"], 0, "{json}");
    assert_eq!(
        json["conformance"]["findings"][0]["what"]["kind"], "field",
        "{json}"
    );
}

/// A cassette of three create-order requests: a valid order, then an invalid body (a quantity of 0)
/// reusing its external id, answered `second` (400 with a message array as the spec says, or 409).
fn cassette(second: u16) -> String {
    let address = serde_json::json!({"firstName": "A", "lastName": "B", "address": {
        "streetAddress": "1 Main", "cityOrTown": "X", "stateOrProvince": "IL",
        "zipOrPostalCode": "1", "country": "US"}});
    let body = |quantity: u64| {
        serde_json::json!({"externalOrderId": "cli-1", "shippingAddress": address,
            "lineItems": [{"productVariantId": "pv_1", "quantity": quantity}]})
    };
    let headers = serde_json::json!({"content-type": "application/json",
        "x-ratelimit-limit": "10", "x-ratelimit-remaining": "9", "x-ratelimit-reset": "1"});
    let answer = if second == 409 {
        serde_json::json!({"statusCode": 409, "error": "Conflict",
            "message": "An order already exists with this external order ID: cli-1"})
    } else {
        serde_json::json!({"statusCode": 400, "error": "Bad Request",
            "message": ["lineItems.0.quantity must not be less than 1"]})
    };
    let exchange = |body: serde_json::Value, status: u16, answer: serde_json::Value| {
        serde_json::json!({
            "request": {"method": "POST", "path": "/store-api/2026-08/stores/store_alpha/orders",
                "headers": {"content-type": "application/json"}, "body": {"json": body}},
            "answer": {"status": status, "headers": headers, "body": {"json": answer}}
        })
    };
    let cassette = serde_json::json!({
        "format": "store-api-cassette/1", "apiVersion": "2026-08", "customerData": "redacted",
        "exchanges": [
            exchange(body(1), 201, serde_json::json!({"id": "ord_1", "externalOrderId": "cli-1"})),
            exchange(body(0), second, answer),
        ]
    });
    serde_json::to_string_pretty(&cassette).unwrap()
}

#[test]
fn doctor_cassette_checks_recordings_without_a_session_and_fails_naming_what_differs() {
    let dir = tempfile::tempdir().unwrap();
    let clean = dir.path().join("clean.json");
    std::fs::write(&clean, cassette(400)).unwrap();
    // No credentials, no service: nothing is probed.
    let run: crate::common::Run = crate::common::bare()
        .args(["doctor", "--cassette", clean.to_str().unwrap()])
        .output()
        .unwrap()
        .into();
    let run = run.code(0);
    assert!(run.stdout.contains("2 recorded exchanges"), "{run:?}");
    assert!(
        run.stdout
            .lines()
            .any(|line| line.contains("held") && line.contains("create-order-check-order")),
        "{run:?}"
    );

    std::fs::write(dir.path().join("deviant.json"), cassette(409)).unwrap();
    std::fs::write(dir.path().join("notes.txt"), "not a cassette").unwrap();
    let env = Env::start();
    let run = env
        .run(&["doctor", "--cassette", dir.path().to_str().unwrap()])
        .code(1);
    assert!(
        run.stderr
            .contains("the recordings differ from the spec: create-order-check-order"),
        "{run:?}"
    );
    assert!(
        run.stdout
            .contains("#1 POST /store-api/2026-08/stores/store_alpha/orders"),
        "{run:?}"
    );
    assert!(
        env.emu.requests(&env.store).unwrap().is_empty(),
        "a probe was started"
    );

    let json = env
        .run(&[
            "doctor",
            "--json",
            "--cassette",
            dir.path().to_str().unwrap(),
        ])
        .code(1)
        .json();
    let files: Vec<&str> = json
        .as_array()
        .unwrap()
        .iter()
        .map(|one| one["file"].as_str().unwrap())
        .collect();
    assert!(
        files[0].ends_with("clean.json") && files[1].ends_with("deviant.json"),
        "{json}"
    );
    let finding = json[1]["report"]["assumptions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|finding| finding["id"] == "create-order-check-order")
        .unwrap();
    assert_eq!(finding["verdict"], "differs");
    assert_eq!(finding["exchange"], 1);
    assert_eq!(finding["method"], "POST");

    let run = env
        .run(&[
            "doctor",
            "--cassette",
            dir.path().join("none").to_str().unwrap(),
        ])
        .code(2);
    assert!(run.stderr.contains("none"), "{run:?}");
}

/// The seed of the deterministic emulators the comparison tests record against and compare with.
const SEED: u64 = 31;

/// A deterministic emulator of [`SEED`], with `deviation` when given.
fn deterministic(deviation: Option<Deviation>) -> Env {
    Env::start_with(|builder| {
        let builder = builder.deterministic(SEED);
        match deviation {
            Some(deviation) => builder.deviate(deviation),
            None => builder,
        }
    })
}

/// Records, through the library's recorder, a first page, a limit below the minimum and a page past
/// the end against `env`, into `file`.
fn record(env: &Env, file: &std::path::Path) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let recorder = std::sync::Arc::new(
            store_api_cassette::Recorder::reqwest(store_api_cassette::RecordOptions::default())
                .unwrap(),
        );
        let client = store_api::Client::builder()
            .base_url(env.emu.base_url())
            .store_id(env.store.clone())
            .api_key(env.key.clone())
            .retry_policy(store_api::RetryPolicy::never())
            .network(recorder.clone())
            .build()
            .unwrap();
        for path in [
            "/status",
            "/products?limit=2&page=1",
            "/products?limit=0",
            "/products?limit=2&page=9",
        ] {
            client
                .request(store_api::hook::Method::GET, path)
                .send()
                .await
                .unwrap();
        }
        recorder.recording().cassette().save(file).unwrap();
    });
}

#[test]
fn doctor_compare_replays_the_recordings_against_the_service_and_fails_naming_the_exchange() {
    let dir = tempfile::tempdir().unwrap();
    let clean = dir.path().join("clean.json");
    record(&deterministic(None), &clean);
    let deviant = dir.path().join("deviant.json");
    record(
        &deterministic(Some(Deviation::LimitBelowMinimumDefaulted)),
        &deviant,
    );

    let target = deterministic(None);
    let run = target
        .run(&["doctor", "--cassette", clean.to_str().unwrap(), "--compare"])
        .code(0);
    assert!(
        run.stdout
            .contains("against the service: 4 exchange(s): 4 same, 0 differ, 0 not comparable"),
        "{run:?}"
    );
    // The requests were sent again, nothing else.
    assert_eq!(target.emu.requests(&target.store).unwrap().len(), 4);

    let run = target
        .run(&[
            "doctor",
            "--cassette",
            dir.path().to_str().unwrap(),
            "--compare",
        ])
        .code(1);
    assert!(
        run.stderr.contains(&format!(
            "the recordings differ from the spec: page-limit-minimum; the service answered otherwise than recorded: {} #2",
            deviant.display()
        )),
        "{run:?}"
    );
    assert!(
        run.stdout.contains(
            "#2 GET /store-api/2026-08/stores/store_alpha/products?limit=0 (recorded 200, target 400): differs\n      status 200 recorded, 400 from the target"
        ),
        "{run:?}"
    );

    let json = target
        .run(&[
            "doctor",
            "--json",
            "--cassette",
            deviant.to_str().unwrap(),
            "--compare",
        ])
        .code(1)
        .json();
    let compared = &json["comparison"]["exchanges"][2];
    assert_eq!(compared["outcome"], "differs", "{json}");
    assert_eq!(compared["recorded"], 200);
    assert_eq!(compared["target"], 400);
    assert_eq!(json["comparison"]["exchanges"][3]["outcome"], "same");
    assert!(json["report"]["assumptions"].is_array(), "{json}");

    // --compare needs the cassettes.
    target.run(&["doctor", "--compare"]).code(2);
}

#[test]
fn the_emulator_lists_its_deviations_by_assumption() {
    let run: crate::common::Run = crate::common::bare()
        .args(["emulator", "--help"])
        .output()
        .unwrap()
        .into();
    for deviation in Deviation::ALL {
        assert!(
            run.stdout.contains(deviation.assumption()),
            "{deviation:?}: {run:?}"
        );
    }
}

// Issue 38, point 5: `doctor --cassette` printed every fact of every cassette (about 60 lines each)
// and read only *.json. It now prints a summary (`--full`: every fact) and reads a folder of insta
// snapshots, skipping the snapshots that hold no cassette.
#[test]
fn doctor_cassette_summarises_reads_insta_snapshots_and_prints_every_fact_with_full() {
    let dir = tempfile::tempdir().unwrap();
    let header = "---\nsource: tests/it/checkout.rs\nexpression: cassette.to_text()\n---\n";
    std::fs::write(
        dir.path().join("checkout__clean.snap"),
        format!("{header}{}", cassette(400)),
    )
    .unwrap();
    std::fs::write(dir.path().join("deviant.json"), cassette(409)).unwrap();
    std::fs::write(
        dir.path().join("other__greeting.snap"),
        "---\nsource: tests/it/other.rs\nexpression: greeting\n---\nhello\n",
    )
    .unwrap();
    let folder = dir.path().to_str().unwrap();
    let doctor = |args: &[&str]| -> crate::common::Run {
        crate::common::bare()
            .args(["doctor", "--cassette", folder])
            .args(args)
            .output()
            .unwrap()
            .into()
    };
    let run = doctor(&[]).code(1);
    assert!(
        run.stderr
            .contains("note: 1 snapshot(s) hold no cassette, skipped: ")
            && run.stderr.contains("other__greeting.snap"),
        "{run:?}"
    );
    assert!(
        run.stderr
            .contains("the recordings differ from the spec: create-order-check-order"),
        "{run:?}"
    );
    assert!(
        !run.stdout.contains("What the specification states"),
        "{run:?}"
    );
    snap!(
        "doctor_cassette_summary",
        run.stdout.replace(folder, "[DIR]")
    );

    let full = doctor(&["--full"]).code(1);
    assert!(
        full.stdout.contains("What the specification states"),
        "{full:?}"
    );
    for assumption in store_api_raw::contract::ASSUMPTIONS {
        assert_eq!(
            full.stdout.matches(&format!(" {} ", assumption.id)).count(),
            2,
            "{}: {full:?}",
            assumption.id
        );
    }
    assert!(
        full.stdout.lines().count() > 2 * run.stdout.lines().count(),
        "{full:?}"
    );
    // --full needs the cassettes.
    crate::common::bare()
        .args(["doctor", "--full"])
        .output()
        .map(crate::common::Run::from)
        .unwrap()
        .code(2);

    // One snapshot file, named as it is.
    let one: crate::common::Run = crate::common::bare()
        .args(["doctor", "--cassette"])
        .arg(dir.path().join("checkout__clean.snap"))
        .output()
        .unwrap()
        .into();
    let one = one.code(0);
    assert!(one.stdout.contains("2 recorded exchanges"), "{one:?}");
}
