use flotilla_apimachinery::table::{IncludeObject, NAME_DESCRIPTION};
use pretty_assertions::assert_eq;

use super::*;

/// 2026-11-27T20:09:29Z, when Karmada's answers in design/karmada-answers/12-get-clusters.txt were recorded.
const NOW: i64 = 1_795_810_169;

fn request(include_object: IncludeObject) -> TableRequest {
    TableRequest {
        api_version: "meta.k8s.io/v1",
        include_object,
    }
}

/// Cluster `m1` of Karmada's record: joined, no status yet.
fn joined() -> Value {
    json!({
        "apiVersion": "cluster.karmada.io/v1alpha1",
        "kind": "Cluster",
        "metadata": {"name": "m1", "resourceVersion": "364", "creationTimestamp": "2026-11-27T20:08:53Z"},
        "spec": {"syncMode": "Push", "apiEndpoint": "https://127.0.0.1:54589",
                 "secretRef": {"namespace": "karmada-cluster", "name": "m1"}},
    })
}

/// The same Cluster once its status is written and its spec has zones, region and provider.
fn ready() -> Value {
    let mut cluster = joined();
    cluster["spec"]["zones"] = json!(["z1", "z2"]);
    cluster["spec"]["region"] = json!("r1");
    cluster["spec"]["provider"] = json!("kwok");
    cluster["status"] = json!({
        "kubernetesVersion": "v1.37.2",
        "conditions": [
            {"type": "CompleteAPIEnablements", "status": "False", "reason": "x", "message": "", "lastTransitionTime": "2026-11-27T20:09:00Z"},
            {"type": "Ready", "status": "True", "reason": "ClusterReady", "message": "cluster is healthy and ready to accept workloads", "lastTransitionTime": "2026-11-27T20:09:00Z"},
        ],
    });
    cluster
}

fn only_row(table: &Value) -> Value {
    let rows = table["rows"].as_array().cloned().unwrap_or_default();
    assert_eq!(rows.len(), 1, "{table}");
    rows[0]["cells"].clone()
}

#[test]
fn a_cluster_without_status_is_ready_unknown_and_wide_cells_say_none() {
    let table =
        to_table(&joined(), &request(IncludeObject::Metadata), true, NOW).expect("a Cluster");
    assert_eq!(
        only_row(&table),
        json!([
            "m1",
            "",
            "Push",
            "Unknown",
            "36s",
            "<none>",
            "<none>",
            "<none>",
            "https://127.0.0.1:54589",
            "<none>"
        ])
    );
}

#[test]
fn a_ready_cluster_prints_its_version_condition_and_placement() {
    let table =
        to_table(&ready(), &request(IncludeObject::Metadata), true, NOW + 5).expect("a Cluster");
    assert_eq!(
        only_row(&table),
        json!([
            "m1",
            "v1.37.2",
            "Push",
            "True",
            "41s",
            "z1,z2",
            "r1",
            "kwok",
            "https://127.0.0.1:54589",
            "<none>"
        ])
    );
    let mut not_ready = ready();
    not_ready["status"]["conditions"][1]["status"] = json!("False");
    not_ready["spec"]["proxyURL"] = json!("socks5://proxy:1080");
    let cells = only_row(
        &to_table(&not_ready, &request(IncludeObject::None), true, NOW).expect("a Cluster"),
    );
    assert_eq!(
        (cells[3].clone(), cells[9].clone()),
        (json!("False"), json!("socks5://proxy:1080"))
    );
}

#[test]
fn empty_and_missing_fields_print_as_karmada_prints_them() {
    let bare = json!({"kind": "Cluster", "metadata": {"resourceVersion": "9"}});
    let cells =
        only_row(&to_table(&bare, &request(IncludeObject::None), true, NOW).expect("a Cluster"));
    assert_eq!(
        cells,
        json!([
            "",
            "",
            "",
            "Unknown",
            "<unknown>",
            "<none>",
            "<none>",
            "<none>",
            "",
            "<none>"
        ])
    );
    // A lone `zone` is where Karmada's API server would have moved it: in ZONES.
    let mut zoned = joined();
    zoned["spec"]["zone"] = json!("z0");
    assert_eq!(
        only_row(&to_table(&zoned, &request(IncludeObject::None), true, NOW).expect("a Cluster"))
            [5],
        "z0"
    );
}

