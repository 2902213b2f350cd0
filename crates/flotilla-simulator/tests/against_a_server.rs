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

/// A WebSocket client of the server's `pods/exec`, speaking `protocol`, as kubectl's (v5) or the Python client's
/// (v4) speak it.
mod exec_client {
    use std::sync::Arc;

    use futures::{SinkExt, StreamExt};
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, ServerName};
    use tokio_tungstenite::tungstenite::Message;
    use tokio_tungstenite::tungstenite::client::IntoClientRequest;

    pub(super) type Socket =
        tokio_tungstenite::WebSocketStream<tokio_rustls::client::TlsStream<tokio::net::TcpStream>>;

    /// Opens an exec of `query` in pod `default/web`; the socket and the protocol the server chose.
    pub(super) async fn open(
        server: &flotilla_apiserver::RunningServer,
        query: &str,
        protocol: &str,
    ) -> (Socket, String) {
        let addr = server.local_addr();
        let mut roots = rustls::RootCertStore::empty();
        for cert in CertificateDer::pem_slice_iter(server.ca_pem().as_bytes()) {
            roots.add(cert.unwrap()).unwrap();
        }
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut tls = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_root_certificates(roots)
            .with_no_client_auth();
        // Only HTTP/1.1 switches protocols.
        tls.alpn_protocols = vec![b"http/1.1".to_vec()];
        let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
        let stream = tokio_rustls::TlsConnector::from(Arc::new(tls))
            .connect(ServerName::IpAddress(addr.ip().into()), tcp)
            .await
            .unwrap();
        let mut request = format!("wss://{addr}/api/v1/namespaces/default/pods/web/exec?{query}")
            .into_client_request()
            .unwrap();
        let headers = request.headers_mut();
        headers.insert(
            "authorization",
            format!("Bearer {}", server.admin_token()).parse().unwrap(),
        );
        headers.insert("sec-websocket-protocol", protocol.parse().unwrap());
        let (socket, response) = tokio_tungstenite::client_async(request, stream)
            .await
            .unwrap();
        let chosen = response
            .headers()
            .get("sec-websocket-protocol")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string();
        (socket, chosen)
    }

    /// Every binary message until the server closes, and the close code.
    pub(super) async fn until_closed(socket: &mut Socket) -> (Vec<Vec<u8>>, Option<u16>) {
        let mut messages = Vec::new();
        while let Some(message) = socket.next().await {
            match message.unwrap() {
                Message::Binary(data) => messages.push(data.to_vec()),
                Message::Close(frame) => return (messages, frame.map(|f| u16::from(f.code))),
                _ => {}
            }
        }
        (messages, None)
    }

    pub(super) async fn send(socket: &mut Socket, data: &[u8]) {
        socket
            .send(Message::Binary(data.to_vec().into()))
            .await
            .unwrap();
    }

    /// The next binary message.
    pub(super) async fn next(socket: &mut Socket) -> Vec<u8> {
        loop {
            if let Message::Binary(data) = socket.next().await.unwrap().unwrap() {
                return data.to_vec();
            }
        }
    }
}

