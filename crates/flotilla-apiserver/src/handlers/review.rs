//! Create-only reviews (`authorization.k8s.io/v1` access and rules reviews, `authentication.k8s.io/v1`
//! SelfSubjectReview and TokenReview): evaluated and answered with `201`, never stored, as kube-apiserver does.
//! `kubectl auth can-i` and `kubectl auth whoami` post them; controllers post SubjectAccessReviews.
//!
//! The embedded server has no authorization layer (every authenticated user may do everything), so every
//! access review is allowed and a rules review lists the wildcard rules: the answers say what the server will
//! actually do with a request.

use std::sync::Arc;

use axum::response::Response;
use http::{Method, StatusCode};
use serde_json::{Value, json};

use super::{Req, body};
use crate::context::Ctx;
use crate::wire::json_response;
use flotilla_registry::auth::UserInfo;
use flotilla_registry::resource::ResourceInfo;
use flotilla_registry::status::{ApiError, ApiResult};
use flotilla_registry::validation::{FieldError, invalid_status};

const REVIEWS: [(&str, &str); 6] = [
    ("authorization.k8s.io", "selfsubjectaccessreviews"),
    ("authorization.k8s.io", "selfsubjectrulesreviews"),
    ("authorization.k8s.io", "subjectaccessreviews"),
    ("authorization.k8s.io", "localsubjectaccessreviews"),
    ("authentication.k8s.io", "selfsubjectreviews"),
    ("authentication.k8s.io", "tokenreviews"),
];

/// Whether `info` is a create-only review resource.
pub(crate) fn is_review(info: &ResourceInfo) -> bool {
    !info.custom
        && REVIEWS
            .iter()
            .any(|(g, p)| info.group == *g && info.plural == *p)
}

fn invalid(info: &ResourceInfo, field: &str, detail: &str) -> ApiError {
    ApiError::from(invalid_status(
        &info.kind,
        &info.group,
        "",
        &[FieldError::invalid(field, "", detail)],
    ))
}

/// Checks an access review's spec: exactly one kind of attributes, and for SubjectAccessReviews a subject.
fn check_access_spec(info: &ResourceInfo, spec: &Value, ns: &str) -> ApiResult<()> {
    let present = |k: &str| spec.get(k).is_some_and(|v| !v.is_null());
    if present("resourceAttributes") == present("nonResourceAttributes") {
        return Err(invalid(
            info,
            "spec.resourceAttributes",
            "exactly one of nonResourceAttributes or resourceAttributes must be specified",
        ));
    }
    let subject = |k: &str| {
        spec.get(k).is_some_and(|v| match v {
            Value::String(s) => !s.is_empty(),
            Value::Array(a) => !a.is_empty(),
            _ => false,
        })
    };
    let needs_subject = matches!(
        info.plural.as_str(),
        "subjectaccessreviews" | "localsubjectaccessreviews"
    );
    if needs_subject && !subject("user") && !subject("groups") {
        return Err(invalid(
            info,
            "spec.user",
            "at least one of user or group must be specified",
        ));
    }
    let attr_ns = spec
        .pointer("/resourceAttributes/namespace")
        .and_then(Value::as_str)
        .unwrap_or("");
    if info.plural == "localsubjectaccessreviews" && attr_ns != ns {
        return Err(ApiError::bad_request(format!(
            "spec.resourceAttributes.namespace must match namespace: {ns}"
        )));
    }
    Ok(())
}

/// The status a review answers with.
fn evaluate(
    ctx: &Ctx,
    info: &ResourceInfo,
    obj: &Value,
    user: &UserInfo,
    ns: &str,
) -> ApiResult<Value> {
    let spec = obj.get("spec").cloned().unwrap_or_else(|| json!({}));
    Ok(match info.plural.as_str() {
        "selfsubjectrulesreviews" => json!({
            "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}],
            "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}],
            "incomplete": false,
        }),
        "selfsubjectreviews" => json!({"userInfo": user.to_json()}),
        "tokenreviews" => {
            let token = spec.get("token").and_then(Value::as_str).unwrap_or("");
            match crate::authn::authenticate(&ctx.registry, Some(&format!("Bearer {token}"))) {
                Some(who) => json!({"authenticated": true, "user": who.to_json()}),
                None => json!({"user": {}, "error": "invalid bearer token"}),
            }
        }
        _ => {
            check_access_spec(info, &spec, ns)?;
            json!({"allowed": true})
        }
    })
}

/// POST of a review: the request object with its `status` filled in, `201 Created`.
///
/// # Errors
/// `405` for any other method or an object path; the body's decoding errors; `422` for an access review
/// without exactly one kind of attributes or, for SubjectAccessReviews, without a user or group.
pub(crate) fn create(ctx: &Arc<Ctx>, info: &ResourceInfo, req: &Req) -> ApiResult<Response> {
    if req.method != Method::POST || req.rp.name.is_some() || req.rp.sub.is_some() {
        let verb = if req.rp.name.is_some() { "get" } else { "list" };
        return Err(ApiError::method_not_allowed(
            verb,
            &info.plural,
            &info.group,
        ));
    }
    let mut obj = body::decode_object(req, false)?;
    flotilla_registry::write::create::check_type(info, &mut obj)?;
    let status = evaluate(ctx, info, &obj, &req.user_info(), req.ns())?;
    if let Some(m) = obj.as_object_mut() {
        let meta = m.entry("metadata").or_insert_with(|| json!({}));
        if let Some(meta) = meta.as_object_mut() {
            // Go renders the never-set creation time of an unstored object as null.
            meta.entry("creationTimestamp").or_insert(Value::Null);
        }
        if info.plural != "selfsubjectreviews" {
            m.entry("spec").or_insert_with(|| json!({}));
        }
        m.insert("status".into(), status);
    }
    Ok(json_response(StatusCode::CREATED, &obj))
}
