//! `flotilla status`: what the control plane did with each template, for a person: the same
//! journeys the status page shows, in the terminal.
//!
//! Where they come from, in this order: `--kubeconfig`/`--context` compute them from the control plane's API
//! (bindings and Works; no interpreter layers, which only the controller manager's own process records);
//! `--url` reads a running controller manager's status page; otherwise the status page of the `flotilla up`
//! running with `--data-dir` (its URL is in `DIR/status.url`).

use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, bail};
use flotilla_api::work::v1alpha1::Work;
use flotilla_api::work::v1alpha2::{ClusterResourceBinding, ResourceBinding};
use flotilla_status_page::journey::{self, ConditionView, Journey, Snapshot};
use kube::Api;

use super::kube_access::KubeAccess;
use super::up::STATUS_URL_FILE;

/// How long reading the status page may take.
const TIMEOUT: Duration = Duration::from_secs(30);

/// Arguments of `flotilla status`.
#[derive(Debug, Clone, clap::Args)]
pub struct Args {
    /// The data dir of a running `flotilla up` (default `~/.flotilla`), whose status page is read.
    #[arg(long, conflicts_with_all = ["url", "kubeconfig", "context"])]
    pub data_dir: Option<PathBuf>,
    /// The status page of a running controller manager (its --metrics-addr), e.g. `http://127.0.0.1:8080`.
    #[arg(long, conflicts_with_all = ["kubeconfig", "context"])]
    pub url: Option<String>,
    /// With `--kubeconfig` or `--context`: compute the journeys from this control plane's API instead (bindings
    /// and Works, without the interpreter layers, which only the controller manager's process records).
    #[command(flatten)]
    pub control_plane: KubeAccess,
    /// `text`, or `json` (the status page's `/api/journeys` document).
    #[arg(long, short, value_enum, default_value_t = Output::Text)]
    pub output: Output,
}

/// Output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Output {
    /// For a person.
    Text,
    /// For programs.
    Json,
}

/// Prints the journeys.
pub async fn run(args: Args) -> anyhow::Result<()> {
    let snapshot = if args.control_plane.kubeconfig.is_some() || args.control_plane.context.is_some()
    {
        from_api(&args.control_plane).await?
    } else {
        let url = match &args.url {
            Some(url) => url.clone(),
            None => page_of_data_dir(args.data_dir.clone())?,
        };
        from_page(&url).await?
    };
    match args.output {
        Output::Text => print!("{}", render(&snapshot)),
        Output::Json => println!(
            "{}",
            serde_json::to_string_pretty(&snapshot).context("failed to encode the journeys")?
        ),
    }
    Ok(())
}

/// The status page URL a running `flotilla up` wrote into its data dir.
fn page_of_data_dir(data_dir: Option<PathBuf>) -> anyhow::Result<String> {
    let dir = match data_dir {
        Some(dir) => dir,
        None => super::up::default_data_dir()?,
    };
    let file = dir.join(STATUS_URL_FILE);
    match std::fs::read_to_string(&file) {
        Ok(url) => Ok(url.trim().to_owned()),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => bail!(
            "no flotilla up is running with data dir {} ({} does not exist); start one, or pass --url or --kubeconfig",
            dir.display(),
            file.display()
        ),
        Err(err) => Err(err).with_context(|| format!("failed to read {}", file.display())),
    }
}

async fn from_page(url: &str) -> anyhow::Result<Snapshot> {
    let endpoint = format!("{}/api/journeys", url.trim_end_matches('/'));
    // Status pages are plain HTTP on loopback; TLS is configured (with no trusted roots) only because the
    // workspace's reqwest brings no crypto provider of its own.
    let tls = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .context("failed to set up an HTTP client")?
    .with_root_certificates(rustls::RootCertStore::empty())
    .with_no_client_auth();
    let client = reqwest::Client::builder()
        .tls_backend_preconfigured(tls)
        .no_proxy()
        .timeout(TIMEOUT)
        .build()
        .context("failed to set up an HTTP client")?;
    let response = client
        .get(&endpoint)
        .send()
        .await
        .with_context(|| format!("no status page answers at {url} (is Flotilla running?)"))?;
    let status = response.status();
    let body = response
        .text()
        .await
        .with_context(|| format!("failed to read {endpoint}"))?;
    if !status.is_success() {
        let message = serde_json::from_str::<serde_json::Value>(&body)
            .ok()
            .and_then(|v| v.get("error")?.as_str().map(str::to_owned))
            .unwrap_or(body);
        bail!("{endpoint} answered {status}: {message}");
    }
    serde_json::from_str(&body).with_context(|| format!("{endpoint} did not answer journeys"))
}

