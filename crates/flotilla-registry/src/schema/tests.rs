use super::*;
use serde_json::json;

fn schema() -> Value {
    json!({"type": "object", "properties": {
        "metadata": {"type": "object"},
        "spec": {"type": "object", "required": ["size"], "properties": {
            "size": {"type": "integer", "minimum": 1, "maximum": 10, "default": 3},
            "mode": {"type": "string", "enum": ["fast", "safe"], "default": "safe"},
            "name": {"type": "string", "maxLength": 5, "minLength": 1, "pattern": "^[a-z]+$"},
            "port": {"x-kubernetes-int-or-string": true},
            "tags": {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set", "maxItems": 3},
            "items": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["id"],
                "items": {"type": "object", "properties": {"id": {"type": "string"}, "weight": {"type": "integer", "default": 1}}}},
            "labels": {"type": "object", "additionalProperties": {"type": "string"}},
            "template": {"type": "object", "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true},
            "raw": {"type": "object", "x-kubernetes-preserve-unknown-fields": true, "properties": {"known": {"type": "object", "properties": {"a": {"type": "string"}}}}},
            "nested": {"type": "object", "default": {}, "properties": {"inner": {"type": "string", "default": "x"}}},
            "opt": {"type": "string", "nullable": true},
            "when": {"type": "string", "format": "date-time"}}},
        "status": {"type": "object", "properties": {"ready": {"type": "boolean"}}}}})
}

#[test]
fn pruning_drops_unknown_fields_and_keeps_object_meta() {
    let mut obj = json!({"apiVersion": "x.io/v1", "kind": "Foo",
        "metadata": {"name": "f", "labels": {"a": "b"}, "bogus": 1},
        "spec": {"size": 2, "unknown": true, "labels": {"any": "thing"},
            "items": [{"id": "a", "extra": 1}],
            "template": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "junk": 1}, "spec": {"anything": [1]}},
            "raw": {"free": {"form": 1}, "known": {"a": "x", "b": "dropped"}},
            "port": {"weird": 1},
            "mode": null, "opt": null},
        "status": {"ready": true, "lastSeen": "now"},
        "topLevelJunk": 1});
    prune(&mut obj, &schema());
    assert_eq!(
        obj,
        json!({"apiVersion": "x.io/v1", "kind": "Foo",
        "metadata": {"name": "f", "labels": {"a": "b"}},
        "spec": {"size": 2, "labels": {"any": "thing"}, "items": [{"id": "a"}],
            "template": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"anything": [1]}},
            "raw": {"free": {"form": 1}, "known": {"a": "x"}},
            "port": {"weird": 1},
            "mode": null, "opt": null},
        "status": {"ready": true}})
    );
}

#[test]
fn defaults_fill_absent_and_non_nullable_null_fields() {
    let mut obj = json!({"spec": {"mode": null, "opt": null, "items": [{"id": "a"}, {"id": "b", "weight": 5}]}});
    apply_defaults(&mut obj, &schema());
    assert_eq!(obj["spec"]["size"], 3);
    assert_eq!(
        obj["spec"]["mode"], "safe",
        "null of a non-nullable field is defaulted"
    );
    assert_eq!(obj["spec"]["opt"], Value::Null, "nullable null stays");
    assert_eq!(
        obj["spec"]["items"],
        json!([{"id": "a", "weight": 1}, {"id": "b", "weight": 5}])
    );
    assert_eq!(
        obj["spec"]["nested"],
        json!({"inner": "x"}),
        "defaults inside defaults apply"
    );
    // Existing values win.
    let mut obj = json!({"spec": {"size": 7, "mode": "fast"}});
    apply_defaults(&mut obj, &schema());
    assert_eq!(
        (obj["spec"]["size"].clone(), obj["spec"]["mode"].clone()),
        (json!(7), json!("fast"))
    );
}

fn messages(obj: Value) -> Vec<String> {
    validate(&obj, &schema())
        .iter()
        .map(ToString::to_string)
        .collect()
}

