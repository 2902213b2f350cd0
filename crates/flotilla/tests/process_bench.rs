//! `flotilla bench` on the embedded environment: its replay of the propagation's writes from a plain client is
//! only a measure of the servers' capacity when every replayed update is stored as the propagation's were, and
//! when the members' controllers bring the copied Deployments up as they brought up the propagated ones.
#![allow(clippy::unwrap_used, clippy::panic, clippy::expect_used)]

use std::process::Command;

use serde_json::Value;

#[test]
fn bench_replays_writes_that_the_servers_store() {
    let output = Command::new(env!("CARGO_BIN_EXE_flotilla"))
        .args(["bench", "--templates", "10", "--members", "2", "--json"])
        .args(["--timeout-secs", "120"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "flotilla bench failed: {stderr}");
    let report: Value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("the report is not JSON ({e}); stderr: {stderr}"));
    let field = |name: &str| {
        report
            .get(name)
            .cloned()
            .unwrap_or_else(|| panic!("no {name} in {report}"))
    };
    // The propagation wrote each Work's status (two merge patches of works/status) and the binding's
    // aggregated status: the replay writes as many status patches, and each one is stored.
    let per_template = field("control_plane_writes_by_resource_per_template");
    assert!(
        per_template["works.work.karmada.io/status PATCH"].as_f64() >= Some(1.0),
        "no Work status patches to replay: {per_template}"
    );
    assert_eq!(field("replayed_updates_unchanged"), 0, "{stderr}");
    // The copies' replicas became ready on the members, no sooner than the replay's last write was answered.
    let writes = field("same_writes_plain_client_ms").as_u64().unwrap();
    let ready = field("same_writes_plain_client_until_members_ready_ms")
        .as_u64()
        .unwrap_or_else(|| panic!("the members' copies never became ready: {stderr}"));
    assert!(ready >= writes, "{ready} ms < {writes} ms");
    assert!(field("aggregated_to_plain_writes_until_members_ready_ratio").is_f64());
}
