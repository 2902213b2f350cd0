//! The propagation measurement: watches every member and the control plane, creates the templates, and
//! timestamps each member object's first appearance and each template's aggregated status.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use anyhow::Context;
use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, DeleteParams, PostParams};
use kube::runtime::wait::{await_condition, conditions};
use kube::runtime::watcher;
use kube::{Client, ResourceExt};
use serde_json::{Value, json};
use tokio::sync::Notify;
use tokio::time::Instant;

use super::Args;
use super::capacity;
use super::writes::{Writes, ratio};

/// Namespace of the benchmark's templates.
pub(super) const NAMESPACE: &str = "flotilla-bench";

/// The control plane and members a propagation is measured on: the embedded environment's, or any joined
/// ones (`--kubeconfig`).
pub(super) struct Target {
    /// The control plane.
    pub control: Client,
    /// Each member's name (its Cluster's) and client.
    pub members: Vec<(String, Client)>,
    /// The process running the controllers, whose CPU is measured (`None`: this one).
    pub controller_pid: Option<u32>,
    /// Where the controllers serve `/metrics`, when known: their reconciles and dropped Events are reported.
    pub controller_metrics_url: Option<String>,
}

/// What the watchers saw, shared with the creating task.
#[derive(Default)]
struct Seen {
    created: HashMap<String, Instant>,
    /// First time each (member, template) object was seen in a member.
    in_member: HashMap<(usize, String), Instant>,
    /// First time each template's status showed every member's replicas.
    aggregated: HashMap<String, Instant>,
}

struct Shared {
    seen: Mutex<Seen>,
    changed: Notify,
}

impl Shared {
    fn update(&self, f: impl FnOnce(&mut Seen)) {
        f(&mut self.seen.lock().unwrap_or_else(PoisonError::into_inner));
        self.changed.notify_waiters();
    }

    fn counts(&self) -> (usize, usize, usize) {
        let seen = self.seen.lock().unwrap_or_else(PoisonError::into_inner);
        (
            seen.created.len(),
            seen.in_member.len(),
            seen.aggregated.len(),
        )
    }
}

/// Resident set size of this process.
pub(super) fn rss_bytes() -> Option<u64> {
    proc_status_kb("VmRSS:").map(|kb| kb * 1024)
}

/// Peak resident set size of this process.
pub(super) fn peak_rss_bytes() -> Option<u64> {
    proc_status_kb("VmHWM:").map(|kb| kb * 1024)
}

fn proc_status_kb(key: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find(|l| l.starts_with(key))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

/// Bytes as MiB, one decimal.
pub(super) fn mb(bytes: u64) -> f64 {
    (bytes as f64 / 1024.0 / 1024.0 * 10.0).round() / 10.0
}

fn template(name: &str, replicas: i32) -> anyhow::Result<Deployment> {
    serde_json::from_value(json!({
        "metadata": {"name": name, "namespace": NAMESPACE, "labels": {"app": name}},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}},
                         "spec": {"containers": [{"name": "app", "image": "nginx",
                                  "resources": {"requests": {"cpu": "1m", "memory": "1Mi"}}}]}},
        },
    }))
    .context("failed to build a template")
}

/// Creates namespace `name` with `labels` (an existing one is used as it is); one that a previous run left
/// being deleted is waited for first, since nothing can be created in it.
pub(super) async fn fresh_namespace(client: &Client, name: &str, labels: Value) -> anyhow::Result<()> {
    let namespaces: Api<Namespace> = Api::all(client.clone());
    await_terminating_namespace(client, name).await?;
    let ns: Namespace = serde_json::from_value(json!({"metadata": {"name": name, "labels": labels}}))?;
    match namespaces.create(&PostParams::default(), &ns).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(s)) if s.code == 409 => Ok(()),
        Err(e) => Err(e).with_context(|| format!("failed to create namespace {name}")),
    }
}

/// How long a namespace may take to be deleted.
const NAMESPACE_DELETION: Duration = Duration::from_secs(300);

