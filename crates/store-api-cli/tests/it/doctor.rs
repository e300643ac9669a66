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
