//! A hang can never pass silently (issue 9): concurrent clients drive every write verb over eight kinds while
//! watchers and a prober run, and every request carries a deadline. A write path that blocks on the store (as
//! server-side apply creating a Pod once did, which froze the whole server) fails these tests within seconds
//! instead of hanging CI. The deadline detects a hang; it is not a latency target.
#![allow(clippy::unwrap_used, clippy::panic)]

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::core::v1::Namespace;
use kube::Client;
use kube::api::{
    Api, ApiResource, DeleteParams, DynamicObject, ListParams, Patch, PatchParams, PostParams,
    WatchEvent, WatchParams,
};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use flotilla_apiserver::{Server, ServerConfig};

/// Longest any one request may take. The server answers in milliseconds; a request still unanswered after this
/// is stuck (generous, because CI runs other tests on the same two cores).
const DEADLINE: Duration = Duration::from_secs(5);
/// Concurrent clients, each with its own connection pool and namespace.
const CLIENTS: usize = 8;
/// Rounds each client makes over every kind.
const ROUNDS: usize = 4;
/// Label every object the clients write carries, so the end can check that every deletion completed.
const LABEL: &str = "stress.example.io/run";
/// Finalizer that holds an object after its deletion until the client removes it.
const HOLD: &str = "stress.example.io/hold";

/// One kind the clients exercise.
#[derive(Clone, Copy)]
struct Kind {
    group: &'static str,
    version: &'static str,
    kind: &'static str,
    plural: &'static str,
    namespaced: bool,
    /// The content besides metadata (spec, data, ...), given the namespace.
    body: fn(&str) -> Value,
    /// A status write, for kinds with a status subresource.
    status: Option<fn() -> Value>,
}

impl Kind {
    fn resource(&self) -> ApiResource {
        let api_version = if self.group.is_empty() {
            self.version.to_string()
        } else {
            format!("{}/{}", self.group, self.version)
        };
        ApiResource {
            group: self.group.into(),
            version: self.version.into(),
            api_version,
            kind: self.kind.into(),
            plural: self.plural.into(),
        }
    }

    fn api(&self, client: &Client, ns: &str) -> Api<DynamicObject> {
        if self.namespaced {
            Api::namespaced_with(client.clone(), ns, &self.resource())
        } else {
            Api::all_with(client.clone(), &self.resource())
        }
    }

    /// A whole object of this kind named `name`, labelled for this run.
    fn object(&self, ns: &str, name: &str, labels: Value) -> Value {
        let mut meta = json!({"name": name, "labels": labels});
        if self.namespaced {
            meta["namespace"] = json!(ns);
        }
        let mut obj = (self.body)(ns);
        obj["apiVersion"] = json!(self.resource().api_version);
        obj["kind"] = json!(self.kind);
        obj["metadata"] = meta;
        obj
    }

    /// Built-in kinds take strategic merge patches; custom resources refuse them with 415.
    fn strategic(&self) -> bool {
        self.group != "stress.example.io"
    }
}

fn container() -> Value {
    json!([{"name": "c", "image": "nginx"}])
}

