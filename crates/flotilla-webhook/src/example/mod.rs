//! The example interpreter webhook for `workload.example.io/v1alpha1 Workload` (the walkthrough in
//! `manifests/examples/`), served on [`PATH`]; `flotilla webhook-example` and `flotilla up --webhook-example`
//! run it.

mod workload;

use std::net::{IpAddr, Ipv4Addr, SocketAddr};

use flotilla_api::config::v1alpha1::{
    InterpreterOperation, ResourceInterpreterWebhook, ResourceInterpreterWebhookConfiguration,
    RuleWithOperations,
};
use k8s_openapi::api::admissionregistration::v1::WebhookClientConfig;

pub use workload::WorkloadInterpreter;

use crate::tls::{TlsIdentity, generate_self_signed};
use crate::{Error, RunningServer, router, serve_tls};

/// The URL path the example serves.
pub const PATH: &str = "/interpreter-workload";
/// Name of the webhook configuration the example registers.
pub const CONFIGURATION_NAME: &str = "examples";
/// Name of the webhook inside that configuration.
pub const WEBHOOK_NAME: &str = "workloads.example.com";
/// The operations the example registers for.
pub const OPERATIONS: [InterpreterOperation; 7] = [
    InterpreterOperation::InterpretReplica,
    InterpreterOperation::ReviseReplica,
    InterpreterOperation::Retain,
    InterpreterOperation::AggregateStatus,
    InterpreterOperation::InterpretHealth,
    InterpreterOperation::InterpretStatus,
    InterpreterOperation::InterpretDependency,
];

/// How to run the example.
#[derive(Clone, Debug)]
pub struct ExampleConfig {
    /// Where to listen; port 0 picks a free port.
    pub listen: SocketAddr,
    /// The serving certificate; `None` generates a self-signed CA and certificate for the listen address,
    /// `127.0.0.1` and `localhost`.
    pub tls: Option<TlsIdentity>,
}

impl Default for ExampleConfig {
    fn default() -> Self {
        ExampleConfig {
            listen: SocketAddr::from((Ipv4Addr::LOCALHOST, 0)),
            tls: None,
        }
    }
}

/// The example webhook, serving in the background until shut down or dropped.
#[derive(Debug)]
pub struct RunningWebhook {
    server: RunningServer,
    url: String,
    ca_bundle: Option<Vec<u8>>,
}

impl RunningWebhook {
    /// `https://<address>:<port>/interpreter-workload`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The CA that signed the serving certificate (PEM), when the example generated it.
    pub fn ca_bundle(&self) -> Option<&[u8]> {
        self.ca_bundle.as_deref()
    }

    /// The address the webhook listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.server.local_addr()
    }

    /// The ResourceInterpreterWebhookConfiguration that registers this webhook, as in
    /// `manifests/examples/webhook-configuration.yaml` (with this URL and CA).
    pub fn webhook_configuration(&self) -> ResourceInterpreterWebhookConfiguration {
        webhook_configuration(&self.url, self.ca_bundle.clone())
    }

    /// Stops serving.
    pub async fn shutdown(self) {
        self.server.shutdown().await;
    }
}

/// The configuration registering the example at `url`, trusting `ca_bundle` (PEM).
pub fn webhook_configuration(
    url: &str,
    ca_bundle: Option<Vec<u8>>,
) -> ResourceInterpreterWebhookConfiguration {
    let mut configuration = ResourceInterpreterWebhookConfiguration::default();
    configuration.metadata.name = Some(CONFIGURATION_NAME.to_owned());
    configuration.webhooks = vec![ResourceInterpreterWebhook {
        name: WEBHOOK_NAME.to_owned(),
        client_config: WebhookClientConfig {
            url: Some(url.to_owned()),
            ca_bundle: ca_bundle.map(k8s_openapi::ByteString),
            service: None,
        },
        rules: vec![RuleWithOperations {
            operations: OPERATIONS.to_vec(),
            api_groups: vec!["workload.example.io".into()],
            api_versions: vec!["v1alpha1".into()],
            kinds: vec!["Workload".into()],
        }],
        timeout_seconds: Some(3),
        interpreter_context_versions: vec!["v1alpha1".into()],
    }];
    configuration
}

/// Starts the example webhook.
pub async fn serve(config: ExampleConfig) -> Result<RunningWebhook, Error> {
    let listener = tokio::net::TcpListener::bind(config.listen)
        .await
        .map_err(|source| Error::Bind {
            addr: config.listen,
            source,
        })?;
    let local_addr = listener.local_addr().map_err(Error::LocalAddr)?;
    // A wildcard listen address is reached on loopback.
    let host = match local_addr.ip() {
        ip if ip.is_unspecified() && ip.is_ipv4() => IpAddr::V4(Ipv4Addr::LOCALHOST),
        ip if ip.is_unspecified() => IpAddr::V6(std::net::Ipv6Addr::LOCALHOST),
        ip => ip,
    };
    let (identity, ca_bundle) = match config.tls {
        Some(identity) => (identity, None),
        None => {
            let host = host.to_string();
            let generated = generate_self_signed(&[host.as_str(), "127.0.0.1", "localhost"])?;
            (generated.identity, Some(generated.ca_pem))
        }
    };
    let server = serve_tls(
        listener,
        identity.server_config()?,
        router(PATH, WorkloadInterpreter),
    )?;
    let url = format!("https://{}{PATH}", SocketAddr::new(host, local_addr.port()));
    Ok(RunningWebhook {
        server,
        url,
        ca_bundle,
    })
}
