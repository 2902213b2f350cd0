//! What a Kubernetes API path asks for, as k8s.io/apiserver's `RequestInfoFactory` reads it (prefixes `api`
//! and `apis`, `api` without a group): whether it names a resource, which, and the verb. The embedded API
//! server authorizes every request by it; the aggregated API server routes `clusters/*/proxy/...` and asks its
//! SubjectAccessReviews by it.

/// A parsed request.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RequestInfo {
    /// Whether the path names a resource (`/api/v1/pods`) rather than something else (`/api`, `/healthz`).
    pub is_resource_request: bool,
    /// `api` or `apis`.
    pub api_prefix: String,
    /// The group, empty for the core group.
    pub api_group: String,
    /// The version.
    pub api_version: String,
    /// The namespace, empty when cluster-scoped.
    pub namespace: String,
    /// The resource (plural).
    pub resource: String,
    /// The object's name, empty for collections.
    pub name: String,
    /// The subresource, if any.
    pub subresource: String,
    /// kube's verb: `get`, `list`, `watch`, `create`, `update`, `patch`, `delete`, `deletecollection`,
    /// `proxy`, or the lower-case method of a non-resource request; empty for methods kube does not map.
    pub verb: String,
}

/// Verbs that prefix a resource path (`/api/v1/watch/pods`).
const SPECIAL_VERBS: [&str; 2] = ["proxy", "watch"];
/// Subresources of a namespace (so `/namespaces/x/status` is not a resource named `status`).
const NAMESPACE_SUBRESOURCES: [&str; 2] = ["status", "finalize"];

/// The verb kube maps an HTTP method to on a resource path.
pub fn verb_for(method: &str) -> &'static str {
    match method {
        "POST" => "create",
        "GET" | "HEAD" => "get",
        "PUT" => "update",
        "PATCH" => "patch",
        "DELETE" => "delete",
        _ => "",
    }
}

/// Parses `path` (no query, as sent: percent-encoded) with `query` (raw, may be empty) and `method`.
pub fn parse(method: &str, path: &str, query: &str) -> RequestInfo {
    let mut info = RequestInfo {
        verb: method.to_ascii_lowercase(),
        ..RequestInfo::default()
    };
    // Go's server hands the factory the decoded path (`%3A` is `:`), which it then splits.
    let decoded = percent_encoding::percent_decode_str(path).decode_utf8_lossy();
    let mut parts: Vec<&str> = split_path(&decoded);
    if parts.len() < 3 || !matches!(parts[0], "api" | "apis") {
        return info;
    }
    info.api_prefix = parts[0].to_owned();
    parts.remove(0);
    if info.api_prefix != "api" {
        // One part (the prefix) is consumed: a group path needs three more (group, version, resource).
        if parts.len() < 3 {
            return info;
        }
        info.api_group = parts.remove(0).to_owned();
    }
    info.is_resource_request = true;
    info.api_version = parts.remove(0).to_owned();
    if let Some(first) = parts.first().copied()
        && SPECIAL_VERBS.contains(&first)
    {
        if parts.len() < 2 {
            // kube answers this as an error; as a resource request without a resource it matches nothing.
            info.verb = first.to_owned();
            return info;
        }
        info.verb = first.to_owned();
        parts.remove(0);
    } else {
        info.verb = verb_for(method).to_owned();
    }
    if parts.first() == Some(&"namespaces")
        && let Some(namespace) = parts.get(1)
    {
        info.namespace = (*namespace).to_owned();
        if parts.len() > 2 && !NAMESPACE_SUBRESOURCES.contains(&parts[2]) {
            parts.drain(..2);
        }
    }
    if parts.len() >= 3 && info.verb != "proxy" {
        info.subresource = parts[2].to_owned();
    }
    if parts.len() >= 2 {
        info.name = parts[1].to_owned();
    }
    if let Some(resource) = parts.first() {
        info.resource = (*resource).to_owned();
    }
    if info.name.is_empty() && info.verb == "get" {
        let query = Query(query);
        info.verb = if query.watch() { "watch" } else { "list" }.to_owned();
        if let Some(name) = query.field_selector_name() {
            info.name = name;
        }
    }
    if info.name.is_empty() && info.verb == "delete" {
        info.verb = "deletecollection".to_owned();
    }
    info
}

/// `strings.Split(strings.Trim(path, "/"), "/")`, empty for the root.
fn split_path(path: &str) -> Vec<&str> {
    let trimmed = path.trim_matches('/');
    if trimmed.is_empty() {
        Vec::new()
    } else {
        trimmed.split('/').collect()
    }
}

/// The list options of a query that change what a request is.
struct Query<'a>(&'a str);

impl Query<'_> {
    fn values(&self, key: &str) -> impl Iterator<Item = String> + '_ {
        let key = key.to_owned();
        form_pairs(self.0)
            .filter(move |(k, _)| *k == key)
            .map(|(_, v)| v)
    }

    /// `watch`, as kube converts a query value to a bool: anything but `0`, `f`, `false`, `n`, `no`.
    fn watch(&self) -> bool {
        self.values("watch").next().is_some_and(|value| {
            !["0", "f", "false", "n", "no"]
                .iter()
                .any(|no| value.eq_ignore_ascii_case(no))
        })
    }

    /// The name a field selector requires exactly (`metadata.name=x` or `metadata.name==x`), if it is a
    /// valid path segment.
    fn field_selector_name(&self) -> Option<String> {
        let selector = self.values("fieldSelector").next()?;
        let mut found = None;
        for term in selector.split(',') {
            let equality = term
                .split_once("==")
                .or_else(|| term.split_once('='))
                .filter(|(key, _)| !key.ends_with('!'));
            if let Some((key, value)) = equality
                && key.trim() == "metadata.name"
            {
                found = Some(value.trim().to_owned());
            }
        }
        found.filter(|name| {
            !name.is_empty() && name != "." && name != ".." && !name.contains(['/', '%'])
        })
    }
}

