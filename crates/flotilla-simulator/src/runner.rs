//! The watch-driven loops: one kube-runtime controller per simulated kind, a Node reflector whose changes re-run
//! every DaemonSet and Pod, a Pod reflector whose changes re-run every kind counting pods, and the simulated
//! kubelet (`crate::kubelet`) with the writer of the Nodes' kubelet endpoint.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{Node, Pod};
use kube::api::{Api, DynamicObject, PostParams};
use kube::core::ApiResource;
use kube::runtime::controller::{Action, Controller};
use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Client, ResourceExt};
use tokio::task::JoinHandle;
use tokio_stream::wrappers::WatchStream;
use tokio_util::sync::CancellationToken;

use super::scheduler::{self, Placement};
use super::{Error, FIELD_MANAGER, Kind, MemberView, NodeView, SimulatorConfig, pending_status};

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
    nodes: Watched<Node>,
    pods: Watched<Pod>,
    jobs: Watched<Job>,
    config: SimulatorConfig,
    cancel: CancellationToken,
}

impl KindCtx {
    /// What of the member the kind depends on, once the reflectors have listed it.
    async fn member(&self) -> MemberView {
        let mut member = MemberView::default();
        if self.kind.needs_nodes() && self.ready(&self.nodes).await {
            member.nodes = self
                .nodes
                .store
                .state()
                .iter()
                .filter_map(|n| serde_json::to_value(n.as_ref()).ok())
                .map(|n| NodeView::of(&n))
                .collect();
        }
        if self.kind.needs_pods() && self.ready(&self.pods).await {
            member.pods = self
                .pods
                .store
                .state()
                .iter()
                .filter_map(|p| serde_json::to_value(p.as_ref()).ok())
                .collect();
        }
        if self.kind.needs_jobs() && self.ready(&self.jobs).await {
            member.jobs = self
                .jobs
                .store
                .state()
                .iter()
                .filter_map(|j| serde_json::to_value(j.as_ref()).ok())
                .collect();
        }
        member
    }

