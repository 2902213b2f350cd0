//! Karmada's validation of a ResourceInterpreterWebhookConfiguration: each webhook's name (a fully qualified
//! domain name, unique in the configuration), rules, timeout, client config (a URL or a Service, checked as
//! kube-apiserver checks admission webhooks' client configs) and interpreter context versions.

use std::collections::HashSet;

use flotilla_api::config::v1alpha1::{
    InterpreterOperation, ResourceInterpreterWebhook, ResourceInterpreterWebhookConfiguration,
    RuleWithOperations,
};
use flotilla_apimachinery::field::{ErrorType, FieldError};
use flotilla_apimachinery::go_url;
use flotilla_apimachinery::validation::{is_dns1035_label, is_dns1123_label, is_dns1123_subdomain};

/// The operations a webhook may be registered for, sorted as Karmada lists them in its message.
const SUPPORTED_OPERATIONS: [&str; 9] = [
    "*",
    "AggregateStatus",
    "InterpretComponent",
    "InterpretDependency",
    "InterpretHealth",
    "InterpretReplica",
    "InterpretStatus",
    "Retain",
    "ReviseReplica",
];

/// The interpreter context versions Karmada speaks.
const CONTEXT_VERSIONS: [&str; 1] = ["v1alpha1"];

/// What a malformed webhook URL is told it should look like.
const URL_FORM: &str = "; desired format: https://host[/path]";

/// The errors of a configuration's webhooks.
pub fn validate_interpreter_webhook_configuration(
    configuration: &ResourceInterpreterWebhookConfiguration,
) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let mut names = HashSet::new();
    for (i, webhook) in configuration.webhooks.iter().enumerate() {
        let path = format!("webhooks[{i}]");
        errors.extend(validate_webhook(webhook, &path));
        if !names.insert(webhook.name.as_str()) {
            errors.push(FieldError::duplicate(
                format!("{path}.name"),
                webhook.name.as_str(),
            ));
        }
    }
    errors
}

fn validate_webhook(webhook: &ResourceInterpreterWebhook, path: &str) -> Vec<FieldError> {
    let mut errors = fully_qualified_domain_name(&format!("{path}.name"), &webhook.name);
    for (i, rule) in webhook.rules.iter().enumerate() {
        errors.extend(validate_rule(rule, &format!("{path}.rules[{i}]")));
    }
    if let Some(seconds) = webhook.timeout_seconds
        && !(1..=30).contains(&seconds)
    {
        errors.push(FieldError::invalid(
            format!("{path}.timeoutSeconds"),
            seconds,
            "the timeout value must be between 1 and 30 seconds",
        ));
    }
    let client = &webhook.client_config;
    let client_path = format!("{path}.clientConfig");
    match (&client.url, &client.service) {
        (Some(url), None) => errors.extend(validate_url(&format!("{client_path}.url"), url)),
        (None, Some(service)) => errors.extend(validate_service(
            &format!("{client_path}.service"),
            &service.namespace,
            &service.name,
            service.path.as_deref(),
            service.port.unwrap_or(443),
        )),
        _ => errors.push(FieldError::required(
            client_path,
            "exactly one of url or service is required",
        )),
    }
    errors.extend(validate_context_versions(
        &webhook.interpreter_context_versions,
        &format!("{path}.interpreterContextVersions"),
    ));
    errors
}

/// kube's `IsFullyQualifiedDomainName`: at least two DNS labels, the whole a DNS-1123 subdomain.
fn fully_qualified_domain_name(path: &str, name: &str) -> Vec<FieldError> {
    if name.is_empty() {
        return vec![FieldError::required(path, "")];
    }
    let name = name.strip_suffix('.').unwrap_or(name);
    let problems = is_dns1123_subdomain(name);
    if !problems.is_empty() {
        return vec![FieldError::invalid(path, name, problems.join(","))];
    }
    if name.split('.').count() < 2 {
        return vec![FieldError::invalid(
            path,
            name,
            "should be a domain with at least two segments separated by dots",
        )];
    }
    name.split('.')
        .map(|label| (label, is_dns1123_label(label)))
        .find(|(_, problems)| !problems.is_empty())
        .map(|(label, problems)| vec![FieldError::invalid(path, label, problems.join(","))])
        .unwrap_or_default()
}

