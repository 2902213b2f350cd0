//! What each aggregated backend serves, fetched and cached as kube-aggregator's discovery manager and OpenAPI v3
//! controller do, for aggregated discovery (`/apis` as `APIGroupDiscoveryList`) and the `/openapi/v3` index.
//!
//! For every APIService with a service: `GET /apis` from its backend (through the proxy, as
//! `system:kube-aggregator` in `system:masters`, asking for aggregated discovery v2 with the last ETag), falling
//! back to the legacy `/apis/<group>/<version>` document when the backend does not answer v2; the APIService's
//! version entry is then marked `Current`, or `Stale` with no resources when the fetch failed. One fetch serves
//! every APIService of the same service (`namespace/name:port`) that changed before it. Each APIService is
//! fetched again on every change to it, a minute after a success, and after failures with a backoff from
//! 500 ms doubling to a minute. The backend's `/openapi/v3` index (as `system:aggregator`) gives the entry for
//! the group-version, which `/openapi/v3` lists and whose documents are proxied.

use super::Aggregator;
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http::{Request, StatusCode, header};
use http_body_util::{BodyExt, Empty};
use serde_json::{Value, json};
use tokio::sync::mpsc::UnboundedReceiver;
use tokio::time::Instant;

use super::Registered;
use super::apiservice::ServiceRef;
use super::proxy::{Failure, send};
use super::queue::{Policy, drive};
use flotilla_registry::auth::UserInfo;
use flotilla_registry::auth::user::MASTERS;

/// The Accept header of a discovery fetch (client-go's `AcceptV2`).
const ACCEPT_V2: &str = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";
/// How long one fetch may take.
const FETCH_TIMEOUT: Duration = Duration::from_secs(5);
/// How often a healthy backend is asked again; also the longest backoff.
const REFRESH: Duration = Duration::from_secs(60);
/// The first retry after a failure.
const FIRST_RETRY: Duration = Duration::from_millis(500);

/// A fetched discovery document of one service.
#[derive(Debug, Clone)]
struct Fetched {
    /// Version entries by (group, version).
    versions: HashMap<(String, String), Value>,
    etag: Option<String>,
    at: Instant,
}

#[derive(Debug, Default)]
struct Inner {
    /// The version entry each APIService contributes (with its freshness).
    entries: BTreeMap<String, Value>,
    /// The `/openapi/v3` index entry of each APIService's group-version.
    openapi: BTreeMap<String, Value>,
    /// The last document fetched from each service (v2 only, as kube keeps them).
    fetched: HashMap<ServiceRef, Fetched>,
    /// When each APIService last changed.
    dirty_since: HashMap<String, Instant>,
}

/// The cache the discovery and OpenAPI handlers read.
#[derive(Debug, Default)]
pub(crate) struct Cache {
    inner: Mutex<Inner>,
}

impl Cache {
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The aggregated discovery version entry of an APIService, once its backend has been asked.
    pub(crate) fn version_entry(&self, apiservice: &str) -> Option<Value> {
        self.lock().entries.get(apiservice).cloned()
    }

    /// The `/openapi/v3` index entry (`{"serverRelativeURL": ...}`) of an APIService's group-version.
    pub(crate) fn openapi_entry(&self, apiservice: &str) -> Option<Value> {
        self.lock().openapi.get(apiservice).cloned()
    }

    fn forget(&self, apiservice: &str) {
        let mut inner = self.lock();
        inner.entries.remove(apiservice);
        inner.openapi.remove(apiservice);
        inner.dirty_since.remove(apiservice);
    }
}

/// The identity of the aggregator's own discovery requests.
fn aggregator_user() -> UserInfo {
    UserInfo {
        username: "system:kube-aggregator".into(),
        groups: vec![MASTERS.into()],
        ..UserInfo::default()
    }
}

