//! Completeness: every entry's parts agree with the catalogue and with the types they name, and each part does
//! what the entry claims (a model decodes the kind, a protobuf message reads it, a printer prints it). (That
//! discovery lists every served resource, and that protobuf bodies of kinds without a message are refused, is
//! the server's to check.)

use super::*;
use crate::catalog::Catalog;
use crate::kind_info::KindInfo;
use crate::table::{IncludeObject, TableOptions};
use k8s_pb::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use prost::Message;
use serde_json::{Value, json};

fn api_version(r: &Resource) -> String {
    if r.group.is_empty() {
        r.version.to_string()
    } else {
        format!("{}/{}", r.group, r.version)
    }
}

fn name(b: &Builtin) -> String {
    format!("{} {}", api_version(&b.resource), b.resource.kind)
}

/// The smallest object of an entry's kind: `apiVersion`, `kind` and metadata.
fn minimal(b: &Builtin) -> Value {
    let mut metadata = json!({"name": "probe", "creationTimestamp": "2026-01-01T00:00:00Z"});
    if b.resource.namespaced {
        metadata["namespace"] = json!("default");
    }
    json!({"apiVersion": api_version(&b.resource), "kind": b.resource.kind, "metadata": metadata})
}

#[test]
fn every_entry_is_served_as_its_catalogue_part_says() {
    let catalog = Catalog::with_builtins();
    let served: Vec<_> = catalog.all().into_iter().filter(|i| !i.custom).collect();
    assert_eq!(
        served.len(),
        BUILTINS.len(),
        "one served resource per entry"
    );
    for b in BUILTINS.iter() {
        let r = &b.resource;
        let info = catalog
            .get(r.group, r.version, r.plural)
            .unwrap_or_else(|| panic!("{} is not served", name(b)));
        assert_eq!(info.kind, r.kind, "{}", name(b));
        assert_eq!(info.namespaced, r.namespaced, "{}", name(b));
        assert_eq!(info.short_names, r.short, "{}", name(b));
        assert_eq!((info.status, info.scale.is_some()), (r.status, r.scale));
        assert_eq!(info.generation, r.generation, "{}", name(b));
        assert_eq!(info.categories.contains(&"all".to_string()), r.all);
        assert!(
            find(r.group, &info.storage_version, r.kind).is_some(),
            "{} is stored in a version that is not served",
            name(b)
        );
        assert!(
            std::ptr::eq(find(r.group, r.version, r.kind).unwrap_or(b), b),
            "{} has two entries",
            name(b)
        );
    }
}

#[test]
fn versions_of_a_kind_agree_on_the_parts_looked_up_by_kind() {
    for b in BUILTINS.iter() {
        let first = find_kind(b.resource.group, b.resource.kind).expect("its own entry at least");
        assert_eq!(first.merge, b.merge, "{}: merge shape", name(b));
        assert_eq!(first.printer, b.printer, "{}: printer", name(b));
    }
}

#[test]
fn every_typed_model_is_the_kinds_type_and_decodes_it() {
    for b in BUILTINS.iter() {
        let r = &b.resource;
        let mut obj = minimal(b);
        obj["bogusField"] = json!(1);
        let unknown = crate::typed::decode(b.typed, r.version, r.kind, &mut obj)
            .unwrap_or_else(|e| panic!("{}: {e}", name(b)));
        match b.typed {
            Typed::Model(m) => {
                assert_eq!(
                    (m.api_version, m.kind, m.plural, m.namespaced),
                    (api_version(r).as_str(), r.kind, r.plural, r.namespaced),
                    "{}: the model is another resource's type",
                    name(b)
                );
                assert_eq!(
                    unknown,
                    ["bogusField"],
                    "{}: the model was not applied",
                    name(b)
                );
                assert_eq!(obj["metadata"]["name"], "probe", "{}", name(b));
            }
            Typed::None => {
                assert!(unknown.is_empty(), "{}: decoded without a model", name(b));
                assert_eq!(obj["bogusField"], 1, "{}", name(b));
            }
        }
    }
}

/// A message as client-go encodes it, holding only `metadata` (field 1 of every k8s.io/api object message).
fn protobuf_message(b: &Builtin) -> Vec<u8> {
    let meta = ObjectMeta {
        name: Some("probe".into()),
        namespace: b.resource.namespaced.then(|| "default".to_string()),
        ..ObjectMeta::default()
    }
    .encode_to_vec();
    let mut raw = vec![0x0a];
    prost::encoding::encode_varint(meta.len() as u64, &mut raw);
    raw.extend(meta);
    raw
}