/// Pods, Deployments, Ingresses, PersistentVolumeClaims, Events, ConfigMaps, Namespaces and a custom resource:
/// the Pod, Ingress and claim creates read the store in admission.
fn kinds() -> Vec<Kind> {
    vec![
        Kind {
            group: "",
            version: "v1",
            kind: "Pod",
            plural: "pods",
            namespaced: true,
            body: |_| json!({"spec": {"containers": container()}}),
            status: Some(|| json!({"status": {"phase": "Running", "message": "stress"}})),
        },
        Kind {
            group: "apps",
            version: "v1",
            kind: "Deployment",
            plural: "deployments",
            namespaced: true,
            body: |_| {
                json!({"spec": {"replicas": 1, "selector": {"matchLabels": {"app": "s"}},
                    "template": {"metadata": {"labels": {"app": "s"}}, "spec": {"containers": container()}}}})
            },
            status: Some(|| json!({"status": {"replicas": 1, "observedGeneration": 1}})),
        },
        Kind {
            group: "networking.k8s.io",
            version: "v1",
            kind: "Ingress",
            plural: "ingresses",
            namespaced: true,
            body: |_| {
                json!({"spec": {"rules": [{"host": "s.example.com", "http": {"paths": [{"path": "/", "pathType": "Prefix",
                    "backend": {"service": {"name": "s", "port": {"number": 80}}}}]}}]}})
            },
            status: Some(|| json!({"status": {"loadBalancer": {"ingress": [{"ip": "10.0.0.1"}]}}})),
        },
        Kind {
            group: "",
            version: "v1",
            kind: "PersistentVolumeClaim",
            plural: "persistentvolumeclaims",
            namespaced: true,
            body: |_| json!({"spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}),
            status: Some(|| json!({"status": {"phase": "Bound"}})),
        },
        Kind {
            group: "",
            version: "v1",
            kind: "Event",
            plural: "events",
            namespaced: true,
            body: |ns| {
                json!({"involvedObject": {"apiVersion": "v1", "kind": "ConfigMap", "name": "x", "namespace": ns},
                    "reason": "Stress", "message": "a stress event", "type": "Normal", "source": {"component": "stress"}})
            },
            status: None,
        },
        Kind {
            group: "",
            version: "v1",
            kind: "ConfigMap",
            plural: "configmaps",
            namespaced: true,
            body: |_| json!({"data": {"k": "v"}}),
            status: None,
        },
        Kind {
            group: "",
            version: "v1",
            kind: "Namespace",
            plural: "namespaces",
            namespaced: false,
            body: |_| json!({}),
            status: Some(|| json!({"status": {"phase": "Active"}})),
        },
        Kind {
            group: "stress.example.io",
            version: "v1",
            kind: "Widget",
            plural: "widgets",
            namespaced: true,
            body: |_| json!({"spec": {"size": 1}}),
            status: Some(|| json!({"status": {"ready": true}})),
        },
    ]
}

/// Runs one request under the deadline.
async fn call<T>(
    what: &str,
    request: impl Future<Output = kube::Result<T>>,
) -> Result<kube::Result<T>, String> {
    tokio::time::timeout(DEADLINE, request)
        .await
        .map_err(|_| format!("{what}: no answer within {DEADLINE:?}: the server hangs"))
}

/// Runs one request under the deadline; it must succeed.
async fn ok<T>(what: &str, request: impl Future<Output = kube::Result<T>>) -> Result<T, String> {
    call(what, request)
        .await?
        .map_err(|e| format!("{what}: {e}"))
}

/// Runs one request under the deadline; it must fail with `code`.
async fn refused<T: std::fmt::Debug>(
    what: &str,
    code: u16,
    request: impl Future<Output = kube::Result<T>>,
) -> Result<(), String> {
    match call(what, request).await? {
        Err(kube::Error::Api(e)) if e.code == code => Ok(()),
        other => Err(format!("{what}: expected {code}, got {other:?}")),
    }
}

fn apply(manager: &str, force: bool) -> PatchParams {
    let p = PatchParams::apply(manager);
    if force { p.force() } else { p }
}

/// Every write verb on one object of `kind`, in the order a client's lifecycle makes them.
async fn exercise(
    client: &Client,
    kind: &Kind,
    ns: &str,
    me: usize,
    round: usize,
) -> Result<(), String> {
    let api = kind.api(client, ns);
    let name = format!("{}-c{me}-r{round}", kind.plural);
    let what = |verb: &str| format!("{verb} {}/{name}", kind.plural);
    let (mine, theirs) = (format!("stress-{me}"), format!("other-{me}"));

    // Server-side apply creates the object, then another manager takes a field over: refused without force.
    let labels = json!({LABEL: "1", "round": round.to_string()});
    let created = ok(
        &what("apply (create)"),
        api.patch(
            &name,
            &apply(&mine, false),
            &Patch::Apply(kind.object(ns, &name, labels)),
        ),
    )
    .await?;
    let taken = kind.object(ns, &name, json!({"round": "taken"}));
    refused(
        &what("conflicting apply"),
        409,
        api.patch(&name, &apply(&theirs, false), &Patch::Apply(&taken)),
    )
    .await?;
    ok(
        &what("forced apply"),
        api.patch(&name, &apply(&theirs, true), &Patch::Apply(&taken)),
    )
    .await?;

    // A dependent the garbage collector removes once this object is gone (Events cannot own objects).
    if kind.kind != "Event" {
        let uid = created.metadata.uid.clone().unwrap_or_default();
        let dependent = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": format!("{name}-dep"), "labels": {LABEL: "1"}, "ownerReferences": [
                {"apiVersion": kind.resource().api_version, "kind": kind.kind, "name": name, "uid": uid, "blockOwnerDeletion": true}]}});
        let dependent: DynamicObject =
            serde_json::from_value(dependent).map_err(|e| e.to_string())?;
        let cms = Api::<DynamicObject>::namespaced_with(client.clone(), ns, &configmaps());
        ok(
            &what("create dependent"),
            cms.create(&PostParams::default(), &dependent),
        )
        .await?;
    }

    // Update with the resourceVersion just read.
    let mut current = ok(&what("get"), api.get(&name)).await?;
    current
        .metadata
        .annotations
        .get_or_insert_default()
        .insert("stress/put".into(), "1".into());
    ok(
        &what("update"),
        api.replace(&name, &PostParams::default(), &current),
    )
    .await?;
    // A stale resourceVersion is a conflict, never retried into success.
    refused(
        &what("stale update"),
        409,
        api.replace(&name, &PostParams::default(), &current),
    )
    .await?;

    // Every patch type.
    let merge = json!({"metadata": {"annotations": {"stress/merge": "1"}}});
    ok(
        &what("merge patch"),
        api.patch(&name, &PatchParams::default(), &Patch::Merge(&merge)),
    )
    .await?;
    let ops: json_patch::Patch = serde_json::from_value(
        json!([{"op": "add", "path": "/metadata/annotations/stress~1json", "value": "1"}]),
    )
    .map_err(|e| e.to_string())?;
    ok(
        &what("json patch"),
        api.patch(&name, &PatchParams::default(), &Patch::<()>::Json(ops)),
    )
    .await?;
    let strategic = json!({"metadata": {"labels": {"strategic": "1"}}});
    let (pp, smp) = (PatchParams::default(), Patch::Strategic(&strategic));
    let request = api.patch(&name, &pp, &smp);
    if kind.strategic() {
        ok(&what("strategic merge patch"), request).await?;
    } else {
        refused(&what("strategic merge patch"), 415, request).await?;
    }

    // Status writes: a merge patch and a forced apply on the subresource.
    if let Some(status) = kind.status {
        ok(
            &what("status patch"),
            api.patch_status(&name, &PatchParams::default(), &Patch::Merge(status())),
        )
        .await?;
        let mut applied = kind.object(ns, &name, json!({}));
        applied["status"] = status()["status"].clone();
        if let Some(o) = applied.as_object_mut() {
            o.remove("spec");
        }
        ok(
            &what("status apply"),
            api.patch_status(&name, &apply(&mine, true), &Patch::Apply(&applied)),
        )
        .await?;
    }

    ok(
        &what("list"),
        api.list(&ListParams::default().labels(LABEL)),
    )
    .await?;

    // A generated name, held by a finalizer through its deletion until the client releases it.
    let mut held = kind.object(ns, "", json!({LABEL: "1"}));
    held["metadata"]["generateName"] = json!(format!("{}-gen-", kind.plural));
    held["metadata"]["finalizers"] = json!([HOLD]);
    if let Some(m) = held["metadata"].as_object_mut() {
        m.remove("name");
    }
    let held: DynamicObject = serde_json::from_value(held).map_err(|e| e.to_string())?;
    let held = ok(
        &what("create (generateName)"),
        api.create(&PostParams::default(), &held),
    )
    .await?;
    let held_name = held.metadata.name.clone().unwrap_or_default();
    let marked = ok(
        &what("delete (held)"),
        api.delete(&held_name, &DeleteParams::default()),
    )
    .await?;
    if marked
        .left()
        .and_then(|o| o.metadata.deletion_timestamp)
        .is_none()
    {
        return Err(format!(
            "{}: deleted despite its finalizer",
            what("delete (held)")
        ));
    }
    let release: json_patch::Patch =
        serde_json::from_value(json!([{"op": "remove", "path": "/metadata/finalizers"}]))
            .map_err(|e| e.to_string())?;
    ok(
        &what("release finalizer"),
        api.patch(
            &held_name,
            &PatchParams::default(),
            &Patch::<()>::Json(release),
        ),
    )
    .await?;

    // Foreground deletion waits for the garbage collector; background leaves the dependent to it.
    let dp = if round.is_multiple_of(2) {
        DeleteParams::foreground()
    } else {
        DeleteParams::background()
    };
    ok(&what("delete"), api.delete(&name, &dp)).await?;
    Ok(())
}

