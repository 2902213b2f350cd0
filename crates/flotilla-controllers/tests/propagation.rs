//! Component tests: the controllers against in-process API servers (one control plane, two members).

#![allow(clippy::unwrap_used, clippy::panic)]

use crate::support;

use flotilla_api::cluster::v1alpha1::Cluster;
use flotilla_api::policy::v1alpha1::PropagationPolicy;
use flotilla_api::work::v1alpha1::Work;
use flotilla_api::work::v1alpha2::ResourceBinding;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Namespace;
use kube::api::{DeleteParams, Patch, PatchParams, PostParams};
use kube::{Api, ResourceExt};
use serde_json::json;

use support::{Env, eventually};

fn mk_deployment(name: &str, replicas: i32) -> Deployment {
    serde_json::from_value(json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "namespace": "default", "labels": {"app": name}},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                 "template": {"metadata": {"labels": {"app": name}},
                              "spec": {"containers": [{"name": "nginx", "image": "nginx:1.25"}]}}}
    }))
    .unwrap()
}

fn mk_policy(name: &str, deployment: &str) -> PropagationPolicy {
    serde_json::from_value(json!({
        "apiVersion": "policy.karmada.io/v1alpha1", "kind": "PropagationPolicy",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": deployment}],
                 "placement": {"clusterAffinity": {"clusterNames": ["member1", "member2"]}}}
    }))
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deployment_propagates_with_status_and_is_cleaned_up() {
    let env = Env::start(2).await;

    // Clusters: execution namespaces, finalizer, Ready, no not-ready taint, API enablements.
    let clusters: Api<Cluster> = Api::all(env.client.clone());
    for name in ["member1", "member2"] {
        eventually("a ready cluster without taints", || async {
            let cluster = clusters.get(name).await.ok()?;
            let status = cluster.status.as_ref()?;
            let ready = status
                .conditions
                .iter()
                .any(|c| c.type_ == "Ready" && c.status == "True");
            let enabled = status
                .api_enablements
                .iter()
                .any(|e| e.group_version == "apps/v1");
            (ready
                && enabled
                && cluster.spec.taints.is_empty()
                && cluster
                    .finalizers()
                    .iter()
                    .any(|f| f == "karmada.io/cluster-controller"))
            .then_some(())
        })
        .await;
        let namespaces: Api<Namespace> = Api::all(env.client.clone());
        let es = namespaces.get(&format!("karmada-es-{name}")).await.unwrap();
        assert_eq!(
            es.labels().get("karmada.io/system").map(String::as_str),
            Some("true")
        );
    }

    let deployments: Api<Deployment> = Api::namespaced(env.client.clone(), "default");
    deployments
        .create(&PostParams::default(), &mk_deployment("nginx", 2))
        .await
        .unwrap();
    let policies: Api<PropagationPolicy> = Api::namespaced(env.client.clone(), "default");
    policies
        .create(&PostParams::default(), &mk_policy("nginx-pp", "nginx"))
        .await
        .unwrap();

    // The normaliser gives the policy an id and finalizer; the detector claims the template and builds the RB.
    let policy = eventually("the policy to be normalised", || async {
        let p = policies.get("nginx-pp").await.ok()?;
        p.labels()
            .contains_key("propagationpolicy.karmada.io/permanent-id")
            .then_some(p)
    })
    .await;
    assert!(
        policy
            .finalizers()
            .iter()
            .any(|f| f == "karmada.io/propagation-policy-controller")
    );
    let bindings: Api<ResourceBinding> = Api::namespaced(env.client.clone(), "default");
    let rb = eventually("the ResourceBinding", || async {
        bindings.get("nginx-deployment").await.ok()
    })
    .await;
    assert_eq!(rb.spec.replicas, 2);
    assert_eq!(rb.spec.resource.kind, "Deployment");
    assert!(
        rb.labels()
            .contains_key("resourcebinding.karmada.io/permanent-id")
    );
    assert_eq!(
        rb.labels().get("propagationpolicy.karmada.io/permanent-id"),
        policy
            .labels()
            .get("propagationpolicy.karmada.io/permanent-id")
    );
    let template = deployments.get("nginx").await.unwrap();
    assert_eq!(
        template
            .annotations()
            .get("propagationpolicy.karmada.io/name")
            .map(String::as_str),
        Some("nginx-pp")
    );

    // The scheduler duplicates the two replicas onto both members.
    let rb = eventually("the scheduling result", || async {
        let rb = bindings.get("nginx-deployment").await.ok()?;
        (rb.spec.clusters.len() == 2).then_some(rb)
    })
    .await;
    assert!(rb.spec.clusters.iter().all(|c| c.replicas == 2));

    // Works and member objects.
    for member in &env.members {
        let works: Api<Work> =
            Api::namespaced(env.client.clone(), &format!("karmada-es-{}", member.name));
        eventually("an applied Work", || async {
            let work = works.get("nginx-687f7fb96f").await.ok()?;
            let status = work.status.as_ref()?;
            status
                .conditions
                .iter()
                .any(|c| c.type_ == "Applied" && c.status == "True")
                .then_some(())
        })
        .await;
        let member_deployments: Api<Deployment> = Api::namespaced(member.client.clone(), "default");
        let copy = eventually("the member Deployment", || async {
            member_deployments.get("nginx").await.ok()
        })
        .await;
        assert_eq!(
            copy.labels().get("karmada.io/managed").map(String::as_str),
            Some("true")
        );
        assert_eq!(
            copy.annotations()
                .get("work.karmada.io/name")
                .map(String::as_str),
            Some("nginx-687f7fb96f")
        );
        assert_eq!(copy.spec.as_ref().unwrap().replicas, Some(2));
    }

    // Status: member status → Work manifestStatuses → RB aggregatedStatus + FullyApplied → template status.
    let rb = eventually("aggregated status from both members", || async {
        let rb = bindings.get("nginx-deployment").await.ok()?;
        let status = rb.status.as_ref()?;
        let fully = status
            .conditions
            .iter()
            .any(|c| c.type_ == "FullyApplied" && c.status == "True");
        let ready = status.aggregated_status.len() == 2
            && status.aggregated_status.iter().all(|i| {
                i.status
                    .as_ref()
                    .and_then(|s| s.get("readyReplicas"))
                    .and_then(|v| v.as_i64())
                    == Some(2)
            });
        (fully && ready).then_some(rb)
    })
    .await;
    assert_eq!(
        rb.status.unwrap().aggregated_status[0].cluster_name,
        "member1"
    );
    eventually("the template's aggregated status", || async {
        let d = deployments.get("nginx").await.ok()?;
        (d.status?.ready_replicas == Some(4)).then_some(())
    })
    .await;

    // Drift: an out-of-band scale is undone; an out-of-band deletion is recreated.
    let member1: Api<Deployment> = Api::namespaced(env.member("member1").client.clone(), "default");
    member1
        .patch(
            "nginx",
            &PatchParams::default(),
            &Patch::Merge(&json!({"spec": {"replicas": 7}})),
        )
        .await
        .unwrap();
    eventually("drift to be corrected", || async {
        (member1.get("nginx").await.ok()?.spec?.replicas == Some(2)).then_some(())
    })
    .await;
    member1
        .delete("nginx", &DeleteParams::default())
        .await
        .unwrap();
    eventually("the deleted member object to come back", || async {
        let d = member1.get("nginx").await.ok()?;
        d.metadata.deletion_timestamp.is_none().then_some(())
    })
    .await;

    // Deleting the template removes the binding, the Works and the member objects.
    deployments
        .delete("nginx", &DeleteParams::default())
        .await
        .unwrap();
    for member in &env.members {
        let member_deployments: Api<Deployment> = Api::namespaced(member.client.clone(), "default");
        eventually("the member Deployment to go", || async {
            member_deployments
                .get_opt("nginx")
                .await
                .ok()?
                .is_none()
                .then_some(())
        })
        .await;
    }
    eventually("the binding to go", || async {
        bindings
            .get_opt("nginx-deployment")
            .await
            .ok()?
            .is_none()
            .then_some(())
    })
    .await;
    env.stop().await;
}
