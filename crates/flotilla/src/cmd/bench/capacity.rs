//! What the API servers themselves can absorb (issue 17): the writes a propagation made, by resource and verb,
//! replayed from a plain client at the benchmark's concurrency against the same servers, on copies of the
//! objects the propagation wrote (same kinds, same sizes) in a namespace of their own. Flotilla's propagation
//! time divided by the replay's is the figure that says how much of the servers' speed Flotilla uses.
//!
//! Copies are made so that no controller acts on them: they live outside any policy's namespace and outside
//! the execution namespaces, and copied bindings name another scheduler and a template that does not exist.
//! On members, the workload controllers do act on copied workloads, as they acted on the propagated ones: the
//! propagated objects are read as samples and then deleted before the replay, so that the copies' Pods find the
//! room theirs had, and the replay also reports when the members' controllers had every copy ready.
//!
//! Every replayed update must be stored as the propagation's was: each status write carries a changed status,
//! and an update the server answers without moving the copy's resourceVersion is counted
//! (`replayed_updates_unchanged`).

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use anyhow::Context;
use flotilla_api::names;
use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, DeleteParams, DynamicObject, ListParams, Patch, PatchParams, PostParams};
use kube::core::ApiResource;
use kube::discovery::{Discovery, Scope};
use kube::{Client, ResourceExt};
use serde_json::{Value, json};
use tokio::time::Instant;

use super::writes::Writes;

/// Namespace of the copies, on every server.
const NAMESPACE: &str = "flotilla-bench-capacity";

/// The group of the policies, which the replay leaves out.
const POLICY_GROUP: &str = "policy.karmada.io";

/// Namespaces the propagation wrote in, where the objects to copy are found: the templates' and the
/// execution namespaces (on members, the templates' namespace too).
fn is_source_namespace(namespace: &str, templates: &str) -> bool {
    namespace == templates || namespace.starts_with("karmada-es-")
}

/// One server's replay: its client and the writes to make there.
pub(super) struct Server<'a> {
    /// For messages.
    pub name: String,
    pub client: &'a Client,
    pub writes: Writes,
    /// A member, whose own controllers bring the copied Deployments up as they brought up the propagated ones.
    pub member: bool,
}

/// What one write of the replay does.
enum Op {
    Create(Value),
    /// A PUT of the whole object (or its status), at the version the copy's last write left.
    Replace {
        object: Value,
        status: bool,
    },
    /// A merge patch of an annotation, or of the status when `status` holds the status to write: a status
    /// patch that names only metadata changes nothing (the status subresource keeps the stored metadata), so
    /// the server would skip the write.
    MergePatch {
        status: Option<Value>,
        seq: usize,
    },
    Delete,
}

/// One write of the replay, to the copy `name`.
struct Write {
    api: Api<DynamicObject>,
    name: String,
    /// The copy's key in [`Versions`]: server and name.
    key: String,
    op: Op,
}

/// What a replay keeps across its writes.
#[derive(Default)]
struct Ledger {
    /// Each copy's resourceVersion after its last write: custom resources take no PUT without one.
    versions: Mutex<HashMap<String, String>>,
    /// Updates the server answered without storing anything (the copy's resourceVersion did not move): a
    /// replay is only the same writes when this stays 0.
    unchanged: AtomicUsize,
}

impl Ledger {
    fn version(&self, key: &str) -> Option<String> {
        self.versions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(key)
            .cloned()
    }
}

type Versions = Arc<Ledger>;

