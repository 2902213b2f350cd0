use serde_json::{Value, json};

use super::*;

fn spec(v: Value) -> PodSpec {
    match serde_json::from_value(v) {
        Ok(s) => s,
        Err(e) => panic!("fixture: {e}"),
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

#[test]
fn typed_templates_get_the_json_paths_requirements() {
    let template = json!({"spec": {
        "nodeSelector": {"zone": "a"},
        "containers": [{"name": "a", "resources": {"requests": {"cpu": "100m"}, "limits": {"memory": "1Gi"}}}]
    }});
    let typed: PodTemplateSpec = match serde_json::from_value(template.clone()) {
        Ok(t) => t,
        Err(e) => panic!("fixture: {e}"),
    };
    let via_type = replica_requirements(&typed).map_err(|e| e.to_string());
    let via_json = super::super::requirements::template_requirements(&template, String::new)
        .map_err(|e| e.to_string());
    assert!(matches!(&via_type, Ok(Some(_))));
    assert_eq!(via_type, via_json);
}
