//! Dynamic admission: the webhooks of MutatingWebhookConfigurations and ValidatingWebhookConfigurations, called as
//! kube-apiserver calls them (AdmissionReview `admission.k8s.io/v1`).
//!
//! - Configurations in name order, webhooks in their order; a webhook is called when one of its `rules` matches
//!   the request, its `namespaceSelector` the namespace's labels (a Namespace's own labels; ignored for other
//!   cluster-scoped objects) and its `objectSelector` the new or the old object's labels.
//! - Mutating webhooks run one after the other on the object, each JSON Patch applied and the result defaulted
//!   again; a webhook with `reinvocationPolicy: IfNeeded` runs once more when a later webhook changed the object
//!   after it ran. Validating webhooks run after, on the final object, all at once.
//! - `failurePolicy` (default `Fail`) decides what a call that fails or times out (`timeoutSeconds`, default 10)
//!   does: fail the request with 500, or skip the webhook. A dry-run request fails with 400 when a matching webhook
//!   has side effects (`sideEffects` other than `None` and `NoneOnDryRun`).
//! - Requests for the webhook configurations themselves are never sent to webhooks, so a broken webhook can
//!   always be removed.
//!
//! The two phases are `mutating` and `validating`; both find the webhooks a request reaches (`matching`) and
//! call each (`call`) here. Where a write calls them is `crate::write::admit`.
//!
//! Not done: `matchPolicy: Equivalent` conversion to another version of the resource (only the requested version
//! matches) and `matchConditions` (CEL; a webhook that has them counts as failing, so its failurePolicy decides).

mod client;
mod mutating;
pub mod review;
pub mod rules;
mod validating;

use std::time::Duration;

use serde_json::Value;

pub use review::{Request, UserInfo};
pub use rules::Operation;
use rules::Target;

use crate::status::{ApiError, ApiResult};
use flotilla_store::ResKey;
use flotilla_store::Store;

/// The group whose resources are never sent to webhooks.
const ADMISSION_GROUP: &str = "admissionregistration.k8s.io";
/// kube-apiserver's default and largest webhook timeouts.
const DEFAULT_TIMEOUT_SECONDS: u64 = 10;
const MAX_TIMEOUT_SECONDS: u64 = 30;

/// Calls the registered admission webhooks.
#[derive(Default)]
pub struct Webhooks {
    clients: client::Clients,
}

/// One webhook of a configuration.
struct Hook {
    name: String,
    spec: Value,
}

impl Hook {
    fn text(&self, key: &str) -> Option<&str> {
        self.spec.get(key).and_then(Value::as_str)
    }

    fn ignores_failure(&self) -> bool {
        self.text("failurePolicy") == Some("Ignore")
    }

    fn timeout(&self) -> Duration {
        let seconds = self
            .spec
            .get("timeoutSeconds")
            .and_then(Value::as_u64)
            .unwrap_or(DEFAULT_TIMEOUT_SECONDS)
            .clamp(1, MAX_TIMEOUT_SECONDS);
        Duration::from_secs(seconds)
    }

    fn reinvoked(&self) -> bool {
        self.text("reinvocationPolicy") == Some("IfNeeded")
    }
}

/// The error a failed call becomes when the webhook's failurePolicy is `Fail`.
fn call_failed(name: &str, reason: &str) -> ApiError {
    ApiError::internal(format!("failed calling webhook \"{name}\": {reason}"))
}

impl Webhooks {
    /// Calls one webhook; `None` when it failed and its failurePolicy says to ignore that.
    async fn call(
        &self,
        store: &Store,
        hook: &Hook,
        request: &Request<'_>,
        object: Option<&Value>,
        mutating: bool,
    ) -> ApiResult<Option<review::Answer>> {
        let failed = |reason: String| {
            if hook.ignores_failure() {
                tracing::warn!(webhook = %hook.name, %reason, "admission webhook failed; ignored (failurePolicy Ignore)");
                Ok(None)
            } else {
                Err(call_failed(&hook.name, &reason))
            }
        };
        if hook
            .spec
            .get("matchConditions")
            .is_some_and(|c| c.as_array().is_some_and(|c| !c.is_empty()))
        {
            return failed("matchConditions (CEL) are not supported by this server".into());
        }
        let uid = uuid::Uuid::new_v4().to_string();
        let body = review::review(&uid, request, object);
        let reply = match self
            .clients
            .call(store, hook.spec.get("clientConfig"), &body, hook.timeout())
            .await
        {
            Ok(reply) => reply,
            Err(reason) => return failed(reason),
        };
        match review::answer(&hook.name, &uid, &reply, mutating) {
            Ok(answer) => Ok(Some(answer)),
            Err(reason) => failed(reason),
        }
    }

    /// The webhooks of the `plural` configurations that `request` reaches, in order.
    fn matching(
        &self,
        store: &Store,
        plural: &str,
        request: &Request<'_>,
        object: Option<&Value>,
    ) -> ApiResult<Vec<Hook>> {
        if request.group == ADMISSION_GROUP {
            return Ok(Vec::new());
        }
        let (_, configurations) = store.list(&ResKey::new(ADMISSION_GROUP, plural), None);
        if configurations.is_empty() {
            return Ok(Vec::new());
        }
        let namespaced = !request.namespace.is_empty();
        let target = Target {
            operation: request.operation,
            group: request.group,
            version: request.version,
            resource: request.resource,
            subresource: request.subresource,
            namespaced,
        };
        // The labels a namespaceSelector sees: the namespace's, or a Namespace's own.
        let namespace_labels = if namespaced {
            store
                .get(&ResKey::new("", "namespaces"), "", request.namespace)
                .and_then(|ns| ns.pointer("/metadata/labels").cloned())
        } else if request.group.is_empty() && request.resource == "namespaces" {
            object
                .or(request.old_object)
                .and_then(|o| o.pointer("/metadata/labels"))
                .cloned()
        } else {
            None
        };
        let selects_namespaces =
            namespaced || (request.group.is_empty() && request.resource == "namespaces");
        let mut hooks = Vec::new();
        // The store lists cluster-scoped objects by name: configuration name order, as upstream.
        for configuration in configurations {
            for spec in configuration
                .get("webhooks")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let matches = rules::rules_match(spec.get("rules"), &target)
                    && (!selects_namespaces
                        || rules::selector_matches(
                            spec.get("namespaceSelector"),
                            namespace_labels.as_ref(),
                        ))
                    && rules::object_selector_matches(spec, object, request.old_object);
                if !matches {
                    continue;
                }
                let name = spec
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_owned();
                let side_effects = spec
                    .get("sideEffects")
                    .and_then(Value::as_str)
                    .unwrap_or("Unknown");
                if request.dry_run && !matches!(side_effects, "None" | "NoneOnDryRun") {
                    return Err(ApiError::bad_request(format!(
                        "admission webhook \"{name}\" does not support dry run"
                    )));
                }
                hooks.push(Hook {
                    name,
                    spec: spec.clone(),
                });
            }
        }
        Ok(hooks)
    }
}

#[cfg(test)]
mod tests;