/// `key=value` pairs of a query, percent- and plus-decoded.
pub fn form_pairs(query: &str) -> impl Iterator<Item = (String, String)> + '_ {
    query
        .split('&')
        .filter(|pair| !pair.is_empty())
        .map(|pair| {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            (decode(key), decode(value))
        })
}

fn decode(text: &str) -> String {
    let spaced = text.replace('+', " ");
    percent_encoding::percent_decode_str(&spaced)
        .decode_utf8_lossy()
        .into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The methods the tests send.
    struct Method;

    impl Method {
        const GET: &'static str = "GET";
        const HEAD: &'static str = "HEAD";
        const POST: &'static str = "POST";
        const PUT: &'static str = "PUT";
        const PATCH: &'static str = "PATCH";
        const DELETE: &'static str = "DELETE";
        const OPTIONS: &'static str = "OPTIONS";
    }

    fn info(method: &str, path: &str, query: &str) -> RequestInfo {
        parse(method, path, query)
    }

    #[test]
    fn the_path_is_read_decoded() {
        let role = info(
            Method::GET,
            "/apis/rbac.authorization.k8s.io/v1/clusterroles/system%3Aadmin",
            "",
        );
        assert_eq!(role.name, "system:admin");
    }

    #[test]
    fn non_resource_paths() {
        for path in [
            "/",
            "/api",
            "/apis",
            "/apis/apps",
            "/healthz",
            "/api/v1",
            "/apis/apps/v1",
            "/metrics/x/y",
        ] {
            let parsed = info(Method::GET, path, "");
            assert!(!parsed.is_resource_request, "{path}");
            assert_eq!(parsed.verb, "get", "{path}");
        }
        assert_eq!(info(Method::POST, "/api", "").verb, "post");
    }

    #[test]
    fn methods_map_to_kubes_verbs() {
        let named = "/api/v1/namespaces/default/pods/web";
        for (method, verb) in [
            (Method::GET, "get"),
            (Method::HEAD, "get"),
            (Method::POST, "create"),
            (Method::PUT, "update"),
            (Method::PATCH, "patch"),
            (Method::DELETE, "delete"),
            (Method::OPTIONS, ""),
        ] {
            assert_eq!(info(method, named, "").verb, verb, "{method}");
        }
        let collection = "/api/v1/namespaces/default/pods";
        assert_eq!(info(Method::GET, collection, "").verb, "list");
        assert_eq!(info(Method::GET, collection, "watch=true").verb, "watch");
        assert_eq!(info(Method::GET, collection, "watch=1").verb, "watch");
        assert_eq!(info(Method::GET, collection, "watch=false").verb, "list");
        assert_eq!(info(Method::GET, collection, "watch=0").verb, "list");
        assert_eq!(
            info(Method::DELETE, collection, "").verb,
            "deletecollection"
        );
        assert_eq!(info(Method::GET, "/api/v1/watch/pods", "").verb, "watch");
    }

    #[test]
    fn resources_names_and_subresources() {
        let parsed = info(
            Method::GET,
            "/apis/apps/v1/namespaces/ns1/deployments/web/scale",
            "",
        );
        assert_eq!(
            parsed,
            RequestInfo {
                is_resource_request: true,
                api_prefix: "apis".into(),
                api_group: "apps".into(),
                api_version: "v1".into(),
                namespace: "ns1".into(),
                resource: "deployments".into(),
                name: "web".into(),
                subresource: "scale".into(),
                verb: "get".into(),
            }
        );
        let node = info(Method::GET, "/api/v1/nodes/n1", "");
        assert_eq!(
            (
                node.resource.as_str(),
                node.name.as_str(),
                node.namespace.as_str()
            ),
            ("nodes", "n1", "")
        );
        let namespace = info(Method::PUT, "/api/v1/namespaces/ns1/finalize", "");
        assert_eq!(
            (
                namespace.resource.as_str(),
                namespace.name.as_str(),
                namespace.subresource.as_str()
            ),
            ("namespaces", "ns1", "finalize")
        );
        let proxy = info(Method::GET, "/api/v1/proxy/namespaces/ns1/pods/p/a/b", "");
        assert_eq!(
            (
                proxy.verb.as_str(),
                proxy.name.as_str(),
                proxy.subresource.as_str()
            ),
            ("proxy", "p", "")
        );
    }

    #[test]
    fn a_list_selecting_one_name_names_it() {
        let parsed = info(
            Method::GET,
            "/api/v1/namespaces/default/pods",
            "fieldSelector=metadata.name%3Dweb-1&limit=5",
        );
        assert_eq!(
            (parsed.verb.as_str(), parsed.name.as_str()),
            ("list", "web-1")
        );
        let other = info(
            Method::GET,
            "/api/v1/pods",
            "fieldSelector=metadata.name!=web",
        );
        assert_eq!(other.name, "");
        let after_inequality = info(
            Method::GET,
            "/api/v1/pods",
            "fieldSelector=spec.nodeName!=n1,metadata.name=b",
        );
        assert_eq!(after_inequality.name, "b");
        let both = info(
            Method::GET,
            "/api/v1/pods",
            "fieldSelector=spec.nodeName=n1,metadata.name==a",
        );
        assert_eq!(both.name, "a");
    }
}
