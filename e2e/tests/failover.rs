//! Issue 11, scenarios 1 and 4: a member that goes away and comes back (docs/FAILOVER.md).
//!
//! Both scenarios propagate a Duplicated Deployment `dup` (2 replicas) to member1 and member2 and a Divided one
//! `div` (6 replicas, static weights 1:1:1) over member1..3, then take member2 away ([`Env::take_member_away`]:
//! its in-process API server stopped, or in the kube world its Cluster's `apiEndpoint` pointed at a dead
//! address, as Karmada's e2e does) and bring it back.
//!
//! * Failover on (scenario 1): a ClusterTaintPolicy turns Ready False/Unknown into the NoExecute taint
//!   `cluster.karmada.io/not-ready`, as Karmada users set it up. member2 turns not Ready with its NoSchedule and
//!   NoExecute taints; the taint manager evicts both bindings from it (graceful eviction tasks, purge mode
//!   `Gracefully`, the flag's default), the scheduler moves `div`'s replicas to member1 and member3, and once the
//!   new placement is healthy the tasks end and member2's Works are deleted, which waits (Work deletion retries
//!   while the cluster is not Ready) until member2 is back: then its copies are removed. As Karmada's scheduler
//!   reschedules a Duplicated binding on every change of a cluster it matches, `dup` returns to member2 once its
//!   taints are gone; `div` (Divided, its replicas complete elsewhere) stays where it was moved.
//! * A user's NoExecute taint (scenario 1, with failover on): a taint written on a Cluster without `timeAdded`, as
//!   a user's update writes it, gets one, and a binding tolerating it for two seconds leaves the cluster then
//!   (the taint manager counts `tolerationSeconds` from `timeAdded`: unstamped, the binding stayed for good).
//! * Failover off (scenario 4, Karmada's default gates): member2 only gets the NoSchedule taint; its Works stay,
//!   and when it comes back the very same objects are there. The same ClusterTaintPolicy exists and must have no
//!   effect. In the embedded world the scenario's own Flotilla runs Karmada's default gates; the kube world's
//!   shared manager runs with `AllAlpha=true,AllBeta=true` (Failover on) for the other scenarios, so the
//!   scenario restarts it with `--feature-gates Failover=false` added, and afterwards as `hack/local-up.sh`
//!   started it.
#![allow(clippy::unwrap_used, clippy::panic)]

use std::collections::BTreeMap;
use std::time::Duration;

use flotilla_api::policy::v1alpha1::{ClusterTaintPolicy, PropagationPolicy};
use k8s_openapi::api::apps::v1::Deployment;
use kube::api::{Api, DeleteParams, PostParams};
use serde_json::{Value, json};

use flotilla_e2e::processes::{Restartable, restart_process};
use flotilla_e2e::resources::{
    CLUSTER, DEPLOYMENT, RESOURCE_BINDING, WORK, brief, int, target_clusters, text,
};
use flotilla_e2e::steps::{event_on, object_within};
use flotilla_e2e::wait::{patience, wait_within};
use flotilla_e2e::{Env, Options, Undo, World};

/// The NoExecute taint the scenario's ClusterTaintPolicy adds.
const NO_EXECUTE_KEY: &str = "cluster.karmada.io/not-ready";

flotilla_e2e::scenario!(
    failover_on_moves_a_lost_members_replicas_and_cleans_up_when_it_returns,
    "failover",
    Options::default(),
    failover_on
);

flotilla_e2e::scenario!(
    failover_off_keeps_a_lost_members_works,
    "nofailover",
    Options {
        feature_gates: Some(""),
        ..Options::default()
    },
    failover_off
);

flotilla_e2e::scenario!(
    a_users_no_execute_taint_evicts_once_its_toleration_ends,
    "usertaint",
    Options::default(),
    user_taint
);

/// The NoExecute taint the user's scenario writes, and the policy tolerates for [`USER_TOLERATION_SECONDS`].
const USER_TAINT_KEY: &str = "failover.example.com/drain";
const USER_TOLERATION_SECONDS: i64 = 2;

/// How long a member's loss or return may take to show: Karmada's timings in the kube world (30 s failure
/// and success thresholds, status every 10 s, taint manager every 10 s), seconds in the embedded one.
fn outage_patience(env: &Env) -> Duration {
    match env.world {
        World::Kube => patience().max(Duration::from_secs(100)),
        World::Embedded => patience(),
    }
}

