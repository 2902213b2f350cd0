use serde_json::json;

use super::*;

#[test]
fn bodies_follow_upstream_wording() {
    let cases = [
        (
            FieldError::invalid("metadata.name", "Foo", "bad"),
            "metadata.name: Invalid value: \"Foo\": bad",
        ),
        (
            FieldError::invalid("spec.replicas", -1, "must be >= 0"),
            "spec.replicas: Invalid value: -1: must be >= 0",
        ),
        (
            FieldError::invalid("x", json!(["a"]), "d"),
            "x: Invalid value: [\"a\"]: d",
        ),
        (
            FieldError::required("metadata.name", "name or generateName is required"),
            "metadata.name: Required value: name or generateName is required",
        ),
        (FieldError::required("spec", ""), "spec: Required value"),
        (
            FieldError::forbidden(
                "metadata.finalizers",
                "no new finalizers can be added if the object is being deleted",
            ),
            "metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted",
        ),
        (
            FieldError::too_long("metadata.annotations", 262144),
            "metadata.annotations: Too long: may not be more than 262144 bytes",
        ),
        (
            FieldError::not_supported("spec.scope", "Global", &["Cluster", "Namespaced"]),
            "spec.scope: Unsupported value: \"Global\": supported values: \"Cluster\", \"Namespaced\"",
        ),
        (
            FieldError::duplicate("spec.x[1]", "a"),
            "spec.x[1]: Duplicate value: \"a\"",
        ),
        (
            FieldError::too_many("spec.x", 3, 2),
            "spec.x: Too many: 3: must have at most 2 items",
        ),
        (
            FieldError::type_invalid("spec.x", "s", "must be of type integer"),
            "spec.x: Invalid value: \"s\": must be of type integer",
        ),
    ];
    for (err, want) in cases {
        assert_eq!(err.to_string(), want);
    }
}

#[test]
fn causes_carry_reason_body_and_field() {
    let err = FieldError::invalid("metadata.labels", "a b", "nope");
    assert_eq!(err.reason(), "FieldValueInvalid");
    assert_eq!(err.body(), "Invalid value: \"a b\": nope");
    assert_eq!(err.field, "metadata.labels");
}

#[test]
fn under_prefixes_paths() {
    assert_eq!(
        FieldError::required("name", "").under("metadata").field,
        "metadata.name"
    );
    assert_eq!(
        FieldError::required("[0].uid", "")
            .under("metadata.ownerReferences")
            .field,
        "metadata.ownerReferences[0].uid"
    );
    assert_eq!(FieldError::required("", "").under("spec").field, "spec");
}

#[test]
fn aggregate_deduplicates() {
    let e = FieldError::required("a", "");
    assert_eq!(
        aggregate_message(&[e.clone(), e.clone()]),
        "a: Required value"
    );
    assert_eq!(aggregate_message(&[]), "");
}

#[test]
fn invalid_messages_name_the_kind_and_aggregate_the_errors() {
    let errs = [
        FieldError::invalid("metadata.name", "Web", "bad name"),
        FieldError::required("spec.selector", ""),
    ];
    assert_eq!(
        invalid_message("Deployment", "apps", "Web", &errs),
        "Deployment.apps \"Web\" is invalid: [metadata.name: Invalid value: \"Web\": bad name, spec.selector: Required value]"
    );
    assert_eq!(
        invalid_message("ConfigMap", "", "x", &errs[..1]),
        "ConfigMap \"x\" is invalid: metadata.name: Invalid value: \"Web\": bad name"
    );
    assert_eq!(
        invalid_message("Cluster", "cluster.karmada.io", "m", &[]),
        "Cluster.cluster.karmada.io \"m\" is invalid"
    );
}
