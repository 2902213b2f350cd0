//! The member workload simulator against a real embedded server, observed by an ordinary kube-rs client.
#![allow(clippy::unwrap_used, clippy::panic)]

use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::apps::v1::{DaemonSet, Deployment, ReplicaSet, StatefulSet};
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, DynamicObject, Patch, PatchParams, PostParams, WatchEvent, WatchParams};
use kube::core::{ApiResource, GroupVersionKind};
use kube::{Client, Config, ResourceExt};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use flotilla_apiserver::{RunningServer, Server, ServerConfig};
use flotilla_simulator::{Simulator, SimulatorConfig};

const DEADLINE: Duration = Duration::from_secs(15);

async fn start(dir: &std::path::Path, nodes: usize) -> (RunningServer, Client, Simulator) {
    let mut cfg = ServerConfig::new("127.0.0.1:0".parse().unwrap(), dir);
    cfg.nodes = nodes;
    let server = Server::start(cfg).await.unwrap();
    let kc: kube::config::Kubeconfig =
        flotilla_yaml::from_str(&server.kubeconfig("member")).unwrap();
    let config = Config::from_custom_kubeconfig(kc, &Default::default())
        .await
        .unwrap();
    let client = Client::try_from(config).unwrap();
    let simulator = Simulator::start(
        client.clone(),
        SimulatorConfig {
            delay: Duration::from_millis(50),
            cluster: "member".into(),
            ..SimulatorConfig::default()
        },
    );
    (server, client, simulator)
}

/// Polls `api.get(name)` until `check` accepts the object, failing with the last state after the deadline.
async fn wait_for<K, F>(api: &Api<K>, name: &str, what: &str, check: F) -> K
where
    K: Clone + DeserializeOwned + std::fmt::Debug + kube::Resource,
    F: Fn(&K) -> bool,
{
    let deadline = tokio::time::Instant::now() + DEADLINE;
    loop {
        let last = api.get(name).await.ok();
        if let Some(obj) = &last
            && check(obj)
        {
            return obj.clone();
        }
        if tokio::time::Instant::now() > deadline {
            panic!("timed out waiting for {what}; last state: {last:#?}");
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn mk<K: DeserializeOwned>(v: Value) -> K {
    serde_json::from_value(v).unwrap()
}

fn pod_template() -> Value {
    json!({"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "web", "image": "nginx"}]}})
}

fn workload(name: &str, replicas: i32) -> Value {
    json!({"metadata": {"name": name}, "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "web"}}, "template": pod_template()}})
}

#[tokio::test]
async fn deployment_status_arrives_as_a_modified_event_and_follows_scaling() {
    let dir = tempfile::tempdir().unwrap();
    let (server, client, simulator) = start(dir.path(), 2).await;
    let api: Api<Deployment> = Api::namespaced(client.clone(), "default");
    let mut events = api
        .watch(&WatchParams::default(), "0")
        .await
        .unwrap()
        .boxed();
    let created = api
        .create(&PostParams::default(), &mk(workload("web", 2)))
        .await
        .unwrap();
    let created_rv: u64 = created.resource_version().unwrap().parse().unwrap();

    // Another client sees the simulator's write as a MODIFIED event with a newer resourceVersion.
    let deadline = tokio::time::Instant::now() + DEADLINE;
    let modified = loop {
        let ev = tokio::time::timeout_at(deadline, events.next())
            .await
            .expect("a MODIFIED event before the deadline")
            .expect("the watch stays open")
            .unwrap();
        if let WatchEvent::Modified(d) = ev {
            break d;
        }
    };
    let rv: u64 = modified.resource_version().unwrap().parse().unwrap();
    assert!(rv > created_rv, "{rv} > {created_rv}");
    let status = modified.status.clone().unwrap();
    assert_eq!(status.ready_replicas, Some(2));
    assert_eq!(status.available_replicas, Some(2));
    assert_eq!(status.updated_replicas, Some(2));
    assert_eq!(status.observed_generation, Some(1));
    assert_eq!(
        modified.metadata.generation,
        Some(1),
        "status writes never move the generation"
    );
    let available = status
        .conditions
        .unwrap_or_default()
        .into_iter()
        .find(|c| c.type_ == "Available")
        .unwrap();
    assert_eq!(available.status, "True");

    api.patch(
        "web",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"replicas": 4}})),
    )
    .await
    .unwrap();
    wait_for(&api, "web", "observedGeneration 2 with 4 ready", |d| {
        d.status
            .as_ref()
            .is_some_and(|s| s.observed_generation == Some(2) && s.ready_replicas == Some(4))
    })
    .await;

    simulator.shutdown().await;
    server.shutdown().await;
}

#[tokio::test]
async fn settled_objects_are_not_rewritten_and_custom_resources_are_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let (server, client, simulator) = start(dir.path(), 1).await;
    // A CRD with a status subresource, as the Workload example has.
    let crds = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("apiextensions.k8s.io", "v1", "CustomResourceDefinition"),
        "customresourcedefinitions",
    );
    let crd_api: Api<DynamicObject> = Api::all_with(client.clone(), &crds);
    let crd = json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "workloads.workload.example.io"},
        "spec": {"group": "workload.example.io", "scope": "Namespaced",
                 "names": {"plural": "workloads", "singular": "workload", "kind": "Workload", "listKind": "WorkloadList"},
                 "versions": [{"name": "v1alpha1", "served": true, "storage": true, "subresources": {"status": {}},
                               "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]}
    });
    crd_api
        .create(&PostParams::default(), &mk(crd))
        .await
        .unwrap();
    let wl_res = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("workload.example.io", "v1alpha1", "Workload"),
        "workloads",
    );
    let wl_api: Api<DynamicObject> = Api::namespaced_with(client.clone(), "default", &wl_res);
    let deadline = tokio::time::Instant::now() + DEADLINE;
    let wl = json!({"apiVersion": "workload.example.io/v1alpha1", "kind": "Workload",
                    "metadata": {"name": "nginx"}, "spec": {"replicas": 2, "template": pod_template()}});
    loop {
        match wl_api.create(&PostParams::default(), &mk(wl.clone())).await {
            Ok(_) => break,
            Err(e) if tokio::time::Instant::now() > deadline => panic!("CR never served: {e}"),
            Err(_) => tokio::time::sleep(Duration::from_millis(20)).await,
        }
    }

    let api: Api<Deployment> = Api::namespaced(client.clone(), "default");
    api.create(&PostParams::default(), &mk(workload("first", 1)))
        .await
        .unwrap();
    let settled = wait_for(&api, "first", "first deployment settled", |d| {
        d.status
            .as_ref()
            .is_some_and(|s| s.ready_replicas == Some(1))
    })
    .await;
    // A metadata-only change wakes the simulator up; it must find nothing to do.
    let labelled = api
        .patch(
            "first",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": {"touched": "yes"}}})),
        )
        .await
        .unwrap();
    assert_ne!(labelled.resource_version(), settled.resource_version());
    // A later object settling shows the simulator has processed everything before it.
    api.create(&PostParams::default(), &mk(workload("second", 3)))
        .await
        .unwrap();
    wait_for(&api, "second", "second deployment settled", |d| {
        d.status
            .as_ref()
            .is_some_and(|s| s.ready_replicas == Some(3))
    })
    .await;
    let first = api.get("first").await.unwrap();
    assert_eq!(
        first.resource_version(),
        labelled.resource_version(),
        "a settled deployment was rewritten"
    );
    let cr = wl_api.get("nginx").await.unwrap();
    assert!(
        cr.data.get("status").is_none(),
        "custom resource got a status: {cr:?}"
    );

    simulator.shutdown().await;
    server.shutdown().await;
}

