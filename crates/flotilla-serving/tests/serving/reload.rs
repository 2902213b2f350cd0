//! Serving certificates replaced on disk under a running server: new connections see the new certificate
//! within the poll period, and a file that does not parse keeps the one served.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use flotilla_serving::certificate::{Files, Reloading};
use flotilla_serving::{Options, Transport};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use tokio::net::TcpStream;

use crate::support::{Authority, Leaf, serve, server_config};

const POLL: Duration = Duration::from_millis(200);
/// The poll period plus what a busy machine adds.
const PATIENCE: Duration = Duration::from_secs(10);

fn write(files: &Files, leaf: &Leaf) {
    std::fs::write(&files.cert, &leaf.cert_pem).expect("write the certificate");
    std::fs::write(&files.key, &leaf.key_pem).expect("write the key");
}

fn der(leaf: &Leaf) -> CertificateDer<'static> {
    CertificateDer::from_pem_slice(leaf.cert_pem.as_bytes()).expect("certificate PEM")
}

/// The leaf certificate a new TLS connection to `addr` is served.
async fn served(
    addr: std::net::SocketAddr,
    client: &Arc<rustls::ClientConfig>,
) -> CertificateDer<'static> {
    let tcp = TcpStream::connect(addr).await.expect("connect");
    let name = ServerName::try_from("127.0.0.1").expect("name");
    let tls = tokio_rustls::TlsConnector::from(client.clone())
        .connect(name, tcp)
        .await
        .expect("TLS handshake");
    tls.get_ref().1.peer_certificates().expect("a certificate")[0]
        .clone()
        .into_owned()
}

fn files(dir: &Path) -> Files {
    Files {
        cert: dir.join("tls.crt"),
        key: dir.join("tls.key"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replaced_certificate_is_served_and_a_broken_one_is_not() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let files = files(dir.path());
    let authority = Authority::new();
    let (a, b) = (authority.leaf("a"), authority.leaf("b"));
    write(&files, &a);
    let resolver = Reloading::watch(files.clone(), POLL).expect("certificate A");
    let server = serve(
        Transport::Tls(server_config(resolver.clone())),
        Options::default(),
    )
    .await;
    let client = authority.client();
    assert_eq!(served(server.addr, &client).await, der(&a));

    write(&files, &b);
    let started = tokio::time::Instant::now();
    crate::support::eventually(PATIENCE, "certificate B is served", || {
        let client = client.clone();
        let b = der(&b);
        async move { (served(server.addr, &client).await == b).then_some(()) }
    })
    .await;
    eprintln!(
        "certificate B served {:?} after it was written (poll {POLL:?})",
        started.elapsed()
    );

    std::fs::write(&files.cert, b"not a certificate").expect("write garbage");
    crate::support::eventually(PATIENCE, "the garbage is refused", || {
        let refused = resolver.refused();
        async move { (refused >= 1).then_some(()) }
    })
    .await;
    assert_eq!(
        served(server.addr, &client).await,
        der(&b),
        "the garbage replaced B"
    );
    server.shutdown.cancel();
    server.task.await.expect("server task");
}

#[tokio::test]
async fn an_unusable_certificate_names_its_file() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let files = files(dir.path());
    let authority = Authority::new();
    let (a, b) = (authority.leaf("a"), authority.leaf("b"));
    write(&files, &a);
    std::fs::write(
        &files.cert,
        b"-----BEGIN CERTIFICATE-----\nnot base64!\n-----END CERTIFICATE-----\n",
    )
    .expect("write garbage");
    let error = Reloading::watch(files.clone(), POLL).expect_err("garbage refused");
    assert!(error.to_string().contains("tls.crt"), "{error}");
    // A key of another certificate.
    std::fs::write(&files.cert, &a.cert_pem).expect("write A");
    std::fs::write(&files.key, &b.key_pem).expect("write B's key");
    let error = Reloading::watch(files, POLL).expect_err("mismatch refused");
    let message = error.to_string();
    assert!(
        message.contains("tls.crt") && message.contains("tls.key"),
        "{message}"
    );
}