async fn from_api(access: &KubeAccess) -> anyhow::Result<Snapshot> {
    let client = access
        .client()
        .await
        .context("failed to reach the control plane")?;
    let params = kube::api::ListParams::default();
    let bindings = Api::<ResourceBinding>::all(client.clone())
        .list(&params)
        .await
        .context("failed to list ResourceBindings")?;
    let cluster_bindings = Api::<ClusterResourceBinding>::all(client.clone())
        .list(&params)
        .await
        .context("failed to list ClusterResourceBindings")?;
    let works = Api::<Work>::all(client)
        .list(&params)
        .await
        .context("failed to list Works")?;
    Ok(journey::from_lists(
        &bindings.items,
        &cluster_bindings.items,
        &works.items,
        None,
    ))
}

/// The journeys as text: one block per template, one line per fact.
fn render(snapshot: &Snapshot) -> String {
    let mut out = String::new();
    if snapshot.templates.is_empty() {
        out.push_str(
            "no template is bound yet: apply a template and a PropagationPolicy that selects it\n",
        );
    }
    for (i, journey) in snapshot.templates.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        block(&mut out, journey, snapshot.interpreter);
    }
    out
}

/// Label column width.
const LABEL: usize = 14;

fn line(out: &mut String, label: &str, text: &str) {
    let _ = writeln!(out, "  {label:<LABEL$}{text}");
}

fn block(out: &mut String, journey: &Journey, interpreter: bool) {
    let template = &journey.template;
    let _ = writeln!(out, "{template} ({})", template.api_version);
    let policy = journey
        .policy
        .as_ref()
        .map_or_else(|| "none".to_owned(), ToString::to_string);
    line(out, "policy", &policy);
    line(
        out,
        "binding",
        &format!("{}, {} replicas", journey.binding, journey.replicas),
    );
    let clusters = journey
        .clusters
        .iter()
        .map(|c| format!("{}={}", c.name, c.replicas))
        .collect::<Vec<_>>()
        .join(" ");
    line(out, "scheduled", &condition_text(find(journey, "Scheduled")));
    line(
        out,
        "clusters",
        if clusters.is_empty() {
            "none"
        } else {
            &clusters
        },
    );
    line(
        out,
        "fully applied",
        &condition_text(find(journey, "FullyApplied")),
    );
    let works: Vec<String> = journey
        .works
        .iter()
        .map(|w| {
            format!(
                "{}  {}/{}  Applied={}  {}",
                w.cluster,
                w.namespace,
                w.name,
                w.applied.as_ref().map_or("unset", |c| c.status.as_str()),
                w.health.as_deref().unwrap_or("health not reported")
            )
        })
        .collect();
    lines(out, "works", &works, "none yet");
    let statuses: Vec<String> = journey
        .aggregated
        .iter()
        .map(|a| {
            let applied = if a.applied {
                "applied".to_owned()
            } else {
                format!("not applied: {}", a.applied_message)
            };
            let status = a
                .status
                .as_ref()
                .map_or_else(|| "no status".to_owned(), ToString::to_string);
            format!(
                "{}  {applied}  {}  {status}",
                a.cluster,
                a.health.as_deref().unwrap_or("health unknown")
            )
        })
        .collect();
    lines(out, "status", &statuses, "none yet");
    if interpreter {
        let operations: Vec<String> = journey
            .operations
            .iter()
            .map(|o| {
                let calls = if o.calls == 1 { "call" } else { "calls" };
                let mut text = format!(
                    "{:<20}{} ({})  {:.2} ms  {} {calls}",
                    o.operation, o.layer, o.rule, o.latency_ms, o.calls
                );
                if let (Some(error), Some(at)) = (&o.last_error, &o.last_error_at) {
                    let _ = write!(text, "  last error at {at}: {error}");
                }
                text
            })
            .collect();
        lines(out, "interpreter", &operations, "no call yet");
    } else {
        line(
            out,
            "interpreter",
            "not known (read from the API; the controller manager's status page has the layers)",
        );
    }
    let mut selector = format!(
        "involvedObject.kind={},involvedObject.name={}",
        template.kind, template.name
    );
    let namespace = if template.namespace.is_empty() {
        "default"
    } else {
        selector.push_str(&format!(",involvedObject.namespace={}", template.namespace));
        &template.namespace
    };
    line(
        out,
        "events",
        &format!("kubectl get events -n {namespace} --field-selector {selector}"),
    );
}

fn find<'a>(journey: &'a Journey, type_: &str) -> Option<&'a ConditionView> {
    journey.conditions.iter().find(|c| c.type_ == type_)
}

fn condition_text(condition: Option<&ConditionView>) -> String {
    match condition {
        None => "not yet".to_owned(),
        Some(c) if c.message.is_empty() => format!("{} {}", c.status, c.reason),
        Some(c) => format!("{} {}: {}", c.status, c.reason, c.message),
    }
}

fn lines(out: &mut String, label: &str, items: &[String], none: &str) {
    if items.is_empty() {
        line(out, label, none);
    }
    for (i, item) in items.iter().enumerate() {
        line(out, if i == 0 { label } else { "" }, item);
    }
}

#[cfg(test)]
mod tests;