fn configmaps() -> ApiResource {
    ApiResource::erase::<k8s_openapi::api::core::v1::ConfigMap>(&())
}

/// One client: its namespace, then every kind in every round, starting at a different kind than its peers.
async fn run_client(client: Client, me: usize, kinds: Arc<Vec<Kind>>) -> Result<(), String> {
    let ns = format!("stress-c{me}");
    let namespaces = Api::<Namespace>::all(client.clone());
    let body = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}});
    ok(
        "apply namespace",
        namespaces.patch(&ns, &apply("stress", false), &Patch::Apply(&body)),
    )
    .await?;
    for round in 0..ROUNDS {
        for i in 0..kinds.len() {
            let kind = &kinds[(i + me) % kinds.len()];
            exercise(&client, kind, &ns, me, round).await?;
        }
    }
    Ok(())
}

/// Watches one kind from the current resourceVersion until cancelled; the resourceVersions it sees must only
/// grow. Returns how many events arrived and whether `marker` was among them.
async fn watch_kind(client: Client, kind: Kind, stop: CancellationToken) -> Result<usize, String> {
    let api: Api<DynamicObject> = Api::all_with(client, &kind.resource());
    let what = format!("watch {}", kind.plural);
    let list = ok(&what, api.list_metadata(&ListParams::default().limit(1))).await?;
    let from = list.metadata.resource_version.unwrap_or_default();
    let mut events = ok(&what, api.watch(&WatchParams::default(), &from))
        .await?
        .boxed();
    let (mut seen, mut last) = (0, from.parse::<u64>().unwrap_or(0));
    loop {
        let ev = tokio::select! {
            _ = stop.cancelled() => return Ok(seen),
            ev = events.next() => ev,
        };
        let obj = match ev {
            None => return Err(format!("{what}: the stream ended")),
            Some(Err(e)) => return Err(format!("{what}: {e}")),
            Some(Ok(WatchEvent::Added(o) | WatchEvent::Modified(o) | WatchEvent::Deleted(o))) => o,
            Some(Ok(other)) => return Err(format!("{what}: unexpected {other:?}")),
        };
        let rv: u64 = obj
            .metadata
            .resource_version
            .as_deref()
            .and_then(|r| r.parse().ok())
            .unwrap_or(0);
        if rv <= last {
            return Err(format!("{what}: resourceVersion went from {last} to {rv}"));
        }
        last = rv;
        seen += 1;
        if obj.metadata.name.as_deref() == Some("marker") {
            return Ok(seen);
        }
    }
}

