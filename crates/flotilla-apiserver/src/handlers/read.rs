//! get and list: resourceVersion semantics, paging with consistent snapshots, filtering.

use std::sync::Arc;

use axum::response::{IntoResponse, Response};
use base64::Engine;
use http::{HeaderValue, StatusCode, header};
use serde_json::{Value, json};

use super::filter::Filter;
use super::{Req, TableRender, output, render};
use crate::context::Ctx;
use crate::negotiate::Output;
use crate::wire::json_response;
use flotilla_registry::resource::ResourceInfo;
use flotilla_registry::status::{ApiError, ApiResult};
use flotilla_store::hub::TooOld;
use flotilla_store::obj_key;

/// Parses a resourceVersion parameter (400 when not a decimal number).
pub(crate) fn parse_rv(raw: Option<&str>) -> ApiResult<Option<u64>> {
    match raw {
        None | Some("") => Ok(None),
        Some(s) => s
            .parse::<u64>()
            .map(Some)
            .map_err(|_| ApiError::bad_request(format!("invalid resource version: {s:?}"))),
    }
}

/// GET of one object.
pub(crate) fn get(ctx: &Ctx, info: &ResourceInfo, req: &Req) -> ApiResult<Response> {
    let out = output(req)?;
    let name = req.rp.name.as_deref().unwrap_or("");
    if let Some(rv) = parse_rv(req.query.get("resourceVersion"))? {
        let current = ctx.registry.store.current_rv();
        if rv > current {
            return Err(ApiError::too_large_rv(rv, current));
        }
    }
    let obj = ctx
        .registry
        .store
        .get(&info.key(), req.ns(), name)
        .ok_or_else(|| ApiError::not_found(&info.plural, &info.group, name))?;
    if let Output::Table(v) = &out {
        let rv = obj
            .pointer("/metadata/resourceVersion")
            .cloned()
            .unwrap_or_else(|| json!(""));
        let table = TableRender::new(req, v)?.render(
            info,
            std::slice::from_ref(&obj),
            json!({"resourceVersion": rv}),
            true,
        );
        return Ok(json_response(StatusCode::OK, &table));
    }
    Ok(json_response(StatusCode::OK, &render(info, &obj, &out)))
}

#[derive(serde::Serialize, serde::Deserialize)]
struct Continue {
    rv: u64,
    ns: String,
    name: String,
}

fn encode_continue(c: &Continue) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .encode(serde_json::to_vec(c).unwrap_or_default())
}

fn decode_continue(s: &str) -> ApiResult<Continue> {
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(s.trim_end_matches('='))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .ok_or_else(|| ApiError::bad_request(format!("invalid continue token: {s:?}")))
}

fn validate_list_options(req: &Req) -> ApiResult<()> {
    let q = &req.query;
    if q.flag("sendInitialEvents")
        .map_err(ApiError::bad_request)?
        .is_some()
    {
        return Err(ApiError::invalid_options(
            "ListOptions",
            "sendInitialEvents",
            "Forbidden: sendInitialEvents is forbidden for list",
        ));
    }
    if let Some(m) = q.get("resourceVersionMatch").filter(|m| !m.is_empty()) {
        if q.get("resourceVersion").is_none_or(str::is_empty) {
            return Err(ApiError::invalid_options(
                "ListOptions",
                "resourceVersionMatch",
                "Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided",
            ));
        }
        if q.get("continue").is_some_and(|c| !c.is_empty()) {
            return Err(ApiError::invalid_options(
                "ListOptions",
                "resourceVersionMatch",
                "Forbidden: resourceVersionMatch is forbidden when continue is provided",
            ));
        }
        if m != "Exact" && m != "NotOlderThan" {
            return Err(ApiError::invalid_options(
                "ListOptions",
                "resourceVersionMatch",
                &format!(
                    "Unsupported value: \"{m}\": supported values: \"Exact\", \"NotOlderThan\""
                ),
            ));
        }
        if m == "Exact" && q.get("resourceVersion") == Some("0") {
            return Err(ApiError::invalid_options(
                "ListOptions",
                "resourceVersionMatch",
                "Forbidden: resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"",
            ));
        }
    }
    Ok(())
}

fn too_old_continue() -> ApiError {
    ApiError::expired(
        "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.",
    )
}

