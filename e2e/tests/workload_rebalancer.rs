//! WorkloadRebalancer (`apps.karmada.io/v1alpha1`): a one-off request to schedule workloads afresh.
//!
//! Two Duplicated Deployments, `web` and `api`, are placed by `clusterAffinities` with the groups `first`
//! (member1) and `second` (member2). member1 leaves `first`, so both move to `second`; member1 rejoins `first`,
//! and as in Karmada they stay where they are. A WorkloadRebalancer naming `web`, a Deployment that has no
//! binding and a propagated ClusterRole then brings `web` back to `first`, asks the ClusterResourceBinding to
//! reschedule, and records the missing one as `Failed` (`ReferencedBindingNotFound`); its spec changed to the
//! ClusterRole and `api` brings `api` back too, keeping `web`'s success and dropping the failure. With
//! `ttlSecondsAfterFinished` the rebalancer deletes itself once that time is up after it finished, also when
//! created with it.
//!
//! Cluster objects, rebalancers, ClusterRoles and ClusterPropagationPolicies are shared by every scenario of the
//! kube world, so groups are made with a label key of this scenario's own, and every cluster-scoped object is
//! named after the scenario's namespace and removed on the way out, also when the scenario fails.
#![allow(clippy::unwrap_used, clippy::panic)]

use std::time::Instant;

use flotilla_api::apps::v1alpha1::WorkloadRebalancer;
use flotilla_api::policy::v1alpha1::{ClusterPropagationPolicy, PropagationPolicy};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::rbac::v1::ClusterRole;
use k8s_openapi::jiff::Timestamp;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use serde_json::{Value, json};

use flotilla_e2e::resources::{
    CLUSTER, CLUSTER_RESOURCE_BINDING, DEPLOYMENT, WORKLOAD_REBALANCER, int, target_clusters, text,
    web_deployment,
};
use flotilla_e2e::steps::{
    label_cluster, member_object, member_object_gone, object_within, scheduled_binding,
};
use flotilla_e2e::wait::patience;
use flotilla_e2e::{Env, Options, Undo, wait_for};

flotilla_e2e::scenario!(
    rebalancer_reschedules_workloads_back_to_the_first_group,
    "rebalance",
    Options::default(),
    rebalance
);

/// A timestamp field of an object, if set and well-formed.
fn time(object: &Value, pointer: &str) -> Option<Timestamp> {
    text(object, pointer)?.parse().ok()
}

/// Waits until the clock has passed the second of `instant`: timestamps are stored to the second, and a
/// reschedule is requested only by a `rescheduleTriggeredAt` strictly later than `lastScheduledTime`.
async fn clock_past(instant: Timestamp) -> anyhow::Result<()> {
    wait_for(&format!("the clock to pass {instant}"), || async move {
        if Timestamp::now().as_second() > instant.as_second() {
            Ok(())
        } else {
            Err(format!("now {}", Timestamp::now()))
        }
    })
    .await
}

/// The workload reference of Deployment `ns/name` in a rebalancer.
fn deployment_ref(ns: &str, name: &str) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment", "namespace": ns, "name": name})
}

fn cluster_role_ref(name: &str) -> Value {
    json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "name": name})
}

/// Creates WorkloadRebalancer `name` with `spec`; returns it as stored.
async fn create_rebalancer(env: &Env, name: &str, spec: Value) -> anyhow::Result<Value> {
    let rebalancer: WorkloadRebalancer = serde_json::from_value(json!({
        "apiVersion": "apps.karmada.io/v1alpha1",
        "kind": "WorkloadRebalancer",
        "metadata": {"name": name},
        "spec": spec
    }))?;
    let created = Api::<WorkloadRebalancer>::all(env.karmada.clone())
        .create(&PostParams::default(), &rebalancer)
        .await?;
    Ok(serde_json::to_value(created)?)
}

