use super::*;
use serde_json::json;

fn smp(group: &str, kind: &str, live: Value, patch: Value) -> Result<Value, PatchError> {
    apply(&live, &patch, group, kind)
}

fn deployment(containers: Value) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
           "spec": {"replicas": 1, "template": {"spec": {"containers": containers}}}})
}

fn containers_of(v: &Value) -> Value {
    v["spec"]["template"]["spec"]["containers"].clone()
}

#[test]
fn containers_merge_by_name_in_upstream_order() {
    let a = json!({"name": "a", "image": "x"});
    let b = json!({"name": "b", "image": "y"});
    let c = json!({"name": "c", "image": "z"});
    // (live containers, patch containers, result)
    let cases = [
        (
            json!([a]),
            json!([{"name": "a", "image": "x2"}]),
            json!([{"name": "a", "image": "x2"}]),
        ),
        // Without $setElementOrder a new element lands in front of the live ones, as on a real server.
        (json!([a]), json!([b]), json!([b, a])),
        (
            json!([a, b, c]),
            json!([{"name": "b", "image": "y2"}]),
            json!([a, {"name": "b", "image": "y2"}, c]),
        ),
        (
            json!([a, b]),
            json!([{"name": "a", "$patch": "delete"}]),
            json!([b]),
        ),
        (
            json!([a, b]),
            json!([{"name": "nope", "$patch": "delete"}]),
            json!([a, b]),
        ),
        (json!([a, b]), json!([c, {"$patch": "replace"}]), json!([c])),
        (
            json!([a]),
            json!([{"name": "a", "image": null, "imagePullPolicy": "Always"}]),
            json!([{"name": "a", "imagePullPolicy": "Always"}]),
        ),
    ];
    for (live, patch, want) in cases {
        let out = smp(
            "apps",
            "Deployment",
            deployment(live.clone()),
            deployment(patch.clone()),
        )
        .unwrap_or_default();
        assert_eq!(containers_of(&out), want, "live {live} patch {patch}");
        assert_eq!(out["spec"]["replicas"], 1, "other fields stay");
    }
}

#[test]
fn set_element_order_decides_the_order() {
    let live = deployment(json!([{"name": "a", "image": "x"}, {"name": "b", "image": "y"}]));
    // What kubectl's three-way patch sends when a container is inserted in the middle.
    let patch = json!({"spec": {"template": {"spec": {
        "$setElementOrder/containers": [{"name": "a"}, {"name": "c"}, {"name": "b"}],
        "containers": [{"name": "c", "image": "z"}]}}}});
    let out = smp("apps", "Deployment", live.clone(), patch).unwrap_or_default();
    let names: Vec<&str> = out["spec"]["template"]["spec"]["containers"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["name"].as_str())
        .collect();
    assert_eq!(names, ["a", "c", "b"]);

    // kubectl removing container "b": a delete element plus the order of what remains.
    let patch = json!({"spec": {"template": {"spec": {
        "$setElementOrder/containers": [{"name": "a"}],
        "containers": [{"$patch": "delete", "name": "b"}]}}}});
    let out = smp("apps", "Deployment", live.clone(), patch).unwrap_or_default();
    assert_eq!(containers_of(&out), json!([{"name": "a", "image": "x"}]));

    // Reordering only.
    let patch = json!({"spec": {"template": {"spec": {"$setElementOrder/containers": [{"name": "b"}, {"name": "a"}]}}}});
    let out = smp("apps", "Deployment", live, patch).unwrap_or_default();
    assert_eq!(
        containers_of(&out),
        json!([{"name": "b", "image": "y"}, {"name": "a", "image": "x"}])
    );
}