async fn failover_on(env: &Env, ns: &str) -> anyhow::Result<()> {
    let policy = with_taint_policy(env, ns).await?;
    let result = failover_on_steps(env, ns).await;
    let cleaned = policy.run(&env.karmada).await;
    result.and(cleaned)
}

async fn failover_on_steps(env: &Env, ns: &str) -> anyhow::Result<()> {
    propagate(env, ns).await?;
    let away = env.take_member_away("member2").await?;
    let long = outage_patience(env);

    cluster_until(
        env,
        "member2",
        "not Ready, tainted NoSchedule and NoExecute",
        long,
        |c| {
            ready(c) == Some("False")
                && has_taint(c, "cluster.karmada.io/not-ready", "NoSchedule")
                && has_taint(c, NO_EXECUTE_KEY, "NoExecute")
        },
    )
    .await?;
    for name in ["dup", "div"] {
        event_on(
            env,
            ns,
            &format!("{name}-deployment"),
            "EvictWorkloadFromClusterSucceed",
            "Evict from cluster member2 succeed.",
        )
        .await?;
    }
    // The evicted replicas are placed on the others; the graceful eviction tasks end once that placement is
    // healthy, and member2's Works are then deleted, which waits for member2 (its finalizer stays).
    binding_until(
        env,
        ns,
        "dup",
        "on member1 only, eviction done",
        long,
        |b| target_clusters(b) == [("member1".to_string(), 2)] && eviction_tasks(b) == 0,
    )
    .await?;
    binding_until(
        env,
        ns,
        "div",
        "on member1 and member3, eviction done",
        long,
        |b| {
            let clusters = target_clusters(b);
            clusters.iter().all(|(c, _)| c != "member2")
                && clusters.iter().map(|(_, r)| r).sum::<i64>() == 6
                && eviction_tasks(b) == 0
        },
    )
    .await?;
    replicas_until(env, ns, "div", &["member1", "member3"], 6).await?;
    for name in ["dup", "div"] {
        works_until(env, ns, name, "member2", "being deleted", long, |works| {
            works
                .iter()
                .all(|w| w.pointer("/metadata/deletionTimestamp").is_some())
        })
        .await?;
    }
    if env.world == World::Kube {
        // Nothing is deleted from a member that cannot be reached (the execution controller retries the deletion until
        // it is Ready again): its copies are all still there.
        for name in ["dup", "div"] {
            anyhow::ensure!(
                member_deployment(env, "member2", ns, name).await?.is_some(),
                "{name} was deleted from member2 while it was unreachable"
            );
        }
    }

    away.bring_back(env).await?;
    cluster_until(env, "member2", "Ready again without taints", long, |c| {
        ready(c) == Some("True") && taints(c).is_empty()
    })
    .await?;
    // Evicted Works are finished now that member2 answers: `div`'s copy there is removed, and `dup` (Duplicated)
    // is scheduled onto member2 again.
    binding_until(env, ns, "dup", "on member1 and member2 again", long, |b| {
        target_clusters(b) == [("member1".to_string(), 2), ("member2".to_string(), 2)]
    })
    .await?;
    works_until(env, ns, "div", "member2", "gone", long, Vec::is_empty).await?;
    works_until(env, ns, "dup", "member2", "recreated", long, |works| {
        works.len() == 1 && works[0].pointer("/metadata/deletionTimestamp").is_none()
    })
    .await?;
    deployment_until(env, "member2", ns, "div", "gone", long, Option::is_none).await?;
    // Nothing duplicated, lost or left behind.
    replicas_until(env, ns, "dup", &["member1"], 2).await?;
    replicas_until(env, ns, "dup", &["member2"], 2).await?;
    replicas_until(env, ns, "div", &["member1", "member3"], 6).await?;
    anyhow::ensure!(
        member_deployment(env, "member3", ns, "dup")
            .await?
            .is_none(),
        "dup reached member3, outside its placement"
    );
    for name in ["dup", "div"] {
        let binding = binding(env, ns, name).await?;
        anyhow::ensure!(
            eviction_tasks(&binding) == 0,
            "{name}'s binding keeps graceful eviction tasks: {}",
            brief(&binding)
        );
    }
    Ok(())
}

