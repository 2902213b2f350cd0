//! The namespace sync controller: every namespace of the control plane, except
//! reserved, `default`, skipped and opted-out ones, goes to every member cluster through a Work owned by the
//! Namespace (so deleting the namespace garbage-collects its Works), with ClusterOverridePolicies applied.

use std::sync::Arc;

use flotilla_api::cluster::v1alpha1::Cluster;
use flotilla_api::names::{finalizers, labels, namespaces};
use flotilla_api::policy::v1alpha1::ClusterOverridePolicy;
use flotilla_core::names::work_name;
use flotilla_core::overrides::apply_overrides;
use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::ResourceExt;
use regex::Regex;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::detector::filter::namespace_skipped;
use crate::error::{Error, Result};
use crate::objects;
use crate::options::Options;
use crate::runtime::{Action, Change, Controller, Informer};
use crate::shared::{ControlPlane, Shared};
use crate::works::{DesiredWork, create_or_update_work, owned_work};

/// Name of the controller (metrics).
pub(crate) const NAME: &str = "namespace-sync-controller";

/// Whether a namespace is propagated automatically: not reserved, not `default`, not matching a skip pattern,
/// not being deleted, and not labelled `namespace.karmada.io/skip-auto-propagation: "true"`
/// (case-insensitive).
pub(crate) fn propagated(skipped: &[Regex], namespace: &Namespace) -> bool {
    let name = namespace.name_any();
    let opted_out = namespace
        .labels()
        .get(labels::SKIP_AUTO_PROPAGATION)
        .is_some_and(|v| v.eq_ignore_ascii_case("true"));
    name != namespaces::DEFAULT
        && !namespace_skipped(skipped, &name)
        && namespace.metadata.deletion_timestamp.is_none()
        && !opted_out
}

