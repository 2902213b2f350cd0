//! Application failover (Karmada's `applicationFailover` controllers):
//! a binding with `spec.failover.application` leaves a cluster where its copy has been `Unhealthy` for longer
//! than `decisionConditions.tolerationSeconds`, through a graceful eviction task; the scheduler then places
//! it elsewhere (the `ClusterEviction` filter keeps the failed cluster out) and the binding controller carries
//! the task's `preservedLabelState` to the new copy.

pub(crate) mod build;
#[cfg(test)]
mod tests;

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex, PoisonError};

use flotilla_api::config::v1alpha1::InterpreterOperation;
use flotilla_api::names::{events, eviction};
use flotilla_api::work::v1alpha2::{ClusterResourceBinding, ResourceBinding};
use k8s_openapi::jiff::Timestamp;
use kube::ResourceExt;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use self::build::{Gates, Unhealthy, detect, evict, forget, split_by_health};
use crate::bindings::{self, BindingObject, BindingRef, template_reference};
use crate::error::{Error, Result};
use crate::events::{EventRecorder, reference};
use crate::features::{Feature, FeatureGates};
use crate::interpreter::{Interpreter, enabled};
use crate::options::Options;
use crate::runtime::{Action, Change, Controller, Informer};
use crate::shared::{ControlPlane, Shared};
use crate::update::{self, Edit, Part};

/// Name of the controllers in logs and metrics (Karmada names the RB one so; the CRB one is
/// `cluster-resource-binding-application-failover-controller`).
pub(crate) const NAME: &str = eviction::PRODUCER_RB_APPLICATION_FAILOVER;

/// What the application failover controllers need.
pub(crate) struct Context {
    /// The control plane (bindings), its Events and reconciles.
    pub control: ControlPlane,
    /// Whether a kind's health can be told (an InterpretHealth hook), which failover needs.
    pub interpreter: Arc<dyn Interpreter>,
    /// Feature gates: `GracefulEviction` and `StatefulFailoverInjection` shape the eviction.
    pub feature_gates: FeatureGates,
}

impl Context {
    /// The application failover controllers' context: its handles from `shared`, its settings from `options`.
    pub(crate) fn new(shared: &Shared, options: &Options) -> Self {
        Context {
            control: shared.control.clone(),
            interpreter: shared.interpreter.clone(),
            feature_gates: options.feature_gates.clone(),
        }
    }
}

struct ApplicationFailover {
    ctx: Context,
    rb: Arc<Informer<ResourceBinding>>,
    crb: Arc<Informer<ClusterResourceBinding>>,
    rb_recorder: EventRecorder,
    crb_recorder: EventRecorder,
    /// Karmada's `workloadUnhealthyMap`: per binding, when each cluster's copy was first seen unhealthy.
    unhealthy: Mutex<HashMap<BindingRef, Unhealthy>>,
}

/// Karmada's predicate: bindings that have (or had) `spec.failover.application`.
fn relevant<K: BindingObject>(change: &Change<'_, K>) -> bool {
    let applies = |b: &K| {
        b.spec()
            .failover
            .as_ref()
            .is_some_and(|f| f.application.is_some())
    };
    match change {
        Change::Added(b) | Change::Deleted(b) => applies(b),
        Change::Updated { old, new } => applies(old) || applies(new),
    }
}

/// Runs both controllers until `shutdown` is cancelled.
pub(crate) async fn run(ctx: Context, shutdown: CancellationToken) {
    let controller = Arc::new(ApplicationFailover {
        rb: ctx.control.informers.typed(),
        crb: ctx.control.informers.typed(),
        rb_recorder: ctx
            .control
            .events
            .recorder(eviction::PRODUCER_RB_APPLICATION_FAILOVER),
        crb_recorder: ctx
            .control
            .events
            .recorder(eviction::PRODUCER_CRB_APPLICATION_FAILOVER),
        unhealthy: Mutex::new(HashMap::new()),
        ctx,
    });
    let rb = Controller::new(NAME, &controller.rb, &controller.ctx.control.runtime);
    let crb = Controller::new(
        eviction::PRODUCER_CRB_APPLICATION_FAILOVER,
        &controller.crb,
        &controller.ctx.control.runtime,
    );
    rb.reconcile_changes(&controller.rb, relevant);
    crb.reconcile_changes(&controller.crb, relevant);
    bindings::run_both(
        rb,
        crb,
        shutdown,
        controller,
        |controller, key| async move { controller.reconcile(key).await },
    )
    .await;
}

impl ApplicationFailover {
    async fn reconcile(&self, key: BindingRef) -> Result<Action> {
        match &key {
            BindingRef::Namespaced { namespace, name } => {
                let cached = self.rb.get(namespace, name);
                self.sync(
                    &key,
                    cached.as_deref(),
                    eviction::PRODUCER_RB_APPLICATION_FAILOVER,
                )
                .await
            }
            BindingRef::Cluster { name } => {
                let cached = self.crb.get("", name);
                self.sync(
                    &key,
                    cached.as_deref(),
                    eviction::PRODUCER_CRB_APPLICATION_FAILOVER,
                )
                .await
            }
        }
    }

