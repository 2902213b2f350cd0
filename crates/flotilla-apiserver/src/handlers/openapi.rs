//! `/openapi/v2` and `/openapi/v3[/<group-version>]`, built by `crate::openapi` from the
//! resources served right now (CRDs included). The `/openapi/v3` index lists an aggregated group-version with
//! the entry its backend gives (in place of a CRD version the APIService takes over); `crate::server` proxies
//! that group-version's document to the backend, as kube-aggregator does. `/openapi/v2` stays this server's own.

use axum::response::{IntoResponse, Response};
use http::{HeaderValue, StatusCode, header};

use crate::context::Ctx;
use crate::openapi::{self, ServedResource, V2_PROTOBUF_RESPONSE_CONTENT_TYPE};
use crate::wire::json_response;
use flotilla_registry::resource::ResourceInfo;
use flotilla_registry::status::{ApiError, ApiResult};

/// The version the documents report.
const SERVER_VERSION: &str = "v1.36.0";

fn served(infos: &[std::sync::Arc<ResourceInfo>]) -> Vec<ServedResource<'_>> {
    infos
        .iter()
        .map(|i| ServedResource {
            group: &i.group,
            version: &i.version,
            kind: &i.kind,
            plural: &i.plural,
            namespaced: i.namespaced,
            custom: i.custom,
        })
        .collect()
}

/// Whether the client asked for the gnostic protobuf v2 document (kubectl 1.20 does, and cannot read JSON).
fn wants_protobuf(accept: Option<&str>) -> bool {
    accept.is_some_and(openapi::accepts_v2_protobuf)
}

/// Serves `/openapi<rest>`.
///
/// # Errors
/// 404 for anything but `/v2`, `/v3` and a served `/v3/<group-version>`.
pub(crate) fn serve(ctx: &Ctx, rest: &str, accept: Option<&str>) -> ApiResult<Response> {
    let infos = ctx.registry.catalog.all();
    let resources = served(&infos);
    let rest = rest.trim_end_matches('/');
    match rest {
        "/v2" if wants_protobuf(accept) => {
            let body = openapi::v2_protobuf(&resources, SERVER_VERSION);
            let mut r = (StatusCode::OK, body).into_response();
            r.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static(V2_PROTOBUF_RESPONSE_CONTENT_TYPE),
            );
            Ok(r)
        }
        "/v2" => Ok(json_response(
            StatusCode::OK,
            &openapi::v2_json(&resources, SERVER_VERSION),
        )),
        "/v3" => {
            let local: Vec<ServedResource<'_>> = resources
                .into_iter()
                .filter(|r| ctx.aggregator.remote(r.group, r.version).is_none())
                .collect();
            let mut root = openapi::v3_root(&local, SERVER_VERSION);
            for (name, r) in ctx.aggregator.index().iter() {
                if r.spec.service.is_none() {
                    continue;
                }
                if let Some(entry) = ctx.aggregator.discovery.openapi_entry(name)
                    && let Some(paths) = root.get_mut("paths").and_then(|p| p.as_object_mut())
                {
                    let key = format!("apis/{}/{}", r.spec.group, r.spec.version);
                    paths.insert(key, entry);
                }
            }
            Ok(json_response(StatusCode::OK, &root))
        }
        _ => {
            let gv = rest.strip_prefix("/v3/").ok_or_else(ApiError::no_route)?;
            openapi::v3_group_version(&resources, gv, SERVER_VERSION)
                .map(|doc| json_response(StatusCode::OK, &doc))
                .ok_or_else(ApiError::no_route)
        }
    }
}
