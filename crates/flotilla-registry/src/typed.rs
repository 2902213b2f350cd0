//! Decoding of built-in kinds against their Go types, as the real server decodes every request body: values of
//! the wrong type are a 400, and fields the type does not declare are unknown (dropped, reported by
//! `fieldValidation`). The k8s-openapi types of the served Kubernetes version stand in for the Go types: an
//! object is decoded into its type and encoded back, and whatever the round trip lost was not declared.

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// Why a body does not decode into its kind's type.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{kind} in version \"{version}\" cannot be handled as a {kind}: {message}")]
pub(crate) struct DecodeError {
    /// Kind of the object.
    pub kind: String,
    /// Version of the object.
    pub version: String,
    /// The decoder's message (field and expected type).
    pub message: String,
}

fn round_trip<T: DeserializeOwned + Serialize>(obj: &Value) -> Result<Value, String> {
    let typed: T = serde_json::from_value(obj.clone()).map_err(|e| e.to_string())?;
    serde_json::to_value(typed).map_err(|e| e.to_string())
}

type RoundTrip = fn(&Value) -> Result<Value, String>;

/// Whether request bodies are decoded against a Go type.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Typed {
    /// Through the k8s-openapi type standing in for the Go type ([`model`]).
    Model(Model),
    /// Not decoded: the body is kept as sent.
    None,
}

/// A built-in kind's typed model: the round trip through its k8s-openapi type, and what that type says of
/// itself, so the table's entry can be checked against it.
#[derive(Debug, Clone, Copy)]
#[cfg_attr(
    not(test),
    expect(
        dead_code,
        reason = "what the type says of itself is checked by `crate::kinds`' tests"
    )
)]
pub(crate) struct Model {
    /// Decodes into the type and encodes back.
    pub(crate) round_trip: RoundTrip,
    /// The type's `apiVersion`.
    pub(crate) api_version: &'static str,
    /// The type's kind.
    pub(crate) kind: &'static str,
    /// The type's plural (URL path segment).
    pub(crate) plural: &'static str,
    /// Whether the type is namespace-scoped.
    pub(crate) namespaced: bool,
}

/// Whether a k8s-openapi resource scope is the namespaced one.
pub(crate) trait Scope {
    /// `true` for namespaced resources.
    const NAMESPACED: bool;
}

impl Scope for k8s_openapi::NamespaceResourceScope {
    const NAMESPACED: bool = true;
}

impl Scope for k8s_openapi::ClusterResourceScope {
    const NAMESPACED: bool = false;
}

/// The typed model of a built-in: the round trip through `T`.
pub(crate) const fn model<T>() -> Typed
where
    T: k8s_openapi::Resource + DeserializeOwned + Serialize,
    T::Scope: Scope,
{
    view::<T>(round_trip::<T>)
}

/// The typed model of a built-in decoded through `T` by a round trip of its own (a view of another version).
const fn view<T>(round_trip: RoundTrip) -> Typed
where
    T: k8s_openapi::Resource,
    T::Scope: Scope,
{
    Typed::Model(Model {
        round_trip,
        api_version: T::API_VERSION,
        kind: T::KIND,
        plural: T::URL_PATH_SEGMENT,
        namespaced: <T::Scope as Scope>::NAMESPACED,
    })
}

/// The typed model of the `autoscaling/v1` view of HPAs (see [`hpa_v1`]).
pub(crate) const fn hpa_v1_model() -> Typed {
    view::<k8s_openapi::api::autoscaling::v1::HorizontalPodAutoscaler>(hpa_v1)
}

/// The `autoscaling/v1` view of HPAs: the object already carries its storage `apiVersion` (`v2`), which the
/// `v1` model refuses, so the round trip runs under the view's `apiVersion` and gives the stored one back.
fn hpa_v1(obj: &Value) -> Result<Value, String> {
    let mut view = obj.clone();
    if let Some(m) = view.as_object_mut() {
        m.insert("apiVersion".into(), "autoscaling/v1".into());
    }
    let mut out = round_trip::<k8s_openapi::api::autoscaling::v1::HorizontalPodAutoscaler>(&view)?;
    if let (Some(m), Some(av)) = (out.as_object_mut(), obj.get("apiVersion")) {
        m.insert("apiVersion".into(), av.clone());
    }
    Ok(out)
}

/// Paths (upstream's syntax: `spec.template.spec.containers[0].foo`) present in `sent` but lost in `decoded`
/// (by a round trip or by pruning). `null`s are not fields.
pub(crate) fn lost_paths(sent: &Value, decoded: &Value) -> Vec<String> {
    let mut out = Vec::new();
    lost(sent, decoded, "", &mut out);
    out
}

fn lost(sent: &Value, decoded: &Value, path: &str, out: &mut Vec<String>) {
    match (sent, decoded) {
        (Value::Object(s), Value::Object(d)) => {
            for (k, v) in s {
                if v.is_null() {
                    continue;
                }
                let p = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                match d.get(k) {
                    None => out.push(p),
                    Some(dv) => lost(v, dv, &p, out),
                }
            }
        }
        (Value::Array(s), Value::Array(d)) => {
            for (i, (sv, dv)) in s.iter().zip(d).enumerate() {
                lost(sv, dv, &format!("{path}[{i}]"), out);
            }
        }
        _ => {}
    }
}