#[test]
fn nested_merge_keys_env_ports_volumes() {
    let live = json!({"kind": "Pod", "spec": {
        "containers": [{"name": "a", "image": "x",
            "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}],
            "ports": [{"containerPort": 80, "protocol": "TCP"}],
            "args": ["--one", "--two"]}],
        "volumes": [{"name": "v", "emptyDir": {}}],
        "tolerations": [{"key": "k", "operator": "Exists"}]}});
    let patch = json!({"spec": {
        "containers": [{"name": "a",
            "env": [{"name": "B", "value": "3"}, {"name": "C", "value": "4"}],
            "ports": [{"containerPort": 8080}],
            "args": ["--three"]}],
        "volumes": [{"name": "w", "configMap": {"name": "cm"}}],
        "tolerations": [{"key": "other", "operator": "Exists"}]}});
    let out = smp("", "Pod", live, patch).unwrap_or_default();
    let c = &out["spec"]["containers"][0];
    assert_eq!(
        c["env"],
        json!([{"name": "A", "value": "1"}, {"name": "B", "value": "3"}, {"name": "C", "value": "4"}])
    );
    assert_eq!(
        c["ports"],
        json!([{"containerPort": 8080}, {"containerPort": 80, "protocol": "TCP"}])
    );
    assert_eq!(c["args"], json!(["--three"]), "args are atomic");
    assert_eq!(
        out["spec"]["volumes"],
        json!([{"name": "w", "configMap": {"name": "cm"}}, {"name": "v", "emptyDir": {}}])
    );
    assert_eq!(
        out["spec"]["tolerations"],
        json!([{"key": "other", "operator": "Exists"}]),
        "tolerations are atomic"
    );
}

#[test]
fn primitive_merge_lists_and_deletion_lists() {
    let live = |f: Value| json!({"kind": "ConfigMap", "metadata": {"name": "c", "finalizers": f}});
    let cases = [
        (
            json!({"metadata": {"finalizers": ["c"]}}),
            json!(["c", "a", "b"]),
        ),
        (
            json!({"metadata": {"finalizers": ["b", "c"]}}),
            json!(["a", "b", "c"]),
        ),
        (
            json!({"metadata": {"$deleteFromPrimitiveList/finalizers": ["b"]}}),
            json!(["a"]),
        ),
        (
            json!({"metadata": {"$deleteFromPrimitiveList/finalizers": ["zz"]}}),
            json!(["a", "b"]),
        ),
        (
            json!({"metadata": {"$setElementOrder/finalizers": ["b", "a"]}}),
            json!(["b", "a"]),
        ),
        (json!({"metadata": {"finalizers": null}}), Value::Null),
    ];
    for (patch, want) in cases {
        let out = smp("", "ConfigMap", live(json!(["a", "b"])), patch.clone()).unwrap_or_default();
        assert_eq!(out["metadata"]["finalizers"], want, "{patch}");
    }
    // A deletion list for a field the object lacks adds nothing.
    let out = smp(
        "",
        "ConfigMap",
        json!({"metadata": {}}),
        json!({"metadata": {"$deleteFromPrimitiveList/finalizers": ["a"]}}),
    );
    assert_eq!(out, Ok(json!({"metadata": {}})));
}

#[test]
fn maps_nulls_and_map_directives() {
    let live = json!({"kind": "ConfigMap", "metadata": {"name": "c", "labels": {"a": "1", "b": "2"}}, "data": {"x": "1", "y": "2"}});
    let cases = [
        (
            json!({"data": {"y": null, "z": "3"}}),
            json!({"x": "1", "z": "3"}),
            json!({"a": "1", "b": "2"}),
        ),
        (
            json!({"data": {"$patch": "replace", "q": "9"}}),
            json!({"q": "9"}),
            json!({"a": "1", "b": "2"}),
        ),
        (
            json!({"data": {"$patch": "delete"}}),
            json!({}),
            json!({"a": "1", "b": "2"}),
        ),
        (
            json!({"metadata": {"labels": {"a": null, "c": "3"}}}),
            json!({"x": "1", "y": "2"}),
            json!({"b": "2", "c": "3"}),
        ),
        (
            json!({"metadata": {"labels": {"gone": null}}}),
            json!({"x": "1", "y": "2"}),
            json!({"a": "1", "b": "2"}),
        ),
    ];
    for (patch, data, labels) in cases {
        let out = smp("", "ConfigMap", live.clone(), patch.clone()).unwrap_or_default();
        assert_eq!(out["data"], data, "{patch}");
        assert_eq!(out["metadata"]["labels"], labels, "{patch}");
    }
    // Nulls inside new values never reach storage; unknown directives neither.
    let out = smp(
        "",
        "ConfigMap",
        json!({}),
        json!({"data": {"a": null, "b": "1"}, "$unknown": 1}),
    )
    .unwrap_or_default();
    assert_eq!(out, json!({"data": {"b": "1"}}));
}

