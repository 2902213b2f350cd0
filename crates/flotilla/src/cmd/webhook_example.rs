//! `flotilla webhook-example`: serves the example interpreter webhook for `workload.example.io/v1alpha1 Workload`
//! on `/interpreter-workload`; prints `ready: url=URL` once it serves.

use std::net::SocketAddr;
use std::path::PathBuf;

use anyhow::Context;
use flotilla_webhook::TlsIdentity;
use flotilla_webhook::example::{ExampleConfig, serve};

/// Arguments of `flotilla webhook-example`.
#[derive(Debug, Clone, clap::Args)]
pub struct Args {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:8445")]
    pub listen: SocketAddr,
    /// Serving certificate (PEM); without --cert and --key a self-signed CA and certificate are generated.
    #[arg(long, requires = "key")]
    pub cert: Option<PathBuf>,
    /// Private key of the serving certificate (PEM).
    #[arg(long, requires = "cert")]
    pub key: Option<PathBuf>,
    /// Write the ResourceInterpreterWebhookConfiguration registering this webhook (URL, and caBundle when
    /// generated) to this file, ready for `kubectl apply -f`.
    #[arg(long)]
    pub configuration_out: Option<PathBuf>,
}

/// Serves until SIGINT or SIGTERM.
pub async fn run(args: Args) -> anyhow::Result<()> {
    let tls = match (&args.cert, &args.key) {
        (Some(cert), Some(key)) => Some(
            TlsIdentity::from_files(cert, key).context("failed to load the serving certificate")?,
        ),
        _ => None,
    };
    let webhook = serve(ExampleConfig {
        listen: args.listen,
        tls,
    })
    .await
    .with_context(|| format!("failed to serve the example webhook on {}", args.listen))?;
    if let Some(out) = &args.configuration_out {
        std::fs::write(out, configuration_yaml(&webhook)?).with_context(|| {
            format!(
                "failed to write the webhook configuration {}",
                out.display()
            )
        })?;
    }
    println!("ready: url={}", webhook.url());
    tracing::info!(url = webhook.url(), "example interpreter webhook ready");
    super::apiserver::wait_for_signal().await;
    webhook.shutdown().await;
    Ok(())
}

/// The webhook configuration as a YAML manifest, with its `apiVersion` and `kind`.
fn configuration_yaml(
    webhook: &flotilla_webhook::example::RunningWebhook,
) -> anyhow::Result<String> {
    let mut manifest = serde_json::to_value(webhook.webhook_configuration())
        .context("failed to encode the webhook configuration")?;
    if let Some(fields) = manifest.as_object_mut() {
        fields.insert("apiVersion".into(), "config.karmada.io/v1alpha1".into());
        fields.insert(
            "kind".into(),
            "ResourceInterpreterWebhookConfiguration".into(),
        );
    }
    flotilla_yaml::to_string(&manifest).context("failed to encode the webhook configuration as YAML")
}
