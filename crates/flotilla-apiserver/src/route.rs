//! Path parsing for every URL shape kube-apiserver serves (`/api/v1/...`, `/apis/<group>/<version>/...`, namespaced
//! and cluster-scoped resources, subresources, discovery, OpenAPI, health and version), before the catalogue is
//! consulted.

use percent_encoding::percent_decode_str;

/// A parsed resource path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourcePath {
    /// API group (`""` for core).
    pub group: String,
    /// Version.
    pub version: String,
    /// Namespace from the path, if the namespaced form was used.
    pub namespace: Option<String>,
    /// Plural resource name.
    pub plural: String,
    /// Object name.
    pub name: Option<String>,
    /// Subresource (`status`, `scale`, `finalize`, `binding`, `log`, `exec`, ...).
    pub sub: Option<String>,
}

impl ResourcePath {
    /// Whether the path is a connect subresource the server serves: a core `v1` pod's `log` or `exec`, which
    /// lead to the pod's kubelet.
    pub fn is_connect(&self) -> bool {
        self.group.is_empty()
            && self.version == "v1"
            && self.plural == "pods"
            && self.namespace.is_some()
            && self.name.is_some()
            && matches!(self.sub.as_deref(), Some("log" | "exec"))
    }
}

/// What a request path addresses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    /// `/healthz`, `/livez`, `/readyz`.
    Health,
    /// `/readyz`.
    Ready,
    /// `/version`.
    Version,
    /// `/metrics`.
    Metrics,
    /// `/api`.
    Api,
    /// `/apis`.
    Apis,
    /// `/apis/{group}`.
    Group(String),
    /// `/api/v1` or `/apis/{group}/{version}`.
    GroupVersion(String, String),
    /// `/openapi/...` (the path after `/openapi`).
    OpenApi(String),
    /// A resource path.
    Resource(ResourcePath),
    /// Anything else.
    Unknown,
}

fn decode(seg: &str) -> String {
    percent_decode_str(seg).decode_utf8_lossy().into_owned()
}

/// Parses a request path.
pub fn parse(path: &str) -> Route {
    match path {
        "/healthz" | "/livez" => return Route::Health,
        "/readyz" => return Route::Ready,
        "/version" | "/version/" => return Route::Version,
        "/metrics" => return Route::Metrics,
        _ => {}
    }
    if path.starts_with("/healthz/") || path.starts_with("/livez/") {
        return Route::Health;
    }
    if path.starts_with("/readyz/") {
        return Route::Ready;
    }
    if let Some(rest) = path.strip_prefix("/openapi") {
        return Route::OpenApi(rest.to_string());
    }
    let segs: Vec<String> = path
        .trim_end_matches('/')
        .split('/')
        .skip(1)
        .map(decode)
        .collect();
    let segs: Vec<&str> = segs.iter().map(String::as_str).collect();
    match segs.as_slice() {
        ["api"] => Route::Api,
        ["apis"] => Route::Apis,
        ["api", v] => Route::GroupVersion(String::new(), v.to_string()),
        ["apis", g] => Route::Group(g.to_string()),
        ["apis", g, v] => Route::GroupVersion(g.to_string(), v.to_string()),
        ["api", v, rest @ ..] => resource("", v, rest),
        ["apis", g, v, rest @ ..] => resource(g, v, rest),
        _ => Route::Unknown,
    }
}

fn resource(group: &str, version: &str, rest: &[&str]) -> Route {
    let mk = |namespace: Option<&str>, plural: &str, name: Option<&str>, sub: Option<&str>| {
        if plural.is_empty() || name.is_some_and(str::is_empty) {
            return Route::Unknown;
        }
        Route::Resource(ResourcePath {
            group: group.to_string(),
            version: version.to_string(),
            namespace: namespace.map(str::to_string),
            plural: plural.to_string(),
            name: name.map(str::to_string),
            sub: sub.map(str::to_string),
        })
    };
    match rest {
        [plural] => mk(None, plural, None, None),
        [plural, name] => mk(None, plural, Some(name), None),
        // `/api/v1/namespaces/{name}/status|finalize` is the Namespace's own subresource.
        ["namespaces", name, sub]
            if group.is_empty() && (*sub == "status" || *sub == "finalize") =>
        {
            mk(None, "namespaces", Some(name), Some(sub))
        }
        ["namespaces", ns, plural] => mk(Some(ns), plural, None, None),
        [plural, name, sub] => mk(None, plural, Some(name), Some(sub)),
        ["namespaces", ns, plural, name] => mk(Some(ns), plural, Some(name), None),
        ["namespaces", ns, plural, name, sub] => mk(Some(ns), plural, Some(name), Some(sub)),
        _ => Route::Unknown,
    }
}