async fn get(
    agg: &Aggregator,
    target: &Registered,
    path: &str,
    accept: Option<&str>,
    etag: Option<&str>,
    user: &UserInfo,
) -> Result<(StatusCode, http::HeaderMap, Bytes), String> {
    let mut req = Request::get(path)
        .body(Empty::<Bytes>::new().map_err(|e| match e {}).boxed_unsync())
        .map_err(|e| e.to_string())?;
    if let Some(accept) = accept.and_then(|a| http::HeaderValue::from_str(a).ok()) {
        req.headers_mut().insert(header::ACCEPT, accept);
    }
    if let Some(tag) = etag.and_then(|t| http::HeaderValue::from_str(t).ok()) {
        req.headers_mut().insert(header::IF_NONE_MATCH, tag);
    }
    let fetch = async {
        let response = send(agg, target, req, user, None)
            .await
            .map_err(|f: Failure| f.message().to_string())?;
        let (parts, body) = response.into_parts();
        let body = body.collect().await.map_err(|e| e.to_string())?;
        Ok((parts.status, parts.headers, body.to_bytes()))
    };
    tokio::time::timeout(FETCH_TIMEOUT, fetch)
        .await
        .map_err(|_| "request timed out".to_string())?
}

/// Whether a Content-Type names aggregated discovery v2.
fn is_v2(content_type: Option<&str>) -> bool {
    let Some(ct) = content_type else {
        return false;
    };
    let params: Vec<String> = ct.split(';').map(|p| p.trim().replace(' ', "")).collect();
    params.first().map(String::as_str) == Some("application/json")
        && params.iter().any(|p| p == "g=apidiscovery.k8s.io")
        && params.iter().any(|p| p == "v=v2")
        && params.iter().any(|p| p == "as=APIGroupDiscoveryList")
}

/// A legacy `APIResourceList` as aggregated discovery resources (apiserver's
/// `ConvertGroupVersionIntoToDiscovery`): subresources (`parent/sub`) under their parent.
pub(crate) fn convert_legacy(list: &Value) -> Vec<Value> {
    let items: Vec<&Value> = list
        .get("resources")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .collect();
    let s = |r: &Value, k: &str| r.get(k).and_then(Value::as_str).unwrap_or("").to_string();
    let kind = |r: &Value| json!({"group": s(r, "group"), "version": s(r, "version"), "kind": s(r, "kind")});
    let mut out: Vec<Value> = Vec::new();
    for r in items.iter().filter(|r| !s(r, "name").contains('/')) {
        let namespaced = r
            .get("namespaced")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        let mut entry = json!({
            "resource": s(r, "name"),
            "responseKind": kind(r),
            "scope": if namespaced { "Namespaced" } else { "Cluster" },
            "singularResource": s(r, "singularName"),
            "verbs": r.get("verbs").cloned().unwrap_or_else(|| json!([])),
        });
        for key in ["shortNames", "categories"] {
            if let Some(v) = r
                .get(key)
                .filter(|v| v.as_array().is_some_and(|a| !a.is_empty()))
            {
                entry[key] = v.clone();
            }
        }
        out.push(entry);
    }
    for r in items {
        let name = s(r, "name");
        let Some((parent, sub)) = name.split_once('/') else {
            continue;
        };
        if let Some(p) = out.iter_mut().find(|e| e["resource"] == parent) {
            let sub = json!({"subresource": sub, "responseKind": kind(r),
                "verbs": r.get("verbs").cloned().unwrap_or_else(|| json!([]))});
            match p.get_mut("subresources").and_then(Value::as_array_mut) {
                Some(list) => list.push(sub),
                None => p["subresources"] = json!([sub]),
            }
        }
    }
    out
}

