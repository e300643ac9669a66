//! Alone in its process (its own test binary, one test): the first thing it does is build a
//! `RemoteEmulator`, before anything else has installed a rustls crypto provider. reqwest panics when it
//! builds a client then (seen under cargo-nextest, where every test has a process of its own).

#[test]
fn a_remote_emulator_is_built_before_anything_installs_a_tls_provider() {
    let remote = store_api_fixtures::RemoteEmulator::new("http://127.0.0.1:9/store-api/2026-08");
    assert_eq!(
        remote.map(|remote| remote.origin()).ok().as_deref(),
        Some("http://127.0.0.1:9")
    );
}
