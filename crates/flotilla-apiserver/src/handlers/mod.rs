//! Resource handlers: one module per verb family, sharing request context and rendering.

pub(crate) mod body;
pub(crate) mod connect;
pub(crate) mod delete;
pub(crate) mod field_validation;
pub(crate) mod filter;
pub(crate) mod openapi;
pub(crate) mod read;
pub(crate) mod review;
pub(crate) mod scale;
pub(crate) mod token;
pub(crate) mod watch;
pub(crate) mod write;

use std::sync::Arc;

use axum::response::Response;
use bytes::Bytes;
use http::{Method, StatusCode};
use serde_json::{Value, json};

use crate::context::Ctx;
use crate::negotiate::{Allowed, Output, negotiate};
use crate::route::{Query, ResourcePath};
use crate::wire::json_response;
use flotilla_registry::resource::ResourceInfo;
use flotilla_registry::status::{ApiError, ApiResult};
use flotilla_registry::table::{self, IncludeObject, TableOptions};
use flotilla_registry::write::shape;

/// A resource request, parsed.
pub(crate) struct Req {
    /// HTTP method.
    pub method: Method,
    /// Parsed path.
    pub rp: ResourcePath,
    /// Query parameters.
    pub query: Query,
    /// `Accept` header.
    pub accept: Option<String>,
    /// `Content-Type` header.
    pub content_type: Option<String>,
    /// `User-Agent` header.
    pub user_agent: Option<String>,
    /// Request body.
    pub body: Bytes,
    /// The authenticated (possibly impersonated) user: `system:anonymous` for a request without credentials.
    pub user: flotilla_registry::auth::UserInfo,
}

impl Req {
    /// Who sends the request, as admission and the kinds that record their requester see them.
    pub(crate) fn user_info(&self) -> flotilla_registry::auth::UserInfo {
        self.user.clone()
    }

    /// The requester of a create, update or patch: the user, and the write options of the query
    /// (`dryRun`, `fieldManager`, `fieldValidation`) as admission webhooks are told them.
    pub(crate) fn requester(&self) -> flotilla_registry::write::Requester {
        let mut options = serde_json::Map::new();
        let dry_run = self.query.all("dryRun");
        if !dry_run.is_empty() {
            options.insert("dryRun".into(), serde_json::json!(dry_run));
        }
        for key in ["fieldManager", "fieldValidation"] {
            if let Some(v) = self.query.get(key).filter(|v| !v.is_empty()) {
                options.insert(key.into(), serde_json::json!(v));
            }
        }
        flotilla_registry::write::Requester {
            user: self.user_info(),
            options: serde_json::Value::Object(options),
        }
    }

    /// Namespace from the path, or `""`.
    pub(crate) fn ns(&self) -> &str {
        self.rp.namespace.as_deref().unwrap_or("")
    }

    /// Whether `dryRun=All` was requested (422 for other values).
    pub(crate) fn dry_run(&self, options_kind: &str) -> ApiResult<bool> {
        let values = self.query.all("dryRun");
        for v in &values {
            if *v != "All" {
                return Err(ApiError::invalid_options(
                    options_kind,
                    "dryRun",
                    &format!("Unsupported value: \"{v}\": supported values: \"All\""),
                ));
            }
        }
        Ok(!values.is_empty())
    }

    /// The field manager: `fieldManager` or the User-Agent up to the first `/`.
    pub(crate) fn field_manager(&self) -> String {
        if let Some(m) = self.query.get("fieldManager").filter(|m| !m.is_empty()) {
            return m.to_string();
        }
        self.user_agent
            .as_deref()
            .and_then(|ua| ua.split('/').next())
            .unwrap_or("unknown")
            .to_string()
    }
}

/// The catalogue entry and scope checks for a resource path.
fn resolve(ctx: &Ctx, rp: &ResourcePath) -> ApiResult<Arc<ResourceInfo>> {
    let info = ctx
        .registry
        .catalog
        .get(&rp.group, &rp.version, &rp.plural)
        .ok_or_else(ApiError::no_route)?;
    if rp.namespace.is_some() && !info.namespaced {
        return Err(ApiError::no_route());
    }
    if info.namespaced && rp.namespace.is_none() && rp.name.is_some() {
        return Err(ApiError::no_route());
    }
    match rp.sub.as_deref() {
        None => {}
        Some("status") if info.status => {}
        Some("scale") if info.scale.is_some() => {}
        Some("finalize") if info.group.is_empty() && info.plural == "namespaces" => {}
        Some("approval") if flotilla_registry::kinds::access::certificates::serves(&info) => {}
        Some("token")
            if !info.custom && info.group.is_empty() && info.plural == "serviceaccounts" => {}
        Some("binding") if !info.custom && info.group.is_empty() && info.plural == "pods" => {}
        Some(_) => return Err(ApiError::no_route()),
    }
    Ok(info)
}

/// The `Warning` kube-apiserver adds to every request for a deprecated built-in resource.
fn deprecation(info: &ResourceInfo) -> Option<&'static str> {
    (!info.custom && info.group.is_empty() && info.version == "v1" && info.plural == "endpoints")
        .then_some("v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice")
}

