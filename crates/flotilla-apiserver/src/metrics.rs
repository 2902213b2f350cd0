//! `/metrics`: the request counter kube-apiserver serves, `apiserver_request_total`, with its label names and
//! values, so one scrape counts a run's requests by resource and verb on either kind of API server.
//!
//! Label values as kube-apiserver v1.37 reports them (checked by scraping a real one): `verb` is the HTTP
//! method, except that a GET without an object name is `LIST`, a GET with `watch=true` is `WATCH`, and a PATCH
//! with the `application/apply-patch+yaml` content type is `APPLY`; a DELETE of a collection stays `DELETE`.
//! `scope` is `resource` when the path names an object, `namespace` for a namespaced collection and
//! `cluster` for a collection across namespaces; `dry_run` is the request's `dryRun` values, sorted and
//! joined with `,`; `component` is `apiserver`; `code` is the response's status code. Only resource requests
//! are counted (kube-apiserver also counts paths such as `/healthz`, which no write passes through).

use prometheus::{Encoder, IntCounterVec, Opts, Registry, TextEncoder};

use crate::route::{Query, ResourcePath};

/// The label names of `apiserver_request_total`, in kube-apiserver's order.
const LABELS: [&str; 9] = [
    "code",
    "component",
    "dry_run",
    "group",
    "resource",
    "scope",
    "subresource",
    "verb",
    "version",
];

/// The registry `/metrics` serves and the request counter in it.
pub struct RequestMetrics {
    registry: Registry,
    requests: IntCounterVec,
}

/// What one request was, for its labels.
pub struct RequestLabels<'a> {
    /// HTTP method.
    pub method: &'a http::Method,
    /// Parsed path.
    pub rp: &'a ResourcePath,
    /// Query parameters.
    pub query: &'a Query,
    /// `Content-Type` header.
    pub content_type: Option<&'a str>,
}

impl RequestMetrics {
    /// A registry holding `apiserver_request_total`.
    ///
    /// # Errors
    /// Only if the metric definition is invalid (a bug, ruled out by the unit test).
    pub fn new() -> Result<Self, prometheus::Error> {
        let registry = Registry::new();
        let requests = IntCounterVec::new(
            Opts::new(
                "apiserver_request_total",
                "Counter of apiserver requests broken out for each verb, dry run value, group, version, \
                 resource, scope, component, and HTTP response code.",
            ),
            &LABELS,
        )?;
        registry.register(Box::new(requests.clone()))?;
        Ok(Self { registry, requests })
    }

    /// Counts one answered resource request.
    pub fn observe(&self, request: &RequestLabels<'_>, code: u16) {
        let rp = request.rp;
        let scope = match (&rp.name, &rp.namespace) {
            (Some(_), _) => "resource",
            (None, Some(_)) => "namespace",
            (None, None) => "cluster",
        };
        let verb = verb(request, scope);
        let mut dry_run: Vec<&str> = request.query.all("dryRun");
        dry_run.sort_unstable();
        dry_run.dedup();
        let code = code.to_string();
        let dry_run = dry_run.join(",");
        let values = [
            code.as_str(),
            "apiserver",
            dry_run.as_str(),
            rp.group.as_str(),
            rp.plural.as_str(),
            scope,
            rp.sub.as_deref().unwrap_or(""),
            verb,
            rp.version.as_str(),
        ];
        self.requests.with_label_values(&values).inc();
    }

    /// The Prometheus text of every metric.
    pub fn render(&self) -> String {
        let mut out = Vec::new();
        // Encoding into a Vec fails only on a metric the registry refuses at registration.
        let _ = TextEncoder::new().encode(&self.registry.gather(), &mut out);
        String::from_utf8_lossy(&out).into_owned()
    }
}

/// One series of `apiserver_request_total` in a scrape of any API server's `/metrics`.
#[derive(Debug, Clone, PartialEq)]
pub struct RequestSeries {
    /// Its labels, by name.
    pub labels: std::collections::BTreeMap<String, String>,
    /// Its count.
    pub value: f64,
}

impl RequestSeries {
    /// The value of label `name` (`""` when absent).
    pub fn label(&self, name: &str) -> &str {
        self.labels.get(name).map_or("", String::as_str)
    }
}

/// The `apiserver_request_total` series of a Prometheus text scrape; other lines are skipped.
pub fn parse_requests(text: &str) -> Vec<RequestSeries> {
    parse_series(text, "apiserver_request_total")
}

/// The labelled series of metric `name` in a Prometheus text scrape; other lines are skipped.
pub fn parse_series(text: &str, name: &str) -> Vec<RequestSeries> {
    let prefix = format!("{name}{{");
    text.lines()
        .filter_map(|line| {
            let rest = line.strip_prefix(prefix.as_str())?;
            let (labels, value) = rest.rsplit_once("} ")?;
            Some(RequestSeries {
                labels: parse_labels(labels)?,
                value: value.trim().parse().ok()?,
            })
        })
        .collect()
}

