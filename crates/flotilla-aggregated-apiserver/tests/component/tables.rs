//! Clusters as Karmada's Table, built by this server from the control plane's JSON for get, list and watch,
//! with every `includeObject`; and kubectl behind the embedded aggregator printing Karmada's columns.

use flotilla_api::cluster::v1alpha1::Cluster;
use flotilla_testing::kubectl::kubectl_bins;
use kube::Api;
use kube::api::{Patch, PatchParams, PostParams};
use serde_json::{Value, json};

use crate::clusters::cluster;
use crate::support::{
    Aggregated, Answer, Caller, Env, Events, KubectlWatch, as_user, call_as_admin, eventually,
    full, kubectl,
};

const CLUSTERS: &str = "/apis/cluster.karmada.io/v1alpha1/clusters";
const ADMIN: [&str; 2] = ["system:masters", "system:authenticated"];
const TABLE_V1: &str = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json";

/// Creates `m1` (just joined: no status) and `m2` (placed, with a Ready condition and a version).
async fn create_clusters(clusters: &Api<Cluster>) {
    clusters
        .create(&PostParams::default(), &cluster("m1"))
        .await
        .expect("m1 is created");
    let mut m2 = cluster("m2");
    m2.spec.zones = vec!["z1".into(), "z2".into()];
    m2.spec.region = "r1".into();
    m2.spec.provider = "kwok".into();
    m2.spec.proxy_url = "socks5://proxy.example.com:1080".into();
    clusters
        .create(&PostParams::default(), &m2)
        .await
        .expect("m2 is created");
    clusters
        .patch_status(
            "m2",
            &PatchParams::default(),
            &Patch::Merge(
                json!({"status": {"kubernetesVersion": "v1.37.2", "conditions": [{
                "type": "Ready", "status": "True", "reason": "ClusterReady",
                "message": "cluster is healthy and ready to accept workloads",
                "lastTransitionTime": "2026-11-27T20:09:00Z"}]}}),
            ),
        )
        .await
        .expect("m2's status is written");
}

/// A GET of `rest` below the Clusters' path asking for `accept`.
async fn get(caller: &Caller, env: &Env, rest: &str, accept: &str) -> Answer {
    let url = format!("{}{CLUSTERS}{rest}", env.url);
    call_as_admin(caller, "GET", &url, &[("accept", accept)], "").await
}

/// The cells of `table`'s rows but the age (which moves).
fn cells_but_age(table: &Value) -> Vec<Value> {
    table["rows"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|row| {
            let mut cells = row["cells"].as_array().cloned().unwrap_or_default();
            if cells.len() > 4 {
                cells.remove(4);
            }
            Value::Array(cells)
        })
        .collect()
}

fn m1_cells() -> Value {
    json!([
        "m1",
        "",
        "Push",
        "Unknown",
        "<none>",
        "<none>",
        "<none>",
        "https://m1.example.com:6443",
        "<none>"
    ])
}

fn m2_cells() -> Value {
    json!([
        "m2",
        "v1.37.2",
        "Push",
        "True",
        "z1,z2",
        "r1",
        "kwok",
        "https://m2.example.com:6443",
        "socks5://proxy.example.com:1080"
    ])
}

fn column_names(table: &Value) -> Vec<String> {
    table["columnDefinitions"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|column| column["name"].as_str().map(str::to_owned))
        .collect()
}

const KARMADAS_COLUMNS: [&str; 10] = [
    "Name",
    "Version",
    "Mode",
    "Ready",
    "Age",
    "Zones",
    "Region",
    "Provider",
    "API-Endpoint",
    "Proxy-URL",
];

/// The header `kubectl get clusters -o wide` prints: Karmada's columns, upper-cased.
pub(crate) fn wide_header() -> Vec<String> {
    KARMADAS_COLUMNS
        .iter()
        .map(|name| name.to_uppercase())
        .collect()
}

/// The cells kubectl prints for `cells` (a Table row but its age): empty ones are only spaces.
fn as_printed(cells: &Value) -> Vec<String> {
    cells
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .filter(|cell| !cell.is_empty())
        .map(str::to_owned)
        .collect()
}

