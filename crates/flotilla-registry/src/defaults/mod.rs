//! Built-in defaulting: the values a real server fills in when a built-in object is written, so that
//! Karmada's retain and diff logic and users comparing embedded with kind output see the same objects.
//!
//! Covered: workloads (Deployment, ReplicaSet, StatefulSet, DaemonSet, Job, CronJob) with their pod templates;
//! Pods (PodSpec, containers, probes, volumes, requests from limits); Services (type, session affinity,
//! traffic policies, target ports, protocols, cluster IP and node ports); Secrets (`stringData` merged into
//! `data`, type `Opaque`); Namespaces (the `kubernetes.io/metadata.name` label); RBAC subjects' API group.
//! Defaulting is idempotent, so it runs on every create and update as upstream's decoding does.

mod pod;
mod service;
pub(crate) mod status;

pub(crate) use status::fill as fill_status;

use base64::Engine;
use serde_json::{Map, Value, json};
use std::collections::HashSet;

/// Sets a new Pod's initial status (`phase: Pending` and its `qosClass`), as upstream's create strategy does
/// once the client's status is dropped; call it at that point of a Pod create.
pub(crate) fn initial_pod_status(pod: &mut Value) {
    pod::initial_status(pod);
}

/// Addresses and ports already taken, so Service allocation picks free ones. The caller fills them from the
/// Services it stores; allocation adds what it hands out.
#[derive(Debug, Clone, Default)]
pub(crate) struct Allocations {
    /// Cluster IPs in use.
    pub cluster_ips: HashSet<String>,
    /// Node ports in use.
    pub node_ports: HashSet<u16>,
}

/// Fills in the defaults of `object` as its kind's entry in `crate::kinds` says (custom resources, whose
/// defaults come from their schema, and unknown kinds have [`Defaults::None`]).
///
/// Guarantees: only absent (or, for fields Go does not distinguish, empty) fields are set; running it twice
/// changes nothing more; a Service without a cluster IP gets the lowest free one of 10.96.0.0/12 from
/// `allocations`.
pub(crate) fn apply(object: &mut Value, defaults: Defaults, allocations: &mut Allocations) {
    match defaults {
        Defaults::Fill(fill) => fill(object),
        Defaults::Allocate(fill) => fill(object, allocations),
        Defaults::None => {}
    }
}

/// How a built-in kind is defaulted (named by its entry in `crate::kinds`).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Defaults {
    /// By this function of the object.
    Fill(fn(&mut Value)),
    /// By this function, which also allocates addresses and ports (Services).
    Allocate(fn(&mut Value, &mut Allocations)),
    /// Nothing is defaulted.
    None,
}

/// The annotation that carries a DaemonSet's template generation (a field of the internal type only).
pub(crate) const TEMPLATE_GENERATION: &str = "deprecated.daemonset.template.generation";

/// Pods.
pub(crate) fn pod(object: &mut Value) {
    pod::pod(object);
}

/// Services: type, affinity, policies, ports, and a cluster IP and node ports from `allocations`.
pub(crate) fn service(object: &mut Value, allocations: &mut Allocations) {
    service::service(object, allocations);
}

/// ReplicaSets.
pub(crate) fn replica_set(object: &mut Value) {
    with_spec(object, |s| set_if_absent(s, "replicas", json!(1)));
    template(object, "/spec/template/spec");
}

/// ReplicationControllers: as ReplicaSets, and a template with labels gives them to an empty selector and to
/// a controller without labels.
pub(crate) fn replication_controller(object: &mut Value) {
    replica_set(object);
    let Some(labels) = object.pointer("/spec/template/metadata/labels").cloned() else {
        return;
    };
    if !labels.is_object() {
        return;
    }
    let empty = |v: Option<&Value>| v.and_then(Value::as_object).is_none_or(Map::is_empty);
    if let Some(spec) = object.get_mut("spec").and_then(Value::as_object_mut)
        && empty(spec.get("selector"))
    {
        spec.insert("selector".into(), labels);
    }
    labels_from_template(object);
}

/// Jobs.
pub(crate) fn job(object: &mut Value) {
    job_spec(object.get_mut("spec"));
    labels_from_template(object);
    template(object, "/spec/template/spec");
}

