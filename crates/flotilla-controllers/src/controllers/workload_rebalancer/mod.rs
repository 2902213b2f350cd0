//! Karmada's workload rebalancer controller (`workloadRebalancer`, on by default as in Karmada): a
//! WorkloadRebalancer asks, once, for the bindings of the workloads it names to be scheduled afresh. Each
//! binding's `spec.rescheduleTriggeredAt` is set to the rebalancer's `creationTimestamp`, which the scheduler
//! takes as a request for a fresh schedule (later than `status.lastScheduledTime`): a workload that moved to a
//! later cluster group returns to the first that can hold it, replicas are divided anew.
//!
//! A rebalancer is reconciled when it is created and when its spec changes, never for its own status writes:
//! its status lists each workload with its result (`Successful`, or `Failed` with `ReferencedBindingNotFound`),
//! and a workload with a result is not looked at again, so later changes of the binding are left alone. A
//! binding that cannot be read or written is retried with the error policy's backoff. Once every workload has a
//! result, `finishTime` is set, and with `ttlSecondsAfterFinished` the rebalancer is deleted when that time is up
//! (a timed requeue; the delete is conditional on the version judged, so a rebalancer changed meanwhile is
//! judged again).

pub(crate) mod build;
#[cfg(test)]
mod tests;

use std::sync::{Arc, Mutex, PoisonError};

use flotilla_api::apps::v1alpha1::{
    ObjectReference, REBALANCE_FAILED, REBALANCE_SUCCESSFUL, WorkloadRebalancer,
};
use flotilla_api::work::v1alpha2::{ClusterResourceBinding, ResourceBinding};
use flotilla_client::api_error::is_not_found;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use kube::api::{DeleteParams, Preconditions};
use kube::{Api, ResourceExt};
use tokio_util::sync::CancellationToken;

use self::build::{Cleanup, Outcome};
use crate::bindings::{BindingObject, BindingRef};
use crate::error::{Error, Result};
use crate::runtime::{Action, Controller, Informer};
use crate::shared::ControlPlane;
use crate::update::{self, Edit, Part, Written};

/// Name of the controller (Karmada's `workload-rebalancer`).
pub(crate) const NAME: &str = "workload-rebalancer";

struct RebalancerController {
    ctx: ControlPlane,
    rebalancers: Arc<Informer<WorkloadRebalancer>>,
}

/// Runs the controller until `shutdown` is cancelled.
pub(crate) async fn run(ctx: ControlPlane, shutdown: CancellationToken) {
    let controller = Arc::new(RebalancerController {
        rebalancers: ctx.informers.typed(),
        ctx,
    });
    let runner = Controller::new(NAME, &controller.rebalancers, &controller.ctx.runtime);
    runner.reconcile_changes(&controller.rebalancers, build::relevant);
    runner
        .run(shutdown, controller, |controller, rebalancer| async move {
            controller.reconcile(&rebalancer.name_any()).await
        })
        .await;
}

impl RebalancerController {
    async fn reconcile(&self, name: &str) -> Result<Action> {
        let Some(cached) = self.rebalancers.get("", name) else {
            return Ok(Action::await_change());
        };
        let what = format!("WorkloadRebalancer {name}");
        let api: Api<WorkloadRebalancer> = Api::all(self.ctx.client.clone());
        // The bindings that could not be asked in the pass whose status was written, for the error policy.
        let failures: Mutex<Vec<Error>> = Mutex::default();
        let written = update::update(
            &api,
            &what,
            name,
            Some((*cached).clone()),
            Part::Status,
            |rebalancer: WorkloadRebalancer| self.pass(rebalancer, &what, &failures),
        )
        .await?;
        let rebalancer = match written {
            Written::Updated(rebalancer) => {
                log_progress(&rebalancer);
                rebalancer
            }
            Written::Created(rebalancer) | Written::Unchanged(rebalancer) => rebalancer,
            Written::Gone => return Ok(Action::await_change()),
        };
        // Not finished: the error policy backs off and tries the bindings again.
        Error::aggregate(
            failures
                .into_inner()
                .unwrap_or_else(PoisonError::into_inner),
        )?;
        let finished = rebalancer
            .status
            .as_ref()
            .and_then(|s| s.finish_time.as_ref());
        match build::cleanup(
            rebalancer.spec.ttl_seconds_after_finished,
            finished,
            Timestamp::now(),
        ) {
            Cleanup::Keep => Ok(Action::await_change()),
            Cleanup::After(left) => Ok(Action::requeue(left)),
            Cleanup::Delete => {
                self.delete(&api, &what, &rebalancer).await?;
                Ok(Action::await_change())
            }
        }
    }