fn validate_rule(rule: &RuleWithOperations, path: &str) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let operations: Vec<&str> = rule.operations.iter().map(|o| o.as_str()).collect();
    if operations.is_empty() {
        errors.push(FieldError::required(format!("{path}.operations"), ""));
    }
    if operations.len() > 1 && rule.operations.contains(&InterpreterOperation::All) {
        errors.push(FieldError::invalid(
            format!("{path}.operations"),
            serde_json::json!(operations),
            "if '*' is present, must not specify other operations",
        ));
    }
    for (i, operation) in operations.iter().enumerate() {
        if !SUPPORTED_OPERATIONS.contains(operation) {
            errors.push(FieldError::not_supported(
                format!("{path}.operations[{i}]"),
                *operation,
                &SUPPORTED_OPERATIONS,
            ));
        }
    }
    for (field, values, what) in [
        ("apiGroups", &rule.api_groups, "API groups"),
        ("apiVersions", &rule.api_versions, "API versions"),
        ("kinds", &rule.kinds, "kinds"),
    ] {
        let at = format!("{path}.{field}");
        if values.is_empty() {
            errors.push(FieldError::required(at.as_str(), ""));
        }
        if values.len() > 1 && values.iter().any(|v| v == "*") {
            errors.push(FieldError::invalid(
                at.as_str(),
                serde_json::json!(values),
                format!("if '*' is present, must not specify other {what}"),
            ));
        }
        // Karmada does not check API groups for empty entries: the core group is empty.
        if field != "apiGroups" {
            for (i, value) in values.iter().enumerate() {
                if value.is_empty() {
                    errors.push(FieldError::required(format!("{at}[{i}]"), ""));
                }
            }
        }
    }
    errors
}

fn validate_context_versions(versions: &[String], path: &str) -> Vec<FieldError> {
    let accepted = CONTEXT_VERSIONS.join(", ");
    if versions.is_empty() {
        return vec![FieldError::required(
            path,
            format!("must specify one of {accepted}"),
        )];
    }
    let mut errors = Vec::new();
    let mut seen = HashSet::new();
    for (i, version) in versions.iter().enumerate() {
        let at = format!("{path}[{i}]");
        if !seen.insert(version.as_str()) {
            errors.push(FieldError::invalid(
                at,
                version.as_str(),
                "duplicate version",
            ));
            continue;
        }
        errors.extend(
            is_dns1035_label(version)
                .into_iter()
                .map(|m| FieldError::invalid(at.as_str(), version.as_str(), m)),
        );
    }
    if !versions
        .iter()
        .any(|v| CONTEXT_VERSIONS.contains(&v.as_str()))
    {
        errors.push(FieldError::invalid(
            path,
            serde_json::json!(versions),
            format!("must include at least one of {accepted}"),
        ));
    }
    errors
}

/// kube's check of a webhook URL: https, a host, no user information, fragment or query.
fn validate_url(path: &str, url: &str) -> Vec<FieldError> {
    let parsed = match go_url::parse(url) {
        Ok(parsed) => parsed,
        Err(reason) => {
            return vec![FieldError::new(
                path,
                ErrorType::Required,
                None,
                format!("url must be a valid URL: {reason}{URL_FORM}"),
            )];
        }
    };
    let mut errors = Vec::new();
    if parsed.scheme != "https" {
        errors.push(FieldError::invalid(
            path,
            parsed.scheme.as_str(),
            format!("'https' is the only allowed URL scheme{URL_FORM}"),
        ));
    }
    if parsed.host.is_empty() {
        errors.push(FieldError::invalid(
            path,
            "",
            format!("host must be specified{URL_FORM}"),
        ));
    }
    errors.extend(parsed.disallowed_parts(path));
    errors
}

/// kube's check of a webhook Service reference.
fn validate_service(
    path: &str,
    namespace: &str,
    name: &str,
    url_path: Option<&str>,
    port: i32,
) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if name.is_empty() {
        errors.push(FieldError::required(format!("{path}.name"), ""));
    }
    if namespace.is_empty() {
        errors.push(FieldError::required(format!("{path}.namespace"), ""));
    }
    if !(1..=65535).contains(&port) {
        errors.push(FieldError::invalid(
            format!("{path}.port"),
            port,
            "port is not valid: must be between 1 and 65535, inclusive",
        ));
    }
    let Some(url_path) = url_path.filter(|p| !p.is_empty() && *p != "/") else {
        return errors;
    };
    let at = format!("{path}.path");
    if url_path == "//" {
        errors.push(FieldError::invalid(
            at,
            url_path,
            "segment[0] may not be empty",
        ));
        return errors;
    }
    if !url_path.starts_with('/') {
        errors.push(FieldError::invalid(
            at.as_str(),
            url_path,
            "must start with a '/'",
        ));
    }
    // Go drops the first byte whatever it is.
    let mut steps = url_path.get(1..).unwrap_or_default();
    steps = steps.strip_suffix('/').unwrap_or(steps);
    for (i, step) in steps.split('/').enumerate() {
        if step.is_empty() {
            errors.push(FieldError::invalid(
                at.as_str(),
                url_path,
                format!("segment[{i}] may not be empty"),
            ));
            continue;
        }
        for failure in is_dns1123_subdomain(step) {
            errors.push(FieldError::invalid(
                at.as_str(),
                url_path,
                format!("segment[{i}]: {failure}"),
            ));
        }
    }
    errors
}