/// CronJobs. Upstream's Job defaults belong to the Job type, not to its spec, so a CronJob's `jobTemplate`
/// keeps the counts and policies its writer left out (the Job the CronJob controller creates gets them).
pub(crate) fn cron_job(object: &mut Value) {
    with_spec(object, |s| {
        set_if_empty(s, "concurrencyPolicy", json!("Allow"));
        set_if_absent(s, "suspend", json!(false));
        set_if_absent(s, "successfulJobsHistoryLimit", json!(3));
        set_if_absent(s, "failedJobsHistoryLimit", json!(1));
    });
    template(object, "/spec/jobTemplate/spec/template/spec");
}

/// PodTemplates.
pub(crate) fn pod_template(object: &mut Value) {
    template(object, "/template/spec");
}

/// ValidatingWebhookConfigurations.
pub(crate) fn validating_webhooks(object: &mut Value) {
    webhooks(object, false);
}

/// MutatingWebhookConfigurations.
pub(crate) fn mutating_webhooks(object: &mut Value) {
    webhooks(object, true);
}

/// APIServices: a service's port is 443 unless given (kube-aggregator's `SetDefaults_ServiceReference`).
pub(crate) fn apiservice(object: &mut Value) {
    if let Some(service) = object
        .pointer_mut("/spec/service")
        .and_then(Value::as_object_mut)
    {
        set_if_absent(service, "port", json!(443));
    }
}

/// PriorityClasses.
pub(crate) fn priority_class(object: &mut Value) {
    if let Some(m) = object.as_object_mut() {
        set_if_empty(m, "preemptionPolicy", json!("PreemptLowerPriority"));
    }
}

pub(crate) fn set_if_absent(map: &mut Map<String, Value>, key: &str, value: Value) {
    if map.get(key).is_none_or(Value::is_null) {
        map.insert(key.to_string(), value);
    }
}

/// For Go string fields, where empty and absent are the same thing.
pub(crate) fn set_if_empty(map: &mut Map<String, Value>, key: &str, value: Value) {
    if map
        .get(key)
        .is_none_or(|v| v.is_null() || v.as_str() == Some(""))
    {
        map.insert(key.to_string(), value);
    }
}

fn with_spec(object: &mut Value, f: impl FnOnce(&mut Map<String, Value>)) {
    if let Some(spec) = object.get_mut("spec").and_then(Value::as_object_mut) {
        f(spec);
    }
}

fn template(object: &mut Value, pointer: &str) {
    if let Some(spec) = object.pointer_mut(pointer).and_then(Value::as_object_mut) {
        pod::pod_spec(spec);
    }
}

/// A workload update strategy defaulting to `RollingUpdate` whose `rollingUpdate` gets `fields` when absent.
fn rolling_strategy(spec: &mut Map<String, Value>, key: &str, fields: &[(&str, Value)]) {
    let Some(strategy) = spec.entry(key).or_insert_with(|| json!({})).as_object_mut() else {
        return;
    };
    set_if_empty(strategy, "type", json!("RollingUpdate"));
    if strategy.get("type").and_then(Value::as_str) != Some("RollingUpdate") {
        return;
    }
    if let Some(ru) = strategy
        .entry("rollingUpdate")
        .or_insert_with(|| json!({}))
        .as_object_mut()
    {
        for (k, v) in fields {
            set_if_absent(ru, k, v.clone());
        }
    }
}

/// Deployments.
pub(crate) fn deployment(object: &mut Value) {
    with_spec(object, |s| {
        set_if_absent(s, "replicas", json!(1));
        set_if_absent(s, "revisionHistoryLimit", json!(10));
        set_if_absent(s, "progressDeadlineSeconds", json!(600));
        rolling_strategy(
            s,
            "strategy",
            &[("maxUnavailable", json!("25%")), ("maxSurge", json!("25%"))],
        );
    });
    template(object, "/spec/template/spec");
}

/// StatefulSets.
pub(crate) fn statefulset(object: &mut Value) {
    with_spec(object, |s| {
        set_if_absent(s, "replicas", json!(1));
        set_if_empty(s, "podManagementPolicy", json!("OrderedReady"));
        set_if_absent(s, "revisionHistoryLimit", json!(10));
        let retention = json!({"whenDeleted": "Retain", "whenScaled": "Retain"});
        set_if_absent(s, "persistentVolumeClaimRetentionPolicy", retention);
        rolling_strategy(
            s,
            "updateStrategy",
            &[("maxUnavailable", json!(1)), ("partition", json!(0))],
        );
        if let Some(claims) = s
            .get_mut("volumeClaimTemplates")
            .and_then(Value::as_array_mut)
        {
            for claim in claims.iter_mut() {
                claim_template(claim);
            }
        }
    });
    template(object, "/spec/template/spec");
}

