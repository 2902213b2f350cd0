//! What the serving tests share: a certificate authority of their own, a server with a probe route and a body
//! route on loopback, and a probe that opens a new connection each time.
#![allow(dead_code)]

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use flotilla_serving::{BodyError, Options, RequestBody, Server, Stats, Transport};
use http::{Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, KeyUsagePurpose};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// How long any condition may take: generous, as tests share two cores with builds.
pub(crate) const PATIENCE: Duration = Duration::from_secs(30);

/// Polls `check` every 20 ms until it returns `Some`; fails the test after `patience`.
pub(crate) async fn eventually<T, F, Fut>(patience: Duration, what: &str, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let deadline = tokio::time::Instant::now() + patience;
    loop {
        if let Some(value) = check().await {
            return value;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out after {patience:?} waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A CA and the serving certificates it signs for 127.0.0.1.
pub(crate) struct Authority {
    issuer: Issuer<'static, KeyPair>,
    /// The CA certificate, PEM.
    pub(crate) ca_pem: String,
}

/// A serving certificate: PEMs and the common name that tells it apart.
pub(crate) struct Leaf {
    pub(crate) cert_pem: String,
    pub(crate) key_pem: String,
}

impl Authority {
    pub(crate) fn new() -> Self {
        let mut params = CertificateParams::new(Vec::<String>::new()).expect("CA parameters");
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        let key = KeyPair::generate().expect("CA key");
        let ca_pem = params.self_signed(&key).expect("CA certificate").pem();
        Self {
            issuer: Issuer::new(params, key),
            ca_pem,
        }
    }

    /// A serving certificate for 127.0.0.1 whose common name is `name`.
    pub(crate) fn leaf(&self, name: &str) -> Leaf {
        let mut params = CertificateParams::new(vec!["127.0.0.1".to_owned()]).expect("parameters");
        params.distinguished_name.push(DnType::CommonName, name);
        let key = KeyPair::generate().expect("serving key");
        let cert = params
            .signed_by(&key, &self.issuer)
            .expect("serving certificate");
        Leaf {
            cert_pem: cert.pem(),
            key_pem: key.serialize_pem(),
        }
    }

    /// A client configuration trusting this CA only.
    pub(crate) fn client(&self) -> Arc<rustls::ClientConfig> {
        let mut roots = rustls::RootCertStore::empty();
        for cert in CertificateDer::pem_slice_iter(self.ca_pem.as_bytes()) {
            roots.add(cert.expect("CA PEM")).expect("CA root");
        }
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .expect("protocol versions")
            .with_root_certificates(roots)
            .with_no_client_auth();
        Arc::new(config)
    }
}

/// A server configuration serving `resolver`'s certificate over HTTP/1.1.
pub(crate) fn server_config(
    resolver: Arc<dyn rustls::server::ResolvesServerCert>,
) -> Arc<rustls::ServerConfig> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("protocol versions")
        .with_no_client_auth()
        .with_cert_resolver(resolver);
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Arc::new(config)
}

/// A server under test.
pub(crate) struct Running {
    pub(crate) addr: SocketAddr,
    pub(crate) stats: Arc<Stats>,
    pub(crate) shutdown: CancellationToken,
    pub(crate) task: JoinHandle<()>,
}

/// Serves on a loopback port: `/probe` answers `ok`; `/body` reads the whole body and answers its length, or
/// 408 when the body timed out.
pub(crate) async fn serve(transport: Transport, options: Options) -> Running {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let server = Server::new(listener, transport, |_peer: &flotilla_serving::Peer| {
        hyper::service::service_fn(handle)
    })
    .options(options);
    let addr = server.local_addr().expect("address");
    let stats = server.stats();
    let shutdown = CancellationToken::new();
    let task = tokio::spawn(server.run(shutdown.clone()));
    Running {
        addr,
        stats,
        shutdown,
        task,
    }
}

async fn handle(request: Request<RequestBody>) -> Result<Response<Full<Bytes>>, Infallible> {
    let (status, body) = match request.uri().path() {
        "/probe" => (StatusCode::OK, "ok".to_owned()),
        "/body" => match request.into_body().collect().await {
            Ok(body) => (StatusCode::OK, body.to_bytes().len().to_string()),
            Err(BodyError::TimedOut(_)) => (StatusCode::REQUEST_TIMEOUT, "timed out".to_owned()),
            Err(error) => (StatusCode::BAD_REQUEST, error.to_string()),
        },
        _ => (StatusCode::NOT_FOUND, String::new()),
    };
    let mut response = Response::new(Full::new(Bytes::from(body)));
    *response.status_mut() = status;
    Ok(response)
}

/// The whole answer to `GET /probe` on a new connection (TLS when `tls` is given), and how long it took.
pub(crate) async fn probe(
    addr: SocketAddr,
    tls: Option<&Arc<rustls::ClientConfig>>,
) -> (String, Duration) {
    let started = tokio::time::Instant::now();
    let answer = request(
        addr,
        tls,
        "GET /probe HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n",
    )
    .await;
    (answer, started.elapsed())
}

/// Sends `raw` on a new connection and reads until the server closes it.
pub(crate) async fn request(
    addr: SocketAddr,
    tls: Option<&Arc<rustls::ClientConfig>>,
    raw: &str,
) -> String {
    let tcp = TcpStream::connect(addr).await.expect("connect");
    let mut answer = Vec::new();
    match tls {
        Some(config) => {
            let name = ServerName::try_from("127.0.0.1").expect("name");
            let mut stream = tokio_rustls::TlsConnector::from(config.clone())
                .connect(name, tcp)
                .await
                .expect("TLS handshake");
            stream.write_all(raw.as_bytes()).await.expect("write");
            // A close without close_notify ends the read with an error after the answer; the answer counts.
            let _ = stream.read_to_end(&mut answer).await;
        }
        None => {
            let mut stream = tcp;
            stream.write_all(raw.as_bytes()).await.expect("write");
            let _ = stream.read_to_end(&mut answer).await;
        }
    }
    String::from_utf8_lossy(&answer).into_owned()
}

/// Raises this process's open-file limit to its hard limit (at most `want`), for tests that hold thousands of
/// sockets on machines whose soft limit is 1,024.
pub(crate) fn raise_open_files(want: u64) {
    use rustix::process::{Resource, getrlimit, setrlimit};
    let limit = getrlimit(Resource::Nofile);
    let current = limit.current.unwrap_or(u64::MAX);
    if current >= want {
        return;
    }
    let raised = limit.maximum.map_or(want, |max| max.min(want));
    setrlimit(
        Resource::Nofile,
        rustix::process::Rlimit {
            current: Some(raised),
            maximum: limit.maximum,
        },
    )
    .expect("raise the open-file limit");
}
