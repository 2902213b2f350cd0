//! `statePreservation` of application failover: the rules' Kubernetes JSONPath templates evaluated against the
//! status a member reported for the failed copy, giving the labels the new copy is created with.
//!
//! A rule's `jsonPath` is a Kubernetes JSONPath template (`{.replicas}`, `{.conditions[?(@.type=="Ready")].status}`,
//! text around the braces kept), run as Karmada runs it (`k8s.io/client-go/util/jsonpath` with missing keys
//! refused). Each `{...}` action is an RFC 9535 query once rooted at `$`, which the maintained `jsonpath-rust`
//! evaluates; this module only splits the template and prints the results as Kubernetes does (strings bare,
//! numbers and booleans as text, objects and arrays as JSON, several results separated by spaces).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use flotilla_api::policy::v1alpha1::StatePreservation;
use flotilla_api::work::v1alpha2::AggregatedStatusItem;
use jsonpath_rust::JsonPath as _;
use serde_json::Value;

/// A rule that cannot be evaluated against a status.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum StatePreservationError {
    /// The template is not one Kubernetes' JSONPath accepts (or one this evaluator does not run).
    #[error("invalid jsonPath {path:?}: {reason}")]
    Invalid {
        /// The rule's `jsonPath`.
        path: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The failed copy's status, which the rules read, has not been collected yet.
    #[error("the application status has not yet been collected from Cluster({0})")]
    StatusNotCollected(String),
    /// A field the path names is missing from the status (Kubernetes' `AllowMissingKeys(false)`).
    #[error("failed to execute jsonpath {path:?}: {query} is not found")]
    NotFound {
        /// The rule's `jsonPath`.
        path: String,
        /// The action that selected nothing.
        query: String,
    },
}

/// Karmada's `BuildPreservedLabelState`: each rule's `aliasLabelName` with its `jsonPath` evaluated against
/// `status` (the reflected status of the failed copy).
///
/// # Errors
/// The first rule whose path is invalid or names a missing field.
pub fn preserved_label_state(
    preservation: &StatePreservation,
    status: &Value,
) -> Result<BTreeMap<String, String>, StatePreservationError> {
    preservation
        .rules
        .iter()
        .map(|rule| {
            Ok((
                rule.alias_label_name.clone(),
                evaluate(&rule.json_path, status)?,
            ))
        })
        .collect()
}

/// Karmada's `extractStateForEviction`: the results of `preservation`'s rules over the status `cluster`
/// reported (its `status.aggregatedStatus` item); empty when there are no rules.
///
/// # Errors
/// When `cluster`'s status has not been collected, or as [`preserved_label_state`].
pub fn state_for_eviction(
    preservation: Option<&StatePreservation>,
    items: &[AggregatedStatusItem],
    cluster: &str,
) -> Result<BTreeMap<String, String>, StatePreservationError> {
    let Some(preservation) = preservation.filter(|p| !p.rules.is_empty()) else {
        return Ok(BTreeMap::new());
    };
    let status = items
        .iter()
        .find(|i| i.cluster_name == cluster)
        .and_then(|i| i.status.as_ref())
        .ok_or_else(|| StatePreservationError::StatusNotCollected(cluster.to_owned()))?;
    preserved_label_state(preservation, status)
}