#[test]
fn columns_are_karmadas() {
    let table =
        to_table(&joined(), &request(IncludeObject::Metadata), true, NOW).expect("a Cluster");
    let definitions = table["columnDefinitions"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let shape: Vec<(String, String, String, i64)> = definitions
        .iter()
        .map(|c| {
            let text = |key: &str| c[key].as_str().unwrap_or_default().to_owned();
            (
                text("name"),
                text("type"),
                text("format"),
                c["priority"].as_i64().unwrap_or(-1),
            )
        })
        .collect();
    let expected: Vec<(String, String, String, i64)> = [
        ("Name", "name", 0),
        ("Version", "", 0),
        ("Mode", "", 0),
        ("Ready", "", 0),
        ("Age", "", 0),
        ("Zones", "", 1),
        ("Region", "", 1),
        ("Provider", "", 1),
        ("API-Endpoint", "", 1),
        ("Proxy-URL", "", 1),
    ]
    .into_iter()
    .map(|(name, format, priority)| {
        (
            name.to_owned(),
            "string".to_owned(),
            format.to_owned(),
            priority,
        )
    })
    .collect();
    assert_eq!(shape, expected);
    assert_eq!(definitions[0]["description"], NAME_DESCRIPTION);
    assert_eq!(
        definitions[3]["description"],
        "The aggregate readiness state of this cluster for accepting workloads."
    );
    assert!(definitions[4]["description"].as_str().is_some_and(|d| {
        d.starts_with("CreationTimestamp is a timestamp") && d.ends_with("#metadata")
    }));
    assert_eq!(
        definitions[9]["description"],
        "ProxyURL is the proxy URL for the cluster."
    );
}

#[test]
fn a_get_is_a_one_row_table_with_the_objects_resource_version() {
    let table =
        to_table(&joined(), &request(IncludeObject::Metadata), true, NOW).expect("a Cluster");
    assert_eq!(
        (
            table["kind"].clone(),
            table["apiVersion"].clone(),
            table["metadata"].clone()
        ),
        (
            json!("Table"),
            json!("meta.k8s.io/v1"),
            json!({"resourceVersion": "364"})
        )
    );
    assert_eq!(
        table["rows"][0]["object"],
        json!({"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": joined()["metadata"]})
    );
    let whole = to_table(&joined(), &request(IncludeObject::Object), true, NOW).expect("a Cluster");
    assert_eq!(whole["rows"][0]["object"], joined());
    let none = to_table(&joined(), &request(IncludeObject::None), true, NOW).expect("a Cluster");
    assert_eq!(none["rows"][0]["object"], Value::Null);
    let beta = TableRequest {
        api_version: "meta.k8s.io/v1beta1",
        include_object: IncludeObject::Metadata,
    };
    let beta = to_table(&joined(), &beta, true, NOW).expect("a Cluster");
    assert_eq!(
        (
            beta["apiVersion"].clone(),
            beta["rows"][0]["object"]["apiVersion"].clone()
        ),
        (json!("meta.k8s.io/v1beta1"), json!("meta.k8s.io/v1beta1"))
    );
}

#[test]
fn a_list_keeps_its_order_and_list_metadata() {
    let mut second = ready();
    second["metadata"]["name"] = json!("m2");
    let list = json!({
        "apiVersion": "cluster.karmada.io/v1alpha1", "kind": "ClusterList",
        "metadata": {"resourceVersion": "377", "continue": "token", "remainingItemCount": 3},
        "items": [joined(), second],
    });
    let table = to_table(&list, &request(IncludeObject::Metadata), true, NOW).expect("a list");
    assert_eq!(
        table["metadata"],
        json!({"resourceVersion": "377", "continue": "token", "remainingItemCount": 3})
    );
    let names: Vec<Value> = table["rows"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|row| row["cells"][0].clone())
        .collect();
    assert_eq!(names, [json!("m1"), json!("m2")]);
    let empty = json!({"kind": "ClusterList", "metadata": {"resourceVersion": "5", "continue": ""}, "items": []});
    let table = to_table(&empty, &request(IncludeObject::Metadata), true, NOW).expect("a list");
    assert_eq!(
        (table["metadata"].clone(), table["rows"].clone()),
        (json!({"resourceVersion": "5"}), json!([]))
    );
}

#[test]
fn statuses_are_not_tables() {
    let status = json!({"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": 404});
    assert_eq!(
        to_table(&status, &request(IncludeObject::Metadata), true, NOW),
        None
    );
}

#[test]
fn watch_events_become_one_row_tables_with_columns_first() {
    let mut tables = WatchTables::new(request(IncludeObject::None));
    let mut added = json!({"type": "ADDED", "object": joined()});
    tables.convert(&mut added, NOW);
    assert_eq!(added["type"], "ADDED");
    assert_eq!(added["object"]["kind"], "Table");
    assert_eq!(
        added["object"]["columnDefinitions"]
            .as_array()
            .map(Vec::len),
        Some(10)
    );
    assert_eq!(added["object"]["rows"][0]["cells"][3], "Unknown");
    let mut error =
        json!({"type": "ERROR", "object": {"kind": "Status", "code": 410, "reason": "Expired"}});
    let before = error.clone();
    tables.convert(&mut error, NOW);
    assert_eq!(error, before);
    let mut modified = json!({"type": "MODIFIED", "object": ready()});
    tables.convert(&mut modified, NOW);
    assert_eq!(modified["object"]["columnDefinitions"], Value::Null);
    assert_eq!(
        modified["object"]["metadata"],
        json!({"resourceVersion": "364"})
    );
    assert_eq!(modified["object"]["rows"][0]["cells"][3], "True");
}
