//! Component tests of the scheduler controller through the manager, against in-process API servers (one
//! control plane, two members): results, the `Scheduled` condition, the applied placement, rescheduling on
//! replica changes, NoClusterFit, and recovery when a cluster label starts matching.

#![allow(clippy::unwrap_used, clippy::panic)]

use crate::support;

use std::collections::BTreeMap;

use flotilla_api::cluster::v1alpha1::Cluster;
use flotilla_api::names::annotations;
use flotilla_api::policy::v1alpha1::PropagationPolicy;
use flotilla_api::work::v1alpha2::ResourceBinding;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::events::v1::Event;
use kube::api::{ListParams, Patch, PatchParams, PostParams};
use kube::{Api, Client};
use serde_json::{Value, json};

use support::{Env, eventually};

fn deployment(name: &str, replicas: i32) -> Deployment {
    serde_json::from_value(json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "namespace": "default", "labels": {"app": name}},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                 "template": {"metadata": {"labels": {"app": name}},
                              "spec": {"containers": [{"name": "nginx", "image": "nginx:1.25"}]}}}
    }))
    .unwrap()
}

fn policy(name: &str, deployment: &str, placement: Value) -> PropagationPolicy {
    serde_json::from_value(json!({
        "apiVersion": "policy.karmada.io/v1alpha1", "kind": "PropagationPolicy",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": deployment}],
                 "placement": placement}
    }))
    .unwrap()
}

/// The binding's result as name → replicas, once its `Scheduled` condition has `status` and `reason`.
async fn scheduled(
    client: &Client,
    binding: &str,
    status: &str,
    reason: &str,
) -> (ResourceBinding, BTreeMap<String, i32>) {
    let api: Api<ResourceBinding> = Api::namespaced(client.clone(), "default");
    eventually(
        &format!("{binding} Scheduled={status}/{reason}"),
        || async {
            let rb = api.get(binding).await.ok()?;
            let st = rb.status.as_ref()?;
            let cond = st.conditions.iter().find(|c| c.type_ == "Scheduled")?;
            (cond.status == status && cond.reason == reason).then(|| {
                let result = rb
                    .spec
                    .clusters
                    .iter()
                    .map(|t| (t.name.clone(), t.replicas))
                    .collect();
                (rb, result)
            })
        },
    )
    .await
}

async fn wait_result(client: &Client, binding: &str, want: &[(&str, i32)]) -> ResourceBinding {
    let api: Api<ResourceBinding> = Api::namespaced(client.clone(), "default");
    let want: BTreeMap<String, i32> = want.iter().map(|(n, r)| ((*n).to_owned(), *r)).collect();
    eventually(&format!("{binding} scheduled to {want:?}"), || async {
        let rb = api.get(binding).await.ok()?;
        let got: BTreeMap<String, i32> = rb
            .spec
            .clusters
            .iter()
            .map(|t| (t.name.clone(), t.replicas))
            .collect();
        (got == want).then_some(rb)
    })
    .await
}