    fn tracker(&self) -> std::sync::MutexGuard<'_, HashMap<BindingRef, Unhealthy>> {
        self.unhealthy
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Karmada's `bindingFilter`: application failover set, some status aggregated, an InterpretHealth hook
    /// for the kind and `propagateDeps` (the policy webhook requires it with application failover).
    fn applies<B: BindingObject>(&self, binding: &B) -> bool {
        let spec = binding.spec();
        let resource = json!({"apiVersion": spec.resource.api_version, "kind": spec.resource.kind});
        spec.failover
            .as_ref()
            .is_some_and(|f| f.application.is_some())
            && binding
                .status()
                .is_some_and(|s| !s.aggregated_status.is_empty())
            && enabled(
                self.ctx.interpreter.as_ref(),
                &resource,
                InterpreterOperation::InterpretHealth,
            )
            && spec.propagate_deps
    }

    async fn sync<B: BindingObject>(
        &self,
        key: &BindingRef,
        cached: Option<&B>,
        producer: &'static str,
    ) -> Result<Action> {
        let Some(binding) = cached.filter(|b| self.applies(*b)) else {
            self.tracker().remove(key);
            return Ok(Action::await_change());
        };
        let Some(behavior) = binding
            .spec()
            .failover
            .as_ref()
            .and_then(|f| f.application.clone())
        else {
            return Ok(Action::await_change());
        };
        let items = binding
            .status()
            .map(|s| s.aggregated_status.clone())
            .unwrap_or_default();
        let (unhealthy, others) = split_by_health(&items, binding.spec());
        let toleration = behavior
            .decision_conditions
            .toleration_seconds
            .unwrap_or(300);
        let detection = {
            let mut tracker = self.tracker();
            let tracked = tracker.entry(key.clone()).or_default();
            detect(tracked, &unhealthy, toleration, Timestamp::now())
        };
        let mut clusters: BTreeSet<String> = binding
            .spec()
            .clusters
            .iter()
            .map(|c| c.name.clone())
            .collect();
        if !detection.evict.is_empty() {
            self.evict(binding, &detection.evict, producer).await?;
            for cluster in &detection.evict {
                clusters.remove(cluster);
            }
        }
        if let Some(tracked) = self.tracker().get_mut(key) {
            forget(tracked, &clusters, &others);
        }
        Ok(detection
            .recheck
            .map_or_else(Action::await_change, Action::requeue))
    }

    /// Evicts `binding` from `clusters` in one write, deciding again on the object read.
    async fn evict<B: BindingObject>(
        &self,
        binding: &B,
        clusters: &[String],
        producer: &str,
    ) -> Result<()> {
        let gates = Gates {
            graceful_eviction: self.enabled(Feature::GracefulEviction),
            stateful_failover_injection: self.enabled(Feature::StatefulFailoverInjection),
        };
        let api = B::api(
            &self.ctx.control.client,
            &binding.namespace().unwrap_or_default(),
        );
        let what = binding.describe();
        let written = update::update(
            &api,
            &what,
            &binding.name_any(),
            Some(binding.clone()),
            Part::Object,
            |mut fresh: B| {
                let result = (|| {
                    let Some(behavior) = fresh
                        .spec()
                        .failover
                        .as_ref()
                        .and_then(|f| f.application.clone())
                    else {
                        return Ok(false);
                    };
                    let items = fresh
                        .status()
                        .map(|s| s.aggregated_status.clone())
                        .unwrap_or_default();
                    let mut changed = false;
                    for cluster in clusters {
                        changed |= evict(
                            fresh.spec_mut(),
                            &items,
                            &behavior,
                            cluster,
                            producer,
                            gates,
                        )
                        .map_err(|err| Error::invalid(what.clone(), err.to_string()))?;
                    }
                    Ok(changed)
                })();
                async move { result.map(|changed| Edit::of(fresh, changed)) }
            },
        )
        .await;
        if let Err(err) = &written
            && !matches!(err, Error::Invalid { .. })
        {
            // Karmada reports only a failed write, on the binding and on its resource template.
            let recorder = if B::CLUSTER_SCOPED {
                &self.crb_recorder
            } else {
                &self.rb_recorder
            };
            for cluster in clusters {
                let note = format!("Evict from cluster {cluster} failed.");
                for target in [reference(binding), template_reference(binding.spec())] {
                    recorder.warning(
                        &target,
                        events::EVICT_WORKLOAD_FROM_CLUSTER_FAILED,
                        note.clone(),
                    );
                }
            }
        }
        written.map(|_| ())
    }

    fn enabled(&self, feature: Feature) -> bool {
        self.ctx.feature_gates.enabled(feature)
    }
}
