use k8s_openapi::api::core::v1::PodSpec;
use proptest::prelude::*;
use serde_json::{Value, json};

use super::*;

#[path = "requirements_oracle.rs"]
mod typed;

fn spec(v: Value) -> PodSpec {
    match serde_json::from_value(v) {
        Ok(s) => s,
        Err(e) => panic!("fixture: {e}"),
    }
}

/// The JSON path's answer for a pod spec, checked against the typed oracle on the way.
fn requirements(v: Value) -> Value {
    let got = match spec_requirements(&v, || "pod".to_owned()) {
        Ok(r) => r,
        Err(e) => panic!("requirements: {e}"),
    };
    let typed = match typed::pod_replica_requirements(&spec(v)) {
        Ok(r) => r,
        Err(e) => panic!("typed requirements: {e}"),
    };
    assert_eq!(got, typed, "JSON and typed paths differ");
    serde_json::to_value(got).unwrap_or_default()
}

#[test]
fn requirements_table() {
    let cases = [
        (
            "nothing requested",
            json!({"containers": [{"name": "a"}]}),
            Value::Null,
        ),
        (
            "cpu sums and canonical forms",
            json!({"containers": [
                {"name": "a", "resources": {"requests": {"cpu": "100m", "memory": "512Mi"}}},
                {"name": "b", "resources": {"requests": {"cpu": "1.2", "memory": "512Mi"}}}
            ]}),
            json!({"resourceRequest": {"cpu": "1300m", "memory": "1Gi"}}),
        ),
        (
            "limits default missing requests",
            json!({"containers": [{"name": "a", "resources": {"limits": {"cpu": "2", "memory": "1300M"}, "requests": {"cpu": "1"}}}]}),
            json!({"resourceRequest": {"cpu": "1", "memory": "1300000000"}}),
        ),
        (
            "init containers raise to their maximum",
            json!({
                "initContainers": [
                    {"name": "i1", "resources": {"requests": {"cpu": "3", "memory": "100Mi"}}},
                    {"name": "i2", "resources": {"limits": {"ephemeral-storage": "1Gi"}}}
                ],
                "containers": [{"name": "a", "resources": {"requests": {"cpu": "1", "memory": "200Mi"}}}]
            }),
            json!({"resourceRequest": {"cpu": "3", "ephemeral-storage": "1Gi", "memory": "200Mi"}}),
        ),
        (
            "overhead added after init maxima",
            json!({
                "overhead": {"cpu": "250m"},
                "initContainers": [{"name": "i", "resources": {"requests": {"cpu": "1"}}}],
                "containers": [{"name": "a", "resources": {"requests": {"cpu": "500m"}}}]
            }),
            json!({"resourceRequest": {"cpu": "1250m"}}),
        ),
        (
            "milli rounding up per quantity, and unit rounding",
            json!({"containers": [
                {"name": "a", "resources": {"requests": {"cpu": "0.1m", "memory": "0.5", "pods": "1000"}}},
                {"name": "b", "resources": {"requests": {"cpu": "0.1m", "memory": "0.5"}}}
            ]}),
            json!({"resourceRequest": {"cpu": "2m", "memory": "2", "pods": "1k"}}),
        ),
        (
            "scalar resources kept, unknown names dropped, zero dropped",
            json!({"containers": [{"name": "a", "resources": {"requests": {
                "nvidia.com/gpu": "2", "hugepages-2Mi": "4Mi", "example.com/zero": "0",
                "attachable-volumes-csi-x": "3", "storage": "1Gi", "requests.example.com/x": "1",
                "kubernetes.io/foo": "1000"
            }}}]}),
            json!({"resourceRequest": {
                "attachable-volumes-csi-x": "3", "hugepages-2Mi": "4Mi", "kubernetes.io/foo": "1k", "nvidia.com/gpu": "2"
            }}),
        ),
        (
            "an empty node selector is present",
            json!({"nodeSelector": {}, "containers": [{"name": "a"}]}),
            json!({"nodeClaim": {}}),
        ),
        (
            "node claim from selector, tolerations and required affinity only",
            json!({
                "nodeSelector": {"zone": "a"},
                "tolerations": [{"key": "k", "operator": "Exists"}],
                "affinity": {
                    "nodeAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": [{"key": "x", "operator": "In", "values": ["1"]}]}]},
                        "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 1, "preference": {}}]
                    },
                    "podAntiAffinity": {}
                },
                "containers": [{"name": "a"}]
            }),
            json!({"nodeClaim": {
                "hardNodeAffinity": {"nodeSelectorTerms": [{"matchExpressions": [{"key": "x", "operator": "In", "values": ["1"]}]}]},
                "nodeSelector": {"zone": "a"},
                "tolerations": [{"key": "k", "operator": "Exists"}]
            }}),
        ),
        (
            "empty tolerations and preferred affinity give no claim",
            json!({"tolerations": [], "affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": []}}, "containers": [{"name": "a"}]}),
            Value::Null,
        ),
        (
            "ephemeral containers are ignored",
            json!({"containers": [{"name": "a"}], "ephemeralContainers": [{"name": "e", "resources": {"requests": {"cpu": "1"}}}]}),
            Value::Null,
        ),
    ];
    for (name, input, expected) in cases {
        assert_eq!(requirements(input), expected, "{name}");
    }
}

