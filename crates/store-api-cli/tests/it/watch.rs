//! orders watch: the ladder until fulfilled or canceled.

use store_api_fixtures::AppAction;

use crate::common::Env;
use crate::snap;

#[test]
fn watch_with_advance_climbs_the_ladder_through_the_control_endpoint() {
    let env = Env::start();
    let id = env.submit("watch-1");
    let run = env
        .run(&["orders", "watch", &id, "--advance", "--interval-ms", "10"])
        .code(0);
    snap!("watch_advance_human", run.stdout);
    let order = env.emu.orders(&env.store).pop().unwrap();
    assert_eq!(order.status.unwrap().as_str(), "fulfilled");
}

#[test]
fn watch_prints_json_lines_and_stops_at_a_canceled_order() {
    let env = Env::start();
    let id = env.submit("watch-2");
    env.emu.advance_order(&env.store, &id).unwrap();
    env.emu
        .app_action(&env.store, &id, AppAction::Cancel)
        .unwrap();
    let run = env.run(&["orders", "watch", &id, "--json"]).code(0);
    let lines: Vec<serde_json::Value> = run
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 1);
    assert_eq!(lines[0]["status"], "canceled");
    let human = env.run(&["orders", "watch", &id]).code(0);
    snap!("watch_canceled_human", human.stdout);
}

#[test]
fn advancing_a_held_order_is_refused_and_the_watch_goes_on_polling() {
    let env = Env::start();
    let id = env.submit("watch-3");
    env.emu
        .app_action(&env.store, &id, AppAction::Hold)
        .unwrap();
    let mut child = env
        .std_cmd()
        .args(["orders", "watch", &id, "--advance", "--interval-ms", "20"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the watch has been refused (however long the binary takes to start on a busy machine),
    // then release the order so that it climbs and the watch ends.
    let stderr = child.stderr.take().unwrap();
    let (lines_tx, lines) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        use std::io::BufRead;
        for line in std::io::BufReader::new(stderr)
            .lines()
            .map_while(Result::ok)
        {
            let _ = lines_tx.send(line);
        }
    });
    let refused = "the emulator refused to advance the order (409); no longer advancing";
    let mut seen = Vec::new();
    while !seen.iter().any(|line: &String| line.contains(refused)) {
        match lines.recv_timeout(std::time::Duration::from_secs(30)) {
            Ok(line) => seen.push(line),
            Err(_) => panic!("the watch never reported the refusal: {seen:?}"),
        }
    }
    env.emu
        .app_action(&env.store, &id, AppAction::Release)
        .unwrap();
    for _ in 0..4 {
        env.emu.advance_order(&env.store, &id).unwrap();
    }
    assert!(child.wait().unwrap().success(), "{seen:?}");
    reader.join().unwrap();
}
