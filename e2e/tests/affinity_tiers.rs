//! Issue 18 item 6: ordered `placement.clusterAffinities` and their `overflowAffinities`.
//!
//! Tiers: a Duplicated Deployment scheduled to the group `primary` (member1, by a label) moves to the group
//! `backup` (member2) once member1 leaves `primary`, and `status.schedulerObservingAffinityName` follows. As in
//! Karmada, it does not move back by itself when member1 rejoins `primary` (a later schedule of the binding
//! starts from the observed group), only when a reschedule is requested (`spec.rescheduleTriggeredAt`, what
//! Karmada's WorkloadRebalancer sets).
//!
//! Overflow: a Divided Deployment whose group `main` (member1) cannot hold every replica spreads the rest to its
//! overflow tier `burst` (member2), and leaves `burst` again when scaled down to what `main` holds.
//!
//! Cluster objects are shared by every scenario of the kube world, so groups are made with a label key of this
//! scenario's own namespace, removed at the end.
#![allow(clippy::unwrap_used, clippy::panic)]

use flotilla_api::policy::v1alpha1::PropagationPolicy;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::jiff;
use kube::api::{Api, Patch, PatchParams, PostParams};
use serde_json::{Value, json};

use flotilla_e2e::resources::{
    CLUSTER, DEPLOYMENT, RESOURCE_BINDING, int, target_clusters, text, web_deployment,
};
use flotilla_e2e::steps::{label_cluster, member_object, member_object_gone, scheduled_binding};
use flotilla_e2e::{Env, Options, wait_for};

flotilla_e2e::scenario!(
    affinity_groups_fail_over_and_return_on_reschedule,
    "tiers",
    Options::default(),
    tiers
);

flotilla_e2e::scenario!(
    overflow_tiers_take_what_the_primary_group_cannot_hold,
    "overflow",
    Options::default(),
    overflow
);

const BINDING: &str = "web-deployment";

async fn create_policy(env: &Env, ns: &str, placement: Value) -> anyhow::Result<()> {
    Api::<PropagationPolicy>::namespaced(env.karmada.clone(), ns)
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({
                "metadata": {"name": "web"},
                "spec": {
                    "resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}],
                    "placement": placement
                }
            }))?,
        )
        .await?;
    Ok(())
}

async fn scale(env: &Env, ns: &str, replicas: i64) -> anyhow::Result<()> {
    Api::<Deployment>::namespaced(env.karmada.clone(), ns)
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"replicas": replicas}})),
        )
        .await?;
    Ok(())
}

/// Waits until the binding is scheduled (its generation observed) with `check` holding; returns it.
async fn scheduled(
    env: &Env,
    ns: &str,
    what: &str,
    check: impl Fn(&Value) -> bool,
) -> anyhow::Result<Value> {
    scheduled_binding(env, ns, BINDING, what, check).await
}

fn observing(binding: &Value) -> Option<&str> {
    text(binding, "/status/schedulerObservingAffinityName")
}

fn on(clusters: &[(&str, i64)]) -> Vec<(String, i64)> {
    clusters
        .iter()
        .map(|(c, r)| ((*c).to_owned(), *r))
        .collect()
}

async fn tiers(env: &Env, ns: &str) -> anyhow::Result<()> {
    let key = format!("tiers.e2e.flotilla.io/{ns}");
    let result = fail_over_and_back(env, ns, &key).await;
    for member in ["member1", "member2"] {
        let _ = label_cluster(env, member, &key, None).await;
    }
    result
}

