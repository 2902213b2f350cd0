//! HTTPS clients for webhooks, one per client config, as Karmada caches them: the server is verified against
//! `caBundle` added to the system roots; a `service` reference is resolved through the control plane.
//!
//! Invariants: a cached client never outlives the configurations that use it (see [`Clients::retain`]); only
//! HTTPS is spoken, HTTP/1.1 only, no proxies and no redirects.

use std::collections::{HashMap, HashSet};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, OnceLock};

use k8s_openapi::api::admissionregistration::v1::{ServiceReference, WebhookClientConfig};
use k8s_openapi::api::core::v1::Service;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;

use super::error::{Reason, ServiceError};

/// A client and the URL it calls.
#[derive(Debug)]
pub(crate) struct Endpoint {
    /// The HTTP client, with the TLS roots of this client config.
    pub client: reqwest::Client,
    /// The URL to post to (before the `timeout` query parameter is added).
    pub url: reqwest::Url,
}

/// What identifies a client: the whole client config.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct ClientKey {
    url: Option<String>,
    service: Option<(String, String, Option<String>, Option<i32>)>,
    ca_bundle: Option<Vec<u8>>,
}

impl ClientKey {
    fn of(config: &WebhookClientConfig) -> Self {
        ClientKey {
            url: config.url.clone(),
            service: config
                .service
                .as_ref()
                .map(|s| (s.namespace.clone(), s.name.clone(), s.path.clone(), s.port)),
            ca_bundle: config.ca_bundle.as_ref().map(|bytes| bytes.0.clone()),
        }
    }
}

/// Clients cached per client config.
#[derive(Default)]
pub(crate) struct Clients {
    cache: Mutex<HashMap<ClientKey, Arc<Endpoint>>>,
    kube: Option<kube::Client>,
}

impl Clients {
    /// A cache that resolves `service` references through `kube` when given, and through DNS otherwise.
    pub(super) fn new(kube: Option<kube::Client>) -> Self {
        Clients {
            cache: Mutex::default(),
            kube,
        }
    }

    /// The endpoint for `config`, built on first use.
    pub(super) fn get(&self, config: &WebhookClientConfig) -> Result<Arc<Endpoint>, Reason> {
        let key = ClientKey::of(config);
        if let Some(endpoint) = self.lock().get(&key) {
            return Ok(endpoint.clone());
        }
        // Built outside the lock: building reads the system roots the first time.
        let endpoint = Arc::new(build_endpoint(config, self.kube.as_ref())?);
        Ok(self.lock().entry(key).or_insert(endpoint).clone())
    }

