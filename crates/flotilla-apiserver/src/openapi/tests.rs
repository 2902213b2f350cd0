use super::proto::{Document, build};
use super::*;
use prost::Message;

fn served() -> Vec<ServedResource<'static>> {
    vec![
        ServedResource {
            group: "",
            version: "v1",
            kind: "ConfigMap",
            plural: "configmaps",
            namespaced: true,
            custom: false,
        },
        ServedResource {
            group: "",
            version: "v1",
            kind: "Namespace",
            plural: "namespaces",
            namespaced: false,
            custom: false,
        },
        ServedResource {
            group: "apps",
            version: "v1",
            kind: "Deployment",
            plural: "deployments",
            namespaced: true,
            custom: false,
        },
        ServedResource {
            group: "policy.karmada.io",
            version: "v1alpha1",
            kind: "PropagationPolicy",
            plural: "propagationpolicies",
            namespaced: true,
            custom: true,
        },
    ]
}

#[test]
fn v2_json_has_patch_operations_with_gvk_and_no_definitions() {
    let doc = v2_json(&served(), "v1.36.0");
    assert_eq!(doc["swagger"], "2.0");
    assert_eq!(
        doc["info"],
        json!({"title": "Flotilla", "version": "v1.36.0"})
    );
    assert_eq!(doc["definitions"], json!({}));
    let op = &doc["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"]["patch"];
    assert_eq!(
        op["x-kubernetes-group-version-kind"],
        json!({"group": "apps", "kind": "Deployment", "version": "v1"})
    );
    assert_eq!(op["operationId"], "patchAppsV1NamespacedDeployment");
    let names: Vec<&str> = op["parameters"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| p["name"].as_str())
        .collect();
    assert_eq!(
        names,
        ["dryRun", "fieldManager", "fieldValidation", "force"]
    );
    assert!(
        op["consumes"]
            .as_array()
            .is_some_and(|c| c.contains(&json!("application/strategic-merge-patch+json")))
    );
    let ns = &doc["paths"]["/api/v1/namespaces/{name}"]["patch"];
    assert_eq!(
        ns["x-kubernetes-group-version-kind"],
        json!({"group": "", "kind": "Namespace", "version": "v1"})
    );
    let pp = &doc["paths"]["/apis/policy.karmada.io/v1alpha1/namespaces/{namespace}/propagationpolicies/{name}"]
        ["patch"];
    assert_eq!(
        pp["operationId"],
        "patchPolicyV1alpha1NamespacedPropagationPolicy"
    );
    assert!(
        !pp["consumes"]
            .as_array()
            .is_some_and(|c| c.contains(&json!("application/strategic-merge-patch+json"))),
        "no SMP for CRs"
    );
}

#[test]
fn v2_protobuf_decodes_as_a_gnostic_document() {
    let bytes = v2_protobuf(&served(), "v1.36.0");
    let doc = Document::decode(bytes.as_slice()).unwrap_or_default();
    assert_eq!(doc, build(&served(), "v1.36.0"));
    assert_eq!(doc.swagger, "2.0");
    assert_eq!(
        doc.info.as_ref().map(|i| i.title.as_str()),
        Some("Flotilla")
    );
    let paths = doc.paths.map(|p| p.path).unwrap_or_default();
    assert_eq!(paths.len(), 4);
    let cm = paths
        .iter()
        .find(|p| p.name == "/api/v1/namespaces/{namespace}/configmaps/{name}")
        .and_then(|p| p.value.clone());
    let op = cm.and_then(|v| v.patch).unwrap_or_default();
    let gvk = op
        .vendor_extension
        .iter()
        .find(|e| e.name == "x-kubernetes-group-version-kind");
    assert_eq!(
        gvk.and_then(|e| e.value.as_ref()).map(|v| v.yaml.as_str()),
        Some("group: \"\"\nkind: ConfigMap\nversion: v1\n")
    );
    let dry_run = op
        .parameters
        .iter()
        .filter_map(|p| {
            p.parameter
                .as_ref()?
                .non_body_parameter
                .as_ref()?
                .query_parameter_sub_schema
                .as_ref()
        })
        .any(|q| q.name == "dryRun" && q.r#in == "query");
    assert!(dry_run);
    // Field 1 (swagger) comes first on the wire: tag 1, length-delimited.
    assert_eq!(&bytes[..5], &[0x0a, 0x03, b'2', b'.', b'0']);
    // An empty served list is still a valid document.
    assert!(Document::decode(v2_protobuf(&[], "v").as_slice()).is_ok());
}

#[test]
fn v3_index_and_group_version_documents() {
    let root = v3_root(&served(), "v1.36.0");
    let mut keys: Vec<&String> = root["paths"]
        .as_object()
        .map(|m| m.keys().collect())
        .unwrap_or_default();
    keys.sort();
    assert_eq!(
        keys,
        ["api/v1", "apis/apps/v1", "apis/policy.karmada.io/v1alpha1"]
    );
    let url = root["paths"]["apis/apps/v1"]["serverRelativeURL"]
        .as_str()
        .unwrap_or_default();
    assert!(url.starts_with("/openapi/v3/apis/apps/v1?hash="), "{url}");
    // The hash changes when the served resources change.
    let fewer = v3_root(&served()[..2], "v1.36.0");
    assert_eq!(fewer["paths"]["api/v1"], root["paths"]["api/v1"]);
    assert!(fewer["paths"].get("apis/apps/v1").is_none());

    let core = v3_group_version(&served(), "api/v1", "v1.36.0").unwrap_or_default();
    assert_eq!(core["openapi"], "3.0.0");
    let mut paths: Vec<&String> = core["paths"]
        .as_object()
        .map(|m| m.keys().collect())
        .unwrap_or_default();
    paths.sort();
    assert_eq!(
        paths,
        [
            "/api/v1/namespaces/{namespace}/configmaps/{name}",
            "/api/v1/namespaces/{name}"
        ]
    );
    let op = &core["paths"]["/api/v1/namespaces/{namespace}/configmaps/{name}"]["patch"];
    assert_eq!(op["x-kubernetes-group-version-kind"]["kind"], "ConfigMap");
    assert!(
        op["requestBody"]["content"]
            .get("application/strategic-merge-patch+json")
            .is_none()
    );
    assert!(
        op["requestBody"]["content"]
            .get("application/apply-patch+yaml")
            .is_some()
    );
    assert!(v3_group_version(&served(), "/apis/apps/v1/", "v").is_some());
    assert_eq!(v3_group_version(&served(), "apis/batch/v1", "v"), None);
}

#[test]
fn protobuf_accept_forms_and_response_type() {
    assert!(accepts_v2_protobuf(
        "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"
    ));
    assert!(accepts_v2_protobuf(
        "application/json;q=0.9, application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
    ));
    assert!(!accepts_v2_protobuf("application/json"));
    // The response type must parse as a MIME type: no '@' in the subtype.
    assert!(!V2_PROTOBUF_RESPONSE_CONTENT_TYPE.contains('@'));
}
