//! The watch handler: newline-delimited JSON events over a chunked 200 response, flushed per
//! event; initial events with the initial-events-end bookmark; resume from history; 410 as an ERROR event.

use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use axum::response::Response;
use bytes::Bytes;
use http::{HeaderValue, StatusCode, header};
use rand::Rng;
use serde_json::{Value, json};
use tokio::sync::{broadcast, mpsc};

use crate::context::Ctx;
use crate::handlers::filter::Filter;
use crate::handlers::read::parse_rv;
use crate::handlers::{Req, TableRender, output, render};
use crate::negotiate::Output;
use flotilla_registry::resource::ResourceInfo;
use flotilla_registry::status::{ApiError, ApiResult};
use flotilla_store::hub::{Event, EventType};
use flotilla_store::{WatchRefused, WatchStart, compact};

/// Annotation marking the end of the initial events of a streaming list.
pub(crate) const INITIAL_EVENTS_END: &str = "k8s.io/initial-events-end";

fn validate(req: &Req) -> ApiResult<(Option<bool>, bool)> {
    let q = &req.query;
    let send_initial = q.flag("sendInitialEvents").map_err(ApiError::bad_request)?;
    let rv_match = q.get("resourceVersionMatch").filter(|m| !m.is_empty());
    if send_initial.is_some() && rv_match != Some("NotOlderThan") {
        return Err(ApiError::invalid_options(
            "ListOptions",
            "sendInitialEvents",
            "Forbidden: sendInitialEvents is forbidden for watch unless resourceVersionMatch is set to NotOlderThan",
        ));
    }
    if rv_match.is_some() && send_initial.is_none() {
        return Err(ApiError::invalid_options(
            "ListOptions",
            "resourceVersionMatch",
            "Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
        ));
    }
    if rv_match.is_some() && rv_match != Some("NotOlderThan") {
        return Err(ApiError::invalid_options(
            "ListOptions",
            "resourceVersionMatch",
            "Unsupported value: must be NotOlderThan for watch",
        ));
    }
    if q.get("continue").is_some_and(|c| !c.is_empty()) {
        return Err(ApiError::invalid_options(
            "ListOptions",
            "continue",
            "Forbidden: continue is forbidden for watch",
        ));
    }
    let bookmarks = q
        .flag("allowWatchBookmarks")
        .map_err(ApiError::bad_request)?
        == Some(true);
    Ok((send_initial, bookmarks))
}

struct Watcher {
    info: Arc<ResourceInfo>,
    filter: Filter,
    out: Output,
    /// Set when events are Tables (one row each).
    table: Option<TableRender>,
    /// Whether the column definitions went out already (only the first Table carries them).
    columns_sent: AtomicBool,
    bookmarks: bool,
    tx: mpsc::Sender<Bytes>,
    progress: u64,
}

impl Watcher {
    fn object(&self, obj: &Arc<Value>) -> Arc<Value> {
        match &self.table {
            Some(t) => Arc::new({
                let first = !self.columns_sent.swap(true, Ordering::Relaxed);
                let rv = obj
                    .pointer("/metadata/resourceVersion")
                    .cloned()
                    .unwrap_or_else(|| json!(""));
                t.render(
                    &self.info,
                    std::slice::from_ref(obj),
                    json!({"resourceVersion": rv}),
                    first,
                )
            }),
            None => render(&self.info, obj, &self.out),
        }
    }

    async fn send(&self, kind: &str, object: &Value) -> bool {
        let mut line = Vec::with_capacity(1024);
        line.extend_from_slice(b"{\"type\":\"");
        line.extend_from_slice(kind.as_bytes());
        line.extend_from_slice(b"\",\"object\":");
        if compact::write_to(&mut line, object).is_err() {
            return false;
        }
        line.extend_from_slice(b"}\n");
        self.tx.send(Bytes::from(line)).await.is_ok()
    }

    async fn bookmark(&self, rv: u64, initial_end: bool) -> bool {
        let (kind, api_version) = match &self.out {
            Output::Metadata(v) => (
                "PartialObjectMetadata".to_string(),
                format!("meta.k8s.io/{v}"),
            ),
            Output::Table(v) => ("Table".to_string(), format!("meta.k8s.io/{v}")),
            _ => (self.info.kind.clone(), self.info.api_version()),
        };
        let mut meta = json!({"resourceVersion": rv.to_string()});
        if initial_end {
            meta["annotations"] = json!({INITIAL_EVENTS_END: "true"});
        }
        let mut object = json!({"kind": kind, "apiVersion": api_version, "metadata": meta});
        if self.table.is_some() {
            // A Table bookmark is an empty table: no columns, no rows.
            object["columnDefinitions"] = json!([]);
            object["rows"] = json!([]);
        }
        self.send("BOOKMARK", &object).await
    }

    /// Delivers one live event with selector transitions; returns false when the client is gone.
    async fn deliver(&mut self, ev: &Event) -> bool {
        if ev.rv <= self.progress {
            return true;
        }
        self.progress = ev.rv;
        let new_m = self.filter.matches(&ev.object);
        let old_m = ev.prev.as_ref().is_some_and(|p| self.filter.matches(p));
        match ev.kind {
            EventType::Added if new_m => self.send("ADDED", &self.object(&ev.object)).await,
            EventType::Deleted if new_m => self.send("DELETED", &self.object(&ev.object)).await,
            EventType::Modified => match (old_m, new_m) {
                (false, true) => self.send("ADDED", &self.object(&ev.object)).await,
                (true, true) => self.send("MODIFIED", &self.object(&ev.object)).await,
                (true, false) => {
                    // The old content leaves the selection, stamped with the new RV.
                    let mut old = ev
                        .prev
                        .as_ref()
                        .map(|p| p.as_ref().clone())
                        .unwrap_or(Value::Null);
                    flotilla_store::set_rv(&mut old, ev.rv);
                    self.send("DELETED", &self.object(&Arc::new(old))).await
                }
                (false, false) => true,
            },
            _ => true,
        }
    }
}

