//! karmada-webhook's admission (deletion protection, ResourceInterpreterCustomization validation, the policy
//! kinds' defaults and validation) served over HTTPS beside the controllers, and its Validating- and
//! MutatingWebhookConfigurations registered with the control plane. `flotilla controller-manager` runs it from its `--webhook-*` flags; `flotilla up` runs it with a
//! self-signed certificate on a free port of 127.0.0.1.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context;
use flotilla_controllers::admission::configuration::{
    self, CUSTOMIZATION_PATH, DELETION_PROTECTION_PATH, Endpoint,
};
use flotilla_controllers::admission::{self, customization, deletion_protection};
use flotilla_controllers::features::FeatureGates;
use flotilla_webhook::admission::admission_router;
use flotilla_webhook::{RunningServer, TlsIdentity};
use kube::Client;
use kube::core::DynamicObject;
use kube::core::admission::AdmissionRequest;
use tokio::net::TcpListener;

use super::serving::{CertificateFlags, ServiceRef, https_host_port, service_host};

/// The `--webhook-*` flags of `flotilla controller-manager`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct WebhookArgs {
    /// Serve karmada-webhook's validations (deletion protection, ResourceInterpreterCustomization validation)
    /// over HTTPS on ADDR (Karmada: --bind-address and --secure-port). Off when unset.
    #[arg(long, value_name = "ADDR")]
    pub webhook_addr: Option<SocketAddr>,
    /// Directory holding the serving certificate `tls.crt` and its key `tls.key` (Karmada: --cert-dir), read
    /// again when they change.
    #[arg(
        long,
        value_name = "DIR",
        requires = "webhook_addr",
        conflicts_with = "webhook_self_signed"
    )]
    pub webhook_cert_dir: Option<PathBuf>,
    /// Generate a CA and a serving certificate for the host of --webhook-url (or of --webhook-service, or the IP
    /// of --webhook-addr) at start, and register that CA.
    #[arg(long, requires = "webhook_addr")]
    pub webhook_self_signed: bool,
    /// Register the ValidatingWebhookConfiguration `validating-config` with the control plane, calling the
    /// webhook at this base URL (https://HOST:PORT, reachable by the API server).
    #[arg(
        long,
        value_name = "URL",
        requires = "webhook_addr",
        conflicts_with = "webhook_service"
    )]
    pub webhook_url: Option<String>,
    /// Register it calling the webhook through a Service of the control plane instead, NAMESPACE/NAME[:PORT].
    #[arg(long, value_name = "NAMESPACE/NAME[:PORT]", requires = "webhook_addr")]
    pub webhook_service: Option<String>,
    /// The CA bundle (PEM) registered for the serving certificate; with --webhook-self-signed, the generated CA.
    #[arg(
        long,
        value_name = "FILE",
        requires = "webhook_addr",
        conflicts_with = "webhook_self_signed"
    )]
    pub webhook_ca_bundle: Option<PathBuf>,
    /// Allow ClusterTaintPolicies whose taints have the NoExecute effect (Karmada's karmada-webhook flag of this
    /// name). Such a taint evicts the workloads that do not tolerate it from the clusters it is put on, so it is
    /// refused unless an administrator allows it.
    #[arg(long)]
    pub allow_no_execute_taint_policy: bool,
}

/// What to serve and register, resolved from the flags.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Where to listen.
    pub addr: SocketAddr,
    /// The serving certificate.
    pub tls: TlsIdentity,
    /// Where the API server calls the webhook, with the CA bundle to register; `None` registers nothing.
    pub register: Option<(Endpoint, Option<Vec<u8>>)>,
    /// What the flags decide about the answers (`--allow-no-execute-taint-policy`, and the feature gates, shared
    /// with the controllers as karmada-webhook and the controller manager are given the same ones).
    pub options: admission::Options,
}

impl WebhookArgs {
    /// The settings these flags describe, answering under `feature_gates`, or `None` when the webhook is not
    /// served.
    ///
    /// # Errors
    /// When the flags contradict each other or a certificate cannot be read or generated.
    pub fn settings(&self, feature_gates: &FeatureGates) -> anyhow::Result<Option<Settings>> {
        let Some(addr) = self.webhook_addr else {
            return Ok(None);
        };
        let endpoint = match (&self.webhook_url, &self.webhook_service) {
            (Some(url), _) => Some(Endpoint::Url(url.clone())),
            (None, Some(service)) => Some(parse_service(service)?),
            (None, None) => None,
        };
        let host = match &endpoint {
            Some(endpoint) => host_of(endpoint)?,
            None => addr.ip().to_string(),
        };
        let certificate = CertificateFlags {
            prefix: "webhook",
            what: "webhook",
            cert_dir: self.webhook_cert_dir.as_deref(),
            self_signed: self.webhook_self_signed,
            ca_bundle: self.webhook_ca_bundle.as_deref(),
        }
        .certificate(&[&host])?;
        let (tls, ca_bundle) = (certificate.identity, certificate.ca_bundle);
        Ok(Some(Settings {
            addr,
            tls,
            register: endpoint.map(|endpoint| (endpoint, ca_bundle)),
            options: admission::Options {
                allow_no_execute_taint_policy: self.allow_no_execute_taint_policy,
                feature_gates: feature_gates.clone(),
            },
        }))
    }
}

/// The webhook's registration from `--webhook-service`.
fn parse_service(text: &str) -> anyhow::Result<Endpoint> {
    let service = ServiceRef::parse(text, "--webhook-service")?;
    Ok(Endpoint::Service {
        namespace: service.namespace,
        name: service.name,
        port: service.port,
    })
}