    /// Drops the clients no configuration in `configs` uses any more.
    pub(super) fn retain<'a>(&self, configs: impl Iterator<Item = &'a WebhookClientConfig>) {
        let live: HashSet<ClientKey> = configs.map(ClientKey::of).collect();
        self.lock().retain(|key, _| live.contains(key));
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<ClientKey, Arc<Endpoint>>> {
        // The map holds no invariant a panicking holder could break, so a poisoned lock is still usable.
        self.cache
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

fn build_endpoint(
    config: &WebhookClientConfig,
    kube: Option<&kube::Client>,
) -> Result<Endpoint, Reason> {
    let tls = tls_config(config.ca_bundle.as_ref().map(|bytes| bytes.0.as_slice()))?;
    let builder = reqwest::Client::builder()
        .tls_backend_preconfigured(tls)
        .https_only(true)
        .http1_only()
        .no_proxy()
        .redirect(reqwest::redirect::Policy::none());
    // `service` wins when both are set, as in Karmada.
    let (builder, url) = match (&config.service, &config.url) {
        (Some(service), _) => {
            let port = service_port(service)?;
            let host = format!("{}.{}.svc", service.name, service.namespace);
            let path = service.path.as_deref().unwrap_or_default();
            let separator = if path.is_empty() || path.starts_with('/') {
                ""
            } else {
                "/"
            };
            let url = parse_url(&format!("https://{host}:{port}{separator}{path}"))?;
            let builder = match kube {
                Some(kube) => builder.dns_resolver(ServiceResolver {
                    kube: kube.clone(),
                    namespace: service.namespace.clone(),
                    name: service.name.clone(),
                    host,
                    port,
                }),
                None => builder,
            };
            (builder, url)
        }
        (None, Some(url)) => (builder, parse_url(url)?),
        (None, None) => {
            return Err(Reason::InvalidClientConfig(
                "neither url nor service is set".into(),
            ));
        }
    };
    let client = builder.build().map_err(Reason::BuildClient)?;
    Ok(Endpoint { client, url })
}

fn service_port(service: &ServiceReference) -> Result<u16, Reason> {
    let port = service.port.unwrap_or(443);
    u16::try_from(port)
        .ok()
        .filter(|port| *port != 0)
        .ok_or_else(|| {
            Reason::InvalidClientConfig(format!("service.port {port} is not a valid port"))
        })
}

fn parse_url(text: &str) -> Result<reqwest::Url, Reason> {
    let url = reqwest::Url::parse(text).map_err(|error| {
        Reason::InvalidClientConfig(format!("url {text:?} does not parse: {error}"))
    })?;
    if url.scheme() != "https" {
        return Err(Reason::InvalidClientConfig(format!(
            "url {text:?} is not https"
        )));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(Reason::InvalidClientConfig(format!(
            "url {text:?} has no host"
        )));
    }
    Ok(url)
}

/// A rustls client config trusting the system roots plus the certificates of `ca_bundle` (PEM).
fn tls_config(ca_bundle: Option<&[u8]>) -> Result<rustls::ClientConfig, Reason> {
    let mut roots = rustls::RootCertStore::empty();
    roots.add_parsable_certificates(system_roots().iter().cloned());
    if let Some(pem) = ca_bundle {
        let mut added = 0;
        for cert in CertificateDer::pem_slice_iter(pem) {
            let cert = cert.map_err(|error| Reason::InvalidCaBundle(error.to_string()))?;
            roots
                .add(cert)
                .map_err(|error| Reason::InvalidCaBundle(error.to_string()))?;
            added += 1;
        }
        if added == 0 {
            return Err(Reason::InvalidCaBundle("no PEM certificate found".into()));
        }
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|error| Reason::InvalidCaBundle(error.to_string()))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(config)
}

/// The machine's trusted roots, read once; unreadable stores are skipped (the caBundle still applies).
fn system_roots() -> &'static [CertificateDer<'static>] {
    static ROOTS: OnceLock<Vec<CertificateDer<'static>>> = OnceLock::new();
    ROOTS.get_or_init(|| {
        let found = rustls_native_certs::load_native_certs();
        for error in &found.errors {
            tracing::debug!(%error, "skipping unreadable system certificate");
        }
        found.certs
    })
}

/// Resolves `<name>.<namespace>.svc` the way Karmada does: the Service in the control plane decides the address
/// (ClusterIP, NodePort and LoadBalancer: its cluster IP; ExternalName: its external name); without that Service,
/// plain DNS. Resolution runs per new connection; the TLS server name stays `<name>.<namespace>.svc`.
#[derive(Clone)]
struct ServiceResolver {
    kube: kube::Client,
    namespace: String,
    name: String,
    host: String,
    port: u16,
}

impl Resolve for ServiceResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let this = self.clone();
        let requested = name.as_str().to_owned();
        Box::pin(async move {
            let target = if requested == this.host {
                this.target().await?
            } else {
                requested
            };
            Ok(lookup(&target, this.port).await?)
        })
    }
}

impl ServiceResolver {
    /// The host or IP to dial for the Service.
    async fn target(&self) -> Result<String, ServiceError> {
        let api = kube::Api::<Service>::namespaced(self.kube.clone(), &self.namespace);
        let service = api
            .get_opt(&self.name)
            .await
            .map_err(|source| ServiceError::Get {
                namespace: self.namespace.clone(),
                name: self.name.clone(),
                source,
            })?;
        let Some(service) = service else {
            return Ok(self.host.clone());
        };
        let spec = service.spec.unwrap_or_default();
        let service_type = spec.type_.as_deref().unwrap_or("ClusterIP");
        match service_type {
            "ClusterIP" | "NodePort" | "LoadBalancer" => {
                let cluster_ip = spec.cluster_ip.unwrap_or_default();
                if cluster_ip == "None" {
                    return Err(ServiceError::Headless {
                        namespace: self.namespace.clone(),
                        name: self.name.clone(),
                    });
                }
                if cluster_ip.is_empty() {
                    return Err(ServiceError::NoClusterIp {
                        namespace: self.namespace.clone(),
                        name: self.name.clone(),
                    });
                }
                let exposes_port = spec
                    .ports
                    .unwrap_or_default()
                    .iter()
                    .any(|port| port.port == i32::from(self.port));
                if !exposes_port {
                    return Err(ServiceError::PortNotFound {
                        namespace: self.namespace.clone(),
                        name: self.name.clone(),
                        port: self.port,
                    });
                }
                Ok(cluster_ip)
            }
            "ExternalName" => Ok(spec.external_name.unwrap_or_default()),
            other => Err(ServiceError::UnsupportedType {
                namespace: self.namespace.clone(),
                name: self.name.clone(),
                service_type: other.to_owned(),
            }),
        }
    }
}

async fn lookup(host: &str, port: u16) -> Result<Addrs, ServiceError> {
    let addrs: Vec<SocketAddr> = tokio::net::lookup_host((host, port))
        .await
        .map_err(|source| ServiceError::Lookup {
            host: host.to_owned(),
            source,
        })?
        .collect();
    Ok(Box::new(addrs.into_iter()))
}
