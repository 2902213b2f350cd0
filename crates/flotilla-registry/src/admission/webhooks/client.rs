//! Reaching a webhook: its `clientConfig` (`url`, or `service` with `path` and `port`, and `caBundle`) turned
//! into an HTTPS request, with one client kept per trust and address.
//!
//! A `service` reference is dialled at an address of the Service's endpoints (the embedded server has no service
//! network to route a cluster IP), or its external name, while TLS still verifies the name
//! `<service>.<namespace>.svc`, as kube-apiserver does.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rustls_pki_types::CertificateDer;
use rustls_pki_types::pem::PemObject;
use serde_json::Value;

use flotilla_store::ResKey;
use flotilla_store::Store;

/// Where and how to call one webhook.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Endpoint {
    url: String,
    ca_bundle: Vec<u8>,
    /// The host name of `url` and the address to dial for it, for Service references.
    resolve: Option<(String, SocketAddr)>,
}

/// HTTPS clients for webhooks, one per endpoint (a client keeps its connections).
#[derive(Default)]
pub(super) struct Clients {
    clients: Mutex<HashMap<Endpoint, reqwest::Client>>,
}

impl Clients {
    /// POSTs `review` to the webhook `client_config` names and returns its decoded reply; `Err` says why the call
    /// failed, in the words kube-apiserver's errors use.
    pub(super) async fn call(
        &self,
        store: &Store,
        client_config: Option<&Value>,
        review: &Value,
        timeout: Duration,
    ) -> Result<Value, String> {
        let endpoint = endpoint(store, client_config.unwrap_or(&Value::Null))?;
        let client = self.client(&endpoint)?;
        let response = client
            .post(&endpoint.url)
            .timeout(timeout)
            .header(http::header::ACCEPT, "application/json")
            .json(review)
            .send()
            .await
            .map_err(|e| {
                format!(
                    "failed to call webhook: Post {:?}: {}",
                    endpoint.url,
                    chain(&e)
                )
            })?;
        let status = response.status();
        let body = response
            .bytes()
            .await
            .map_err(|e| format!("failed to read the webhook's response: {}", chain(&e)))?;
        if !status.is_success() {
            return Err(format!(
                "received invalid webhook response: the server responded with {status}: {}",
                String::from_utf8_lossy(&body)
                    .chars()
                    .take(256)
                    .collect::<String>()
            ));
        }
        serde_json::from_slice(&body).map_err(|e| format!("received invalid webhook response: {e}"))
    }

    fn client(&self, endpoint: &Endpoint) -> Result<reqwest::Client, String> {
        let mut clients = self.clients.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(client) = clients.get(endpoint) {
            return Ok(client.clone());
        }
        let mut builder = reqwest::Client::builder()
            .use_preconfigured_tls(tls_config(&endpoint.ca_bundle)?)
            .no_proxy();
        if let Some((host, addr)) = &endpoint.resolve {
            builder = builder.resolve(host, *addr);
        }
        let client = builder
            .build()
            .map_err(|e| format!("failed to build a client for the webhook: {e}"))?;
        clients.insert(endpoint.clone(), client.clone());
        Ok(client)
    }
}

/// The error and its sources, as one line.
fn chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

fn endpoint(store: &Store, config: &Value) -> Result<Endpoint, String> {
    use base64::Engine;
    let ca_bundle = match config.get("caBundle").and_then(Value::as_str) {
        Some(b64) => base64::engine::general_purpose::STANDARD
            .decode(b64)
            .map_err(|e| format!("clientConfig.caBundle is not base64: {e}"))?,
        None => Vec::new(),
    };
    if let Some(url) = config.get("url").and_then(Value::as_str) {
        return Ok(Endpoint {
            url: url.to_owned(),
            ca_bundle,
            resolve: None,
        });
    }
    let service = config
        .get("service")
        .ok_or("clientConfig has neither url nor service")?;
    let text = |key: &str| service.get(key).and_then(Value::as_str).unwrap_or("");
    let (namespace, name) = (text("namespace"), text("name"));
    let path = service.get("path").and_then(Value::as_str).unwrap_or("/");
    let port = service
        .get("port")
        .and_then(Value::as_u64)
        .and_then(|p| u16::try_from(p).ok())
        .unwrap_or(443);
    let host = format!("{name}.{namespace}.svc");
    let (dial, dial_port) = service_address(store, namespace, name, port)?;
    let resolve = match dial {
        Dial::Ip(ip) => Some((host.clone(), SocketAddr::new(ip, dial_port))),
        Dial::Name(external) => {
            return Ok(Endpoint {
                url: format!("https://{external}:{dial_port}{path}"),
                ca_bundle,
                resolve: None,
            });
        }
    };
    Ok(Endpoint {
        url: format!("https://{host}:{dial_port}{path}"),
        ca_bundle,
        resolve,
    })
}

enum Dial {
    Ip(IpAddr),
    Name(String),
}

/// Where Service `namespace/name`'s `port` is served: an endpoint address and its target port, or the external
/// name of an ExternalName Service.
fn service_address(
    store: &Store,
    namespace: &str,
    name: &str,
    port: u16,
) -> Result<(Dial, u16), String> {
    let service = store
        .get(&ResKey::new("", "services"), namespace, name)
        .ok_or_else(|| format!("service \"{name}\" not found in namespace \"{namespace}\""))?;
    if service.pointer("/spec/type").and_then(Value::as_str) == Some("ExternalName") {
        let external = service
            .pointer("/spec/externalName")
            .and_then(Value::as_str)
            .unwrap_or_default();
        return Ok((Dial::Name(external.to_owned()), port));
    }
    let service_port = service
        .pointer("/spec/ports")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .find(|p| p.get("port").and_then(Value::as_u64) == Some(u64::from(port)))
        .ok_or_else(|| format!("service \"{namespace}/{name}\" has no port {port}"))?;
    let port_name = service_port
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or("");
    let endpoints = store
        .get(&ResKey::new("", "endpoints"), namespace, name)
        .ok_or_else(|| format!("service \"{namespace}/{name}\" has no endpoints"))?;
    for subset in endpoints
        .get("subsets")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let target = subset
            .get("ports")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .find(|p| p.get("name").and_then(Value::as_str).unwrap_or("") == port_name)
            .and_then(|p| p.get("port").and_then(Value::as_u64))
            .and_then(|p| u16::try_from(p).ok());
        let ip = subset
            .get("addresses")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|a| a.get("ip").and_then(Value::as_str))
            .find_map(|ip| ip.parse::<IpAddr>().ok());
        if let (Some(ip), Some(target)) = (ip, target) {
            return Ok((Dial::Ip(ip), target));
        }
    }
    Err(format!(
        "service \"{namespace}/{name}\" has no ready endpoint for port {port}"
    ))
}

/// TLS trusting the `caBundle` certificates, or the machine's roots when there are none (as kube-apiserver).
fn tls_config(ca_bundle: &[u8]) -> Result<rustls::ClientConfig, String> {
    let mut roots = rustls::RootCertStore::empty();
    if ca_bundle.is_empty() {
        roots.add_parsable_certificates(rustls_native_certs::load_native_certs().certs);
    } else {
        for cert in CertificateDer::pem_slice_iter(ca_bundle) {
            let cert = cert.map_err(|e| format!("clientConfig.caBundle: {e}"))?;
            roots
                .add(cert)
                .map_err(|e| format!("clientConfig.caBundle: {e}"))?;
        }
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    Ok(rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_root_certificates(roots)
        .with_no_client_auth())
}