/// One piece of a template: literal text or an action between braces.
#[derive(Debug, PartialEq, Eq)]
enum Piece<'a> {
    Text(&'a str),
    Action(&'a str),
}

/// Evaluates a Kubernetes JSONPath template against `root`.
///
/// # Errors
/// As [`StatePreservationError`].
pub(crate) fn evaluate(template: &str, root: &Value) -> Result<String, StatePreservationError> {
    let invalid = |reason: String| StatePreservationError::Invalid {
        path: template.to_owned(),
        reason,
    };
    let mut out = String::new();
    for piece in split(template).map_err(invalid)? {
        match piece {
            Piece::Text(text) => out.push_str(text),
            Piece::Action(action) => {
                let query = rooted(action).map_err(invalid)?;
                let found = root.query(&query).map_err(|err| invalid(err.to_string()))?;
                if found.is_empty() && definite(&query) {
                    return Err(StatePreservationError::NotFound {
                        path: template.to_owned(),
                        query: action.trim().to_owned(),
                    });
                }
                for (i, value) in found.into_iter().enumerate() {
                    if i > 0 {
                        out.push(' ');
                    }
                    print(&mut out, value);
                }
            }
        }
    }
    Ok(out)
}

/// Splits a template into text and `{...}` actions; braces inside quoted strings do not count.
fn split(template: &str) -> Result<Vec<Piece<'_>>, String> {
    let mut pieces = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        if open > 0 {
            pieces.push(Piece::Text(&rest[..open]));
        }
        let inner = &rest[open + 1..];
        let mut quote = None;
        let close = inner
            .char_indices()
            .find(|&(_, c)| match quote {
                Some(q) if c == q => {
                    quote = None;
                    false
                }
                Some(_) => false,
                None if c == '"' || c == '\'' => {
                    quote = Some(c);
                    false
                }
                None => c == '}',
            })
            .map(|(i, _)| i)
            .ok_or_else(|| "unclosed action".to_owned())?;
        pieces.push(Piece::Action(&inner[..close]));
        rest = &inner[close + 1..];
    }
    if !rest.is_empty() {
        pieces.push(Piece::Text(rest));
    }
    Ok(pieces)
}

/// The RFC 9535 query of an action: `.a.b`, `$.a.b` and `['a']` all become `$`-rooted.
fn rooted(action: &str) -> Result<String, String> {
    let action = action.trim();
    if action.is_empty() {
        return Err("empty action".to_owned());
    }
    let first = action.split(|c: char| !c.is_ascii_alphabetic()).next();
    if let Some(word @ ("range" | "end")) = first {
        return Err(format!("the {word:?} action is not supported here"));
    }
    let path = action.strip_prefix('$').unwrap_or(action);
    match path.chars().next() {
        None | Some('.' | '[') => Ok(format!("${path}")),
        Some(_) => Err(format!("unrecognized character in action: {action}")),
    }
}

/// Whether a query names one place (no filter, wildcard, slice, union or descent), so that finding nothing
/// means a key is missing.
fn definite(query: &str) -> bool {
    !query.contains(['?', '*', ':', ',']) && !query.contains("..")
}

