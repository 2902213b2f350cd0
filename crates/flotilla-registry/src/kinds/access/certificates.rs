//! CertificateSigningRequests (`certificates.k8s.io/v1`, cluster-scoped) as kube-apiserver's registry treats
//! them: the requester recorded on create, a spec that never changes, approval conditions that change only
//! through the `approval` subresource and the certificate only through `status`, and the validation of the
//! request (a PEM `CERTIFICATE REQUEST` whose signature holds), signer name, usages, expiration, conditions and
//! certificate, with kube-apiserver's field paths and wording.
//!
//! No signer runs here: as on a real cluster without a controller for the signer, a request stays pending
//! until someone approves it and a signer writes `status.certificate`.

use serde_json::{Map, Value, json};
use x509_parser::pem::Pem;
use x509_parser::prelude::FromDer;

use crate::auth::UserInfo;
use crate::meta::{self, Endpoint};
use crate::resource::ResourceInfo;
use crate::validation::FieldError;
use crate::validation::format::{is_dns1123_label, is_dns1123_subdomain};

const GROUP: &str = "certificates.k8s.io";
const APPROVED: &str = "Approved";
const DENIED: &str = "Denied";
const FAILED: &str = "Failed";
/// The signer name v1 refuses (it exists for v1beta1 requests only).
const LEGACY_SIGNER: &str = "kubernetes.io/legacy-unknown";
/// The shortest certificate lifetime a request may ask for.
const MIN_EXPIRATION_SECONDS: i64 = 600;
/// Longest signer name path: a subdomain, a `.`, a label and another separator, as upstream bounds it.
const MAX_SIGNER_PATH: usize = 253 + 253 + 63 + 2;

/// Every key usage a request may name (upstream's list, in its order for the `NotSupported` message).
const USAGES: &[&str] = &[
    "any",
    "cert sign",
    "client auth",
    "code signing",
    "content commitment",
    "crl sign",
    "data encipherment",
    "decipher only",
    "digital signature",
    "email protection",
    "encipher only",
    "ipsec end system",
    "ipsec tunnel",
    "ipsec user",
    "key agreement",
    "key encipherment",
    "microsoft sgc",
    "netscape sgc",
    "ocsp signing",
    "s/mime",
    "server auth",
    "signing",
    "timestamping",
];

/// Whether `info` is the CertificateSigningRequest resource.
pub fn serves(info: &ResourceInfo) -> bool {
    !info.custom && info.group == GROUP && info.plural == "certificatesigningrequests"
}

/// A new request records who asked for it, whatever the body said (upstream's `PrepareForCreate`).
pub(crate) fn prepare_create(obj: &mut Value, user: Option<&UserInfo>) {
    let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    for key in ["username", "uid", "groups", "extra"] {
        spec.remove(key);
    }
    if let Some(user) = user {
        // Upstream's PrepareForCreate records the whole requester (`uid` and `extra` only when set).
        spec.insert("username".into(), json!(user.username));
        if !user.uid.is_empty() {
            spec.insert("uid".into(), json!(user.uid));
        }
        if !user.groups.is_empty() {
            spec.insert("groups".into(), json!(user.groups));
        }
        if !user.extra.is_empty() {
            spec.insert("extra".into(), json!(user.extra));
        }
    }
    default_conditions(obj);
}

/// Narrows an update to what its endpoint may change (upstream's three update strategies): the main endpoint
/// changes metadata only (the generic merge already kept the stored status), `status` everything in status but
/// the Approved and Denied conditions, `approval` only the conditions. Condition times are filled in.
pub(crate) fn prepare_update(old: &Value, new: &mut Value, ep: Endpoint) {
    if let Some(spec) = old.get("spec") {
        new["spec"] = spec.clone();
    }
    default_conditions(new);
    match ep {
        Endpoint::Status => {
            let mut kept = conditions(new)
                .into_iter()
                .filter(|c| !matches!(condition_type(c), APPROVED | DENIED))
                .collect::<Vec<_>>();
            kept.extend(
                conditions(old)
                    .into_iter()
                    .filter(|c| matches!(condition_type(c), APPROVED | DENIED)),
            );
            set_conditions(new, kept);
        }
        Endpoint::Approval => {
            let wanted = conditions(new);
            new["status"] = old.get("status").cloned().unwrap_or_else(|| json!({}));
            set_conditions(new, wanted);
        }
        Endpoint::Main | Endpoint::Finalize => {}
    }
    stamp_conditions(old, new);
}

