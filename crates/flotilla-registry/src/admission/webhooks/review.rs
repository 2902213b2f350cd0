//! The AdmissionReview `admission.k8s.io/v1` wire format: the request kube-apiserver sends a webhook, and what its
//! answer means (allowed or denied with a Status, a base64 JSON Patch, warnings).

use base64::Engine;
use serde_json::{Map, Value, json};

use super::rules::Operation;
use crate::status::ApiError;

pub use crate::auth::UserInfo;

/// Everything a webhook is told about one request.
#[derive(Clone, Debug)]
pub struct Request<'a> {
    /// The operation.
    pub operation: Operation,
    /// API group of the resource (`""` for core).
    pub group: &'a str,
    /// API version of the request.
    pub version: &'a str,
    /// Kind of the object sent (for subresources, the subresource's kind, e.g. `Scale`).
    pub kind: &'a str,
    /// API group and version of `kind` when they differ from the resource's (`autoscaling/v1` for `Scale`).
    pub kind_group_version: Option<(&'a str, &'a str)>,
    /// Plural resource.
    pub resource: &'a str,
    /// Subresource, `""` for none.
    pub subresource: &'a str,
    /// Namespace, `""` for cluster-scoped.
    pub namespace: &'a str,
    /// Name (may be empty on create with generateName).
    pub name: &'a str,
    /// The old object (updates, deletes).
    pub old_object: Option<&'a Value>,
    /// Whether the request is a dry run.
    pub dry_run: bool,
    /// The request's options (`CreateOptions`, `UpdateOptions`, `DeleteOptions`) without apiVersion and kind.
    pub options: Value,
    /// Who asks.
    pub user: &'a UserInfo,
}

/// The AdmissionReview sent for `request` with `object` (the object as it is now, `None` on delete).
pub fn review(uid: &str, request: &Request<'_>, object: Option<&Value>) -> Value {
    let (kind_group, kind_version) = request
        .kind_group_version
        .unwrap_or((request.group, request.version));
    let resource =
        json!({"group": request.group, "version": request.version, "resource": request.resource});
    let kind = json!({"group": kind_group, "version": kind_version, "kind": request.kind});
    let mut options = request.options.clone();
    if let Some(o) = options.as_object_mut() {
        o.insert("apiVersion".into(), json!("meta.k8s.io/v1"));
        o.insert("kind".into(), json!(request.operation.options_kind()));
    }
    let mut body = Map::new();
    body.insert("uid".into(), json!(uid));
    body.insert("kind".into(), kind.clone());
    body.insert("resource".into(), resource.clone());
    if !request.subresource.is_empty() {
        body.insert("subResource".into(), json!(request.subresource));
        body.insert("requestSubResource".into(), json!(request.subresource));
    }
    body.insert("requestKind".into(), kind);
    body.insert("requestResource".into(), resource);
    if !request.name.is_empty() {
        body.insert("name".into(), json!(request.name));
    }
    if !request.namespace.is_empty() {
        body.insert("namespace".into(), json!(request.namespace));
    }
    body.insert("operation".into(), json!(request.operation.as_str()));
    body.insert("userInfo".into(), request.user.to_json());
    body.insert("object".into(), object.cloned().unwrap_or(Value::Null));
    body.insert(
        "oldObject".into(),
        request.old_object.cloned().unwrap_or(Value::Null),
    );
    body.insert("dryRun".into(), json!(request.dry_run));
    body.insert("options".into(), options);
    json!({
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": body,
    })
}

/// What a webhook answered.
#[derive(Debug)]
pub struct Answer {
    /// The denial, when the webhook refused the request.
    pub denied: Option<ApiError>,
    /// A JSON Patch to apply (mutating webhooks only).
    pub patch: Option<json_patch::Patch>,
    /// Warnings for the client.
    pub warnings: Vec<String>,
}

