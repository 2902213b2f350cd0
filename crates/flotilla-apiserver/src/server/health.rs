//! `/healthz`, `/livez` and `/readyz`: named checks, `?verbose` listing them as `[+]<name> ok`
//! lines, `?exclude=<name>`, `/<endpoint>/<check>` for one check, and 500 while a check fails (the store
//! cannot commit, or the server is shutting down for `/readyz`).

use axum::response::{IntoResponse, Response};
use http::{HeaderValue, StatusCode, header};

use super::Ctx;
use crate::route::Query;

fn text(code: StatusCode, body: String) -> Response {
    let mut r = (code, body).into_response();
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    r.headers_mut().insert(
        "X-Content-Type-Options",
        HeaderValue::from_static("nosniff"),
    );
    r
}

/// The checks of an endpoint, each with whether it passes.
fn checks(ctx: &Ctx, ready: bool) -> Vec<(&'static str, bool)> {
    let mut out = vec![
        ("ping", true),
        ("log", true),
        ("etcd", ctx.registry.store.healthy()),
        ("poststarthook/start-apiextensions-controllers", true),
        ("poststarthook/crd-informer-synced", true),
    ];
    if ready {
        out.push(("shutdown", !ctx.registry.shutdown.is_cancelled()));
    }
    out
}

/// Answers a health endpoint; `path` is the request path, `query` its query string.
pub fn respond(ctx: &Ctx, path: &str, query: Option<&str>) -> Response {
    let trimmed = path.trim_start_matches('/');
    let (endpoint, single) = trimmed.split_once('/').unwrap_or((trimmed, ""));
    let all = checks(ctx, endpoint == "readyz");
    if !single.is_empty() {
        return match all.iter().find(|(name, _)| *name == single) {
            Some((_, true)) => text(StatusCode::OK, "ok".into()),
            Some((name, false)) => text(
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("internal server error: {name} check failed\n"),
            ),
            None => text(StatusCode::NOT_FOUND, "404 page not found\n".into()),
        };
    }
    let q = Query::parse(query);
    let excluded = q.all("exclude");
    let verbose = q.get("verbose").is_some();
    let selected: Vec<_> = all
        .into_iter()
        .filter(|(name, _)| !excluded.contains(name))
        .collect();
    let passed = selected.iter().all(|(_, ok)| *ok);
    if passed && !verbose {
        return text(StatusCode::OK, "ok".into());
    }
    let mut body = String::new();
    for (name, ok) in &selected {
        if *ok {
            body.push_str(&format!("[+]{name} ok\n"));
        } else {
            body.push_str(&format!("[-]{name} failed: reason withheld\n"));
        }
    }
    for name in excluded {
        body.push_str(&format!("[+]{name} excluded: ok\n"));
    }
    if passed {
        body.push_str(&format!("{endpoint} check passed\n"));
        text(StatusCode::OK, body)
    } else {
        body.push_str(&format!("{endpoint} check failed\n"));
        text(StatusCode::INTERNAL_SERVER_ERROR, body)
    }
}
