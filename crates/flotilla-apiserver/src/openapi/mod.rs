//! `/openapi/v2` and `/openapi/v3` documents.
//!
//! The documents carry no schema definitions, so kubectl finds no schema for any kind and skips client-side
//! validation (apply then uses its compiled-in strategic-merge metadata for built-ins and merge patch for
//! custom resources). They do carry one PATCH operation per served resource, tagged with
//! `x-kubernetes-group-version-kind` and listing the `dryRun`, `fieldManager`, `fieldValidation` and `force`
//! query parameters: that is what kubectl's query-parameter verifier looks for before it allows
//! `--dry-run=server` (kubectl 1.20 refuses it otherwise) and server-side field validation.
//!
//! Formats: v2 as JSON or as the gnostic `openapi.v2.Document` protobuf kubectl 1.20 insists on; v3 as the root
//! index (`{"paths": {"apis/apps/v1": {"serverRelativeURL": ...}}}`) plus one document per group version. The
//! v3 PATCH operations deliberately do not offer strategic merge patch, so kubectl 1.37 does not try to build a
//! patch from (absent) v3 schemas and falls back to its built-in metadata without warnings.

mod proto;

use serde_json::{Map, Value, json};

/// The media type client-go puts in `Accept` to ask for the protobuf v2 document. Its `@` is not valid in a
/// MIME subtype, so it must never be sent back as a `Content-Type`: see [`V2_PROTOBUF_RESPONSE_CONTENT_TYPE`].
pub(crate) const V2_PROTOBUF_CONTENT_TYPE: &str =
    "application/com.github.proto-openapi.spec.v2@v1.0+protobuf";

/// The `Content-Type` of a protobuf v2 response, as kube-openapi sends it: client-go parses response content
/// types with Go's `mime.ParseMediaType`, which rejects the `@` of the Accept form with "unexpected content
/// after media subtype".
pub(crate) const V2_PROTOBUF_RESPONSE_CONTENT_TYPE: &str =
    "application/com.github.proto-openapi.spec.v2.v1.0+protobuf";

/// Whether an `Accept` header asks for the protobuf v2 document (either spelling, parameters ignored).
pub(crate) fn accepts_v2_protobuf(accept: &str) -> bool {
    accept
        .split(',')
        .filter_map(|range| range.split(';').next())
        .any(|media| {
            let media = media.trim();
            media.eq_ignore_ascii_case(V2_PROTOBUF_CONTENT_TYPE)
                || media.eq_ignore_ascii_case(V2_PROTOBUF_RESPONSE_CONTENT_TYPE)
        })
}

/// Title of every document.
const TITLE: &str = "Flotilla";

/// A resource the server serves, as the documents need it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ServedResource<'a> {
    /// API group, empty for the core group.
    pub group: &'a str,
    /// Version.
    pub version: &'a str,
    /// Kind.
    pub kind: &'a str,
    /// Plural resource name.
    pub plural: &'a str,
    /// Whether the resource lives in namespaces.
    pub namespaced: bool,
    /// Whether it is a custom resource (no strategic merge patch).
    pub custom: bool,
}

impl ServedResource<'_> {
    /// `api/v1` or `apis/<group>/<version>`: the group-version key of the v3 index.
    pub(crate) fn group_version_path(&self) -> String {
        if self.group.is_empty() {
            format!("api/{}", self.version)
        } else {
            format!("apis/{}/{}", self.group, self.version)
        }
    }

    /// The object path the PATCH operation is documented on.
    fn object_path(&self) -> String {
        let ns = if self.namespaced {
            "namespaces/{namespace}/"
        } else {
            ""
        };
        format!(
            "/{}/{ns}{}/{{name}}",
            self.group_version_path(),
            self.plural
        )
    }

    fn operation_id(&self) -> String {
        let mut id = String::from("patch");
        for part in self.group.split('.').take(1).chain([self.version]) {
            id.push_str(&capitalize(part));
        }
        if self.namespaced {
            id.push_str("Namespaced");
        }
        id.push_str(self.kind);
        id
    }

    fn patch_types(&self, v3: bool) -> Vec<&'static str> {
        let mut types = vec![
            "application/json-patch+json",
            "application/merge-patch+json",
        ];
        if !self.custom && !v3 {
            types.push("application/strategic-merge-patch+json");
        }
        types.push("application/apply-patch+yaml");
        types
    }
}

