//! Clusters as the Table Karmada's aggregated API server prints (its `printers/internalversion`: `AddHandlers`,
//! `printCluster`): Name, Version, Mode, Ready, Age, and for `-o wide` (priority 1) Zones, Region, Provider,
//! API-Endpoint, Proxy-URL, with Karmada's descriptions. Karmada's table convertor always prints wide, so every
//! row has all ten cells.
//!
//! One conversion serves get, list and watch: [`to_table`] turns a Cluster or a ClusterList (as the caller sees
//! it, `v1alpha1`) into a Table; [`WatchTables`] turns each watch event's object into a one-row Table, the
//! first with the column definitions, as kube-apiserver's watch encoder does. Anything else (a Status) is left
//! as it is.

use flotilla_apimachinery::duration::age_of;
use flotilla_apimachinery::table::{
    CREATION_TIMESTAMP_DESCRIPTION, Column, TableOptions, name_column, table,
};
use serde_json::{Map, Value, json};

use super::accept::TableRequest;

/// Karmada's columns for Clusters.
fn columns() -> Vec<Column> {
    vec![
        name_column(),
        Column::new("Version", "string")
            .describe("KubernetesVersion represents version of the member cluster."),
        Column::new("Mode", "string")
            .describe("SyncMode describes how a cluster sync resources from karmada control plane."),
        Column::new("Ready", "string")
            .describe("The aggregate readiness state of this cluster for accepting workloads."),
        Column::new("Age", "string").describe(CREATION_TIMESTAMP_DESCRIPTION),
        Column::new("Zones", "string").wide().describe(
            "Zones represents the failure zones(also called availability zones) of the member cluster. The \
             zones are presented as a slice to support the case that cluster runs across multiple failure zones.",
        ),
        Column::new("Region", "string")
            .wide()
            .describe("Region represents the region of the member cluster locate in."),
        Column::new("Provider", "string")
            .wide()
            .describe("Provider represents the cloud provider name of the member cluster."),
        Column::new("API-Endpoint", "string")
            .wide()
            .describe("The API endpoint of the member cluster."),
        Column::new("Proxy-URL", "string")
            .wide()
            .describe("ProxyURL is the proxy URL for the cluster."),
    ]
}

/// One Cluster's cells, `now` in seconds since the epoch.
fn cells(cluster: &Value, now: i64) -> Vec<Value> {
    let text = |pointer: &str| {
        cluster
            .pointer(pointer)
            .and_then(Value::as_str)
            .unwrap_or_default()
    };
    let or_none = |value: &str| if value.is_empty() { "<none>" } else { value }.to_owned();
    let ready = cluster
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .find(|condition| condition["type"] == "Ready")
        .map_or("Unknown", |condition| {
            condition["status"].as_str().unwrap_or_default()
        });
    let age = match text("/metadata/creationTimestamp") {
        "" => "<unknown>".to_owned(),
        created => age_of(created, now),
    };
    let zones: Vec<&str> = cluster
        .pointer("/spec/zones")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    // Karmada's API server moves a lone `zone` into `zones` when it stores a Cluster, so its table shows it
    // there; the CRD stores what it was given.
    let zones = match (zones.is_empty(), text("/spec/zone")) {
        (false, _) => zones.join(","),
        (true, zone) => or_none(zone),
    };
    vec![
        json!(text("/metadata/name")),
        json!(text("/status/kubernetesVersion")),
        json!(text("/spec/syncMode")),
        json!(ready),
        json!(age),
        json!(zones),
        json!(or_none(text("/spec/region"))),
        json!(or_none(text("/spec/provider"))),
        json!(text("/spec/apiEndpoint")),
        json!(or_none(text("/spec/proxyURL"))),
    ]
}

/// `answer` (a Cluster or a ClusterList, `v1alpha1`) as a Table; `None` for anything else (a Status).
pub(crate) fn to_table(
    answer: &Value,
    request: &TableRequest,
    with_columns: bool,
    now: i64,
) -> Option<Value> {
    let options = TableOptions {
        api_version: request.api_version,
        include_object: request.include_object,
        with_columns,
        now,
    };
    let columns = columns();
    match answer.get("kind").and_then(Value::as_str) {
        Some("ClusterList") => {
            let items = answer
                .get("items")
                .and_then(Value::as_array)
                .map(Vec::as_slice)
                .unwrap_or_default();
            let rows = items.iter().map(|cluster| (cells(cluster, now), cluster));
            Some(table(&columns, rows, list_metadata(answer), &options))
        }
        Some("Cluster") => {
            let metadata = list_metadata(answer);
            Some(table(
                &columns,
                [(cells(answer, now), answer)],
                metadata,
                &options,
            ))
        }
        _ => None,
    }
}

/// The Table's `metadata`: the list's `resourceVersion`, `continue` and `remainingItemCount`, or a single
/// object's `resourceVersion`, empty ones left out as kube encodes a `ListMeta`.
fn list_metadata(answer: &Value) -> Value {
    let mut metadata = Map::new();
    for key in ["resourceVersion", "continue"] {
        if let Some(text) = answer
            .pointer(&format!("/metadata/{key}"))
            .and_then(Value::as_str)
            .filter(|text| !text.is_empty())
        {
            metadata.insert(key.to_owned(), json!(text));
        }
    }
    if answer.get("kind").and_then(Value::as_str) == Some("ClusterList")
        && let Some(count) = answer
            .pointer("/metadata/remainingItemCount")
            .filter(|count| count.is_number())
    {
        metadata.insert("remainingItemCount".to_owned(), count.clone());
    }
    Value::Object(metadata)
}

/// Watch events' objects as one-row Tables: the first event carries the column definitions, later ones
/// `null`, whatever the events are (kube-apiserver leaves the headers out after its first encoded event).
#[derive(Debug)]
pub(crate) struct WatchTables {
    request: TableRequest,
    columns_sent: bool,
}

impl WatchTables {
    /// Tables as `request` asks for them.
    pub(crate) fn new(request: TableRequest) -> WatchTables {
        WatchTables {
            request,
            columns_sent: false,
        }
    }

    /// Replaces `event`'s object by its Table (an `ERROR` event's Status stays).
    pub(crate) fn convert(&mut self, event: &mut Value, now: i64) {
        let with_columns = !self.columns_sent;
        self.columns_sent = true;
        let Some(object) = event.get_mut("object") else {
            return;
        };
        if let Some(table) = to_table(object, &self.request, with_columns, now) {
            *object = table;
        }
    }
}

#[cfg(test)]
mod tests;