/// A StatefulSet's claim template is a whole PersistentVolumeClaim to upstream: its type, its spec's defaults
/// and its zero status are written out.
fn claim_template(claim: &mut Value) {
    persistent_volume_claim(claim);
    if let Some(c) = claim.as_object_mut() {
        set_if_empty(c, "apiVersion", json!("v1"));
        set_if_empty(c, "kind", json!("PersistentVolumeClaim"));
    }
}

/// PersistentVolumeClaims: the volume mode is a file system unless given, and the phase starts `Pending`.
pub(crate) fn persistent_volume_claim(object: &mut Value) {
    with_spec(object, |s| {
        set_if_absent(s, "volumeMode", json!("Filesystem"))
    });
    pending_phase(object);
}

/// PersistentVolumes: the volume mode is a file system and the reclaim policy `Retain` unless given, and the
/// phase starts `Pending`.
pub(crate) fn persistent_volume(object: &mut Value) {
    with_spec(object, |s| {
        set_if_absent(s, "volumeMode", json!("Filesystem"));
        set_if_empty(s, "persistentVolumeReclaimPolicy", json!("Retain"));
        pod::host_path(s);
    });
    pending_phase(object);
}

fn pending_phase(object: &mut Value) {
    if let Some(o) = object.as_object_mut()
        && let Some(status) = o
            .entry("status")
            .or_insert_with(|| json!({}))
            .as_object_mut()
    {
        set_if_empty(status, "phase", json!("Pending"));
    }
}

/// DaemonSets. The template generation annotation is what upstream's conversion writes from the internal
/// field, which is 0 until the create or update strategy sets it (`crate::kinds::workloads::strategy`); it is written here so
/// that the writer owns it in managedFields, as upstream records it.
pub(crate) fn daemonset(object: &mut Value) {
    if let Some(annotations) = object
        .as_object_mut()
        .and_then(|o| {
            o.entry("metadata")
                .or_insert_with(|| json!({}))
                .as_object_mut()
        })
        .and_then(|m| {
            m.entry("annotations")
                .or_insert_with(|| json!({}))
                .as_object_mut()
        })
    {
        annotations
            .entry(TEMPLATE_GENERATION)
            .or_insert_with(|| json!("0"));
    }
    with_spec(object, |s| {
        set_if_absent(s, "revisionHistoryLimit", json!(10));
        rolling_strategy(
            s,
            "updateStrategy",
            &[("maxUnavailable", json!(1)), ("maxSurge", json!(0))],
        );
    });
    template(object, "/spec/template/spec");
}

/// Upstream's Job defaults: both counts 1 when neither is set, parallelism 1 when unset, the selector generated
/// (`manualSelector: false`) unless asked for otherwise.
fn job_spec(spec: Option<&mut Value>) {
    let Some(s) = spec.and_then(Value::as_object_mut) else {
        return;
    };
    let has = |s: &Map<String, Value>, k: &str| s.get(k).is_some_and(|v| !v.is_null());
    if !has(s, "completions") && !has(s, "parallelism") {
        s.insert("completions".to_string(), json!(1));
    }
    set_if_absent(s, "parallelism", json!(1));
    let backoff = if has(s, "backoffLimitPerIndex") {
        i64::from(i32::MAX)
    } else {
        6
    };
    set_if_absent(s, "backoffLimit", json!(backoff));
    set_if_empty(s, "completionMode", json!("NonIndexed"));
    set_if_absent(s, "suspend", json!(false));
    let replacement = if has(s, "podFailurePolicy") {
        "Failed"
    } else {
        "TerminatingOrFailed"
    };
    set_if_empty(s, "podReplacementPolicy", json!(replacement));
    set_if_absent(s, "manualSelector", json!(false));
}

/// A Job or ReplicationController without labels takes its pod template's (upstream's two defaulters share the
/// rule).
fn labels_from_template(object: &mut Value) {
    let template_labels = object
        .pointer("/spec/template/metadata/labels")
        .filter(|l| l.as_object().is_some_and(|m| !m.is_empty()))
        .cloned();
    let Some(labels) = template_labels else {
        return;
    };
    let Some(obj) = object.as_object_mut() else {
        return;
    };
    let Some(meta) = obj
        .entry("metadata")
        .or_insert_with(|| json!({}))
        .as_object_mut()
    else {
        return;
    };
    if meta
        .get("labels")
        .and_then(Value::as_object)
        .is_none_or(Map::is_empty)
    {
        meta.insert("labels".to_string(), labels);
    }
}