/// Query parameters, decoded as `application/x-www-form-urlencoded` (`+` is a space).
#[derive(Debug, Default, Clone)]
pub struct Query(Vec<(String, String)>);

impl Query {
    /// Parses a raw query string.
    pub fn parse(raw: Option<&str>) -> Self {
        Self(
            form_urlencoded::parse(raw.unwrap_or("").as_bytes())
                .map(|(k, v)| (k.into_owned(), v.into_owned()))
                .collect(),
        )
    }

    /// Every pair, in the order sent.
    pub fn pairs(&self) -> &[(String, String)] {
        &self.0
    }

    /// The first value of `key`.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// Every value of `key`.
    pub fn all(&self, key: &str) -> Vec<&str> {
        self.0
            .iter()
            .filter(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
            .collect()
    }

    /// A boolean parameter (`true/1/t/True/TRUE`); `None` when absent or empty.
    pub fn flag(&self, key: &str) -> Result<Option<bool>, String> {
        match self.get(key) {
            None | Some("") => Ok(None),
            Some("1" | "t" | "T" | "true" | "True" | "TRUE") => Ok(Some(true)),
            Some("0" | "f" | "F" | "false" | "False" | "FALSE") => Ok(Some(false)),
            Some(other) => Err(format!("invalid boolean value for {key}: {other:?}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rp(g: &str, ns: Option<&str>, plural: &str, name: Option<&str>, sub: Option<&str>) -> Route {
        Route::Resource(ResourcePath {
            group: g.into(),
            version: "v1".into(),
            namespace: ns.map(Into::into),
            plural: plural.into(),
            name: name.map(Into::into),
            sub: sub.map(Into::into),
        })
    }

    #[test]
    fn every_path_shape_parses() {
        assert_eq!(parse("/api"), Route::Api);
        assert_eq!(
            parse("/api/v1"),
            Route::GroupVersion("".into(), "v1".into())
        );
        assert_eq!(parse("/apis/apps"), Route::Group("apps".into()));
        assert_eq!(
            parse("/api/v1/namespaces"),
            rp("", None, "namespaces", None, None)
        );
        assert_eq!(
            parse("/api/v1/namespaces/x"),
            rp("", None, "namespaces", Some("x"), None)
        );
        assert_eq!(
            parse("/api/v1/namespaces/x/status"),
            rp("", None, "namespaces", Some("x"), Some("status"))
        );
        assert_eq!(
            parse("/api/v1/namespaces/x/finalize"),
            rp("", None, "namespaces", Some("x"), Some("finalize"))
        );
        assert_eq!(
            parse("/api/v1/namespaces/ns/configmaps"),
            rp("", Some("ns"), "configmaps", None, None)
        );
        assert_eq!(
            parse("/api/v1/namespaces/ns/pods/p/status"),
            rp("", Some("ns"), "pods", Some("p"), Some("status"))
        );
        assert_eq!(
            parse("/apis/apps/v1/deployments"),
            rp("apps", None, "deployments", None, None)
        );
        assert_eq!(
            parse("/apis/rbac.authorization.k8s.io/v1/clusterroles/system%3Aadmin"),
            Route::Resource(ResourcePath {
                group: "rbac.authorization.k8s.io".into(),
                version: "v1".into(),
                namespace: None,
                plural: "clusterroles".into(),
                name: Some("system:admin".into()),
                sub: None,
            })
        );
        assert_eq!(parse("/version"), Route::Version);
        assert_eq!(parse("/openapi/v2"), Route::OpenApi("/v2".into()));
        assert_eq!(parse("/nope"), Route::Unknown);
    }

    #[test]
    fn query_plus_is_space_and_bools_parse() {
        let q = Query::parse(Some("labelSelector=env+in+%28a%2Cb%29&watch=1&x=maybe"));
        assert_eq!(q.get("labelSelector"), Some("env in (a,b)"));
        assert_eq!(q.flag("watch"), Ok(Some(true)));
        assert!(q.flag("x").is_err());
        assert_eq!(Query::parse(None).get("a"), None);
    }
}
