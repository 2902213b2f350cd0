//! Create-only reviews (`authorization.k8s.io/v1` access and rules reviews, `authentication.k8s.io/v1`
//! SelfSubjectReview and TokenReview): evaluated and answered with `201`, never stored, as kube-apiserver does.
//! `kubectl auth can-i` and `kubectl auth whoami` post them; controllers post SubjectAccessReviews.
//!
//! Access reviews ask the same authorizer every request passes (`flotilla_registry::auth::rbac`); a rules
//! review lists the RBAC rules that apply to the requester in a namespace.

use std::sync::Arc;

use axum::response::Response;
use http::{Method, StatusCode};
use serde_json::{Value, json};

use super::{Req, body};
use crate::context::Ctx;
use crate::wire::json_response;
use flotilla_registry::auth::UserInfo;
use flotilla_registry::auth::rbac::{self, Attributes};
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

/// The attributes an access review asks about, for `user` (kube's `AuthorizationAttributesFrom`): an empty
/// version means every version.
fn review_attributes(spec: &Value, user: UserInfo) -> Attributes {
    let text = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_string();
    if let Some(ra) = spec.get("resourceAttributes").filter(|v| v.is_object()) {
        let version = text(ra, "version");
        return Attributes {
            user,
            verb: text(ra, "verb"),
            resource_request: true,
            namespace: text(ra, "namespace"),
            api_group: text(ra, "group"),
            api_version: if version.is_empty() {
                "*".into()
            } else {
                version
            },
            resource: text(ra, "resource"),
            subresource: text(ra, "subresource"),
            name: text(ra, "name"),
            ..Attributes::default()
        };
    }
    let nra = spec.get("nonResourceAttributes").unwrap_or(&Value::Null);
    Attributes {
        user,
        verb: text(nra, "verb"),
        path: text(nra, "path"),
        ..Attributes::default()
    }
}

/// The user a SubjectAccessReview's spec names.
fn spec_user(spec: &Value) -> UserInfo {
    let strings = |v: Option<&Value>| -> Vec<String> {
        v.and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default()
    };
    let extra = spec
        .get("extra")
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .map(|(k, v)| (k.clone(), strings(Some(v))))
                .collect()
        })
        .unwrap_or_default();
    UserInfo {
        username: spec
            .get("user")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string(),
        uid: spec
            .get("uid")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string(),
        groups: strings(spec.get("groups")),
        extra,
    }
}

/// A rules review's status: every rule that applies to `user` in the namespace, split into resource and
/// non-resource rules as kube-apiserver lists them.
fn rules_review(ctx: &Ctx, user: &UserInfo, spec: &Value) -> ApiResult<Value> {
    let namespace = spec.get("namespace").and_then(Value::as_str).unwrap_or("");
    if namespace.is_empty() {
        return Err(ApiError::bad_request("no namespace on request"));
    }
    let (rules, error) = rbac::rules_for(&ctx.registry.store, user, namespace);
    let list = |items: &[String]| json!(items);
    let mut resource_rules = Vec::new();
    let mut non_resource_rules = Vec::new();
    for rule in &rules {
        if !rule.resources.is_empty() {
            let mut r = serde_json::Map::new();
            r.insert("verbs".into(), list(&rule.verbs));
            for (k, v) in [
                ("apiGroups", &rule.api_groups),
                ("resources", &rule.resources),
                ("resourceNames", &rule.resource_names),
            ] {
                if !v.is_empty() {
                    r.insert(k.into(), list(v));
                }
            }
            resource_rules.push(Value::Object(r));
        }
        if !rule.non_resource_urls.is_empty() {
            non_resource_rules.push(json!({
                "verbs": rule.verbs,
                "nonResourceURLs": rule.non_resource_urls,
            }));
        }
    }
    let mut status = json!({
        "resourceRules": resource_rules,
        "nonResourceRules": non_resource_rules,
        "incomplete": false,
    });
    if !error.is_empty() {
        status["evaluationError"] = json!(error);
    }
    Ok(status)
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
        "selfsubjectrulesreviews" => rules_review(ctx, user, &spec)?,
        "selfsubjectreviews" => json!({"userInfo": user.to_json()}),
        "tokenreviews" => {
            let token = spec.get("token").and_then(Value::as_str).unwrap_or("");
            match crate::authn::authenticate_token(&ctx.registry, token) {
                Some(who) => json!({"authenticated": true, "user": who.to_json()}),
                None => json!({"user": {}, "error": "invalid bearer token"}),
            }
        }
        plural => {
            check_access_spec(info, &spec, ns)?;
            let subject = if plural == "selfsubjectaccessreviews" {
                user.clone()
            } else {
                spec_user(&spec)
            };
            let attrs = review_attributes(&spec, subject);
            rbac::review_status(&rbac::authorize(&ctx.registry.store, &attrs))
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
    let access_review = info.plural.ends_with("accessreviews");
    if access_review {
        // Upstream's create handler records the requester's fields before the review answers.
        flotilla_registry::write::create::record_created_fields(
            info,
            &mut obj,
            &req.field_manager(),
        );
    }
    if info.plural == "selfsubjectrulesreviews" {
        // Upstream answers with a new object holding only the status.
        obj = json!({"kind": info.kind, "apiVersion": info.api_version(), "spec": {}});
    }
    if let Some(m) = obj.as_object_mut() {
        let meta = m.entry("metadata").or_insert_with(|| json!({}));
        if let Some(meta) = meta.as_object_mut()
            && !access_review
        {
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
