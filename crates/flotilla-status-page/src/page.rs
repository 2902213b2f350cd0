//! The status page: the journeys as a live, read-only web page, served by the controller manager's admin
//! listener beside `/metrics` (`flotilla up` and `flotilla controller-manager` both serve it).
//!
//! Routes: `/` the page, `/api/journeys` the [`Snapshot`] it shows (also what `flotilla status` reads),
//! `/events?apiVersion=&kind=&namespace=&name=` a page listing one object's Events and `/api/events` with the
//! same query the Events themselves.
//!
//! Guarantees: the journeys come from the informers the controllers share (watches, no request to the API
//! server per page view); only the Events listing asks the API server, when a person follows a link. The pages
//! are self-contained (inline script and style, nothing fetched from elsewhere) and render every value as text,
//! never as markup. The page refreshes itself every two seconds.

use std::hash::Hash;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use flotilla_api::work::v1alpha1::Work;
use flotilla_api::work::v1alpha2::{ClusterResourceBinding, ResourceBinding};
use flotilla_interpreter::facade::Journal;
use k8s_openapi::api::core::v1::Event;
use kube::api::ListParams;
use kube::runtime::reflector::Store;
use kube::{Api, Client, Resource};
use serde::{Deserialize, Serialize};
use tokio::sync::watch;

use crate::journey::{Snapshot, build, snapshot};

/// How long a request waits for the informers' first sync before answering 503.
const SYNC_PATIENCE: Duration = Duration::from_secs(10);

const PAGE: &str = include_str!("page.html");
const EVENTS_PAGE: &str = include_str!("events.html");

/// One kind of object as the page reads it: a kube-runtime reflector store that a watch keeps current (the
/// controllers' informers share theirs), and the signal that turns true once the watch's first list is in it.
#[derive(Clone)]
pub struct Cache<K: Resource + 'static>
where
    K::DynamicType: Eq + Hash + Clone,
{
    store: Store<K>,
    synced: watch::Receiver<bool>,
}

impl<K: Resource + Clone + 'static> Cache<K>
where
    K::DynamicType: Eq + Hash + Clone,
{
    /// The objects of `store`, synced once `synced` turns true.
    pub fn new(store: Store<K>, synced: watch::Receiver<bool>) -> Self {
        Cache { store, synced }
    }

    fn list(&self) -> Vec<Arc<K>> {
        self.store.state()
    }

    async fn wait_synced(&self) {
        let mut synced = self.synced.clone();
        // A store whose watch stopped before its first list never syncs: wait, as for one still listing.
        if synced.wait_for(|synced| *synced).await.is_err() {
            std::future::pending::<()>().await;
        }
    }
}

/// What the page shows: the caches of bindings and Works, the interpreter's journal when there is one, and the
/// client the Events listing asks the API server through.
#[derive(Clone)]
pub struct Sources {
    /// ResourceBindings.
    pub bindings: Cache<ResourceBinding>,
    /// ClusterResourceBindings.
    pub cluster_bindings: Cache<ClusterResourceBinding>,
    /// Works.
    pub works: Cache<Work>,
    /// The interpreter's record of which layer answered, if it keeps one.
    pub journal: Option<Journal>,
    /// The control plane's client.
    pub client: Client,
}

/// The status page's routes over `sources`.
pub fn router(sources: Sources) -> Router {
    Router::new()
        .route("/", get(|| async { html(PAGE) }))
        .route("/events", get(|| async { html(EVENTS_PAGE) }))
        .route("/api/journeys", get(journeys))
        .route("/api/events", get(events))
        .with_state(sources)
}

fn html(body: &'static str) -> Response {
    ([(CONTENT_TYPE, "text/html; charset=utf-8")], body).into_response()
}

fn json<T: Serialize>(value: &T) -> Response {
    match serde_json::to_vec(value) {
        Ok(body) => (
            [
                (CONTENT_TYPE, "application/json"),
                (CACHE_CONTROL, "no-store"),
            ],
            body,
        )
            .into_response(),
        Err(err) => failure(StatusCode::INTERNAL_SERVER_ERROR, &err.to_string()),
    }
}

/// An error answer: `{"error": message}`.
fn failure(status: StatusCode, message: &str) -> Response {
    let body = serde_json::json!({ "error": message }).to_string();
    (status, [(CONTENT_TYPE, "application/json")], body).into_response()
}

