use serde_json::{Value, json};

use super::*;

fn spec(v: Value) -> PodSpec {
    match serde_json::from_value(v) {
        Ok(s) => s,
        Err(e) => panic!("fixture: {e}"),
    }
}

fn requirements(v: Value) -> Value {
    match pod_replica_requirements(&spec(v)) {
        Ok(r) => serde_json::to_value(r).unwrap_or_default(),
        Err(e) => panic!("requirements: {e}"),
    }
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
    assert!(matches!(
        replica_requirements(&PodTemplateSpec::default()),
        Ok(None)
    ));
}

#[test]
fn malformed_quantity_names_the_field() {
    let err = pod_replica_requirements(&spec(
        json!({"containers": [{"name": "web", "resources": {"requests": {"cpu": "lots"}}}]}),
    ));
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

fn deps(v: Value, namespace: &str) -> Vec<(String, String, String)> {
    dependencies(&spec(v), namespace)
        .into_iter()
        .map(|r| (r.kind, r.namespace, r.name))
        .collect()
}

fn refs(items: &[(&str, &str)], namespace: &str) -> Vec<(String, String, String)> {
    items
        .iter()
        .map(|(k, n)| ((*k).to_owned(), namespace.to_owned(), (*n).to_owned()))
        .collect()
}

#[test]
fn dependencies_cover_every_source_in_native_order() {
    let pod = json!({
        "serviceAccountName": "robot",
        "imagePullSecrets": [{"name": "pull"}, {"name": ""}],
        "initContainers": [{"name": "i", "envFrom": [{"configMapRef": {"name": "cm-init"}}]}],
        "containers": [{
            "name": "a",
            "envFrom": [{"secretRef": {"name": "s-envfrom"}}, {"configMapRef": {"name": "cm-envfrom"}}],
            "env": [
                {"name": "X", "valueFrom": {"configMapKeyRef": {"name": "cm-key", "key": "k"}}},
                {"name": "Y", "valueFrom": {"secretKeyRef": {"name": "s-key", "key": "k"}}},
                {"name": "Z", "value": "plain"}
            ]
        }],
        "ephemeralContainers": [{"name": "e", "env": [{"name": "E", "valueFrom": {"secretKeyRef": {"name": "s-eph", "key": "k"}}}]}],
        "volumes": [
            {"name": "v1", "configMap": {"name": "cm-vol"}},
            {"name": "v2", "projected": {"sources": [{"configMap": {"name": "cm-proj"}}, {"secret": {"name": "s-proj"}}]}},
            {"name": "v3", "secret": {"secretName": "s-vol"}},
            {"name": "v4", "azureFile": {"secretName": "s-azure", "shareName": "x"}},
            {"name": "v5", "cephfs": {"monitors": ["m"], "secretRef": {"name": "s-ceph"}}},
            {"name": "v6", "cinder": {"volumeID": "x", "secretRef": {"name": "s-cinder"}}},
            {"name": "v7", "flexVolume": {"driver": "d", "secretRef": {"name": "s-flex"}}},
            {"name": "v8", "rbd": {"monitors": ["m"], "image": "i", "secretRef": {"name": "s-rbd"}}},
            {"name": "v9", "scaleIO": {"gateway": "g", "system": "s", "secretRef": {"name": "s-scaleio"}}},
            {"name": "v10", "iscsi": {"targetPortal": "t", "iqn": "i", "lun": 0, "secretRef": {"name": "s-iscsi"}}},
            {"name": "v11", "storageos": {"secretRef": {"name": "s-storageos"}}},
            {"name": "v12", "csi": {"driver": "d", "nodePublishSecretRef": {"name": "s-csi"}}},
            {"name": "v13", "persistentVolumeClaim": {"claimName": "data"}},
            {"name": "v14", "persistentVolumeClaim": {"claimName": "data"}},
            {"name": "v15", "emptyDir": {}}
        ]
    });
    let expected = refs(
        &[
            ("ConfigMap", "cm-envfrom"),
            ("ConfigMap", "cm-init"),
            ("ConfigMap", "cm-key"),
            ("ConfigMap", "cm-proj"),
            ("ConfigMap", "cm-vol"),
            ("Secret", "pull"),
            ("Secret", "s-azure"),
            ("Secret", "s-ceph"),
            ("Secret", "s-cinder"),
            ("Secret", "s-csi"),
            ("Secret", "s-envfrom"),
            ("Secret", "s-eph"),
            ("Secret", "s-flex"),
            ("Secret", "s-iscsi"),
            ("Secret", "s-key"),
            ("Secret", "s-proj"),
            ("Secret", "s-rbd"),
            ("Secret", "s-scaleio"),
            ("Secret", "s-storageos"),
            ("Secret", "s-vol"),
            ("ServiceAccount", "robot"),
            ("PersistentVolumeClaim", "data"),
        ],
        "ns",
    );
    assert_eq!(deps(pod, "ns"), expected);
    let all = dependencies(
        &spec(json!({"serviceAccountName": "robot", "containers": []})),
        "ns",
    );
    assert!(
        all.iter()
            .all(|r| r.api_version == "v1" && r.label_selector.is_none())
    );
}

#[test]
fn default_service_account_and_empty_pods_have_no_dependencies() {
    assert_eq!(
        deps(
            json!({"serviceAccountName": "default", "serviceAccount": "legacy", "containers": [{"name": "a"}]}),
            ""
        ),
        vec![]
    );
    assert_eq!(deps(json!({"containers": []}), "ns"), vec![]);
}

#[test]
fn only_the_first_volume_source_counts_for_secrets() {
    let pod = json!({"containers": [], "volumes": [{"name": "v", "azureFile": {"secretName": "first", "shareName": "x"}, "secret": {"secretName": "second"}}]});
    assert_eq!(deps(pod, "ns"), refs(&[("Secret", "first")], "ns"));
}
