//! `cluster.karmada.io` served as Karmada's karmada-aggregated-apiserver serves it (Clusters and their
//! `clusters/{name}/proxy` subresource, docs/CLUSTER_PROXY.md), beside the controllers, and registered with the
//! control plane's aggregator. `flotilla controller-manager` runs it from its `--aggregated-apiserver-*` flags;
//! `flotilla up` runs it with a self-signed certificate on a free port of 127.0.0.1.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, bail};
use flotilla_aggregated_apiserver::names::SERVICE_HOST;
use flotilla_aggregated_apiserver::register::{self, Endpoint};
use flotilla_webhook::TlsIdentity;
use kube::Client;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::serving::{CertificateFlags, ServiceRef, https_host_port, service_host};

/// The `--aggregated-apiserver-*` flags of `flotilla controller-manager`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct AggregatedApiArgs {
    /// Serve cluster.karmada.io (Clusters and their proxy subresource, which karmadactl's member commands use)
    /// over HTTPS on ADDR, as Karmada's karmada-aggregated-apiserver does. Off when unset.
    #[arg(long, value_name = "ADDR")]
    pub aggregated_apiserver_addr: Option<SocketAddr>,
    /// Directory holding its serving certificate `tls.crt` and key `tls.key`.
    #[arg(
        long,
        value_name = "DIR",
        requires = "aggregated_apiserver_addr",
        conflicts_with = "aggregated_apiserver_self_signed"
    )]
    pub aggregated_apiserver_cert_dir: Option<PathBuf>,
    /// Generate a CA and a serving certificate at start, valid for karmada-aggregated-apiserver.karmada-system.svc
    /// (the name the aggregator verifies) and the host of --aggregated-apiserver-url (or the IP of
    /// --aggregated-apiserver-addr), and register that CA.
    #[arg(long, requires = "aggregated_apiserver_addr")]
    pub aggregated_apiserver_self_signed: bool,
    /// Register the APIService v1alpha1.cluster.karmada.io with the control plane, reaching this server at this
    /// https://HOST:PORT through the ExternalName Service karmada-system/karmada-aggregated-apiserver (both created
    /// or updated; the API server must run without --enable-aggregator-routing).
    #[arg(
        long,
        value_name = "URL",
        requires = "aggregated_apiserver_addr",
        conflicts_with = "aggregated_apiserver_service"
    )]
    pub aggregated_apiserver_url: Option<String>,
    /// Register it against an existing Service of the control plane instead, NAMESPACE/NAME[:PORT].
    #[arg(
        long,
        value_name = "NAMESPACE/NAME[:PORT]",
        requires = "aggregated_apiserver_addr"
    )]
    pub aggregated_apiserver_service: Option<String>,
    /// The CA bundle (PEM) registered for the serving certificate; with --aggregated-apiserver-self-signed, the
    /// generated CA.
    #[arg(
        long,
        value_name = "FILE",
        requires = "aggregated_apiserver_addr",
        conflicts_with = "aggregated_apiserver_self_signed"
    )]
    pub aggregated_apiserver_ca_bundle: Option<PathBuf>,
}

/// What to serve and register, resolved from the flags.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Where to listen.
    pub addr: SocketAddr,
    /// The serving certificate.
    pub tls: TlsIdentity,
    /// Where the aggregator reaches the server, with the CA bundle that verifies it; `None` registers nothing.
    pub register: Option<(Endpoint, Vec<u8>)>,
}

impl AggregatedApiArgs {
    /// The settings these flags describe, or `None` when the API is not served.
    ///
    /// # Errors
    /// When the flags contradict each other, a registration has no CA bundle, or a certificate cannot be read or
    /// generated.
    pub fn settings(&self) -> anyhow::Result<Option<Settings>> {
        let Some(addr) = self.aggregated_apiserver_addr else {
            return Ok(None);
        };
        let endpoint = match (
            &self.aggregated_apiserver_url,
            &self.aggregated_apiserver_service,
        ) {
            (Some(url), _) => {
                let (host, port) = https_host_port(url, "--aggregated-apiserver-url")?;
                Some(Endpoint::External { host, port })
            }
            (None, Some(service)) => {
                let service = ServiceRef::parse(service, "--aggregated-apiserver-service")?;
                Some(Endpoint::Service {
                    namespace: service.namespace,
                    name: service.name,
                    port: service.port,
                })
            }
            (None, None) => None,
        };
        let host = match &endpoint {
            Some(Endpoint::External { host, .. }) => host.clone(),
            Some(Endpoint::Service {
                namespace, name, ..
            }) => service_host(namespace, name),
            None => addr.ip().to_string(),
        };
        let certificate = CertificateFlags {
            prefix: "aggregated-apiserver",
            what: "aggregated API server",
            cert_dir: self.aggregated_apiserver_cert_dir.as_deref(),
            self_signed: self.aggregated_apiserver_self_signed,
            ca_bundle: self.aggregated_apiserver_ca_bundle.as_deref(),
        }
        .certificate(&[SERVICE_HOST, &host])?;
        let (tls, ca_bundle) = (certificate.identity, certificate.ca_bundle);
        let register = match (endpoint, ca_bundle) {
            (Some(endpoint), Some(ca)) => Some((endpoint, ca)),
            (Some(_), None) => bail!(
                "registering the aggregated API server needs the CA bundle that verifies its certificate: \
                 --aggregated-apiserver-ca-bundle (or --aggregated-apiserver-self-signed)"
            ),
            (None, _) => None,
        };
        Ok(Some(Settings {
            addr,
            tls,
            register,
        }))
    }
}

