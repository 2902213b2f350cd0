//! The watch-driven loops: one kube-runtime controller per simulated kind, and a Node reflector whose changes
//! re-run every DaemonSet.

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::core::v1::Node;
use kube::api::{Api, DynamicObject, PostParams};
use kube::core::ApiResource;
use kube::runtime::controller::{Action, Controller};
use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Client, ResourceExt};
use tokio::task::JoinHandle;
use tokio_stream::wrappers::WatchStream;
use tokio_util::sync::CancellationToken;

use super::{Error, FIELD_MANAGER, Kind, NodeView, SimulatorConfig, pending_status};

/// Retry delay after a conflict (someone else wrote first: re-read and try again soon).
const CONFLICT_RETRY: Duration = Duration::from_millis(50);
/// Retry delay after any other failure.
const ERROR_RETRY: Duration = Duration::from_secs(1);

/// What one kind's reconcile needs.
struct KindCtx {
    kind: Kind,
    client: Client,
    resource: ApiResource,
    objects: Store<DynamicObject>,
    nodes: Store<Node>,
    config: SimulatorConfig,
    cancel: CancellationToken,
}

impl KindCtx {
    /// The member's Nodes, once the Node reflector has listed them (only DaemonSets need them).
    async fn nodes(&self) -> Vec<NodeView> {
        if self.kind != Kind::DaemonSet {
            return Vec::new();
        }
        tokio::select! {
            _ = self.nodes.wait_until_ready() => {}
            () = self.cancel.cancelled() => return Vec::new(),
        }
        self.nodes
            .state()
            .iter()
            .filter_map(|n| serde_json::to_value(n.as_ref()).ok())
            .map(|n| NodeView::of(&n))
            .collect()
    }

    fn describe(object: &DynamicObject) -> String {
        match object.namespace() {
            Some(ns) => format!("{ns}/{}", object.name_any()),
            None => object.name_any(),
        }
    }

    fn encode(&self, object: &DynamicObject) -> Result<serde_json::Value, Error> {
        serde_json::to_value(object).map_err(|source| Error::Encode {
            kind: self.kind,
            object: Self::describe(object),
            source,
        })
    }
}

/// Starts the Node reflector and one controller per kind.
pub(super) fn spawn(
    client: Client,
    config: SimulatorConfig,
    cancel: CancellationToken,
) -> Vec<JoinHandle<()>> {
    let (nodes, writer) = reflector::store::<Node>();
    let (changed_tx, changed_rx) = tokio::sync::watch::channel(());
    let mut tasks = Vec::new();
    let node_stream = reflector::reflector(
        writer,
        watcher(Api::<Node>::all(client.clone()), watcher::Config::default()),
    )
    .default_backoff()
    .touched_objects();
    let node_cancel = cancel.clone();
    let cluster = config.cluster.clone();
    tasks.push(tokio::spawn(async move {
        let mut stream = std::pin::pin!(node_stream);
        loop {
            tokio::select! {
                () = node_cancel.cancelled() => return,
                item = stream.next() => match item {
                    None => return,
                    Some(Ok(_)) => {
                        let _ = changed_tx.send(());
                    }
                    Some(Err(e)) => tracing::debug!(cluster = %cluster, error = %e, "simulator: node watch failed; retrying"),
                },
            }
        }
    }));
    for kind in Kind::ALL {
        let resource = kind.api_resource();
        let api: Api<DynamicObject> = Api::all_with(client.clone(), &resource);
        let mut controller =
            Controller::new_with(api, watcher::Config::default(), resource.clone());
        if kind == Kind::DaemonSet {
            controller = controller.reconcile_all_on(WatchStream::from_changes(changed_rx.clone()));
        }
        let ctx = Arc::new(KindCtx {
            kind,
            client: client.clone(),
            resource,
            objects: controller.store(),
            nodes: nodes.clone(),
            config: config.clone(),
            cancel: cancel.clone(),
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
    tasks
}

/// Waits the simulated delay, then writes the status the real controllers would, if it differs.
async fn reconcile(object: Arc<DynamicObject>, ctx: Arc<KindCtx>) -> Result<Action, Error> {
    let nodes = ctx.nodes().await;
    let now = crate::common::now();
    if pending_status(ctx.kind, &ctx.encode(&object)?, &nodes, &now).is_none() {
        return Ok(Action::await_change());
    }
    tokio::select! {
        () = tokio::time::sleep(ctx.config.delay) => {}
        () = ctx.cancel.cancelled() => return Ok(Action::await_change()),
    }
    // Decide on the newest state seen, not the one that triggered us: the object may have changed meanwhile.
    let key = ObjectRef::from_obj_with(object.as_ref(), ctx.resource.clone());
    let Some(latest) = ctx.objects.get(&key) else {
        return Ok(Action::await_change());
    };
    let nodes = ctx.nodes().await;
    let now = crate::common::now();
    let Some(status) = pending_status(ctx.kind, &ctx.encode(&latest)?, &nodes, &now) else {
        return Ok(Action::await_change());
    };
    let mut updated = latest.as_ref().clone();
    if let Some(fields) = updated.data.as_object_mut() {
        fields.insert("status".into(), status);
    }
    let api: Api<DynamicObject> = match latest.namespace() {
        Some(ns) => Api::namespaced_with(ctx.client.clone(), &ns, &ctx.resource),
        None => Api::all_with(ctx.client.clone(), &ctx.resource),
    };
    let params = PostParams {
        field_manager: Some(FIELD_MANAGER.into()),
        ..PostParams::default()
    };
    api.replace_status(&latest.name_any(), &params, &updated)
        .await
        .map_err(|source| Error::UpdateStatus {
            kind: ctx.kind,
            object: KindCtx::describe(&latest),
            source,
        })?;
    Ok(Action::await_change())
}

fn error_policy(object: Arc<DynamicObject>, error: &Error, ctx: Arc<KindCtx>) -> Action {
    let conflict = matches!(
        error,
        Error::UpdateStatus { source: kube::Error::Api(status), .. } if status.code == 409
    );
    if conflict {
        return Action::requeue(CONFLICT_RETRY);
    }
    // NotFound: the object went away between our read and write; its deletion event ends the matter.
    if matches!(error, Error::UpdateStatus { source: kube::Error::Api(status), .. } if status.code == 404)
    {
        return Action::await_change();
    }
    tracing::warn!(
        cluster = %ctx.config.cluster,
        object = %KindCtx::describe(&object),
        error = %crate::display_chain(error),
        "simulator: status update failed; retrying"
    );
    Action::requeue(ERROR_RETRY)
}
