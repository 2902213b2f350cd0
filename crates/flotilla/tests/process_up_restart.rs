//! Statuses that are true after a restart: the README walkthrough run once without interruption and once with
//! `flotilla up` restarted in its middle and at its end; every binding's conditions and aggregated items must
//! come out the same (timestamps aside), with no object changed after the restart.
#![allow(clippy::unwrap_used, clippy::panic)]

use crate::common;

use std::collections::BTreeMap;
use std::path::Path;

use flotilla_testing::kubectl::{get_json, kubectl_bins, must};
use serde_json::{Value, json};

use common::{Up, assert_clean, eventually, up};

const EXAMPLES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../manifests/examples");

fn kubectl() -> String {
    kubectl_bins().remove(0)
}

fn apply(up: &Up, files: &[String]) {
    let mut args = vec!["apply".to_string()];
    for file in files {
        args.push("-f".into());
        args.push(file.clone());
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    must(&kubectl(), &up.karmada, &args);
}

/// Every binding, by kind and name, with what a controller computed for it: its conditions (type, status,
/// reason, message) and, per cluster, whether its Work applied and how healthy its object is.
fn bindings(karmada: &Path) -> BTreeMap<String, Value> {
    let list = get_json(
        &kubectl(),
        karmada,
        &["get", "resourcebindings,clusterresourcebindings", "-A"],
    );
    let mut out = BTreeMap::new();
    for item in list["items"].as_array().cloned().unwrap_or_default() {
        let name = format!(
            "{} {}/{}",
            item["kind"].as_str().unwrap_or_default(),
            item["metadata"]["namespace"].as_str().unwrap_or_default(),
            item["metadata"]["name"].as_str().unwrap_or_default()
        );
        let field = |v: &Value, keys: &[&str]| -> Value {
            Value::Object(
                keys.iter()
                    .map(|k| ((*k).to_string(), v[*k].clone()))
                    .collect(),
            )
        };
        let mut conditions: Vec<Value> = item["status"]["conditions"]
            .as_array()
            .map(|cs| {
                cs.iter()
                    .map(|c| field(c, &["type", "status", "reason", "message"]))
                    .collect()
            })
            .unwrap_or_default();
        conditions.sort_by_key(|c| c["type"].to_string());
        let mut aggregated: Vec<Value> = item["status"]["aggregatedStatus"]
            .as_array()
            .map(|items| {
                items
                    .iter()
                    .map(|i| field(i, &["clusterName", "applied", "health"]))
                    .collect()
            })
            .unwrap_or_default();
        aggregated.sort_by_key(|i| i["clusterName"].to_string());
        out.insert(
            name,
            json!({"conditions": conditions, "aggregatedStatus": aggregated}),
        );
    }
    out
}

/// Whether every binding is fully applied and reports every cluster it was scheduled to.
fn settled(karmada: &Path, expected: usize) -> Option<BTreeMap<String, Value>> {
    let now = bindings(karmada);
    let done = now.len() == expected
        && now.values().all(|b| {
            let applied = b["conditions"].as_array().is_some_and(|cs| {
                cs.iter()
                    .any(|c| c["type"] == "FullyApplied" && c["status"] == "True")
            });
            let items = b["aggregatedStatus"].as_array().map_or(0, Vec::len);
            applied && items > 0
        });
    done.then_some(now)
}

/// Waits until every member cluster lists the Workload kind, so the scheduler divides over all three.
async fn workload_served(up: &Up) {
    eventually("every Cluster to list the Workload kind", || async {
        let clusters = get_json(&kubectl(), &up.karmada, &["get", "clusters"]);
        let items = clusters["items"].as_array()?.clone();
        let all = items.len() == 3
            && items.iter().all(|c| {
                c["status"]["apiEnablements"].as_array().is_some_and(|es| {
                    es.iter().any(|e| {
                        e["groupVersion"] == "workload.example.io/v1alpha1"
                            && e["resources"]
                                .as_array()
                                .is_some_and(|rs| rs.iter().any(|r| r["kind"] == "Workload"))
                    })
                })
            });
        all.then_some(())
    })
    .await;
}

fn deployment() -> Vec<String> {
    vec![format!("{EXAMPLES}/nginx-deployment.yaml")]
}

fn workload_crd() -> Vec<String> {
    vec![
        format!("{EXAMPLES}/workload-crd.yaml"),
        format!("{EXAMPLES}/workload-crd-cpp.yaml"),
    ]
}

fn workload() -> Vec<String> {
    vec![format!("{EXAMPLES}/workload.yaml")]
}

/// Waits until every binding equals its entry in `fresh`; on a timeout, prints both for comparison.
async fn equals_fresh(up: &Up, fresh: &BTreeMap<String, Value>, when: &str) {
    let last = ShownOnFailure {
        fresh,
        seen: std::sync::Mutex::default(),
    };
    eventually(
        &format!("every binding {when} to equal the fresh run's"),
        || async {
            let now = bindings(&up.karmada);
            let same = &now == fresh;
            *last.seen.lock().unwrap() = now;
            same.then_some(())
        },
    )
    .await;
}

/// What a failed comparison saw last, printed when the test panics.
struct ShownOnFailure<'a> {
    fresh: &'a BTreeMap<String, Value>,
    seen: std::sync::Mutex<BTreeMap<String, Value>>,
}

impl Drop for ShownOnFailure<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            let seen = self.seen.lock().map(|s| s.clone()).unwrap_or_default();
            eprintln!(
                "fresh run:\n{}\nthis run:\n{}",
                serde_json::to_string_pretty(self.fresh).unwrap_or_default(),
                serde_json::to_string_pretty(&seen).unwrap_or_default()
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn binding_conditions_after_restarts_equal_a_fresh_run() {
    let args = ["--webhook-example", "--simulator-delay-ms", "50"];

    // The walkthrough without interruption.
    let fresh_dir = tempfile::tempdir().unwrap();
    let fresh_up = up(fresh_dir.path(), &args);
    apply(&fresh_up, &deployment());
    apply(&fresh_up, &workload_crd());
    workload_served(&fresh_up).await;
    apply(&fresh_up, &workload());
    let fresh = eventually(
        "the fresh walkthrough's three bindings to settle",
        || async { settled(&fresh_up.karmada, 3) },
    )
    .await;
    assert_clean(&fresh_up.terminate());

    // The same walkthrough, restarted once the CRD is propagated and again at its end.
    let dir = tempfile::tempdir().unwrap();
    let first = up(dir.path(), &args);
    apply(&first, &deployment());
    apply(&first, &workload_crd());
    eventually(
        "the Deployment's and the CRD's bindings to settle",
        || async { settled(&first.karmada, 2) },
    )
    .await;
    assert_clean(&first.terminate());

    let second = up(dir.path(), &args);
    let before: BTreeMap<String, Value> = fresh
        .iter()
        .filter(|(name, _)| !name.ends_with("/nginx-workload"))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    equals_fresh(&second, &before, "after the first restart").await;
    workload_served(&second).await;
    apply(&second, &workload());
    equals_fresh(&second, &fresh, "at the walkthrough's end").await;
    assert_clean(&second.terminate());

    let third = up(dir.path(), &args);
    equals_fresh(&third, &fresh, "after the second restart").await;
    assert_clean(&third.terminate());
}
