//! The resource detector: watches every propagatable resource of the control plane,
//! matches templates to PropagationPolicies and ClusterPropagationPolicies, claims them and keeps their
//! ResourceBindings and ClusterResourceBindings current; reacts to policy changes and deletions.
//!
//! Invariants: a policy without a permanent id is never applied (the policy normaliser gives every policy one
//! before anything else acts on it); the detector never touches a binding's `clusters`, `requiredBy`,
//! `gracefulEvictionTasks`, `rescheduleTriggeredAt` or status.

pub(crate) mod build;
pub(crate) mod filter;
mod policy;
mod preemption;
mod reconcile;
mod referenced;
#[cfg(test)]
mod tests;

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use flotilla_api::policy::v1alpha1::{
    ActivationPreference, ClusterOverridePolicy, ClusterPropagationPolicy, OverridePolicy,
    PropagationPolicy, PropagationSpec,
};
use flotilla_api::work::v1alpha2::{ClusterResourceBinding, ResourceBinding};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{ApiResource, DynamicObject};
use kube::core::object::HasSpec;
use kube::runtime::reflector::ObjectRef;
use kube::{Resource, ResourceExt};
use regex::Regex;
use tokio::sync::Notify;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use self::filter::{
    Claim, SkippedApis, claim_of, template_event_passes, update_is_significant, watchable,
};
use self::referenced::ReferencedVersions;
use crate::error::Result;
use crate::events::EventRecorder;
use crate::features::{Feature, FeatureGates};
use crate::interpreter::Interpreter;
use crate::options::Options;
use crate::resources::Resources;
use crate::runtime::{self, Action, Change, Controller, Informer, Pool, Trigger};
use crate::shared::{ControlPlane, Shared};
use crate::templates::{TemplateKey, Templates, with_type};

/// Name of the controller (metrics, events `flotilla-resource-detector`).
pub(crate) const NAME: &str = "resource-detector";
const POLICY_CONTROLLER: &str = "propagation-policy";

/// One template to reconcile; `lazy` marks a change Karmada itself made to a template of a Lazy policy
/// (`activationPreference: Lazy`), which only claims: the binding follows the policy at the user's next change.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct TemplateItem {
    /// The template.
    pub key: TemplateKey,
    /// Whether only the claim may be applied.
    pub lazy: bool,
}

impl std::fmt::Display for TemplateItem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}{}", self.key, if self.lazy { " (lazy)" } else { "" })
    }
}

/// A PropagationPolicy (`namespace` set) or ClusterPropagationPolicy.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct PolicyKey {
    /// Namespace of a PropagationPolicy; `None` for a ClusterPropagationPolicy.
    pub namespace: Option<String>,
    /// Name.
    pub name: String,
}

impl std::fmt::Display for PolicyKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.namespace {
            Some(ns) => write!(f, "PropagationPolicy {ns}/{}", self.name),
            None => write!(f, "ClusterPropagationPolicy {}", self.name),
        }
    }
}

/// A resource the detector watches: its API and the controller of its templates.
struct Watched {
    resource: ApiResource,
    trigger: Trigger<DynamicObject>,
    stop: CancellationToken,
    task: JoinHandle<()>,
}

/// What the resource detector needs.
pub(crate) struct Context {
    /// The control plane (policies, bindings, every propagatable resource), its Events and reconciles.
    pub control: ControlPlane,
    /// Served resources: what the detector watches, refreshed by discovery.
    pub resources: Resources,
    /// Where templates are read and claimed.
    pub templates: Templates,
    /// Replicas and components of a template for its binding (InterpretReplica, InterpretComponent).
    pub interpreter: Arc<dyn Interpreter>,
    /// Feature gates: policy preemption, workload affinity, multiple pod templates.
    pub feature_gates: FeatureGates,
    /// Namespaces whose templates are never propagated, beyond the reserved ones
    /// (`--skipped-propagating-namespaces`).
    pub skipped_propagating_namespaces: Vec<Regex>,
    /// APIs never propagated beyond Karmada's own (`--skipped-propagating-apis`).
    pub skipped_propagating_apis: String,
    /// How often it runs discovery again (CRD changes trigger it sooner).
    pub discovery_interval: Duration,
}

