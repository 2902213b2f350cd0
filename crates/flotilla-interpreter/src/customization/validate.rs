//! Checks of ResourceInterpreterCustomizations before they are stored or run: the admission rules of
//! karmada-webhook and the per-rule report of `flotilla interpret --check`.

use flotilla_api::config::v1alpha1::{InterpreterOperation, ResourceInterpreterCustomization};

use crate::lua::compile_error;

/// The `--check` verdict of one rule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RuleCheck {
    /// The script compiles.
    Pass,
    /// No script (or an empty one).
    Unset,
    /// The script does not compile; the compiler's message.
    Error(String),
}

/// Compiles every rule of `customization` without running it, in Karmada's rule order (Retain, InterpretReplica,
/// InterpretComponent, ReviseReplica, InterpretStatus, AggregateStatus, InterpretHealth, InterpretDependency).
pub fn check_rules(
    customization: &ResourceInterpreterCustomization,
) -> Vec<(InterpreterOperation, RuleCheck)> {
    InterpreterOperation::DISPATCHED
        .into_iter()
        .map(|op| {
            let verdict = match customization.spec.customizations.script(&op) {
                None => RuleCheck::Unset,
                Some(source) => match compile_error(source) {
                    None => RuleCheck::Pass,
                    Some(message) => RuleCheck::Error(message),
                },
            };
            (op, verdict)
        })
        .collect()
}

/// Admission step 1: no other customization with the same target may define a script for
/// the same operation; dependency scripts never conflict.
///
/// # Errors
/// Karmada's denial message, e.g. `conflicting with InterpreterOperation(Retain) of existing
/// ResourceInterpreterCustomization(other)`.
pub fn validate_conflicts(
    customization: &ResourceInterpreterCustomization,
    existing: &[ResourceInterpreterCustomization],
) -> Result<(), String> {
    let target = &customization.spec.target;
    for other in existing {
        if other.metadata.name == customization.metadata.name
            || other.spec.target.api_version != target.api_version
            || other.spec.target.kind != target.kind
        {
            continue;
        }
        for op in InterpreterOperation::DISPATCHED {
            if op == InterpreterOperation::InterpretDependency {
                continue;
            }
            if customization.spec.customizations.script(&op).is_some()
                && other.spec.customizations.script(&op).is_some()
            {
                return Err(format!(
                    "conflicting with InterpreterOperation({op}) of existing ResourceInterpreterCustomization({})",
                    other.metadata.name.as_deref().unwrap_or_default()
                ));
            }
        }
    }
    Ok(())
}

/// Admission step 2: every non-empty script compiles (nothing is run).
///
/// # Errors
/// `InterpreterOperation(<Op>) Lua script error: <compiler message>` for the first script in rule order that
/// does not compile.
pub fn validate_scripts(customization: &ResourceInterpreterCustomization) -> Result<(), String> {
    for (op, verdict) in check_rules(customization) {
        if let RuleCheck::Error(message) = verdict {
            return Err(format!(
                "InterpreterOperation({op}) Lua script error: {message}"
            ));
        }
    }
    Ok(())
}

/// The whole admission check of a created or updated customization against the existing ones.
///
/// # Errors
/// The first denial of [`validate_conflicts`] or [`validate_scripts`].
pub fn validate(
    customization: &ResourceInterpreterCustomization,
    existing: &[ResourceInterpreterCustomization],
) -> Result<(), String> {
    validate_conflicts(customization, existing)?;
    validate_scripts(customization)
}

#[cfg(test)]
mod tests {
    use flotilla_api::config::v1alpha1::CustomizationRules;

    use super::*;
    use crate::customization::tests::lua;

    fn ric(name: &str, kind: &str, rules: CustomizationRules) -> ResourceInterpreterCustomization {
        crate::customization::tests::ric(name, "apps/v1", kind, rules)
    }

    #[test]
    fn conflicting_operations_are_denied_but_dependencies_accumulate() {
        let existing = ric(
            "a",
            "Deployment",
            CustomizationRules {
                retention: lua("function Retain(d, o) return d end"),
                dependency_interpretation: lua("function GetDependencies(o) return {} end"),
                ..CustomizationRules::default()
            },
        );
        let deps_only = ric(
            "b",
            "Deployment",
            CustomizationRules {
                dependency_interpretation: lua("function GetDependencies(o) return {} end"),
                health_interpretation: lua(""),
                ..CustomizationRules::default()
            },
        );
        assert_eq!(
            validate(&deps_only, std::slice::from_ref(&existing)),
            Ok(())
        );
        let retain = ric(
            "c",
            "Deployment",
            CustomizationRules {
                retention: lua("x = 1"),
                ..CustomizationRules::default()
            },
        );
        assert_eq!(
            validate(&retain, std::slice::from_ref(&existing)),
            Err("conflicting with InterpreterOperation(Retain) of existing ResourceInterpreterCustomization(a)".to_owned())
        );
        // The same name is an update of itself; another kind never conflicts.
        let update = ric(
            "a",
            "Deployment",
            CustomizationRules {
                retention: lua("x = 1"),
                ..CustomizationRules::default()
            },
        );
        assert_eq!(validate(&update, std::slice::from_ref(&existing)), Ok(()));
        let other_kind = ric(
            "d",
            "StatefulSet",
            CustomizationRules {
                retention: lua("x = 1"),
                ..CustomizationRules::default()
            },
        );
        assert_eq!(validate(&other_kind, &[existing]), Ok(()));
    }

    #[test]
    fn scripts_must_compile_and_are_reported_per_rule() {
        let broken = ric(
            "broken",
            "Deployment",
            CustomizationRules {
                replica_resource: lua(
                    "function GetReplicas(obj) return obj.spec.replicas, nil end",
                ),
                status_reflection: lua("function ReflectStatus(obj) return string.format( end"),
                ..CustomizationRules::default()
            },
        );
        let err = validate_scripts(&broken).unwrap_err();
        assert!(
            err.starts_with("InterpreterOperation(InterpretStatus) Lua script error: "),
            "{err}"
        );
        let report = check_rules(&broken);
        assert_eq!(report.len(), 8);
        assert_eq!(report[0], (InterpreterOperation::Retain, RuleCheck::Unset));
        assert_eq!(
            report[1],
            (InterpreterOperation::InterpretReplica, RuleCheck::Pass)
        );
        assert!(
            matches!(&report[4], (InterpreterOperation::InterpretStatus, RuleCheck::Error(m)) if !m.is_empty())
        );
        // Compiling does not run: a script that would loop for ever passes.
        let looping = ric(
            "loop",
            "Deployment",
            CustomizationRules {
                retention: lua("while true do end"),
                ..CustomizationRules::default()
            },
        );
        assert_eq!(validate_scripts(&looping), Ok(()));
    }
}
