//! Decode-time shaping of a written object, as the real server does before anything else looks at it: unknown
//! fields dropped and reported per `fieldValidation` (structural-schema pruning for custom resources, the typed
//! round trip of `crate::typed` for built-ins, which also refuses values of the wrong type), then defaulting
//! (`crate::schema` for custom resources, `crate::defaults` with Service address allocation for built-ins);
//! and, on the way out, read-time defaulting of stored custom resources and the conversion of a stored object to
//! the version an endpoint serves. Schema validation runs later, with the other validations
//! (`crate::write::validate`).

use std::sync::Arc;

use serde_json::{Value, json};
use tokio::sync::OwnedMutexGuard;

use super::field_validation::{Findings, Mode};
use crate::context::Ctx;
use crate::defaults::{self, Allocations};
use crate::resource::ResourceInfo;
use crate::status::{ApiError, ApiResult};
use flotilla_store::ResKey;

fn is_service(info: &ResourceInfo) -> bool {
    !info.custom && info.group.is_empty() && info.plural == "services"
}

/// Shapes the objects of one write: for Services it gathers the cluster IPs and node ports in use and holds
/// the allocation lock until the write is done, so two concurrent creates never get the same address.
pub(crate) struct Shaper {
    alloc: Allocations,
    findings: Findings,
    _allocating: Option<OwnedMutexGuard<()>>,
}

impl Shaper {
    /// A shaper for a write to `info` under `fieldValidation` `mode`.
    pub(crate) async fn new(ctx: &Ctx, info: &ResourceInfo, mode: Mode) -> Self {
        if !is_service(info) {
            return Self {
                alloc: Allocations::default(),
                findings: Findings::new(mode),
                _allocating: None,
            };
        }
        let guard = ctx.service_allocation.clone().lock_owned().await;
        let mut alloc = Allocations::default();
        for svc in ctx.store.list(&ResKey::new("", "services"), None).1 {
            let spec = svc.get("spec");
            let ips = spec
                .and_then(|s| s.get("clusterIPs"))
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .chain(spec.and_then(|s| s.get("clusterIP")));
            alloc
                .cluster_ips
                .extend(ips.filter_map(Value::as_str).map(str::to_string));
            let ports = spec
                .and_then(|s| s.get("ports"))
                .and_then(Value::as_array)
                .into_iter()
                .flatten();
            alloc.node_ports.extend(
                ports
                    .filter_map(|p| p.get("nodePort").and_then(Value::as_u64))
                    .filter_map(|p| u16::try_from(p).ok()),
            );
        }
        Self {
            alloc,
            findings: Findings::new(mode),
            _allocating: Some(guard),
        }
    }

    /// Drops the fields `obj`'s kind does not declare (reporting them per `fieldValidation`), then defaults it:
    /// custom resources per their schema, built-ins per `crate::defaults`. On an update (`old` set) a Service
    /// keeps the addresses it was given.
    ///
    /// # Errors
    /// 400 for a value of the wrong type in a built-in kind, or for unknown fields under `Strict`.
    pub(crate) fn decode(
        &mut self,
        info: &ResourceInfo,
        obj: &mut Value,
        old: Option<&Value>,
    ) -> ApiResult<()> {
        let kind = info.kind_info();
        if let Some(schema) = kind.crd_schema() {
            let sent = obj.clone();
            crate::schema::prune(obj, schema);
            self.findings
                .unknown(crate::typed::lost_paths(&sent, obj))?;
            crate::schema::apply_defaults(obj, schema);
            return Ok(());
        }
        let unknown =
            crate::typed::decode(crate::kinds::typed(&kind), &info.version, &info.kind, obj)
                .map_err(|e| ApiError::bad_request(e.to_string()))?;
        if info.group == "apps" && info.kind == "DaemonSet" {
            // Upstream's conversion reads this annotation into a field of the internal type, so a value that is
            // not a number fails decoding like a field of the wrong type.
            crate::kinds::workloads::strategy::template_generation(obj).map_err(|message| {
                let e = crate::typed::DecodeError {
                    kind: info.kind.clone(),
                    version: info.version.clone(),
                    message,
                };
                ApiError::bad_request(e.to_string())
            })?;
        }
        self.findings.unknown(unknown)?;
        if is_service(info)
            && let Some(old) = old
        {
            keep_allocated(old, obj);
        }
        defaults::apply(obj, crate::kinds::defaults(&kind), &mut self.alloc);
        Ok(())
    }

    /// Starts another attempt at the same write (after a conflicting commit): what the earlier attempt
    /// learned about unknown fields is found again.
    pub(crate) fn restart(&mut self) {
        self.findings.restart();
    }

    /// What the write learned about unknown fields (for the response's `Warning` headers).
    pub(crate) fn into_findings(self) -> Findings {
        self.findings
    }
}

/// An update that leaves out a Service's cluster IPs keeps the allocated ones (they are immutable upstream).
fn keep_allocated(old: &Value, new: &mut Value) {
    let Some(spec) = new.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    for field in ["clusterIP", "clusterIPs"] {
        let missing = spec
            .get(field)
            .is_none_or(|v| v.is_null() || v.as_str() == Some(""));
        if missing && let Some(v) = old.pointer(&format!("/spec/{field}")) {
            spec.insert(field.to_string(), v.clone());
        }
    }
}

/// A stored custom resource as read: its schema's defaults applied (a default added to the CRD later shows on
/// old objects). Built-ins and schemas without defaults come back as they are.
pub fn on_read(info: &ResourceInfo, obj: Arc<Value>) -> Arc<Value> {
    let kind = info.kind_info();
    let Some(schema) = kind.crd_schema() else {
        return crate::kinds::access::rbac_rules_on_read(info, obj);
    };
    let mut o = obj.as_ref().clone();
    crate::schema::apply_defaults(&mut o, schema);
    if o == *obj { obj } else { Arc::new(o) }
}

/// A stored object converted to `info`'s version, without read-time defaulting (the base a patch applies
/// to): `events.k8s.io` Events are renamed from the stored core shape (`crate::kinds::core::events`), `autoscaling/v1`
/// HPAs converted from `v2` (`crate::kinds::workloads::autoscaling`); custom resources stored in another version only change
/// `apiVersion` (conversion strategy `None`).
pub fn converted(info: &ResourceInfo, obj: &Arc<Value>) -> Arc<Value> {
    let want = info.api_version();
    if crate::kinds::core::events::serves_view(info)
        && crate::kinds::core::events::is_core_shape(obj)
    {
        return Arc::new(crate::kinds::core::events::to_view(obj, &want));
    }
    if crate::kinds::workloads::autoscaling::serves_v1(info) {
        return Arc::new(crate::kinds::workloads::autoscaling::to_v1(obj));
    }
    if obj.get("apiVersion").and_then(Value::as_str) == Some(want.as_str())
        && obj.get("kind").and_then(Value::as_str) == Some(info.kind.as_str())
    {
        return obj.clone();
    }
    let mut o = obj.as_ref().clone();
    if let Some(m) = o.as_object_mut() {
        m.insert("apiVersion".into(), json!(want));
        m.insert("kind".into(), json!(info.kind));
    }
    Arc::new(o)
}
