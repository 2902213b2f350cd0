use serde_json::{Value, json};

use super::*;
use crate::write::put_for_test as put;

fn pairs(query: &[(&str, &str)]) -> Vec<(String, String)> {
    query
        .iter()
        .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
        .collect()
}

fn pod(name: &str, node: Option<&str>, containers: &[&str]) -> Value {
    let containers: Vec<Value> = containers
        .iter()
        .map(|c| json!({"name": c, "image": "nginx"}))
        .collect();
    let mut pod = json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"initContainers": [{"name": "init", "image": "busybox"}], "containers": containers}});
    if let Some(node) = node {
        pod["spec"]["nodeName"] = json!(node);
    }
    pod
}

/// A context with Node `node-1` (a hostname, then its InternalIP, and a kubelet port), `node-2` (no address yet)
/// and pods on them.
async fn world(dir: &std::path::Path) -> std::sync::Arc<Ctx> {
    let ctx = Ctx::for_test(dir);
    put(&ctx, "nodes", "", json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-1"},
        "status": {"addresses": [{"type": "Hostname", "address": "node-1"}, {"type": "InternalIP", "address": "127.0.0.1"}],
                   "daemonEndpoints": {"kubeletEndpoint": {"Port": 10300}}}}))
    .await;
    put(
        &ctx,
        "nodes",
        "",
        json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-2"},
        "status": {"addresses": []}}),
    )
    .await;
    put(
        &ctx,
        "pods",
        "default",
        pod("web", Some("node-1"), &["nginx", "sidecar"]),
    )
    .await;
    put(
        &ctx,
        "pods",
        "default",
        pod("solo", Some("node-1"), &["nginx"]),
    )
    .await;
    put(&ctx, "pods", "default", pod("pending", None, &["nginx"])).await;
    put(
        &ctx,
        "pods",
        "default",
        pod("stranded", Some("node-2"), &["nginx"]),
    )
    .await;
    ctx
}

#[tokio::test]
async fn logs_go_to_the_kubelet_of_the_pods_node_on_its_internal_ip() {
    let dir = tempfile::tempdir().expect("tempdir");
    let ctx = world(dir.path()).await;
    let opts = LogOptions::from_query(&pairs(&[
        ("container", "sidecar"),
        ("timestamps", "true"),
        ("tailLines", "3"),
        ("follow", "1"),
    ]))
    .expect("options");
    let location = log_location(&ctx, "default", "web", &opts)
        .expect("located")
        .expect("the pod is bound");
    assert_eq!(location.authority(), "127.0.0.1:10300");
    assert_eq!(location.path, "/containerLogs/default/web/sidecar");
    assert_eq!(
        location.query,
        pairs(&[
            ("follow", "true"),
            ("timestamps", "true"),
            ("tailLines", "3")
        ])
    );
    // The only container needs no name; init containers count as the pod's.
    let only = log_location(&ctx, "default", "solo", &LogOptions::default())
        .expect("located")
        .expect("bound");
    assert_eq!(only.path, "/containerLogs/default/solo/nginx");
    let init = LogOptions {
        container: Some("init".into()),
        ..LogOptions::default()
    };
    assert!(log_location(&ctx, "default", "solo", &init).is_ok());
}

#[tokio::test]
async fn the_container_must_be_the_pods_and_named_when_there_are_several() {
    let dir = tempfile::tempdir().expect("tempdir");
    let ctx = world(dir.path()).await;
    let named = |c: &str| LogOptions {
        container: Some(c.into()),
        ..LogOptions::default()
    };
    let e = log_location(&ctx, "default", "web", &named("non-existent-container"))
        .expect_err("no such container");
    assert_eq!((e.code, e.reason), (400, "BadRequest"));
    assert_eq!(
        e.message,
        "container non-existent-container is not valid for pod web"
    );
    let e = log_location(&ctx, "default", "web", &LogOptions::default()).expect_err("which?");
    assert_eq!(
        e.message,
        "a container name must be specified for pod web, choose one of: [init nginx sidecar]"
    );
    let exec = ExecOptions {
        container: Some("nope".into()),
        command: vec!["true".into()],
        ..ExecOptions::default()
    };
    let e = exec_location(&ctx, "default", "web", &exec).expect_err("no such container");
    assert_eq!(e.message, "container nope is not valid for pod web");
}

