//! New Clusters are judged by Karmada's validation before anything is written (names, `generateName` prefixes,
//! the spec), with Karmada's `422 Invalid` Status; existing Clusters stay writable; and the `storage` version's
//! deprecation warning never reaches a caller of `v1alpha1`.

use flotilla_api::cluster::STORAGE_DEPRECATION_WARNING;
use flotilla_api::cluster::v1alpha1::{Cluster, ClusterSpec, ClusterSyncMode};
use kube::api::{ListParams, PostParams};
use kube::{Api, Client};
use serde_json::json;

use crate::clusters::on_control_plane;
use crate::support::{Answer, Caller, Env, Events, as_user, call_as_admin, full};

const CLUSTERS: &str = "/apis/cluster.karmada.io/v1alpha1/clusters";
const ADMIN: [&str; 2] = ["system:masters", "system:authenticated"];

/// A request of `method` to `rest` below the Clusters' path with `body` of `content_type`, as the admin.
async fn send(
    caller: &Caller,
    env: &Env,
    method: &str,
    rest: &str,
    content_type: &str,
    body: &str,
) -> Answer {
    let url = format!("{}{CLUSTERS}{rest}", env.url);
    call_as_admin(
        caller,
        method,
        &url,
        &[("content-type", content_type)],
        body,
    )
    .await
}

/// A Cluster's YAML with `metadata` and `spec` given as flow mappings.
fn yaml(metadata: &str, spec: &str) -> String {
    format!(
        "apiVersion: cluster.karmada.io/v1alpha1\nkind: Cluster\nmetadata: {metadata}\nspec: {spec}\n"
    )
}

const PUSH: &str = "{syncMode: Push, apiEndpoint: 'https://x'}";

/// The `field: message` of every cause of a 422, after checking the Status around them.
fn causes(answer: &Answer) -> Vec<String> {
    assert_eq!(answer.status, 422, "{}", answer.text());
    let status = answer.json();
    assert_eq!(
        (
            status["kind"].as_str(),
            status["reason"].as_str(),
            status["code"].as_i64()
        ),
        (Some("Status"), Some("Invalid"), Some(422))
    );
    assert_eq!(
        (
            status["details"]["group"].as_str(),
            status["details"]["kind"].as_str()
        ),
        (Some("cluster.karmada.io"), Some("Cluster"))
    );
    status["details"]["causes"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|cause| {
            format!(
                "{}: {}",
                cause["field"].as_str().unwrap_or_default(),
                cause["message"].as_str().unwrap_or_default()
            )
        })
        .collect()
}

async fn stored_names(client: &Client) -> Vec<String> {
    on_control_plane(client, "storage")
        .list(&ListParams::default())
        .await
        .expect("listed")
        .items
        .into_iter()
        .filter_map(|cluster| cluster.metadata.name)
        .collect()
}