/// Reads webhook `name`'s reply to the review with `uid`. An `Err` is a reply the server cannot use (it counts as
/// a failed call, so the webhook's failurePolicy decides).
pub fn answer(name: &str, uid: &str, reply: &Value, mutating: bool) -> Result<Answer, String> {
    let api_version = reply.get("apiVersion").and_then(Value::as_str);
    if api_version != Some("admission.k8s.io/v1") {
        return Err(format!(
            "expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got {}",
            api_version.unwrap_or("no apiVersion")
        ));
    }
    let response = reply
        .get("response")
        .filter(|r| r.is_object())
        .ok_or("webhook response was absent")?;
    let got = response.get("uid").and_then(Value::as_str).unwrap_or("");
    if got != uid {
        return Err(format!("expected response.uid={uid:?}, got {got:?}"));
    }
    let allowed = response
        .get("allowed")
        .and_then(Value::as_bool)
        .ok_or("webhook response has no boolean \"allowed\"")?;
    let warnings = response
        .get("warnings")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_owned)
        .collect();
    if !allowed {
        return Ok(Answer {
            denied: Some(denial(name, response.get("status"))),
            patch: None,
            warnings,
        });
    }
    // Go decodes a byte slice from base64 text or, as kube-apiserver also accepts, from an array of byte values.
    let patch_bytes = match response.get("patch") {
        None | Some(Value::Null) => None,
        Some(Value::String(encoded)) => Some(
            base64::engine::general_purpose::STANDARD
                .decode(encoded)
                .map_err(|e| format!("the patch is not base64: {e}"))?,
        ),
        Some(Value::Array(items)) => Some(
            items
                .iter()
                .map(|b| b.as_u64().and_then(|b| u8::try_from(b).ok()))
                .collect::<Option<Vec<u8>>>()
                .ok_or("the patch is neither base64 nor an array of bytes")?,
        ),
        Some(_) => return Err("the patch is neither base64 nor an array of bytes".into()),
    };
    let patch = match patch_bytes {
        None => None,
        Some(_) if !mutating => {
            return Err("validating webhook may not return a patch".into());
        }
        Some(bytes) => {
            let patch_type = response.get("patchType").and_then(Value::as_str);
            if patch_type != Some("JSONPatch") {
                return Err(format!(
                    "unsupported patch type {:?}, only \"JSONPatch\" is supported",
                    patch_type.unwrap_or("")
                ));
            }
            Some(
                serde_json::from_slice(&bytes)
                    .map_err(|e| format!("the patch is not a JSON Patch: {e}"))?,
            )
        }
    };
    Ok(Answer {
        denied: None,
        patch,
        warnings,
    })
}

/// The error a denial becomes: the webhook's Status, its code raised to at least 400, its message prefixed with
/// who denied it (`admission webhook "NAME" denied the request: ...`), as kube-apiserver builds it.
fn denial(name: &str, status: Option<&Value>) -> ApiError {
    let field = |key: &str| {
        status
            .and_then(|s| s.get(key))
            .and_then(Value::as_str)
            .unwrap_or("")
    };
    let code = status
        .and_then(|s| s.get("code"))
        .and_then(Value::as_u64)
        .and_then(|c| u16::try_from(c).ok())
        .filter(|c| *c >= 400)
        .unwrap_or(400);
    let denied_by = format!("admission webhook \"{name}\" denied the request");
    let message = match (field("message"), field("reason")) {
        (m, _) if !m.is_empty() => format!("{denied_by}: {m}"),
        (_, r) if !r.is_empty() => format!("{denied_by}: {r}"),
        _ => format!("{denied_by} without explanation"),
    };
    let mut error = ApiError::new(code, known_reason(field("reason")), message);
    if let Some(details) = status
        .and_then(|s| s.get("details"))
        .and_then(Value::as_object)
    {
        error = error.with_details(details.clone());
    }
    error
}