#[tokio::test]
async fn a_missing_pod_is_not_found_and_an_unbound_one_has_no_kubelet() {
    let dir = tempfile::tempdir().expect("tempdir");
    let ctx = world(dir.path()).await;
    let e = log_location(&ctx, "default", "ghost", &LogOptions::default()).expect_err("missing");
    assert_eq!(
        (e.code, e.message.as_str()),
        (404, "pods \"ghost\" not found")
    );
    assert_eq!(
        log_location(&ctx, "default", "pending", &LogOptions::default()).expect("no error"),
        None,
        "an unbound pod's logs are empty"
    );
    let exec = ExecOptions::from_query(&pairs(&[("command", "true"), ("stdout", "true")]));
    let e = exec_location(&ctx, "default", "pending", &exec).expect_err("unbound");
    assert_eq!(
        (e.code, e.message.as_str()),
        (400, "pod pending does not have a host assigned")
    );
    let e = exec_location(&ctx, "default", "stranded", &exec).expect_err("no usable address");
    assert_eq!(e.code, 500);
    assert_eq!(
        e.message,
        "no preferred addresses found; known addresses: []"
    );
}

#[tokio::test]
async fn exec_passes_the_streams_as_ones_and_the_command_in_order() {
    let dir = tempfile::tempdir().expect("tempdir");
    let ctx = world(dir.path()).await;
    let opts = ExecOptions::from_query(&pairs(&[
        ("command", "echo"),
        ("command", "hello world"),
        ("container", "sidecar"),
        ("stdout", "true"),
        ("stderr", "true"),
        ("stdin", "false"),
    ]));
    let location = exec_location(&ctx, "default", "web", &opts).expect("located");
    assert_eq!(location.path, "/exec/default/web/sidecar");
    assert_eq!(
        location.query,
        pairs(&[
            ("stdout", "1"),
            ("stderr", "1"),
            ("command", "echo"),
            ("command", "hello world")
        ])
    );
}

#[test]
fn log_options_parse_and_validate_as_kube_does() {
    let opts = LogOptions::from_query(&pairs(&[
        ("previous", ""),
        ("timestamps", "False"),
        ("sinceTime", "2024-05-01T10:00:00.5+02:00"),
        ("limitBytes", "10"),
    ]))
    .expect("options");
    assert!(opts.previous, "an empty value is true");
    assert!(!opts.timestamps);
    assert_eq!(opts.since_time.as_deref(), Some("2024-05-01T08:00:00Z"));
    opts.validate("web").expect("valid");

    let e = LogOptions::from_query(&pairs(&[("tailLines", "ten")])).expect_err("not a number");
    assert_eq!(
        (e.code, e.message.as_str()),
        (400, "strconv.ParseInt: parsing \"ten\": invalid syntax")
    );

    let bad = LogOptions::from_query(&pairs(&[
        ("tailLines", "-1"),
        ("limitBytes", "0"),
        ("sinceSeconds", "5"),
        ("sinceTime", "2024-05-01T10:00:00Z"),
        ("stream", "Stdout"),
    ]))
    .expect("parsed");
    let e = bad.validate("web").expect_err("invalid");
    assert_eq!((e.code, e.reason), (422, "Invalid"));
    assert_eq!(
        e.message,
        "PodLogOptions \"web\" is invalid: [tailLines: Invalid value: -1: must be greater than or equal to 0, \
         limitBytes: Invalid value: 0: must be greater than 0, \
         : Forbidden: at most one of `sinceTime` or `sinceSeconds` may be specified, \
         stream: Forbidden: may not be specified]"
    );
    let e = LogOptions {
        since_seconds: Some(0),
        ..LogOptions::default()
    }
    .validate("web")
    .expect_err("not positive");
    assert_eq!(
        e.message,
        "PodLogOptions \"web\" is invalid: sinceSeconds: Invalid value: 0: must be greater than 0"
    );
}
