//! `flotilla interpret` reads object and status files as `karmadactl interpret` does (issue 16, items 5 and 6):
//! status items decode like Go structs (a missing `clusterName` is empty), a status file without items gives the
//! script an empty list where no status file gives it nil, and an object whose metadata does not decode as
//! Kubernetes' `ObjectMeta` is refused with an error naming the field.
#![allow(clippy::panic)]

use std::path::Path;
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_flotilla");

/// Reports what the script was given: `items` is the item count or `nil`, `names` the cluster names.
const CUSTOMIZATION: &str = r#"
apiVersion: config.karmada.io/v1alpha1
kind: ResourceInterpreterCustomization
metadata: {name: inputs}
spec:
  target: {apiVersion: example.io/v1, kind: Thing}
  customizations:
    statusAggregation:
      luaScript: |
        function AggregateStatus(desired, items)
          local names = {}
          if items ~= nil then
            for _, item in ipairs(items) do
              table.insert(names, '[' .. item.clusterName .. ']')
            end
          end
          desired.status = {items = items == nil and 'nil' or tostring(#items), names = table.concat(names, ',')}
          return desired
        end
    healthInterpretation:
      luaScript: |
        function InterpretHealth(observed)
          return observed.metadata.labels == nil or observed.metadata.labels.a == nil
        end
"#;

const THING: &str = "apiVersion: example.io/v1\nkind: Thing\nmetadata: {name: t}\n";

fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap_or_else(|e| panic!("write {name}: {e}"));
    path.display().to_string()
}

fn interpret(dir: &Path, args: &[&str]) -> Output {
    let customization = write(dir, "customization.yaml", CUSTOMIZATION);
    Command::new(BIN)
        .args(["interpret", "-f", &customization])
        .args(args)
        .env("RUST_LOG", "warn")
        .output()
        .unwrap_or_else(|e| panic!("flotilla runs: {e}"))
}

/// The aggregated status (`items` and `names`) for a status file with `status` (or none).
fn aggregated(status: Option<&str>) -> (String, String) {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let desired = write(dir.path(), "desired.yaml", THING);
    let mut args = vec!["--operation", "aggregateStatus", "--desired-file", &desired];
    let status_file = status.map(|text| write(dir.path(), "status.yaml", text));
    if let Some(file) = &status_file {
        args.extend(["--status-file", file]);
    }
    let out = interpret(dir.path(), &args);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}{stdout}",
        String::from_utf8_lossy(&out.stderr)
    );
    let documents: Vec<serde_json::Value> = stdout
        .split("\n---\n")
        .filter_map(|doc| flotilla_yaml::from_str(doc.trim_start_matches("---\n")).ok())
        .collect();
    let status = &documents
        .last()
        .unwrap_or_else(|| panic!("no result in {stdout}"))["status"];
    let field = |key: &str| status[key].as_str().unwrap_or_default().to_owned();
    (field("items"), field("names"))
}

#[test]
fn status_items_without_cluster_name_have_an_empty_one() {
    assert_eq!(
        aggregated(Some("status: {replicas: 1}\n---\nclusterName: m2\n")),
        ("2".to_owned(), "[],[m2]".to_owned())
    );
}

#[test]
fn a_status_file_without_items_is_an_empty_list_and_no_file_is_nil() {
    assert_eq!(aggregated(Some("")), ("0".to_owned(), String::new()));
    assert_eq!(aggregated(Some("---\n")), ("0".to_owned(), String::new()));
    assert_eq!(aggregated(None), ("nil".to_owned(), String::new()));
}

/// The health script's answer for an object with `metadata`, or the error line.
fn health(metadata: &str) -> Result<String, String> {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let observed = write(
        dir.path(),
        "observed.yaml",
        &format!("apiVersion: example.io/v1\nkind: Thing\nmetadata: {metadata}\n"),
    );
    let out = interpret(
        dir.path(),
        &[
            "--operation",
            "interpretHealth",
            "--observed-file",
            &observed,
        ],
    );
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

#[test]
fn metadata_must_decode_as_kubernetes_object_meta() {
    for (metadata, field) in [
        ("{name: t, annotations: {a: 5}}", "metadata.annotations.a"),
        ("{name: t, labels: {a: true}}", "metadata.labels.a"),
        ("{name: 5}", "metadata.name"),
        ("{name: t, generation: '3'}", "metadata.generation"),
        ("{name: t, finalizers: [1]}", "metadata.finalizers[0]"),
        ("{name: t, labels: 7}", "metadata.labels"),
    ] {
        let err = health(metadata).expect_err(metadata);
        assert!(
            err.starts_with("error: ") && err.contains(field) && err.contains("observed.yaml"),
            "{metadata}: {err}"
        );
    }
    // As in Go, `null` decodes to nothing and fields ObjectMeta does not know are ignored.
    for metadata in [
        "{name: t, labels: {a: null}}",
        "{name: t, something: [1]}",
        "{name: t, labels: null}",
    ] {
        let out = health(metadata).unwrap_or_else(|e| panic!("{metadata}: {e}"));
        assert!(out.contains("healthy:\ntrue"), "{metadata}: {out}");
    }
}