/// Waits until rebalancer `name` has observed its generation, finished, and lists exactly `expected`.
async fn rebalancer_done(
    env: &Env,
    name: &str,
    what: &str,
    expected: &Value,
) -> anyhow::Result<Value> {
    object_within(
        &env.karmada,
        "the control plane",
        WORKLOAD_REBALANCER,
        None,
        name,
        what,
        patience(),
        |r| {
            r.pointer("/status/observedWorkloads") == Some(expected)
                && int(r, "/status/observedGeneration") == int(r, "/metadata/generation")
                && time(r, "/status/finishTime").is_some()
        },
    )
    .await
}

/// Waits until rebalancer `name` is gone.
async fn rebalancer_gone(env: &Env, name: &str) -> anyhow::Result<()> {
    let karmada = &env.karmada;
    wait_for(
        &format!("WorkloadRebalancer {name} to delete itself"),
        || async move {
            match WORKLOAD_REBALANCER.get(karmada, None, name).await? {
                Some(r) => Err(flotilla_e2e::resources::brief(&r)),
                None => Ok(()),
            }
        },
    )
    .await
}

/// Whether a binding was asked to reschedule at `requested` and has been scheduled since (Karmada's check).
fn rescheduled_at(binding: &Value, requested: Timestamp) -> bool {
    time(binding, "/spec/rescheduleTriggeredAt") == Some(requested)
        && time(binding, "/status/lastScheduledTime").is_some_and(|last| last >= requested)
}

/// The label that schedules the bindings in the second group again, without changing the groups.
fn sync_key(key: &str) -> String {
    format!("{key}-sync")
}

fn observing(binding: &Value) -> Option<&str> {
    text(binding, "/status/schedulerObservingAffinityName")
}

fn on(cluster: &str) -> Vec<(String, i64)> {
    vec![(cluster.to_owned(), 1)]
}

/// Waits until Deployment `ns/name`'s binding, asked at `requested`, is scheduled back to the first group and
/// the Deployment has moved from member2 to member1.
async fn back_in_the_first_group(
    env: &Env,
    ns: &str,
    name: &str,
    requested: Timestamp,
) -> anyhow::Result<()> {
    scheduled_binding(
        env,
        ns,
        &format!("{name}-deployment"),
        "rescheduled back to the first group",
        |b| {
            target_clusters(b) == on("member1")
                && observing(b) == Some("first")
                && rescheduled_at(b, requested)
        },
    )
    .await?;
    member_object(env, "member1", DEPLOYMENT, ns, name, "back", |_| true).await?;
    member_object_gone(env, "member2", DEPLOYMENT, ns, name).await
}

async fn rebalance(env: &Env, ns: &str) -> anyhow::Result<()> {
    let key = format!("rebalance.e2e.flotilla.io/{ns}");
    let role = ns.to_owned();
    let (rebalancer, ttl_rebalancer) = (ns.to_owned(), format!("{ns}-ttl"));
    let undo = {
        let (key, role, names) = (
            key.clone(),
            role.clone(),
            [rebalancer.clone(), ttl_rebalancer.clone()],
        );
        Undo::new(
            env,
            format!("remove label {key} from the members and the cluster-scoped objects {role}*"),
            move |client| async move {
                let delete = DeleteParams::default();
                for name in &names {
                    let _ = Api::<WorkloadRebalancer>::all(client.clone())
                        .delete(name, &delete)
                        .await;
                }
                let _ = Api::<ClusterPropagationPolicy>::all(client.clone())
                    .delete(&role, &delete)
                    .await;
                let _ = Api::<ClusterRole>::all(client.clone())
                    .delete(&role, &delete)
                    .await;
                let clusters = CLUSTER.api(&client, None);
                let labels = json!({"metadata": {"labels": {&key: null, sync_key(&key): null}}});
                for member in ["member1", "member2"] {
                    clusters
                        .patch(member, &PatchParams::default(), &Patch::Merge(&labels))
                        .await?;
                }
                Ok(())
            },
        )
    };
    rebalance_steps(env, ns, &key, &role, &rebalancer, &ttl_rebalancer).await?;
    undo.run(&env.karmada).await
}