#[tokio::test]
async fn new_clusters_are_refused_as_karmada_refuses_them_before_anything_is_written() {
    let env = Env::start().await;
    let caller = env.front_proxy();
    let clusters: Api<Cluster> = Api::all(env.kube_as("admin", &ADMIN).await);
    let as_yaml = "application/yaml";

    // kube-rs sees kube's Invalid error, with Karmada's text.
    let dotted = Cluster::new(
        "a.b",
        ClusterSpec {
            sync_mode: ClusterSyncMode::Push,
            api_endpoint: "https://x".into(),
            ..ClusterSpec::default()
        },
    );
    let Err(kube::Error::Api(status)) = clusters.create(&PostParams::default(), &dotted).await
    else {
        panic!("a.b is refused");
    };
    assert_eq!((status.code, status.reason.as_str()), (422, "Invalid"));
    assert_eq!(
        status.message,
        "Cluster.cluster.karmada.io \"a.b\" is invalid: metadata.name: Invalid value: \"a.b\": must not contain dots"
    );

    // Karmada's answer to `Bad_Name` (design/karmada-answers/16-cluster-crud.txt), and a name too long for
    // `karmada-es-<name>`.
    let bad = send(
        &caller,
        &env,
        "POST",
        "",
        as_yaml,
        &yaml("{name: Bad_Name}", PUSH),
    )
    .await;
    assert_eq!(
        causes(&bad),
        [
            "metadata.name: Invalid value: \"Bad_Name\": a lowercase RFC 1123 label must consist of lower case \
          alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. \
          'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
        ]
    );
    assert_eq!(bad.json()["details"]["name"], "Bad_Name");
    let long = "abcdefghij-abcdefghij-abcdefghij-abcdefghij-abcdefghij";
    let refused = send(
        &caller,
        &env,
        "POST",
        "",
        as_yaml,
        &yaml(&format!("{{name: {long}}}"), PUSH),
    )
    .await;
    assert_eq!(
        causes(&refused),
        [format!(
            "metadata.name: Invalid value: \"{long}\": must be no more than 48 characters"
        )]
    );

    // The spec, as Karmada words it.
    let minimal = send(
        &caller,
        &env,
        "POST",
        "",
        as_yaml,
        &yaml("{name: minimal}", "{}"),
    )
    .await;
    assert_eq!(
        causes(&minimal),
        [
            "spec.syncMode: Required value",
            "spec.syncMode: Unsupported value: \"\": supported values: \"Pull\", \"Push\""
        ]
    );
    let sideways = send(
        &caller,
        &env,
        "POST",
        "",
        as_yaml,
        &yaml("{name: bad}", "{syncMode: Sideways}"),
    )
    .await;
    assert_eq!(
        sideways.json()["message"],
        "Cluster.cluster.karmada.io \"bad\" is invalid: spec.syncMode: Unsupported value: \"Sideways\": supported \
         values: \"Pull\", \"Push\""
    );
    let endpoint = send(
        &caller,
        &env,
        "POST",
        "",
        as_yaml,
        &yaml("{name: m}", "{syncMode: Push, apiEndpoint: '10.0.0.1:6443', taints: [{key: k, effect: PreferNoSchedule}]}"),
    )
    .await;
    assert_eq!(
        causes(&endpoint),
        [
            "spec.apiEndpoint: Invalid value: \"10.0.0.1:6443\": apiEndpoint must be a valid URL: parse \
             \"10.0.0.1:6443\": first path segment in URL cannot contain colon; desired format: hostname, \
             hostname:port, IP or IP:port",
            "spec.taints[0].effect: Unsupported value: \"PreferNoSchedule\": supported values: \"NoSchedule\", \
             \"NoExecute\""
        ]
    );

    // generateName: refused when no generated name can pass, created otherwise.
    let dotted_prefix = send(
        &caller,
        &env,
        "POST",
        "",
        as_yaml,
        &yaml("{generateName: a.b-}", PUSH),
    )
    .await;
    assert_eq!(
        causes(&dotted_prefix),
        ["metadata.generateName: Invalid value: \"a.b-\": must not contain dots"]
    );
    assert!(dotted_prefix.json()["details"].get("name").is_none());
    let long_prefix = send(
        &caller,
        &env,
        "POST",
        "",
        as_yaml,
        &yaml(&format!("{{generateName: {}-}}", "m".repeat(43)), PUSH),
    )
    .await;
    assert_eq!(causes(&long_prefix).len(), 1);
    let generated = send(
        &caller,
        &env,
        "POST",
        "",
        as_yaml,
        &yaml("{generateName: member-}", PUSH),
    )
    .await;
    assert_eq!(generated.status, 201, "{}", generated.text());
    let generated_name = generated.json()["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(
        generated_name.starts_with("member-") && generated_name.len() == 12,
        "{generated_name}"
    );

    // A dry run is judged too; a server-side apply that creates is judged, one that updates is passed on.
    let dry = send(
        &caller,
        &env,
        "POST",
        "?dryRun=All",
        as_yaml,
        &yaml("{name: a.b}", PUSH),
    )
    .await;
    assert_eq!(causes(&dry).len(), 1);
    let apply = "application/apply-patch+yaml";
    let applied = send(
        &caller,
        &env,
        "PATCH",
        "/a.b?fieldManager=test",
        apply,
        &yaml("{name: a.b}", PUSH),
    )
    .await;
    assert_eq!(
        causes(&applied),
        ["metadata.name: Invalid value: \"a.b\": must not contain dots"]
    );
    let applied = send(
        &caller,
        &env,
        "PATCH",
        "/applied?fieldManager=test",
        apply,
        &yaml("{name: applied}", PUSH),
    )
    .await;
    assert_eq!(applied.status, 201, "{}", applied.text());
    let again = send(
        &caller,
        &env,
        "PATCH",
        "/applied?fieldManager=test",
        apply,
        &yaml(
            "{name: applied}",
            "{syncMode: Pull, apiEndpoint: 'https://x'}",
        ),
    )
    .await;
    assert_eq!(again.status, 200, "{}", again.text());
    assert_eq!(again.json()["spec"]["syncMode"], "Pull");

    let mut expected = vec!["applied".to_owned(), generated_name];
    expected.sort();
    let mut stored = stored_names(&env.control.client).await;
    stored.sort();
    assert_eq!(stored, expected, "nothing refused was written");

    // A valid Cluster with every checked field is created.
    let full_spec = "{syncMode: Push, apiEndpoint: 'https://10.0.0.1:6443', proxyURL: 'socks5://p:1080', \
                     provider: kwok, region: r1, zones: [z1, z2], secretRef: {namespace: karmada-cluster, name: m1}, \
                     taints: [{key: dedicated, value: gpu, effect: NoSchedule}]}";
    let made = send(
        &caller,
        &env,
        "POST",
        "",
        as_yaml,
        &yaml("{name: member1}", full_spec),
    )
    .await;
    assert_eq!(made.status, 201, "{}", made.text());
    assert_eq!(made.json()["apiVersion"], "cluster.karmada.io/v1alpha1");
    env.stop().await;
}

