//! Writes per resource and verb, from the API servers' own `apiserver_request_total` (served by kube-apiserver
//! and by the embedded server alike): a scrape before and after a run, and the difference.

use std::collections::BTreeMap;

use anyhow::Context;
use flotilla_apiserver::metrics::parse_requests;

/// The verbs that write: kube-apiserver's `verb` label of creates, updates, patches, applies and deletes.
const WRITE_VERBS: [&str; 5] = ["POST", "PUT", "PATCH", "APPLY", "DELETE"];

/// Resources whose writes are background work of the control plane and its members (leader election,
/// cluster status, node heartbeats), not caused by templates.
const BACKGROUND: [&str; 3] = ["leases", "clusters", "nodes"];

/// Successful, persisted writes by `resource[.group][/subresource] VERB`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Writes(pub BTreeMap<String, u64>);

impl Writes {
    /// The writes a Prometheus text scrape counts so far (2xx answers, not dry runs).
    pub fn from_metrics(text: &str) -> Writes {
        let mut counts = BTreeMap::new();
        for series in parse_requests(text) {
            let verb = series.label("verb");
            if !WRITE_VERBS.contains(&verb)
                || !series.label("dry_run").is_empty()
                || !series.label("code").starts_with('2')
            {
                continue;
            }
            let mut key = series.label("resource").to_string();
            if !series.label("group").is_empty() {
                key = format!("{key}.{}", series.label("group"));
            }
            if !series.label("subresource").is_empty() {
                key = format!("{key}/{}", series.label("subresource"));
            }
            // Counters are integers; the text format prints them as floats.
            *counts.entry(format!("{key} {verb}")).or_insert(0) += series.value as u64;
        }
        Writes(counts)
    }

    /// Scrapes the `/metrics` of the API server `client` talks to.
    ///
    /// # Errors
    /// When the server does not answer `/metrics`.
    pub async fn scrape(client: &kube::Client) -> anyhow::Result<Writes> {
        let request = http::Request::get("/metrics")
            .body(Vec::new())
            .context("failed to build the /metrics request")?;
        let text = client
            .request_text(request)
            .await
            .context("failed to scrape the API server's /metrics")?;
        Ok(Writes::from_metrics(&text))
    }

    /// The writes since `before` (series that did not move are left out).
    pub fn since(&self, before: &Writes) -> Writes {
        Writes(
            self.0
                .iter()
                .filter_map(|(key, n)| {
                    let delta = n.saturating_sub(before.0.get(key).copied().unwrap_or(0));
                    (delta > 0).then(|| (key.clone(), delta))
                })
                .collect(),
        )
    }

    /// The sum of two counts (members' writes summed over members).
    pub fn plus(&self, other: &Writes) -> Writes {
        let mut sum = self.0.clone();
        for (key, n) in &other.0 {
            *sum.entry(key.clone()).or_insert(0) += n;
        }
        Writes(sum)
    }

    /// Writes to Events (core and events.k8s.io).
    pub fn events(&self) -> u64 {
        self.sum(is_event)
    }

    /// Writes templates cause, Events aside: everything but Events and the background resources.
    pub fn template_writes(&self) -> u64 {
        self.sum(|resource| {
            !is_event(resource) && !is_background(resource.split('.').next().unwrap_or(""))
        })
    }

    /// The writes templates cause, Events included: everything but the background resources.
    pub fn caused_by_templates(&self) -> Writes {
        Writes(
            self.0
                .iter()
                .filter(|(key, _)| !is_background(key.split([' ', '/', '.']).next().unwrap_or("")))
                .map(|(key, n)| (key.clone(), *n))
                .collect(),
        )
    }

    /// These writes without the Events (core and events.k8s.io).
    pub fn without_events(&self) -> Writes {
        Writes(
            self.0
                .iter()
                .filter(|(key, _)| !is_event_key(key))
                .map(|(key, n)| (key.clone(), *n))
                .collect(),
        )
    }

    /// These writes with their Events replaced by `other`'s.
    pub fn with_events_of(&self, other: &Writes) -> Writes {
        let events = other.0.iter().filter(|(key, _)| is_event_key(key));
        Writes(
            self.without_events()
                .0
                .into_iter()
                .chain(events.map(|(key, n)| (key.clone(), *n)))
                .collect(),
        )
    }

    /// Every write.
    pub fn total(&self) -> u64 {
        self.0.values().sum()
    }

    fn sum(&self, resource: impl Fn(&str) -> bool) -> u64 {
        self.0
            .iter()
            .filter(|(key, _)| {
                let name = key.split(' ').next().unwrap_or("");
                resource(name.split('/').next().unwrap_or(""))
            })
            .map(|(_, n)| n)
            .sum()
    }