/// A pod is bound to a Node by the simulated scheduler, runs with its Node's address, and its simulated
/// containers answer `pods/log` and `pods/exec` through the API server, to kube-rs, a WebSocket client and
/// kubectl.
#[tokio::test]
async fn pods_are_bound_and_their_simulated_containers_give_logs_and_run_exec() {
    use exec_client::{next, open, send, until_closed};
    use kube::api::LogParams;

    let dir = tempfile::tempdir().unwrap();
    let (server, client, simulator) = start(dir.path(), 2).await;
    let port = simulator.kubelet_port().expect("the kubelet serves");
    let nodes: Api<k8s_openapi::api::core::v1::Node> = Api::all(client.clone());
    for node in ["node-1", "node-2"] {
        wait_for(
            &nodes,
            node,
            "the Node to point at the simulated kubelet",
            |n| {
                let status = n.status.clone().unwrap_or_default();
                let internal = status
                    .addresses
                    .unwrap_or_default()
                    .first()
                    .is_some_and(|a| a.type_ == "InternalIP" && a.address == "127.0.0.1");
                let kubelet = status
                    .daemon_endpoints
                    .and_then(|d| d.kubelet_endpoint)
                    .map(|e| e.port);
                internal && kubelet == Some(i32::from(port))
            },
        )
        .await;
    }

    let pods: Api<Pod> = Api::namespaced(client.clone(), "default");
    let pod = json!({"metadata": {"name": "web"}, "spec": {"containers": [
        {"name": "nginx", "image": "nginx:1.19.0", "ports": [{"name": "web", "containerPort": 80}],
         "env": [{"name": "MODE", "value": "test"}]},
        {"name": "busybox", "image": "busybox", "command": ["sleep", "3600"]}]}});
    pods.create(&PostParams::default(), &mk(pod)).await.unwrap();
    let running = wait_for(&pods, "web", "the pod bound and running", |p| {
        p.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Running")
            && p.status.as_ref().and_then(|s| s.host_ip.as_deref()) == Some("127.0.0.1")
    })
    .await;
    let node = running.spec.unwrap().node_name.unwrap();
    assert!(node.starts_with("node-"), "{node}");

    // A pod that fits no Node is the scheduler's Unschedulable.
    let stuck = json!({"metadata": {"name": "stuck"}, "spec": {"nodeSelector": {"disk": "ssd"},
        "containers": [{"name": "c", "image": "nginx"}]}});
    pods.create(&PostParams::default(), &mk(stuck))
        .await
        .unwrap();
    wait_for(&pods, "stuck", "the pod reported unschedulable", |p| {
        p.status.iter().flat_map(|s| s.conditions.iter().flatten()).any(|c| {
            c.type_ == "PodScheduled"
                && c.status == "False"
                && c.message.as_deref().is_some_and(|m| m.starts_with("0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector."))
        })
    })
    .await;

    let logs = pods
        .logs(
            "web",
            &LogParams {
                container: Some("nginx".into()),
                ..LogParams::default()
            },
        )
        .await
        .unwrap();
    assert!(
        logs.starts_with(&format!(
            "flotilla simulated container nginx started on node {node} in pod default/web\n"
        )),
        "{logs}"
    );
    let last = pods
        .logs(
            "web",
            &LogParams {
                container: Some("busybox".into()),
                tail_lines: Some(2),
                timestamps: true,
                ..LogParams::default()
            },
        )
        .await
        .unwrap();
    let lines: Vec<&str> = last.lines().collect();
    assert_eq!(lines.len(), 2, "{last}");
    assert!(lines[0].ends_with(" command: sleep 3600"), "{last}");
    assert!(lines[1].ends_with("Z ready"), "{last}");
    let refused = |params: LogParams| {
        let pods = pods.clone();
        async move {
            match pods.logs("web", &params).await {
                Err(kube::Error::Api(status)) => (status.code, status.message),
                other => panic!("not refused: {other:?}"),
            }
        }
    };
    assert_eq!(
        refused(LogParams {
            container: Some("non-existent-container".into()),
            ..LogParams::default()
        })
        .await,
        (
            400,
            "container non-existent-container is not valid for pod web".to_string()
        )
    );
    assert_eq!(
        refused(LogParams {
            container: Some("nginx".into()),
            previous: true,
            ..LogParams::default()
        })
        .await,
        (
            400,
            "previous terminated container \"nginx\" in pod \"web\" not found".to_string()
        )
    );

    // Exec over WebSocket v5: ready, the output, the outcome, a normal close.
    let (mut socket, protocol) = open(
        &server,
        "command=echo&command=hello&container=nginx&stdout=true&stderr=true",
        "v5.channel.k8s.io",
    )
    .await;
    assert_eq!(protocol, "v5.channel.k8s.io");
    let (messages, close) = until_closed(&mut socket).await;
    assert_eq!(
        messages,
        [
            b"\x01".to_vec(),
            b"\x01hello\n".to_vec(),
            b"\x03{\"status\":\"Success\"}".to_vec()
        ]
    );
    assert_eq!(close, Some(1000));
    let (mut socket, _) = open(
        &server,
        "command=false&container=nginx&stdout=true",
        "v5.channel.k8s.io",
    )
    .await;
    let (messages, _) = until_closed(&mut socket).await;
    let outcome: Value = serde_json::from_slice(&messages.last().unwrap()[1..]).unwrap();
    assert_eq!(outcome["reason"], "NonZeroExitCode");
    assert_eq!(
        outcome["details"]["causes"][0],
        json!({"reason": "ExitCode", "message": "1"})
    );
    // v4, as the Python client speaks it; an executable the image lacks.
    let (mut socket, protocol) = open(
        &server,
        "command=ls&container=nginx&stdout=true",
        "v4.channel.k8s.io",
    )
    .await;
    assert_eq!(protocol, "v4.channel.k8s.io");
    let (messages, _) = until_closed(&mut socket).await;
    let outcome: Value = serde_json::from_slice(&messages.last().unwrap()[1..]).unwrap();
    assert_eq!(
        (outcome["reason"].as_str(), outcome["code"].as_i64()),
        (Some("InternalError"), Some(500))
    );
    assert!(
        outcome["message"]
            .as_str()
            .unwrap()
            .ends_with("exec: \"ls\": executable file not found in $PATH: unknown"),
        "{outcome}"
    );
    // Standard input to `cat`, ended by v5's close of channel 0.
    let (mut socket, _) = open(
        &server,
        "command=cat&container=nginx&stdin=true&stdout=true",
        "v5.channel.k8s.io",
    )
    .await;
    assert_eq!(next(&mut socket).await, [1]);
    send(&mut socket, b"\x00typed\n").await;
    assert_eq!(next(&mut socket).await, b"\x01typed\n");
    send(&mut socket, &[255, 0]).await;
    let (messages, close) = until_closed(&mut socket).await;
    assert_eq!(messages, [b"\x03{\"status\":\"Success\"}".to_vec()]);
    assert_eq!(close, Some(1000));

    // kubectl, as karmadactl's member client runs it.
    let kubeconfig = dir.path().join("member.kubeconfig");
    std::fs::write(&kubeconfig, server.kubeconfig("member")).unwrap();
    for bin in flotilla_testing::kubectl::kubectl_bins() {
        let run = |args: &'static [&'static str]| {
            let (bin, kubeconfig) = (bin.clone(), kubeconfig.clone());
            tokio::task::spawn_blocking(move || {
                flotilla_testing::kubectl::kubectl_split(&bin, &kubeconfig, args)
            })
        };
        let (code, stdout, stderr) = run(&["exec", "web", "-c", "nginx", "--", "echo", "hello"])
            .await
            .unwrap();
        assert_eq!(
            (code, stdout.as_str()),
            (Some(0), "hello\n"),
            "{bin}: {stderr}"
        );
        let (code, stdout, _) = run(&["exec", "web", "-c", "nginx", "--", "hostname"])
            .await
            .unwrap();
        assert_eq!((code, stdout.as_str()), (Some(0), "web\n"), "{bin}");
        let (code, _, stderr) = run(&["exec", "web", "-c", "nginx", "--", "false"])
            .await
            .unwrap();
        assert_eq!(code, Some(1), "{bin}: {stderr}");
        assert!(
            stderr.contains("command terminated with exit code 1"),
            "{bin}: {stderr}"
        );
        let (code, stdout, stderr) = run(&["logs", "web"]).await.unwrap();
        assert_eq!(code, Some(0), "{bin}: {stderr}");
        assert!(
            stdout.contains("flotilla simulated container nginx started"),
            "{bin}: {stdout}"
        );
        let (code, _, stderr) = run(&["logs", "web", "-c", "non-existent-container"])
            .await
            .unwrap();
        assert_eq!(code, Some(1));
        assert!(
            stderr.contains("container non-existent-container is not valid for pod web"),
            "{bin}: {stderr}"
        );
    }

    // A followed log stays open while the pod runs and ends when it goes.
    let mut followed = pods
        .log_stream(
            "web",
            &LogParams {
                container: Some("nginx".into()),
                follow: true,
                ..LogParams::default()
            },
        )
        .await
        .unwrap();
    let mut lines = Vec::new();
    use futures::AsyncBufReadExt;
    let mut line = String::new();
    while !line.trim_end().ends_with("ready") {
        line.clear();
        followed.read_line(&mut line).await.unwrap();
        lines.push(line.clone());
    }
    pods.delete("web", &Default::default()).await.unwrap();
    line.clear();
    let end = tokio::time::timeout(DEADLINE, followed.read_line(&mut line)).await;
    assert!(
        matches!(end, Ok(Ok(0))),
        "the follow went on: {end:?} {line:?}"
    );

    simulator.shutdown().await;
    server.shutdown().await;
}