#[test]
fn retain_keys_switches_deployment_strategy() {
    let live = json!({"kind": "Deployment", "spec": {"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}}}});
    let patch = json!({"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate", "rollingUpdate": null}}});
    let out = smp("apps", "Deployment", live.clone(), patch).unwrap_or_default();
    assert_eq!(out["spec"]["strategy"], json!({"type": "Recreate"}));
    let patch =
        json!({"spec": {"strategy": {"$retainKeys": ["type"], "rollingUpdate": {"maxSurge": 2}}}});
    let err = smp("apps", "Deployment", live.clone(), patch).expect_err("not listed");
    assert_eq!(err.to_status().code, 422);
    assert_eq!(
        err.to_string(),
        "patch content doesn't match retainKeys list"
    );
    let err = smp(
        "apps",
        "Deployment",
        live,
        json!({"spec": {"strategy": {"$retainKeys": "type"}}}),
    )
    .expect_err("bad");
    assert_eq!(
        (err.to_status().code, err.to_string().as_str()),
        (400, "invalid patch format of retainKeys")
    );
}

#[test]
fn service_ports_status_conditions_and_owner_references() {
    let live = json!({"kind": "Service", "spec": {"ports": [{"port": 80, "targetPort": 8080}]},
        "status": {"conditions": [{"type": "A", "status": "True"}]},
        "metadata": {"ownerReferences": [{"uid": "1", "name": "o"}]}});
    let patch = json!({"spec": {"ports": [{"port": 80, "targetPort": 9090}, {"port": 443}]},
        "status": {"conditions": [{"type": "B", "status": "False"}]},
        "metadata": {"ownerReferences": [{"uid": "2", "name": "p"}]}});
    let out = smp("", "Service", live, patch).unwrap_or_default();
    assert_eq!(
        out["spec"]["ports"],
        json!([{"port": 80, "targetPort": 9090}, {"port": 443}])
    );
    assert_eq!(
        out["status"]["conditions"],
        json!([{"type": "B", "status": "False"}, {"type": "A", "status": "True"}])
    );
    assert_eq!(
        out["metadata"]["ownerReferences"],
        json!([{"uid": "2", "name": "p"}, {"uid": "1", "name": "o"}])
    );
}

#[test]
fn cronjob_pod_template_is_reached() {
    let live = json!({"kind": "CronJob", "spec": {"jobTemplate": {"spec": {"template": {"spec": {"containers": [{"name": "a", "image": "x"}]}}}}}});
    let patch = json!({"spec": {"jobTemplate": {"spec": {"template": {"spec": {"containers": [{"name": "a", "image": "y"}]}}}}}});
    let out = smp("batch", "CronJob", live, patch).unwrap_or_default();
    assert_eq!(
        out["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"],
        json!([{"name": "a", "image": "y"}])
    );
}

#[test]
fn errors_are_classified_like_upstream() {
    let live = deployment(json!([{"name": "a", "image": "x"}]));
    let cases = [
        (
            deployment(json!([{"image": "y"}])),
            500,
            "map: map[image:y] does not contain declared merge key: name",
        ),
        (
            json!({"metadata": {"$patch": "merge"}}),
            500,
            "unknown patch type: merge in map: map[$patch:merge]",
        ),
        (
            deployment(json!([{"name": "a", "$patch": "merge"}])),
            500,
            "merging lists cannot yet be specified in the patch",
        ),
        (
            json!({"metadata": {"finalizers": [["x"]]}}),
            422,
            "lists of lists are not supported",
        ),
        (
            json!({"metadata": {"$deleteFromPrimitiveList": ["x"]}}),
            400,
            "invalid patch format of primitive list",
        ),
        (
            json!({"spec": {"$setElementOrderX": []}}),
            400,
            "invalid patch format of setElementOrder list",
        ),
    ];
    let mut live_with_finalizers = live.clone();
    live_with_finalizers["metadata"]["finalizers"] = json!(["f"]);
    for (patch, code, message) in cases {
        let err = smp(
            "apps",
            "Deployment",
            live_with_finalizers.clone(),
            patch.clone(),
        )
        .expect_err("must fail");
        assert_eq!(err.to_status().code, code, "{patch}");
        assert_eq!(err.to_string(), message, "{patch}");
    }
}
