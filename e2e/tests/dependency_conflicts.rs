//! Issue 18 item 4: two Deployments mount the same ConfigMap and are propagated with `propagateDeps` by policies
//! that disagree on `conflictResolution` and `preserveResourcesOnDeletion`. The ConfigMap's attached binding
//! (`shared-configmap`) takes Karmada's combined values (`Overwrite` if any referrer says so, preserve if any
//! does) and carries a `DependencyPolicyConflict` Warning naming what conflicts. Changing one policy narrows the
//! conflict; deleting the other workload ends it: the values follow the remaining referrer and the Event is no
//! longer recorded.
#![allow(clippy::unwrap_used, clippy::panic)]

use flotilla_api::policy::v1alpha1::PropagationPolicy;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use serde_json::{Value, json};

use flotilla_e2e::resources::{CONFIG_MAP, EVENT, RESOURCE_BINDING, int, text};
use flotilla_e2e::steps::{control_object, event_on, member_object};
use flotilla_e2e::{Env, Options};

flotilla_e2e::scenario!(
    bindings_sharing_a_dependency_combine_their_policies,
    "depconflict",
    Options::default(),
    shared_dependency
);

const ATTACHED: &str = "shared-configmap";
const CONFLICT: &str = "DependencyPolicyConflict";

/// Deployment `name` mounting ConfigMap `shared`, and its policy over `cluster` with `extra` merged into the
/// policy's spec.
async fn workload(
    env: &Env,
    ns: &str,
    name: &str,
    cluster: &str,
    extra: Value,
) -> anyhow::Result<()> {
    let mut spec = json!({
        "propagateDeps": true,
        "resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": name}],
        "placement": {"clusterAffinity": {"clusterNames": [cluster]}}
    });
    if let (Some(spec), Some(extra)) = (spec.as_object_mut(), extra.as_object()) {
        spec.extend(extra.clone());
    }
    Api::<PropagationPolicy>::namespaced(env.karmada.clone(), ns)
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({"metadata": {"name": name}, "spec": spec}))?,
        )
        .await?;
    Api::<Deployment>::namespaced(env.karmada.clone(), ns)
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({
                "metadata": {"name": name, "labels": {"app": name}},
                "spec": {
                    "replicas": 1,
                    "selector": {"matchLabels": {"app": name}},
                    "template": {
                        "metadata": {"labels": {"app": name}},
                        "spec": {
                            "containers": [{"name": "web", "image": "nginx"}],
                            "volumes": [{"name": "config", "configMap": {"name": "shared"}}]
                        }
                    }
                }
            }))?,
        )
        .await?;
    Ok(())
}

