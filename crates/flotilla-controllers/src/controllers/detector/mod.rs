//! The resource detector (controllers spec §3): watches every propagatable resource of the control plane,
//! matches templates to PropagationPolicies and ClusterPropagationPolicies, claims them and keeps their
//! ResourceBindings and ClusterResourceBindings current; reacts to policy changes (§3.5) and deletions (§3.6).
//!
//! Invariants: a policy without a permanent id is never applied (the policy normaliser gives every policy one
//! before anything else acts on it); the detector never touches a binding's `clusters`, `requiredBy`,
//! `gracefulEvictionTasks`, `rescheduleTriggeredAt` or status.

pub mod build;
pub mod filter;
mod policy;
mod reconcile;
#[cfg(test)]
mod tests;

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, PoisonError};

use flotilla_api::policy::v1alpha1::{
    ActivationPreference, ClusterOverridePolicy, ClusterPropagationPolicy, OverridePolicy,
    PropagationPolicy,
};
use flotilla_api::work::v1alpha2::{ClusterResourceBinding, ResourceBinding};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{ApiResource, DynamicObject};
use kube::{Resource, ResourceExt};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use self::filter::{
    Claim, SkippedApis, claim_of, template_event_passes, update_is_significant, watchable,
};
use crate::context::Context;
use crate::events::EventRecorder;
use crate::runtime::{self, Change, Informer, Queue};
use crate::templates::{TemplateKey, with_type};

/// Name of the controller (metrics, events `flotilla-resource-detector`).
pub const NAME: &str = "resource-detector";
const POLICY_CONTROLLER: &str = "propagation-policy";

/// One template to reconcile; `lazy` marks a change Karmada itself made to a template of a Lazy policy
/// (§3.8), which only claims.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TemplateItem {
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
pub struct PolicyKey {
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

/// The detector's shared state.
pub struct Detector {
    ctx: Context,
    recorder: EventRecorder,
    templates: Arc<Queue<TemplateItem>>,
    policies: Arc<Queue<PolicyKey>>,
    waiting: Mutex<HashSet<TemplateKey>>,
    skipped: SkippedApis,
    watched: Mutex<HashMap<String, ApiResource>>,
    pp: Arc<Informer<PropagationPolicy>>,
    cpp: Arc<Informer<ClusterPropagationPolicy>>,
    op: Arc<Informer<OverridePolicy>>,
    cop: Arc<Informer<ClusterOverridePolicy>>,
    rb: Arc<Informer<ResourceBinding>>,
    crb: Arc<Informer<ClusterResourceBinding>>,
}

/// Runs the detector until `shutdown` is cancelled.
pub async fn run(ctx: Context, shutdown: CancellationToken) {
    let detector = Arc::new(Detector {
        recorder: ctx.recorder(NAME),
        templates: Queue::new(ctx.options.backoff),
        policies: Queue::new(ctx.options.backoff),
        waiting: Mutex::default(),
        skipped: SkippedApis::parse(&ctx.options.skipped_propagating_apis),
        watched: Mutex::default(),
        pp: ctx.informers.typed(),
        cpp: ctx.informers.typed(),
        op: ctx.informers.typed(),
        cop: ctx.informers.typed(),
        rb: ctx.informers.typed(),
        crb: ctx.informers.typed(),
        ctx,
    });
    detector.watch_policies();
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
    let workers = detector.ctx.options.workers;
    let metrics = detector.ctx.metrics.clone();
    let templates = tokio::spawn(runtime::run(
        NAME,
        detector.templates.clone(),
        workers,
        metrics.clone(),
        {
            let detector = detector.clone();
            move |item| {
                let detector = detector.clone();
                async move { detector.reconcile_template(item).await }
            }
        },
    ));
    let policies = tokio::spawn(runtime::run(
        POLICY_CONTROLLER,
        detector.policies.clone(),
        2,
        metrics,
        {
            let detector = detector.clone();
            move |key| {
                let detector = detector.clone();
                async move { detector.reconcile_policy(key).await }
            }
        },
    ));
    shutdown.cancelled().await;
    detector.templates.close();
    detector.policies.close();
    discovery.abort();
    let _ = templates.await;
    let _ = policies.await;
}

impl Detector {
    fn waiting(&self) -> std::sync::MutexGuard<'_, HashSet<TemplateKey>> {
        self.waiting.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Enqueues policies on create, generation change, deletion and when they get their permanent id.
    fn watch_policies(self: &Arc<Self>) {
        fn relevant<K: Resource>(change: &Change<'_, K>, id_label: &str) -> bool {
            match change {
                Change::Added(_) => true,
                Change::Updated { old, new } => {
                    old.meta().generation != new.meta().generation
                        || (old.meta().deletion_timestamp.is_none()
                            && new.meta().deletion_timestamp.is_some())
                        || old.labels().get(id_label) != new.labels().get(id_label)
                        || old.finalizers() != new.finalizers()
                }
                Change::Deleted(_) => false,
            }
        }
        let queue = self.policies.clone();
        self.pp.add_handler(move |change| {
            if relevant(
                &change,
                flotilla_api::names::labels::PROPAGATION_POLICY_PERMANENT_ID,
            ) {
                let obj = change.object();
                queue.add(PolicyKey {
                    namespace: Some(obj.namespace().unwrap_or_default()),
                    name: obj.name_any(),
                });
            }
        });
        let queue = self.policies.clone();
        self.cpp.add_handler(move |change| {
            if relevant(
                &change,
                flotilla_api::names::labels::CLUSTER_PROPAGATION_POLICY_PERMANENT_ID,
            ) {
                queue.add(PolicyKey {
                    namespace: None,
                    name: change.object().name_any(),
                });
            }
        });
    }