#[tokio::test]
async fn get_and_list_answer_karmadas_table_with_every_include_object() {
    let env = Env::start().await;
    let clusters: Api<Cluster> = Api::all(env.kube_as("admin", &ADMIN).await);
    create_clusters(&clusters).await;
    let caller = env.front_proxy();

    // A get: one row, the object's resourceVersion, a PartialObjectMetadata whose managed fields say v1alpha1.
    let m1 = clusters.get("m1").await.expect("m1");
    let table = get(&caller, &env, "/m1", TABLE_V1).await;
    assert_eq!(table.status, 200, "{}", table.text());
    let table = table.json();
    assert_eq!(
        (table["kind"].as_str(), table["apiVersion"].as_str()),
        (Some("Table"), Some("meta.k8s.io/v1"))
    );
    assert_eq!(column_names(&table), KARMADAS_COLUMNS);
    assert_eq!(
        table["metadata"],
        json!({"resourceVersion": m1.metadata.resource_version})
    );
    assert_eq!(cells_but_age(&table), [m1_cells()]);
    let age = table["rows"][0]["cells"][4]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(age.ends_with('s') || age.ends_with('m'), "{age}");
    let object = &table["rows"][0]["object"];
    assert_eq!(
        (object["kind"].as_str(), object["apiVersion"].as_str()),
        (Some("PartialObjectMetadata"), Some("meta.k8s.io/v1"))
    );
    assert_eq!(
        object["metadata"]["uid"].as_str(),
        m1.metadata.uid.as_deref()
    );
    let versions: Vec<&str> = object["metadata"]["managedFields"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|entry| entry["apiVersion"].as_str())
        .collect();
    assert!(
        !versions.is_empty() && versions.iter().all(|v| *v == "cluster.karmada.io/v1alpha1"),
        "{versions:?}"
    );

    // includeObject: the whole object, or none.
    let whole = get(&caller, &env, "/m2?includeObject=Object", TABLE_V1)
        .await
        .json();
    let object = &whole["rows"][0]["object"];
    assert_eq!(
        (object["kind"].as_str(), object["apiVersion"].as_str()),
        (Some("Cluster"), Some("cluster.karmada.io/v1alpha1"))
    );
    assert_eq!(object["spec"]["region"], "r1");
    assert_eq!(cells_but_age(&whole), [m2_cells()]);
    let none = get(&caller, &env, "/m2?includeObject=None", TABLE_V1)
        .await
        .json();
    assert_eq!(none["rows"][0].get("object"), Some(&Value::Null));
    let beta = get(
        &caller,
        &env,
        "/m1",
        "application/json;as=Table;v=v1beta1;g=meta.k8s.io",
    )
    .await
    .json();
    assert_eq!(beta["apiVersion"], "meta.k8s.io/v1beta1");
    assert_eq!(
        beta["rows"][0]["object"]["apiVersion"],
        "meta.k8s.io/v1beta1"
    );
    let refused = get(&caller, &env, "/m1?includeObject=All", TABLE_V1).await;
    assert_eq!(refused.status, 400);
    assert_eq!(
        refused.json()["message"],
        "Unable to convert to Table as requested: includeObject: Invalid value: \"All\": must be 'Metadata', \
         'Object', 'None', or empty"
    );

    // A list: the rows in order, the list's metadata; a page says where the next one starts.
    let list = get(&caller, &env, "", TABLE_V1).await.json();
    assert_eq!(cells_but_age(&list), [m1_cells(), m2_cells()]);
    let stored = clusters.list(&Default::default()).await.expect("listed");
    assert_eq!(
        list["metadata"]["resourceVersion"].as_str(),
        stored.metadata.resource_version.as_deref()
    );
    assert!(
        list["metadata"].get("continue").is_none(),
        "{}",
        list["metadata"]
    );
    let page = get(&caller, &env, "?limit=1&includeObject=None", TABLE_V1)
        .await
        .json();
    assert_eq!(cells_but_age(&page), [m1_cells()]);
    assert!(
        page["metadata"]["continue"]
            .as_str()
            .is_some_and(|token| !token.is_empty()),
        "{}",
        page["metadata"]
    );
    let token = page["metadata"]["continue"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let rest = get(
        &caller,
        &env,
        &format!("?limit=1&continue={token}"),
        TABLE_V1,
    )
    .await
    .json();
    assert_eq!(cells_but_age(&rest), [m2_cells()]);

    // Plain JSON is still the control plane's list.
    let json = get(&caller, &env, "", "application/json").await.json();
    assert_eq!(json["kind"], "ClusterList");
    env.stop().await;
}

#[tokio::test]
async fn a_table_watch_sends_one_row_tables_with_the_columns_first() {
    let env = Env::start().await;
    let clusters: Api<Cluster> = Api::all(env.kube_as("admin", &ADMIN).await);
    create_clusters(&clusters).await;
    let caller = env.front_proxy();
    for (include, row_object) in [
        ("Metadata", "PartialObjectMetadata"),
        ("Object", "Cluster"),
        ("None", ""),
    ] {
        let mut request = as_user(
            "GET",
            &format!("{}{CLUSTERS}?watch=true&includeObject={include}", env.url),
            "admin",
            &ADMIN,
            full(""),
        );
        request
            .headers_mut()
            .insert("accept", TABLE_V1.parse().expect("a header value"));
        let response = caller.send(request).await.expect("a watch");
        assert_eq!(response.status(), 200);
        let mut events = Events::of(response);
        let first = events.next().await;
        assert_eq!(
            (first["type"].as_str(), first["object"]["kind"].as_str()),
            (Some("ADDED"), Some("Table"))
        );
        assert_eq!(
            column_names(&first["object"]),
            KARMADAS_COLUMNS,
            "{include}"
        );
        assert_eq!(cells_but_age(&first["object"]), [m1_cells()]);
        let kind = first["object"]["rows"][0]["object"]["kind"]
            .as_str()
            .unwrap_or_default();
        assert_eq!(kind, row_object, "{include}");
        let second = events.next().await;
        assert_eq!(
            second["object"]["columnDefinitions"],
            Value::Null,
            "{include}"
        );
        assert_eq!(cells_but_age(&second["object"]), [m2_cells()]);

        clusters
            .patch(
                "m1",
                &PatchParams::default(),
                &Patch::Merge(json!({"spec": {"region": include}})),
            )
            .await
            .expect("m1 is patched");
        let modified = loop {
            let event = events.next().await;
            if event["type"] == "MODIFIED" {
                break event;
            }
        };
        let table = &modified["object"];
        assert_eq!(
            (table["kind"].as_str(), table["columnDefinitions"].clone()),
            (Some("Table"), Value::Null)
        );
        assert_eq!(table["rows"][0]["cells"][6], include);
        let stored = clusters.get("m1").await.expect("m1");
        assert_eq!(
            table["metadata"]["resourceVersion"].as_str(),
            stored.metadata.resource_version.as_deref()
        );
        clusters
            .patch(
                "m1",
                &PatchParams::default(),
                &Patch::Merge(json!({"spec": {"region": null}})),
            )
            .await
            .expect("m1's region is removed again");
    }
    env.stop().await;
}

/// The lines kubectl printed, each split into its columns.
fn rows(stdout: &str) -> Vec<Vec<String>> {
    stdout
        .lines()
        .map(|line| line.split_whitespace().map(str::to_owned).collect())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_prints_karmadas_columns_and_watches_them() {
    let aggregated = Aggregated::start().await;
    let control = &aggregated.control;
    create_clusters(&Api::all(control.client.clone())).await;
    let dir = tempfile::tempdir().expect("a directory");
    let kubeconfig = dir.path().join("control");
    std::fs::write(&kubeconfig, control.server.kubeconfig("control"))
        .expect("the kubeconfig is written");
    // The control plane's aggregator passes cluster.karmada.io/v1alpha1 to this server from now on.
    eventually("kubectl to reach the aggregated server", || async {
        let (code, stdout, _) =
            kubectl(&kubectl_bins()[0], &kubeconfig, &["get", "clusters"]).await;
        (code == Some(0) && stdout.contains("Unknown")).then_some(())
    })
    .await;
    let clusters: Api<Cluster> = Api::all(control.client.clone());
    for (index, bin) in kubectl_bins().into_iter().enumerate() {
        // m1 has no version yet; the watch below gives it one.
        clusters
            .patch_status(
                "m1",
                &PatchParams::default(),
                &Patch::Merge(json!({"status": {"kubernetesVersion": null}})),
            )
            .await
            .expect("m1's version is removed");
        let version = format!("v1.37.{}", 10 + index);
        let (code, stdout, stderr) = kubectl(&bin, &kubeconfig, &["get", "clusters"]).await;
        assert_eq!(code, Some(0), "{bin}: {stderr}");
        let printed = rows(&stdout);
        assert_eq!(
            printed[0],
            ["NAME", "VERSION", "MODE", "READY", "AGE"],
            "{bin}"
        );
        // m1's VERSION is empty: kubectl pads it with spaces.
        assert_eq!(
            printed[1][..3],
            ["m1", "Push", "Unknown"],
            "{bin}: {stdout}"
        );
        assert_eq!(
            printed[2][..4],
            ["m2", "v1.37.2", "Push", "True"],
            "{bin}: {stdout}"
        );
        assert!(stderr.is_empty(), "{bin}: {stderr}");

        let (code, stdout, stderr) =
            kubectl(&bin, &kubeconfig, &["get", "clusters", "-o", "wide"]).await;
        assert_eq!(code, Some(0), "{bin}: {stderr}");
        let printed = rows(&stdout);
        assert_eq!(printed[0], wide_header(), "{bin}");
        // Age is the fourth printed cell of m1 (no version) and the fifth of m2.
        let but = |row: &[String], age: usize| [&row[..age], &row[age + 1..]].concat();
        assert_eq!(
            but(&printed[1], 3),
            as_printed(&m1_cells()),
            "{bin}: {stdout}"
        );
        assert_eq!(
            but(&printed[2], 4),
            as_printed(&m2_cells()),
            "{bin}: {stdout}"
        );

        // `kubectl get clusters -w` asks for a Table watch: the two Clusters, then a change as it happens.
        let mut watch = KubectlWatch::clusters(&bin, &kubeconfig);
        assert_eq!(
            watch.next().await,
            ["EVENT", "NAME", "VERSION", "MODE", "READY", "AGE"],
            "{bin}"
        );
        assert_eq!(
            watch.next().await[..4],
            ["ADDED", "m1", "Push", "Unknown"],
            "{bin}"
        );
        assert_eq!(
            watch.next().await[..5],
            ["ADDED", "m2", "v1.37.2", "Push", "True"],
            "{bin}"
        );
        clusters
            .patch_status(
                "m1",
                &PatchParams::default(),
                &Patch::Merge(json!({"status": {"kubernetesVersion": version}})),
            )
            .await
            .expect("m1's status is written");
        let modified = watch.next().await;
        assert_eq!(
            modified[..5],
            ["MODIFIED", "m1", version.as_str(), "Push", "Unknown"],
            "{bin}"
        );
    }
    aggregated.stop().await;
}