impl Write {
    async fn run(self, versions: Versions) -> anyhow::Result<()> {
        let Write { api, name, key, op } = self;
        let (post, patch) = (PostParams::default(), PatchParams::default());
        let before = versions.version(&key);
        let written = match op {
            Op::Create(object) => Some(api.create(&post, &serde_json::from_value(object)?).await?),
            Op::Replace { mut object, status } => {
                object["metadata"]["resourceVersion"] = json!(before);
                let mut object: DynamicObject = serde_json::from_value(object)?;
                let replace = |object: DynamicObject| {
                    let (api, name, post) = (api.clone(), name.clone(), post.clone());
                    async move {
                        if status {
                            api.replace_status(&name, &post, &object).await
                        } else {
                            api.replace(&name, &post, &object).await
                        }
                    }
                };
                match replace(object.clone()).await {
                    // Someone else wrote the copy meanwhile (the API server's own defaulting or a
                    // controller): again at the current version, as a client would.
                    Err(kube::Error::Api(s)) if s.code == 409 => {
                        object.metadata.resource_version = api.get(&name).await?.resource_version();
                        Some(replace(object).await?)
                    }
                    result => Some(result?),
                }
            }
            Op::MergePatch { status, seq } => Some(match status {
                Some(status) => {
                    let body = Patch::Merge(json!({ "status": status }));
                    api.patch_status(&name, &patch, &body).await?
                }
                None => {
                    let annotations = json!({"bench.flotilla.io/seq": seq.to_string()});
                    let body = Patch::Merge(json!({"metadata": {"annotations": annotations}}));
                    api.patch(&name, &patch, &body).await?
                }
            }),
            Op::Delete => {
                api.delete(&name, &DeleteParams::default()).await?;
                None
            }
        };
        if let Some(version) = written.and_then(|object| object.resource_version()) {
            if before.as_ref() == Some(&version) {
                versions.unchanged.fetch_add(1, Ordering::Relaxed);
            }
            versions
                .versions
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .insert(key, version);
        }
        Ok(())
    }
}

/// Writes one after another (the updates of one copy); chains run side by side.
type Chain = Vec<Write>;

async fn run_chain(chain: Chain, versions: Versions) -> anyhow::Result<()> {
    for write in chain {
        write.run(versions.clone()).await?;
    }
    Ok(())
}

/// A copy of `sample` named `name` in the copies' namespace: metadata reduced to what a client writes, no
/// status, and for bindings another scheduler and an absent template so that no controller acts on it.
fn copy_of(sample: &DynamicObject, resource: &ApiResource, name: &str, namespaced: bool) -> Value {
    let mut object = serde_json::to_value(sample).unwrap_or(Value::Null);
    let mut metadata = json!({"name": name, "labels": sample.labels(), "annotations": sample.annotations()});
    if namespaced {
        metadata["namespace"] = json!(NAMESPACE);
    }
    object["metadata"] = metadata;
    object["apiVersion"] = json!(resource.api_version);
    object["kind"] = json!(resource.kind);
    if let Some(map) = object.as_object_mut() {
        map.remove("status");
    }
    if resource.kind.ends_with("ResourceBinding") {
        object["spec"]["schedulerName"] = json!("flotilla-bench-capacity");
        object["spec"]["resource"]["name"] = json!(format!("{name}-absent"));
    }
    // Events name the object they are about; the copy stays an Event about something that does not exist.
    if resource.kind == "Event" {
        object["metadata"]["namespace"] = json!(NAMESPACE);
        if object.get("involvedObject").is_some() {
            object["involvedObject"]["namespace"] = json!(NAMESPACE);
        }
        if object.get("regarding").is_some() {
            object["regarding"]["namespace"] = json!(NAMESPACE);
        }
    }
    object
}

/// The sample's status, written as the `seq`th write of a copy: its first condition's message names `seq`, so
/// that every status write of a copy changes it, as each of the propagation's did (a status write that
/// changes nothing is not stored).
fn status_of(sample: &DynamicObject, seq: usize) -> Value {
    let mut status = sample.data.get("status").cloned().unwrap_or_else(|| json!({}));
    let message = status
        .get_mut("conditions")
        .and_then(Value::as_array_mut)
        .and_then(|conditions| conditions.iter_mut().find_map(|c| c.get_mut("message")));
    if let Some(message) = message {
        *message = json!(format!("{} (bench write {seq})", message.as_str().unwrap_or_default()));
    }
    status
}

/// `resource[.group][/subresource] VERB` split into its parts.
fn parse_key(key: &str) -> Option<(&str, &str, Option<&str>, &str)> {
    let (path, verb) = key.split_once(' ')?;
    let (resource, subresource) = match path.split_once('/') {
        Some((resource, sub)) => (resource, Some(sub)),
        None => (path, None),
    };
    let (plural, group) = resource.split_once('.').unwrap_or((resource, ""));
    Some((plural, group, subresource, verb))
}