/// Prints one result as Kubernetes' JSONPath printer does: strings bare, objects and arrays as JSON, numbers
/// as Go prints a float64 (`3`, not `3.0`).
fn print(out: &mut String, value: &Value) {
    match value {
        Value::String(s) => out.push_str(s),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                let _ = write!(out, "{i}");
            } else if let Some(u) = n.as_u64() {
                let _ = write!(out, "{u}");
            } else if let Some(f) = n.as_f64() {
                if f.fract() == 0.0 && f.abs() < 1e21 {
                    let _ = write!(out, "{f:.0}");
                } else {
                    let _ = write!(out, "{f}");
                }
            }
        }
        Value::Bool(b) => {
            let _ = write!(out, "{b}");
        }
        Value::Null => out.push_str("<nil>"),
        Value::Array(_) | Value::Object(_) => out.push_str(&value.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use flotilla_api::policy::v1alpha1::StatePreservationRule;
    use serde_json::json;

    use super::*;

    fn status() -> Value {
        json!({
            "replicas": 3,
            "readyReplicas": 2.0,
            "paused": false,
            "phase": "Running",
            "conditions": [
                {"type": "Available", "status": "True"},
                {"type": "Progressing", "status": "False"}
            ],
            "selector": {"app": "nginx"}
        })
    }

    #[test]
    fn actions_print_as_kubernetes_does() {
        let s = status();
        let cases = [
            ("{.replicas}", "3"),
            ("{ .replicas }", "3"),
            ("{$.replicas}", "3"),
            ("{.readyReplicas}", "2"),
            ("{.paused}", "false"),
            ("{.phase}", "Running"),
            ("{.conditions[0].type}", "Available"),
            ("{.conditions[?(@.type==\"Progressing\")].status}", "False"),
            ("{.conditions[*].type}", "Available Progressing"),
            ("{.selector}", r#"{"app":"nginx"}"#),
            ("{['phase']}", "Running"),
            (
                "phase={.phase},ready={.readyReplicas}",
                "phase=Running,ready=2",
            ),
            ("{.conditions[?(@.type==\"Missing\")].status}", ""),
        ];
        for (path, want) in cases {
            assert_eq!(evaluate(path, &s).as_deref(), Ok(want), "{path}");
        }
    }

    #[test]
    fn missing_keys_and_bad_templates_are_errors() {
        let s = status();
        assert_eq!(
            evaluate("{.availableReplicas}", &s),
            Err(StatePreservationError::NotFound {
                path: "{.availableReplicas}".into(),
                query: ".availableReplicas".into(),
            })
        );
        for bad in [
            "{.replicas",
            "{}",
            "{range .conditions[*]}{.type}{end}",
            "{replicas}",
            "{.a[}",
        ] {
            assert!(
                matches!(
                    evaluate(bad, &s),
                    Err(StatePreservationError::Invalid { .. })
                ),
                "{bad} should be refused"
            );
        }
    }

    #[test]
    fn every_rule_gives_a_label() {
        let preservation = StatePreservation {
            rules: vec![
                StatePreservationRule {
                    alias_label_name: "failover.example.com/replicas".into(),
                    json_path: "{.replicas}".into(),
                },
                StatePreservationRule {
                    alias_label_name: "failover.example.com/phase".into(),
                    json_path: "{.phase}".into(),
                },
            ],
        };
        let labels = preserved_label_state(&preservation, &status());
        assert_eq!(
            labels,
            Ok([
                (
                    "failover.example.com/phase".to_owned(),
                    "Running".to_owned()
                ),
                ("failover.example.com/replicas".to_owned(), "3".to_owned()),
            ]
            .into())
        );
        let broken = StatePreservation {
            rules: vec![StatePreservationRule {
                alias_label_name: "x".into(),
                json_path: "{.nope}".into(),
            }],
        };
        assert!(preserved_label_state(&broken, &status()).is_err());
    }

    #[test]
    fn eviction_state_reads_the_failed_clusters_status() {
        let rules = StatePreservation {
            rules: vec![StatePreservationRule {
                alias_label_name: "failover.example.com/replicas".into(),
                json_path: "{.replicas}".into(),
            }],
        };
        let item = |cluster: &str, status: Option<Value>| AggregatedStatusItem {
            cluster_name: cluster.into(),
            status,
            ..AggregatedStatusItem::default()
        };
        let items = [item("m1", None), item("m2", Some(status()))];
        assert_eq!(
            state_for_eviction(Some(&rules), &items, "m2"),
            Ok([("failover.example.com/replicas".to_owned(), "3".to_owned())].into())
        );
        // Karmada waits for the status rather than evicting without the state.
        assert_eq!(
            state_for_eviction(Some(&rules), &items, "m1"),
            Err(StatePreservationError::StatusNotCollected("m1".into()))
        );
        assert_eq!(
            state_for_eviction(Some(&rules), &items, "m3"),
            Err(StatePreservationError::StatusNotCollected("m3".into()))
        );
        // No rules: nothing to read, whatever was collected.
        assert_eq!(state_for_eviction(None, &items, "m1"), Ok(BTreeMap::new()));
        let empty = StatePreservation { rules: Vec::new() };
        assert_eq!(
            state_for_eviction(Some(&empty), &items, "m3"),
            Ok(BTreeMap::new())
        );
    }
}
