//! Every string Flotilla writes reads back as the same string in a YAML 1.1 reader (PyYAML), as map
//! values, list items and map keys, and in multi-document streams.
//!
//! The interpreter is `FLOTILLA_TEST_PYTHON` (hack/test-deps.sh installs PyYAML there), `python3`
//! otherwise.
#![allow(clippy::unwrap_used, clippy::panic)]

use std::io::Write;
use std::process::{Command, Stdio};

use serde_json::{Value, json};

/// Strings a YAML 1.1 reader resolves to another type when they are written plain, and strings that
/// need quoting or block styles for YAML's own syntax.
const TRICKY: &[&str] = &[
    // Booleans, every YAML 1.1 spelling (and go-yaml v2's y/n).
    "y",
    "Y",
    "yes",
    "Yes",
    "YES",
    "n",
    "N",
    "no",
    "No",
    "NO",
    "on",
    "On",
    "ON",
    "off",
    "Off",
    "OFF",
    "true",
    "True",
    "TRUE",
    "false",
    "False",
    "FALSE",
    // Nulls.
    "null",
    "Null",
    "NULL",
    "~",
    "",
    // Numbers in every form.
    "0",
    "12",
    "-3",
    "+1",
    "017",
    "0o17",
    "0x1F",
    "0b101",
    "1_000",
    "1.5",
    ".5",
    "1.",
    "-1.5e3",
    "1e3",
    "1E3",
    "6.8523015e+5",
    "685.230_15e+03",
    ".inf",
    "-.inf",
    "+.inf",
    ".Inf",
    ".nan",
    ".NaN",
    "NaN",
    "inf",
    "1:20",
    "190:20:30",
    "-1:20",
    "190:20:30.15",
    // Timestamps.
    "2026-11-20",
    "2026-11-20T10:00:00Z",
    "2026-11-20t10:00:00.5+01:00",
    "2026-11-20 10:00:00",
    "2026-1-2",
    // YAML's own syntax.
    "<<",
    "=",
    "-",
    "- a",
    "? x",
    ":",
    "a: b",
    "a #b",
    "#x",
    "---",
    "...",
    "--- x",
    "[a]",
    "{a}",
    "*a",
    "&a",
    "!a",
    "|",
    ">",
    "'",
    "\"",
    "%x",
    "@x",
    "`x",
    ",x",
    " lead",
    "trail ",
    "tab\tin",
    "line1\nline2",
    "line1\nline2\n",
    "\nlead newline",
    "trailing\n\n",
    "crlf\r\n",
    "back\\slash",
    "unicode é ü 日本",
    "emoji 🚀",
    "\u{7f}del",
    "\u{85}nel",
    "\u{feff}bom",
    "\u{2028}ls",
    "a   b  double  spaces",
    "  indented\n  block\n",
    "tabs\n\tin block",
    // Long lines, which a writer may fold.
    "a long line of words that goes on well past eighty characters so that a writer may fold it over lines",
    "a long line  with  double spaces  and trailing space that goes on past eighty characters in all ",
    " leading space and a long line that goes on past eighty characters so that a writer may fold it",
    "averylongwordwithoutanyspacesthatcannotbefoldedatallbecauseithasnowhitespaceinsideitanywhere",
];

fn python() -> String {
    std::env::var("FLOTILLA_TEST_PYTHON").unwrap_or_else(|_| "python3".into())
}

/// Reads a YAML stream with PyYAML's `safe_load_all` and returns its documents as JSON.
fn pyyaml_load(text: &str) -> Vec<Value> {
    let script = "import sys, json, yaml\n\
                  docs = list(yaml.safe_load_all(sys.stdin.read()))\n\
                  print(json.dumps(docs))\n";
    let mut child = Command::new(python())
        .arg("-c")
        .arg(script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python runs");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "PyYAML refused:\n{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn pyyaml_reads_back_every_string_written() {
    let values: serde_json::Map<String, Value> = TRICKY
        .iter()
        .enumerate()
        .map(|(i, s)| (format!("k{i:03}"), json!(s)))
        .collect();
    let keys: serde_json::Map<String, Value> = TRICKY
        .iter()
        .enumerate()
        .map(|(i, s)| (s.to_string(), json!(i)))
        .collect();
    let document = json!({
        "values": values,
        "list": TRICKY,
        "keys": keys,
        "nested": {"labels": {"enabled": "yes", "port": "8080"}, "args": ["--flag", "on", "0755"]},
    });
    let written = flotilla_yaml::to_string(&document).unwrap();
    let read = pyyaml_load(&written);
    assert_eq!(read.len(), 1, "{written}");
    for (i, s) in TRICKY.iter().enumerate() {
        assert_eq!(
            read[0]["values"][format!("k{i:03}")],
            json!(s),
            "value {s:?} in:\n{written}"
        );
        assert_eq!(
            read[0]["list"][i],
            json!(s),
            "list item {s:?} in:\n{written}"
        );
    }
    assert_eq!(read[0]["keys"], document["keys"], "keys in:\n{written}");
    assert_eq!(read[0], document, "whole document:\n{written}");
    // And our own reader, kubectl's rules, agrees.
    assert_eq!(
        flotilla_yaml::from_str::<Value>(&written).unwrap(),
        document
    );
}

#[test]
fn pyyaml_reads_a_written_stream_document_by_document() {
    let documents: Vec<Value> = TRICKY
        .iter()
        .map(|s| json!({"kind": "Thing", "value": s}))
        .collect();
    let written = flotilla_yaml::to_string_multiple(&documents).unwrap();
    assert_eq!(pyyaml_load(&written), documents, "{written}");
    assert_eq!(
        flotilla_yaml::from_str_multiple::<Value>(&written).unwrap(),
        documents
    );
}
