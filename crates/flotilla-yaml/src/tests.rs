//! Reading as kubectl reads (go-yaml v2's YAML 1.1 resolution, then sigs.k8s.io/yaml's JSON step),
//! and the writer's output shape. The round trip through PyYAML is in `tests/pyyaml.rs`.

use serde_json::{Value, json};

use super::*;

fn value(scalar: &str) -> Value {
    let doc: Value =
        from_str(&format!("v: {scalar}\n")).unwrap_or_else(|e| panic!("{scalar}: {e}"));
    doc["v"].clone()
}

#[test]
fn plain_scalars_resolve_as_go_yaml_v2_does() {
    for spelling in [
        "y", "Y", "yes", "Yes", "YES", "on", "On", "ON", "true", "True", "TRUE",
    ] {
        assert_eq!(value(spelling), json!(true), "{spelling}");
    }
    for spelling in [
        "n", "N", "no", "No", "NO", "off", "Off", "OFF", "false", "False", "FALSE",
    ] {
        assert_eq!(value(spelling), json!(false), "{spelling}");
    }
    for spelling in ["~", "null", "Null", "NULL", ""] {
        assert_eq!(value(spelling), Value::Null, "{spelling:?}");
    }
    let numbers = [
        ("12", json!(12)),
        ("-3", json!(-3)),
        ("+1", json!(1)),
        ("017", json!(15)),
        ("0o17", json!(15)),
        ("0x1F", json!(31)),
        ("0b101", json!(5)),
        ("1_000", json!(1000)),
        ("1.5", json!(1.5)),
        (".5", json!(0.5)),
        // A whole float is an integer after Go's JSON round trip.
        ("1e3", json!(1000)),
        ("1.0", json!(1)),
    ];
    for (spelling, expected) in numbers {
        assert_eq!(value(spelling), expected, "{spelling}");
    }
    // go-yaml v2 leaves base 60 unresolved and gives timestamps to untyped targets as their text.
    for spelling in [
        "1:20",
        "2026-11-20",
        "2026-11-20T10:00:00Z",
        "y2",
        "yess",
        "0x",
        "1.2.3",
    ] {
        assert_eq!(value(spelling), json!(spelling), "{spelling}");
    }
    // Quoting always makes a string.
    assert_eq!(value("'yes'"), json!("yes"));
    assert_eq!(value("\"017\""), json!("017"));
}

#[test]
fn non_finite_floats_are_refused_as_kubectl_refuses_them() {
    for spelling in [".inf", "-.inf", ".nan", ".NaN"] {
        assert!(
            matches!(
                from_str::<Value>(&format!("v: {spelling}\n")),
                Err(Error::Parse(_))
            ),
            "{spelling}"
        );
    }
}

#[test]
fn keys_that_resolve_to_other_types_become_their_json_text() {
    let doc: Value =
        from_str("yes: a\noff: b\n0x1F: c\n017: d\n1_000: e\n1.5: f\nplain: g\n'on': h\n")
            .expect("keys parse");
    assert_eq!(
        doc,
        json!({"true": "a", "false": "b", "31": "c", "15": "d", "1000": "e", "1.5": "f", "plain": "g", "on": "h"})
    );
    assert!(matches!(from_str::<Value>("~: a\n"), Err(Error::Parse(_))));
}

#[test]
fn a_repeated_key_keeps_its_last_value() {
    let doc: Value = from_str("a: 1\nb: 2\na: 3\n").expect("parses");
    assert_eq!(doc, json!({"a": 3, "b": 2}));
}

#[test]
fn an_unquoted_yes_label_does_not_fit_a_string_field() {
    #[derive(serde::Deserialize, Debug)]
    #[allow(dead_code)]
    struct Meta {
        labels: std::collections::BTreeMap<String, String>,
    }
    #[derive(serde::Deserialize, Debug)]
    #[allow(dead_code)]
    struct Object {
        metadata: Meta,
    }
    let err =
        from_str::<Object>("metadata:\n  labels:\n    enabled: yes\n").expect_err("a boolean");
    assert!(
        matches!(&err, Error::Decode { path, .. } if path == "metadata.labels.enabled"),
        "{err:?}"
    );
    let ok: Object = from_str("metadata:\n  labels:\n    enabled: 'yes'\n").expect("a string");
    assert_eq!(ok.metadata.labels["enabled"], "yes");
}

#[test]
fn streams_skip_empty_documents_and_keep_order() {
    let docs: Vec<Value> =
        from_str_multiple("---\na: 1\n---\n# a comment only\n---\nb: yes\n...\n---\nc: [1, 2]\n")
            .expect("a stream");
    assert_eq!(
        docs,
        vec![json!({"a": 1}), json!({"b": true}), json!({"c": [1, 2]})]
    );
    let written = to_string_multiple(&docs).expect("writes");
    assert_eq!(written, "a: 1\n---\nb: true\n---\nc:\n- 1\n- 2\n");
    assert_eq!(
        from_str_multiple::<Value>(&written).expect("reads back"),
        docs
    );
}

#[test]
fn one_document_is_refused_where_a_stream_is_given() {
    assert!(from_str::<Value>("a: 1\n---\nb: 2\n").is_err());
}

#[test]
fn anchors_and_merge_keys_expand() {
    let doc: Value = from_str("base: &b {x: 1}\nuse:\n  <<: *b\n  z: 2\n").expect("parses");
    assert_eq!(doc["use"], json!({"x": 1, "z": 2}));
}

#[test]
fn written_strings_that_look_like_other_types_are_quoted() {
    let written =
        to_string(&json!({"a": "yes", "b": "017", "c": "plain", "y": 1})).expect("writes");
    assert_eq!(written, "a: \"yes\"\nb: \"017\"\nc: plain\n\"y\": 1\n");
}

#[test]
fn errors_name_what_failed() {
    let err = from_str::<Value>("a: [1\n").expect_err("unclosed");
    assert_eq!(err.to_string(), "failed to parse YAML");
    let source = std::error::Error::source(&err)
        .expect("a source")
        .to_string();
    assert!(source.contains("line"), "{source}");
}

#[test]
fn long_lines_stay_on_their_line_and_multi_line_strings_are_literal_blocks() {
    let long = "LS0t".repeat(100);
    let words = "word ".repeat(40);
    let written = to_string(&json!({"data": long, "words": words.trim(), "script": "a\nb\n"}))
        .expect("writes");
    assert_eq!(
        written,
        format!(
            "data: {long}\nscript: |\n  a\n  b\nwords: {}\n",
            words.trim()
        )
    );
}