#[tokio::test]
async fn every_builtin_workload_kind_gets_its_controllers_status() {
    let dir = tempfile::tempdir().unwrap();
    let (server, client, simulator) = start(dir.path(), 3).await;
    let ns = "default";

    let sts: Api<StatefulSet> = Api::namespaced(client.clone(), ns);
    let mut s = workload("db", 2);
    s["spec"]["serviceName"] = json!("db");
    sts.create(&PostParams::default(), &mk(s)).await.unwrap();
    let rs: Api<ReplicaSet> = Api::namespaced(client.clone(), ns);
    rs.create(&PostParams::default(), &mk(workload("rs", 2)))
        .await
        .unwrap();
    let ds: Api<DaemonSet> = Api::namespaced(client.clone(), ns);
    let mut d = workload("agent", 0);
    d["spec"].as_object_mut().unwrap().remove("replicas");
    ds.create(&PostParams::default(), &mk(d)).await.unwrap();
    let jobs: Api<Job> = Api::namespaced(client.clone(), ns);
    let job = json!({"metadata": {"name": "pi"}, "spec": {"completions": 2, "template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "pi", "image": "perl"}]}}}});
    jobs.create(&PostParams::default(), &mk(job)).await.unwrap();
    let pods: Api<Pod> = Api::namespaced(client.clone(), ns);
    let pod = json!({"metadata": {"name": "web"}, "spec": {"containers": [{"name": "web", "image": "nginx"}]}});
    pods.create(&PostParams::default(), &mk(pod)).await.unwrap();

    wait_for(&sts, "db", "statefulset ready", |o| {
        o.status.as_ref().is_some_and(|s| {
            s.ready_replicas == Some(2)
                && s.current_replicas == Some(2)
                && s.updated_replicas == Some(2)
                && s.available_replicas == Some(2)
                && s.observed_generation == Some(1)
        })
    })
    .await;
    wait_for(&rs, "rs", "replicaset ready", |o| {
        o.status
            .as_ref()
            .is_some_and(|s| s.replicas == 2 && s.available_replicas == Some(2))
    })
    .await;
    wait_for(&ds, "agent", "daemonset on every seeded node", |o| {
        o.status.as_ref().is_some_and(|s| {
            s.desired_number_scheduled == 3
                && s.number_ready == 3
                && s.updated_number_scheduled == Some(3)
                && s.number_available == Some(3)
        })
    })
    .await;
    let done = wait_for(&jobs, "pi", "job complete", |o| {
        o.status.as_ref().is_some_and(|s| {
            s.conditions
                .iter()
                .flatten()
                .any(|c| c.type_ == "Complete" && c.status == "True")
        })
    })
    .await;
    let st = done.status.unwrap();
    assert_eq!(st.succeeded, Some(2));
    assert!(st.start_time.is_some() && st.completion_time.is_some());
    let running = wait_for(&pods, "web", "pod running", |o| {
        o.status
            .as_ref()
            .is_some_and(|s| s.phase.as_deref() == Some("Running"))
    })
    .await;
    let st = running.status.unwrap();
    assert!(st.pod_ip.is_some_and(|ip| ip.starts_with("10.244.")));
    assert!(
        st.conditions
            .unwrap_or_default()
            .iter()
            .any(|c| c.type_ == "Ready" && c.status == "True")
    );

    simulator.shutdown().await;
    server.shutdown().await;
}