/// `stringData` is write-only: it is merged into `data` (base64) and dropped; `type` defaults to `Opaque`.
pub(crate) fn secret(object: &mut Value) {
    let Some(obj) = object.as_object_mut() else {
        return;
    };
    if let Some(Value::Object(string_data)) = obj.remove("stringData") {
        let data = obj.entry("data").or_insert_with(|| json!({}));
        if let Some(data) = data.as_object_mut() {
            for (k, v) in string_data {
                let text = v.as_str().unwrap_or_default();
                data.insert(
                    k,
                    json!(base64::engine::general_purpose::STANDARD.encode(text)),
                );
            }
        }
    }
    set_if_empty(obj, "type", json!("Opaque"));
}

/// Every Namespace carries its own name as the `kubernetes.io/metadata.name` label.
pub(crate) fn namespace(object: &mut Value) {
    let name = object
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    if name.is_empty() {
        return;
    }
    let Some(meta) = object.get_mut("metadata").and_then(Value::as_object_mut) else {
        return;
    };
    let labels = meta.entry("labels").or_insert_with(|| json!({}));
    if let Some(labels) = labels.as_object_mut() {
        labels.insert("kubernetes.io/metadata.name".to_string(), json!(name));
    }
}

/// Upstream's webhook defaults: fail closed, equivalent matching, match-all selectors, a 10 s timeout, rules of
/// any scope and, for mutating webhooks, no reinvocation.
fn webhooks(object: &mut Value, mutating: bool) {
    let Some(hooks) = object.get_mut("webhooks").and_then(Value::as_array_mut) else {
        return;
    };
    for hook in hooks.iter_mut().filter_map(Value::as_object_mut) {
        set_if_empty(hook, "failurePolicy", json!("Fail"));
        set_if_empty(hook, "matchPolicy", json!("Equivalent"));
        set_if_absent(hook, "namespaceSelector", json!({}));
        set_if_absent(hook, "objectSelector", json!({}));
        set_if_absent(hook, "timeoutSeconds", json!(10));
        if mutating {
            set_if_empty(hook, "reinvocationPolicy", json!("Never"));
        }
        let rules = hook.get_mut("rules").and_then(Value::as_array_mut);
        for rule in rules.into_iter().flatten().filter_map(Value::as_object_mut) {
            set_if_empty(rule, "scope", json!("*"));
        }
    }
}

/// A `Container` item's default limit falls back to its max, and its default request to the default limit,
/// then to its min (upstream's `SetDefaults_LimitRangeItem`).
pub(crate) fn limit_range(object: &mut Value) {
    for item in object
        .pointer_mut("/spec/limits")
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
        .filter_map(Value::as_object_mut)
    {
        if item.get("type").and_then(Value::as_str) != Some("Container") {
            continue;
        }
        let of = |item: &Map<String, Value>, key: &str| {
            item.get(key)
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default()
        };
        let mut default = of(item, "default");
        for (k, v) in of(item, "max") {
            default.entry(k).or_insert(v);
        }
        let mut request = of(item, "defaultRequest");
        for (k, v) in default.iter().chain(of(item, "min").iter()) {
            request.entry(k.clone()).or_insert(v.clone());
        }
        for (key, map) in [("default", default), ("defaultRequest", request)] {
            if !map.is_empty() {
                item.insert(key.to_string(), Value::Object(map));
            }
        }
    }
}

/// RoleBindings and ClusterRoleBindings: users' and groups' API group.
pub(crate) fn rbac_subjects(object: &mut Value) {
    for s in object
        .get_mut("subjects")
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
    {
        let Some(s) = s.as_object_mut() else { continue };
        let kind = s.get("kind").and_then(Value::as_str).unwrap_or_default();
        if matches!(kind, "User" | "Group") {
            set_if_empty(s, "apiGroup", json!("rbac.authorization.k8s.io"));
        }
    }
}

/// The object at `path` under `value`, each missing (or null) step made an empty object; `None` when a step
/// holds something else (which a decoded built-in object never does).
pub(crate) fn child<'a>(value: &'a mut Value, path: &[&str]) -> Option<&'a mut Map<String, Value>> {
    let mut at = value;
    for key in path {
        let slot = at.as_object_mut()?.entry(*key).or_insert_with(|| json!({}));
        if slot.is_null() {
            *slot = json!({});
        }
        at = slot;
    }
    at.as_object_mut()
}

#[cfg(test)]
mod tests;