/// Deletes the templates' namespace and waits until Flotilla has deleted it on every member too (a failure is
/// said on stderr: a next run waits for what is left).
pub(super) async fn remove_templates(target: &Target) {
    let namespaces: Api<Namespace> = Api::all(target.control.clone());
    let _ = namespaces.delete(NAMESPACE, &DeleteParams::default()).await;
    let servers = std::iter::once(("the control plane", &target.control))
        .chain(target.members.iter().map(|(name, client)| (name.as_str(), client)));
    for (name, client) in servers {
        if let Err(e) = await_namespace_gone(client, NAMESPACE).await {
            eprintln!("bench: {name}: {e:#}; a next run may have to wait for it");
        }
    }
}

/// Waits for namespace `name` to be gone if it is being deleted.
pub(super) async fn await_terminating_namespace(client: &Client, name: &str) -> anyhow::Result<()> {
    match read_namespace(client, name).await? {
        Some(ns) if ns.metadata.deletion_timestamp.is_some() => {
            eprintln!("bench: waiting for namespace {name} of a previous run to be deleted");
            await_deleted(client, name, &ns).await
        }
        _ => Ok(()),
    }
}

/// Waits for namespace `name` to be gone (at once when there is none).
pub(super) async fn await_namespace_gone(client: &Client, name: &str) -> anyhow::Result<()> {
    match read_namespace(client, name).await? {
        Some(ns) => await_deleted(client, name, &ns).await,
        None => Ok(()),
    }
}

async fn read_namespace(client: &Client, name: &str) -> anyhow::Result<Option<Namespace>> {
    Api::<Namespace>::all(client.clone())
        .get_opt(name)
        .await
        .with_context(|| format!("failed to read namespace {name}"))
}

/// Waits for `ns`, as read, to be deleted.
async fn await_deleted(client: &Client, name: &str, ns: &Namespace) -> anyhow::Result<()> {
    let uid = ns.uid().unwrap_or_default();
    let deleted = await_condition(Api::<Namespace>::all(client.clone()), name, conditions::is_deleted(&uid));
    tokio::time::timeout(NAMESPACE_DELETION, deleted)
        .await
        .with_context(|| {
            format!(
                "namespace {name} was still there {}s later",
                NAMESPACE_DELETION.as_secs()
            )
        })?
        .with_context(|| format!("failed to watch namespace {name}"))?;
    Ok(())
}

async fn setup(client: &Client, members: &[String]) -> anyhow::Result<()> {
    fresh_namespace(client, NAMESPACE, json!({})).await?;
    let policy = json!({
        "apiVersion": "policy.karmada.io/v1alpha1", "kind": "PropagationPolicy",
        "metadata": {"name": "bench", "namespace": NAMESPACE},
        "spec": {
            "resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment"}],
            "placement": {"clusterAffinity": {"clusterNames": members}},
        },
    });
    let api: Api<kube::api::DynamicObject> = Api::namespaced_with(
        client.clone(),
        NAMESPACE,
        &kube::core::ApiResource::from_gvk_with_plural(
            &kube::core::GroupVersionKind::gvk(
                "policy.karmada.io",
                "v1alpha1",
                "PropagationPolicy",
            ),
            "propagationpolicies",
        ),
    );
    match api
        .create(&PostParams::default(), &serde_json::from_value(policy)?)
        .await
    {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(s)) if s.code == 409 => Ok(()),
        Err(e) => Err(e).context("failed to create the benchmark PropagationPolicy"),
    }
}

/// Watches Deployments of the benchmark namespace on one cluster and records what `record` extracts.
fn watch(
    client: Client,
    shared: Arc<Shared>,
    record: impl Fn(&mut Seen, &Deployment, Instant) + Send + 'static,
) -> tokio::task::JoinHandle<()> {
    watch_deployments(client, NAMESPACE, move |d| {
        let now = Instant::now();
        shared.update(|seen| record(seen, d, now));
    })
}

