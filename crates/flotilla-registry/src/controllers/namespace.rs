//! The namespace controller, as kube-controller-manager's: a namespace marked for deletion has its content
//! deleted, from five seconds after the deletion began (Pods first; each object honouring its own finalizers; each delete admitted as the controller's
//! ServiceAccount's, so that a validating webhook may refuse it), reports progress in kube-controller-manager's
//! five conditions (`NamespaceDeletionContentFailure` with the refusals, `NamespaceContentRemaining` naming the
//! resources left, `NamespaceFinalizersRemaining` naming their finalizers, and the two discovery ones), and once
//! nothing remains its `kubernetes` finalizer is released, which removes it. (What every
//! active namespace holds, the `default` ServiceAccount and the CA ConfigMap, is kept by `super::published`.)

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::Duration;

use flotilla_store::hub::{Event, EventType};
use serde_json::{Value, json};

use super::runtime::{Next, Reconciler, Watches};
use super::{acting_as, gone_is_fine, namespaces_key};
use crate::context::Ctx;
use crate::meta;
use crate::resource::ResourceInfo;
use crate::status::{ApiError, ApiResult};
use crate::write::delete::DeleteOpts;
use crate::write::{self, Outcome};

/// The ServiceAccount kube-controller-manager's namespace controller deletes a namespace's content as.
const NAMESPACE_CONTROLLER: &str = "namespace-controller";

/// How long after its deletion began a namespace's content is first deleted, as kube-controller-manager waits
/// (so that every API server has seen the deletion and refuses new content first). Clients rely on it: Karmada's
/// deletion-protection specs relabel a namespace and its Deployment right after deleting the namespace.
const DELETION_GRACE: Duration = Duration::from_secs(5);

/// The namespace controller; its keys are namespace names.
pub(crate) struct Namespaces;

fn namespaced_resources(ctx: &Ctx) -> Vec<Arc<ResourceInfo>> {
    let mut by_key = HashMap::new();
    for info in ctx.catalog.all().into_iter().filter(|i| i.namespaced) {
        by_key.entry(info.key()).or_insert(info);
    }
    by_key.into_values().collect()
}

fn is_terminating(ctx: &Ctx, name: &str) -> bool {
    ctx.store
        .get(&namespaces_key(), "", name)
        .is_some_and(|ns| meta::is_deleting(&ns))
}

/// What is left of a terminating namespace's grace period ([`DELETION_GRACE`]); `None` once it is over.
fn grace_left(namespace: &Value) -> Option<Duration> {
    let since = namespace
        .pointer("/metadata/deletionTimestamp")
        .and_then(Value::as_str)?
        .parse::<jiff::Timestamp>()
        .ok()?;
    let age = jiff::Timestamp::now().duration_since(since);
    let left = jiff::SignedDuration::try_from(DELETION_GRACE).ok()? - age;
    Duration::try_from(left).ok().filter(|d| !d.is_zero())
}

/// What one pass over a terminating namespace found, from which its five deletion conditions follow.
#[derive(Debug, Default)]
struct Pass {
    /// Why deletions failed, one message per resource whose deletion failed.
    failures: Vec<String>,
    /// The first of those failures, which the reconcile answers with.
    first_failure: Option<ApiError>,
    /// `<resource>.<group>` (kube's spelling, `pods.` for the core group) → objects left after deleting.
    remaining: BTreeMap<String, usize>,
    /// Finalizer → objects left that hold it.
    finalizers: BTreeMap<String, usize>,
}