    /// Waits until `watched` has listed its objects; false when shutting down first.
    async fn ready<K: kube::Resource + 'static>(&self, watched: &Watched<K>) -> bool
    where
        K::DynamicType: Eq + std::hash::Hash + Clone,
    {
        let mut listed = watched.listed.clone();
        tokio::select! {
            listed = listed.wait_for(|listed| *listed) => listed.is_ok(),
            () = self.cancel.cancelled() => false,
        }
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

/// Starts the reflectors, one controller per kind and, when configured, the simulated kubelet; returns the tasks
/// and the kubelet's port.
pub(super) fn spawn(
    client: Client,
    config: SimulatorConfig,
    cancel: CancellationToken,
) -> (Vec<JoinHandle<()>>, Option<u16>) {
    let mut tasks = Vec::new();
    let nodes = watched::<Node>(&client, &config, &cancel, &mut tasks);
    let pods = watched::<Pod>(&client, &config, &cancel, &mut tasks);
    let jobs = watched::<Job>(&client, &config, &cancel, &mut tasks);
    let kubelet_port = if config.kubelet {
        kubelet(&client, &config, &nodes, &pods, &cancel, &mut tasks)
    } else {
        None
    };
    // Scaling is a child-making controller's job too: off with the children, as `flotilla bench` runs.
    if config.children {
        crate::autoscaler::spawn(&client, &config, &cancel, &mut tasks);
    }
    for kind in Kind::ALL {
        let resource = kind.api_resource();
        let api: Api<DynamicObject> = Api::all_with(client.clone(), &resource);
        let mut controller =
            Controller::new_with(api, watcher::Config::default(), resource.clone());
        if let Some(owned) = crate::children::owned_resource(kind).filter(|_| config.children) {
            let api: Api<DynamicObject> = Api::all_with(client.clone(), &owned);
            controller = controller.owns_with(api, owned, watcher::Config::default());
        }
        if kind.needs_nodes() {
            controller =
                controller.reconcile_all_on(WatchStream::from_changes(nodes.changed.clone()));
        }
        if kind.needs_pods() {
            controller =
                controller.reconcile_all_on(WatchStream::from_changes(pods.changed.clone()));
        }
        if kind.needs_jobs() {
            controller =
                controller.reconcile_all_on(WatchStream::from_changes(jobs.changed.clone()));
        }
        let ctx = Arc::new(KindCtx {
            kind,
            client: client.clone(),
            resource,
            objects: controller.store(),
            nodes: nodes.clone(),
            pods: pods.clone(),
            jobs: jobs.clone(),
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
    (tasks, kubelet_port)
}

/// Serves the simulated kubelet and keeps every Node's kubelet endpoint pointing at it; its port, or `None` (logged)
/// when it cannot listen.
fn kubelet(
    client: &Client,
    config: &SimulatorConfig,
    nodes: &Watched<Node>,
    pods: &Watched<Pod>,
    cancel: &CancellationToken,
    tasks: &mut Vec<JoinHandle<()>>,
) -> Option<u16> {
    let pods = crate::kubelet::Pods {
        store: pods.store.clone(),
        changed: pods.changed.clone(),
    };
    let metrics = crate::metrics::api::router(client.clone());
    match crate::kubelet::serve(pods, metrics, cancel.clone()) {
        Ok((port, task)) => {
            tasks.push(task);
            tasks.push(tokio::spawn(register_metrics(
                client.clone(),
                port,
                config.cluster.clone(),
                cancel.clone(),
            )));
            tasks.push(tokio::spawn(crate::kubelet::nodes::keep_endpoints(
                client.clone(),
                nodes.store.clone(),
                nodes.changed.clone(),
                port,
                config.cluster.clone(),
                cancel.clone(),
            )));
            Some(port)
        }
        Err(error) => {
            let error = Error::Kubelet(error);
            tracing::warn!(cluster = %config.cluster, error = %crate::display_chain(&error), "simulator: pods have no logs or exec");
            None
        }
    }
}

/// Registers the simulated metrics-server with the member's aggregator, retrying with back-off until the member
/// accepts it (it may not serve APIServices yet when the simulator starts).
async fn register_metrics(client: Client, port: u16, cluster: String, cancel: CancellationToken) {
    let mut delay = std::time::Duration::from_millis(200);
    loop {
        match crate::metrics::api::register(&client, port).await {
            Ok(()) => return,
            Err(error) => {
                tracing::warn!(%cluster, %error, "simulator: registering metrics.k8s.io failed; retrying");
            }
        }
        tokio::select! {
            () = cancel.cancelled() => return,
            () = tokio::time::sleep(delay) => {}
        }
        delay = (delay * 2).min(std::time::Duration::from_secs(10));
    }
}

/// A cache of every object of one kind of the member, as a simulated controller's status depends on them.
#[derive(Clone)]
struct Watched<K: kube::Resource + 'static>
where
    K::DynamicType: Eq + std::hash::Hash + Clone,
{
    store: Store<K>,
    /// Ticks whenever an object changes.
    changed: tokio::sync::watch::Receiver<()>,
    /// Turns true once the first list is in the store. Ours rather than the store's `wait_until_ready`, which
    /// in kube-runtime 5.0.0 wakes only one of several waiters (ARCHITECTURE.md), and reconciles of several
    /// kinds wait for the same store.
    listed: tokio::sync::watch::Receiver<bool>,
}

/// A reflector of every `K` of the member, on a task pushed to `tasks`.
fn watched<K>(
    client: &Client,
    config: &SimulatorConfig,
    cancel: &CancellationToken,
    tasks: &mut Vec<JoinHandle<()>>,
) -> Watched<K>
where
    K: kube::Resource<DynamicType = ()>
        + Clone
        + std::fmt::Debug
        + serde::de::DeserializeOwned
        + Send
        + Sync
        + 'static,
{
    let (store, writer) = reflector::store::<K>();
    let (changed_tx, changed) = tokio::sync::watch::channel(());
    let (listed_tx, listed) = tokio::sync::watch::channel(false);
    let (waiter, stop) = (store.clone(), cancel.clone());
    tasks.push(tokio::spawn(async move {
        tokio::select! {
            ready = waiter.wait_until_ready() => {
                if ready.is_ok() {
                    let _ = listed_tx.send(true);
                }
            }
            () = stop.cancelled() => {}
        }
    }));
    let stream = reflector::reflector(
        writer,
        watcher(Api::<K>::all(client.clone()), watcher::Config::default()),
    )
    .default_backoff()
    .touched_objects();
    let cancel = cancel.clone();
    let cluster = config.cluster.clone();
    tasks.push(tokio::spawn(async move {
        let mut stream = std::pin::pin!(stream);
        loop {
            tokio::select! {
                () = cancel.cancelled() => return,
                item = stream.next() => match item {
                    None => return,
                    Some(Ok(_)) => {
                        let _ = changed_tx.send(());
                    }
                    Some(Err(e)) => tracing::debug!(cluster = %cluster, kind = K::kind(&()).as_ref(), error = %e, "simulator: watch failed; retrying"),
                },
            }
        }
    }));
    Watched {
        store,
        changed,
        listed,
    }
}

/// Waits the simulated delay, then writes the status the real controllers would, if it differs.
async fn reconcile(object: Arc<DynamicObject>, ctx: Arc<KindCtx>) -> Result<Action, Error> {
    // What the object owns is made at once, as the real controllers make it; only status waits. A schedule's
    // next time asks for a reconcile then.
    let again = if ctx.config.children {
        crate::children::sync(&ctx.client, ctx.kind, &ctx.encode(&object)?).await?
    } else {
        None
    };
    let done = || again.map_or_else(Action::await_change, Action::requeue);
    let member = ctx.member().await;
    if ctx.kind == Kind::Pod && bind(&ctx, &ctx.encode(&object)?, &member).await? {
        // The binding's change brings the pod back, bound.
        return Ok(Action::await_change());
    }
    let now = crate::common::now();
    if pending_status(ctx.kind, &ctx.encode(&object)?, &member, &now).is_none() {
        return Ok(done());
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
    let member = ctx.member().await;
    let now = crate::common::now();
    let Some(status) = pending_status(ctx.kind, &ctx.encode(&latest)?, &member, &now) else {
        return Ok(done());
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
    Ok(done())
}

/// Binds `pod` where the simulated scheduler places it (`crate::scheduler`), through `pods/binding` as
/// kube-scheduler does; whether it was bound (or someone else bound it or deleted it meanwhile).
async fn bind(ctx: &KindCtx, pod: &serde_json::Value, member: &MemberView) -> Result<bool, Error> {
    // Only pods on Nodes in use count (finished ones have left them).
    let mut bound: BTreeMap<String, usize> = BTreeMap::new();
    for other in ctx.pods.store.state() {
        let running = other
            .status
            .as_ref()
            .and_then(|s| s.phase.as_deref())
            .is_none_or(|p| p != "Succeeded" && p != "Failed");
        if let Some(node) = other.spec.as_ref().and_then(|s| s.node_name.clone())
            && running
        {
            *bound.entry(node).or_default() += 1;
        }
    }
    let Placement::Bind(node) = scheduler::place(pod, &member.nodes, &bound) else {
        return Ok(false);
    };
    let (Some(ns), Some(name)) = (
        pod.pointer("/metadata/namespace")
            .and_then(serde_json::Value::as_str),
        pod.pointer("/metadata/name")
            .and_then(serde_json::Value::as_str),
    ) else {
        return Ok(false);
    };
    let api: Api<Pod> = Api::namespaced(ctx.client.clone(), ns);
    let binding = scheduler::binding(pod, &node);
    match api
        .create_subresource::<_, serde_json::Value>(
            "binding",
            name,
            &PostParams::default(),
            &binding,
        )
        .await
    {
        Ok(_) => Ok(true),
        // Bound by another scheduler, or gone: its change event ends the matter.
        Err(kube::Error::Api(status)) if status.code == 409 || status.code == 404 => Ok(true),
        Err(source) => Err(Error::Bind {
            object: format!("{ns}/{name}"),
            source,
        }),
    }
}

fn error_policy(object: Arc<DynamicObject>, error: &Error, ctx: Arc<KindCtx>) -> Action {
    let conflict = matches!(
        error,
        Error::UpdateStatus { source: kube::Error::Api(status), .. }
            | Error::Children { source: kube::Error::Api(status), .. } if status.code == 409
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
