use super::*;

#[test]
fn invalid_status_matches_real_server_shape() {
    let errs = [
        FieldError::invalid("metadata.name", "Web", "bad name"),
        FieldError::required("spec.selector", ""),
    ];
    let status = invalid_status("Deployment", "apps", "Web", &errs);
    assert_eq!(status.code, 422);
    assert_eq!(status.reason, "Invalid");
    assert_eq!(
        status.message,
        "Deployment.apps \"Web\" is invalid: [metadata.name: Invalid value: \"Web\": bad name, spec.selector: Required value]"
    );
    let details = status
        .details
        .as_ref()
        .map(|d| (d.kind.as_str(), d.group.as_str(), d.causes.len()));
    assert_eq!(details, Some(("Deployment", "apps", 2)));

    let core = invalid_status("ConfigMap", "", "x", &errs[..1]);
    assert_eq!(
        core.message,
        "ConfigMap \"x\" is invalid: metadata.name: Invalid value: \"Web\": bad name"
    );
    let json = serde_json::to_value(&core).unwrap_or_default();
    assert!(
        json["details"].get("group").is_none(),
        "empty group is omitted: {json}"
    );
}
