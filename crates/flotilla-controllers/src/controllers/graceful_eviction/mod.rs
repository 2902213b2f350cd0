//! The graceful eviction controller (always started, as in Karmada): stamps new
//! graceful eviction tasks and removes them when they time out, when `suppressDeletion` turns false, or when
//! the binding's new placement is healthy. A removed task lets the binding controller delete the evicted
//! cluster's Work.

pub(crate) mod build;
#[cfg(test)]
mod tests;

use std::sync::Arc;
use std::time::Duration;

use flotilla_api::work::v1alpha2::{ClusterResourceBinding, ResourceBinding};
use k8s_openapi::jiff::Timestamp;
use tokio_util::sync::CancellationToken;

use self::build::{assess, next_check};
use crate::bindings::{self, BindingObject, BindingRef};
use crate::error::Result;
use crate::options::Options;
use crate::runtime::{Action, Change, Controller, Informer};
use crate::shared::{ControlPlane, Shared};
use crate::update::{self, Edit, Part};

/// Name of the controller (Karmada's `graceful-eviction-controller`).
pub(crate) const NAME: &str = "graceful-eviction-controller";

/// What the graceful eviction controller needs.
pub(crate) struct Context {
    /// The control plane (bindings and their eviction tasks) and its reconciles.
    pub control: ControlPlane,
    /// How long a graceful eviction task without `gracePeriodSeconds` lasts (`--graceful-eviction-timeout`).
    pub graceful_eviction_timeout: Duration,
}

impl Context {
    /// The graceful eviction controller's context: its handles from `shared`, its settings from `options`.
    pub(crate) fn new(shared: &Shared, options: &Options) -> Self {
        Context {
            control: shared.control.clone(),
            graceful_eviction_timeout: options.graceful_eviction_timeout,
        }
    }
}

struct GracefulEvictionController {
    ctx: Context,
    rb: Arc<Informer<ResourceBinding>>,
    crb: Arc<Informer<ClusterResourceBinding>>,
}

/// A binding with eviction tasks whose tasks, schedule or aggregated status changed.
fn relevant<K: BindingObject>(change: &Change<'_, K>) -> bool {
    match change {
        Change::Added(b) => !b.spec().graceful_eviction_tasks.is_empty(),
        Change::Updated { old, new } => {
            !new.spec().graceful_eviction_tasks.is_empty()
                && (old.spec() != new.spec() || old.status() != new.status())
        }
        Change::Deleted(_) => false,
    }
}

/// Runs the controller until `shutdown` is cancelled.
pub(crate) async fn run(ctx: Context, shutdown: CancellationToken) {
    let controller = Arc::new(GracefulEvictionController {
        rb: ctx.control.informers.typed(),
        crb: ctx.control.informers.typed(),
        ctx,
    });
    let rb = Controller::new(NAME, &controller.rb, &controller.ctx.control.runtime);
    let crb = Controller::new(NAME, &controller.crb, &controller.ctx.control.runtime);
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

impl GracefulEvictionController {
    async fn reconcile(&self, key: BindingRef) -> Result<Action> {
        match key {
            BindingRef::Namespaced { namespace, name } => {
                let cached = self.rb.get(&namespace, &name);
                self.sync::<ResourceBinding>(cached.map(|b| b.as_ref().clone()), &namespace, &name)
                    .await
            }
            BindingRef::Cluster { name } => {
                let cached = self.crb.get("", &name);
                self.sync::<ClusterResourceBinding>(cached.map(|b| b.as_ref().clone()), "", &name)
                    .await
            }
        }
    }

    async fn sync<B: BindingObject>(
        &self,
        cached: Option<B>,
        namespace: &str,
        name: &str,
    ) -> Result<Action> {
        let Some(cached) = cached else {
            return Ok(Action::await_change());
        };
        if cached.meta().deletion_timestamp.is_some()
            || cached.spec().graceful_eviction_tasks.is_empty()
        {
            return Ok(Action::await_change());
        }
        let timeout = self.ctx.graceful_eviction_timeout;
        let now = Timestamp::now();
        let api = B::api(&self.ctx.control.client, namespace);
        let written = update::update(
            &api,
            &cached.describe(),
            name,
            Some(cached.clone()),
            Part::Object,
            |mut binding: B| {
                let generation = binding.meta().generation.unwrap_or_default();
                let status = binding.status().cloned().unwrap_or_default();
                let kept = assess(binding.spec(), &status, generation, now, timeout);
                let changed = kept != binding.spec().graceful_eviction_tasks;
                binding.spec_mut().graceful_eviction_tasks = kept;
                async move { Ok(Edit::of(binding, changed)) }
            },
        )
        .await?;
        let tasks = match &written {
            update::Written::Created(b)
            | update::Written::Updated(b)
            | update::Written::Unchanged(b) => b.spec().graceful_eviction_tasks.clone(),
            update::Written::Gone => Vec::new(),
        };
        Ok(match next_check(&tasks, Timestamp::now(), timeout) {
            // A second past the deadline: the task is removed only once `now` is after it.
            Some(wait) => Action::requeue(wait + Duration::from_secs(1)),
            None => Action::await_change(),
        })
    }
}
