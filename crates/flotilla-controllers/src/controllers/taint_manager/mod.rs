//! The taint manager (gate `Failover`, `--enable-taint-manager`,
//! `--enable-no-execute-taint-eviction`): bindings leave a cluster whose NoExecute taints they do not
//! tolerate, at once or when their `tolerationSeconds` run out, through a graceful eviction task; the scheduler
//! then places the replicas on the remaining clusters.

pub(crate) mod build;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::num::NonZeroU32;
use std::sync::Arc;
use std::time::Duration;

use flotilla_api::cluster::v1alpha1::Cluster;
use flotilla_api::names::events;
use flotilla_api::policy::v1alpha1::PurgeMode;
use flotilla_api::work::v1alpha2::{ClusterResourceBinding, ResourceBinding, TargetCluster};
use flotilla_core::state_preservation::state_for_eviction;
use governor::{DefaultDirectRateLimiter, Quota, RateLimiter};
use k8s_openapi::jiff::Timestamp;
use kube::ResourceExt;
use tokio_util::sync::CancellationToken;

use self::build::{Verdict, applied_tolerations, evict, no_execute_taints, purge_mode, verdict};
use crate::bindings::{BindingObject, template_reference};
use crate::error::{Error, Result};
use crate::events::{EventRecorder, reference};
use crate::features::{Feature, FeatureGates};
use crate::options::Options;
use crate::runtime::{Action, Controller, Informer, spec_changed};
use crate::shared::{ControlPlane, Shared};
use crate::update::{self, Edit, Part};

/// Name of the controller (Karmada's `taint-manager`).
pub(crate) const NAME: &str = "taint-manager";

/// How often a NoExecute-tainted cluster's bindings are looked at again (Karmada's
/// `ClusterTaintEvictionRetryFrequency`, 10 s).
const RETRY: Duration = Duration::from_secs(10);

/// What the taint manager needs.
pub(crate) struct Context {
    /// The control plane (Clusters and the bindings on them), its Events and reconciles.
    pub control: ControlPlane,
    /// Feature gates: `StatefulFailoverInjection` records a failed copy's state on the eviction.
    pub feature_gates: FeatureGates,
    /// Whether it evicts from clusters with untolerated NoExecute taints (`--enable-no-execute-taint-eviction`).
    pub enable_no_execute_taint_eviction: bool,
    /// How a binding without `spec.failover.cluster` leaves such a cluster
    /// (`--no-execute-taint-eviction-purge-mode`).
    pub no_execute_taint_eviction_purge_mode: PurgeMode,
    /// Bindings evicted per second (`--resource-eviction-rate`).
    pub resource_eviction_rate: f64,
}

impl Context {
    /// The taint manager's context: its handles from `shared`, its settings from `options`.
    pub(crate) fn new(shared: &Shared, options: &Options) -> Self {
        Context {
            control: shared.control.clone(),
            feature_gates: options.feature_gates.clone(),
            enable_no_execute_taint_eviction: options.enable_no_execute_taint_eviction,
            no_execute_taint_eviction_purge_mode: options
                .no_execute_taint_eviction_purge_mode
                .clone(),
            resource_eviction_rate: options.resource_eviction_rate,
        }
    }
}

struct TaintManager {
    ctx: Context,
    recorder: EventRecorder,
    clusters: Arc<Informer<Cluster>>,
    rb: Arc<Informer<ResourceBinding>>,
    crb: Arc<Informer<ClusterResourceBinding>>,
    /// `--resource-eviction-rate`: evictions per second over all clusters.
    limiter: DefaultDirectRateLimiter,
}

/// Runs the taint manager until `shutdown` is cancelled.
pub(crate) async fn run(ctx: Context, shutdown: CancellationToken) {
    let period = Duration::from_secs_f64(1.0 / ctx.resource_eviction_rate.max(1e-6));
    let quota = Quota::with_period(period)
        .unwrap_or_else(|| Quota::per_second(NonZeroU32::MIN))
        .allow_burst(NonZeroU32::MIN);
    let controller = Arc::new(TaintManager {
        recorder: ctx.control.events.recorder(NAME),
        clusters: ctx.control.informers.typed(),
        rb: ctx.control.informers.typed(),
        crb: ctx.control.informers.typed(),
        limiter: RateLimiter::direct(quota),
        ctx,
    });
    let runner = Controller::new(NAME, &controller.clusters, &controller.ctx.control.runtime);
    let trigger = runner.trigger();
    // Taints live in the spec: a new or re-tainted cluster is looked at at once, then every RETRY.
    controller.clusters.add_handler(move |change| {
        if spec_changed(&change) {
            trigger.reconcile(change.object());
        }
    });
    runner
        .run(shutdown, controller, |controller, cluster| async move {
            controller.reconcile(&cluster.name_any()).await
        })
        .await;
}