#[test]
fn every_protobuf_message_is_the_kinds_and_reads_it() {
    for b in BUILTINS.iter() {
        let r = &b.resource;
        let Protobuf::Message(m) = b.protobuf else {
            continue;
        };
        assert_eq!(
            (m.api_version, m.kind),
            (api_version(r).as_str(), r.kind),
            "{}: the message is another resource's",
            name(b)
        );
        let mut obj =
            (m.decode)(&protobuf_message(b)).unwrap_or_else(|e| panic!("{}: {e}", name(b)));
        assert_eq!(obj["metadata"]["name"], "probe", "{}", name(b));
        obj["apiVersion"] = json!(api_version(r));
        obj["kind"] = json!(r.kind);
        let unknown = crate::typed::decode(b.typed, r.version, r.kind, &mut obj)
            .unwrap_or_else(|e| panic!("{}: protobuf JSON does not decode: {e}", name(b)));
        assert!(
            unknown.is_empty(),
            "{}: protobuf JSON has unknown {unknown:?}",
            name(b)
        );
    }
}

#[test]
fn every_printer_renders_the_kind() {
    let opts = TableOptions {
        api_version: "meta.k8s.io/v1",
        include_object: IncludeObject::None,
        with_columns: true,
        now: 1_767_225_600,
    };
    let columns = |kind: &KindInfo<'_>, obj: Value| {
        let table = crate::table::table(kind, &[obj], json!({}), &opts);
        let cells = table["rows"][0]["cells"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        (table["columnDefinitions"].clone(), cells)
    };
    // A kind the table does not know gets the generic printer.
    let (generic, _) = columns(
        &KindInfo::builtin("example.io", "v1", "Probe", true),
        json!({}),
    );
    for b in BUILTINS.iter() {
        let r = &b.resource;
        let kind = KindInfo::builtin(r.group, r.version, r.kind, r.namespaced);
        let (definitions, cells) = columns(&kind, minimal(b));
        let definitions = definitions.as_array().cloned().unwrap_or_default();
        assert_eq!(
            definitions.len(),
            cells.len(),
            "{}: one cell per column",
            name(b)
        );
        assert!(
            cells.contains(&json!("probe")),
            "{}: the name is printed",
            name(b)
        );
        assert_eq!(
            Value::Array(definitions) == generic,
            b.printer == Printer::Default,
            "{}: the columns are not the entry's printer's",
            name(b)
        );
    }
}

/// What a root shape says merges: a list under the root (dotted path), two elements that a merge keeps both of
/// and a replace would not, and the part of the path the kind's type must declare for the shape to fit it.
fn merge_probe(shape: MergeShape) -> (&'static str, [Value; 2], &'static str) {
    let named = || [json!({"name": "a"}), json!({"name": "b"})];
    match shape {
        MergeShape::Object => ("metadata.finalizers", [json!("a"), json!("b")], "metadata"),
        MergeShape::Pod => ("spec.containers", named(), "spec.containers"),
        MergeShape::Workload | MergeShape::Job => (
            "spec.template.spec.containers",
            named(),
            "spec.template.spec.containers",
        ),
        MergeShape::CronJob => (
            "spec.jobTemplate.spec.template.spec.containers",
            named(),
            "spec.jobTemplate.spec.template.spec.containers",
        ),
        MergeShape::PodTemplate => (
            "template.spec.containers",
            named(),
            "template.spec.containers",
        ),
        MergeShape::Service => (
            "spec.ports",
            [json!({"port": 1}), json!({"port": 2})],
            "spec.ports",
        ),
        MergeShape::ServiceAccount => ("secrets", named(), "secrets"),
        MergeShape::Node => ("spec.podCIDRs", [json!("a"), json!("b")], "spec.podCIDRs"),
        // Some kinds of this shape have no conditions in their status (PersistentVolume); their type need only
        // have a status.
        MergeShape::ConditionsOwner => (
            "status.conditions",
            [condition("a"), condition("b")],
            "status",
        ),
        MergeShape::WebhookConfiguration => ("webhooks", named(), "webhooks"),
        inner => panic!("{inner:?} is not the shape of an object's root"),
    }
}