/// The aggregated API server running in this process.
pub struct RunningAggregated {
    addr: SocketAddr,
    shutdown: CancellationToken,
    task: JoinHandle<()>,
}

impl RunningAggregated {
    /// The address it listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Stops serving (every open connection, watches included, ends) and waits for the server to return.
    pub async fn shutdown(self) {
        self.shutdown.cancel();
        if let Err(error) = self.task.await {
            tracing::warn!(%error, "the aggregated API server ended abnormally");
        }
    }
}

/// Serves `cluster.karmada.io` on `settings.addr` through the control plane `client` reaches, and registers it
/// with that control plane's aggregator when the settings say where it is reached.
///
/// # Errors
/// When the address cannot be bound or the registration is refused.
pub async fn start(client: &Client, settings: &Settings) -> anyhow::Result<RunningAggregated> {
    let listener = TcpListener::bind(settings.addr).await.with_context(|| {
        format!(
            "failed to listen on {} for the aggregated API server",
            settings.addr
        )
    })?;
    start_on(client, listener, &settings.tls, settings.register.as_ref()).await
}

/// Serves `cluster.karmada.io` on `listener` with the serving certificate `tls` and registers it at `register`
/// (where the aggregator reaches it, and the CA bundle that verifies `tls`).
///
/// # Errors
/// When the listener has no address or the registration is refused.
pub async fn start_on(
    client: &Client,
    listener: TcpListener,
    tls: &TlsIdentity,
    register: Option<&(Endpoint, Vec<u8>)>,
) -> anyhow::Result<RunningAggregated> {
    let addr = listener
        .local_addr()
        .context("failed to read the aggregated API server's address")?;
    let shutdown = CancellationToken::new();
    let (tls, control, stop) = (tls.clone(), client.clone(), shutdown.clone());
    let task = tokio::spawn(async move {
        if let Err(error) =
            flotilla_aggregated_apiserver::serve(listener, &tls, control, stop).await
        {
            tracing::error!(error = %anyhow::Error::new(error), "the aggregated API server stopped");
        }
    });
    let running = RunningAggregated {
        addr,
        shutdown,
        task,
    };
    if let Some((endpoint, ca_bundle)) = register
        && let Err(error) = register::register(client, endpoint, ca_bundle).await
    {
        running.shutdown().await;
        return Err(anyhow::Error::new(error)
            .context("failed to register the aggregated API server with the control plane"));
    }
    tracing::info!(%addr, registered = register.is_some(), "aggregated API server (cluster.karmada.io) serving");
    Ok(running)
}

/// Waits until the control plane's aggregator routes `cluster.karmada.io/v1alpha1` to the registered server.
///
/// # Errors
/// After `timeout`, with the APIService's last condition.
pub async fn wait_available(client: &Client, timeout: Duration) -> anyhow::Result<()> {
    register::wait_available(client, timeout)
        .await
        .context("the aggregated API server did not become available")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(flags: &[&str]) -> Result<AggregatedApiArgs, clap::Error> {
        #[derive(clap::Parser)]
        struct Cli {
            #[command(flatten)]
            aggregated: AggregatedApiArgs,
        }
        use clap::Parser;
        Cli::try_parse_from(std::iter::once("test").chain(flags.iter().copied()))
            .map(|cli| cli.aggregated)
    }

    #[test]
    fn off_without_an_address() -> anyhow::Result<()> {
        assert!(args(&[])?.settings()?.is_none());
        assert!(args(&["--aggregated-apiserver-url", "https://127.0.0.1:1"]).is_err());
        Ok(())
    }

    #[test]
    fn self_signed_registers_its_ca_behind_an_external_name() -> anyhow::Result<()> {
        let settings = args(&[
            "--aggregated-apiserver-addr",
            "127.0.0.1:0",
            "--aggregated-apiserver-self-signed",
            "--aggregated-apiserver-url",
            "https://127.0.0.1:8444",
        ])?
        .settings()?
        .context("served")?;
        let (endpoint, ca) = settings.register.context("registered")?;
        assert_eq!(
            endpoint,
            Endpoint::External {
                host: "127.0.0.1".to_owned(),
                port: 8444
            }
        );
        assert!(ca.starts_with(b"-----BEGIN CERTIFICATE-----"));
        Ok(())
    }

    #[test]
    fn a_service_registration_and_its_errors() -> anyhow::Result<()> {
        let settings = args(&[
            "--aggregated-apiserver-addr",
            "127.0.0.1:0",
            "--aggregated-apiserver-self-signed",
            "--aggregated-apiserver-service",
            "karmada-system/karmada-aggregated-apiserver:443",
        ])?
        .settings()?
        .context("served")?;
        assert!(matches!(
            settings.register,
            Some((
                Endpoint::Service {
                    port: Some(443),
                    ..
                },
                _
            ))
        ));
        let no_certificate = args(&["--aggregated-apiserver-addr", "127.0.0.1:0"])?
            .settings()
            .unwrap_err();
        assert!(format!("{no_certificate:#}").contains("serving certificate"));
        let plain = args(&[
            "--aggregated-apiserver-addr",
            "127.0.0.1:0",
            "--aggregated-apiserver-self-signed",
            "--aggregated-apiserver-url",
            "http://127.0.0.1:8444",
        ])?
        .settings()
        .unwrap_err();
        assert!(format!("{plain:#}").contains("--aggregated-apiserver-url"));
        Ok(())
    }
}