/// v1 defaulting: a condition without a status is `True`.
fn default_conditions(obj: &mut Value) {
    let Some(list) = obj
        .pointer_mut("/status/conditions")
        .and_then(Value::as_array_mut)
    else {
        return;
    };
    for c in list.iter_mut().filter_map(Value::as_object_mut) {
        if c.get("status")
            .and_then(Value::as_str)
            .unwrap_or("")
            .is_empty()
        {
            c.insert("status".into(), json!("True"));
        }
    }
}

fn conditions(obj: &Value) -> Vec<Value> {
    obj.pointer("/status/conditions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

fn set_conditions(obj: &mut Value, list: Vec<Value>) {
    if !obj.get("status").is_some_and(Value::is_object) {
        obj["status"] = json!({});
    }
    if let Some(status) = obj.get_mut("status").and_then(Value::as_object_mut) {
        if list.is_empty() {
            status.remove("conditions");
        } else {
            status.insert("conditions".into(), Value::Array(list));
        }
    }
}

fn condition_type(c: &Value) -> &str {
    c.get("type").and_then(Value::as_str).unwrap_or("")
}

fn condition_status(c: &Value) -> &str {
    c.get("status").and_then(Value::as_str).unwrap_or("")
}

fn is_set(c: &Map<String, Value>, key: &str) -> bool {
    c.get(key)
        .and_then(Value::as_str)
        .is_some_and(|s| !s.is_empty())
}

/// A condition's update time defaults to now; its transition time to the old condition's of the same type and
/// status (it did not transition), or now.
fn stamp_conditions(old: &Value, new: &mut Value) {
    let now = meta::now();
    let before = conditions(old);
    let Some(list) = new
        .pointer_mut("/status/conditions")
        .and_then(Value::as_array_mut)
    else {
        return;
    };
    for c in list.iter_mut().filter_map(Value::as_object_mut) {
        if !is_set(c, "lastUpdateTime") {
            c.insert("lastUpdateTime".into(), json!(now));
        }
        if !is_set(c, "lastTransitionTime") {
            let kind = c.get("type").and_then(Value::as_str).unwrap_or("");
            let status = c.get("status").and_then(Value::as_str).unwrap_or("");
            let kept = before
                .iter()
                .find(|o| condition_type(o) == kind && condition_status(o) == status)
                .and_then(|o| o.get("lastTransitionTime"))
                .filter(|t| t.as_str().is_some_and(|t| !t.is_empty()))
                .cloned();
            c.insert(
                "lastTransitionTime".into(),
                kept.unwrap_or_else(|| json!(now)),
            );
        }
    }
}

/// The bytes of a `[]byte` field (base64 in JSON); `None` when absent or empty.
fn bytes_at(obj: &Value, pointer: &str) -> Option<Vec<u8>> {
    use base64::Engine;
    let text = obj.pointer(pointer).and_then(Value::as_str)?;
    base64::engine::general_purpose::STANDARD
        .decode(text)
        .ok()
        .filter(|b| !b.is_empty())
}

/// Why `pem` is not a certificate request with a valid signature (upstream's `ParseCSR` and `CheckSignature`).
fn check_request(pem: Option<&[u8]>) -> Result<(), String> {
    const NOT_A_REQUEST: &str = "PEM block type must be CERTIFICATE REQUEST";
    let block = pem
        .and_then(|p| Pem::iter_from_buffer(p).next())
        .and_then(Result::ok)
        .filter(|b| b.label == "CERTIFICATE REQUEST")
        .ok_or_else(|| NOT_A_REQUEST.to_string())?;
    let (_, request) =
        x509_parser::certification_request::X509CertificationRequest::from_der(&block.contents)
            .map_err(|e| format!("x509: malformed certificate request: {e}"))?;
    request
        .verify_signature()
        .map_err(|e| format!("x509: invalid certificate request signature: {e}"))
}

/// Why `pem` is not a list of certificates (upstream's check of `status.certificate`).
fn check_certificate(pem: &[u8]) -> Result<(), String> {
    let mut blocks = 0;
    for block in Pem::iter_from_buffer(pem) {
        let block = block.map_err(|e| format!("invalid PEM block: {e}"))?;
        if block.label != "CERTIFICATE" {
            return Err(format!(
                "only CERTIFICATE PEM blocks are allowed, found {:?}",
                block.label
            ));
        }
        x509_parser::parse_x509_certificate(&block.contents)
            .map_err(|e| format!("x509: malformed certificate: {e}"))?;
        blocks += 1;
    }
    if blocks == 0 {
        return Err("must contain at least one CERTIFICATE PEM block".into());
    }
    Ok(())
}

/// Upstream's `ValidateSignerName`: `<domain>/<path>`, the domain of two or more DNS labels, the path a subdomain.
fn validate_signer(name: &str, errors: &mut Vec<FieldError>) {
    const FIELD: &str = "spec.signerName";
    if name.is_empty() {
        errors.push(FieldError::required(FIELD, ""));
        return;
    }
    let Some((domain, path)) = name.split_once('/').filter(|(_, p)| !p.contains('/')) else {
        errors.push(FieldError::invalid(
            FIELD,
            name,
            "must be a fully qualified domain and path of the form 'example.com/signer-name'",
        ));
        return;
    };
    if domain.len() > 253 {
        errors.push(FieldError::too_long(FIELD, 253));
    }
    let labels: Vec<&str> = domain.split('.').collect();
    if let Some((label, problems)) = labels
        .iter()
        .map(|l| (l, is_dns1123_label(l)))
        .find(|(_, p)| !p.is_empty())
    {
        for p in problems {
            errors.push(FieldError::invalid(
                FIELD,
                domain,
                format!("validating label {label:?}: {p}"),
            ));
        }
    }
    if labels.len() < 2 {
        errors.push(FieldError::invalid(
            FIELD,
            domain,
            "should be a domain with at least two segments separated by dots",
        ));
    }
    for p in is_dns1123_subdomain(path) {
        errors.push(FieldError::invalid(
            FIELD,
            path,
            format!("validating label {path:?}: {p}"),
        ));
    }
    if path.len() > MAX_SIGNER_PATH {
        errors.push(FieldError::too_long(FIELD, MAX_SIGNER_PATH));
    }
}

fn validate_spec(obj: &Value, errors: &mut Vec<FieldError>) {
    let request = obj.pointer("/spec/request").cloned().unwrap_or(Value::Null);
    if let Err(message) = check_request(bytes_at(obj, "/spec/request").as_deref()) {
        errors.push(FieldError::invalid("spec.request", request, message));
    }
    let usages: Vec<&str> = obj
        .pointer("/spec/usages")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|u| u.as_str().unwrap_or(""))
        .collect();
    if usages.is_empty() {
        errors.push(FieldError::required("spec.usages", ""));
    }
    for (i, usage) in usages.iter().enumerate() {
        if !USAGES.contains(usage) {
            errors.push(FieldError::not_supported(
                format!("spec.usages[{i}]"),
                *usage,
                USAGES,
            ));
        }
    }
    for (i, usage) in usages.iter().enumerate() {
        if usages[..i].contains(usage) {
            errors.push(FieldError::duplicate(format!("spec.usages[{i}]"), *usage));
        }
    }
    let signer = obj
        .pointer("/spec/signerName")
        .and_then(Value::as_str)
        .unwrap_or("");
    if signer == LEGACY_SIGNER {
        errors.push(FieldError::invalid(
            "spec.signerName",
            signer,
            "the legacy signerName is not allowed via this API version",
        ));
    } else {
        validate_signer(signer, errors);
    }
    if let Some(seconds) = obj
        .pointer("/spec/expirationSeconds")
        .and_then(Value::as_i64)
        .filter(|s| *s < MIN_EXPIRATION_SECONDS)
    {
        errors.push(FieldError::invalid(
            "spec.expirationSeconds",
            seconds,
            "may not specify a duration less than 600 seconds (10 minutes)",
        ));
    }
}

fn validate_conditions(obj: &Value, errors: &mut Vec<FieldError>) {
    let list = conditions(obj);
    let mut seen: Vec<&str> = Vec::new();
    let (mut approved, mut denied) = (false, false);
    for (i, c) in list.iter().enumerate() {
        let kind = condition_type(c);
        let status = condition_status(c);
        let at = |field: &str| format!("status.conditions[{i}].{field}");
        if kind.is_empty() {
            errors.push(FieldError::required(at("type"), ""));
        }
        if !matches!(status, "True" | "False" | "Unknown") {
            errors.push(FieldError::not_supported(
                at("status"),
                status,
                &["False", "True", "Unknown"],
            ));
        }
        if matches!(kind, APPROVED | DENIED) {
            approved |= kind == APPROVED;
            denied |= kind == DENIED;
            if status != "True" {
                errors.push(FieldError::not_supported(at("status"), status, &["True"]));
            }
        }
        if seen.contains(&kind) {
            errors.push(FieldError::duplicate(at("type"), kind));
        }
        seen.push(kind);
    }
    if approved && denied {
        // kube-apiserver words this check in its declarative validation's terms.
        errors.push(FieldError::invalid(
            "status.conditions",
            r#"{conditions[{"type": "Approved"}], conditions[{"type": "Denied"}]}"#,
            r#"must specify at most one of: `conditions[{"type": "Approved"}]`, `conditions[{"type": "Denied"}]`"#,
        ));
    }
}

/// Validates a request about to be stored (`old` on updates), beyond ObjectMeta.
pub(crate) fn validate(obj: &Value, old: Option<&Value>) -> Vec<FieldError> {
    let mut errors = Vec::new();
    // The spec never changes after create (the update strategies restore it), so only a create checks it.
    if old.is_none() {
        validate_spec(obj, &mut errors);
    }
    validate_conditions(obj, &mut errors);
    if let Some(old) = old {
        for kind in [APPROVED, DENIED, FAILED] {
            let count = |o: &Value| {
                conditions(o)
                    .iter()
                    .filter(|c| condition_type(c) == kind)
                    .count()
            };
            if count(obj) < count(old) {
                errors.push(FieldError::forbidden(
                    "status.conditions",
                    format!("updates may not remove a condition of type {kind:?}"),
                ));
            }
        }
    }
    let certificate = bytes_at(obj, "/status/certificate");
    let old_certificate = old.and_then(|o| bytes_at(o, "/status/certificate"));
    // A certificate stored before it was checked may stay as it is (upstream's allowArbitraryCertificate).
    let arbitrary = old_certificate
        .as_deref()
        .is_some_and(|c| check_certificate(c).is_err());
    if let Some(pem) = certificate.as_deref()
        && !arbitrary
        && let Err(message) = check_certificate(pem)
    {
        errors.push(FieldError::invalid(
            "status.certificate",
            "<certificate data>",
            message,
        ));
    }
    if let Some(before) = old_certificate
        && certificate.as_deref() != Some(before.as_slice())
    {
        errors.push(FieldError::forbidden(
            "status.certificate",
            "updates may not modify existing certificate content",
        ));
    }
    errors
}

/// The Condition column of `kubectl get csr`: Denied, Approved or Pending, then `,Failed` and `,Issued`.
pub(crate) fn condition_summary(obj: &Value) -> String {
    let list = conditions(obj);
    let has = |kind: &str| list.iter().any(|c| condition_type(c) == kind);
    let mut out = if has(DENIED) {
        DENIED.to_string()
    } else if has(APPROVED) {
        APPROVED.to_string()
    } else {
        "Pending".to_string()
    };
    if has(FAILED) {
        out.push_str(",Failed");
    }
    if bytes_at(obj, "/status/certificate").is_some() {
        out.push_str(",Issued");
    }
    out
}

#[cfg(test)]
mod tests;
