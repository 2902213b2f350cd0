//! Issue 11 scenario 2: application failover (docs/FAILOVER.md). A Workload placed on one of member1 and
//! member2 is reported unhealthy there for longer than `tolerationSeconds`; it moves to the other member, the
//! old copy is purged at once (`purgeMode: Directly`), and the new copy carries the `statePreservation` label
//! with the value the old member reported.
//!
//! The example webhook's Workload is healthy when `status.readyReplicas` equals `spec.replicas`, and nothing in
//! either world writes a Workload's status on a member (no operator runs there), so a status patch on the member
//! copy is a reliable way to make it unhealthy or healthy in both worlds.
#![allow(clippy::unwrap_used, clippy::panic)]

use std::time::Duration;

use kube::api::{Patch, PatchParams};
use serde_json::{Value, json};

use flotilla_e2e::resources::{RESOURCE_BINDING, WORK, WORKLOAD, aggregated_item, brief, text};
use flotilla_e2e::steps::{
    apply, control_object, install_workload_crd, member_object, member_object_gone,
};
use flotilla_e2e::wait::{patience, wait_within};
use flotilla_e2e::{Env, Kubectl, Options};

const BINDING: &str = "app-workload";
const LABEL: &str = "failover.example.com/ready-replicas";
const PRODUCER: &str = "resource-binding-application-failover-controller";
/// Long enough for the scenario to report a fresh copy healthy before its toleration ends, even on a busy
/// machine.
const TOLERATION_SECONDS: u64 = 20;

flotilla_e2e::scenario!(
    unhealthy_application_moves_with_its_preserved_state,
    "appfo",
    Options {
        webhook_example: true,
        ..Options::default()
    },
    application_failover
);

fn manifests() -> String {
    let workload = json!({
        "apiVersion": "workload.example.io/v1alpha1",
        "kind": "Workload",
        "metadata": {"name": "app"},
        "spec": {
            "replicas": 3,
            "template": {
                "metadata": {"labels": {"app": "app"}},
                "spec": {"containers": [{"name": "app", "image": "nginx"}]}
            }
        }
    });
    let policy = json!({
        "apiVersion": "policy.karmada.io/v1alpha1",
        "kind": "PropagationPolicy",
        "metadata": {"name": "app"},
        "spec": {
            "resourceSelectors": [{"apiVersion": "workload.example.io/v1alpha1", "kind": "Workload", "name": "app"}],
            "propagateDeps": true,
            "placement": {
                "clusterAffinity": {"clusterNames": ["member1", "member2"]},
                "spreadConstraints": [{"spreadByField": "cluster", "maxGroups": 1, "minGroups": 1}],
                "replicaScheduling": {"replicaSchedulingType": "Duplicated"}
            },
            "failover": {"application": {
                "decisionConditions": {"tolerationSeconds": TOLERATION_SECONDS},
                "purgeMode": "Directly",
                "statePreservation": {"rules": [{"aliasLabelName": LABEL, "jsonPath": "{ .readyReplicas }"}]}
            }}
        }
    });
    format!("{workload}\n---\n{policy}\n")
}

/// Reports `ready` ready replicas for the copy on `member`.
async fn report_ready(env: &Env, member: &str, ns: &str, ready: i64) -> anyhow::Result<()> {
    WORKLOAD
        .api(env.member(member)?, Some(ns))
        .patch_status(
            "app",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"readyReplicas": ready}})),
        )
        .await?;
    Ok(())
}

/// Waits until the binding reports `health` for `member`'s copy.
async fn health_is(env: &Env, ns: &str, member: &str, health: &str) -> anyhow::Result<Value> {
    control_object(
        env,
        RESOURCE_BINDING,
        ns,
        BINDING,
        &format!("with {member}'s copy {health}"),
        |rb| aggregated_item(rb, member).is_some_and(|i| i["health"] == health),
    )
    .await
}

/// JSON pointer of the preserved label.
fn label_pointer() -> String {
    format!("/metadata/labels/{}", LABEL.replace('/', "~1"))
}

fn clusters(binding: &Value) -> Vec<&str> {
    binding
        .pointer("/spec/clusters")
        .and_then(Value::as_array)
        .map(|cs| cs.iter().filter_map(|c| c["name"].as_str()).collect())
        .unwrap_or_default()
}

