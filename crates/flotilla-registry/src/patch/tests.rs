use super::*;
use serde_json::json;

const DEPLOYMENT: KindInfo<'static> = KindInfo {
    group: "apps",
    version: "v1",
    kind: "Deployment",
    namespaced: true,
    crd_version: None,
};

#[test]
fn content_types_map_to_patch_types() {
    let cases = [
        ("application/json-patch+json", Some(PatchType::Json)),
        ("application/merge-patch+json", Some(PatchType::Merge)),
        (
            "application/strategic-merge-patch+json; charset=utf-8",
            Some(PatchType::Strategic),
        ),
        ("Application/Apply-Patch+YAML", Some(PatchType::Apply)),
        ("application/json", None),
        ("application/apply-patch+cbor", None),
    ];
    for (ct, want) in cases {
        assert_eq!(PatchType::from_content_type(ct), want, "{ct}");
    }
    for t in [
        PatchType::Json,
        PatchType::Merge,
        PatchType::Strategic,
        PatchType::Apply,
    ] {
        assert_eq!(PatchType::from_content_type(t.content_type()), Some(t));
    }
}

#[test]
fn strategic_merge_patch_on_custom_resources_is_415() {
    let version = json!({"name": "v1"});
    let foo = KindInfo::custom("example.com", "v1", "Foo", true, &version);
    let err = apply_patch(PatchType::Strategic, &json!({}), b"{}", &foo).expect_err("415");
    let status = err.to_status();
    assert_eq!(
        (status.code, status.reason.as_str()),
        (415, "UnsupportedMediaType")
    );
    assert_eq!(
        status.message,
        "the body of the request was in an unknown format - accepted media types include: \
         application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"
    );
    // The other flavours work on custom resources.
    let merged = apply_patch(
        PatchType::Merge,
        &json!({"spec": {"a": 1}}),
        br#"{"spec":{"b":2}}"#,
        &foo,
    );
    assert_eq!(merged, Ok(json!({"spec": {"a": 1, "b": 2}})));
}

#[test]
fn dispatches_each_flavour() {
    let live =
        json!({"spec": {"template": {"spec": {"containers": [{"name": "a", "image": "x"}]}}}});
    let smp = br#"{"spec":{"template":{"spec":{"containers":[{"name":"a","image":"y"}]}}}}"#;
    let out = apply_patch(PatchType::Strategic, &live, smp, &DEPLOYMENT).unwrap_or_default();
    assert_eq!(
        out["spec"]["template"]["spec"]["containers"],
        json!([{"name": "a", "image": "y"}])
    );
    let jp = br#"[{"op":"replace","path":"/spec/template/spec/containers/0/image","value":"z"}]"#;
    let out = apply_patch(PatchType::Json, &live, jp, &DEPLOYMENT).unwrap_or_default();
    assert_eq!(
        out["spec"]["template"]["spec"]["containers"][0]["image"],
        "z"
    );
    assert!(matches!(
        apply_patch(PatchType::Merge, &live, b"{", &DEPLOYMENT),
        Err(PatchError::BadRequest(_))
    ));
    assert!(matches!(
        apply_patch(PatchType::Strategic, &live, b"[]", &DEPLOYMENT),
        Err(PatchError::BadRequest(_))
    ));
}

#[test]
fn patch_options_are_validated_like_upstream() {
    let err =
        validate_options(PatchType::Apply, None, None, &[], None).expect_err("manager required");
    let status = err.to_status();
    assert_eq!(status.code, 422);
    assert_eq!(
        status.message,
        "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch"
    );
    let err = validate_options(PatchType::Merge, Some("m"), Some(true), &[], None)
        .expect_err("force forbidden");
    assert_eq!(
        err.to_status().message,
        "PatchOptions.meta.k8s.io \"\" is invalid: force: Forbidden: may not be specified for non-apply patch"
    );
    let err = validate_options(
        PatchType::Merge,
        None,
        None,
        &["Some".to_string()],
        Some("Loud"),
    )
    .expect_err("bad values");
    assert_eq!(
        err.to_status().message,
        "PatchOptions.meta.k8s.io \"\" is invalid: [dryRun: Unsupported value: [\"Some\"]: supported values: \"All\", \
         fieldValidation: Unsupported value: \"Loud\": supported values: \"Ignore\", \"Strict\", \"Warn\"]"
    );
    let long = "m".repeat(129);
    assert!(validate_options(PatchType::Apply, Some(&long), None, &[], None).is_err());
    assert!(
        validate_options(
            PatchType::Apply,
            Some("kubectl"),
            Some(false),
            &["All".to_string()],
            Some("Strict")
        )
        .is_ok()
    );
    assert!(validate_options(PatchType::Merge, None, None, &[], None).is_ok());
}

#[test]
fn conflicts_render_like_upstream() {
    let c = |manager: &str, op: &str, field: &str| Conflict {
        manager: manager.to_string(),
        operation: op.to_string(),
        api_version: "apps/v1".to_string(),
        time: (op == "Update").then(|| "2026-11-22T10:00:00Z".to_string()),
        subresource: None,
        field: field.to_string(),
    };
    let one = PatchError::Conflict(vec![c("kubectl", "Apply", ".spec.replicas")]).to_status();
    assert_eq!((one.code, one.reason.as_str()), (409, "Conflict"));
    assert_eq!(
        one.message,
        "Apply failed with 1 conflict: conflict with \"kubectl\": .spec.replicas"
    );
    let causes = one.details.map(|d| d.causes).unwrap_or_default();
    assert_eq!(causes[0].reason, "FieldManagerConflict");
    assert_eq!(causes[0].field, ".spec.replicas");
    let two = PatchError::Conflict(vec![
        c("kube-controller-manager", "Update", ".spec.replicas"),
        c("helm", "Apply", ".metadata.labels.app"),
    ]);
    assert_eq!(
        two.to_string(),
        "Apply failed with 2 conflicts: conflicts with \"helm\":\n- .metadata.labels.app\nconflicts with \
         \"kube-controller-manager\" using apps/v1 at 2026-11-22T10:00:00Z:\n- .spec.replicas"
    );
}
