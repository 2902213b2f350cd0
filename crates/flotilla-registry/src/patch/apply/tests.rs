use super::*;
use serde_json::json;

const CM: KindInfo<'static> = KindInfo {
    group: "",
    version: "v1",
    kind: "ConfigMap",
    namespaced: true,
    crd_version: None,
};
const DEPLOY: KindInfo<'static> = KindInfo {
    group: "apps",
    version: "v1",
    kind: "Deployment",
    namespaced: true,
    crd_version: None,
};

fn opts<'a>(manager: &'a str, now: &'a str) -> WriteOptions<'a> {
    WriteOptions {
        manager,
        subresource: None,
        now,
        reset_fields: &[],
    }
}

fn cm(data: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "d"}, "data": data})
}

fn ssa(
    live: Option<&Value>,
    config: &Value,
    kind: &KindInfo<'_>,
    manager: &str,
    force: bool,
) -> Result<Value, PatchError> {
    apply(
        live,
        config,
        kind,
        &opts(manager, "2026-11-22T10:00:00Z"),
        force,
    )
}

fn managers(obj: &Value) -> Vec<(String, String, Value)> {
    obj["metadata"]["managedFields"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|e| {
            (
                e["manager"].as_str().unwrap_or_default().to_string(),
                e["operation"].as_str().unwrap_or_default().to_string(),
                e["fieldsV1"].clone(),
            )
        })
        .collect()
}

#[test]
fn apply_creates_with_ownership() {
    let config = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "labels": {"x": "1"}}, "data": {"a": "1"}});
    let out = ssa(None, &config, &CM, "m", false).unwrap_or_default();
    assert_eq!(out["data"], json!({"a": "1"}));
    assert_eq!(out["metadata"]["labels"], json!({"x": "1"}));
    let entry = &out["metadata"]["managedFields"][0];
    assert_eq!(entry["manager"], "m");
    assert_eq!(entry["operation"], "Apply");
    assert_eq!(entry["apiVersion"], "v1");
    assert_eq!(entry["fieldsType"], "FieldsV1");
    assert_eq!(entry["time"], "2026-11-22T10:00:00Z");
    assert_eq!(
        entry["fieldsV1"],
        json!({"f:data": {"f:a": {}}, "f:metadata": {"f:labels": {"f:x": {}}}})
    );
    assert!(entry.get("subresource").is_none());
}

#[test]
fn reapplying_drops_what_is_no_longer_applied_and_is_stable() {
    let v1 = ssa(None, &cm(json!({"a": "1", "b": "2"})), &CM, "m", false).unwrap_or_default();
    let v2 = apply(
        Some(&v1),
        &cm(json!({"a": "1"})),
        &CM,
        &opts("m", "2026-11-22T11:00:00Z"),
        false,
    )
    .unwrap_or_default();
    assert_eq!(v2["data"], json!({"a": "1"}));
    assert_eq!(
        managers(&v2),
        vec![("m".into(), "Apply".into(), json!({"f:data": {"f:a": {}}}))]
    );
    // The same configuration again changes nothing, not even the time.
    let v3 = apply(
        Some(&v2),
        &cm(json!({"a": "1"})),
        &CM,
        &opts("m", "2026-11-22T12:00:00Z"),
        false,
    )
    .unwrap_or_default();
    assert_eq!(v3, v2);
    // Dropping the last field removes the emptied map too.
    let bare = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "d"}});
    let v4 = ssa(Some(&v3), &bare, &CM, "m", false).unwrap_or_default();
    assert!(v4.get("data").is_none(), "{v4}");
    assert!(
        v4["metadata"].get("managedFields").is_none(),
        "no fields, no entry: {v4}"
    );
}