/// The `(namespace, name)` of the bindings in a binding's `spec.requiredBy`, sorted.
fn required_by(binding: &Value) -> Vec<String> {
    let mut names: Vec<String> = binding
        .pointer("/spec/requiredBy")
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .filter_map(|s| s.get("name").and_then(Value::as_str).map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

fn combined(binding: &Value) -> (Option<&str>, Option<bool>) {
    (
        text(binding, "/spec/conflictResolution"),
        binding
            .pointer("/spec/preserveResourcesOnDeletion")
            .and_then(Value::as_bool),
    )
}

/// How many times a `DependencyPolicyConflict` Event was recorded on the attached binding (repeats counted).
async fn conflicts_recorded(env: &Env, ns: &str) -> anyhow::Result<i64> {
    let events = EVENT
        .list(&env.karmada, Some(ns))
        .await
        .map_err(anyhow::Error::msg)?;
    Ok(events
        .iter()
        .filter(|e| {
            text(e, "/involvedObject/name") == Some(ATTACHED)
                && text(e, "/reason") == Some(CONFLICT)
        })
        .map(|e| {
            int(e, "/series/count")
                .or_else(|| int(e, "/count"))
                .unwrap_or(1)
        })
        .sum())
}

/// Changes the shared ConfigMap's data to `round` and waits until the attached binding names the changed
/// version: the distributor has attached it again (and recorded any conflict it found) since.
async fn change_config(env: &Env, ns: &str, round: &str) -> anyhow::Result<()> {
    let changed = Api::<ConfigMap>::namespaced(env.karmada.clone(), ns)
        .patch(
            "shared",
            &PatchParams::default(),
            &Patch::Merge(json!({"data": {"round": round}})),
        )
        .await?;
    let version = changed.metadata.resource_version.unwrap_or_default();
    control_object(
        env,
        RESOURCE_BINDING,
        ns,
        ATTACHED,
        &format!("at version {version}"),
        |b| text(b, "/spec/resource/resourceVersion") == Some(version.as_str()),
    )
    .await?;
    Ok(())
}

async fn shared_dependency(env: &Env, ns: &str) -> anyhow::Result<()> {
    Api::<ConfigMap>::namespaced(env.karmada.clone(), ns)
        .create(
            &PostParams::default(),
            &serde_json::from_value(
                json!({"metadata": {"name": "shared"}, "data": {"round": "0"}}),
            )?,
        )
        .await?;
    workload(
        env,
        ns,
        "alpha",
        "member1",
        json!({"conflictResolution": "Overwrite", "preserveResourcesOnDeletion": true}),
    )
    .await?;
    workload(env, ns, "beta", "member2", json!({})).await?;

    // Overwrite wins over Abort, preserving over deleting; the ConfigMap goes wherever either workload goes.
    control_object(
        env,
        RESOURCE_BINDING,
        ns,
        ATTACHED,
        "required by both, Overwrite and preserving",
        |b| {
            required_by(b) == ["alpha-deployment", "beta-deployment"]
                && combined(b) == (Some("Overwrite"), Some(true))
        },
    )
    .await?;
    for cluster in ["member1", "member2"] {
        member_object(env, cluster, CONFIG_MAP, ns, "shared", "propagated", |_| {
            true
        })
        .await?;
    }
    event_on(
        env,
        ns,
        ATTACHED,
        CONFLICT,
        "Dependency policy conflict detected: ConflictResolution conflicted (Overwrite vs Abort); \
         PreserveResourcesOnDeletion conflicted (true vs false).",
    )
    .await?;

    // alpha's policy drops Overwrite: only the preserve setting still conflicts.
    Api::<PropagationPolicy>::namespaced(env.karmada.clone(), ns)
        .patch(
            "alpha",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"conflictResolution": "Abort"}})),
        )
        .await?;
    control_object(
        env,
        RESOURCE_BINDING,
        ns,
        ATTACHED,
        "Abort and preserving",
        |b| combined(b) == (Some("Abort"), Some(true)),
    )
    .await?;
    event_on(
        env,
        ns,
        ATTACHED,
        CONFLICT,
        "Dependency policy conflict detected: PreserveResourcesOnDeletion conflicted (true vs false).",
    )
    .await?;

    // beta goes: alpha alone requires the ConfigMap, with alpha's values, and nothing conflicts any more.
    Api::<Deployment>::namespaced(env.karmada.clone(), ns)
        .delete("beta", &DeleteParams::default())
        .await?;
    control_object(
        env,
        RESOURCE_BINDING,
        ns,
        ATTACHED,
        "required by alpha alone",
        |b| required_by(b) == ["alpha-deployment"] && combined(b) == (Some("Abort"), Some(true)),
    )
    .await?;
    // Each ConfigMap change is attached again; were the conflict still there, each would record it again.
    change_config(env, ns, "1").await?;
    let recorded = conflicts_recorded(env, ns).await?;
    change_config(env, ns, "2").await?;
    let now = conflicts_recorded(env, ns).await?;
    anyhow::ensure!(
        now == recorded,
        "{CONFLICT} was recorded {} more time(s) after the conflict ended",
        now - recorded
    );
    Ok(())
}