async fn failover_off(env: &Env, ns: &str) -> anyhow::Result<()> {
    // The scenario's own Flotilla runs Karmada's default gates in the embedded world; the kube world's shared
    // manager runs with Failover on for the other scenarios, so it is restarted with Failover off for this one.
    let gates = match env.world {
        World::Kube => Some(failover_off_manager(env).await?),
        World::Embedded => None,
    };
    // Declared after `gates`, so a panic drops (deletes) it before the manager gets Failover back.
    let policy = with_taint_policy(env, ns).await?;
    let result = failover_off_steps(env, ns).await;
    let cleaned = policy.run(&env.karmada).await;
    let restored = match gates {
        Some(gates) => gates.run(&env.karmada).await,
        None => Ok(()),
    };
    result.and(cleaned).and(restored)
}

/// Restarts the kube world's controller manager with `Failover=false` over its usual gates; the [`Undo`] restarts
/// it as `hack/local-up.sh` started it.
async fn failover_off_manager(env: &Env) -> anyhow::Result<Undo> {
    if let Err(e) = env
        .restart_with(
            Restartable::Controllers,
            &["--feature-gates", "Failover=false"],
        )
        .await
    {
        // Never leave the shared world without its manager.
        let _ = env.ensure_running(Restartable::Controllers).await;
        return Err(e.context("restarting the controller manager with Failover off"));
    }
    Ok(Undo::new(
        env,
        "restart the controller manager with the kube world's gates",
        |_client| async { restart_process(Restartable::Controllers, &[]).await },
    ))
}

async fn failover_off_steps(env: &Env, ns: &str) -> anyhow::Result<()> {
    propagate(env, ns).await?;
    let mut before = BTreeMap::new();
    for name in ["dup", "div"] {
        let copy = member_deployment(env, "member2", ns, name)
            .await?
            .ok_or_else(|| anyhow::anyhow!("{name} missing on member2"))?;
        before.insert(
            name,
            text(&copy, "/metadata/uid").unwrap_or_default().to_string(),
        );
    }
    let away = env.take_member_away("member2").await?;
    let long = outage_patience(env);

    let lost = cluster_until(
        env,
        "member2",
        "not Ready with the NoSchedule taint",
        long,
        |c| ready(c) == Some("False") && has_taint(c, "cluster.karmada.io/not-ready", "NoSchedule"),
    )
    .await?;
    anyhow::ensure!(
        taints(&lost).iter().all(|t| t["effect"] == "NoSchedule"),
        "member2 got more than NoSchedule taints with Failover off: {}",
        brief(&lost)
    );
    // The lost member keeps its place and its Works.
    for (name, expected) in [("dup", 2), ("div", 2)] {
        let binding = binding(env, ns, name).await?;
        anyhow::ensure!(
            target_clusters(&binding).contains(&("member2".to_string(), expected))
                && eviction_tasks(&binding) == 0,
            "{name}'s binding left member2 with Failover off: {}",
            brief(&binding)
        );
        works_until(env, ns, name, "member2", "kept", patience(), |works| {
            works.len() == 1 && works[0].pointer("/metadata/deletionTimestamp").is_none()
        })
        .await?;
    }

    away.bring_back(env).await?;
    cluster_until(env, "member2", "Ready again without taints", long, |c| {
        ready(c) == Some("True") && taints(c).is_empty()
    })
    .await?;
    // The very objects of before the outage: nothing was deleted and made again.
    for (name, uid) in &before {
        let copy = member_deployment(env, "member2", ns, name)
            .await?
            .ok_or_else(|| anyhow::anyhow!("{name} vanished from member2"))?;
        anyhow::ensure!(
            text(&copy, "/metadata/uid") == Some(uid.as_str()),
            "{name} on member2 was made again: {}",
            brief(&copy)
        );
    }
    replicas_until(env, ns, "dup", &["member1"], 2).await?;
    replicas_until(env, ns, "dup", &["member2"], 2).await?;
    replicas_until(env, ns, "div", &["member1", "member2", "member3"], 6).await?;
    Ok(())
}