async fn application_failover(env: &Env, ns: &str) -> anyhow::Result<()> {
    let kubectl = Kubectl::newest();
    install_workload_crd(env, &kubectl).await?;
    let file = tempfile::NamedTempFile::new()?;
    std::fs::write(file.path(), manifests())?;
    apply(env, &kubectl, Some(ns), file.path()).await?;

    // Placed on one member; its copy starts unhealthy (no status) and is reported healthy within the toleration.
    let placed = control_object(
        env,
        RESOURCE_BINDING,
        ns,
        BINDING,
        "placed on one member",
        |rb| clusters(rb).len() == 1,
    )
    .await?;
    let from = clusters(&placed)[0].to_owned();
    let to = if from == "member1" {
        "member2"
    } else {
        "member1"
    };
    member_object(env, &from, WORKLOAD, ns, "app", "propagated", |_| true).await?;
    report_ready(env, &from, ns, 3).await?;
    health_is(env, ns, &from, "Healthy").await?;

    // Unhealthy for longer than the toleration: evicted with Karmada's task, state preserved from its status.
    report_ready(env, &from, ns, 2).await?;
    health_is(env, ns, &from, "Unhealthy").await?;
    // The toleration runs on top of the usual patience.
    let within = patience() + Duration::from_secs(TOLERATION_SECONDS);
    let evicted = wait_within(
        &format!("{BINDING} to be evicted from {from}"),
        within,
        || async {
            let rb = RESOURCE_BINDING
                .get(&env.karmada, Some(ns), BINDING)
                .await?
                .ok_or("absent")?;
            let task = rb
                .pointer("/spec/gracefulEvictionTasks")
                .and_then(Value::as_array)
                .and_then(|ts| ts.iter().find(|t| t["fromCluster"] == from.as_str()))
                .cloned();
            task.ok_or_else(|| brief(&rb["spec"]))
        },
    )
    .await?;
    let expected = json!({
        "fromCluster": from,
        "purgeMode": "Directly",
        "replicas": 3,
        "reason": "ApplicationFailure",
        "producer": PRODUCER,
        "preservedLabelState": {LABEL: "2"},
        "clustersBeforeFailover": [from],
    });
    for (field, want) in expected.as_object().into_iter().flatten() {
        anyhow::ensure!(
            evicted.get(field) == Some(want),
            "eviction task field {field}: want {want}, got {}",
            brief(&evicted)
        );
    }

    // Directly: the old copy goes at once; the scheduler places the binding on the other member, whose copy
    // carries the preserved label.
    member_object_gone(env, &from, WORKLOAD, ns, "app").await?;
    member_object(
        env,
        to,
        WORKLOAD,
        ns,
        "app",
        &format!("with label {LABEL}=2"),
        |w| text(w, &label_pointer()) == Some("2"),
    )
    .await?;
    let old_works = WORK
        .list(&env.karmada, Some(&format!("karmada-es-{from}")))
        .await
        .map_err(anyhow::Error::msg)?;
    let of_binding = |w: &&Value| {
        text(
            w,
            "/metadata/annotations/resourcebinding.karmada.io~1namespace",
        ) == Some(ns)
            && text(w, "/metadata/annotations/resourcebinding.karmada.io~1name") == Some(BINDING)
    };
    anyhow::ensure!(
        !old_works.iter().any(|w| of_binding(&w)),
        "the Work on {from} outlived a Directly purge"
    );

    // The new copy reported healthy: the eviction task is done with, and the binding stays on the new member.
    report_ready(env, to, ns, 3).await?;
    let settled = control_object(
        env,
        RESOURCE_BINDING,
        ns,
        BINDING,
        &format!("on {to} only, healthy, without eviction tasks"),
        |rb| {
            clusters(rb) == [to]
                && rb
                    .pointer("/spec/gracefulEvictionTasks")
                    .and_then(Value::as_array)
                    .is_none_or(Vec::is_empty)
                && aggregated_item(rb, to).is_some_and(|i| i["health"] == "Healthy")
        },
    )
    .await?;
    anyhow::ensure!(
        aggregated_item(&settled, &from).is_none(),
        "{from} still reports: {}",
        brief(&settled["status"])
    );
    // Injected only while the task lasts (Karmada's rule): with it gone, the Work and the copy drop the label.
    member_object(
        env,
        to,
        WORKLOAD,
        ns,
        "app",
        &format!("without label {LABEL}"),
        |w| w.pointer(&label_pointer()).is_none(),
    )
    .await?;
    Ok(())
}