#[test]
fn shared_fields_survive_and_conflicts_need_force() {
    let v1 = ssa(None, &cm(json!({"a": "1", "b": "2"})), &CM, "m1", false).unwrap_or_default();
    // Same value: no conflict, shared ownership.
    let v2 = ssa(Some(&v1), &cm(json!({"b": "2"})), &CM, "m2", false).unwrap_or_default();
    let v3 = ssa(Some(&v2), &cm(json!({"a": "1"})), &CM, "m1", false).unwrap_or_default();
    assert_eq!(v3["data"], json!({"a": "1", "b": "2"}), "m2 still owns b");
    // Different value: conflict.
    let err = ssa(Some(&v3), &cm(json!({"a": "9"})), &CM, "m2", false).expect_err("conflict");
    let status = err.to_status();
    assert_eq!(status.code, 409);
    assert_eq!(
        status.message,
        "Apply failed with 1 conflict: conflict with \"m1\": .data.a"
    );
    // Forced: m2 takes `a` over and m1 loses it.
    let v4 = ssa(Some(&v3), &cm(json!({"a": "9"})), &CM, "m2", true).unwrap_or_default();
    assert_eq!(
        v4["data"],
        json!({"a": "9"}),
        "m2 applied only a now, so b (m2's before) is removed; m1 owned nothing of b"
    );
    let m1: Vec<_> = managers(&v4)
        .into_iter()
        .filter(|(m, _, _)| m == "m1")
        .collect();
    assert!(m1.is_empty(), "m1 lost its only field: {v4}");
}

#[test]
fn update_managers_conflict_with_their_time() {
    let mut created = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"}, "spec": {"replicas": 1, "paused": false}});
    record_update(
        None,
        &mut created,
        &DEPLOY,
        &opts("kubectl-create", "2026-11-22T09:00:00Z"),
    );
    assert_eq!(
        managers(&created),
        vec![(
            "kubectl-create".into(),
            "Update".into(),
            json!({"f:spec": {"f:paused": {}, "f:replicas": {}}})
        )]
    );
    let config = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"}, "spec": {"replicas": 3}});
    let err = ssa(Some(&created), &config, &DEPLOY, "ctrl", false).expect_err("conflict");
    assert_eq!(
        err.to_string(),
        "Apply failed with 1 conflict: conflict with \"kubectl-create\" using apps/v1 at 2026-11-22T09:00:00Z: .spec.replicas"
    );
    let forced = ssa(Some(&created), &config, &DEPLOY, "ctrl", true).unwrap_or_default();
    assert_eq!(forced["spec"], json!({"replicas": 3, "paused": false}));
    assert_eq!(
        managers(&forced),
        vec![
            (
                "ctrl".into(),
                "Apply".into(),
                json!({"f:spec": {"f:replicas": {}}})
            ),
            (
                "kubectl-create".into(),
                "Update".into(),
                json!({"f:spec": {"f:paused": {}}})
            ),
        ]
    );
}

#[test]
fn associative_lists_merge_by_key_and_prune_elements() {
    let dep = |containers: Value| {
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
        "spec": {"template": {"spec": {"containers": containers}}}})
    };
    let v1 = ssa(
        None,
        &dep(json!([{"name": "a", "image": "x", "ports": [{"containerPort": 80}]}])),
        &DEPLOY,
        "m1",
        false,
    )
    .unwrap_or_default();
    let fields = &v1["metadata"]["managedFields"][0]["fieldsV1"]["f:spec"]["f:template"]["f:spec"]
        ["f:containers"];
    assert_eq!(
        fields,
        &json!({"k:{\"name\":\"a\"}": {".": {}, "f:image": {}, "f:name": {},
            "f:ports": {"k:{\"containerPort\":80,\"protocol\":\"TCP\"}": {".": {}, "f:containerPort": {}}}}})
    );
    let v2 = ssa(
        Some(&v1),
        &dep(json!([{"name": "b", "image": "y"}])),
        &DEPLOY,
        "m2",
        false,
    )
    .unwrap_or_default();
    let names = |v: &Value| -> Vec<String> {
        v["spec"]["template"]["spec"]["containers"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|c| c["name"].as_str().map(str::to_string))
            .collect()
    };
    assert_eq!(names(&v2), ["a", "b"]);
    // m1 stops applying container a: the whole element goes.
    let v3 = ssa(Some(&v2), &dep(json!([])), &DEPLOY, "m1", false).unwrap_or_default();
    assert_eq!(names(&v3), ["b"]);
    // Changing a field of b owned by m2 conflicts, naming the element by its key.
    let err = ssa(
        Some(&v3),
        &dep(json!([{"name": "b", "image": "z"}])),
        &DEPLOY,
        "m1",
        false,
    )
    .expect_err("conflict");
    assert_eq!(
        err.to_string(),
        "Apply failed with 1 conflict: conflict with \"m2\": .spec.template.spec.containers[name=\"b\"].image"
    );
}

