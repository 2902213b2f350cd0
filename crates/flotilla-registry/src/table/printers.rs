//! The columns and cells of the built-in printers (upstream's `pkg/printers/internalversion`) for the kinds
//! users `kubectl get` most.

use super::cells::{
    array_at, containers_and_images, endpoints_text, event_cells, i64_at, job_cells, map_selector,
    node_cells, or_none, pod_cells, selector_text, service_cells, text,
};
use super::{AGE_DESCRIPTION, Column, age_of, name_column, str_at};
use crate::kinds::Columns;
use serde_json::{Value, json};

/// A workload's desired replicas (default 1) and its pod template's containers and images.
fn workload(obj: &Value) -> (i64, Value, Value) {
    let desired = obj
        .pointer("/spec/replicas")
        .and_then(Value::as_i64)
        .unwrap_or(1);
    let (c, i) = containers_and_images(obj.pointer("/spec/template/spec").unwrap_or(&Value::Null));
    (desired, c, i)
}

/// Up to three items joined by commas, then ` + N more...`; `<unset>` when there are none (upstream's
/// EndpointSlice columns).
fn first_three(items: impl Iterator<Item = String>) -> String {
    let all: Vec<String> = items.collect();
    let shown = all.iter().take(3).cloned().collect::<Vec<_>>().join(",");
    if all.len() > 3 {
        format!("{shown} + {} more...", all.len() - 3)
    } else if shown.is_empty() {
        "<unset>".to_string()
    } else {
        shown
    }
}

fn age_column() -> Column {
    Column::new("Age", "string").describe(AGE_DESCRIPTION)
}

fn s(name: &str) -> Column {
    Column::new(name, "string")
}

fn int(name: &str) -> Column {
    Column::new(name, "integer")
}

impl Columns {
    pub(super) fn columns(self) -> Vec<Column> {
        let mut cols = vec![name_column()];
        let workload_wide = || {
            vec![
                s("Containers").wide(),
                s("Images").wide(),
                s("Selector").wide(),
            ]
        };
        match self {
            Self::Namespace => cols.extend([s("Status"), age_column()]),
            Self::Node => cols.extend([
                s("Status"),
                s("Roles"),
                age_column(),
                s("Version"),
                s("Internal-IP").wide(),
                s("External-IP").wide(),
                s("OS-Image").wide(),
                s("Kernel-Version").wide(),
                s("Container-Runtime").wide(),
            ]),
            Self::Pod => cols.extend([
                s("Ready"),
                s("Status"),
                s("Restarts"),
                age_column(),
                s("IP").wide(),
                s("Node").wide(),
                s("Nominated Node").wide(),
                s("Readiness Gates").wide(),
            ]),
            Self::Service => cols.extend([
                s("Type"),
                s("Cluster-IP"),
                s("External-IP"),
                s("Port(s)"),
                age_column(),
                s("Selector").wide(),
            ]),
            Self::ConfigMap => cols.extend([int("Data"), age_column()]),
            Self::Secret => cols.extend([s("Type"), int("Data"), age_column()]),
            Self::ServiceAccount => cols.extend([int("Secrets"), age_column()]),
            Self::Endpoints => cols.extend([s("Endpoints"), age_column()]),
            Self::EndpointSlice => cols.extend([
                s("AddressType").describe("The IP protocol family for this EndpointSlice."),
                s("Ports").describe("The ports for this EndpointSlice"),
                s("Endpoints").describe("The endpoints for this EndpointSlice"),
                age_column(),
            ]),
            Self::Deployment => {
                cols.extend([
                    s("Ready"),
                    int("Up-to-date"),
                    int("Available"),
                    age_column(),
                ]);
                cols.extend(workload_wide());
            }
            Self::ReplicaSet => {
                cols.extend([int("Desired"), int("Current"), int("Ready"), age_column()]);
                cols.extend(workload_wide());
            }
            Self::StatefulSet => cols.extend([
                s("Ready"),
                age_column(),
                s("Containers").wide(),
                s("Images").wide(),
            ]),
            Self::DaemonSet => {
                cols.extend([
                    int("Desired"),
                    int("Current"),
                    int("Ready"),
                    int("Up-to-date"),
                    int("Available"),
                    s("Node Selector"),
                    age_column(),
                ]);
                cols.extend(workload_wide());
            }
            Self::Job => {
                cols.extend([s("Status"), s("Completions"), s("Duration"), age_column()]);
                cols.extend(workload_wide());
            }
            Self::CronJob => {
                cols.extend([
                    s("Schedule"),
                    s("Timezone"),
                    s("Suspend"),
                    int("Active"),
                    s("Last Schedule"),
                    age_column(),
                ]);
                cols.extend(workload_wide());
            }
            Self::Event | Self::EventV1 => {
                return vec![
                    s("Last Seen"),
                    s("Type"),
                    s("Reason"),
                    s("Object"),
                    s("Subobject").wide(),
                    s("Source").wide(),
                    s("Message"),
                    s("First Seen").wide(),
                    s("Count").wide(),
                    name_column().wide(),
                ];
            }
            Self::Lease => cols.extend([s("Holder"), age_column()]),
            Self::Webhooks => cols.extend([int("Webhooks"), age_column()]),
            Self::Csr => cols.extend([
                age_column(),
                s("SignerName"),
                s("Requestor"),
                s("RequestedDuration"),
                s("Condition"),
            ]),
            Self::ApiService => cols.extend([s("Service"), s("Available"), age_column()]),
            Self::RuntimeClass => cols.extend([s("Handler"), age_column()]),
            Self::PriorityClass => cols.extend([
                int("Value"),
                s("Global-Default"),
                age_column(),
                s("PreemptionPolicy"),
            ]),
            Self::Hpa => cols.extend([
                s("Reference"),
                s("Targets"),
                s("MinPods"),
                int("MaxPods"),
                int("Replicas"),
                age_column(),
            ]),
            Self::Role => cols.push(s("Created At")),
            Self::RoleBinding => cols.extend([
                s("Role"),
                age_column(),
                s("Users").wide(),
                s("Groups").wide(),
                s("ServiceAccounts").wide(),
            ]),
        }
        cols
    }