/// Lists namespaces (what `kubectl get ns` does) and reads `/readyz` until cancelled, each under the deadline.
async fn probe(
    client: Client,
    stop: CancellationToken,
    answered: Arc<AtomicUsize>,
) -> Result<(), String> {
    let namespaces = Api::<Namespace>::all(client.clone());
    let mut tick = tokio::time::interval(Duration::from_millis(100));
    while !stop.is_cancelled() {
        tick.tick().await;
        ok(
            "probe: list namespaces",
            namespaces.list_metadata(&ListParams::default()),
        )
        .await?;
        let ready = http::Request::get("/readyz")
            .body(Vec::new())
            .map_err(|e| e.to_string())?;
        ok("probe: /readyz", client.request_text(ready)).await?;
        answered.fetch_add(1, Ordering::Relaxed);
    }
    Ok(())
}

/// Polls `check` until it holds, failing after `DEADLINE` (a condition, not a timing target).
async fn until<F, Fut>(what: &str, mut check: F) -> Result<(), String>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    let deadline = tokio::time::Instant::now() + DEADLINE * 3;
    let mut tick = tokio::time::interval(Duration::from_millis(50));
    while tokio::time::Instant::now() < deadline {
        tick.tick().await;
        if check().await {
            return Ok(());
        }
    }
    Err(format!("timed out waiting until {what}"))
}

