//! Pull-mode members: a Cluster registered with `syncMode: Pull` is served by an agent holding the member's
//! client, not by the control plane; the agent applies its Works, reports status and renews its Lease, and
//! when the agent stops the control plane's health monitor turns Ready Unknown; unregistered when its agent is
//! gone, the cluster still goes.

#![allow(clippy::unwrap_used, clippy::panic)]

use crate::support;

use std::sync::Arc;
use std::time::Duration;

use flotilla_api::cluster::v1alpha1::{Cluster, ClusterSyncMode};
use flotilla_controllers::Interpreter;
use flotilla_controllers::agent;
use flotilla_join::{Registration, register_pull};
use flotilla_simulator::{Simulator, SimulatorConfig};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Patch, PatchParams, PostParams};
use kube::{Api, ResourceExt};
use serde_json::json;

use support::{Env, client_for, eventually, fast_options, start_server};

fn ready(cluster: &Cluster) -> Option<(String, String)> {
    let condition = cluster
        .status
        .as_ref()?
        .conditions
        .iter()
        .find(|c| c.type_ == "Ready")?;
    Some((condition.status.clone(), condition.reason.clone()))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agent_propagates_to_a_pull_member_and_its_lapsed_lease_makes_ready_unknown() {
    let mut options = fast_options();
    options.cluster_monitor_period = Duration::from_millis(200);
    options.cluster_monitor_grace_period = Duration::from_secs(3);
    options.cluster_lease_duration = Duration::from_secs(2);
    let env = Env::start_with(0, options.clone()).await;

    let mut dirs = Vec::new();
    let member = start_server(&mut dirs).await;
    let member_client = client_for(&member, "pull1").await;
    let simulator = Simulator::start(
        member_client.clone(),
        SimulatorConfig {
            delay: Duration::from_millis(50),
            cluster: "pull1".into(),
            ..SimulatorConfig::default()
        },
    );
    let registered = register_pull(
        &env.client,
        &Registration {
            name: "pull1".into(),
            api_endpoint: "https://pull1.example:6443".into(),
            id: "pull1-id".into(),
            ..Registration::default()
        },
    )
    .await
    .unwrap();
    assert_eq!(registered.spec.sync_mode, ClusterSyncMode::Pull);
    assert!(registered.spec.secret_ref.is_none());
    assert_eq!(registered.spec.id, "pull1-id");

    // Without an agent nobody reports the cluster: the control plane never reaches a Pull member.
    let clusters: Api<Cluster> = Api::all(env.client.clone());
    let interpreter: Arc<dyn Interpreter> = Arc::new(
        flotilla_interpreter::ResourceInterpreter::builder()
            .native()
            .build()
            .unwrap(),
    );
    let agent = agent::start(
        env.client.clone(),
        member_client.clone(),
        "pull1",
        interpreter,
        options,
        false,
    )
    .unwrap();
    eventually("the agent to report the cluster Ready", || async {
        let cluster = clusters.get("pull1").await.ok()?;
        let enabled = cluster
            .status
            .as_ref()?
            .api_enablements
            .iter()
            .any(|e| e.group_version == "apps/v1");
        (ready(&cluster)? == ("True".into(), "ClusterReady".into()) && enabled).then_some(())
    })
    .await;
    let leases: Api<Lease> = Api::namespaced(env.client.clone(), "karmada-cluster");
    let lease = eventually("the cluster's Lease", || async {
        leases.get("pull1").await.ok()
    })
    .await;
    let spec = lease.spec.clone().unwrap();
    assert_eq!(spec.holder_identity.as_deref(), Some("pull1"));
    assert_eq!(spec.lease_duration_seconds, Some(2));
    assert_eq!(lease.owner_references()[0].kind, "Cluster");
    let first_renewal = spec.renew_time.unwrap().0;
    eventually("the Lease to be renewed", || async {
        let renewed = leases.get("pull1").await.ok()?.spec?.renew_time?.0;
        (renewed > first_renewal).then_some(())
    })
    .await;

    let deployments: Api<Deployment> = Api::namespaced(env.client.clone(), "default");
    let deployment: Deployment = serde_json::from_value(json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                 "template": {"metadata": {"labels": {"app": "web"}},
                              "spec": {"containers": [{"name": "web", "image": "nginx:1.25"}]}}}
    }))
    .unwrap();
    deployments
        .create(&PostParams::default(), &deployment)
        .await
        .unwrap();
    let policy: flotilla_api::policy::v1alpha1::PropagationPolicy = serde_json::from_value(json!({
        "apiVersion": "policy.karmada.io/v1alpha1", "kind": "PropagationPolicy",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}],
                 "placement": {"clusterAffinity": {"clusterNames": ["pull1"]}}}
    }))
    .unwrap();
    Api::namespaced(env.client.clone(), "default")
        .create(&PostParams::default(), &policy)
        .await
        .unwrap();
    let on_member: Api<Deployment> = Api::namespaced(member_client.clone(), "default");
    eventually(
        "the agent to apply the Deployment to the member",
        || async { on_member.get("web").await.ok() },
    )
    .await;
    eventually(
        "the member's status aggregated on the control plane",
        || async {
            let template = deployments.get("web").await.ok()?;
            (template.status?.ready_replicas == Some(2)).then_some(())
        },
    )
    .await;

    // The agent stops and the cluster is unregistered at once: no more renewals, and after the grace period
    // Ready is Unknown, deleting or not. Nobody can clean the member then, so its Works are released without
    // cleanup (as Karmada strips their finalizers), then its execution namespace and the Cluster go. A finalizer of
    // this test's holds the Cluster until that was seen.
    agent.shutdown().await;
    let hold =
        json!([{"op": "add", "path": "/metadata/finalizers/-", "value": "flotilla.test/hold"}]);
    clusters
        .patch(
            "pull1",
            &PatchParams::default(),
            &Patch::Json::<()>(serde_json::from_value(hold).unwrap()),
        )
        .await
        .unwrap();
    clusters.delete("pull1", &Default::default()).await.unwrap();
    eventually("Ready Unknown once the Lease lapsed", || async {
        let cluster = clusters.get("pull1").await.ok()?;
        (ready(&cluster)? == ("Unknown".into(), "ClusterStatusUnknown".into())).then_some(())
    })
    .await;
    let namespaces: Api<Namespace> = Api::all(env.client.clone());
    eventually("the execution namespace gone", || async {
        namespaces
            .get_opt("karmada-es-pull1")
            .await
            .ok()?
            .is_none()
            .then_some(())
    })
    .await;
    // The controllers still write the Cluster (its status, its conditions), so a release based on a stale read
    // conflicts: read again and retry then.
    eventually("the test's hold on Cluster pull1 released", || async {
        let held = clusters.get("pull1").await.unwrap();
        let others: Vec<&String> = held
            .finalizers()
            .iter()
            .filter(|f| *f != "flotilla.test/hold")
            .collect();
        let release =
            json!({"metadata": {"finalizers": others, "resourceVersion": held.resource_version()}});
        match clusters
            .patch("pull1", &PatchParams::default(), &Patch::Merge(&release))
            .await
        {
            Ok(_) => Some(()),
            Err(kube::Error::Api(status)) if status.code == 409 => None,
            Err(e) => panic!("releasing the hold on Cluster pull1: {e}"),
        }
    })
    .await;
    eventually("Cluster pull1 gone", || async {
        clusters
            .get_opt("pull1")
            .await
            .ok()?
            .is_none()
            .then_some(())
    })
    .await;
    assert!(
        on_member.get_opt("web").await.unwrap().is_some(),
        "nobody removed the member's copy"
    );

    simulator.shutdown().await;
    member.shutdown().await;
    env.stop().await;
}
