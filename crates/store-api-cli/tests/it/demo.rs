//! The quick-start demo: every step, in time, exit 0.

use std::time::{Duration, Instant};

use crate::common::{Run, bare};

#[test]
fn the_demo_runs_every_step_on_the_embedded_emulator() {
    let started = Instant::now();
    let run = Run::from(bare().arg("demo").output().unwrap()).code(0);
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "{:?}",
        started.elapsed()
    );
    assert!(
        run.stderr
            .contains("using the embedded emulator at http://127.0.0.1:"),
        "{run:?}"
    );
    let expected = [
        "1. status: ok — API version 2026-08, key accepted for store store_alpha",
        "2. catalog: 11 blanks available to the store; the first 4:",
        "3. artwork: https://demo-assets.example.test/sunset-3000x2400.png serves a 3000x2400 PNG",
        "Placement::fit gives 12 x 9.6 in against the top, aspect ratio kept",
        "5. pre-flight: a 15 x 12 in design on the same area is refused locally, no order sent:",
        "   lineItems.0.decorations.0.physicalWidth: The design is larger than the print area for the print location: ",
        "registered for orders_create and orders_update; a delivery signed with another key gets 401",
        "→ Submitted::Created ord_",
        "→ 409 → Submitted::AlreadyExisted ord_",
        "(same order: yes; the store holds 1 order)",
        "   webhook orders_create evt_",
        "   2/5 production_requested (webhook orders_update evt_",
        "   5/5 fulfilled (webhook orders_update evt_",
        "   status fulfilled, tracking: UPS 1Z",
        "done in ",
    ];
    let mut rest = run.stdout.as_str();
    for line in expected {
        let at = rest
            .find(line)
            .unwrap_or_else(|| panic!("missing or out of order: {line:?}\n{}", run.stdout));
        rest = &rest[at + line.len()..];
    }
    crate::snap!("demo_output", run.stdout);
}