/// Fetches what `target`'s backend serves for its group-version: `Ok` with the version entry (without
/// freshness; `None` when the backend does not list the group-version), or why it failed.
async fn fetch(agg: &Aggregator, target: &Registered) -> Result<Option<Value>, String> {
    let Some(service) = target.spec.service.clone() else {
        return Ok(None);
    };
    let key = (target.spec.group.clone(), target.spec.version.clone());
    let (dirty, cached) = {
        let inner = agg.discovery.lock();
        let dirty = inner.dirty_since.get(&target.spec.name).copied();
        (dirty, inner.fetched.get(&service).cloned())
    };
    if let Some(c) = &cached
        && dirty.is_none_or(|d| c.at > d)
    {
        return Ok(c.versions.get(&key).cloned());
    }
    let user = aggregator_user();
    let started = Instant::now();
    let etag = cached.as_ref().and_then(|c| c.etag.clone());
    let (status, headers, body) = get(
        agg,
        target,
        "/apis",
        Some(ACCEPT_V2),
        etag.as_deref(),
        &user,
    )
    .await?;
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok());
    if status == StatusCode::NOT_MODIFIED
        && let Some(mut c) = cached
    {
        c.at = started;
        let found = c.versions.get(&key).cloned();
        agg.discovery.lock().fetched.insert(service, c);
        return Ok(found);
    }
    if status == StatusCode::SERVICE_UNAVAILABLE {
        return Err(format!(
            "service {}/{}:{} returned non-success response code: 503",
            service.namespace, service.name, service.port
        ));
    }
    if status == StatusCode::OK && is_v2(content_type) {
        let doc: Value = serde_json::from_slice(&body).map_err(|e| e.to_string())?;
        let mut versions = HashMap::new();
        for group in doc
            .get("items")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let name = group
                .pointer("/metadata/name")
                .and_then(Value::as_str)
                .unwrap_or("");
            for v in group
                .get("versions")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let version = v.get("version").and_then(Value::as_str).unwrap_or("");
                versions.insert((name.to_string(), version.to_string()), v.clone());
            }
        }
        let found = versions.get(&key).cloned();
        let etag = headers
            .get(header::ETAG)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let fetched = Fetched {
            versions,
            etag,
            at: started,
        };
        agg.discovery.lock().fetched.insert(service, fetched);
        return Ok(found);
    }
    // The legacy document of this one group-version, which is not cached (it may not cover the service), asked
    // for as kube does: as `system:kube-aggregator` without groups.
    let path = target.spec.path();
    let user = UserInfo {
        groups: Vec::new(),
        ..user
    };
    let (status, _, body) = get(agg, target, &path, Some("application/json"), None, &user).await?;
    if status != StatusCode::OK {
        return Err(format!(
            "failed to download legacy discovery for {path}: {}",
            String::from_utf8_lossy(&body)
        ));
    }
    let list: Value = serde_json::from_slice(&body).map_err(|e| e.to_string())?;
    Ok(Some(
        json!({"version": target.spec.version, "resources": convert_legacy(&list)}),
    ))
}

/// Refreshes the OpenAPI v3 index entry of `target`'s group-version (kept as it was when the fetch fails).
async fn fetch_openapi(agg: &Aggregator, target: &Registered) {
    let user = UserInfo {
        username: "system:aggregator".into(),
        ..UserInfo::default()
    };
    let Ok((status, _, body)) = get(agg, target, "/openapi/v3", None, None, &user).await else {
        return;
    };
    let key = format!("apis/{}/{}", target.spec.group, target.spec.version);
    let entry = match status {
        StatusCode::OK => serde_json::from_slice::<Value>(&body)
            .ok()
            .and_then(|root| root.pointer("/paths").and_then(|p| p.get(&key)).cloned()),
        StatusCode::NOT_FOUND => None,
        _ => return,
    };
    let mut inner = agg.discovery.lock();
    match entry {
        Some(e) => inner.openapi.insert(target.spec.name.clone(), e),
        None => inner.openapi.remove(&target.spec.name),
    };
}