impl Context {
    /// The resource detector's context: its handles from `shared`, its settings from `options`.
    pub(crate) fn new(shared: &Shared, options: &Options) -> Self {
        Context {
            control: shared.control.clone(),
            resources: shared.resources.clone(),
            templates: shared.templates(),
            interpreter: shared.interpreter.clone(),
            feature_gates: options.feature_gates.clone(),
            skipped_propagating_namespaces: options.skipped_propagating_namespaces.clone(),
            skipped_propagating_apis: options.skipped_propagating_apis.clone(),
            discovery_interval: options.discovery_interval,
        }
    }
}

/// The detector's shared state.
pub(crate) struct Detector {
    ctx: Context,
    recorder: EventRecorder,
    waiting: Mutex<HashSet<TemplateKey>>,
    /// The template version each binding names (see [`referenced`]).
    referenced: ReferencedVersions,
    /// Whether every request of a template since its last reconcile was a Lazy-only change.
    lazy: Mutex<HashMap<TemplateKey, bool>>,
    /// Template reconciles of every kind share the detector's worker count, as one queue would.
    permits: Arc<Pool>,
    skipped: SkippedApis,
    watched: Mutex<HashMap<String, Watched>>,
    pp: Arc<Informer<PropagationPolicy>>,
    cpp: Arc<Informer<ClusterPropagationPolicy>>,
    op: Arc<Informer<OverridePolicy>>,
    cop: Arc<Informer<ClusterOverridePolicy>>,
    rb: Arc<Informer<ResourceBinding>>,
    crb: Arc<Informer<ClusterResourceBinding>>,
}

/// Runs the detector until `shutdown` is cancelled.
pub(crate) async fn run(ctx: Context, shutdown: CancellationToken) {
    let detector = Arc::new(Detector {
        recorder: ctx.control.events.recorder(NAME),
        waiting: Mutex::default(),
        referenced: ReferencedVersions::default(),
        lazy: Mutex::default(),
        permits: Pool::new(ctx.control.runtime.workers),
        skipped: SkippedApis::parse(&ctx.skipped_propagating_apis),
        watched: Mutex::default(),
        pp: ctx.control.informers.typed(),
        cpp: ctx.control.informers.typed(),
        op: ctx.control.informers.typed(),
        cop: ctx.control.informers.typed(),
        rb: ctx.control.informers.typed(),
        crb: ctx.control.informers.typed(),
        ctx,
    });
    let pp = Controller::new(
        POLICY_CONTROLLER,
        &detector.pp,
        &detector.ctx.control.runtime,
    )
    .workers(2);
    let cpp = Controller::new(
        POLICY_CONTROLLER,
        &detector.cpp,
        &detector.ctx.control.runtime,
    )
    .workers(2);
    pp.reconcile_changes(&detector.pp, |change| {
        policy_relevant(
            change,
            flotilla_api::names::labels::PROPAGATION_POLICY_PERMANENT_ID,
        )
    });
    cpp.reconcile_changes(&detector.cpp, |change| {
        policy_relevant(
            change,
            flotilla_api::names::labels::CLUSTER_PROPAGATION_POLICY_PERMANENT_ID,
        )
    });
    if detector
        .ctx
        .feature_gates
        .enabled(Feature::PropagationPolicyPreemption)
    {
        let (informer, trigger) = (detector.pp.clone(), pp.trigger());
        detector.pp.add_handler(move |change| {
            if let Some(priorities) = lowered_priority(change) {
                let namespace = change.object().namespace().unwrap_or_default();
                let policies = informer.list_namespace(&namespace);
                preemption::requeue_deprioritised(policies, priorities, &trigger);
            }
        });
        let (informer, trigger) = (detector.cpp.clone(), cpp.trigger());
        detector.cpp.add_handler(move |change| {
            if let Some(priorities) = lowered_priority(change) {
                preemption::requeue_deprioritised(informer.list(), priorities, &trigger);
            }
        });
    }
    let synced = async {
        detector.pp.wait_synced().await;
        detector.cpp.wait_synced().await;
        detector.op.wait_synced().await;
        detector.cop.wait_synced().await;
        detector.rb.wait_synced().await;
        detector.crb.wait_synced().await;
    };
    tokio::select! {
        () = synced => {}
        () = shutdown.cancelled() => return,
    }

    let discovery = tokio::spawn(detector.clone().discovery_loop(shutdown.clone()));
    tokio::join!(
        pp.run(
            shutdown.clone(),
            detector.clone(),
            |detector, policy| async move {
                let key = PolicyKey {
                    namespace: Some(policy.namespace().unwrap_or_default()),
                    name: policy.name_any(),
                };
                detector.reconcile_policy(key).await
            }
        ),
        cpp.run(
            shutdown.clone(),
            detector.clone(),
            |detector, policy| async move {
                let key = PolicyKey {
                    namespace: None,
                    name: policy.name_any(),
                };
                detector.reconcile_policy(key).await
            }
        ),
    );
    discovery.abort();
    let watched: Vec<Watched> = detector.watched().drain().map(|(_, w)| w).collect();
    for watched in watched {
        watched.stop.cancel();
        let _ = watched.task.await;
    }
}