async fn user_taint(env: &Env, ns: &str) -> anyhow::Result<()> {
    let policies: Api<PropagationPolicy> = Api::namespaced(env.karmada.clone(), ns);
    let deployments: Api<Deployment> = Api::namespaced(env.karmada.clone(), ns);
    let spec = json!({
        "resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "solo"}],
        "placement": {
            "clusterAffinity": {"clusterNames": ["member1", "member2"]},
            "clusterTolerations": [{
                "key": USER_TAINT_KEY, "operator": "Exists", "effect": "NoExecute",
                "tolerationSeconds": USER_TOLERATION_SECONDS
            }],
            "spreadConstraints": [{"spreadByField": "cluster", "maxGroups": 1, "minGroups": 1}]
        }
    });
    policies
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({"metadata": {"name": "solo"}, "spec": spec}))?,
        )
        .await?;
    deployments
        .create(
            &PostParams::default(),
            &serde_json::from_value(deployment("solo", 1))?,
        )
        .await?;
    let placed = binding_until(env, ns, "solo", "placed on one member", patience(), |b| {
        target_clusters(b).len() == 1
    })
    .await?;
    let from = target_clusters(&placed)[0].0.clone();
    let to = if from == "member1" {
        "member2"
    } else {
        "member1"
    };
    let tainted = taint_cluster(env, &from).await?;
    let result = user_taint_steps(env, ns, &from, to).await;
    let cleaned = tainted.run(&env.karmada).await;
    result.and(cleaned)
}

async fn user_taint_steps(env: &Env, ns: &str, from: &str, to: &str) -> anyhow::Result<()> {
    cluster_until(
        env,
        from,
        "with the user's taint stamped with timeAdded",
        patience(),
        |c| {
            taints(c)
                .iter()
                .any(|t| t["key"] == USER_TAINT_KEY && t["timeAdded"].is_string())
        },
    )
    .await?;
    binding_until(
        env,
        ns,
        "solo",
        &format!("moved from {from} to {to}"),
        patience(),
        |b| {
            let clusters = target_clusters(b);
            clusters.len() == 1 && clusters[0].0 == to
        },
    )
    .await?;
    deployment_until(
        env,
        to,
        ns,
        "solo",
        "propagated",
        patience(),
        Option::is_some,
    )
    .await?;
    Ok(())
}

/// Adds [`USER_TAINT_KEY`]`:NoExecute` to Cluster `name` as a user's update does (no `timeAdded`); returns
/// what removes it.
async fn taint_cluster(env: &Env, name: &str) -> anyhow::Result<Undo> {
    edit_taints(&env.karmada, name, |taints| {
        taints.push(json!({"key": USER_TAINT_KEY, "effect": "NoExecute"}));
    })
    .await?;
    let cluster = name.to_owned();
    Ok(Undo::new(
        env,
        format!("remove taint {USER_TAINT_KEY} from Cluster {name}"),
        move |client| async move {
            edit_taints(&client, &cluster, |taints| {
                taints.retain(|t| t["key"] != USER_TAINT_KEY);
            })
            .await
        },
    ))
}

/// Read-modify-write of Cluster `name`'s taints through `cluster.karmada.io/v1alpha1`, retried on conflict.
async fn edit_taints<F>(client: &kube::Client, name: &str, edit: F) -> anyhow::Result<()>
where
    F: Fn(&mut Vec<Value>),
{
    let edit = &edit;
    wait_within(
        &format!("an update of Cluster {name}'s taints"),
        patience(),
        || async move {
            let mut cluster = CLUSTER
                .get(client, None, name)
                .await?
                .ok_or_else(|| format!("no Cluster {name}"))?;
            let mut list = taints(&cluster);
            edit(&mut list);
            cluster["spec"]["taints"] = Value::Array(list);
            let object: kube::core::DynamicObject =
                serde_json::from_value(cluster).map_err(|e| e.to_string())?;
            // A conflict (another writer of the Cluster got there first) is tried again on a fresh read.
            CLUSTER
                .api(client, None)
                .replace(name, &PostParams::default(), &object)
                .await
                .map(|_| ())
                .map_err(|e| format!("update of Cluster {name} failed: {e}"))
        },
    )
    .await
}

/// Creates a ClusterTaintPolicy (named after the namespace: it is cluster-scoped) that taints clusters whose
/// Ready is False or Unknown with `cluster.karmada.io/not-ready:NoExecute` and removes it when Ready is True;
/// returns what deletes it.
async fn with_taint_policy(env: &Env, ns: &str) -> anyhow::Result<Undo> {
    let name = ns.to_string();
    let policies: Api<ClusterTaintPolicy> = Api::all(env.karmada.clone());
    policies
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({
                "metadata": {"name": name},
                "spec": {
                    "addOnConditions": [
                        {"conditionType": "Ready", "operator": "In", "statusValues": ["False", "Unknown"]}
                    ],
                    "removeOnConditions": [
                        {"conditionType": "Ready", "operator": "In", "statusValues": ["True"]}
                    ],
                    "taints": [{"key": NO_EXECUTE_KEY, "effect": "NoExecute"}]
                }
            }))?,
        )
        .await?;
    Ok(Undo::new(
        env,
        format!("delete ClusterTaintPolicy {name}"),
        move |client| async move {
            let policies: Api<ClusterTaintPolicy> = Api::all(client);
            match policies.delete(&name, &DeleteParams::default()).await {
                Ok(_) => Ok(()),
                Err(kube::Error::Api(status)) if status.code == 404 => Ok(()),
                Err(e) => Err(e.into()),
            }
        },
    ))
}