/// The host name the API server verifies the serving certificate against.
fn host_of(endpoint: &Endpoint) -> anyhow::Result<String> {
    match endpoint {
        Endpoint::Url(url) => Ok(https_host_port(url, "--webhook-url")?.0),
        Endpoint::Service {
            namespace, name, ..
        } => Ok(service_host(namespace, name)),
    }
}

/// Serves the validations on `settings.addr` and registers them with the control plane `client` reaches.
///
/// # Errors
/// When the address cannot be bound, the certificate is unusable, or the registration is refused.
pub async fn start(client: &Client, settings: &Settings) -> anyhow::Result<RunningServer> {
    let server = serve(client, settings.addr, &settings.tls, &settings.options).await?;
    if let Some((endpoint, ca_bundle)) = &settings.register {
        register(client, endpoint, ca_bundle.as_deref()).await?;
    }
    tracing::info!(addr = %server.local_addr(), registered = settings.register.is_some(), "karmada-webhook validations serving");
    Ok(server)
}

/// Serves the admission handlers on `addr`, answering customization reviews from the customizations `client`
/// lists and the rest as `options` decide.
///
/// # Errors
/// When the address cannot be bound or the certificate is unusable.
pub async fn serve(
    client: &Client,
    addr: SocketAddr,
    tls: &TlsIdentity,
    options: &admission::Options,
) -> anyhow::Result<RunningServer> {
    let tls = tls
        .server_config()
        .context("failed to use the webhook's serving certificate")?;
    let listener = TcpListener::bind(addr)
        .await
        .with_context(|| format!("failed to listen on {addr} for the webhook"))?;
    let validator = customization::Validator::new(client.clone());
    let router = admission::HANDLERS.iter().fold(
        admission_router(
            DELETION_PROTECTION_PATH,
            |request: AdmissionRequest<DynamicObject>| async move {
                deletion_protection::review(&request)
            },
        )
        .merge(admission_router(
            CUSTOMIZATION_PATH,
            move |request: AdmissionRequest<DynamicObject>| {
                let validator = validator.clone();
                async move { validator.review(request).await }
            },
        )),
        |router, (path, review)| {
            let review = *review;
            let options = Arc::new(options.clone());
            router.merge(admission_router(
                path,
                move |request: AdmissionRequest<DynamicObject>| {
                    let options = options.clone();
                    async move { review(&options, &request) }
                },
            ))
        },
    );
    flotilla_webhook::serve_tls(listener, tls, router).context("failed to serve the webhook")
}

/// Creates or updates the Validating- and MutatingWebhookConfiguration calling the webhook at `endpoint`.
///
/// # Errors
/// When the control plane refuses the write.
pub async fn register(
    client: &Client,
    endpoint: &Endpoint,
    ca_bundle: Option<&[u8]>,
) -> anyhow::Result<()> {
    let validating = configuration::validating_webhook_configuration(endpoint, ca_bundle);
    configuration::register(client, &validating)
        .await
        .context("failed to register the validating webhook configuration")?;
    let mutating = configuration::mutating_webhook_configuration(endpoint, ca_bundle);
    configuration::register(client, &mutating)
        .await
        .context("failed to register the mutating webhook configuration")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(flags: &[&str]) -> Result<WebhookArgs, clap::Error> {
        #[derive(clap::Parser)]
        struct Cli {
            #[command(flatten)]
            webhook: WebhookArgs,
        }
        use clap::Parser;
        Cli::try_parse_from(std::iter::once("test").chain(flags.iter().copied()))
            .map(|cli| cli.webhook)
    }

    #[test]
    fn off_without_an_address() {
        assert!(args(&[]).is_ok_and(|a| {
            a.settings(&FeatureGates::default())
                .is_ok_and(|s| s.is_none())
        }));
        assert!(args(&["--webhook-url", "https://127.0.0.1:1"]).is_err());
    }

    #[test]
    fn self_signed_registers_its_ca_for_the_url_host() -> anyhow::Result<()> {
        let parsed = args(&[
            "--webhook-addr",
            "127.0.0.1:0",
            "--webhook-self-signed",
            "--webhook-url",
            "https://127.0.0.1:8443",
        ])?;
        let settings = parsed
            .settings(&FeatureGates::default())?
            .context("served")?;
        let (endpoint, ca) = settings.register.context("registered")?;
        assert_eq!(endpoint, Endpoint::Url("https://127.0.0.1:8443".to_owned()));
        assert!(ca.is_some_and(|pem| pem.starts_with(b"-----BEGIN CERTIFICATE-----")));
        Ok(())
    }

    #[test]
    fn a_certificate_is_required_and_urls_must_be_https() -> anyhow::Result<()> {
        assert!(
            args(&["--webhook-addr", "127.0.0.1:0"])?
                .settings(&FeatureGates::default())
                .is_err()
        );
        let plain = args(&[
            "--webhook-addr",
            "127.0.0.1:0",
            "--webhook-self-signed",
            "--webhook-url",
            "http://127.0.0.1:8443",
        ])?;
        assert!(plain.settings(&FeatureGates::default()).is_err());
        Ok(())
    }

    #[test]
    fn services_parse() {
        assert!(matches!(
            parse_service("karmada-system/karmada-webhook:8443"),
            Ok(Endpoint::Service {
                port: Some(8443),
                ..
            })
        ));
        assert!(matches!(
            parse_service("karmada-system/karmada-webhook"),
            Ok(Endpoint::Service { port: None, .. })
        ));
        for bad in ["karmada-webhook", "/x", "ns/", "ns/x:port"] {
            assert!(parse_service(bad).is_err(), "{bad}");
        }
    }
}