/// One object the propagation wrote, which a replay's copies are made like, with its resource.
struct Sample {
    object: DynamicObject,
    resource: ApiResource,
    namespaced: bool,
}

/// A sample of each resource the servers' writes name, by server name, plural and group: read while the
/// propagation's objects still exist, so that they can be deleted before the replay and its copies find the
/// room the propagated objects had (a member's nodes take only so many Pods).
pub(super) struct Samples(HashMap<(String, String, String), Sample>);

/// Reads [`Samples`] for `servers`' writes, from the namespaces the propagation wrote in.
///
/// # Errors
/// When a server cannot be discovered or listed.
pub(super) async fn samples(servers: &[Server<'_>], templates_namespace: &str) -> anyhow::Result<Samples> {
    let mut samples = HashMap::new();
    for server in servers {
        let discovery = Discovery::new(server.client.clone())
            .run()
            .await
            .with_context(|| format!("failed to discover the resources of {}", server.name))?;
        let resources: std::collections::BTreeSet<(String, String)> = server
            .writes
            .0
            .keys()
            .filter_map(|key| parse_key(key))
            .map(|(plural, group, _, _)| (plural.to_owned(), group.to_owned()))
            .collect();
        for (plural, group) in resources {
            let found = discovery
                .groups()
                .flat_map(|g| g.recommended_resources())
                .find(|(ar, _)| ar.plural == plural && ar.group == group);
            let Some((resource, capabilities)) = found else {
                continue;
            };
            let namespaced = capabilities.scope == Scope::Namespaced;
            let all: Api<DynamicObject> = Api::all_with(server.client.clone(), &resource);
            let sample = all
                .list(&ListParams::default())
                .await
                .with_context(|| format!("failed to list {plural} on {}", server.name))?
                .items
                .into_iter()
                .find(|o| {
                    let source = |ns: String| is_source_namespace(&ns, templates_namespace);
                    !namespaced || o.namespace().is_some_and(source)
                });
            if let Some(object) = sample {
                let sample = Sample {
                    object,
                    resource,
                    namespaced,
                };
                samples.insert((server.name.clone(), plural, group), sample);
            }
        }
    }
    Ok(Samples(samples))
}

/// One resource's writes on one server.
#[derive(Default)]
struct Counts {
    creates: usize,
    /// (subresource, verb, count) of updates, patches and applies.
    changes: Vec<(Option<String>, String, usize)>,
    deletes: usize,
}

/// The writes of one server, planned: creates first, then updates and patches, then deletes, each list
/// interleaved across resources as the propagation's were; and, untimed, the deletes of the cluster-scoped
/// copies the propagation did not delete (namespaced ones go with the copies' namespace). Copies are named
/// after `run`, so that a replay never meets a cluster-scoped copy of an earlier one that is still being
/// deleted (a namespace takes seconds to go).
async fn plan(
    server: &Server<'_>,
    samples: &Samples,
    run: &str,
    versions: &Versions,
) -> anyhow::Result<[Vec<Chain>; 4]> {
    let mut by_resource: BTreeMap<(String, String), Counts> = BTreeMap::new();
    for (key, n) in &server.writes.0 {
        let Some((plural, group, subresource, verb)) = parse_key(key) else {
            continue;
        };
        // Policies are the benchmark's setup, not what templates cause; a copy would claim the copies.
        if group == POLICY_GROUP {
            continue;
        }
        let entry = by_resource
            .entry((plural.to_owned(), group.to_owned()))
            .or_default();
        let n = usize::try_from(*n).unwrap_or(usize::MAX);
        match (subresource, verb) {
            (None, "POST") => entry.creates += n,
            (None, "DELETE") => entry.deletes += n,
            (sub, "PUT" | "PATCH" | "APPLY") => {
                entry.changes.push((sub.map(str::to_owned), verb.to_owned(), n));
            }
            _ => {}
        }
    }
    let (mut creates, mut updates, mut deletes, mut cleanup) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for ((plural, group), counts) in by_resource {
        let Counts {
            creates: posts,
            changes,
            deletes: removals,
        } = counts;
        let Some(Sample {
            object: sample,
            resource,
            namespaced,
        }) = samples.0.get(&(server.name.clone(), plural.clone(), group.clone()))
        else {
            continue;
        };
        let (sample, resource, namespaced) = (sample, resource, *namespaced);
        let api: Api<DynamicObject> = if namespaced {
            Api::namespaced_with(server.client.clone(), NAMESPACE, resource)
        } else {
            Api::all_with(server.client.clone(), resource)
        };
        // Every update needs an object to update: at least one copy, made outside the timed phase when the
        // propagation created none of this resource here.
        let copies = posts.max(1);
        // Core Events and events.k8s.io Events are one resource: the group keeps their copies apart.
        let prefix = if group.is_empty() {
            format!("flotilla-bench-cap-{run}-{plural}")
        } else {
            format!("flotilla-bench-cap-{run}-{plural}-{}", group.replace('.', "-"))
        };
        let names: Vec<String> = (0..copies).map(|i| format!("{prefix}-{i}")).collect();
        let write = |name: &str, op: Op| Write {
            api: api.clone(),
            name: name.to_owned(),
            key: format!("{}/{name}", server.name),
            op,
        };
        for (i, name) in names.iter().enumerate() {
            let create = write(name, Op::Create(copy_of(sample, resource, name, namespaced)));
            if i < posts {
                creates.push(vec![create]);
            } else {
                run_chain(vec![create], versions.clone())
                    .await
                    .with_context(|| format!("failed to create a copy of {plural} on {}", server.name))?;
            }
        }
        let mut chains: Vec<Chain> = names.iter().map(|_| Vec::new()).collect();
        let mut seq = 0;
        for (subresource, verb, n) in changes {
            let status = subresource.as_deref() == Some("status");
            for i in 0..n {
                let name = &names[i % names.len()];
                seq += 1;
                let op = if verb == "PUT" {
                    let mut object = copy_of(sample, resource, name, namespaced);
                    object["metadata"]["annotations"]["bench.flotilla.io/seq"] = json!(seq.to_string());
                    if status {
                        object["status"] = status_of(sample, seq);
                    }
                    Op::Replace { object, status }
                } else {
                    let status = status.then(|| status_of(sample, seq));
                    Op::MergePatch { status, seq }
                };
                chains[i % names.len()].push(write(name, op));
            }
        }
        updates.extend(chains.into_iter().filter(|chain| !chain.is_empty()));
        for (i, name) in names.iter().enumerate() {
            if i < removals {
                deletes.push(vec![write(name, Op::Delete)]);
            } else if !namespaced {
                cleanup.push(vec![write(name, Op::Delete)]);
            }
        }
    }
    Ok([creates, updates, deletes, cleanup])
}

/// The writes of a member that Flotilla made: its objects and their namespaces, not their status or what the
/// member's own controllers (ReplicaSets, Pods, Events) and kubelets wrote, which they write again for the
/// copies.
pub(super) fn flotillas_member_writes(member: &Writes, control: &Writes) -> Writes {
    let resource = |key: &str| key.split([' ', '/']).next().unwrap_or("").to_owned();
    let templates: std::collections::BTreeSet<String> = control
        .0
        .keys()
        .filter(|key| key.ends_with(" POST") && !key.contains('/'))
        .map(|key| resource(key))
        .filter(|r| !r.starts_with("events"))
        .collect();
    Writes(
        member
            .0
            .iter()
            .filter(|(key, _)| {
                !key.contains('/') && (templates.contains(&resource(key)) || resource(key) == "namespaces")
            })
            .map(|(key, n)| (key.clone(), *n))
            .collect(),
    )
}

/// What one replay measured.
pub(super) struct Replayed {
    /// How long the servers took for the writes.
    pub took: Duration,
    /// How long until, besides, the members' controllers had every copied Deployment's replicas ready, as a
    /// propagated template's had to be before it counted as aggregated: the writes those controllers make
    /// for the copies (ReplicaSets, Pods, their status) are then done too. `None` when they were not within
    /// [`MEMBERS_READY`].
    pub members_ready: Option<Duration>,
    /// Updates the servers answered without storing them; see [`Ledger::unchanged`].
    pub unchanged: usize,
}

/// How long a replay waits for the members' controllers after its last write.
const MEMBERS_READY: Duration = Duration::from_secs(300);

/// Counts the Deployment copies on a member that report every replica ready, from a watch of the copies'
/// namespace started before the replay.
fn count_ready(client: &Client) -> (tokio::sync::watch::Receiver<usize>, tokio::task::JoinHandle<()>) {
    let (tx, rx) = tokio::sync::watch::channel(0);
    let mut ready = std::collections::HashSet::new();
    let task = super::measure::watch_deployments(client.clone(), NAMESPACE, move |d| {
        let want = d.spec.as_ref().and_then(|s| s.replicas).unwrap_or(1);
        let have = d.status.as_ref().and_then(|s| s.ready_replicas).unwrap_or(0);
        if have >= want {
            ready.insert(d.name_any());
            tx.send_replace(ready.len());
        }
    });
    (rx, task)
}

/// Replays `servers`' writes at `concurrency` and returns how long the servers took.
///
/// # Errors
/// When a server cannot be discovered or listed, or a replayed write fails.
pub(super) async fn replay(
    servers: &[Server<'_>],
    samples: &Samples,
    concurrency: usize,
) -> anyhow::Result<Replayed> {
    let versions = Versions::default();
    let run = replay_token();
    let mut phases: [Vec<Chain>; 3] = Default::default();
    let mut cleanup: Vec<Chain> = Vec::new();
    for server in servers {
        // The control plane's would be propagated to the members, where the replay makes its own.
        let labels = json!({ names::labels::SKIP_AUTO_PROPAGATION: "true" });
        super::measure::fresh_namespace(server.client, NAMESPACE, labels).await?;
        let [creates, updates, deletes, leftovers] = plan(server, samples, &run, &versions).await?;
        for (phase, writes) in phases.iter_mut().zip([creates, updates, deletes]) {
            phase.extend(writes);
        }
        cleanup.extend(leftovers);
    }
    // Each member's Deployment copies, and how many of them are ready.
    let mut readiness = Vec::new();
    for server in servers.iter().filter(|server| server.member) {
        let want = server.writes.0.get("deployments.apps POST").copied().unwrap_or(0);
        if want > 0 {
            let (ready, task) = count_ready(server.client);
            readiness.push((usize::try_from(want).unwrap_or(usize::MAX), ready, task));
        }
    }
    let total: usize = phases.iter().flatten().map(Vec::len).sum();
    eprintln!("bench: replaying {total} writes from a plain client at concurrency {concurrency}");
    let start = Instant::now();
    for phase in phases {
        futures::stream::iter(phase)
            .map(|chain| run_chain(chain, versions.clone()))
            .buffer_unordered(concurrency.max(1))
            .try_collect::<Vec<()>>()
            .await
            .context("a replayed write failed")?;
    }
    let took = start.elapsed();
    let mut members_ready = Some(took);
    for (want, ready, task) in &mut readiness {
        let all = tokio::time::timeout(MEMBERS_READY, ready.wait_for(|n| *n >= *want)).await;
        task.abort();
        members_ready = match all {
            Ok(Ok(_)) => members_ready.map(|_| start.elapsed()),
            _ => {
                eprintln!("bench: the members' copies were not all ready {}s after the replay", MEMBERS_READY.as_secs());
                None
            }
        };
    }
    // Best effort: a copy left behind is inert and named after its replay.
    futures::stream::iter(cleanup)
        .map(|chain| run_chain(chain, versions.clone()))
        .buffer_unordered(concurrency.max(1))
        .collect::<Vec<_>>()
        .await;
    for server in servers {
        let namespaces: Api<Namespace> = Api::all(server.client.clone());
        let _ = namespaces.delete(NAMESPACE, &DeleteParams::default()).await;
    }
    let unchanged = versions.unchanged.load(Ordering::Relaxed);
    if unchanged > 0 {
        eprintln!("bench: {unchanged} replayed updates changed nothing, so the servers stored none of them");
    }
    Ok(Replayed {
        took,
        members_ready,
        unchanged,
    })
}

/// A short token that differs from one replay to the next (the time in tenths of a second, base 36, its last
/// five digits: unique over 139 days).
fn replay_token() -> String {
    let tenths = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() / 100);
    let mut n = tenths % 36u128.pow(5);
    let mut digits = Vec::with_capacity(5);
    for _ in 0..5 {
        digits.push(char::from_digit((n % 36) as u32, 36).unwrap_or('0'));
        n /= 36;
    }
    digits.iter().rev().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_split_into_resource_group_subresource_and_verb() {
        assert_eq!(
            parse_key("works.work.karmada.io/status PATCH"),
            Some(("works", "work.karmada.io", Some("status"), "PATCH"))
        );
        assert_eq!(parse_key("events POST"), Some(("events", "", None, "POST")));
        assert_eq!(parse_key("deployments.apps PUT"), Some(("deployments", "apps", None, "PUT")));
        assert_eq!(parse_key("nonsense"), None);
    }

    #[test]
    fn only_flotillas_own_writes_are_replayed_on_members() {
        let control = Writes(BTreeMap::from([
            ("deployments.apps POST".to_owned(), 10),
            ("works.work.karmada.io POST".to_owned(), 20),
            ("events POST".to_owned(), 7),
        ]));
        let member = Writes(BTreeMap::from([
            ("deployments.apps POST".to_owned(), 10),
            ("deployments.apps PUT".to_owned(), 2),
            ("deployments.apps/status PUT".to_owned(), 10),
            ("replicasets.apps POST".to_owned(), 10),
            ("pods POST".to_owned(), 10),
            ("events POST".to_owned(), 30),
            ("namespaces POST".to_owned(), 1),
        ]));
        assert_eq!(
            flotillas_member_writes(&member, &control).0,
            BTreeMap::from([
                ("deployments.apps POST".to_owned(), 10),
                ("deployments.apps PUT".to_owned(), 2),
                ("namespaces POST".to_owned(), 1),
            ])
        );
    }

    #[test]
    fn copies_of_bindings_are_left_alone_by_the_controllers() {
        let sample: DynamicObject = serde_json::from_value(json!({
            "apiVersion": "work.karmada.io/v1alpha2", "kind": "ResourceBinding",
            "metadata": {"name": "web-deployment", "namespace": "flotilla-bench", "uid": "u", "resourceVersion": "9",
                         "finalizers": ["karmada.io/binding-controller"], "labels": {"a": "b"}},
            "spec": {"resource": {"kind": "Deployment", "name": "web"}, "clusters": [{"name": "member1"}]},
            "status": {"schedulerObservedGeneration": 1},
        }))
        .unwrap_or_else(|e| panic!("{e}"));
        let resource = ApiResource {
            group: "work.karmada.io".into(),
            version: "v1alpha2".into(),
            api_version: "work.karmada.io/v1alpha2".into(),
            kind: "ResourceBinding".into(),
            plural: "resourcebindings".into(),
        };
        let copy = copy_of(&sample, &resource, "copy", true);
        let metadata = json!({"name": "copy", "namespace": NAMESPACE, "labels": {"a": "b"}, "annotations": {}});
        assert_eq!(copy["metadata"], metadata);
        assert_eq!(copy["spec"]["schedulerName"], "flotilla-bench-capacity");
        assert_eq!(copy["spec"]["resource"]["name"], "copy-absent");
        let clusters = json!([{"name": "member1"}]);
        assert_eq!(copy["spec"]["clusters"], clusters, "as large as what was written");
        assert!(copy.get("status").is_none());
    }

    #[test]
    fn every_status_write_of_a_copy_changes_its_status() {
        let sample: DynamicObject = serde_json::from_value(json!({
            "apiVersion": "work.karmada.io/v1alpha1", "kind": "Work",
            "metadata": {"name": "w", "namespace": "karmada-es-member1"},
            "status": {"conditions": [{"type": "Applied", "status": "True", "message": "applied"}],
                       "manifestStatuses": [{"identifier": {"name": "web"}}]},
        }))
        .unwrap_or_else(|e| panic!("{e}"));
        let (first, second) = (status_of(&sample, 1), status_of(&sample, 2));
        assert_ne!(first, second);
        assert_eq!(first["conditions"][0]["message"], "applied (bench write 1)");
        assert_eq!(first["manifestStatuses"], sample.data["status"]["manifestStatuses"]);
        let bare: DynamicObject = serde_json::from_value(json!({
            "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"},
        }))
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(status_of(&bare, 1), json!({}));
    }
}
