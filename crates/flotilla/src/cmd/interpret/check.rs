//! `flotilla interpret --check`: per customization document, its name, target and one line per operation,
//! `PASS` (compiles), `UNSET` (no script) or `ERROR: <reason>` (does not compile), in karmadactl's rule order,
//! plus the conflicts admission would deny between the given customizations (two scripts for one operation and
//! target); the command fails on a compile error, a conflict or a document that is not a customization.

use std::fmt::Write;

use flotilla_api::config::v1alpha1::ResourceInterpreterCustomization;
use flotilla_interpreter::customization::{RuleCheck, check_rules, validate_conflicts};
use serde::Deserialize;

use super::input::Document;

/// The report for every document and whether any of them failed.
pub(super) fn check(documents: &[Document]) -> (String, bool) {
    let customizations: Vec<ResourceInterpreterCustomization> = documents
        .iter()
        .filter_map(|d| customization(d).ok())
        .collect();
    let mut out = String::new();
    let mut failed = false;
    for document in documents {
        let _ = writeln!(out, "-----------------------------------");
        let name = document
            .value
            .pointer("/metadata/name")
            .and_then(|n| n.as_str())
            .filter(|n| !n.is_empty());
        let _ = writeln!(out, "SOURCE: {}", name.unwrap_or(&document.source));
        let ric = match customization(document) {
            Ok(ric) => ric,
            Err(reason) => {
                failed = true;
                let _ = writeln!(out, "{reason}");
                continue;
            }
        };
        let _ = writeln!(
            out,
            "TARGET: {} {}",
            ric.spec.target.api_version, ric.spec.target.kind
        );
        let _ = writeln!(out, "RULERS:");
        for (op, verdict) in check_rules(&ric) {
            let text = match verdict {
                RuleCheck::Pass => "PASS".to_owned(),
                RuleCheck::Unset => "UNSET".to_owned(),
                RuleCheck::Error(reason) => {
                    failed = true;
                    format!("ERROR: {}", reason.trim())
                }
            };
            let label = format!("{op}:");
            let _ = writeln!(out, "    {label:<25}{text}");
        }
        // Beyond karmadactl: what admission would deny among the customizations given together.
        if let Err(conflict) = validate_conflicts(&ric, &customizations) {
            failed = true;
            let _ = writeln!(out, "CONFLICT: {conflict}");
        }
    }
    (out, failed)
}

/// The document as a customization, or karmadactl's message for why it is not one.
fn customization(document: &Document) -> Result<ResourceInterpreterCustomization, String> {
    let value = &document.value;
    let api_version = value
        .get("apiVersion")
        .and_then(|v| v.as_str())
        .unwrap_or_default();
    let kind = value
        .get("kind")
        .and_then(|v| v.as_str())
        .unwrap_or_default();
    if api_version != "config.karmada.io/v1alpha1" || kind != "ResourceInterpreterCustomization" {
        let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
        return Err(format!(
            "not a ResourceInterpreterCustomization, got {group}/{version}, Kind={kind}"
        ));
    }
    let target = value.pointer("/spec/target");
    let field = |name: &str| {
        target
            .and_then(|t| t.get(name))
            .and_then(|v| v.as_str())
            .unwrap_or_default()
    };
    if field("kind").is_empty() {
        return Err("target.kind no set".to_owned());
    }
    if field("apiVersion").is_empty() {
        return Err("target.apiVersion no set".to_owned());
    }
    ResourceInterpreterCustomization::deserialize(value)
        .map_err(|e| format!("invalid customization: {e}"))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn doc(value: serde_json::Value) -> Document {
        Document {
            source: "rics.yaml".to_owned(),
            value,
        }
    }

    fn ric(name: &str, scripts: serde_json::Value) -> Document {
        doc(json!({
            "apiVersion": "config.karmada.io/v1alpha1", "kind": "ResourceInterpreterCustomization",
            "metadata": {"name": name},
            "spec": {"target": {"apiVersion": "apps/v1", "kind": "Deployment"}, "customizations": scripts}
        }))
    }

    #[test]
    fn reports_pass_unset_and_error_per_operation() {
        let documents = [ric(
            "good",
            json!({"retention": {"luaScript": "function Retain(d, o) return d end"},
                   "replicaResource": {"luaScript": "function GetReplicas(obj) return string.format( end"},
                   "statusReflection": {"luaScript": ""}}),
        )];
        let (out, failed) = check(&documents);
        assert!(failed);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(
            lines[..5],
            [
                "-----------------------------------",
                "SOURCE: good",
                "TARGET: apps/v1 Deployment",
                "RULERS:",
                "    Retain:                  PASS"
            ]
        );
        assert!(
            lines[5].starts_with("    InterpretReplica:        ERROR: "),
            "{out}"
        );
        assert_eq!(
            lines[6..],
            [
                "    InterpretComponent:      UNSET",
                "    ReviseReplica:           UNSET",
                "    InterpretStatus:         UNSET",
                "    AggregateStatus:         UNSET",
                "    InterpretHealth:         UNSET",
                "    InterpretDependency:     UNSET",
            ]
        );
    }

    #[test]
    fn non_customizations_and_missing_targets_fail() {
        let documents = [
            doc(
                json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"}}),
            ),
            doc(
                json!({"apiVersion": "config.karmada.io/v1alpha1", "kind": "ResourceInterpreterCustomization",
                       "spec": {"target": {"apiVersion": "v1"}, "customizations": {}}}),
            ),
            doc(
                json!({"apiVersion": "config.karmada.io/v1alpha1", "kind": "ResourceInterpreterCustomization",
                       "metadata": {"name": "x"}, "spec": {"target": {"kind": "Pod"}, "customizations": {}}}),
            ),
        ];
        let (out, failed) = check(&documents);
        assert!(failed);
        assert!(out.contains("SOURCE: web\nnot a ResourceInterpreterCustomization, got apps/v1, Kind=Deployment\n"), "{out}");
        assert!(
            out.contains("SOURCE: rics.yaml\ntarget.kind no set\n"),
            "{out}"
        );
        assert!(
            out.contains("SOURCE: x\ntarget.apiVersion no set\n"),
            "{out}"
        );
    }

    #[test]
    fn conflicts_between_given_customizations_fail() {
        let retain = json!({"retention": {"luaScript": "function Retain(d, o) return d end"}});
        let documents = [ric("a", retain.clone()), ric("b", retain)];
        let (out, failed) = check(&documents);
        assert!(failed);
        assert!(out.contains("CONFLICT: conflicting with InterpreterOperation(Retain) of existing ResourceInterpreterCustomization(b)"), "{out}");
        let (_, failed) = check(&documents[..1]);
        assert!(!failed);
    }
}