/// Routes a resource request to its handler.
pub(crate) async fn handle(ctx: &Arc<Ctx>, req: Req) -> ApiResult<Response> {
    let info = resolve(ctx, &req.rp)?;
    let mut response = dispatch(ctx, &info, req).await?;
    if let Some(text) = deprecation(&info)
        && let Ok(v) = http::HeaderValue::from_str(&format!("299 - \"{text}\""))
    {
        response.headers_mut().append(http::header::WARNING, v);
    }
    Ok(response)
}

async fn dispatch(ctx: &Arc<Ctx>, info: &Arc<ResourceInfo>, req: Req) -> ApiResult<Response> {
    let info = info.clone();
    if review::is_review(&info) {
        return review::create(ctx, &info, &req);
    }
    let m = &req.method;
    let collection = req.rp.name.is_none();
    match (m.as_str(), collection, req.rp.sub.as_deref()) {
        ("GET" | "HEAD", true, _) => {
            if req.query.flag("watch").map_err(ApiError::bad_request)? == Some(true) {
                crate::handlers::watch::watch(ctx, &info, &req).await
            } else {
                read::list(ctx, &info, &req).await
            }
        }
        ("POST", false, Some("binding")) => write::bind(ctx, &req).await,
        (_, false, Some("binding")) => Err(ApiError::method_not_allowed(
            verb_name(m, collection),
            "pods/binding",
            "",
        )),
        ("GET" | "HEAD", false, Some("scale")) => scale::get(ctx, &info, &req),
        ("GET" | "HEAD", false, _) => read::get(ctx, &info, &req),
        ("POST", false, Some("token")) => token::create(ctx, &info, &req),
        ("POST", true, _) => write::create(ctx, &info, &req).await,
        ("PUT", false, Some("scale")) => scale::update(ctx, &info, &req).await,
        ("PATCH", false, Some("scale")) => scale::patch(ctx, &info, &req).await,
        ("PUT", false, _) => write::update(ctx, &info, &req).await,
        ("PATCH", false, _) => write::patch(ctx, &info, &req).await,
        ("DELETE", false, None) => delete::delete(ctx, &info, &req).await,
        ("DELETE", true, None) if !(info.group.is_empty() && info.plural == "namespaces") => {
            delete::delete_collection(ctx, &info, &req).await
        }
        _ => Err(ApiError::method_not_allowed(
            verb_name(m, collection),
            &info.plural,
            &info.group,
        )),
    }
}

fn verb_name(m: &Method, collection: bool) -> &'static str {
    match (m.as_str(), collection) {
        ("POST", _) => "create",
        ("PUT", _) => "update",
        ("PATCH", _) => "patch",
        ("DELETE", true) => "deletecollection",
        ("DELETE", false) => "delete",
        _ => "get",
    }
}

/// Output allowed for object and list reads.
pub(crate) const READ_OUTPUTS: Allowed = Allowed {
    table: true,
    metadata: true,
    discovery: false,
};

/// Negotiates the output of a read.
pub(crate) fn output(req: &Req) -> ApiResult<Output> {
    negotiate(req.accept.as_deref(), READ_OUTPUTS)
}

/// The object as served at `info`'s version: read-time defaults of custom resources, then the version
/// conversion (`flotilla_registry::write::shape::converted`).
pub(crate) fn served(info: &ResourceInfo, obj: &Arc<Value>) -> Arc<Value> {
    shape::converted(info, &shape::on_read(info, obj.clone()))
}

/// PartialObjectMetadata of an object.
pub(crate) fn partial_metadata(obj: &Value, version: &str) -> Value {
    json!({
        "kind": "PartialObjectMetadata",
        "apiVersion": format!("meta.k8s.io/{version}"),
        "metadata": obj.get("metadata").cloned().unwrap_or_else(|| json!({})),
    })
}

/// Renders one object for a response.
pub(crate) fn render(info: &ResourceInfo, obj: &Arc<Value>, out: &Output) -> Arc<Value> {
    match out {
        Output::Metadata(v) => Arc::new(partial_metadata(obj, v)),
        _ => served(info, obj),
    }
}

/// How a request wants Table responses rendered (`as=Table;v=...` and `includeObject`).
pub(crate) struct TableRender {
    api_version: String,
    include: IncludeObject,
}

impl TableRender {
    /// The Table rendering of `req` at Table version `version` (`v1` or `v1beta1`).
    ///
    /// # Errors
    /// 400 for an unknown `includeObject`.
    pub(crate) fn new(req: &Req, version: &str) -> ApiResult<Self> {
        let include = IncludeObject::parse(req.query.get("includeObject").unwrap_or(""))
            .map_err(ApiError::bad_request)?;
        Ok(Self {
            api_version: format!("meta.k8s.io/{version}"),
            include,
        })
    }

    /// A Table of `objects` (stored form) with `metadata` as the table's list metadata.
    pub(crate) fn render(
        &self,
        info: &ResourceInfo,
        objects: &[Arc<Value>],
        metadata: Value,
        with_columns: bool,
    ) -> Value {
        let rows: Vec<Value> = objects
            .iter()
            .map(|o| served(info, o).as_ref().clone())
            .collect();
        let opts = TableOptions {
            api_version: &self.api_version,
            include_object: self.include,
            with_columns,
            now: jiff::Timestamp::now().as_second(),
        };
        table::table(&info.kind_info(), &rows, metadata, &opts)
    }
}

/// A JSON response for one object.
pub(crate) fn object_response(code: StatusCode, info: &ResourceInfo, obj: &Arc<Value>) -> Response {
    json_response(code, &served(info, obj))
}