fn error_line(code: u16, message: String) -> Bytes {
    let status = ApiError::new(
        code,
        if code == 410 {
            "Expired"
        } else {
            "InternalError"
        },
        message,
    )
    .to_status();
    let mut line =
        serde_json::to_vec(&json!({"type": "ERROR", "object": status})).unwrap_or_default();
    line.push(b'\n');
    Bytes::from(line)
}

fn streaming(rx: mpsc::Receiver<Bytes>) -> Response {
    let stream = futures::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|b| (Ok::<_, Infallible>(b), rx))
    });
    let mut r = Response::new(crate::wire::stream_body(stream));
    *r.status_mut() = StatusCode::OK;
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    r.headers_mut().insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("no-cache, private"),
    );
    r
}

/// GET of a collection with `watch=true`.
pub(crate) async fn watch(
    ctx: &Arc<Ctx>,
    info: &Arc<ResourceInfo>,
    req: &Req,
) -> ApiResult<Response> {
    let out = output(req)?;
    let (send_initial, bookmarks) = validate(req)?;
    let filter = Filter::parse(info, req)?;
    let rv = parse_rv(req.query.get("resourceVersion"))?;
    let timeout = match req.query.get("timeoutSeconds").filter(|t| !t.is_empty()) {
        Some(t) => Duration::from_secs(
            t.parse::<u64>()
                .map_err(|_| ApiError::bad_request(format!("invalid timeoutSeconds {t:?}")))?,
        ),
        None => Duration::from_secs(rand::rng().random_range(1800..3600)),
    };
    let (tx, rx) = mpsc::channel::<Bytes>(256);
    // RV unset or 0 starts with the current state; with sendInitialEvents the state is followed by the
    // annotated bookmark (upstream defaults plain RV 0/unset watches to this mode too).
    let from_snapshot =
        send_initial == Some(true) || (send_initial.is_none() && rv.unwrap_or(0) == 0);
    let initial_end =
        send_initial == Some(true) || (send_initial.is_none() && rv.unwrap_or(0) == 0 && bookmarks);
    let start = if from_snapshot {
        ctx.registry
            .store
            .watch(&info.key(), filter.namespace(), None)
    } else if send_initial == Some(false) && rv.unwrap_or(0) == 0 {
        ctx.registry.store.watch(
            &info.key(),
            filter.namespace(),
            Some(ctx.registry.store.current_rv()),
        )
    } else {
        ctx.registry
            .store
            .watch(&info.key(), filter.namespace(), rv)
    };
    let start = match start {
        Ok(s) => s,
        Err(refused) => {
            let (n, m) = match refused {
                WatchRefused::TooOld(oldest) => (rv.unwrap_or(0), oldest),
                WatchRefused::TooNew(current) => (rv.unwrap_or(0), current),
            };
            let _ = tx.try_send(error_line(
                410,
                format!("too old resource version: {n} ({m})"),
            ));
            drop(tx);
            return Ok(streaming(rx));
        }
    };
    let table = match &out {
        Output::Table(v) => Some(TableRender::new(req, v)?),
        _ => None,
    };
    let w = Watcher {
        info: info.clone(),
        filter,
        table,
        columns_sent: AtomicBool::new(false),
        out,
        bookmarks,
        tx,
        progress: 0,
    };
    let ctx = ctx.clone();
    tokio::spawn(run(ctx, w, start, initial_end && bookmarks, timeout));
    Ok(streaming(rx))
}

async fn run(
    ctx: Arc<Ctx>,
    mut w: Watcher,
    start: WatchStart,
    initial_end: bool,
    timeout: Duration,
) {
    let WatchStart {
        initial,
        rv,
        replay,
        mut rx,
    } = start;
    w.progress = rv;
    if let Some(items) = initial {
        for obj in items.iter().filter(|o| w.filter.matches(o)) {
            if !w.send("ADDED", &w.object(obj)).await {
                return;
            }
        }
        if initial_end && !w.bookmark(rv, true).await {
            return;
        }
    }
    for ev in &replay {
        if !w.deliver(ev).await {
            return;
        }
    }
    let deadline = tokio::time::sleep(timeout);
    tokio::pin!(deadline);
    let mut ticker = tokio::time::interval(ctx.bookmark_interval);
    ticker.tick().await;
    loop {
        tokio::select! {
            _ = &mut deadline => return,
            _ = ctx.registry.shutdown.cancelled() => return,
            _ = w.tx.closed() => return,
            _ = ticker.tick(), if w.bookmarks => {
                // Events up to `published` are already queued on rx: drain them before the bookmark so it
                // never claims an RV ahead of an event this watcher has still to see.
                let published = ctx.registry.store.hub().published();
                loop {
                    match rx.try_recv() {
                        Ok(ev) => if !w.deliver(&ev).await { return },
                        Err(broadcast::error::TryRecvError::Empty) => break,
                        Err(_) => return,
                    }
                }
                w.progress = w.progress.max(published);
                if !w.bookmark(w.progress, false).await {
                    return;
                }
            }
            ev = rx.recv() => match ev {
                Ok(ev) => if !w.deliver(&ev).await { return },
                // Lagging or closed: end the stream cleanly; the client resumes from its last RV.
                Err(_) => return,
            },
        }
    }
}