    pub(super) fn cells(self, obj: &Value, now: i64) -> Vec<Value> {
        let name = text(str_at(obj, "/metadata/name"));
        let age = text(age_of(str_at(obj, "/metadata/creationTimestamp"), now));
        let mut cells = vec![name];
        match self {
            Self::Namespace => cells.extend([text(str_at(obj, "/status/phase")), age]),
            Self::Node => cells.extend(node_cells(obj, age)),
            Self::Pod => cells.extend(pod_cells(obj, age, now)),
            Self::Service => cells.extend(service_cells(obj, age)),
            Self::ConfigMap => {
                let n = obj
                    .get("data")
                    .and_then(Value::as_object)
                    .map_or(0, |m| m.len())
                    + obj
                        .get("binaryData")
                        .and_then(Value::as_object)
                        .map_or(0, |m| m.len());
                cells.extend([json!(n), age]);
            }
            Self::Secret => {
                let n = obj
                    .get("data")
                    .and_then(Value::as_object)
                    .map_or(0, |m| m.len());
                let ty = str_at(obj, "/type");
                cells.extend([
                    text(if ty.is_empty() { "Opaque" } else { ty }),
                    json!(n),
                    age,
                ]);
            }
            Self::ServiceAccount => cells.extend([json!(array_at(obj, "/secrets").len()), age]),
            Self::Endpoints => cells.extend([text(endpoints_text(obj)), age]),
            Self::EndpointSlice => {
                let ports = array_at(obj, "/ports").iter().map(|p| {
                    p.get("port")
                        .and_then(Value::as_i64)
                        .map(|n| n.to_string())
                        .or_else(|| p.get("name").and_then(Value::as_str).map(str::to_string))
                        .unwrap_or_else(|| "*".to_string())
                });
                let addresses = array_at(obj, "/endpoints")
                    .iter()
                    .flat_map(|e| array_at(e, "/addresses"))
                    .map(|a| a.as_str().unwrap_or("").to_string());
                cells.extend([
                    text(str_at(obj, "/addressType")),
                    text(first_three(ports)),
                    text(first_three(addresses)),
                    age,
                ]);
            }
            Self::Deployment => {
                let (desired, c, i) = workload(obj);
                cells.extend([
                    text(format!(
                        "{}/{desired}",
                        i64_at(obj, "/status/readyReplicas")
                    )),
                    json!(i64_at(obj, "/status/updatedReplicas")),
                    json!(i64_at(obj, "/status/availableReplicas")),
                    age,
                    c,
                    i,
                    text(selector_text(obj.pointer("/spec/selector"))),
                ]);
            }
            Self::ReplicaSet => {
                let (desired, c, i) = workload(obj);
                cells.extend([
                    json!(desired),
                    json!(i64_at(obj, "/status/replicas")),
                    json!(i64_at(obj, "/status/readyReplicas")),
                    age,
                    c,
                    i,
                    text(selector_text(obj.pointer("/spec/selector"))),
                ]);
            }
            Self::StatefulSet => {
                let (desired, c, i) = workload(obj);
                cells.extend([
                    text(format!(
                        "{}/{desired}",
                        i64_at(obj, "/status/readyReplicas")
                    )),
                    age,
                    c,
                    i,
                ]);
            }
            Self::DaemonSet => {
                let (c, i) = containers_and_images(
                    obj.pointer("/spec/template/spec").unwrap_or(&Value::Null),
                );
                cells.extend([
                    json!(i64_at(obj, "/status/desiredNumberScheduled")),
                    json!(i64_at(obj, "/status/currentNumberScheduled")),
                    json!(i64_at(obj, "/status/numberReady")),
                    json!(i64_at(obj, "/status/updatedNumberScheduled")),
                    json!(i64_at(obj, "/status/numberAvailable")),
                    text(map_selector(
                        obj.pointer("/spec/template/spec/nodeSelector"),
                    )),
                    age,
                    c,
                    i,
                    text(selector_text(obj.pointer("/spec/selector"))),
                ]);
            }
            Self::Job => cells.extend(job_cells(obj, age, now)),
            Self::CronJob => {
                let (c, i) = containers_and_images(
                    obj.pointer("/spec/jobTemplate/spec/template/spec")
                        .unwrap_or(&Value::Null),
                );
                let last = str_at(obj, "/status/lastScheduleTime");
                let suspend = obj
                    .pointer("/spec/suspend")
                    .and_then(Value::as_bool)
                    .unwrap_or(false);
                cells.extend([
                    text(str_at(obj, "/spec/schedule")),
                    or_none(str_at(obj, "/spec/timeZone")),
                    text(if suspend { "True" } else { "False" }),
                    json!(array_at(obj, "/status/active").len()),
                    if last.is_empty() {
                        text("<none>")
                    } else {
                        text(age_of(last, now))
                    },
                    age,
                    c,
                    i,
                    text(selector_text(
                        obj.pointer("/spec/jobTemplate/spec/selector"),
                    )),
                ]);
            }
            Self::Event => return event_cells(obj, now, false),
            Self::EventV1 => return event_cells(obj, now, true),
            Self::Lease => cells.extend([text(str_at(obj, "/spec/holderIdentity")), age]),
            Self::Webhooks => cells.extend([json!(array_at(obj, "/webhooks").len()), age]),
            Self::Csr => {
                let signer = str_at(obj, "/spec/signerName");
                let duration = obj
                    .pointer("/spec/expirationSeconds")
                    .and_then(Value::as_i64)
                    .map_or_else(|| "<none>".to_string(), super::human_duration);
                cells.extend([
                    age,
                    text(if signer.is_empty() { "<none>" } else { signer }),
                    text(str_at(obj, "/spec/username")),
                    text(duration),
                    text(crate::kinds::access::certificates::condition_summary(obj)),
                ]);
            }
            Self::ApiService => cells.extend([
                text(super::cells::api_service_target(obj)),
                text(super::cells::api_service_available(obj)),
                age,
            ]),
            Self::RuntimeClass => cells.extend([text(str_at(obj, "/handler")), age]),
            Self::PriorityClass => {
                let global = obj
                    .get("globalDefault")
                    .and_then(Value::as_bool)
                    .unwrap_or(false);
                cells.extend([
                    json!(i64_at(obj, "/value")),
                    text(if global { "true" } else { "false" }),
                    age,
                    text(str_at(obj, "/preemptionPolicy")),
                ]);
            }
            Self::Hpa => {
                cells.extend(super::hpa::hpa_cells(obj));
                cells.push(age);
            }
            Self::Role => cells.push(text(str_at(obj, "/metadata/creationTimestamp"))),
            Self::RoleBinding => {
                let subjects = array_at(obj, "/subjects");
                let of = |kind: &str| -> Value {
                    let names: Vec<String> = subjects
                        .iter()
                        .filter(|s| str_at(s, "/kind") == kind)
                        .map(|s| {
                            let ns = str_at(s, "/namespace");
                            let n = str_at(s, "/name");
                            if kind == "ServiceAccount" {
                                format!("{ns}/{n}")
                            } else {
                                n.to_string()
                            }
                        })
                        .collect();
                    text(names.join(", "))
                };
                let role = format!(
                    "{}/{}",
                    str_at(obj, "/roleRef/kind"),
                    str_at(obj, "/roleRef/name")
                );
                cells.extend([
                    text(role),
                    age,
                    of("User"),
                    of("Group"),
                    of("ServiceAccount"),
                ]);
            }
        }
        cells
    }
}