async fn wait_ready_clusters(client: &Client) {
    let clusters: Api<Cluster> = Api::all(client.clone());
    for name in ["member1", "member2"] {
        eventually("a ready cluster without taints serving apps/v1", || async {
            let c = clusters.get(name).await.ok()?;
            let st = c.status.as_ref()?;
            let ready = st
                .conditions
                .iter()
                .any(|c| c.type_ == "Ready" && c.status == "True");
            let apps = st
                .api_enablements
                .iter()
                .any(|e| e.group_version == "apps/v1");
            (ready && apps && c.spec.taints.is_empty()).then_some(())
        })
        .await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn static_weights_divide_and_follow_scaling() {
    let env = Env::start(2).await;
    wait_ready_clusters(&env.client).await;
    let deployments: Api<Deployment> = Api::namespaced(env.client.clone(), "default");
    deployments
        .create(&PostParams::default(), &deployment("web", 3))
        .await
        .unwrap();
    let placement = json!({
        "clusterAffinity": {"clusterNames": ["member1", "member2"]},
        "replicaScheduling": {
            "replicaSchedulingType": "Divided",
            "weightPreference": {"staticWeightList": [
                {"targetCluster": {"clusterNames": ["member1"]}, "weight": 2},
                {"targetCluster": {"clusterNames": ["member2"]}, "weight": 1}
            ]}
        }
    });
    let policies: Api<PropagationPolicy> = Api::namespaced(env.client.clone(), "default");
    policies
        .create(&PostParams::default(), &policy("web-pp", "web", placement))
        .await
        .unwrap();

    let (rb, result) = scheduled(&env.client, "web-deployment", "True", "Success").await;
    assert_eq!(
        result,
        BTreeMap::from([("member1".to_owned(), 2), ("member2".to_owned(), 1)])
    );
    let applied: Value = serde_json::from_str(
        &rb.metadata.annotations.as_ref().unwrap()[annotations::APPLIED_PLACEMENT],
    )
    .unwrap();
    assert_eq!(
        applied["replicaScheduling"]["replicaDivisionPreference"], "Weighted",
        "the applied placement is the defaulted one"
    );
    let status = rb.status.as_ref().unwrap();
    assert!(status.last_scheduled_time.is_some());
    let condition = status
        .conditions
        .iter()
        .find(|c| c.type_ == "Scheduled")
        .unwrap();
    assert_eq!(
        condition.message,
        "Binding has been scheduled successfully."
    );

    // Scaling the template re-divides all replicas by weight.
    deployments
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(&json!({"spec": {"replicas": 6}})),
        )
        .await
        .unwrap();
    wait_result(
        &env.client,
        "web-deployment",
        &[("member1", 4), ("member2", 2)],
    )
    .await;

    // The success event is on the binding (and on the template).
    let events: Api<Event> = Api::namespaced(env.client.clone(), "default");
    eventually("a ScheduleBindingSucceed event on the binding", || async {
        let list = events.list(&ListParams::default()).await.ok()?;
        list.items
            .iter()
            .find(|e| {
                e.reason.as_deref() == Some("ScheduleBindingSucceed")
                    && e.regarding.as_ref().and_then(|r| r.kind.as_deref())
                        == Some("ResourceBinding")
                    && e.note.as_deref().is_some_and(|m| m.contains("Result: {"))
            })
            .map(|_| ())
    })
    .await;
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_cluster_fit_until_a_cluster_label_matches() {
    let env = Env::start(2).await;
    wait_ready_clusters(&env.client).await;
    let deployments: Api<Deployment> = Api::namespaced(env.client.clone(), "default");
    deployments
        .create(&PostParams::default(), &deployment("api", 2))
        .await
        .unwrap();
    let placement =
        json!({"clusterAffinity": {"labelSelector": {"matchLabels": {"tier": "gold"}}}});
    let policies: Api<PropagationPolicy> = Api::namespaced(env.client.clone(), "default");
    policies
        .create(&PostParams::default(), &policy("api-pp", "api", placement))
        .await
        .unwrap();

    let (rb, result) = scheduled(&env.client, "api-deployment", "False", "NoClusterFit").await;
    assert!(result.is_empty());
    let condition = rb
        .status
        .unwrap()
        .conditions
        .into_iter()
        .find(|c| c.type_ == "Scheduled")
        .unwrap();
    assert_eq!(
        condition.message,
        "0/2 clusters are available: 2 cluster(s) did not match the placement cluster affinity constraint."
    );

    // A label change on a Cluster requeues the bindings whose affinity it may now satisfy.
    let clusters: Api<Cluster> = Api::all(env.client.clone());
    clusters
        .patch(
            "member2",
            &PatchParams::default(),
            &Patch::Merge(&json!({"metadata": {"labels": {"tier": "gold"}}})),
        )
        .await
        .unwrap();
    wait_result(&env.client, "api-deployment", &[("member2", 2)]).await;
    scheduled(&env.client, "api-deployment", "True", "Success").await;
    env.stop().await;
}