/// Propagates `dup` (Duplicated on member1 and member2, 2 replicas) and `div` (Divided 1:1:1 over member1..3, 6
/// replicas) and waits until every member has its share.
async fn propagate(env: &Env, ns: &str) -> anyhow::Result<()> {
    let policies: Api<PropagationPolicy> = Api::namespaced(env.karmada.clone(), ns);
    let deployments: Api<Deployment> = Api::namespaced(env.karmada.clone(), ns);
    let weight = |cluster: &str| json!({"targetCluster": {"clusterNames": [cluster]}, "weight": 1});
    let placements = [
        (
            "dup",
            2,
            json!({
                "clusterAffinity": {"clusterNames": ["member1", "member2"]},
                "replicaScheduling": {"replicaSchedulingType": "Duplicated"}
            }),
        ),
        (
            "div",
            6,
            json!({
                "clusterAffinity": {"clusterNames": ["member1", "member2", "member3"]},
                "replicaScheduling": {
                    "replicaSchedulingType": "Divided",
                    "replicaDivisionPreference": "Weighted",
                    "weightPreference": {
                        "staticWeightList": [weight("member1"), weight("member2"), weight("member3")]
                    }
                }
            }),
        ),
    ];
    for (name, replicas, placement) in placements {
        let mut spec = json!({
            "resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": name}],
            "placement": placement
        });
        if name == "dup" {
            // A cluster statePreservation rule: with StatefulFailoverInjection (on in both worlds) the taint
            // manager reads it from the evicted copy's reflected status before evicting, so the eviction below
            // also shows that the rule could be evaluated.
            spec["failover"] = json!({"cluster": {
                "purgeMode": "Gracefully",
                "statePreservation": {"rules": [
                    {"aliasLabelName": "failover.example.com/replicas", "jsonPath": "{.replicas}"}
                ]}
            }});
        }
        policies
            .create(
                &PostParams::default(),
                &serde_json::from_value(json!({"metadata": {"name": name}, "spec": spec}))?,
            )
            .await?;
        deployments
            .create(
                &PostParams::default(),
                &serde_json::from_value(deployment(name, replicas))?,
            )
            .await?;
    }
    replicas_until(env, ns, "dup", &["member1"], 2).await?;
    replicas_until(env, ns, "dup", &["member2"], 2).await?;
    for member in ["member1", "member2", "member3"] {
        replicas_until(env, ns, "div", &[member], 2).await?;
    }
    // Healthy everywhere first: the graceful eviction waits for the new placement's health, not the old one's.
    for name in ["dup", "div"] {
        binding_until(env, ns, name, "healthy on every member", patience(), |b| {
            let clusters = target_clusters(b);
            !clusters.is_empty()
                && clusters.iter().all(|(c, _)| {
                    flotilla_e2e::resources::aggregated_item(b, c)
                        .and_then(|i| i.get("health"))
                        .and_then(Value::as_str)
                        == Some("Healthy")
                })
        })
        .await?;
    }
    Ok(())
}

fn deployment(name: &str, replicas: i64) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "labels": {"app": name}},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": name, "image": "nginx"}]}
            }
        }
    })
}

fn ready(cluster: &Value) -> Option<&str> {
    cluster
        .pointer("/status/conditions")?
        .as_array()?
        .iter()
        .find(|c| c["type"] == "Ready")
        .and_then(|c| c["status"].as_str())
}