/// The Status reasons a denial may carry through (the server's errors name their reason statically).
fn known_reason(reason: &str) -> &'static str {
    const REASONS: [&str; 16] = [
        "Unauthorized",
        "Forbidden",
        "NotFound",
        "AlreadyExists",
        "Conflict",
        "Gone",
        "Invalid",
        "ServerTimeout",
        "Timeout",
        "TooManyRequests",
        "BadRequest",
        "MethodNotAllowed",
        "NotAcceptable",
        "RequestEntityTooLarge",
        "UnsupportedMediaType",
        "InternalError",
    ];
    REASONS.into_iter().find(|r| *r == reason).unwrap_or("")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reply(response: Value) -> Value {
        json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": response})
    }

    #[test]
    fn a_denial_keeps_the_webhooks_code_and_names_the_webhook() {
        let got = answer(
            "deny.example.com",
            "u1",
            &reply(json!({"uid": "u1", "allowed": false, "status": {"code": 403, "message": "no", "reason": "Forbidden"}})),
            false,
        )
        .unwrap();
        let denied = got.denied.unwrap();
        assert_eq!(denied.code, 403);
        assert_eq!(denied.reason, "Forbidden");
        assert_eq!(
            denied.message,
            "admission webhook \"deny.example.com\" denied the request: no"
        );
        let bare = answer(
            "w",
            "u1",
            &reply(json!({"uid": "u1", "allowed": false, "status": {"code": 200}})),
            false,
        )
        .unwrap()
        .denied
        .unwrap();
        assert_eq!(bare.code, 400);
        assert_eq!(
            bare.message,
            "admission webhook \"w\" denied the request without explanation"
        );
    }

    #[test]
    fn replies_the_server_cannot_use_are_errors() {
        let ok = json!({"uid": "u1", "allowed": true});
        assert!(answer("w", "u2", &reply(ok.clone()), true).is_err());
        assert!(answer("w", "u1", &json!({"response": ok}), true).is_err());
        let patch = base64::engine::general_purpose::STANDARD.encode(b"[]");
        let patched =
            json!({"uid": "u1", "allowed": true, "patchType": "JSONPatch", "patch": patch});
        assert!(answer("w", "u1", &reply(patched.clone()), false).is_err());
        assert!(
            answer("w", "u1", &reply(patched), true)
                .unwrap()
                .patch
                .is_some()
        );
        // An array of byte values is a patch too, as kube-apiserver reads one.
        let bytes: Vec<u8> = br#"[{"op":"add","path":"/a","value":1}]"#.to_vec();
        let array = json!({"uid": "u1", "allowed": true, "patchType": "JSONPatch", "patch": bytes});
        assert_eq!(
            answer("w", "u1", &reply(array), true)
                .unwrap()
                .patch
                .map(|p| p.0.len()),
            Some(1)
        );
        let no_type = json!({"uid": "u1", "allowed": true, "patch": patch});
        assert!(answer("w", "u1", &reply(no_type), true).is_err());
        assert!(answer("w", "u1", &reply(json!({"uid": "u1"})), true).is_err());
    }

    #[test]
    fn the_review_carries_kind_resource_options_and_both_objects() {
        let mut user = UserInfo {
            username: "jane".into(),
            uid: "u-7".into(),
            groups: vec!["dev".into(), "system:authenticated".into()],
            ..UserInfo::default()
        };
        user.extra
            .insert("example.com/team".into(), vec!["blue".into()]);
        let old = json!({"spec": {"replicas": 1}});
        let request = Request {
            operation: Operation::Update,
            group: "apps",
            version: "v1",
            kind: "Scale",
            kind_group_version: Some(("autoscaling", "v1")),
            resource: "deployments",
            subresource: "scale",
            namespace: "ns",
            name: "d",
            old_object: Some(&old),
            dry_run: true,
            options: json!({"fieldManager": "kubectl"}),
            user: &user,
        };
        let review = review("u1", &request, Some(&json!({"spec": {"replicas": 2}})));
        let r = &review["request"];
        assert_eq!(
            r["kind"],
            json!({"group": "autoscaling", "version": "v1", "kind": "Scale"})
        );
        assert_eq!(r["resource"]["resource"], "deployments");
        assert_eq!(r["subResource"], "scale");
        assert_eq!(r["operation"], "UPDATE");
        assert_eq!(r["options"]["kind"], "UpdateOptions");
        assert_eq!(r["options"]["fieldManager"], "kubectl");
        assert_eq!(r["oldObject"]["spec"]["replicas"], 1);
        assert_eq!(r["object"]["spec"]["replicas"], 2);
        assert_eq!(r["dryRun"], true);
        // The whole identity, as kube-apiserver sends it (impersonated or not).
        assert_eq!(
            r["userInfo"],
            json!({"username": "jane", "uid": "u-7", "groups": ["dev", "system:authenticated"],
                   "extra": {"example.com/team": ["blue"]}})
        );
    }
}
