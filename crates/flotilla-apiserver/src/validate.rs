//! Object validation on every write (spec §5.4, §5.5): names per kind, label keys and values, annotation
//! size, finalizer names and owner references, with the real server's wording from
//! `crate::validation::format`, turned into one 422 Status.

use serde_json::Value;

use crate::catalog::ResourceInfo;
use crate::meta;
use crate::status::{ApiError, ApiResult, Cause};
use crate::validation::format;

/// Largest total size of all annotations.
const MAX_ANNOTATIONS: usize = 256 * 1024;

fn invalid(field: &str, value: &str, problems: &[String]) -> Cause {
    Cause {
        reason: "FieldValueInvalid".into(),
        field: field.into(),
        message: format!(
            "Invalid value: {}: {}",
            format::go_quote(value),
            problems.join("; ")
        ),
    }
}

fn name_problems(info: &ResourceInfo, name: &str) -> Vec<String> {
    if info.custom {
        return format::is_dns1123_subdomain(name);
    }
    match (info.group.as_str(), info.plural.as_str()) {
        ("", "namespaces") => format::is_dns1123_label(name),
        ("", "services") => format::is_dns1035_label(name),
        ("rbac.authorization.k8s.io", _) => format::is_valid_path_segment_name(name),
        _ => format::is_dns1123_subdomain(name),
    }
}

/// Validates an object about to be stored (`old` is the stored object on updates).
pub fn object(info: &ResourceInfo, obj: &Value, old: Option<&Value>) -> ApiResult<()> {
    let name = meta::meta_str(obj, "name").unwrap_or("");
    let mut causes = Vec::new();
    if name.is_empty() {
        causes.push(Cause {
            reason: "FieldValueRequired".into(),
            field: "metadata.name".into(),
            message: "Required value: name or generateName is required".into(),
        });
    } else if old.is_none() {
        let p = name_problems(info, name);
        if !p.is_empty() {
            causes.push(invalid("metadata.name", name, &p));
        }
    }
    if let Some(labels) = obj.pointer("/metadata/labels").and_then(Value::as_object) {
        for (k, v) in labels {
            let p = format::is_qualified_name(k);
            if !p.is_empty() {
                causes.push(invalid("metadata.labels", k, &p));
            }
            let val = v.as_str().unwrap_or("");
            let p = format::is_valid_label_value(val);
            if !p.is_empty() || !v.is_string() {
                causes.push(invalid(&format!("metadata.labels.{k}"), val, &p));
            }
        }
    }
    if let Some(ann) = obj
        .pointer("/metadata/annotations")
        .and_then(Value::as_object)
    {
        let mut total = 0;
        for (k, v) in ann {
            total += k.len() + v.as_str().map_or(0, str::len);
            let p = format::is_qualified_name(&k.to_lowercase());
            if !p.is_empty() {
                causes.push(invalid("metadata.annotations", k, &p));
            }
        }
        if total > MAX_ANNOTATIONS {
            causes.push(Cause {
                reason: "FieldValueTooLong".into(),
                field: "metadata.annotations".into(),
                message: format!("Too long: may not be more than {MAX_ANNOTATIONS} bytes"),
            });
        }
    }
    for (i, f) in meta::finalizers(obj).iter().enumerate() {
        let p = format::is_qualified_name(f);
        if !p.is_empty() {
            causes.push(invalid(&format!("metadata.finalizers[{i}]"), f, &p));
        }
    }
    if let Some(refs) = obj
        .pointer("/metadata/ownerReferences")
        .and_then(Value::as_array)
    {
        let mut controllers = 0;
        for (i, r) in refs.iter().enumerate() {
            for field in ["apiVersion", "kind", "name", "uid"] {
                if r.get(field)
                    .and_then(Value::as_str)
                    .is_none_or(str::is_empty)
                {
                    causes.push(Cause {
                        reason: "FieldValueRequired".into(),
                        field: format!("metadata.ownerReferences[{i}].{field}"),
                        message: "Required value".into(),
                    });
                }
            }
            if r.get("controller").and_then(Value::as_bool) == Some(true) {
                controllers += 1;
            }
        }
        if controllers > 1 {
            causes.push(Cause {
                reason: "FieldValueInvalid".into(),
                field: "metadata.ownerReferences".into(),
                message: "Invalid value: only one reference can have Controller set to true".into(),
            });
        }
    }
    if causes.is_empty() {
        Ok(())
    } else {
        Err(ApiError::invalid(&info.kind, &info.group, name, causes))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::Catalog;
    use serde_json::json;

    #[test]
    fn bad_names_labels_and_owner_refs_are_422() {
        let c = Catalog::with_builtins();
        let cm = c.get("", "v1", "configmaps").expect("configmaps");
        assert!(object(&cm, &json!({"metadata": {"name": "ok.name"}}), None).is_ok());
        assert_eq!(
            object(&cm, &json!({"metadata": {"name": "Bad_Name"}}), None)
                .map_err(|e| e.code)
                .err(),
            Some(422)
        );
        let ns = c.get("", "v1", "namespaces").expect("namespaces");
        assert!(object(&ns, &json!({"metadata": {"name": "a.b"}}), None).is_err());
        let bad_label = json!({"metadata": {"name": "x", "labels": {"a": "has space"}}});
        assert!(object(&cm, &bad_label, None).is_err());
        let refs = json!({"metadata": {"name": "x", "ownerReferences": [{"apiVersion": "v1", "kind": "K", "name": "n"}]}});
        let e = object(&cm, &refs, None).expect_err("uid required");
        assert!(e.message.contains("ownerReferences[0].uid"));
        let rbac = c
            .get("rbac.authorization.k8s.io", "v1", "clusterroles")
            .expect("clusterroles");
        assert!(object(&rbac, &json!({"metadata": {"name": "system:admin"}}), None).is_ok());
    }
}