    /// Each count divided by `templates`, two decimals, for the report.
    pub fn per_template(&self, templates: usize) -> BTreeMap<String, f64> {
        self.0
            .iter()
            .map(|(key, n)| (key.clone(), ratio(*n, templates)))
            .collect()
    }
}

/// Whether writes to `plural` are background work (leases, clusters, nodes).
fn is_background(plural: &str) -> bool {
    BACKGROUND.contains(&plural)
}

/// Whether `resource` (a plural, `.group` appended when it has one) is Events, core or events.k8s.io.
/// Whether a `resource[/subresource] VERB` key counts Event writes.
fn is_event_key(key: &str) -> bool {
    is_event(key.split([' ', '/']).next().unwrap_or(""))
}

fn is_event(resource: &str) -> bool {
    resource == "events" || resource == "events.events.k8s.io"
}

/// `n / templates`, two decimals.
pub fn ratio(n: u64, templates: usize) -> f64 {
    (n as f64 / templates.max(1) as f64 * 100.0).round() / 100.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_successful_writes_by_resource_and_verb() {
        let text = r#"
apiserver_request_total{code="201",component="apiserver",dry_run="",group="work.karmada.io",resource="works",scope="resource",subresource="",verb="POST",version="v1alpha1"} 3
apiserver_request_total{code="200",component="apiserver",dry_run="",group="work.karmada.io",resource="works",scope="resource",subresource="status",verb="PATCH",version="v1alpha1"} 2
apiserver_request_total{code="409",component="apiserver",dry_run="",group="work.karmada.io",resource="works",scope="resource",subresource="",verb="POST",version="v1alpha1"} 5
apiserver_request_total{code="201",component="apiserver",dry_run="All",group="",resource="events",scope="resource",subresource="",verb="POST",version="v1"} 5
apiserver_request_total{code="201",component="apiserver",dry_run="",group="",resource="events",scope="resource",subresource="",verb="POST",version="v1"} 4
apiserver_request_total{code="200",component="apiserver",dry_run="",group="coordination.k8s.io",resource="leases",scope="resource",subresource="",verb="PUT",version="v1"} 6
apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="pods",scope="namespace",subresource="",verb="LIST",version="v1"} 9
"#;
        let writes = Writes::from_metrics(text);
        assert_eq!(
            writes.0,
            BTreeMap::from([
                ("events POST".to_string(), 4),
                ("leases.coordination.k8s.io PUT".to_string(), 6),
                ("works.work.karmada.io POST".to_string(), 3),
                ("works.work.karmada.io/status PATCH".to_string(), 2),
            ])
        );
        assert_eq!((writes.events(), writes.template_writes(), writes.total()), (4, 5, 15));
        let before = Writes(BTreeMap::from([("works.work.karmada.io POST".to_string(), 1)]));
        let since = writes.since(&before);
        assert_eq!(since.0.get("works.work.karmada.io POST"), Some(&2));
        assert_eq!(since.plus(&before).0.get("works.work.karmada.io POST"), Some(&3));
    }

    #[test]
    fn without_events_drops_core_and_events_k8s_io_events_and_nothing_else() {
        let writes = Writes(BTreeMap::from([
            ("events POST".to_string(), 4),
            ("events.events.k8s.io PATCH".to_string(), 2),
            ("eventsources.example.com POST".to_string(), 1),
            ("works.work.karmada.io/status PATCH".to_string(), 3),
        ]));
        assert_eq!(
            writes.without_events().0,
            BTreeMap::from([
                ("eventsources.example.com POST".to_string(), 1),
                ("works.work.karmada.io/status PATCH".to_string(), 3),
            ])
        );
    }

    #[test]
    fn with_events_of_takes_the_other_writes_events_and_keeps_the_rest() {
        let settled = Writes(BTreeMap::from([
            ("events.events.k8s.io POST".to_string(), 30),
            ("events.events.k8s.io PATCH".to_string(), 5),
            ("works.work.karmada.io POST".to_string(), 2),
        ]));
        let earlier = Writes(BTreeMap::from([
            ("events POST".to_string(), 1),
            ("events.events.k8s.io POST".to_string(), 12),
            ("works.work.karmada.io POST".to_string(), 1),
        ]));
        assert_eq!(
            settled.with_events_of(&earlier).0,
            BTreeMap::from([
                ("events POST".to_string(), 1),
                ("events.events.k8s.io POST".to_string(), 12),
                ("works.work.karmada.io POST".to_string(), 2),
            ])
        );
    }
}