async fn journeys(State(state): State<Sources>) -> Response {
    let synced = async {
        state.bindings.wait_synced().await;
        state.cluster_bindings.wait_synced().await;
        state.works.wait_synced().await;
    };
    if tokio::time::timeout(SYNC_PATIENCE, synced).await.is_err() {
        return failure(
            StatusCode::SERVICE_UNAVAILABLE,
            "the watches of bindings and Works have not synced yet",
        );
    }
    json(&current(&state))
}

fn current(state: &Sources) -> Snapshot {
    let works = state.works.list();
    let works: Vec<&Work> = works.iter().map(Arc::as_ref).collect();
    let journal = state.journal.as_ref();
    let bindings = state.bindings.list();
    let mut journeys = build(bindings.iter().map(Arc::as_ref), &works, journal);
    let cluster_bindings = state.cluster_bindings.list();
    journeys.extend(build(
        cluster_bindings.iter().map(Arc::as_ref),
        &works,
        journal,
    ));
    snapshot(journeys, journal.is_some())
}

/// The object whose Events are asked for.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Regarding {
    #[serde(default)]
    api_version: String,
    #[serde(default)]
    kind: String,
    #[serde(default)]
    namespace: String,
    #[serde(default)]
    name: String,
}

/// One Event, as the Events page shows it.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct EventView {
    #[serde(rename = "type")]
    type_: String,
    reason: String,
    message: String,
    count: i32,
    last_seen: String,
    source: String,
}

async fn events(State(state): State<Sources>, Query(regarding): Query<Regarding>) -> Response {
    if regarding.kind.is_empty() || regarding.name.is_empty() {
        return failure(
            StatusCode::BAD_REQUEST,
            "the query needs kind and name (and namespace for a namespaced object)",
        );
    }
    // Events of cluster-scoped objects live in `default`, as kube's event recorders put them.
    let namespace = if regarding.namespace.is_empty() {
        "default"
    } else {
        regarding.namespace.as_str()
    };
    let mut fields = format!(
        "involvedObject.kind={},involvedObject.name={}",
        regarding.kind, regarding.name
    );
    if !regarding.namespace.is_empty() {
        fields.push_str(&format!(
            ",involvedObject.namespace={}",
            regarding.namespace
        ));
    }
    let api: Api<Event> = Api::namespaced(state.client.clone(), namespace);
    let listed = match api.list(&ListParams::default().fields(&fields)).await {
        Ok(listed) => listed,
        Err(err) => {
            return failure(
                StatusCode::BAD_GATEWAY,
                &format!("failed to list the Events in {namespace} ({fields}): {err}"),
            );
        }
    };
    let mut views: Vec<EventView> = listed
        .items
        .into_iter()
        .filter(|e| {
            regarding.api_version.is_empty()
                || e.involved_object.api_version.as_deref() == Some(regarding.api_version.as_str())
        })
        .map(event_view)
        .collect();
    views.sort_by(|a, b| b.last_seen.cmp(&a.last_seen));
    json(&views)
}

fn event_view(event: Event) -> EventView {
    // An Event written as events.k8s.io/v1 shows its series and event time here; one written as core/v1 its
    // count and timestamps.
    let series = event.series.as_ref();
    let last_seen = series
        .and_then(|s| s.last_observed_time.as_ref())
        .map(|t| t.0.to_string())
        .or_else(|| event.last_timestamp.as_ref().map(|t| t.0.to_string()))
        .or_else(|| event.event_time.as_ref().map(|t| t.0.to_string()))
        .or_else(|| {
            event
                .metadata
                .creation_timestamp
                .as_ref()
                .map(|t| t.0.to_string())
        })
        .unwrap_or_default();
    let count = series
        .and_then(|s| s.count)
        .or(event.count)
        .unwrap_or(1)
        .max(1);
    let source = event
        .reporting_component
        .filter(|c| !c.is_empty())
        .or_else(|| event.source.and_then(|s| s.component))
        .unwrap_or_default();
    EventView {
        type_: event.type_.unwrap_or_default(),
        reason: event.reason.unwrap_or_default(),
        message: event.message.unwrap_or_default(),
        count,
        last_seen,
        source,
    }
}