/// Removes the field at an upstream-syntax path (`a.b[2].c`).
fn remove_path(obj: &mut Value, path: &str) {
    let mut segments: Vec<(String, Option<usize>)> = Vec::new();
    for part in path.split('.') {
        let (name, rest) = part.split_once('[').unwrap_or((part, ""));
        segments.push((name.to_string(), None));
        for idx in rest.split('[').filter(|s| !s.is_empty()) {
            if let Ok(i) = idx.trim_end_matches(']').parse() {
                segments.push((String::new(), Some(i)));
            }
        }
    }
    let Some((last, _)) = segments.pop() else {
        return;
    };
    let mut cur = obj;
    for (name, idx) in segments {
        let next = match idx {
            Some(i) => cur.get_mut(i),
            None => cur.get_mut(name.as_str()),
        };
        match next {
            Some(n) => cur = n,
            None => return,
        }
    }
    if let Some(m) = cur.as_object_mut() {
        m.remove(&last);
    }
}

/// Decodes a built-in object against its type (`typed`, the part its entry in `crate::kinds` names): removes
/// the fields the type does not declare and returns their paths. Kinds without a typed model (custom
/// resources) come back unchanged with no paths.
///
/// # Errors
/// A [`DecodeError`] when a value has the wrong type (a string where an integer belongs, invalid base64 in a
/// Secret, a malformed time), which the real server answers with 400.
pub(crate) fn decode(
    typed: Typed,
    version: &str,
    kind: &str,
    obj: &mut Value,
) -> Result<Vec<String>, DecodeError> {
    let Typed::Model(model) = typed else {
        return Ok(Vec::new());
    };
    let decoded = (model.round_trip)(obj).map_err(|message| DecodeError {
        kind: kind.to_string(),
        version: version.to_string(),
        message,
    })?;
    let unknown = lost_paths(obj, &decoded);
    for p in &unknown {
        remove_path(obj, p);
    }
    Ok(unknown)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Decodes as the write path does: with the model the kind's entry names.
    fn decode(
        group: &str,
        version: &str,
        kind: &str,
        obj: &mut Value,
    ) -> Result<Vec<String>, DecodeError> {
        let info = crate::kind_info::KindInfo::builtin(group, version, kind, true);
        super::decode(crate::kinds::typed(&info), version, kind, obj)
    }

    #[test]
    fn unknown_fields_are_found_and_removed() {
        let mut d = json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "bogus": 1, "labels": {}},
            "spec": {"replicas": 2, "selector": {"matchLabels": {"a": "b"}},
                "template": {"spec": {"containers": [{"name": "c", "image": "x", "colour": "red"}]}},
                "extra": {"x": 1}},
            "status": {}});
        let unknown = decode("apps", "v1", "Deployment", &mut d).expect("decodes");
        assert_eq!(
            unknown,
            [
                "metadata.bogus",
                "spec.extra",
                "spec.template.spec.containers[0].colour"
            ]
        );
        assert!(d["metadata"].get("bogus").is_none());
        assert!(d["spec"].get("extra").is_none());
        assert!(
            d["spec"]["template"]["spec"]["containers"][0]
                .get("colour")
                .is_none()
        );
        assert_eq!(d["metadata"]["labels"], json!({}), "empty maps are kept");
    }

    #[test]
    fn declared_fields_of_every_shape_survive() {
        let mut cm = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "c", "namespace": "d", "finalizers": [], "annotations": {"a": ""},
                "managedFields": [{"manager": "m", "operation": "Update", "fieldsType": "FieldsV1", "fieldsV1": {"f:data": {}}}]},
            "data": {"k": "v"}, "binaryData": {"b": "AAE="}, "immutable": false});
        assert_eq!(decode("", "v1", "ConfigMap", &mut cm), Ok(vec![]));
        let mut pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
            "spec": {"containers": [{"name": "c", "resources": {"limits": {"cpu": 1, "memory": "1Gi"}},
                "ports": [{"containerPort": 80}]}]}});
        assert_eq!(decode("", "v1", "Pod", &mut pod), Ok(vec![]));
    }

    #[test]
    fn wrong_types_are_decode_errors() {
        let mut d = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
            "spec": {"replicas": "two"}});
        let e = decode("apps", "v1", "Deployment", &mut d).expect_err("type error");
        assert!(
            e.to_string()
                .starts_with("Deployment in version \"v1\" cannot be handled as a Deployment: ")
        );
        let mut s = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "data": {"k": "!!"}});
        assert!(decode("", "v1", "Secret", &mut s).is_err());
    }

    #[test]
    fn custom_kinds_pass_through() {
        let mut o = json!({"spec": {"anything": 1}});
        assert_eq!(decode("example.io", "v1", "Widget", &mut o), Ok(vec![]));
        assert_eq!(o["spec"]["anything"], 1);
    }
}
