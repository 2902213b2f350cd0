//! The binding controllers for ResourceBindings and ClusterResourceBindings, triggered by a binding's spec
//! changes and by the override policies that select its template: one Work per target cluster, with replicas revised and overrides applied; orphan Works removed; on deletion,
//! every Work removed before the binding's finalizer.

pub(crate) mod build;
mod reconcile;
#[cfg(test)]
mod tests;

use std::sync::Arc;

use flotilla_api::cluster::v1alpha1::Cluster;
use flotilla_api::policy::v1alpha1::{ClusterOverridePolicy, OverridePolicy, ResourceSelector};
use flotilla_api::work::v1alpha1::Work;
use flotilla_api::work::v1alpha2::{ClusterResourceBinding, ResourceBinding};
use flotilla_core::selector::{TemplateRef, selectors_match};
use kube::ResourceExt;
use tokio_util::sync::CancellationToken;

use crate::bindings;
use crate::events::EventRecorder;
use crate::features::FeatureGates;
use crate::interpreter::Interpreter;
use crate::options::Options;
use crate::resources::Resources;
use crate::runtime::{self, Change, Controller, Informer, Trigger};
use crate::shared::{ControlPlane, Shared};
use crate::templates::{TemplateKey, Templates, with_type};

/// Name of the controller (metrics, events `flotilla-binding-controller`).
pub(crate) const NAME: &str = "binding-controller";

/// What the binding controller needs.
pub(crate) struct Context {
    /// The control plane (bindings, Works, Clusters, override policies; the Works it writes).
    pub control: ControlPlane,
    /// Served resources, to find a template's cached copy when override policies change.
    pub resources: Resources,
    /// Where each binding's template is read.
    pub templates: Templates,
    /// Revises each cluster's replicas in its copy of the template (ReviseReplica).
    pub interpreter: Arc<dyn Interpreter>,
    /// Feature gates: `StatefulFailoverInjection` puts a failed-over copy's preserved state on its labels.
    pub feature_gates: FeatureGates,
}

impl Context {
    /// The binding controller's context: its handles from `shared`, its settings from `options`.
    pub(crate) fn new(shared: &Shared, options: &Options) -> Self {
        Context {
            control: shared.control.clone(),
            resources: shared.resources.clone(),
            templates: shared.templates(),
            interpreter: shared.interpreter.clone(),
            feature_gates: options.feature_gates.clone(),
        }
    }
}

/// The binding controller's shared state.
pub(crate) struct BindingController {
    ctx: Context,
    recorder: EventRecorder,
    rb: Arc<Informer<ResourceBinding>>,
    crb: Arc<Informer<ClusterResourceBinding>>,
    works: Arc<Informer<Work>>,
    clusters: Arc<Informer<Cluster>>,
    op: Arc<Informer<OverridePolicy>>,
    cop: Arc<Informer<ClusterOverridePolicy>>,
}

/// Runs the binding controller (one for ResourceBindings, one for ClusterResourceBindings) until `shutdown`
/// is cancelled.
pub(crate) async fn run(ctx: Context, shutdown: CancellationToken) {
    let controller = Arc::new(BindingController {
        recorder: ctx.control.events.recorder(NAME),
        rb: ctx.control.informers.typed(),
        crb: ctx.control.informers.typed(),
        works: ctx.control.informers.typed(),
        clusters: ctx.control.informers.typed(),
        op: ctx.control.informers.typed(),
        cop: ctx.control.informers.typed(),
        ctx,
    });
    let synced = async {
        controller.works.wait_synced().await;
        controller.clusters.wait_synced().await;
        controller.op.wait_synced().await;
        controller.cop.wait_synced().await;
    };
    tokio::select! {
        () = synced => {}
        () = shutdown.cancelled() => return,
    }
    let rb = Controller::new(NAME, &controller.rb, &controller.ctx.control.runtime);
    let crb = Controller::new(NAME, &controller.crb, &controller.ctx.control.runtime);
    rb.reconcile_changes(&controller.rb, runtime::spec_changed);
    crb.reconcile_changes(&controller.crb, runtime::spec_changed);
    controller.watch_overrides(&rb.trigger(), &crb.trigger());
    bindings::run_both(
        rb,
        crb,
        shutdown,
        controller,
        |controller, key| async move { controller.reconcile(key).await },
    )
    .await;
}