/// A status condition with every field a condition type may require.
fn condition(ty: &str) -> Value {
    json!({"type": ty, "status": "True", "lastTransitionTime": "2026-01-01T00:00:00Z", "reason": "R", "message": ""})
}

/// `{"a": {"b": value}}` for the path `a.b`.
fn nested(path: &str, value: Value) -> Value {
    path.rsplit('.')
        .fold(value, |inner, key| json!({ key: inner }))
}

#[test]
fn every_merge_shape_merges_its_lists_and_fits_the_kind() {
    for b in BUILTINS.iter() {
        let r = &b.resource;
        let (path, [first, second], declared) = merge_probe(b.merge);
        let live = crate::patch::merge::apply(&minimal(b), &nested(path, json!([first])))
            .unwrap_or_else(|e| panic!("{}: {e}", name(b)));
        let kind = KindInfo::builtin(r.group, r.version, r.kind, r.namespaced);
        let body = serde_json::to_vec(&nested(path, json!([second]))).expect("JSON");
        let mut patched =
            crate::patch::apply_patch(crate::patch::PatchType::Strategic, &live, &body, &kind)
                .unwrap_or_else(|e| panic!("{}: {e}", name(b)));
        let pointer = format!("/{}", path.replace('.', "/"));
        let merged = patched.pointer(&pointer).and_then(Value::as_array);
        assert_eq!(merged.map(Vec::len), Some(2), "{}: {path} merges", name(b));
        // The kind's stored type declares what the shape merges (a view is patched in its stored shape too).
        let stored = find(r.group, r.stored_as.unwrap_or(r.version), r.kind).expect("stored entry");
        if let Typed::Model(_) = stored.typed {
            patched["apiVersion"] = json!(api_version(&stored.resource));
            let unknown =
                crate::typed::decode(stored.typed, stored.resource.version, r.kind, &mut patched)
                    .unwrap_or_else(|e| panic!("{}: {e}", name(b)));
            assert!(
                !unknown.iter().any(|u| declared.starts_with(u.as_str())),
                "{}: the type has no {declared} ({unknown:?})",
                name(b)
            );
        }
    }
}

#[test]
fn every_default_and_zero_status_is_idempotent_and_declared_by_the_type() {
    for b in BUILTINS.iter() {
        let r = &b.resource;
        let kind = KindInfo::builtin(r.group, r.version, r.kind, r.namespaced);
        let write = |obj: &mut Value| {
            let mut allocations = crate::defaults::Allocations::default();
            crate::defaults::apply(obj, defaults(&kind), &mut allocations);
            crate::defaults::fill_status(obj, zero_status(&kind));
        };
        let mut obj = minimal(b);
        write(&mut obj);
        let mut again = obj.clone();
        write(&mut again);
        assert_eq!(again, obj, "{}: defaulting is idempotent", name(b));
        match b.zero_status {
            ZeroStatus::Of(zero, _) => {
                assert!(obj["status"].is_object(), "{}: no zero status", name(b));
                assert!(
                    zero().is_object(),
                    "{}: a zero status is an object",
                    name(b)
                );
            }
            ZeroStatus::None => assert!(obj.get("status").is_none(), "{}", name(b)),
        }
        if let Defaults::None = b.defaults {
            let mut bare = minimal(b);
            crate::defaults::apply(&mut bare, defaults(&kind), &mut Default::default());
            assert_eq!(bare, minimal(b), "{}: defaulted without defaults", name(b));
        }
        let stored = find(r.group, r.stored_as.unwrap_or(r.version), r.kind).expect("stored entry");
        if let Typed::Model(_) = stored.typed {
            obj["apiVersion"] = json!(api_version(&stored.resource));
            let unknown =
                crate::typed::decode(stored.typed, stored.resource.version, r.kind, &mut obj)
                    .unwrap_or_else(|e| panic!("{}: {e}", name(b)));
            assert!(
                unknown.is_empty(),
                "{}: the type lacks {unknown:?}",
                name(b)
            );
        }
    }
}

#[test]
fn every_name_rule_is_the_kinds_and_takes_a_plain_name() {
    for b in BUILTINS.iter() {
        let r = &b.resource;
        let kind = KindInfo::builtin(r.group, r.version, r.kind, r.namespaced);
        assert_eq!(name_rule(&kind), b.names, "{}", name(b));
        assert!(b.names.check("probe", false).is_empty(), "{}", name(b));
    }
}