    /// One pass over `rebalancer` as stored: its entries brought in line with its spec, the pending ones done,
    /// and the status to write if it changed. The bindings that failed go to `failures`, the pass's own
    /// (a pass run again after a write conflict replaces them).
    async fn pass(
        &self,
        mut rebalancer: WorkloadRebalancer,
        what: &str,
        failures: &Mutex<Vec<Error>>,
    ) -> Result<Edit<WorkloadRebalancer>> {
        let created = rebalancer
            .metadata
            .creation_timestamp
            .clone()
            .ok_or_else(|| Error::invalid(what, "metadata.creationTimestamp is not set"))?;
        let old = rebalancer.status.clone().unwrap_or_default();
        let mut entries =
            build::sync_workloads(&rebalancer.spec.workloads, &old.observed_workloads);
        let mut errors = Vec::new();
        for entry in entries.iter_mut().filter(|e| build::pending(e)) {
            match self.request(&entry.workload, &created).await {
                Ok(outcome) => build::record(entry, outcome),
                Err(err) => errors.push(err),
            }
        }
        let generation = rebalancer.metadata.generation.unwrap_or_default();
        let status = build::conclude(
            &old,
            entries,
            generation,
            errors.is_empty(),
            Timestamp::now(),
        );
        *failures.lock().unwrap_or_else(PoisonError::into_inner) = errors;
        let changed = status.is_some();
        if let Some(status) = status {
            rebalancer.status = Some(status);
        }
        Ok(Edit::of(rebalancer, changed))
    }

    /// Asks the binding of `workload` to reschedule for a rebalancer created at `created`.
    async fn request(&self, workload: &ObjectReference, created: &Time) -> Result<Outcome> {
        let binding = build::binding_of(workload);
        let what = binding.to_string();
        match binding {
            BindingRef::Namespaced { namespace, name } => {
                self.request_binding::<ResourceBinding>(&namespace, &name, &what, created)
                    .await
            }
            BindingRef::Cluster { name } => {
                self.request_binding::<ClusterResourceBinding>("", &name, &what, created)
                    .await
            }
        }
    }

    async fn request_binding<B: BindingObject>(
        &self,
        namespace: &str,
        name: &str,
        what: &str,
        created: &Time,
    ) -> Result<Outcome> {
        let api = B::api(&self.ctx.client, namespace);
        // Read afresh rather than from a cache: a binding found missing fails the workload for good.
        let written = update::update(&api, what, name, None, Part::Object, |mut binding: B| {
            let stale =
                build::needs_trigger(created, binding.spec().reschedule_triggered_at.as_ref());
            if stale {
                binding.spec_mut().reschedule_triggered_at = Some(created.clone());
            }
            async move { Ok(Edit::of(binding, stale)) }
        })
        .await?;
        Ok(match written {
            Written::Gone => {
                tracing::info!(
                    binding = what,
                    "the workload has no binding: recorded as failed"
                );
                Outcome::BindingNotFound
            }
            written => {
                if written.wrote() {
                    tracing::info!(binding = what, "requested a reschedule of the binding");
                }
                Outcome::Requested
            }
        })
    }

    /// Deletes a finished rebalancer whose time is up, only as it was judged (`resourceVersion`): one changed
    /// meanwhile is reconciled again instead.
    async fn delete(
        &self,
        api: &Api<WorkloadRebalancer>,
        what: &str,
        rebalancer: &WorkloadRebalancer,
    ) -> Result<()> {
        let params = DeleteParams {
            preconditions: Some(Preconditions {
                resource_version: rebalancer.resource_version(),
                uid: None,
            }),
            ..DeleteParams::default()
        };
        match api.delete(&rebalancer.name_any(), &params).await {
            Ok(_) => {
                tracing::info!(
                    rebalancer = %rebalancer.name_any(),
                    "deleted the finished rebalancer: its ttlSecondsAfterFinished is up"
                );
                Ok(())
            }
            Err(err) if is_not_found(&err) => Ok(()),
            Err(source) => Err(Error::kube("delete", what.to_owned(), source)),
        }
    }
}

/// Logs what a status write recorded.
fn log_progress(rebalancer: &WorkloadRebalancer) {
    let Some(status) = &rebalancer.status else {
        return;
    };
    let count = |result: &str| {
        status
            .observed_workloads
            .iter()
            .filter(|e| e.result == result)
            .count()
    };
    tracing::info!(
        rebalancer = %rebalancer.name_any(),
        successful = count(REBALANCE_SUCCESSFUL),
        failed = count(REBALANCE_FAILED),
        workloads = status.observed_workloads.len(),
        finished = status.finish_time.is_some(),
        "recorded the rebalancer's progress"
    );
}