/// LIST of a collection.
pub(crate) async fn list(ctx: &Ctx, info: &ResourceInfo, req: &Req) -> ApiResult<Response> {
    let out = output(req)?;
    validate_list_options(req)?;
    let filter = Filter::parse(info, req)?;
    let q = &req.query;
    let limit = match q.get("limit").filter(|l| !l.is_empty()) {
        None => 0,
        Some(l) => l
            .parse::<i64>()
            .map_err(|_| ApiError::bad_request(format!("invalid limit: {l:?}")))?
            .max(0) as usize,
    };
    let rv = parse_rv(q.get("resourceVersion"))?;
    let rv_match = q.get("resourceVersionMatch").filter(|m| !m.is_empty());
    let cont = q
        .get("continue")
        .filter(|c| !c.is_empty())
        .map(decode_continue)
        .transpose()?;
    let key = info.key();
    let ns = filter.namespace().map(str::to_string);
    let (snap_rv, items, start) = if let Some(c) = cont {
        let items = ctx
            .registry
            .store
            .snapshot(&key, ns.as_deref(), c.rv)
            .await
            .map_err(|_| too_old_continue())?;
        (c.rv, items, Some((c.ns, c.name)))
    } else {
        let current = ctx.registry.store.current_rv();
        match rv {
            Some(n) if n > current => return Err(ApiError::too_large_rv(n, current)),
            Some(n)
                if n > 0 && (rv_match == Some("Exact") || (rv_match.is_none() && limit > 0)) =>
            {
                let items = ctx
                    .registry
                    .store
                    .snapshot(&key, ns.as_deref(), n)
                    .await
                    .map_err(|TooOld { oldest }| {
                        ApiError::expired(format!("too old resource version: {n} ({oldest})"))
                    })?;
                (n, items, None)
            }
            _ => {
                let (cur, items) = ctx.registry.store.list(&key, ns.as_deref());
                (cur, items, None)
            }
        }
    };
    let mut matching = items
        .into_iter()
        .filter(|o| filter.matches(o))
        .filter(|o| match &start {
            None => true,
            Some(s) => obj_key(o) > *s,
        });
    let mut page: Vec<Arc<Value>> = Vec::new();
    let mut more = 0usize;
    for o in matching.by_ref() {
        if limit > 0 && page.len() >= limit {
            more = 1 + matching.count();
            break;
        }
        page.push(o);
    }
    let mut meta = json!({"resourceVersion": snap_rv.to_string()});
    if more > 0
        && let Some(last) = page.last()
    {
        let (ns, name) = obj_key(last);
        meta["continue"] = json!(encode_continue(&Continue {
            rv: snap_rv,
            ns,
            name
        }));
        if !filter.has_selector() {
            meta["remainingItemCount"] = json!(more);
        }
    }
    if let Output::Table(v) = &out {
        let table = TableRender::new(req, v)?.render(info, &page, meta, true);
        return Ok(json_response(StatusCode::OK, &table));
    }
    let (kind, api_version) = match &out {
        Output::Metadata(v) => (
            "PartialObjectMetadataList".to_string(),
            format!("meta.k8s.io/{v}"),
        ),
        _ => (info.list_kind.clone(), info.api_version()),
    };
    Ok(list_response(
        &kind,
        &api_version,
        &meta,
        page.iter().map(|o| render(info, o, &out)),
    ))
}

/// Serialises a list without building one large tree.
pub(crate) fn list_response(
    kind: &str,
    api_version: &str,
    meta: &Value,
    items: impl Iterator<Item = Arc<Value>>,
) -> Response {
    let mut buf = Vec::with_capacity(4096);
    buf.extend_from_slice(b"{\"kind\":");
    buf.extend_from_slice(json!(kind).to_string().as_bytes());
    buf.extend_from_slice(b",\"apiVersion\":");
    buf.extend_from_slice(json!(api_version).to_string().as_bytes());
    buf.extend_from_slice(b",\"metadata\":");
    buf.extend_from_slice(meta.to_string().as_bytes());
    buf.extend_from_slice(b",\"items\":[");
    for (i, item) in items.enumerate() {
        if i > 0 {
            buf.push(b',');
        }
        if flotilla_store::compact::write_to(&mut buf, &item).is_err() {
            return crate::wire::error_response(&ApiError::internal(
                "failed to encode a list item",
            ));
        }
    }
    buf.extend_from_slice(b"]}");
    let mut r = (StatusCode::OK, buf).into_response();
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    r
}