#[test]
fn sets_and_atomic_lists() {
    let fin = |f: Value| json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "finalizers": f}});
    let v1 = ssa(None, &fin(json!(["x"])), &CM, "m1", false).unwrap_or_default();
    let v2 = ssa(Some(&v1), &fin(json!(["y"])), &CM, "m2", false).unwrap_or_default();
    assert_eq!(v2["metadata"]["finalizers"], json!(["x", "y"]));
    let v3 = ssa(Some(&v2), &fin(json!([])), &CM, "m1", false).unwrap_or_default();
    assert_eq!(v3["metadata"]["finalizers"], json!(["y"]));

    let args = |a: Value| {
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "w"},
        "spec": {"template": {"spec": {"containers": [{"name": "a", "args": a}]}}}})
    };
    let v1 = ssa(None, &args(json!(["--x"])), &DEPLOY, "m1", false).unwrap_or_default();
    let err = ssa(Some(&v1), &args(json!(["--y"])), &DEPLOY, "m2", false)
        .expect_err("atomic list conflicts as a whole");
    assert!(
        err.to_string()
            .ends_with(".spec.template.spec.containers[name=\"a\"].args"),
        "{err}"
    );
}

#[test]
fn crd_schema_list_types_are_honoured() {
    let version = json!({"name": "v1", "schema": {"openAPIV3Schema": {"type": "object", "properties": {
        "spec": {"type": "object", "properties": {
            "items": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["id"],
                "items": {"type": "object", "properties": {"id": {"type": "string"}, "v": {"type": "integer"}}}},
            "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
            "sel": {"type": "object", "x-kubernetes-map-type": "atomic", "additionalProperties": {"type": "string"}},
            "plain": {"type": "array", "items": {"type": "string"}}}}}}}});
    let foo = KindInfo::custom("x.io", "v1", "Foo", true, &version);
    let obj = |spec: Value| json!({"apiVersion": "x.io/v1", "kind": "Foo", "metadata": {"name": "f"}, "spec": spec});
    let v1 = ssa(None, &obj(json!({"items": [{"id": "a", "v": 1}], "tags": ["t1"], "sel": {"k": "v"}, "plain": ["p"]})), &foo, "m1", false).unwrap_or_default();
    assert_eq!(
        v1["metadata"]["managedFields"][0]["fieldsV1"]["f:spec"],
        json!({"f:items": {"k:{\"id\":\"a\"}": {".": {}, "f:id": {}, "f:v": {}}}, "f:plain": {}, "f:sel": {}, "f:tags": {"v:\"t1\"": {}}})
    );
    let v2 = ssa(
        Some(&v1),
        &obj(json!({"items": [{"id": "b", "v": 2}], "tags": ["t2"]})),
        &foo,
        "m2",
        false,
    )
    .unwrap_or_default();
    assert_eq!(
        v2["spec"]["items"],
        json!([{"id": "a", "v": 1}, {"id": "b", "v": 2}])
    );
    assert_eq!(v2["spec"]["tags"], json!(["t1", "t2"]));
    let err = ssa(
        Some(&v2),
        &obj(json!({"sel": {"k": "v", "other": "x"}})),
        &foo,
        "m2",
        false,
    )
    .expect_err("atomic map");
    assert!(
        err.to_string().ends_with("conflict with \"m1\": .spec.sel"),
        "{err}"
    );
}

#[test]
fn untracked_objects_get_a_before_first_apply_owner() {
    let live = cm(json!({"a": "1", "b": "2"}));
    let same = ssa(Some(&live), &cm(json!({"a": "1"})), &CM, "m", false).unwrap_or_default();
    assert_eq!(same["data"], json!({"a": "1", "b": "2"}));
    let err = ssa(Some(&live), &cm(json!({"a": "2"})), &CM, "m", false).expect_err("conflict");
    assert!(
        err.to_string().starts_with(
            "Apply failed with 1 conflict: conflict with \"before-first-apply\" using v1"
        ),
        "{err}"
    );
}