#[test]
fn template_without_spec_has_no_requirements() {
    for template in [
        json!({}),
        json!({"metadata": {"name": "x"}}),
        json!({"spec": null}),
        Value::Null,
    ] {
        assert!(
            matches!(template_requirements(&template, String::new), Ok(None)),
            "{template}"
        );
    }
}

#[test]
fn malformed_quantity_names_the_field() {
    let err = spec_requirements(
        &json!({"containers": [{"name": "web", "resources": {"requests": {"cpu": "lots"}}}]}),
        String::new,
    );
    let Err(err) = err else {
        panic!("expected an error")
    };
    let text = err.to_string();
    assert!(
        text.contains("spec.containers[web].resources.cpu") && text.contains("lots"),
        "{text}"
    );
}

#[test]
fn scalar_resource_names() {
    for (name, scalar) in [
        ("nvidia.com/gpu", true),
        ("example.com/a_b", true),
        ("hugepages-1Gi", true),
        ("kubernetes.io/anything", true),
        ("attachable-volumes-aws-ebs", true),
        ("requests.example.com/gpu", false),
        ("gpu", false),
        ("Example.com/gpu", false),
        ("example.com/-bad", false),
        ("a/b/c", false),
    ] {
        assert_eq!(is_scalar_resource(name), scalar, "{name}");
    }
}

#[test]
fn errors_match_the_typed_path() {
    let cases = [
        json!({"containers": [{"name": "a", "resources": {"requests": {"memory": "x", "cpu": "y"}}}]}),
        json!({"containers": [
            {"name": "a", "resources": {"requests": {"cpu": "1"}}},
            {"name": "b", "resources": {"limits": {"cpu": "1", "memory": "1Qi"}, "requests": {"cpu": "2"}}}
        ]}),
        json!({"initContainers": [{"name": "i", "resources": {"limits": {"pods": "--1"}}}], "containers": []}),
        json!({"overhead": {"cpu": "1x"}, "containers": []}),
    ];
    for case in cases {
        let got = spec_requirements(&case, String::new).map_err(|e| e.to_string());
        let typed = typed::pod_replica_requirements(&spec(case.clone())).map_err(|e| e.to_string());
        assert!(got.is_err(), "{case}");
        assert_eq!(got, typed, "{case}");
    }
    // A shadowed limit is never parsed, in either path.
    let shadowed = json!({"containers": [{"name": "a", "resources": {"requests": {"cpu": "1"}, "limits": {"cpu": "bad"}}}]});
    assert!(spec_requirements(&shadowed, String::new).is_ok());
}

#[test]
fn wrong_types_in_read_fields_are_decoding_errors_naming_the_template() {
    for (case, field) in [
        (json!({"containers": 3}), "containers"),
        (json!({"containers": [7]}), "containers[0]"),
        (
            json!({"containers": [{"name": "a", "resources": []}]}),
            "containers[0].resources",
        ),
        (
            json!({"containers": [{"name": "a", "resources": {"requests": "1"}}]}),
            "containers[0].resources.requests",
        ),
        (
            json!({"containers": [{"name": "a", "resources": {"requests": {"cpu": true}}}]}),
            "spec.containers[a].resources.cpu",
        ),
        (json!({"overhead": [], "containers": []}), "overhead"),
        (json!({"affinity": 1, "containers": []}), "affinity"),
        (json!({"tolerations": {}, "containers": []}), ""),
        (json!({"nodeSelector": {"a": 1}, "containers": []}), ""),
    ] {
        let err = template_requirements(&json!({"spec": case}), || {
            "spec.template of Deployment ns/web".to_owned()
        });
        let Err(NativeError::Decode { what, source }) = err else {
            panic!("expected a decoding error for {case}, got {err:?}")
        };
        assert_eq!(what, "spec of spec.template of Deployment ns/web");
        assert!(source.to_string().contains(field), "{case}: {source}");
    }
    assert!(matches!(
        template_requirements(&json!("x"), String::new),
        Err(NativeError::Decode { .. })
    ));
}