#[test]
fn validation_messages_match_upstream() {
    assert!(
        messages(json!({"metadata": {"name": "anything goes here"}, "spec": {"size": 3}}))
            .is_empty()
    );
    let cases: Vec<(Value, Vec<&str>)> = vec![
        (json!({"spec": {}}), vec!["spec.size: Required value"]),
        (
            json!({"spec": {"size": "big"}}),
            vec![
                "spec.size: Invalid value: \"string\": spec.size in body must be of type integer: \"string\"",
            ],
        ),
        (
            json!({"spec": {"size": 0}}),
            vec![
                "spec.size: Invalid value: 0: spec.size in body should be greater than or equal to 1",
            ],
        ),
        (
            json!({"spec": {"size": 11}}),
            vec![
                "spec.size: Invalid value: 11: spec.size in body should be less than or equal to 10",
            ],
        ),
        (
            json!({"spec": {"size": 2, "mode": "slow"}}),
            vec!["spec.mode: Unsupported value: \"slow\": supported values: \"fast\", \"safe\""],
        ),
        (
            json!({"spec": {"size": 2, "name": "toolong"}}),
            vec!["spec.name: Too long: may not be more than 5 bytes"],
        ),
        (
            json!({"spec": {"size": 2, "name": "AB"}}),
            vec!["spec.name: Invalid value: \"AB\": spec.name in body should match '^[a-z]+$'"],
        ),
        (
            json!({"spec": {"size": 2, "name": ""}}),
            vec![
                "spec.name: Invalid value: \"\": spec.name in body should be at least 1 chars long",
                "spec.name: Invalid value: \"\": spec.name in body should match '^[a-z]+$'",
            ],
        ),
        (
            json!({"spec": {"size": 2, "port": true}}),
            vec![
                "spec.port: Invalid value: \"boolean\": spec.port in body must be of type integer,string: \"boolean\"",
            ],
        ),
        (
            json!({"spec": {"size": 2, "tags": ["a", "b", "a", "c"]}}),
            vec![
                "spec.tags: Too many: 4: must have at most 3 items",
                "spec.tags[2]: Duplicate value: \"a\"",
            ],
        ),
        (
            json!({"spec": {"size": 2, "items": [{"id": "a"}, {"id": "a"}]}}),
            vec!["spec.items[1]: Duplicate value: {\"id\":\"a\"}"],
        ),
        (
            json!({"spec": {"size": 2, "labels": {"a": 1}}}),
            vec![
                "spec.labels.a: Invalid value: \"integer\": spec.labels.a in body must be of type string: \"integer\"",
            ],
        ),
        (
            json!({"spec": {"size": 2, "when": "yesterday"}}),
            vec![
                "spec.when: Invalid value: \"yesterday\": spec.when in body must be of type date-time: \"yesterday\"",
            ],
        ),
        (
            json!({"spec": {"size": null}}),
            vec![
                "spec.size: Invalid value: \"null\": spec.size in body must be of type integer: \"null\"",
            ],
        ),
        (
            json!({"spec": {"size": 2, "opt": null}, "status": {"ready": "yes"}}),
            vec![
                "status.ready: Invalid value: \"string\": status.ready in body must be of type boolean: \"string\"",
            ],
        ),
    ];
    for (obj, want) in cases {
        assert_eq!(messages(obj.clone()), want, "{obj}");
    }
    let err = &validate(&json!({"spec": {"size": "x"}}), &schema())[0];
    assert_eq!(err.reason(), "FieldValueTypeInvalid");
}

#[test]
fn combinators_and_whole_pipeline() {
    let s = json!({"type": "object", "properties": {"spec": {"type": "object",
        "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
        "oneOf": [{"required": ["a"]}, {"required": ["b"]}]}}});
    let errs = |o: Value| validate(&o, &s).len();
    assert_eq!(errs(json!({"spec": {"a": "x"}})), 0);
    assert_eq!(errs(json!({"spec": {"a": "x", "b": "y"}})), 1);
    assert_eq!(errs(json!({"spec": {}})), 1);

    let version = json!({"name": "v1", "schema": {"openAPIV3Schema": schema()}});
    let foo = KindInfo::custom("x.io", "v1", "Foo", true, &version);
    let mut obj = json!({"apiVersion": "x.io/v1", "kind": "Foo", "metadata": {"name": "f"}, "spec": {"junk": 1}});
    assert!(process_write(&mut obj, &foo).is_empty());
    assert_eq!(
        obj["spec"],
        json!({"size": 3, "mode": "safe", "nested": {"inner": "x"}})
    );
    let mut stored = json!({"spec": {"size": 4}});
    process_read(&mut stored, &foo);
    assert_eq!(stored["spec"]["mode"], "safe");
    let mut builtin = json!({"spec": {"junk": 1}});
    assert!(
        process_write(
            &mut builtin,
            &KindInfo::builtin("apps", "v1", "Deployment", true)
        )
        .is_empty()
    );
    assert_eq!(
        builtin,
        json!({"spec": {"junk": 1}}),
        "built-ins are not pruned here"
    );
}