fn taints(cluster: &Value) -> Vec<Value> {
    cluster
        .pointer("/spec/taints")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

fn has_taint(cluster: &Value, key: &str, effect: &str) -> bool {
    taints(cluster)
        .iter()
        .any(|t| t["key"] == key && t["effect"] == effect)
}

fn eviction_tasks(binding: &Value) -> usize {
    binding
        .pointer("/spec/gracefulEvictionTasks")
        .and_then(Value::as_array)
        .map_or(0, Vec::len)
}

async fn cluster_until<F>(
    env: &Env,
    name: &str,
    what: &str,
    within: Duration,
    check: F,
) -> anyhow::Result<Value>
where
    F: Fn(&Value) -> bool,
{
    let place = "the control plane";
    object_within(
        &env.karmada,
        place,
        CLUSTER,
        None,
        name,
        what,
        within,
        check,
    )
    .await
}

async fn binding(env: &Env, ns: &str, name: &str) -> anyhow::Result<Value> {
    RESOURCE_BINDING
        .get(&env.karmada, Some(ns), &format!("{name}-deployment"))
        .await
        .map_err(anyhow::Error::msg)?
        .ok_or_else(|| anyhow::anyhow!("no binding {ns}/{name}-deployment"))
}

async fn binding_until<F>(
    env: &Env,
    ns: &str,
    name: &str,
    what: &str,
    within: Duration,
    check: F,
) -> anyhow::Result<Value>
where
    F: Fn(&Value) -> bool,
{
    let binding = format!("{name}-deployment");
    let place = "the control plane";
    object_within(
        &env.karmada,
        place,
        RESOURCE_BINDING,
        Some(ns),
        &binding,
        what,
        within,
        check,
    )
    .await
}

/// Waits until the Works in `karmada-es-<cluster>` of the binding of Deployment `ns/name` pass `check`.
async fn works_until<F>(
    env: &Env,
    ns: &str,
    name: &str,
    cluster: &str,
    what: &str,
    within: Duration,
    check: F,
) -> anyhow::Result<Vec<Value>>
where
    F: Fn(&Vec<Value>) -> bool,
{
    let check = &check;
    let execution_ns = format!("karmada-es-{cluster}");
    let execution_ns = execution_ns.as_str();
    let binding_name = format!("{name}-deployment");
    let binding_name = binding_name.as_str();
    wait_within(
        &format!("the Works of {ns}/{binding_name} for {cluster} {what}"),
        within,
        || async move {
            let works: Vec<Value> = WORK
                .list(&env.karmada, Some(execution_ns))
                .await?
                .into_iter()
                .filter(|w| {
                    text(
                        w,
                        "/metadata/annotations/resourcebinding.karmada.io~1namespace",
                    ) == Some(ns)
                        && text(w, "/metadata/annotations/resourcebinding.karmada.io~1name")
                            == Some(binding_name)
                })
                .collect();
            if check(&works) {
                Ok(works)
            } else {
                Err(format!("{:?}", works.iter().map(brief).collect::<Vec<_>>()))
            }
        },
    )
    .await
}

async fn member_deployment(
    env: &Env,
    member: &str,
    ns: &str,
    name: &str,
) -> anyhow::Result<Option<Value>> {
    DEPLOYMENT
        .get(env.member(member)?, Some(ns), name)
        .await
        .map_err(anyhow::Error::msg)
}

async fn deployment_until<F>(
    env: &Env,
    member: &str,
    ns: &str,
    name: &str,
    what: &str,
    within: Duration,
    check: F,
) -> anyhow::Result<()>
where
    F: Fn(&Option<Value>) -> bool,
{
    let check = &check;
    wait_within(
        &format!("Deployment {ns}/{name} on {member} {what}"),
        within,
        || async move {
            let found = member_deployment(env, member, ns, name)
                .await
                .map_err(|e| format!("{e:#}"))?;
            if check(&found) {
                Ok(())
            } else {
                Err(found.as_ref().map_or_else(|| "absent".to_string(), brief))
            }
        },
    )
    .await
}

/// Waits until the copies of Deployment `ns/name` on `members` ask for `replicas` in all.
async fn replicas_until(
    env: &Env,
    ns: &str,
    name: &str,
    members: &[&str],
    replicas: i64,
) -> anyhow::Result<()> {
    wait_within(
        &format!("{replicas} replicas of {ns}/{name} over {members:?}"),
        outage_patience(env),
        || async move {
            let mut seen = Vec::new();
            for member in members {
                let copy = member_deployment(env, member, ns, name)
                    .await
                    .map_err(|e| format!("{e:#}"))?;
                seen.push(copy.and_then(|d| int(&d, "/spec/replicas")).unwrap_or(0));
            }
            if seen.iter().sum::<i64>() == replicas && seen.iter().all(|r| *r > 0) {
                Ok(())
            } else {
                Err(format!("replicas per member: {seen:?}"))
            }
        },
    )
    .await
}