/// Calls `on_apply` with every Deployment of `namespace` on one cluster as it is listed and as it changes,
/// until the task is aborted; a failed watch is retried.
pub(super) fn watch_deployments(
    client: Client,
    namespace: &str,
    mut on_apply: impl FnMut(&Deployment) + Send + 'static,
) -> tokio::task::JoinHandle<()> {
    let api: Api<Deployment> = Api::namespaced(client, namespace);
    tokio::spawn(async move {
        let mut events = std::pin::pin!(watcher::watcher(api, watcher::Config::default()));
        loop {
            match events.try_next().await {
                Ok(Some(watcher::Event::Apply(d) | watcher::Event::InitApply(d))) => on_apply(&d),
                Ok(Some(_)) => {}
                Ok(None) => return,
                Err(e) => {
                    tracing::debug!(error = %e, "bench watch failed; retrying");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
        }
    })
}

/// The control plane's writes once two scrapes a second apart agree (or at `deadline`, whichever first).
async fn settled(client: &Client, deadline: Instant) -> anyhow::Result<Writes> {
    let mut last = Writes::scrape(client).await?;
    loop {
        let _ = tokio::time::timeout_at(deadline, tokio::time::sleep(Duration::from_secs(1))).await;
        let now = Writes::scrape(client).await?;
        if now.template_writes() == last.template_writes() || Instant::now() >= deadline {
            return Ok(now);
        }
        last = now;
    }
}

/// User and system CPU the process `pid` (this one when `None`) has used, from `/proc/<pid>/stat` (at
/// Linux's 100 ticks a second).
fn cpu_seconds(pid: Option<u32>) -> Option<f64> {
    let path = pid.map_or_else(|| "/proc/self/stat".to_owned(), |pid| format!("/proc/{pid}/stat"));
    let stat = std::fs::read_to_string(path).ok()?;
    // Fields after the command name (which may hold spaces) start at the state, field 3; utime and stime
    // are fields 14 and 15.
    let rest = stat.rsplit_once(") ")?.1;
    let mut fields = rest.split_whitespace().skip(11);
    let user: f64 = fields.next()?.parse().ok()?;
    let system: f64 = fields.next()?.parse().ok()?;
    Some((user + system) / 100.0)
}

fn percentile(sorted: &[Duration], p: f64) -> Option<Duration> {
    if sorted.is_empty() {
        return None;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted
        .get(rank.saturating_sub(1).min(sorted.len() - 1))
        .copied()
}

fn ms(d: Duration) -> u128 {
    d.as_millis()
}

/// Runs the propagation and returns its figures.
///
/// # Errors
/// When setting up fails or the deadline passes (with how far it got).
pub(super) async fn propagation(target: &Target, args: &Args) -> anyhow::Result<Value> {
    let members: Vec<String> = target.members.iter().map(|(name, _)| name.clone()).collect();
    let control = target.control.clone();
    // A previous run's namespace on a member, still being deleted there, would refuse the new run's objects
    // until it is gone (and the run would measure that wait).
    for (_, client) in &target.members {
        await_terminating_namespace(client, NAMESPACE).await?;
    }
    setup(&control, &members).await?;
    let control_before = Writes::scrape(&control).await?;
    let mut members_before = Vec::new();
    for (_, client) in &target.members {
        members_before.push(Writes::scrape(client).await?);
    }
    let cpu_before = cpu_seconds(target.controller_pid);
    // The controllers' counters run for their process's whole life: this run's share is the difference.
    let dropped_before = scrape_controllers(target.controller_metrics_url.as_deref())
        .await
        .as_deref()
        .map(events_dropped);
    let shared = Arc::new(Shared {
        seen: Mutex::new(Seen::default()),
        changed: Notify::new(),
    });
    let mut watches = Vec::new();
    for (i, (_, client)) in target.members.iter().enumerate() {
        watches.push(watch(
            client.clone(),
            shared.clone(),
            move |seen, d, now| {
                seen.in_member.entry((i, d.name_any())).or_insert(now);
            },
        ));
    }
    let want_ready = i32::try_from(members.len())
        .unwrap_or(i32::MAX)
        .saturating_mul(args.replicas);
    watches.push(watch(
        control.clone(),
        shared.clone(),
        move |seen, d, now| {
            let ready = d
                .status
                .as_ref()
                .and_then(|s| s.ready_replicas)
                .unwrap_or(0);
            if ready == want_ready {
                seen.aggregated.entry(d.name_any()).or_insert(now);
            }
        },
    ));

    let start = Instant::now();
    let api: Api<Deployment> = Api::namespaced(control.clone(), NAMESPACE);
    let names: Vec<String> = (0..args.templates)
        .map(|i| format!("bench-{i:05}"))
        .collect();
    let creates = futures::stream::iter(names.iter().cloned())
        .map(|name| {
            let api = api.clone();
            let shared = shared.clone();
            async move {
                let object = template(&name, args.replicas)?;
                api.create(&PostParams::default(), &object)
                    .await
                    .with_context(|| format!("failed to create template {name}"))?;
                let now = Instant::now();
                shared.update(|seen| {
                    seen.created.insert(name, now);
                });
                anyhow::Ok(())
            }
        })
        .buffer_unordered(args.concurrency.max(1))
        .try_collect::<Vec<()>>();
    creates.await?;
    let applied = start.elapsed();
    eprintln!(
        "bench: {} templates created in {} ms",
        args.templates,
        ms(applied)
    );

    let deadline = start + Duration::from_secs(args.timeout_secs);
    let want_members = args.templates * members.len();
    let mut all_members: Option<Duration> = None;
    let mut last_report = Instant::now();
    loop {
        let notified = shared.changed.notified();
        let (_, in_member, aggregated) = shared.counts();
        if all_members.is_none() && in_member >= want_members {
            all_members = Some(start.elapsed());
            eprintln!("bench: all {want_members} member objects exist");
        }
        if all_members.is_some() && aggregated >= args.templates {
            break;
        }
        if Instant::now() >= deadline {
            for w in &watches {
                w.abort();
            }
            anyhow::bail!(
                "timed out after {}s: {in_member}/{want_members} member objects, {aggregated}/{} templates aggregated",
                args.timeout_secs,
                args.templates
            );
        }
        if last_report.elapsed() >= Duration::from_secs(2) {
            eprintln!(
                "bench: {:.1}s: {in_member}/{want_members} member objects, {aggregated}/{} aggregated",
                start.elapsed().as_secs_f64(),
                args.templates
            );
            last_report = Instant::now();
        }
        let _ = tokio::time::timeout(Duration::from_millis(250), notified).await;
    }
    let all_aggregated = start.elapsed();
    let cpu_aggregated = cpu_seconds(target.controller_pid);
    // The Events written so far are the ones the servers absorbed while propagating; the rest are still in
    // the controllers' queue and are written after the timed part.
    let control_at_aggregation = Writes::scrape(&control).await?.since(&control_before);
    for w in &watches {
        w.abort();
    }
    // Writes still under way once every template is aggregated (a Work's last status, a binding's last
    // aggregation) are the templates' too: count until the control plane's writes stop moving.
    let control_writes = settled(&control, deadline).await?.since(&control_before);
    let mut member_writes = Writes::default();
    let mut replayed = vec![capacity::Server {
        name: "the control plane".to_owned(),
        client: &target.control,
        writes: control_writes
            .caused_by_templates()
            .with_events_of(&control_at_aggregation),
        member: false,
    }];
    for ((name, client), before) in target.members.iter().zip(&members_before) {
        let writes = Writes::scrape(client).await?.since(before);
        member_writes = member_writes.plus(&writes);
        // The member's own controllers write again for the copies what they wrote for Flotilla's objects.
        replayed.push(capacity::Server {
            name: name.clone(),
            client,
            writes: capacity::flotillas_member_writes(&writes, &control_writes),
            member: true,
        });
    }

    let controller_metrics = scrape_controllers(target.controller_metrics_url.as_deref()).await;
    if let Some(metrics) = &controller_metrics {
        for line in controller_summary(metrics) {
            eprintln!("bench: {line}");
        }
    }
    // The same writes from a plain client: what the servers need for them without Flotilla in between, with
    // the Events that were written until every template was aggregated. Then without the Events, which
    // Flotilla writes on the side (Karmada records them too): the ratio to the writes propagation itself needs.
    let (servers_alone, servers_alone_without_events) = if args.no_capacity {
        (None, None)
    } else {
        // The copies are made like the propagated objects, which then go, with their Pods: a member's nodes
        // would otherwise have room for only some of the copies' Pods, and its controllers would do less for
        // the copies than for the propagated Deployments.
        let samples = capacity::samples(&replayed, NAMESPACE).await?;
        remove_templates(target).await;
        let all = capacity::replay(&replayed, &samples, args.concurrency).await?;
        let without_events: Vec<capacity::Server> = replayed
            .iter()
            .map(|server| capacity::Server {
                name: server.name.clone(),
                client: server.client,
                writes: server.writes.without_events(),
                member: server.member,
            })
            .collect();
        let without = capacity::replay(&without_events, &samples, args.concurrency).await?;
        (Some(all), Some(without))
    };
    let replay_unchanged = servers_alone
        .iter()
        .chain(&servers_alone_without_events)
        .map(|replayed| replayed.unchanged)
        .sum::<usize>();
    let members_ready = servers_alone.as_ref().and_then(|replayed| replayed.members_ready);
    let members_ready_without_events = servers_alone_without_events
        .as_ref()
        .and_then(|replayed| replayed.members_ready);
    let (servers_alone, servers_alone_without_events) = (
        servers_alone.map(|replayed| replayed.took),
        servers_alone_without_events.map(|replayed| replayed.took),
    );
    let ratio_to = |took: Duration, alone: Option<Duration>| {
        alone
            .filter(|d| !d.is_zero())
            .map(|d| (took.as_secs_f64() / d.as_secs_f64() * 100.0).round() / 100.0)
    };
    let capacity_ratio = ratio_to(all_aggregated, servers_alone);
    let capacity_ratio_without_events = ratio_to(all_aggregated, servers_alone_without_events);
    // Like for like on the members too: aggregation waited for their controllers, so does this replay.
    let members_ready_ratio = ratio_to(all_aggregated, members_ready);
    let members_ready_ratio_without_events = ratio_to(all_aggregated, members_ready_without_events);
    // Propagation alone, without the members' own controllers bringing the workloads up.
    let members_ratio = all_members.and_then(|members| ratio_to(members, servers_alone));
    let seen = shared.seen.lock().unwrap_or_else(PoisonError::into_inner);
    let mut latencies: Vec<Duration> = seen
        .in_member
        .iter()
        .filter_map(|((_, name), at)| Some(at.saturating_duration_since(*seen.created.get(name)?)))
        .collect();
    latencies.sort();
    let mut aggregation: Vec<Duration> = seen
        .aggregated
        .iter()
        .filter_map(|(name, at)| Some(at.saturating_duration_since(*seen.created.get(name)?)))
        .collect();
    aggregation.sort();
    Ok(json!({
        "templates": args.templates,
        "simulator_delay_ms": args.simulator_delay_ms,
        "created_all_ms": ms(applied),
        "all_member_objects_ms": all_members.map(ms),
        "all_aggregated_ms": ms(all_aggregated),
        "cpu_until_aggregated_s": cpu_aggregated.zip(cpu_before).map(|(a, b)| ((a - b) * 100.0).round() / 100.0),
        "control_plane_writes": control_writes.total(),
        "control_plane_writes_per_template": ratio(control_writes.template_writes(), args.templates),
        "control_plane_event_writes_per_template": ratio(control_writes.events(), args.templates),
        "control_plane_event_writes_until_aggregated_per_template": ratio(control_at_aggregation.events(), args.templates),
        "control_plane_writes_by_resource_per_template": control_writes.per_template(args.templates),
        "member_writes": member_writes.total(),
        "member_writes_per_template": ratio(member_writes.template_writes(), args.templates),
        "member_writes_by_resource_per_template": member_writes.per_template(args.templates),
        "events_dropped": controller_metrics
            .as_deref()
            .map(events_dropped)
            .zip(dropped_before)
            .map(|(after, before)| after.saturating_sub(before)),
        "template_to_member_p50_ms": percentile(&latencies, 50.0).map(ms),
        "template_to_member_p99_ms": percentile(&latencies, 99.0).map(ms),
        "template_to_aggregated_p50_ms": percentile(&aggregation, 50.0).map(ms),
        "template_to_aggregated_p99_ms": percentile(&aggregation, 99.0).map(ms),
        "same_writes_plain_client_ms": servers_alone.map(ms),
        "aggregated_to_plain_writes_ratio": capacity_ratio,
        "same_writes_without_events_plain_client_ms": servers_alone_without_events.map(ms),
        "aggregated_to_plain_writes_without_events_ratio": capacity_ratio_without_events,
        "member_objects_to_plain_writes_ratio": members_ratio,
        "same_writes_plain_client_until_members_ready_ms": members_ready.map(ms),
        "aggregated_to_plain_writes_until_members_ready_ratio": members_ready_ratio,
        "same_writes_without_events_plain_client_until_members_ready_ms": members_ready_without_events.map(ms),
        "aggregated_to_plain_writes_without_events_until_members_ready_ratio": members_ready_ratio_without_events,
        "replayed_updates_unchanged": (!args.no_capacity).then_some(replay_unchanged),
    }))
}

/// The controllers' metrics text from `url`, or `None` when there is none or it cannot be had (said on
/// stderr).
async fn scrape_controllers(url: Option<&str>) -> Option<String> {
    let url = url?;
    let text = async { reqwest::get(url).await?.error_for_status()?.text().await }.await;
    text.map_err(|e| eprintln!("bench: failed to read the controllers' metrics at {url}: {e}"))
        .ok()
}

/// Every Event the controllers recorded but never wrote (`flotilla_events_dropped_total`, all causes): a
/// benchmark that drops Events measures less work than it claims.
fn events_dropped(metrics: &str) -> u64 {
    flotilla_apiserver::metrics::parse_series(metrics, "flotilla_events_dropped_total")
        .iter()
        .map(|series| series.value)
        .sum::<f64>() as u64
}

/// One line per controller: reconciles, failures by category and total reconcile time, from the Prometheus
/// text of the controllers' registry (where the time of a slow run went).
fn controller_summary(metrics: &str) -> Vec<String> {
    #[derive(Default)]
    struct Row {
        reconciles: f64,
        seconds: f64,
        failures: Vec<String>,
    }
    let mut rows: std::collections::BTreeMap<String, Row> = std::collections::BTreeMap::new();
    let label = |line: &str, key: &str| -> Option<String> {
        let start = line.find(&format!("{key}=\""))? + key.len() + 2;
        let end = line[start..].find('"')? + start;
        Some(line[start..end].to_string())
    };
    for line in metrics
        .lines()
        .filter(|l| l.starts_with("flotilla_controller_reconcile"))
    {
        let Some((name, value)) = line.rsplit_once(' ') else {
            continue;
        };
        let Ok(value) = value.parse::<f64>() else {
            continue;
        };
        let Some(controller) = label(name, "controller") else {
            continue;
        };
        let row = rows.entry(controller).or_default();
        if name.contains("controller_reconciles_total") {
            row.reconciles = value;
        } else if name.contains("controller_reconcile_duration_seconds_sum") {
            row.seconds = value;
        } else if name.contains("controller_reconcile_errors_total") && value > 0.0 {
            row.failures.push(format!(
                "{}={value}",
                label(name, "category").unwrap_or_default()
            ));
        }
    }
    rows.into_iter()
        .map(|(controller, row)| {
            format!(
                "{controller}: {} reconciles, {:.2} s reconciling, failures [{}]",
                row.reconciles,
                row.seconds,
                row.failures.join(", ")
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const METRICS: &str = "\
# HELP flotilla_events_dropped_total Events recorded but never written.
# TYPE flotilla_events_dropped_total counter
flotilla_events_dropped_total{cause=\"queue_full\",controller=\"flotilla-binding-controller\"} 3
flotilla_events_dropped_total{cause=\"spam\",controller=\"flotilla-execution-controller\"} 2
flotilla_controller_reconciles_total{controller=\"binding\"} 7
flotilla_controller_reconcile_duration_seconds_sum{controller=\"binding\"} 0.5
";

    #[test]
    fn dropped_events_add_up_over_controllers_and_causes() {
        assert_eq!(events_dropped(METRICS), 5);
        assert_eq!(events_dropped(""), 0);
    }

    #[test]
    fn the_summary_has_a_row_per_reconciling_controller_only() {
        assert_eq!(
            controller_summary(METRICS),
            ["binding: 7 reconciles, 0.50 s reconciling, failures []"]
        );
    }
}