#[test]
fn record_update_moves_ownership_to_the_writer() {
    let v1 = ssa(
        None,
        &cm(json!({"a": "1", "b": "2"})),
        &CM,
        "applier",
        false,
    )
    .unwrap_or_default();
    let mut v2 = v1.clone();
    v2["data"] = json!({"a": "changed", "c": "3"});
    record_update(
        Some(&v1),
        &mut v2,
        &CM,
        &opts("kubectl-edit", "2026-11-22T11:00:00Z"),
    );
    // The applier owned a (now changed) and b (now removed): it is left with nothing and disappears.
    assert_eq!(
        managers(&v2),
        vec![(
            "kubectl-edit".into(),
            "Update".into(),
            json!({"f:data": {"f:a": {}, "f:c": {}}})
        )]
    );
    // An update that changes nothing keeps entries and times.
    let mut v3 = v2.clone();
    record_update(
        Some(&v2),
        &mut v3,
        &CM,
        &opts("kubectl-edit", "2026-11-22T12:00:00Z"),
    );
    assert_eq!(v3, v2);
    // managedFields: [{}] resets tracking; the writer then owns what it changed (nothing here).
    let mut v4 = v2.clone();
    v4["metadata"]["managedFields"] = json!([{}]);
    record_update(Some(&v2), &mut v4, &CM, &opts("x", "2026-11-22T12:00:00Z"));
    assert!(v4["metadata"].get("managedFields").is_none(), "{v4}");
}

#[test]
fn reset_fields_and_subresources() {
    let config = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "w"}, "spec": {"replicas": 2}, "status": {"replicas": 9}});
    let o = WriteOptions {
        manager: "m",
        subresource: None,
        now: "2026-11-22T10:00:00Z",
        reset_fields: &["status"],
    };
    let out = apply(None, &config, &DEPLOY, &o, false).unwrap_or_default();
    assert!(out.get("status").is_none());
    assert_eq!(
        out["metadata"]["managedFields"][0]["fieldsV1"],
        json!({"f:spec": {"f:replicas": {}}})
    );
    let status = WriteOptions {
        manager: "ctrl",
        subresource: Some("status"),
        now: "2026-11-22T10:00:00Z",
        reset_fields: &["spec"],
    };
    let cfg = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "w"}, "status": {"replicas": 2}});
    let out = apply(Some(&out), &cfg, &DEPLOY, &status, false).unwrap_or_default();
    assert_eq!(out["status"], json!({"replicas": 2}));
    let ctrl = out["metadata"]["managedFields"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|e| e["manager"] == "ctrl")
        .cloned()
        .unwrap_or_default();
    assert_eq!(ctrl["subresource"], "status");
}

#[test]
fn bad_configurations_are_rejected() {
    let cases = [
        (
            json!({"apiVersion": "v1", "metadata": {"name": "c"}}),
            "Object 'Kind' is missing",
        ),
        (
            json!({"apiVersion": "v2", "kind": "ConfigMap"}),
            "Incorrect version specified in apply patch. Specified patch version: v2, expected: v1",
        ),
        (
            json!({"apiVersion": "v1", "kind": "Secret"}),
            "Incorrect kind specified",
        ),
    ];
    for (config, want) in cases {
        let err = ssa(None, &config, &CM, "m", false).expect_err("bad");
        assert_eq!(err.to_status().code, 400);
        assert!(err.to_string().starts_with(want), "{err}");
    }
    let no_key = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "w"}, "spec": {"template": {"spec": {"containers": [{"image": "x"}]}}}});
    let err = ssa(None, &no_key, &DEPLOY, "m", false).expect_err("missing key");
    assert_eq!(
        err.to_string(),
        ".spec.template.spec.containers: element 0: associative list with keys has an element that omits key field \"name\" (and doesn't have default value)"
    );
    assert_eq!(
        parse_config(b"apiVersion: v1\nkind: ConfigMap\n").map(|v| v["kind"].clone()),
        Ok(json!("ConfigMap"))
    );
    assert!(matches!(
        parse_config(b"- a"),
        Err(PatchError::BadRequest(_))
    ));
    assert!(matches!(
        parse_config(b"{{{"),
        Err(PatchError::BadRequest(_))
    ));
}