/// Applies `obj` (cluster-scoped) as the test's setup.
async fn setup(client: &Client, ar: ApiResource, obj: Value) -> Result<(), String> {
    let api: Api<DynamicObject> = Api::all_with(client.clone(), &ar);
    let name = obj["metadata"]["name"].as_str().unwrap_or("").to_string();
    ok(
        &format!("create {name}"),
        api.patch(&name, &apply("setup", true), &Patch::Apply(&obj)),
    )
    .await
    .map(|_| ())
}

fn resource(group: &str, version: &str, kind: &str, plural: &str) -> ApiResource {
    ApiResource {
        group: group.into(),
        version: version.into(),
        api_version: format!("{group}/{version}"),
        kind: kind.into(),
        plural: plural.into(),
    }
}

/// What admission reads from the store besides the namespace (the default IngressClass and StorageClass), and
/// the CRD of the custom resource.
async fn prepare(client: &Client) -> Result<(), String> {
    setup(
        client,
        resource("networking.k8s.io", "v1", "IngressClass", "ingressclasses"),
        json!({"apiVersion": "networking.k8s.io/v1", "kind": "IngressClass",
            "metadata": {"name": "nginx", "annotations": {"ingressclass.kubernetes.io/is-default-class": "true"}},
            "spec": {"controller": "example.com/nginx"}}),
    )
    .await?;
    setup(
        client,
        resource("storage.k8s.io", "v1", "StorageClass", "storageclasses"),
        json!({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
            "metadata": {"name": "standard", "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}},
            "provisioner": "example.com/standard"}),
    )
    .await?;
    setup(
        client,
        resource("apiextensions.k8s.io", "v1", "CustomResourceDefinition", "customresourcedefinitions"),
        json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "widgets.stress.example.io"},
            "spec": {"group": "stress.example.io", "scope": "Namespaced", "names": {"plural": "widgets", "kind": "Widget"},
                "versions": [{"name": "v1", "served": true, "storage": true, "subresources": {"status": {}},
                    "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]}}),
    )
    .await?;
    let widgets: Api<DynamicObject> = Api::all_with(
        client.clone(),
        &resource("stress.example.io", "v1", "Widget", "widgets"),
    );
    until("the Widget CRD is served", || {
        let widgets = widgets.clone();
        async move { widgets.list(&ListParams::default()).await.is_ok() }
    })
    .await
}

/// Runs `test` against a fresh server that lives on a runtime of its own. A server that hangs keeps its worker
/// threads blocked forever, and dropping a runtime waits for its workers: on failure the server's runtime is
/// abandoned instead, so the test fails within its deadlines rather than hanging the harness.
fn with_server<F, Fut>(test: F)
where
    F: FnOnce(String) -> Fut,
    Fut: Future<Output = Result<(), String>>,
{
    let dir = tempfile::tempdir().unwrap();
    let runtime = || {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap()
    };
    let (server_rt, client_rt) = (runtime(), runtime());
    let mut config = ServerConfig::new("127.0.0.1:0".parse().unwrap(), dir.path());
    config.nodes = 2;
    let server = server_rt
        .block_on(Server::start(config))
        .expect("server starts");
    let outcome = client_rt.block_on(test(server.kubeconfig("stress")));
    match outcome {
        Ok(()) => server_rt.block_on(server.shutdown()),
        Err(e) => {
            client_rt.shutdown_background();
            server_rt.shutdown_background();
            panic!("{e}");
        }
    }
}

/// A client of the server with this kubeconfig.
async fn connect(kubeconfig: &str) -> Result<Client, String> {
    let kc: kube::config::Kubeconfig =
        flotilla_yaml::from_str(kubeconfig).map_err(|e| e.to_string())?;
    let config = kube::Config::from_custom_kubeconfig(kc, &Default::default())
        .await
        .map_err(|e| e.to_string())?;
    Client::try_from(config).map_err(|e| e.to_string())
}

/// Server-side apply that creates an object of every kind answers at once, runs the admission that reads the
/// store (the default ServiceAccount, IngressClass and StorageClass are filled in), and the server keeps
/// answering afterwards.
#[test]
fn server_side_apply_creates_objects_whose_admission_reads_the_store() {
    with_server(|kubeconfig| async move {
        let client = connect(&kubeconfig).await?;
        prepare(&client).await?;
        for kind in kinds() {
            let api = kind.api(&client, "default");
            let name = format!("applied-{}", kind.plural);
            let obj = kind.object("default", &name, json!({}));
            let what = format!("apply (create) {}", kind.plural);
            let created = ok(
                &what,
                api.patch(&name, &apply("ssa", false), &Patch::Apply(&obj)),
            )
            .await?;
            let data = serde_json::to_value(&created).map_err(|e| e.to_string())?;
            let expect = match kind.plural {
                "pods" => Some(("/spec/serviceAccountName", "default")),
                "ingresses" => Some(("/spec/ingressClassName", "nginx")),
                "persistentvolumeclaims" => Some(("/spec/storageClassName", "standard")),
                _ => None,
            };
            if let Some((pointer, want)) = expect
                && data.pointer(pointer).and_then(Value::as_str) != Some(want)
            {
                return Err(format!("{what}: {pointer} is not {want:?}: {data}"));
            }
        }
        let namespaces = Api::<Namespace>::all(client);
        ok(
            "list namespaces",
            namespaces.list_metadata(&ListParams::default()),
        )
        .await?;
        Ok(())
    });
}

/// Many clients over every verb and eight kinds, with watchers and a prober: no request may take longer than
/// the deadline, every watch sees resourceVersions only grow, and every deletion completes.
#[test]
fn concurrent_clients_over_every_verb_never_hang() {
    with_server(|kubeconfig| async move {
        let client = connect(&kubeconfig).await?;
        prepare(&client).await?;
        let kinds = Arc::new(kinds());
        let stop = CancellationToken::new();
        let answered = Arc::new(AtomicUsize::new(0));
        let prober = tokio::spawn(probe(client.clone(), stop.clone(), answered.clone()));
        let mut watchers = Vec::new();
        for kind in kinds.iter() {
            let watcher = watch_kind(connect(&kubeconfig).await?, *kind, stop.child_token());
            watchers.push(tokio::spawn(watcher));
        }
        let mut clients = Vec::new();
        for me in 0..CLIENTS {
            let client = connect(&kubeconfig).await?;
            clients.push(tokio::spawn(run_client(client, me, kinds.clone())));
        }
        let mut failures = Vec::new();
        for c in clients {
            match c.await {
                Ok(Ok(())) => {}
                Ok(Err(e)) => failures.push(e),
                Err(e) => failures.push(format!("a client panicked: {e}")),
            }
        }
        // A last write per kind that every watcher must see: watch delivery did not stall either.
        for kind in kinds.iter() {
            let api = kind.api(&client, "default");
            let marker = Patch::Apply(kind.object("default", "marker", json!({})));
            let pp = apply("stress", false);
            if let Err(e) = ok("apply marker", api.patch("marker", &pp, &marker)).await {
                failures.push(e);
            }
        }
        for (kind, w) in kinds.iter().zip(watchers) {
            match tokio::time::timeout(DEADLINE, w).await {
                Err(_) => failures.push(format!("watch {}: the marker never arrived", kind.plural)),
                Ok(Err(e)) => failures.push(format!("watch {} panicked: {e}", kind.plural)),
                Ok(Ok(Ok(0))) => failures.push(format!("watch {}: no events", kind.plural)),
                Ok(Ok(Ok(_))) => {}
                Ok(Ok(Err(e))) => failures.push(e),
            }
        }
        stop.cancel();
        match prober.await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => failures.push(e),
            Err(e) => failures.push(format!("the prober panicked: {e}")),
        }
        if !failures.is_empty() {
            return Err(format!("{failures:#?}"));
        }
        if answered.load(Ordering::Relaxed) == 0 {
            return Err("the prober never got an answer".into());
        }
        // Every deletion completes: finalizers released, foreground deletions finished by the collector,
        // dependents collected, namespaces emptied.
        for kind in kinds.iter() {
            let api: Api<DynamicObject> = Api::all_with(client.clone(), &kind.resource());
            until(&format!("every {} of the run is gone", kind.plural), || {
                let api = api.clone();
                async move {
                    api.list_metadata(&ListParams::default().labels(LABEL))
                        .await
                        .is_ok_and(|l| l.items.is_empty())
                }
            })
            .await?;
        }
        Ok(())
    });
}
