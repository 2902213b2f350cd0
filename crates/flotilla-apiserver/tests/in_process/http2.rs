//! HTTP/2: the server offers `h2` and `http/1.1` by ALPN, as kube-apiserver does, and serves requests and watches
//! over either.

use std::sync::Arc;

use rustls_pki_types::CertificateDer;
use rustls_pki_types::pem::PemObject;

use super::common;

/// A TLS client configuration trusting `server`'s CA and offering `alpn`.
pub(crate) fn tls(
    server: &flotilla_apiserver::RunningServer,
    alpn: &[&[u8]],
) -> rustls::ClientConfig {
    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(server.ca_pem().as_bytes()) {
        roots.add(cert.expect("CA PEM")).expect("CA");
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut tls = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("versions")
        .with_root_certificates(roots)
        .with_no_client_auth();
    tls.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    tls
}

pub(crate) fn client(
    server: &flotilla_apiserver::RunningServer,
    alpn: &[&[u8]],
) -> reqwest::Client {
    reqwest::Client::builder()
        .use_preconfigured_tls(tls(server, alpn))
        .build()
        .expect("client")
}

#[tokio::test]
async fn requests_and_watches_are_served_over_http2_and_http1() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (server, _) = common::start(dir.path()).await;
    let token = server.admin_token().to_owned();
    for (alpn, version) in [
        (
            &[b"h2".as_slice(), b"http/1.1"][..],
            reqwest::Version::HTTP_2,
        ),
        (&[b"http/1.1".as_slice()][..], reqwest::Version::HTTP_11),
    ] {
        let http = client(&server, alpn);
        let url = format!("{}/api/v1/namespaces/default/configmaps", server.url());
        let watch = http
            .get(format!("{url}?watch=true&timeoutSeconds=5"))
            .bearer_auth(&token)
            .send()
            .await
            .expect("watch");
        assert_eq!(watch.version(), version);
        let name = format!("over-{version:?}")
            .to_lowercase()
            .replace(['/', '.'], "-");
        let created = http
            .post(&url)
            .bearer_auth(&token)
            .json(&serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}}))
            .send()
            .await
            .expect("create");
        assert_eq!(created.status(), 201, "{:?}", created.text().await);
        let mut watch = watch;
        let mut seen = String::new();
        while let Some(chunk) = watch.chunk().await.expect("chunk") {
            seen.push_str(&String::from_utf8_lossy(&chunk));
            if seen.contains(&format!("\"name\":\"{name}\"")) {
                break;
            }
        }
        assert!(seen.contains("\"type\":\"ADDED\""), "{seen}");
    }
    server.shutdown().await;
}