impl BindingController {
    /// Override policies change what the bindings they select render: those bindings are synced again.
    fn watch_overrides(
        self: &Arc<Self>,
        rb: &Trigger<ResourceBinding>,
        crb: &Trigger<ClusterResourceBinding>,
    ) {
        let (this, trigger) = (Arc::downgrade(self), rb.clone());
        self.op.add_handler(move |change| {
            let Some(this) = this.upgrade() else { return };
            for op in changed_versions(&change) {
                let namespace = op.namespace().unwrap_or_default();
                this.enqueue_matching_rbs(&trigger, Some(&namespace), &op.spec.resource_selectors);
            }
        });
        let (this, rb, crb) = (Arc::downgrade(self), rb.clone(), crb.clone());
        self.cop.add_handler(move |change| {
            let Some(this) = this.upgrade() else { return };
            for cop in changed_versions(&change) {
                this.enqueue_matching_rbs(&rb, None, &cop.spec.resource_selectors);
                this.enqueue_matching_crbs(&crb, &cop.spec.resource_selectors);
            }
        });
    }

    /// Enqueues RBs (of `namespace`, or all) whose template one of `selectors` matches (all of them when
    /// there are no selectors). A template not in any cache counts as matching: an extra sync is harmless.
    fn enqueue_matching_rbs(
        &self,
        trigger: &Trigger<ResourceBinding>,
        namespace: Option<&str>,
        selectors: &[ResourceSelector],
    ) {
        let bindings = match namespace {
            Some(ns) => self.rb.list_namespace(ns),
            None => self.rb.list(),
        };
        for rb in bindings {
            let namespace = rb.namespace().unwrap_or_default();
            if self.template_matches(&rb.spec.resource, &namespace, selectors) {
                trigger.reconcile(&rb);
            }
        }
    }

    fn enqueue_matching_crbs(
        &self,
        trigger: &Trigger<ClusterResourceBinding>,
        selectors: &[ResourceSelector],
    ) {
        for crb in self.crb.list() {
            if self.template_matches(&crb.spec.resource, "", selectors) {
                trigger.reconcile(&crb);
            }
        }
    }

    fn template_matches(
        &self,
        resource: &flotilla_api::work::v1alpha2::ObjectReference,
        namespace: &str,
        selectors: &[ResourceSelector],
    ) -> bool {
        if selectors.is_empty() {
            return true;
        }
        let key = TemplateKey {
            api_version: resource.api_version.clone(),
            kind: resource.kind.clone(),
            namespace: if resource.namespace.is_empty() {
                namespace.to_owned()
            } else {
                resource.namespace.clone()
            },
            name: resource.name.clone(),
        };
        let cached = self
            .ctx
            .resources
            .get_by_api_version(&key.api_version, &key.kind)
            .and_then(|served| {
                self.ctx
                    .control
                    .informers
                    .dynamic_if_started(&served.resource)
            })
            .and_then(|informer| informer.get(&key.namespace, &key.name));
        match cached {
            Some(obj) => selectors_match(
                selectors,
                &TemplateRef::from_value(&with_type(&obj, &key.api_version, &key.kind)),
            ),
            None => true,
        }
    }
}

/// The object versions an override-policy change concerns (old and new for updates, so narrowing a
/// selector re-renders the Works it no longer applies to).
fn changed_versions<'a, K>(change: &Change<'a, K>) -> Vec<&'a Arc<K>> {
    match change {
        Change::Added(obj) | Change::Deleted(obj) => vec![*obj],
        Change::Updated { old, new } => vec![*old, *new],
    }
}
