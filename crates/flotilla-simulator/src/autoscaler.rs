//! The HorizontalPodAutoscaler controller as it behaves in a member without a metrics server: it keeps its
//! target's `spec.replicas` within `[minReplicas, maxReplicas]` and otherwise leaves it alone (no metrics, no
//! recommendation), and a target scaled to zero is left at zero (autoscaling off), as kube-controller-manager
//! does. Karmada's HPA features (retained member replicas, the replicas syncer) rest on exactly this.
//!
//! Level-triggered: an HPA is looked at when it changes and whenever its target changes (someone else, e.g.
//! the execution controller, may write the target's replicas back). Only `apps/v1` targets are scaled
//! (Deployment, StatefulSet, ReplicaSet); the HPA's status is not written.

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet, StatefulSet};
use k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler;
use kube::api::{Api, DynamicObject, Patch, PatchParams};
use kube::core::ApiResource;
use kube::runtime::controller::{Action, Controller};
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::watcher;
use kube::{Client, Resource, ResourceExt};
use serde_json::{Value, json};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::{FIELD_MANAGER, SimulatorConfig};

/// Retry delay after a failed read or write of a target.
const ERROR_RETRY: Duration = Duration::from_secs(1);

/// Why a target could not be scaled.
#[derive(Debug, thiserror::Error)]
#[error("failed to scale {target} for HorizontalPodAutoscaler {hpa}")]
pub(super) struct ScaleError {
    hpa: String,
    target: String,
    #[source]
    source: kube::Error,
}

/// The replica count an HPA without metrics wants for a target at `current`, or `None` when it leaves it.
pub(super) fn wanted_replicas(current: i32, min: Option<i32>, max: i32) -> Option<i32> {
    // A target scaled to zero has autoscaling switched off (unless the HPA itself allows zero).
    if current == 0 && min != Some(0) {
        return None;
    }
    let min = min.unwrap_or(1);
    let wanted = if current > max {
        max
    } else if current < min {
        min
    } else {
        current
    };
    (wanted != current).then_some(wanted)
}

struct Ctx {
    client: Client,
    cluster: String,
}

/// Starts the autoscaler loop on a task pushed to `tasks`.
pub(super) fn spawn(
    client: &Client,
    config: &SimulatorConfig,
    cancel: &CancellationToken,
    tasks: &mut Vec<JoinHandle<()>>,
) {
    let controller = Controller::new(
        Api::<HorizontalPodAutoscaler>::all(client.clone()),
        watcher::Config::default(),
    );
    let hpas = controller.store();
    let controller = controller
        .watches(
            Api::<Deployment>::all(client.clone()),
            watcher::Config::default(),
            scalers_of(hpas.clone()),
        )
        .watches(
            Api::<StatefulSet>::all(client.clone()),
            watcher::Config::default(),
            scalers_of(hpas.clone()),
        )
        .watches(
            Api::<ReplicaSet>::all(client.clone()),
            watcher::Config::default(),
            scalers_of(hpas),
        );
    let ctx = Arc::new(Ctx {
        client: client.clone(),
        cluster: config.cluster.clone(),
    });
    let stop = cancel.clone().cancelled_owned();
    tasks.push(tokio::spawn(async move {
        controller
            .graceful_shutdown_on(stop)
            .run(reconcile, error_policy, ctx)
            .for_each(|_| futures::future::ready(()))
            .await;
    }));
}

/// Maps a changed workload to the HPAs of its namespace that scale it.
fn scalers_of<K>(
    hpas: Store<HorizontalPodAutoscaler>,
) -> impl Fn(K) -> Vec<ObjectRef<HorizontalPodAutoscaler>> + Send + Sync + 'static
where
    K: Resource<DynamicType = ()>,
{
    move |workload: K| {
        let namespace = workload.namespace();
        let name = workload.name_any();
        hpas.state()
            .iter()
            .filter(|hpa| hpa.namespace() == namespace)
            .filter(|hpa| {
                let target = &hpa.spec.scale_target_ref;
                target.kind == K::kind(&()).as_ref()
                    && target.name == name
                    && target.api_version.as_deref() == Some("apps/v1")
            })
            .map(|hpa| ObjectRef::from_obj(hpa.as_ref()))
            .collect()
    }
}

async fn reconcile(hpa: Arc<HorizontalPodAutoscaler>, ctx: Arc<Ctx>) -> Result<Action, ScaleError> {
    let Some(namespace) = hpa.namespace() else {
        return Ok(Action::await_change());
    };
    if hpa.metadata.deletion_timestamp.is_some() {
        return Ok(Action::await_change());
    }
    let spec = &hpa.spec;
    let target = &spec.scale_target_ref;
    let resource = match (target.api_version.as_deref(), target.kind.as_str()) {
        (Some("apps/v1"), "Deployment") => ApiResource::erase::<Deployment>(&()),
        (Some("apps/v1"), "StatefulSet") => ApiResource::erase::<StatefulSet>(&()),
        (Some("apps/v1"), "ReplicaSet") => ApiResource::erase::<ReplicaSet>(&()),
        _ => return Ok(Action::await_change()),
    };
    let name = target.name.as_str();
    let fail = |source| ScaleError {
        hpa: format!("{namespace}/{}", hpa.name_any()),
        target: format!("{} {namespace}/{name}", target.kind),
        source,
    };
    let api: Api<DynamicObject> = Api::namespaced_with(ctx.client.clone(), &namespace, &resource);
    // A missing target is looked at again when it appears (its watch maps it back here).
    let Some(object) = api.get_opt(name).await.map_err(fail)? else {
        return Ok(Action::await_change());
    };
    // The API server defaults an unset count to one.
    let current = object
        .data
        .pointer("/spec/replicas")
        .and_then(Value::as_i64)
        .and_then(|n| i32::try_from(n).ok())
        .unwrap_or(1);
    let Some(wanted) = wanted_replicas(current, spec.min_replicas, spec.max_replicas) else {
        return Ok(Action::await_change());
    };
    let patch = json!({"spec": {"replicas": wanted}});
    let params = PatchParams {
        field_manager: Some(FIELD_MANAGER.into()),
        ..PatchParams::default()
    };
    api.patch(name, &params, &Patch::Merge(&patch))
        .await
        .map_err(fail)?;
    tracing::debug!(
        cluster = %ctx.cluster,
        hpa = %hpa.name_any(),
        target = name,
        from = current,
        to = wanted,
        "simulator: autoscaler rescaled its target"
    );
    Ok(Action::await_change())
}

fn error_policy(_hpa: Arc<HorizontalPodAutoscaler>, error: &ScaleError, ctx: Arc<Ctx>) -> Action {
    tracing::debug!(
        cluster = %ctx.cluster,
        error = %crate::display_chain(error),
        "simulator: autoscaler failed; retrying"
    );
    Action::requeue(ERROR_RETRY)
}

#[cfg(test)]
mod tests {
    use super::wanted_replicas;

    #[test]
    fn keeps_replicas_within_bounds_without_metrics() {
        assert_eq!(wanted_replicas(2, Some(3), 10), Some(3));
        assert_eq!(wanted_replicas(1, None, 10), None);
        assert_eq!(wanted_replicas(12, Some(2), 10), Some(10));
        assert_eq!(
            wanted_replicas(5, Some(2), 10),
            None,
            "no metrics: no change"
        );
        assert_eq!(wanted_replicas(0, Some(2), 10), None, "scaled to zero: off");
        assert_eq!(wanted_replicas(0, Some(0), 10), None);
    }
}
