//! Component tests: namespace propagation, dependency propagation and conflict resolution against in-process
//! API servers.

#![allow(clippy::unwrap_used, clippy::panic)]

use crate::support;

use flotilla_api::policy::v1alpha1::PropagationPolicy;
use flotilla_api::work::v1alpha1::Work;
use flotilla_api::work::v1alpha2::ResourceBinding;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use kube::api::{DeleteParams, PostParams};
use kube::{Api, ResourceExt};
use serde_json::json;

use support::{Env, eventually};

async fn create<K>(api: &Api<K>, value: serde_json::Value)
where
    K: kube::Resource + Clone + serde::de::DeserializeOwned + serde::Serialize + std::fmt::Debug,
{
    api.create(
        &PostParams::default(),
        &serde_json::from_value(value).unwrap(),
    )
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn namespaces_follow_the_control_plane() {
    let env = Env::start(2).await;
    let namespaces: Api<Namespace> = Api::all(env.client.clone());
    create(
        &namespaces,
        json!({"metadata": {"name": "team-a", "labels": {"team": "a"}}}),
    )
    .await;
    create(&namespaces, json!({"metadata": {"name": "private", "labels": {"namespace.karmada.io/skip-auto-propagation": "true"}}})).await;
    for member in &env.members {
        let member_namespaces: Api<Namespace> = Api::all(member.client.clone());
        let copy = eventually("the namespace in the member", || async {
            member_namespaces.get("team-a").await.ok()
        })
        .await;
        assert_eq!(
            copy.labels().get("karmada.io/managed").map(String::as_str),
            Some("true")
        );
        assert_eq!(copy.labels().get("team").map(String::as_str), Some("a"));
        assert!(
            member_namespaces
                .get_opt("private")
                .await
                .unwrap()
                .is_none()
        );
    }
    namespaces
        .delete("team-a", &DeleteParams::default())
        .await
        .unwrap();
    for member in &env.members {
        let member_namespaces: Api<Namespace> = Api::all(member.client.clone());
        eventually("the member namespace to go", || async {
            match member_namespaces.get_opt("team-a").await.ok()? {
                None => Some(()),
                Some(ns) => ns.metadata.deletion_timestamp.is_some().then_some(()),
            }
        })
        .await;
    }
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dependencies_travel_with_their_workload_and_conflicts_are_reported() {
    let env = Env::start(2).await;
    let configmaps: Api<ConfigMap> = Api::namespaced(env.client.clone(), "default");
    create(
        &configmaps,
        json!({"metadata": {"name": "web-config"}, "data": {"k": "v"}}),
    )
    .await;
    // member2 already has an unmanaged ConfigMap of the same name as the workload's second one.
    create(
        &configmaps,
        json!({"metadata": {"name": "taken"}, "data": {"k": "v"}}),
    )
    .await;
    let member2_configmaps: Api<ConfigMap> =
        Api::namespaced(env.member("member2").client.clone(), "default");
    create(
        &member2_configmaps,
        json!({"metadata": {"name": "taken"}, "data": {"mine": "yes"}}),
    )
    .await;

    let deployments: Api<k8s_openapi::api::apps::v1::Deployment> =
        Api::namespaced(env.client.clone(), "default");
    create(&deployments, json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
                 "template": {"metadata": {"labels": {"app": "web"}},
                              "spec": {"containers": [{"name": "c", "image": "nginx",
                                  "envFrom": [{"configMapRef": {"name": "web-config"}}]}],
                                       "volumes": [{"name": "v", "configMap": {"name": "taken"}}]}}}
    }))
    .await;
    let policies: Api<PropagationPolicy> = Api::namespaced(env.client.clone(), "default");
    create(&policies, json!({
        "apiVersion": "policy.karmada.io/v1alpha1", "kind": "PropagationPolicy",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"propagateDeps": true,
                 "resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}],
                 "placement": {"clusterAffinity": {"clusterNames": ["member1", "member2"]}}}
    }))
    .await;

    let bindings: Api<ResourceBinding> = Api::namespaced(env.client.clone(), "default");
    let attached = eventually("the attached binding", || async {
        let rb = bindings.get("web-config-configmap").await.ok()?;
        (!rb.spec.required_by.is_empty()).then_some(rb)
    })
    .await;
    assert_eq!(attached.spec.required_by[0].name, "web-deployment");
    assert_eq!(attached.spec.placement, None);
    let independent = bindings.get("web-deployment").await.unwrap();
    assert!(
        independent
            .annotations()
            .contains_key("resourcebinding.karmada.io/dependencies")
    );
    assert!(
        independent
            .finalizers()
            .iter()
            .any(|f| f == "karmada.io/binding-dependencies-distributor")
    );

    for member in &env.members {
        let member_configmaps: Api<ConfigMap> = Api::namespaced(member.client.clone(), "default");
        let copy = eventually("the dependency in the member", || async {
            member_configmaps.get("web-config").await.ok()
        })
        .await;
        assert_eq!(copy.data.unwrap().get("k").map(String::as_str), Some("v"));
    }

    // The unmanaged ConfigMap in member2 is left alone and the conflict is reported.
    let works: Api<Work> = Api::namespaced(env.client.clone(), "karmada-es-member2");
    let message = eventually("Applied=False for the conflicting Work", || async {
        let work = works
            .list(&Default::default())
            .await
            .ok()?
            .items
            .into_iter()
            .find(|w| {
                w.spec
                    .workload
                    .manifests
                    .iter()
                    .any(|m| m.0["metadata"]["name"] == "taken")
            })?;
        let applied = work
            .status?
            .conditions
            .into_iter()
            .find(|c| c.type_ == "Applied")?;
        (applied.status == "False").then_some(applied.message)
    })
    .await;
    assert!(
        message.contains("already exists in the cluster member2"),
        "{message}"
    );
    let kept = member2_configmaps.get("taken").await.unwrap();
    assert_eq!(
        kept.data.unwrap().get("mine").map(String::as_str),
        Some("yes")
    );
    let taken = eventually("the conflict in the aggregated status", || async {
        let rb = bindings.get("taken-configmap").await.ok()?;
        let status = rb.status?;
        let item = status
            .aggregated_status
            .into_iter()
            .find(|i| i.cluster_name == "member2")?;
        (!item.applied && !item.applied_message.is_empty()).then_some(item)
    })
    .await;
    assert!(taken.applied_message.contains("conflict-resolution"));
    env.stop().await;
}