#[test]
fn quantities_written_as_json_numbers_parse_as_k8s_openapi_prints_them() {
    let v = json!({"containers": [{"name": "a", "resources": {"requests": {"cpu": 0.5, "memory": 1024, "pods": -1}}}]});
    assert_eq!(
        requirements(v),
        json!({"resourceRequest": {"cpu": "500m", "memory": "1Ki"}})
    );
}

/// Resource names: accounted ones of each unit, a scalar one and ones Karmada drops.
const NAMES: &[&str] = &[
    "cpu",
    "memory",
    "ephemeral-storage",
    "pods",
    "nvidia.com/gpu",
    "hugepages-2Mi",
    "storage",
    "requests.example.com/x",
];

/// Quantities, mostly valid, in several forms; one does not parse.
fn quantity() -> impl Strategy<Value = Value> {
    prop_oneof![
        8 => prop::sample::select(vec![
            "100m", "1.2", "512Mi", "1Gi", "0", "1300M", "2", "0.1m", "-1", "1e3", "5k", "250m", "3", "1.5Gi",
        ])
        .prop_map(|s| json!(s)),
        1 => (0u32..4000).prop_map(|n| json!(n)),
        1 => Just(json!(0.25)),
        1 => Just(json!("lots")),
    ]
}

fn resource_list() -> impl Strategy<Value = Option<Value>> {
    prop::option::of(prop::collection::btree_map(
        prop::sample::select(NAMES),
        quantity(),
        0..4,
    ))
    .prop_map(|m| m.map(|m| json!(m)))
}

fn container(i: usize) -> impl Strategy<Value = Value> {
    (resource_list(), resource_list(), any::<bool>()).prop_map(
        move |(requests, limits, null_resources)| {
            let mut resources = serde_json::Map::new();
            if let Some(r) = requests {
                resources.insert("requests".to_owned(), r);
            }
            if let Some(l) = limits {
                resources.insert("limits".to_owned(), l);
            }
            let resources = if null_resources && resources.is_empty() {
                Value::Null
            } else {
                Value::Object(resources)
            };
            json!({"name": format!("c{i}"), "image": "img", "resources": resources})
        },
    )
}

fn containers(max: usize) -> impl Strategy<Value = Vec<Value>> {
    (0..=max).prop_flat_map(|n| (0..n).map(container).collect::<Vec<_>>())
}

fn pod_spec() -> impl Strategy<Value = Value> {
    let selector = prop_oneof![
        Just(None),
        Just(Some(json!({}))),
        Just(Some(json!({"zone": "a", "disk": "ssd"})))
    ];
    let tolerations = prop_oneof![
        Just(None),
        Just(Some(json!([]))),
        Just(Some(
            json!([{"key": "k", "operator": "Exists"}, {"key": "d", "operator": "Equal", "value": "w", "effect": "NoSchedule", "tolerationSeconds": 30}])
        )),
    ];
    let affinity = prop_oneof![
        Just(None),
        Just(Some(
            json!({"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": []}})
        )),
        Just(Some(
            json!({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": [{"key": "x", "operator": "In", "values": ["1", "2"]}], "matchFields": [{"key": "metadata.name", "operator": "NotIn", "values": ["n"]}]}]}}, "podAffinity": {}})
        )),
        Just(Some(json!({"nodeAffinity": null}))),
    ];
    let overhead = prop::option::of(prop::collection::btree_map(
        prop::sample::select(NAMES),
        quantity(),
        0..3,
    ));
    (containers(3), containers(2), selector, tolerations, affinity, overhead).prop_map(
        |(containers, init, selector, tolerations, affinity, overhead)| {
            let mut spec = json!({"containers": containers, "restartPolicy": "Always", "serviceAccountName": "sa"});
            if !init.is_empty() {
                spec["initContainers"] = json!(init);
            }
            for (key, value) in [("nodeSelector", selector), ("tolerations", tolerations), ("affinity", affinity)] {
                if let Some(value) = value {
                    spec[key] = value;
                }
            }
            if let Some(overhead) = overhead {
                spec["overhead"] = json!(overhead);
            }
            spec
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// The JSON path gives exactly the typed path's answer, or the same error, on varied pod templates.
    #[test]
    fn json_path_equals_the_typed_path(spec_json in pod_spec()) {
        let template = json!({"metadata": {"labels": {"app": "x"}}, "spec": spec_json});
        let got = template_requirements(&template, String::new).map_err(|e| e.to_string());
        let decoded: k8s_openapi::api::core::v1::PodTemplateSpec = match serde_json::from_value(template.clone()) {
            Ok(t) => t,
            Err(e) => panic!("fixture: {e}"),
        };
        let typed = typed::replica_requirements(&decoded).map_err(|e| e.to_string());
        prop_assert_eq!(got, typed, "{}", template);
    }
}