async fn fail_over_and_back(env: &Env, ns: &str, key: &str) -> anyhow::Result<()> {
    label_cluster(env, "member1", key, Some("primary")).await?;
    label_cluster(env, "member2", key, Some("backup")).await?;
    let group =
        |name: &str| json!({"affinityName": name, "labelSelector": {"matchLabels": {key: name}}});
    create_policy(
        env,
        ns,
        json!({
            "clusterAffinities": [group("primary"), group("backup")],
            "replicaScheduling": {"replicaSchedulingType": "Duplicated"}
        }),
    )
    .await?;
    Api::<Deployment>::namespaced(env.karmada.clone(), ns)
        .create(
            &PostParams::default(),
            &serde_json::from_value(web_deployment())?,
        )
        .await?;
    scheduled(env, ns, "scheduled to the primary group", |b| {
        target_clusters(b) == on(&[("member1", 1)]) && observing(b) == Some("primary")
    })
    .await?;
    member_object(env, "member1", DEPLOYMENT, ns, "web", "propagated", |_| {
        true
    })
    .await?;

    // member1 leaves the primary group: the primary group is empty, so the binding moves to the backup group.
    label_cluster(env, "member1", key, Some("retired")).await?;
    scheduled(env, ns, "moved to the backup group", |b| {
        target_clusters(b) == on(&[("member2", 1)]) && observing(b) == Some("backup")
    })
    .await?;
    member_object(env, "member2", DEPLOYMENT, ns, "web", "propagated", |_| {
        true
    })
    .await?;
    member_object_gone(env, "member1", DEPLOYMENT, ns, "web").await?;

    // member1 rejoins the primary group. Karmada schedules from the observed group onwards, so the next schedule
    // (a scale of the template) keeps the binding in the backup group.
    label_cluster(env, "member1", key, Some("primary")).await?;
    scale(env, ns, 2).await?;
    scheduled(env, ns, "scaled within the backup group", |b| {
        target_clusters(b) == on(&[("member2", 2)]) && observing(b) == Some("backup")
    })
    .await?;

    // A requested reschedule starts from the first group again.
    let binding = scheduled(env, ns, "scheduled", |_| true).await?;
    let last = text(&binding, "/status/lastScheduledTime")
        .and_then(|t| t.parse::<jiff::Timestamp>().ok())
        .unwrap_or_else(jiff::Timestamp::now);
    // Seconds are the wire precision: strictly later than the last schedule, as Karmada requires.
    let trigger = jiff::Timestamp::now().max(last + jiff::SignedDuration::from_secs(1));
    let trigger = trigger.strftime("%Y-%m-%dT%H:%M:%SZ").to_string();
    RESOURCE_BINDING
        .api(&env.karmada, Some(ns))
        .patch(
            BINDING,
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"rescheduleTriggeredAt": trigger}})),
        )
        .await?;
    scheduled(env, ns, "back in the primary group", |b| {
        target_clusters(b) == on(&[("member1", 2)]) && observing(b) == Some("primary")
    })
    .await?;
    member_object(env, "member1", DEPLOYMENT, ns, "web", "back", |d| {
        int(d, "/spec/replicas") == Some(2)
    })
    .await?;
    member_object_gone(env, "member2", DEPLOYMENT, ns, "web").await?;
    Ok(())
}

/// Millicores of a CPU quantity as Clusters report it (`32`, `8000m`).
fn millicores(quantity: &str) -> Option<i64> {
    match quantity.strip_suffix('m') {
        Some(milli) => milli.parse().ok(),
        None => quantity.parse::<i64>().ok().map(|cores| cores * 1000),
    }
}

/// A CPU request that member `cluster` holds a known number of pods of, and that number. Karmada estimates from
/// the Cluster's resource models (`spec.resourceModels`) and how many Nodes each grade counts
/// (`status.resourceSummary.allocatableModelings`): a grade's Node holds `floor(grade's minimum CPU / request)`
/// pods. Which Nodes the members have differs between the worlds, so the request is the minimum CPU of the
/// highest grade that counts a Node: each such Node holds exactly one pod, and Nodes of lower grades none.
/// With `request` given, that request and the capacity for it.
async fn cpu_request_and_capacity(
    env: &Env,
    cluster: &str,
    request: Option<i64>,
) -> anyhow::Result<(i64, i64)> {
    let cluster = CLUSTER
        .get(&env.karmada, None, cluster)
        .await
        .map_err(anyhow::Error::msg)?
        .ok_or_else(|| anyhow::anyhow!("no Cluster {cluster}"))?;
    let min_cpu = |grade: i64| {
        cluster
            .pointer("/spec/resourceModels")?
            .as_array()?
            .iter()
            .find(|m| int(m, "/grade") == Some(grade))?
            .get("ranges")?
            .as_array()?
            .iter()
            .find(|r| text(r, "/name") == Some("cpu"))
            .and_then(|r| text(r, "/min"))
            .and_then(millicores)
    };
    let counted: Vec<(i64, i64)> = cluster
        .pointer("/status/resourceSummary/allocatableModelings")
        .and_then(Value::as_array)
        .map(|ms| {
            ms.iter()
                .filter_map(|m| Some((int(m, "/grade")?, int(m, "/count")?)))
                .filter(|(_, count)| *count > 0)
                .collect()
        })
        .unwrap_or_default();
    let top = counted.iter().map(|(grade, _)| *grade).max();
    let request = request
        .or_else(|| top.and_then(min_cpu))
        .filter(|m| *m > 0)
        .ok_or_else(|| anyhow::anyhow!("no Node of a grade with a CPU minimum: {cluster}"))?;
    let capacity = counted
        .iter()
        .map(|(grade, count)| count * min_cpu(*grade).unwrap_or(0) / request)
        .sum();
    Ok((request, capacity))
}