/// `name="value",...` with the text format's escapes (`\\`, `\"`, `\n`).
fn parse_labels(text: &str) -> Option<std::collections::BTreeMap<String, String>> {
    let mut labels = std::collections::BTreeMap::new();
    let mut rest = text;
    while !rest.is_empty() {
        let (name, after) = rest.split_once("=\"")?;
        let mut value = String::new();
        let mut chars = after.char_indices();
        let end = loop {
            match chars.next()? {
                (i, '"') => break i,
                (_, '\\') => match chars.next()?.1 {
                    'n' => value.push('\n'),
                    c => value.push(c),
                },
                (_, c) => value.push(c),
            }
        };
        labels.insert(name.trim_start_matches(',').to_string(), value);
        rest = after[end + 1..].trim_start_matches(',');
    }
    Some(labels)
}

fn verb(request: &RequestLabels<'_>, scope: &str) -> &'static str {
    let watch = request.query.flag("watch").ok().flatten().unwrap_or(false);
    // Connect subresources count as CONNECT whatever their method (kube overrides `pods/log`'s GET so too).
    if request.rp.is_connect() {
        return "CONNECT";
    }
    match *request.method {
        http::Method::GET | http::Method::HEAD if watch => "WATCH",
        http::Method::GET | http::Method::HEAD if scope == "resource" => "GET",
        http::Method::GET | http::Method::HEAD => "LIST",
        http::Method::POST => "POST",
        http::Method::PUT => "PUT",
        http::Method::PATCH
            if request
                .content_type
                .is_some_and(|t| t.starts_with("application/apply-patch")) =>
        {
            "APPLY"
        }
        http::Method::PATCH => "PATCH",
        http::Method::DELETE => "DELETE",
        _ => "CONNECT",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::route::{Route, parse};

    fn count(
        metrics: &RequestMetrics,
        method: http::Method,
        uri: &str,
        content_type: Option<&str>,
    ) {
        let (path, query) = uri.split_once('?').unwrap_or((uri, ""));
        let Route::Resource(rp) = parse(path) else {
            panic!("{path} is not a resource path");
        };
        let query = Query::parse(Some(query));
        let request = RequestLabels {
            method: &method,
            rp: &rp,
            query: &query,
            content_type,
        };
        metrics.observe(&request, 200);
    }

    #[test]
    fn labels_are_kube_apiservers() {
        let metrics = RequestMetrics::new().unwrap();
        count(
            &metrics,
            http::Method::GET,
            "/api/v1/namespaces/a/configmaps",
            None,
        );
        count(
            &metrics,
            http::Method::GET,
            "/api/v1/configmaps?watch=true",
            None,
        );
        count(
            &metrics,
            http::Method::PATCH,
            "/apis/apps/v1/namespaces/a/deployments/d/status?dryRun=All",
            Some("application/apply-patch+yaml"),
        );
        count(
            &metrics,
            http::Method::DELETE,
            "/api/v1/namespaces/a/configmaps",
            None,
        );
        count(&metrics, http::Method::GET, "/api/v1/namespaces/a", None);
        let text = metrics.render();
        for line in [
            r#"apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="configmaps",scope="namespace",subresource="",verb="LIST",version="v1"} 1"#,
            r#"apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="configmaps",scope="cluster",subresource="",verb="WATCH",version="v1"} 1"#,
            r#"apiserver_request_total{code="200",component="apiserver",dry_run="All",group="apps",resource="deployments",scope="resource",subresource="status",verb="APPLY",version="v1"} 1"#,
            r#"apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="configmaps",scope="namespace",subresource="",verb="DELETE",version="v1"} 1"#,
            r#"apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="namespaces",scope="resource",subresource="",verb="GET",version="v1"} 1"#,
        ] {
            assert!(text.contains(line), "missing {line} in\n{text}");
        }
        let series = parse_requests(&text);
        assert_eq!(series.len(), 5);
        let apply = series.iter().find(|s| s.label("verb") == "APPLY").unwrap();
        assert_eq!(
            (
                apply.label("resource"),
                apply.label("subresource"),
                apply.label("dry_run"),
                apply.value
            ),
            ("deployments", "status", "All", 1.0)
        );
    }

    #[test]
    fn parsing_unescapes_label_values() {
        let text = "# HELP x\napiserver_request_total{code=\"200\",resource=\"a\\\"b\\\\c\"} 7\nother_total 1\n";
        let series = parse_requests(text);
        assert_eq!(series.len(), 1);
        assert_eq!(series[0].label("resource"), "a\"b\\c");
        assert_eq!(series[0].label("code"), "200");
        assert_eq!(series[0].value, 7.0);
    }
}