#[tokio::test]
async fn clusters_stored_before_the_checks_stay_writable() {
    let env = Env::start().await;
    let caller = env.front_proxy();
    // Written straight to the CRD, as before the aggregated server judged names.
    let legacy: kube::api::DynamicObject = serde_json::from_value(json!({
        "apiVersion": "cluster.karmada.io/storage", "kind": "Cluster",
        "metadata": {"name": "legacy.one", "finalizers": ["karmada.io/cluster-controller"]},
        "spec": {"syncMode": "Push", "apiEndpoint": "https://x", "zone": "z1", "zones": ["z1"]},
    }))
    .expect("an object");
    on_control_plane(&env.control.client, "storage")
        .create(&PostParams::default(), &legacy)
        .await
        .expect("stored directly");
    let patched = send(
        &caller,
        &env,
        "PATCH",
        "/legacy.one",
        "application/merge-patch+json",
        r#"{"metadata":{"finalizers":null,"labels":{"l":"1"}}}"#,
    )
    .await;
    assert_eq!(patched.status, 200, "{}", patched.text());
    let mut object = patched.json();
    object["metadata"]["labels"]["l"] = json!("2");
    let replaced = send(
        &caller,
        &env,
        "PUT",
        "/legacy.one",
        "application/json",
        &object.to_string(),
    )
    .await;
    assert_eq!(replaced.status, 200, "{}", replaced.text());
    let deleted = send(
        &caller,
        &env,
        "DELETE",
        "/legacy.one",
        "application/json",
        "",
    )
    .await;
    assert_eq!(deleted.status, 200, "{}", deleted.text());
    env.stop().await;
}

/// The control plane's client, with the warnings kube-apiserver sends for a deprecated CRD version added to
/// every answer from the `storage` version (the embedded API server sends none), and one warning of another
/// kind, which must reach the caller.
fn warning_as_kube_apiserver(inner: Client) -> Client {
    let service = tower::service_fn(move |request: http::Request<kube::client::Body>| {
        let inner = inner.clone();
        async move {
            let storage = request
                .uri()
                .path()
                .starts_with("/apis/cluster.karmada.io/storage");
            let mut answer = inner.send(request).await?;
            if storage {
                let headers = answer.headers_mut();
                let deprecated = format!("299 - \"{STORAGE_DEPRECATION_WARNING}\"");
                headers.append(
                    http::header::WARNING,
                    deprecated.parse().expect("a header value"),
                );
                headers.append(
                    http::header::WARNING,
                    "299 - \"another warning\"".parse().expect("a header value"),
                );
            }
            Ok::<_, kube::Error>(answer)
        }
    });
    Client::new(service, "default")
}

fn warnings(headers: &http::HeaderMap) -> Vec<String> {
    headers
        .get_all(http::header::WARNING)
        .iter()
        .filter_map(|value| value.to_str().ok().map(str::to_owned))
        .collect()
}

#[tokio::test]
async fn the_storage_versions_deprecation_warning_never_reaches_a_v1alpha1_caller() {
    let env = Env::start_with(warning_as_kube_apiserver).await;
    let caller = env.front_proxy();
    let others = ["299 - \"another warning\"".to_owned()];
    let created = send(
        &caller,
        &env,
        "POST",
        "",
        "application/yaml",
        &yaml("{name: m1}", PUSH),
    )
    .await;
    assert_eq!(created.status, 201, "{}", created.text());
    assert_eq!(warnings(&created.headers), others);
    for (rest, accept) in [
        ("/m1", "application/json"),
        ("", "application/json"),
        ("", "application/json;as=Table;v=v1;g=meta.k8s.io"),
        ("/m1/status", "application/json"),
    ] {
        let url = format!("{}{CLUSTERS}{rest}", env.url);
        let answer = call_as_admin(&caller, "GET", &url, &[("accept", accept)], "").await;
        assert_eq!(answer.status, 200, "{rest} {accept}: {}", answer.text());
        assert_eq!(warnings(&answer.headers), others, "{rest} {accept}");
    }
    let patched = send(
        &caller,
        &env,
        "PATCH",
        "/m1",
        "application/merge-patch+json",
        r#"{"spec":{"region":"r"}}"#,
    )
    .await;
    assert_eq!(warnings(&patched.headers), others);
    let refused = send(&caller, &env, "GET", "/nope", "application/json", "").await;
    assert_eq!(
        (refused.status, warnings(&refused.headers)),
        (404, others.to_vec())
    );
    let request = as_user(
        "GET",
        &format!("{}{CLUSTERS}?watch=true", env.url),
        "admin",
        &ADMIN,
        full(""),
    );
    let watch = caller.send(request).await.expect("a watch");
    assert_eq!(warnings(watch.headers()), others);
    let mut events = Events::of(watch);
    assert_eq!(events.next().await["type"], "ADDED");

    // kube-rs, as a controller reads Clusters through v1alpha1: its warnings are empty too.
    let clusters: Api<Cluster> = Api::all(env.kube_as("admin", &ADMIN).await);
    let got = clusters.get("m1").await.expect("m1");
    assert_eq!(got.spec.region, "r");
    let deleted = send(&caller, &env, "DELETE", "/m1", "application/json", "").await;
    assert_eq!(warnings(&deleted.headers), others);
    env.stop().await;
}