fn capitalize(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map_or_else(String::new, |f| f.to_uppercase().chain(c).collect())
}

/// The query parameters every PATCH operation advertises.
const PATCH_QUERY_PARAMETERS: [(&str, &str); 4] = [
    ("dryRun", "string"),
    ("fieldManager", "string"),
    ("fieldValidation", "string"),
    ("force", "boolean"),
];

/// The `/openapi/v2` document as JSON.
pub(crate) fn v2_json(resources: &[ServedResource<'_>], server_version: &str) -> Value {
    let mut paths = Map::new();
    for r in resources {
        let params: Vec<Value> = PATCH_QUERY_PARAMETERS
            .iter()
            .map(|(name, ty)| json!({"name": name, "in": "query", "type": ty, "uniqueItems": true}))
            .collect();
        let op = json!({
            "operationId": r.operation_id(),
            "consumes": r.patch_types(false),
            "produces": ["application/json", "application/yaml"],
            "parameters": params,
            "responses": {"200": {"description": "OK"}},
            "x-kubernetes-action": "patch",
            "x-kubernetes-group-version-kind": {"group": r.group, "kind": r.kind, "version": r.version},
        });
        paths.insert(r.object_path(), json!({"patch": op}));
    }
    json!({
        "swagger": "2.0",
        "info": {"title": TITLE, "version": server_version},
        "paths": paths,
        "definitions": {},
    })
}

/// The `/openapi/v2` document as gnostic protobuf, for
/// `Accept: application/com.github.proto-openapi.spec.v2@v1.0+protobuf`.
pub(crate) fn v2_protobuf(resources: &[ServedResource<'_>], server_version: &str) -> Vec<u8> {
    proto::document(resources, server_version)
}

/// The `/openapi/v3` index: one entry per served group version, with a content hash in the URL.
pub(crate) fn v3_root(resources: &[ServedResource<'_>], server_version: &str) -> Value {
    let mut paths = Map::new();
    for gv in group_version_paths(resources) {
        if let Some(doc) = v3_group_version(resources, &gv, server_version) {
            let url = format!(
                "/openapi/v3/{gv}?hash={:016X}",
                fnv1a(doc.to_string().as_bytes())
            );
            paths.insert(gv, json!({"serverRelativeURL": url}));
        }
    }
    json!({"paths": paths})
}

/// The `/openapi/v3/<group_version_path>` document (`group_version_path` as in the index: `api/v1`,
/// `apis/apps/v1`), or `None` when nothing is served there.
pub(crate) fn v3_group_version(
    resources: &[ServedResource<'_>],
    group_version_path: &str,
    server_version: &str,
) -> Option<Value> {
    let wanted = group_version_path.trim_matches('/');
    let mut paths = Map::new();
    for r in resources
        .iter()
        .filter(|r| r.group_version_path() == wanted)
    {
        let params: Vec<Value> = PATCH_QUERY_PARAMETERS
            .iter()
            .map(|(name, ty)| json!({"name": name, "in": "query", "schema": {"type": ty, "uniqueItems": true}}))
            .collect();
        let content: Map<String, Value> = r
            .patch_types(true)
            .into_iter()
            .map(|t| (t.to_string(), json!({})))
            .collect();
        let op = json!({
            "operationId": r.operation_id(),
            "parameters": params,
            "requestBody": {"content": content, "required": true},
            "responses": {"200": {"description": "OK"}},
            "x-kubernetes-action": "patch",
            "x-kubernetes-group-version-kind": {"group": r.group, "kind": r.kind, "version": r.version},
        });
        paths.insert(r.object_path(), json!({"patch": op}));
    }
    if paths.is_empty() {
        return None;
    }
    Some(json!({
        "openapi": "3.0.0",
        "info": {"title": TITLE, "version": server_version},
        "paths": paths,
        "components": {"schemas": {}},
    }))
}

fn group_version_paths(resources: &[ServedResource<'_>]) -> Vec<String> {
    let mut gvs: Vec<String> = resources
        .iter()
        .map(ServedResource::group_version_path)
        .collect();
    gvs.sort();
    gvs.dedup();
    gvs
}

/// 64-bit FNV-1a: a stable content hash for the v3 index URLs (clients only compare them).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests;