/// Syncs one APIService; `Err` asks for a retry with backoff.
async fn sync(agg: &Aggregator, name: &str) -> Result<(), ()> {
    let Some(target) = agg.index().get(name).cloned() else {
        agg.discovery.forget(name);
        return Ok(());
    };
    if target.spec.service.is_none() {
        agg.discovery.forget(name);
        return Ok(());
    }
    let result = fetch(agg, &target).await;
    let fresh = result.is_ok();
    let mut entry = match result {
        Ok(Some(e)) => e,
        Ok(None) => json!({"version": target.spec.version}),
        Err(e) => {
            tracing::debug!(apiservice = name, error = %e, "failed to fetch aggregated discovery");
            json!({"version": target.spec.version})
        }
    };
    entry["freshness"] = json!(if fresh { "Current" } else { "Stale" });
    if let Some(resources) = entry.get_mut("resources").and_then(Value::as_array_mut) {
        // As kube-aggregator does for old clients: every response kind present.
        for r in resources.iter_mut() {
            if r.get("responseKind").is_none_or(Value::is_null) {
                r["responseKind"] = json!({});
            }
            for s in r
                .get_mut("subresources")
                .and_then(Value::as_array_mut)
                .into_iter()
                .flatten()
            {
                if s.get("responseKind").is_none_or(Value::is_null) {
                    s["responseKind"] = json!({});
                }
            }
        }
    }
    agg.discovery.lock().entries.insert(name.to_string(), entry);
    if fresh {
        fetch_openapi(agg, &target).await;
        Ok(())
    } else {
        Err(())
    }
}

/// Keeps the cache: syncs each APIService named on `changes` at once, then as the refresh and backoff say.
pub(crate) async fn run(agg: Arc<Aggregator>, changes: UnboundedReceiver<String>) {
    let policy = Policy {
        first_retry: FIRST_RETRY,
        max_retry: REFRESH,
        resync: None,
    };
    let mark_dirty = |agg: &Aggregator, name: &str| {
        let mut inner = agg.discovery.lock();
        inner.dirty_since.insert(name.to_string(), Instant::now());
    };
    drive(agg, changes, policy, mark_dirty, |agg, name| async move {
        sync(&agg, &name).await?;
        if !agg.index().contains_key(&name) {
            return Ok(None);
        }
        // Fetched again a minute from now, whatever was cached (kube's `markDirty` before re-adding).
        mark_dirty(&agg, &name);
        Ok(Some(REFRESH))
    })
    .await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_an_aggregated_discovery_content_type_is_v2() {
        assert!(is_v2(Some(
            "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
        )));
        assert!(is_v2(Some(
            "application/json; g=apidiscovery.k8s.io; v=v2; as=APIGroupDiscoveryList"
        )));
        assert!(!is_v2(Some("application/json")));
        assert!(!is_v2(Some(
            "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList"
        )));
        assert!(!is_v2(None));
    }

    #[test]
    fn legacy_resources_become_aggregated_ones_with_subresources_under_their_parent() {
        let list = json!({"kind": "APIResourceList", "groupVersion": "cluster.karmada.io/v1alpha1", "resources": [
            {"name": "clusters", "singularName": "cluster", "namespaced": false, "kind": "Cluster",
             "verbs": ["get", "list"], "categories": ["karmada-io"], "shortNames": []},
            {"name": "clusters/status", "singularName": "", "namespaced": false, "kind": "Cluster", "verbs": ["get"]},
            {"name": "clusters/proxy", "singularName": "", "namespaced": false, "kind": "ClusterProxyOptions",
             "verbs": ["create", "get"]},
        ]});
        let got = convert_legacy(&list);
        assert_eq!(
            got,
            vec![json!({
                "resource": "clusters",
                "responseKind": {"group": "", "version": "", "kind": "Cluster"},
                "scope": "Cluster", "singularResource": "cluster", "verbs": ["get", "list"],
                "categories": ["karmada-io"],
                "subresources": [
                    {"subresource": "status", "responseKind": {"group": "", "version": "", "kind": "Cluster"}, "verbs": ["get"]},
                    {"subresource": "proxy", "responseKind": {"group": "", "version": "", "kind": "ClusterProxyOptions"}, "verbs": ["create", "get"]},
                ],
            })]
        );
    }
}