    /// Runs discovery periodically and whenever CRDs change, and keeps one informer per watchable resource.
    async fn discovery_loop(self: Arc<Self>, shutdown: CancellationToken) {
        let crd_changed = Arc::new(Notify::new());
        let crds = self.ctx.informers.typed::<CustomResourceDefinition>();
        crds.add_handler({
            let notify = crd_changed.clone();
            move |_| notify.notify_one()
        });
        loop {
            if let Err(err) = self.ctx.resources.refresh().await {
                tracing::warn!(error = %err.message(), "discovery failed");
            }
            self.sync_watches();
            tokio::select! {
                () = tokio::time::sleep(self.ctx.options.discovery_interval) => {}
                () = crd_changed.notified() => {}
                () = shutdown.cancelled() => return,
            }
        }
    }

    fn sync_watches(self: &Arc<Self>) {
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
        let mut watched = self.watched.lock().unwrap_or_else(PoisonError::into_inner);
        watched.retain(|key, resource| {
            let keep = wanted.contains_key(key);
            if !keep {
                self.ctx.informers.stop_dynamic(resource);
            }
            keep
        });
        for (key, resource) in wanted {
            if watched.contains_key(&key) {
                continue;
            }
            let informer = self.ctx.informers.dynamic(&resource);
            let detector = Arc::downgrade(self);
            let (api_version, kind) = (resource.api_version.clone(), resource.kind.clone());
            informer.add_handler(move |change| {
                if let Some(detector) = detector.upgrade() {
                    detector.on_template_change(&api_version, &kind, change);
                }
            });
            watched.insert(key, resource);
        }
    }

    fn on_template_change(&self, api_version: &str, kind: &str, change: Change<'_, DynamicObject>) {
        let obj = change.object();
        let namespace = obj.namespace().unwrap_or_default();
        let name = obj.name_any();
        if !template_event_passes(&self.ctx.options, kind, &namespace, &name) {
            return;
        }
        let lazy = match change {
            Change::Updated { old, new } => {
                if !update_is_significant(old, new) {
                    return;
                }
                self.claimed_by_lazy_policy(&with_type(new, api_version, kind))
                    && filter::changed_by_karmada(old, new)
            }
            Change::Added(_) | Change::Deleted(_) => false,
        };
        let key = TemplateKey {
            api_version: api_version.to_owned(),
            kind: kind.to_owned(),
            namespace,
            name,
        };
        self.templates.add(TemplateItem { key, lazy });
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