async fn rebalance_steps(
    env: &Env,
    ns: &str,
    key: &str,
    role: &str,
    rebalancer: &str,
    ttl_rebalancer: &str,
) -> anyhow::Result<()> {
    label_cluster(env, "member1", key, Some("first")).await?;
    label_cluster(env, "member2", key, Some("second")).await?;
    let group =
        |name: &str| json!({"affinityName": name, "labelSelector": {"matchLabels": {key: name}}});
    let selector =
        |name: &str| json!({"apiVersion": "apps/v1", "kind": "Deployment", "name": name});
    let policy: PropagationPolicy = serde_json::from_value(json!({
        "metadata": {"name": "groups"},
        "spec": {
            "resourceSelectors": [selector("web"), selector("api")],
            "placement": {
                "clusterAffinities": [group("first"), group("second")],
                "replicaScheduling": {"replicaSchedulingType": "Duplicated"}
            }
        }
    }))?;
    Api::<PropagationPolicy>::namespaced(env.karmada.clone(), ns)
        .create(&PostParams::default(), &policy)
        .await?;
    let deployments = Api::<Deployment>::namespaced(env.karmada.clone(), ns);
    for name in ["web", "api"] {
        let mut deployment = web_deployment();
        deployment["metadata"]["name"] = json!(name);
        deployments
            .create(&PostParams::default(), &serde_json::from_value(deployment)?)
            .await?;
    }
    // A cluster-scoped workload, whose binding is a ClusterResourceBinding.
    let cpp: ClusterPropagationPolicy = serde_json::from_value(json!({
        "metadata": {"name": role},
        "spec": {
            "resourceSelectors": [{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "name": role}],
            "placement": {"clusterAffinity": {"clusterNames": ["member1"]}}
        }
    }))?;
    Api::<ClusterPropagationPolicy>::all(env.karmada.clone())
        .create(&PostParams::default(), &cpp)
        .await?;
    let cluster_role: ClusterRole = serde_json::from_value(json!({
        "metadata": {"name": role},
        "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}]
    }))?;
    Api::<ClusterRole>::all(env.karmada.clone())
        .create(&PostParams::default(), &cluster_role)
        .await?;

    for name in ["web", "api"] {
        scheduled_binding(
            env,
            ns,
            &format!("{name}-deployment"),
            "scheduled to the first group",
            |b| target_clusters(b) == on("member1") && observing(b) == Some("first"),
        )
        .await?;
    }
    member_object(env, "member1", DEPLOYMENT, ns, "web", "propagated", |_| {
        true
    })
    .await?;

    // member1 leaves the first group: both move to the second.
    label_cluster(env, "member1", key, Some("retired")).await?;
    let mut last = Timestamp::UNIX_EPOCH;
    for name in ["web", "api"] {
        let binding = scheduled_binding(
            env,
            ns,
            &format!("{name}-deployment"),
            "moved to the second group",
            |b| target_clusters(b) == on("member2") && observing(b) == Some("second"),
        )
        .await?;
        last = last.max(time(&binding, "/status/lastScheduledTime").unwrap_or(last));
    }
    member_object_gone(env, "member1", DEPLOYMENT, ns, "web").await?;

    // member1 rejoins the first group; the bindings stay in the second, as in Karmada. Relabelling member2, a
    // cluster of their group, schedules them again: once that schedule is seen, the scheduler has seen member1
    // back in the first group too (one watch of Clusters, in order), so the rebalancer's schedule will.
    clock_past(last).await?;
    let moved = last;
    label_cluster(env, "member1", key, Some("first")).await?;
    label_cluster(env, "member2", &sync_key(key), Some("yes")).await?;
    for name in ["web", "api"] {
        let binding = scheduled_binding(
            env,
            ns,
            &format!("{name}-deployment"),
            "scheduled again, still in the second group",
            |b| {
                target_clusters(b) == on("member2")
                    && observing(b) == Some("second")
                    && time(b, "/status/lastScheduledTime").is_some_and(|t| t > moved)
            },
        )
        .await?;
        last = last.max(time(&binding, "/status/lastScheduledTime").unwrap_or(last));
    }
    label_cluster(env, "member2", &sync_key(key), None).await?;
    let role_binding = format!("{role}-clusterrole");
    let crb = object_within(
        &env.karmada,
        "the control plane",
        CLUSTER_RESOURCE_BINDING,
        None,
        &role_binding,
        "scheduled to member1",
        patience(),
        |b| target_clusters(b) == vec![("member1".to_owned(), 0)],
    )
    .await?;
    last = last.max(time(&crb, "/status/lastScheduledTime").unwrap_or(last));
    // The rebalancer's creation must come after the last schedule, to the second.
    clock_past(last).await?;

    let created = create_rebalancer(
        env,
        rebalancer,
        json!({"workloads": [
            deployment_ref(ns, "web"),
            deployment_ref(ns, "missing"),
            cluster_role_ref(role),
        ]}),
    )
    .await?;
    let requested = time(&created, "/metadata/creationTimestamp")
        .ok_or_else(|| anyhow::anyhow!("no creationTimestamp: {created}"))?;
    // Sorted by apiVersion, kind, namespace and name.
    rebalancer_done(
        env,
        rebalancer,
        "done with web, missing and the ClusterRole",
        &json!([
            {"workload": deployment_ref(ns, "missing"), "result": "Failed", "reason": "ReferencedBindingNotFound"},
            {"workload": deployment_ref(ns, "web"), "result": "Successful"},
            {"workload": cluster_role_ref(role), "result": "Successful"},
        ]),
    )
    .await?;
    back_in_the_first_group(env, ns, "web", requested).await?;
    object_within(
        &env.karmada,
        "the control plane",
        CLUSTER_RESOURCE_BINDING,
        None,
        &role_binding,
        "rescheduled",
        patience(),
        |b| rescheduled_at(b, requested),
    )
    .await?;
    // Not named: left in the second group.
    scheduled_binding(env, ns, "api-deployment", "left alone", |b| {
        target_clusters(b) == on("member2") && b.pointer("/spec/rescheduleTriggeredAt").is_none()
    })
    .await?;

    // The spec changes: `api` is added, `web` and the missing one are dropped. `web` succeeded and stays listed.
    let rebalancers = Api::<WorkloadRebalancer>::all(env.karmada.clone());
    rebalancers
        .patch(
            rebalancer,
            &PatchParams::default(),
            &Patch::Merge(
                json!({"spec": {"workloads": [cluster_role_ref(role), deployment_ref(ns, "api")]}}),
            ),
        )
        .await?;
    rebalancer_done(
        env,
        rebalancer,
        "done with api too",
        &json!([
            {"workload": deployment_ref(ns, "api"), "result": "Successful"},
            {"workload": deployment_ref(ns, "web"), "result": "Successful"},
            {"workload": cluster_role_ref(role), "result": "Successful"},
        ]),
    )
    .await?;
    back_in_the_first_group(env, ns, "api", requested).await?;

    // A TTL set later: the rebalancer finishes again with the new generation and goes 2 s after that.
    let asked = Instant::now();
    rebalancers
        .patch(
            rebalancer,
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"ttlSecondsAfterFinished": 2}})),
        )
        .await?;
    rebalancer_gone(env, rebalancer).await?;
    // Its finish time is at the earliest the second of the patch, so it went no sooner than a second after it.
    anyhow::ensure!(
        asked.elapsed().as_secs_f64() >= 1.0,
        "deleted {:?} after its TTL of 2 s was set",
        asked.elapsed()
    );

    // Created with a TTL of 0: deleted as soon as it finishes, a failure being a finish too.
    create_rebalancer(
        env,
        ttl_rebalancer,
        json!({"workloads": [deployment_ref(ns, "missing")], "ttlSecondsAfterFinished": 0}),
    )
    .await?;
    rebalancer_gone(env, ttl_rebalancer).await?;
    Ok(())
}