/// The Work carrying `namespace` to `cluster` (before ClusterOverridePolicies, which the caller applies to
/// `manifest` first).
pub(crate) fn namespace_work(
    namespace: &Namespace,
    cluster: &str,
    manifest: Value,
    annotations: std::collections::BTreeMap<String, String>,
) -> DesiredWork {
    let owner = OwnerReference {
        api_version: "v1".to_owned(),
        kind: "Namespace".to_owned(),
        name: namespace.name_any(),
        uid: namespace.metadata.uid.clone().unwrap_or_default(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    };
    let uid = namespace.metadata.uid.as_deref().unwrap_or_default();
    let name = work_name("Namespace", &namespace.name_any(), "");
    owned_work(cluster, name, manifest, uid, owner, annotations)
}

/// What the namespace sync controller needs.
pub(crate) struct Context {
    /// The control plane (Namespaces, Clusters, ClusterOverridePolicies; the Works it writes), its reconciles.
    pub control: ControlPlane,
    /// Namespaces never propagated beyond the reserved ones (`--skipped-propagating-namespaces`).
    pub skipped_propagating_namespaces: Vec<Regex>,
}

impl Context {
    /// The namespace sync controller's context: its handles from `shared`, its settings from `options`.
    pub(crate) fn new(shared: &Shared, options: &Options) -> Self {
        Context {
            control: shared.control.clone(),
            skipped_propagating_namespaces: options.skipped_propagating_namespaces.clone(),
        }
    }
}

struct NamespaceSync {
    ctx: Context,
    namespaces: Arc<Informer<Namespace>>,
    clusters: Arc<Informer<Cluster>>,
    cop: Arc<Informer<ClusterOverridePolicy>>,
}

/// Runs the namespace sync controller until `shutdown` is cancelled.
pub(crate) async fn run(ctx: Context, shutdown: CancellationToken) {
    let controller = Arc::new(NamespaceSync {
        namespaces: ctx.control.informers.typed(),
        clusters: ctx.control.informers.typed(),
        cop: ctx.control.informers.typed(),
        ctx,
    });
    tokio::select! {
        () = async { controller.clusters.wait_synced().await; controller.cop.wait_synced().await } => {}
        () = shutdown.cancelled() => return,
    }
    let runner = Controller::new(
        NAME,
        &controller.namespaces,
        &controller.ctx.control.runtime,
    );
    runner.reconcile_changes(&controller.namespaces, |_| true);
    let (trigger, this) = (runner.trigger(), Arc::downgrade(&controller));
    controller.clusters.add_handler(move |change| {
        if let (Change::Added(_), Some(this)) = (change, this.upgrade()) {
            for ns in this.namespaces.list() {
                trigger.reconcile(&ns);
            }
        }
    });
    let (trigger, this) = (runner.trigger(), Arc::downgrade(&controller));
    controller.cop.add_handler(move |change| {
        let Some(this) = this.upgrade() else { return };
        let policies = match change {
            Change::Added(p) | Change::Deleted(p) => vec![p],
            Change::Updated { old, new } => vec![old, new],
        };
        for policy in policies {
            for selector in &policy.spec.resource_selectors {
                if selector.api_version != "v1" || selector.kind != "Namespace" {
                    continue;
                }
                if selector.name.is_empty() {
                    for ns in this.namespaces.list() {
                        trigger.reconcile(&ns);
                    }
                } else {
                    trigger.reconcile_ref(trigger.object_ref("", &selector.name));
                }
            }
        }
    });
    runner
        .run(shutdown, controller, |controller, namespace| async move {
            controller.reconcile(&namespace.name_any()).await
        })
        .await;
}

impl NamespaceSync {
    async fn reconcile(&self, name: &str) -> Result<Action> {
        let Some(namespace) = self.namespaces.get("", name) else {
            return Ok(Action::await_change());
        };
        if !propagated(&self.ctx.skipped_propagating_namespaces, &namespace) {
            return Ok(Action::await_change());
        }
        let mut template = objects::to_value(namespace.as_ref(), &format!("Namespace {name}"))?;
        if let Some(map) = template.as_object_mut() {
            map.insert("apiVersion".to_owned(), Value::String("v1".to_owned()));
            map.insert("kind".to_owned(), Value::String("Namespace".to_owned()));
        }
        let cops: Vec<ClusterOverridePolicy> =
            self.cop.list().iter().map(|p| p.as_ref().clone()).collect();
        let mut errors = Vec::new();
        for cluster in self.clusters.list() {
            let mut manifest = template.clone();
            let applied = match apply_overrides(&mut manifest, &cluster, &cops, &[]) {
                Ok(applied) => applied,
                Err(err) => {
                    errors.push(Error::invalid(
                        format!("Namespace {name}"),
                        flotilla_client::api_error::error_chain(&err),
                    ));
                    continue;
                }
            };
            let annotations = applied.annotations().map_err(|source| Error::Decode {
                object: "applied overrides".into(),
                source,
            })?;
            let desired = namespace_work(&namespace, &cluster.name_any(), manifest, annotations);
            if let Err(err) = create_or_update_work(
                &self.ctx.control.client,
                &desired,
                finalizers::EXECUTION,
                false,
            )
            .await
            {
                errors.push(err);
            }
        }
        Error::aggregate(errors).map(|()| Action::await_change())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::Options;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    fn mk_namespace(name: &str, labels: Value) -> Namespace {
        serde_json::from_value(
            json!({"metadata": {"name": name, "uid": "ns-uid", "labels": labels}}),
        )
        .unwrap()
    }

    #[test]
    fn reserved_default_kube_and_opted_out_namespaces_stay_home() {
        let options = Options::default();
        assert!(propagated(
            &options.skipped_propagating_namespaces,
            &mk_namespace("app", json!({}))
        ));
        for name in [
            "default",
            "kube-system",
            "karmada-system",
            "karmada-cluster",
            "karmada-es-m1",
        ] {
            assert!(
                !propagated(
                    &options.skipped_propagating_namespaces,
                    &mk_namespace(name, json!({}))
                ),
                "{name}"
            );
        }
        let opted_out = mk_namespace(
            "app",
            json!({"namespace.karmada.io/skip-auto-propagation": "TRUE"}),
        );
        assert!(!propagated(
            &options.skipped_propagating_namespaces,
            &opted_out
        ));
    }

    #[test]
    fn namespace_works_are_owned_by_the_namespace() {
        let ns = mk_namespace("app", json!({"team": "a"}));
        let manifest = json!({"apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": "app", "uid": "ns-uid", "resourceVersion": "5", "labels": {"team": "a"}},
            "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}});
        let work = namespace_work(&ns, "member1", manifest, Default::default());
        assert_eq!(work.namespace, "karmada-es-member1");
        assert_eq!(work.name, work_name("Namespace", "app", ""));
        assert_eq!(work.owner_references.as_ref().unwrap()[0].uid, "ns-uid");
        assert_eq!(
            work.manifest["metadata"]["labels"],
            json!({"team": "a", "karmada.io/managed": "true"})
        );
        assert_eq!(
            work.manifest["metadata"]["annotations"]["resourcetemplate.karmada.io/uid"],
            json!("ns-uid")
        );
        assert!(
            work.manifest["metadata"]["annotations"]
                .get("work.karmada.io/conflict-resolution")
                .is_none()
        );
        assert!(work.manifest.get("status").is_none());
    }
}
