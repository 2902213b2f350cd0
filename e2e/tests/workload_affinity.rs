//! Issue 18 item 7: `placement.workloadAffinity` (gate `WorkloadAffinity`, on in both worlds as in Karmada's
//! local-up). Deployments labelled with the same value of the policy's `groupByLabelKey` form a group; the
//! binding carries it in `spec.workloadAffinityGroups`.
//!
//! Affinity: the first workload of a group schedules freely (member3, the only member its policy allows); the
//! next, whose policy allows every member, goes to member3 only; one whose policy excludes member3 stays
//! unscheduled (`NoClusterFit`). Anti-affinity: the first takes member1; the next, allowed member1 and member2,
//! gets member2 only; a third allowed the same stays unscheduled.
#![allow(clippy::unwrap_used, clippy::panic)]

use flotilla_api::policy::v1alpha1::PropagationPolicy;
use k8s_openapi::api::apps::v1::Deployment;
use kube::api::{Api, PostParams};
use serde_json::{Value, json};

use flotilla_e2e::resources::{RESOURCE_BINDING, int, target_clusters, text, web_deployment};
use flotilla_e2e::steps::control_object;
use flotilla_e2e::{Env, Options};

flotilla_e2e::scenario!(
    workloads_of_an_affinity_group_share_members,
    "together",
    Options::default(),
    together
);

flotilla_e2e::scenario!(
    workloads_of_an_anti_affinity_group_keep_apart,
    "apart",
    Options::default(),
    apart
);

const TOGETHER: &str = "e2e.flotilla.io/together";
const APART: &str = "e2e.flotilla.io/apart";

/// Deployment `name` labelled `key: group`, and a Duplicated policy of its own over `clusters` with `rule`
/// as its `workloadAffinity`.
async fn workload(
    env: &Env,
    ns: &str,
    name: &str,
    (key, group): (&str, &str),
    clusters: &[&str],
    rule: Value,
) -> anyhow::Result<()> {
    Api::<PropagationPolicy>::namespaced(env.karmada.clone(), ns)
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({
                "metadata": {"name": name},
                "spec": {
                    "resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": name}],
                    "placement": {
                        "clusterAffinity": {"clusterNames": clusters},
                        "replicaScheduling": {"replicaSchedulingType": "Duplicated"},
                        "workloadAffinity": rule
                    }
                }
            }))?,
        )
        .await?;
    let mut deployment = web_deployment();
    deployment["metadata"]["name"] = json!(name);
    deployment["metadata"]["labels"][key] = json!(group);
    Api::<Deployment>::namespaced(env.karmada.clone(), ns)
        .create(&PostParams::default(), &serde_json::from_value(deployment)?)
        .await?;
    Ok(())
}

fn scheduled_condition(binding: &Value) -> Option<&Value> {
    binding
        .pointer("/status/conditions")?
        .as_array()?
        .iter()
        .find(|c| c.get("type").and_then(Value::as_str) == Some("Scheduled"))
}

/// Waits until `name`'s binding is scheduled to exactly `clusters` (1 replica each).
async fn placed(env: &Env, ns: &str, name: &str, clusters: &[&str]) -> anyhow::Result<Value> {
    let want: Vec<(String, i64)> = clusters.iter().map(|c| ((*c).to_owned(), 1)).collect();
    control_object(
        env,
        RESOURCE_BINDING,
        ns,
        &format!("{name}-deployment"),
        &format!("scheduled to {clusters:?}"),
        |b| {
            target_clusters(b) == want
                && scheduled_condition(b).and_then(|c| text(c, "/status")) == Some("True")
                && int(b, "/metadata/generation") == int(b, "/status/schedulerObservedGeneration")
        },
    )
    .await
}

/// Waits until `name`'s binding failed to schedule with no cluster fitting, for `reason` among others.
async fn unscheduled(env: &Env, ns: &str, name: &str, reason: &str) -> anyhow::Result<()> {
    let binding = control_object(
        env,
        RESOURCE_BINDING,
        ns,
        &format!("{name}-deployment"),
        "left unscheduled",
        |b| {
            scheduled_condition(b).is_some_and(|c| {
                text(c, "/status") == Some("False")
                    && text(c, "/reason") == Some("NoClusterFit")
                    && text(c, "/message").is_some_and(|m| m.contains(reason))
            })
        },
    )
    .await?;
    anyhow::ensure!(
        target_clusters(&binding).is_empty(),
        "an unschedulable workload got clusters: {binding}"
    );
    Ok(())
}

async fn together(env: &Env, ns: &str) -> anyhow::Result<()> {
    let rule = json!({"affinity": {"groupByLabelKey": TOGETHER}});
    // The first of the group is not held back by the group.
    workload(
        env,
        ns,
        "db",
        (TOGETHER, "shop"),
        &["member3"],
        rule.clone(),
    )
    .await?;
    let first = placed(env, ns, "db", &["member3"]).await?;
    anyhow::ensure!(
        first.pointer("/spec/workloadAffinityGroups")
            == Some(&json!({"affinityGroup": format!("{TOGETHER}=shop")})),
        "the binding does not carry its group: {first}"
    );
    // Allowed every member, it joins the group's member only.
    workload(
        env,
        ns,
        "cache",
        (TOGETHER, "shop"),
        &["member1", "member2", "member3"],
        rule.clone(),
    )
    .await?;
    placed(env, ns, "cache", &["member3"]).await?;
    // Not allowed the group's member: unscheduled.
    workload(
        env,
        ns,
        "queue",
        (TOGETHER, "shop"),
        &["member1", "member2"],
        rule.clone(),
    )
    .await?;
    unscheduled(
        env,
        ns,
        "queue",
        "2 ResourceBinding with the same affinity group does not target this cluster",
    )
    .await?;
    // Another group is free.
    workload(
        env,
        ns,
        "other",
        (TOGETHER, "other"),
        &["member1", "member2"],
        rule,
    )
    .await?;
    placed(env, ns, "other", &["member1", "member2"]).await?;
    Ok(())
}

async fn apart(env: &Env, ns: &str) -> anyhow::Result<()> {
    let rule = json!({"antiAffinity": {"groupByLabelKey": APART}});
    workload(env, ns, "web1", (APART, "web"), &["member1"], rule.clone()).await?;
    placed(env, ns, "web1", &["member1"]).await?;
    workload(
        env,
        ns,
        "web2",
        (APART, "web"),
        &["member1", "member2"],
        rule.clone(),
    )
    .await?;
    placed(env, ns, "web2", &["member2"]).await?;
    workload(
        env,
        ns,
        "web3",
        (APART, "web"),
        &["member1", "member2"],
        rule,
    )
    .await?;
    unscheduled(
        env,
        ns,
        "web3",
        "2 cluster already has workload with the same anti-affinity group",
    )
    .await?;
    Ok(())
}