impl TaintManager {
    async fn reconcile(&self, name: &str) -> Result<Action> {
        if !self.ctx.enable_no_execute_taint_eviction {
            return Ok(Action::await_change());
        }
        let Some(cluster) = self.clusters.get("", name) else {
            return Ok(Action::await_change());
        };
        if no_execute_taints(&cluster.spec.taints).is_empty() {
            return Ok(Action::await_change());
        }
        let mut next = RETRY;
        let mut errors = Vec::new();
        let lists = |clusters: &[TargetCluster]| clusters.iter().any(|c| c.name == name);
        for binding in self.rb.filter(|b| lists(&b.spec.clusters)) {
            self.visit(&cluster, binding.as_ref(), &mut next, &mut errors)
                .await;
        }
        for binding in self.crb.filter(|b| lists(&b.spec.clusters)) {
            self.visit(&cluster, binding.as_ref(), &mut next, &mut errors)
                .await;
        }
        if !errors.is_empty() {
            return Err(Error::Multiple(errors));
        }
        Ok(Action::requeue(next))
    }

    /// Evicts `binding` now if due, else shortens `next` to its eviction time.
    async fn visit<B: BindingObject>(
        &self,
        cluster: &Cluster,
        binding: &B,
        next: &mut Duration,
        errors: &mut Vec<Error>,
    ) {
        if binding.meta().deletion_timestamp.is_some() {
            return;
        }
        let now = Timestamp::now();
        match self.due(cluster, binding, now) {
            Ok(Verdict::EvictNow) => {
                if let Err(err) = self.evict(cluster, binding).await {
                    errors.push(err);
                }
            }
            Ok(Verdict::EvictAt(at)) => {
                let wait = Duration::try_from(at.duration_since(now)).unwrap_or_default();
                *next = (*next).min(wait.max(Duration::from_millis(100)));
            }
            Ok(Verdict::Stay) => {}
            Err(err) => errors.push(err),
        }
    }

    fn due<B: BindingObject>(
        &self,
        cluster: &Cluster,
        binding: &B,
        now: Timestamp,
    ) -> Result<Verdict> {
        // Without an applied placement the scheduler has not placed the binding yet: Karmada retries.
        let tolerations = applied_tolerations(binding.annotations())
            .ok_or_else(|| Error::Invalid {
                object: binding.describe(),
                reason: "the applied placement (annotation policy.karmada.io/applied-placement) is empty"
                    .to_owned(),
            })?
            .map_err(|source| Error::Decode {
                object: format!("{} annotation policy.karmada.io/applied-placement", binding.describe()),
                source,
            })?;
        Ok(verdict(
            &no_execute_taints(&cluster.spec.taints),
            &tolerations,
            now,
        ))
    }

    async fn evict<B: BindingObject>(&self, cluster: &Cluster, binding: &B) -> Result<()> {
        self.limiter.until_ready().await;
        let name = cluster.name_any();
        let flag = &self.ctx.no_execute_taint_eviction_purge_mode;
        let api = B::api(
            &self.ctx.control.client,
            &binding.namespace().unwrap_or_default(),
        );
        let written = update::update(
            &api,
            &binding.describe(),
            &binding.name_any(),
            Some(binding.clone()),
            Part::Object,
            |mut fresh: B| {
                // Decided again on the object read: a conflict may bring one already evicted or re-placed.
                let due = matches!(
                    self.due(cluster, &fresh, Timestamp::now()),
                    Ok(Verdict::EvictNow)
                );
                let mode = purge_mode(fresh.spec().failover.as_ref(), flag.clone());
                // As Karmada: with StatefulFailoverInjection, the policy's cluster statePreservation rules read
                // the copy's reflected status; until it is collected the eviction waits (an error, retried).
                let preserved = if due
                    && self
                        .ctx
                        .feature_gates
                        .enabled(Feature::StatefulFailoverInjection)
                {
                    let rules = fresh
                        .spec()
                        .failover
                        .as_ref()
                        .and_then(|f| f.cluster.as_ref())
                        .and_then(|c| c.state_preservation.as_ref());
                    let items = fresh
                        .status()
                        .map(|s| s.aggregated_status.as_slice())
                        .unwrap_or_default();
                    state_for_eviction(rules, items, &name)
                        .map_err(|err| Error::invalid(fresh.describe(), err.to_string()))
                } else {
                    Ok(BTreeMap::new())
                };
                let result = preserved.map(|preserved| {
                    let changed = due && evict(fresh.spec_mut(), &name, mode, preserved);
                    Edit::of(fresh, changed)
                });
                async move { result }
            },
        )
        .await;
        let (reason, note, warn) = match &written {
            Ok(w) if !w.wrote() => return Ok(()),
            // The state to preserve cannot be read yet: no write was tried, and Karmada records no Event.
            Err(Error::Invalid { .. }) => return written.map(|_| ()),
            Ok(_) => (
                events::EVICT_WORKLOAD_FROM_CLUSTER_SUCCEED,
                format!("Evict from cluster {name} succeed."),
                false,
            ),
            Err(_) => (
                events::EVICT_WORKLOAD_FROM_CLUSTER_FAILED,
                format!("Evict from cluster {name} failed."),
                true,
            ),
        };
        // Karmada reports on the binding and on its resource template.
        for target in [reference(binding), template_reference(binding.spec())] {
            if warn {
                self.recorder.warning(&target, reason, note.clone());
            } else {
                self.recorder.normal(&target, reason, note.clone());
            }
        }
        written.map(|_| ())
    }
}