async fn overflow(env: &Env, ns: &str) -> anyhow::Result<()> {
    // Pods of an earlier run may still hold member1's Nodes until its next status collection.
    let (request, capacity) = wait_for("member1 to report a free Node", || async {
        cpu_request_and_capacity(env, "member1", None)
            .await
            .map_err(|e| format!("{e:#}"))
    })
    .await?;
    let (_, burst_capacity) = cpu_request_and_capacity(env, "member2", Some(request)).await?;
    anyhow::ensure!(
        burst_capacity >= 2,
        "member2 holds {burst_capacity} pods of {request}m CPU, too few to show the overflow"
    );
    create_policy(
        env,
        ns,
        json!({
            "clusterAffinities": [{
                "affinityName": "main",
                "clusterNames": ["member1"],
                "overflowAffinities": [{"affinityName": "burst", "clusterNames": ["member2"]}]
            }],
            "replicaScheduling": {
                "replicaSchedulingType": "Divided",
                "replicaDivisionPreference": "Weighted",
                "weightPreference": {"dynamicWeight": "AvailableReplicas"}
            }
        }),
    )
    .await?;
    let mut deployment = web_deployment();
    deployment["spec"]["replicas"] = json!(capacity + 2);
    deployment["spec"]["template"]["spec"]["containers"][0]["resources"] =
        json!({"requests": {"cpu": format!("{request}m")}});
    Api::<Deployment>::namespaced(env.karmada.clone(), ns)
        .create(&PostParams::default(), &serde_json::from_value(deployment)?)
        .await?;
    // member1 takes all it can hold; only the rest goes to the overflow tier.
    scheduled(env, ns, "spread over both tiers", |b| {
        target_clusters(b) == on(&[("member1", capacity), ("member2", 2)])
            && observing(b) == Some("main")
    })
    .await?;
    member_object(env, "member2", DEPLOYMENT, ns, "web", "overflowed", |d| {
        int(d, "/spec/replicas") == Some(2)
    })
    .await?;

    // Scaled down to what member1 holds: the overflow tier is left.
    scale(env, ns, 1).await?;
    scheduled(env, ns, "back in the main tier", |b| {
        target_clusters(b) == on(&[("member1", 1)])
    })
    .await?;
    member_object_gone(env, "member2", DEPLOYMENT, ns, "web").await?;
    // A Cluster reports the room its Pods left only at its next status collection, and on a real member a
    // deleted Pod counts until its graceful deletion ends; a binding that finds too little room waits in the
    // scheduler's unschedulable queue (up to 5 minutes, as in Karmada). Both tiers must show their room again.
    for (cluster, wanted) in [("member1", capacity - 1), ("member2", burst_capacity)] {
        wait_for(
            &format!("{cluster} to report room for {wanted} pods again"),
            || async {
                match cpu_request_and_capacity(env, cluster, Some(request)).await {
                    Ok((_, room)) if room >= wanted => Ok(()),
                    Ok((_, room)) => Err(format!("room for {room} pods of {wanted}")),
                    Err(e) => Err(format!("{e:#}")),
                }
            },
        )
        .await?;
    }

    // Scaled up past it again: the overflow tier is used again.
    scale(env, ns, capacity + 2).await?;
    let binding = scheduled(env, ns, "overflowing again", |b| {
        let clusters = target_clusters(b);
        clusters.iter().map(|(_, r)| r).sum::<i64>() == capacity + 2
            && clusters.iter().any(|(c, r)| c == "member2" && *r > 0)
    })
    .await?;
    anyhow::ensure!(
        target_clusters(&binding)
            .iter()
            .all(|(c, _)| c == "member1" || c == "member2"),
        "replicas outside the term's tiers: {:?}",
        target_clusters(&binding)
    );
    Ok(())
}