/// kube-controller-manager's conditions of a terminating namespace, in its order: (type, status, reason,
/// message) for each of the five it maintains, the unproblematic ones with its own reasons and messages.
fn conditions(pass: &Pass) -> [(&'static str, &'static str, &'static str, String); 5] {
    let counted = |map: &BTreeMap<String, usize>, what: &str| {
        map.iter()
            .filter(|(_, n)| **n > 0)
            .map(|(k, n)| what.replace("{k}", k).replace("{n}", &n.to_string()))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut failures = pass.failures.clone();
    failures.sort();
    [
        (
            "NamespaceDeletionDiscoveryFailure",
            "False",
            "ResourcesDiscovered",
            "All resources successfully discovered".into(),
        ),
        (
            "NamespaceDeletionGroupVersionParsingFailure",
            "False",
            "ParsedGroupVersions",
            "All legacy kube types successfully parsed".into(),
        ),
        if failures.is_empty() {
            (
                "NamespaceDeletionContentFailure",
                "False",
                "ContentDeleted",
                "All content successfully deleted, may be waiting on finalization".into(),
            )
        } else {
            (
                "NamespaceDeletionContentFailure",
                "True",
                "ContentDeletionFailed",
                format!(
                    "Failed to delete all resource types, {} remaining: {}",
                    failures.len(),
                    failures.join(", ")
                ),
            )
        },
        if pass.remaining.values().any(|n| *n > 0) {
            (
                "NamespaceContentRemaining",
                "True",
                "SomeResourcesRemain",
                format!(
                    "Some resources are remaining: {}",
                    counted(&pass.remaining, "{k} has {n} resource instances")
                ),
            )
        } else {
            (
                "NamespaceContentRemaining",
                "False",
                "ContentRemoved",
                "All content successfully removed".into(),
            )
        },
        if pass.finalizers.values().any(|n| *n > 0) {
            (
                "NamespaceFinalizersRemaining",
                "True",
                "SomeFinalizersRemain",
                format!(
                    "Some content in the namespace has finalizers remaining: {}",
                    counted(&pass.finalizers, "{k} in {n} resource instances")
                ),
            )
        } else {
            (
                "NamespaceFinalizersRemaining",
                "False",
                "ContentHasNoFinalizers",
                "All content-preserving finalizers finished".into(),
            )
        },
    ]
}

/// Writes the namespace's deletion conditions as kube-controller-manager does: a condition missing is added, one
/// whose status, reason or message changed is replaced (with a new transition time), the rest are kept as they
/// are.
async fn set_conditions(ctx: &Ctx, name: &str, pass: &Pass) -> ApiResult<()> {
    let wanted = conditions(pass);
    write::guaranteed_update(&ctx.store, &namespaces_key(), "", name, false, |cur| {
        let Some(cur) = cur else {
            return Ok(Outcome::Unchanged);
        };
        let mut list: Vec<Value> = cur
            .pointer("/status/conditions")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let mut changed = false;
        for (ctype, status, reason, message) in &wanted {
            let condition = json!({"type": ctype, "status": status, "lastTransitionTime": meta::now(), "reason": reason, "message": message});
            let old = list
                .iter_mut()
                .find(|c| c.get("type").and_then(Value::as_str) == Some(ctype));
            match old {
                None => {
                    list.push(condition);
                    changed = true;
                }
                Some(old) => {
                    let same = |k: &str, v: &str| old.get(k).and_then(Value::as_str) == Some(v);
                    if !(same("status", status) && same("reason", reason) && same("message", message)) {
                        *old = condition;
                        changed = true;
                    }
                }
            }
        }
        if !changed {
            return Ok(Outcome::Unchanged);
        }
        let mut new = cur.as_ref().clone();
        new["status"]["conditions"] = json!(list);
        Ok(Outcome::Put(new))
    })
    .await
    .map(|_| ())
}

/// Deletes what is left of one resource in the namespace, as the controller's ServiceAccount, and notes what
/// remains afterwards (or, when a deletion failed, why).
async fn delete_resource(ctx: &Ctx, info: &ResourceInfo, name: &str, pass: &mut Pass) {
    let (_, items) = ctx.store.list(&info.key(), Some(name));
    for obj in items.iter().filter(|o| !meta::is_deleting(o)) {
        let n = meta::meta_str(obj, "name").unwrap_or("");
        let opts = DeleteOpts {
            requester: Some(acting_as(
                NAMESPACE_CONTROLLER,
                json!({"propagationPolicy": "Background"}),
            )),
            ..DeleteOpts::default()
        };
        if let Err(e) = gone_is_fine(write::delete(ctx, info, name, n, &opts).await) {
            // As the controller's delete of a collection stops at its first failure.
            pass.failures.push(e.message.clone());
            pass.first_failure.get_or_insert(e);
            return;
        }
    }
    let (_, left) = ctx.store.list(&info.key(), Some(name));
    if left.is_empty() {
        return;
    }
    pass.remaining
        .insert(format!("{}.{}", info.plural, info.group), left.len());
    for finalizer in left.iter().flat_map(|o| meta::finalizers(o)) {
        *pass.finalizers.entry(finalizer).or_default() += 1;
    }
}

/// Releases the `kubernetes` finalizer of an emptied namespace, which removes it when no other finalizer holds
/// it.
async fn release(ctx: &Ctx, name: &str) -> ApiResult<()> {
    write::guaranteed_update(&ctx.store, &namespaces_key(), "", name, false, |cur| {
        let Some(cur) = cur.filter(|c| meta::is_deleting(c)) else {
            return Ok(Outcome::Unchanged);
        };
        let mut new = cur.as_ref().clone();
        new["spec"]["finalizers"] = json!([]);
        if meta::finalizers(&new).is_empty() {
            return Ok(Outcome::Delete);
        }
        Ok(Outcome::Put(new))
    })
    .await
    .map(|_| ())
}

impl Reconciler for Namespaces {
    type Key = String;

    fn name(&self) -> &'static str {
        "namespace"
    }

    /// Every change: a terminating namespace is looked at again when an object of its content is gone.
    fn watches(&self) -> Watches {
        Watches::All
    }

    fn resync(&mut self, ctx: &Ctx) -> Vec<String> {
        ctx.store
            .list(&namespaces_key(), None)
            .1
            .iter()
            .filter(|ns| meta::is_deleting(ns))
            .filter_map(|ns| meta::meta_str(ns, "name").map(str::to_string))
            .collect()
    }

    fn observe(&mut self, ctx: &Ctx, ev: &Event) -> Vec<String> {
        if ev.res == namespaces_key() {
            let deleting = ev.kind != EventType::Deleted && meta::is_deleting(&ev.object);
            return deleting
                .then(|| meta::meta_str(&ev.object, "name").map(str::to_string))
                .flatten()
                .into_iter()
                .collect();
        }
        // Only an object gone can let a terminating namespace go. Other changes of its content are left to the
        // retries, as kube-controller-manager's namespace controller, which watches namespaces only, leaves
        // them: a delete refused by a webhook is retried after a back-off, not at once when the refusing label
        // goes, so a client that lifts a protection and then relabels the namespace still finds it.
        if ev.kind != EventType::Deleted {
            return Vec::new();
        }
        match meta::meta_str(&ev.object, "namespace") {
            Some(ns) if !ns.is_empty() && is_terminating(ctx, ns) => vec![ns.to_string()],
            _ => Vec::new(),
        }
    }

    /// A refused delete (a webhook protecting an object) is retried after the back-off, as kube-controller-manager
    /// retries it: the refusal lifts when the object's protection does, which no change of the namespace tells.
    fn waits_for_change(&self, _error: &ApiError) -> bool {
        false
    }

    /// One pass of kube-controller-manager's namespace deleter, once the namespace's grace period is over: Pods first (nothing else is deleted while Pods
    /// remain), then every other resource; the five conditions written; the `kubernetes` finalizer released once
    /// nothing remains and nothing failed. A failure (a webhook refusing a delete) is the reconcile's error.
    async fn reconcile(&self, ctx: &Arc<Ctx>, name: &String) -> Result<Next, ApiError> {
        let Some(namespace) = ctx
            .store
            .get(&namespaces_key(), "", name)
            .filter(|ns| meta::is_deleting(ns))
        else {
            return Ok(Next::Done);
        };
        if let Some(left) = grace_left(&namespace) {
            return Ok(Next::After(left));
        }
        let resources = namespaced_resources(ctx);
        let is_pods = |i: &ResourceInfo| i.group.is_empty() && i.plural == "pods";
        let mut pass = Pass::default();
        for info in resources.iter().filter(|i| is_pods(i)) {
            delete_resource(ctx, info, name, &mut pass).await;
        }
        if pass.remaining.is_empty() {
            for info in resources.iter().filter(|i| !is_pods(i)) {
                delete_resource(ctx, info, name, &mut pass).await;
            }
        }
        set_conditions(ctx, name, &pass).await?;
        if let Some(first) = pass.first_failure {
            return Err(first);
        }
        if pass.remaining.is_empty() {
            release(ctx, name).await?;
        }
        Ok(Next::Done)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use flotilla_store::{Change, Expect, ResKey};

    use super::*;

    fn event(kind: EventType, object: Value) -> Event {
        Event {
            kind,
            rv: 1,
            res: ResKey::new("apps", "deployments"),
            object: Arc::new(object),
            prev: None,
        }
    }

    /// kube-controller-manager's namespace controller watches namespaces only, so lifting a protection that
    /// refused its delete does not bring the namespace back at once (a client may still relabel it); an object
    /// gone may let the namespace go, and is taken at once.
    #[tokio::test]
    async fn content_that_changes_waits_for_the_retry_and_content_gone_is_taken_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = Ctx::for_test(dir.path());
        let terminating = json!({"apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": "held", "deletionTimestamp": "2026-01-01T00:00:00Z"},
            "spec": {"finalizers": ["kubernetes"]}});
        ctx.store
            .commit(
                &namespaces_key(),
                "",
                "held",
                Expect::Absent,
                Change::Put(terminating),
            )
            .await
            .unwrap();
        let web = json!({"metadata": {"name": "web", "namespace": "held"}});
        let mut controller = Namespaces;
        assert!(
            controller
                .observe(&ctx, &event(EventType::Modified, web.clone()))
                .is_empty()
        );
        assert_eq!(
            controller.observe(&ctx, &event(EventType::Deleted, web)),
            vec!["held".to_string()]
        );
        assert!(!controller.waits_for_change(&ApiError::forbidden("protected")));
    }
}