/// Whether a policy change asks for a policy reconcile: creation, generation change, the start of deletion,
/// its permanent id changing, or its finalizers changing.
fn policy_relevant<K: Resource>(change: &Change<'_, K>, id_label: &str) -> bool {
    runtime::spec_changed(change)
        || matches!(change, Change::Updated { old, new }
            if old.labels().get(id_label) != new.labels().get(id_label)
                || old.finalizers() != new.finalizers())
}

/// `(old, new)` priorities of a policy update that lowered its priority.
fn lowered_priority<K>(change: Change<'_, K>) -> Option<(i32, i32)>
where
    K: Resource + HasSpec<Spec = PropagationSpec>,
{
    match change {
        Change::Updated { old, new } if new.spec().priority < old.spec().priority => {
            Some((old.spec().priority, new.spec().priority))
        }
        _ => None,
    }
}

impl Detector {
    fn waiting(&self) -> std::sync::MutexGuard<'_, HashSet<TemplateKey>> {
        self.waiting.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn watched(&self) -> std::sync::MutexGuard<'_, HashMap<String, Watched>> {
        self.watched.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn lazy(&self) -> std::sync::MutexGuard<'_, HashMap<TemplateKey, bool>> {
        self.lazy.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Requests a reconcile of template `key`; `lazy` marks a change Karmada itself made to a template of a
    /// Lazy policy, which only claims (a reconcile is lazy only if every request since the last one was).
    pub(super) fn enqueue_template(&self, key: TemplateKey, lazy: bool) {
        let watched = self.watched();
        let Some(found) = watched
            .values()
            .find(|w| w.resource.api_version == key.api_version && w.resource.kind == key.kind)
        else {
            return;
        };
        let object = found.trigger.object_ref(&key.namespace, &key.name);
        self.request(&found.trigger, object, key, lazy);
    }

    fn request(
        &self,
        trigger: &Trigger<DynamicObject>,
        object: ObjectRef<DynamicObject>,
        key: TemplateKey,
        lazy: bool,
    ) {
        self.lazy()
            .entry(key)
            .and_modify(|only_lazy| *only_lazy &= lazy)
            .or_insert(lazy);
        trigger.reconcile_ref(object);
    }

    /// Runs discovery periodically and whenever CRDs change, and keeps one informer and template controller
    /// per watchable resource.
    async fn discovery_loop(self: Arc<Self>, shutdown: CancellationToken) {
        let crd_changed = Arc::new(Notify::new());
        let crds = self
            .ctx
            .control
            .informers
            .typed::<CustomResourceDefinition>();
        crds.add_handler({
            let notify = crd_changed.clone();
            move |_| notify.notify_one()
        });
        loop {
            if let Err(err) = self.ctx.resources.refresh().await {
                tracing::warn!(error = %err.message(), "discovery failed");
            }
            self.sync_watches(&shutdown);
            tokio::select! {
                () = tokio::time::sleep(self.ctx.discovery_interval) => {}
                () = crd_changed.notified() => {}
                () = shutdown.cancelled() => return,
            }
        }
    }

    fn sync_watches(self: &Arc<Self>, shutdown: &CancellationToken) {
        let wanted: HashMap<String, ApiResource> = self
            .ctx
            .resources
            .all()
            .into_iter()
            .filter(|served| watchable(served, &self.skipped))
            .map(|served| {
                (
                    format!("{}/{}", served.resource.api_version, served.resource.plural),
                    served.resource,
                )
            })
            .collect();
        let mut watched = self.watched();
        watched.retain(|key, entry| {
            let keep = wanted.contains_key(key);
            if !keep {
                entry.stop.cancel();
                self.ctx.control.informers.stop_dynamic(&entry.resource);
            }
            keep
        });
        for (key, resource) in wanted {
            if watched.contains_key(&key) {
                continue;
            }
            let informer = self.ctx.control.informers.dynamic(&resource);
            let runner = Controller::new(NAME, &informer, &self.ctx.control.runtime)
                .permits(self.permits.clone());
            let trigger = runner.trigger();
            let detector = Arc::downgrade(self);
            let (api_version, kind) = (resource.api_version.clone(), resource.kind.clone());
            informer.add_handler({
                let trigger = trigger.clone();
                move |change| {
                    if let Some(detector) = detector.upgrade() {
                        detector.on_template_change(&api_version, &kind, &trigger, change);
                    }
                }
            });
            let stop = shutdown.child_token();
            let (api_version, kind) = (resource.api_version.clone(), resource.kind.clone());
            let task =
                tokio::spawn(
                    runner.run(stop.clone(), self.clone(), move |detector, template| {
                        let (api_version, kind) = (api_version.clone(), kind.clone());
                        async move {
                            detector
                                .reconcile_template_object(&api_version, &kind, &template)
                                .await
                        }
                    }),
                );
            watched.insert(
                key,
                Watched {
                    resource,
                    trigger,
                    stop,
                    task,
                },
            );
        }
    }

    fn on_template_change(
        &self,
        api_version: &str,
        kind: &str,
        trigger: &Trigger<DynamicObject>,
        change: Change<'_, DynamicObject>,
    ) {
        let obj = change.object();
        let namespace = obj.namespace().unwrap_or_default();
        let name = obj.name_any();
        if !template_event_passes(
            &self.ctx.skipped_propagating_namespaces,
            kind,
            &namespace,
            &name,
        ) {
            return;
        }
        let key = TemplateKey {
            api_version: api_version.to_owned(),
            kind: kind.to_owned(),
            namespace,
            name,
        };
        let lazy = match change {
            Change::Updated { old, new } => {
                if !update_is_significant(old, new) {
                    return;
                }
                self.claimed_by_lazy_policy(&with_type(new, api_version, kind))
                    && filter::changed_by_karmada(old, new)
            }
            Change::Added(_) => false,
            Change::Deleted(_) => {
                self.waiting().remove(&key);
                self.lazy().remove(&key);
                return;
            }
        };
        let object = trigger.object_ref(&key.namespace, &key.name);
        self.request(trigger, object, key, lazy);
    }

    /// One template reconcile.
    async fn reconcile_template_object(
        &self,
        api_version: &str,
        kind: &str,
        template: &DynamicObject,
    ) -> Result<Action> {
        let key = TemplateKey {
            api_version: api_version.to_owned(),
            kind: kind.to_owned(),
            namespace: template.namespace().unwrap_or_default(),
            name: template.name_any(),
        };
        let lazy = self.lazy().remove(&key).unwrap_or(false);
        let result = self
            .reconcile_template(TemplateItem {
                key: key.clone(),
                lazy,
            })
            .await;
        if result.is_err() && lazy {
            // Retried as it was asked for, unless a full reconcile was asked for meanwhile.
            self.lazy().entry(key).or_insert(true);
        }
        result
    }

    fn claimed_by_lazy_policy(&self, template: &serde_json::Value) -> bool {
        let lazy = Some(ActivationPreference::Lazy);
        match claim_of(template) {
            Some(Claim::Namespaced {
                namespace, name, ..
            }) => self
                .pp
                .get(&namespace, &name)
                .is_some_and(|p| p.spec.activation_preference == lazy),
            Some(Claim::Cluster { name, .. }) => self
                .cpp
                .get("", &name)
                .is_some_and(|p| p.spec.activation_preference == lazy),
            None => false,
        }
    }
}
