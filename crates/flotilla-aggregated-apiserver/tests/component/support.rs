//! The harness: an embedded control plane with Karmada's CRDs, the request-header ConfigMap for a test
//! front-proxy CA, the aggregated API server serving in-process, and callers that present a front-proxy
//! client certificate and `X-Remote-*` headers as the aggregator does.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use flotilla_apiserver::{RunningServer, Server, ServerConfig};
use flotilla_webhook::{TlsIdentity, generate_self_signed};
use http::{HeaderValue, Request, Response};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper_util::client::legacy::Client as HttpClient;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{ObjectMeta, Patch, PatchParams, PostParams};
use kube::{Api, Client};
use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose,
};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use serde_json::Value;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

pub(crate) use flotilla_testing::{eventually, eventually_within};

/// A request body.
pub(crate) type Body = BoxBody<Bytes, std::io::Error>;

/// A body holding `bytes`.
pub(crate) fn full(bytes: impl Into<Bytes>) -> Body {
    Full::new(bytes.into())
        .map_err(|never: Infallible| match never {})
        .boxed()
}

/// A CA that signs client certificates.
pub(crate) struct Ca {
    /// The CA certificate, PEM.
    pub(crate) pem: String,
    issuer: Issuer<'static, KeyPair>,
}

impl Ca {
    /// A new CA named `name`.
    pub(crate) fn new(name: &str) -> Ca {
        let mut params = CertificateParams::new(Vec::<String>::new()).expect("CA params");
        params.distinguished_name.push(DnType::CommonName, name);
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        let key = KeyPair::generate().expect("CA key");
        let cert = params.self_signed(&key).expect("CA certificate");
        Ca {
            pem: cert.pem(),
            issuer: Issuer::new(params, key),
        }
    }

    /// A client certificate with common name `cn` (certificate PEM, key PEM).
    pub(crate) fn client(&self, cn: &str) -> (String, String) {
        let mut params = CertificateParams::new(Vec::<String>::new()).expect("client params");
        params.distinguished_name.push(DnType::CommonName, cn);
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
        params.use_authority_key_identifier_extension = true;
        let key = KeyPair::generate().expect("client key");
        let cert = params
            .signed_by(&key, &self.issuer)
            .expect("client certificate");
        (cert.pem(), key.serialize_pem())
    }
}

/// The ConfigMap `data` kube-apiserver publishes, trusting `ca` for the front proxy `front-proxy-client`.
pub(crate) fn request_header_data(ca: &Ca) -> BTreeMap<String, String> {
    [
        ("requestheader-client-ca-file", ca.pem.as_str()),
        ("requestheader-allowed-names", r#"["front-proxy-client"]"#),
        ("requestheader-username-headers", r#"["X-Remote-User"]"#),
        ("requestheader-uid-headers", r#"["X-Remote-Uid"]"#),
        ("requestheader-group-headers", r#"["X-Remote-Group"]"#),
        (
            "requestheader-extra-headers-prefix",
            r#"["X-Remote-Extra-"]"#,
        ),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.to_owned()))
    .collect()
}

/// Writes the request-header ConfigMap (replacing whatever the server published).
pub(crate) async fn publish_request_header(client: &Client, data: BTreeMap<String, String>) {
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), "kube-system");
    let map = ConfigMap {
        metadata: ObjectMeta {
            name: Some("extension-apiserver-authentication".into()),
            namespace: Some("kube-system".into()),
            ..ObjectMeta::default()
        },
        data: Some(data),
        ..ConfigMap::default()
    };
    api.patch(
        "extension-apiserver-authentication",
        &PatchParams::apply("test").force(),
        &Patch::Apply(&map),
    )
    .await
    .expect("the request-header ConfigMap is written");
}

/// An embedded API server in a temporary directory.
pub(crate) struct Embedded {
    /// The server.
    pub(crate) server: RunningServer,
    /// An admin client.
    pub(crate) client: Client,
    _dir: tempfile::TempDir,
}

impl Embedded {
    /// Starts one.
    pub(crate) async fn start() -> Embedded {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let config = ServerConfig::new("127.0.0.1:0".parse().expect("an address"), dir.path());
        let server = Server::start(config).await.expect("the API server starts");
        let client = flotilla_testing::client_from_yaml(&server.kubeconfig("test"), None).await;
        Embedded {
            server,
            client,
            _dir: dir,
        }
    }
}

/// The control plane with the aggregated API server in front of it.
pub(crate) struct Env {
    /// The control plane.
    pub(crate) control: Embedded,
    /// The front-proxy CA the control plane publishes.
    pub(crate) front_proxy_ca: Ca,
    /// The aggregated server's address.
    pub(crate) url: String,
    /// The CA of its serving certificate.
    pub(crate) serving_ca: String,
    shutdown: CancellationToken,
    served: tokio::task::JoinHandle<()>,
}

impl Env {
    /// Starts the control plane (CRDs installed, request-header ConfigMap published) and the server.
    pub(crate) async fn start() -> Env {
        Env::start_with(|client| client).await
    }

    /// As [`Env::start`], the server reaching the control plane through `through(admin client)`: a test may
    /// answer some of its requests itself.
    pub(crate) async fn start_with(through: impl FnOnce(Client) -> Client) -> Env {
        let control = Embedded::start().await;
        install_crds(&control.client).await;
        // The tests' ordinary caller may do everything the control plane serves.
        grant_cluster_admin(&control.client, "tom").await;
        let front_proxy_ca = Ca::new("front-proxy-ca");
        publish_request_header(&control.client, request_header_data(&front_proxy_ca)).await;
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("a port");
        let addr = listener.local_addr().expect("an address");
        let generated = generate_self_signed(&[
            "127.0.0.1",
            flotilla_aggregated_apiserver::names::SERVICE_HOST,
        ])
        .expect("a serving certificate");
        let shutdown = CancellationToken::new();
        let identity: TlsIdentity = generated.identity.clone();
        let client = through(control.client.clone());
        let stop = shutdown.clone();
        let served = tokio::spawn(async move {
            flotilla_aggregated_apiserver::serve(listener, &identity, client, stop)
                .await
                .expect("the aggregated API server serves");
        });
        let env = Env {
            control,
            front_proxy_ca,
            url: format!("https://{addr}"),
            serving_ca: String::from_utf8(generated.ca_pem).expect("PEM"),
            shutdown,
            served,
        };
        let anonymous = env.caller_with(None);
        eventually("the aggregated API server to be ready", || async {
            let response = anonymous
                .send(get(&format!("{}/readyz", env.url)))
                .await
                .ok()?;
            (response.status() == 200).then_some(())
        })
        .await;
        env
    }

    /// A caller presenting the front proxy's certificate (common name `front-proxy-client`).
    pub(crate) fn front_proxy(&self) -> Caller {
        let (cert, key) = self.front_proxy_ca.client("front-proxy-client");
        self.caller_with(Some((cert, key)))
    }

    /// A caller presenting `identity` (certificate and key PEM), or no certificate.
    pub(crate) fn caller_with(&self, identity: Option<(String, String)>) -> Caller {
        Caller::new(&self.serving_ca, identity)
    }

    /// A kube client reaching the aggregated server as the front proxy asserting `user` in `groups`.
    pub(crate) async fn kube_as(&self, user: &str, groups: &[&str]) -> Client {
        let (cert, key) = self.front_proxy_ca.client("front-proxy-client");
        let b64 = |text: &str| {
            use base64::Engine;
            base64::engine::general_purpose::STANDARD.encode(text)
        };
        let kubeconfig = serde_json::json!({
            "apiVersion": "v1", "kind": "Config",
            "clusters": [{"name": "agg", "cluster": {"server": self.url, "certificate-authority-data": b64(&self.serving_ca)}}],
            "users": [{"name": "proxy", "user": {"client-certificate-data": b64(&cert), "client-key-data": b64(&key)}}],
            "contexts": [{"name": "agg", "context": {"cluster": "agg", "user": "proxy"}}],
            "current-context": "agg",
        });
        let kubeconfig: kube::config::Kubeconfig =
            serde_json::from_value(kubeconfig).expect("a kubeconfig");
        let mut config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
            .await
            .expect("a client configuration");
        config.headers.push((
            http::HeaderName::from_static("x-remote-user"),
            HeaderValue::from_str(user).expect("a header value"),
        ));
        for group in groups {
            config.headers.push((
                http::HeaderName::from_static("x-remote-group"),
                HeaderValue::from_str(group).expect("a header value"),
            ));
        }
        Client::try_from(config).expect("a client")
    }

    /// Stops the server and waits for it.
    pub(crate) async fn stop(self) {
        self.shutdown.cancel();
        self.served.await.expect("the server task ends");
    }
}

/// The aggregated API server registered with an embedded control plane's own aggregator, as `flotilla up` runs
/// it: clients (kubectl among them) talk to the control plane, which passes `cluster.karmada.io/v1alpha1` on.
pub(crate) struct Aggregated {
    /// The control plane.
    pub(crate) control: Embedded,
    shutdown: CancellationToken,
    served: tokio::task::JoinHandle<Result<(), flotilla_aggregated_apiserver::Error>>,
}

impl Aggregated {
    /// Starts the control plane (CRDs installed) and the server, and waits until the APIService is Available.
    pub(crate) async fn start() -> Aggregated {
        let control = Embedded::start().await;
        install_crds(&control.client).await;
        let generated = generate_self_signed(&[
            flotilla_aggregated_apiserver::names::SERVICE_HOST,
            "127.0.0.1",
        ])
        .expect("a certificate");
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("a port");
        let port = listener.local_addr().expect("an address").port();
        let shutdown = CancellationToken::new();
        let served = {
            let (identity, client, stop) = (
                generated.identity.clone(),
                control.client.clone(),
                shutdown.clone(),
            );
            tokio::spawn(async move {
                flotilla_aggregated_apiserver::serve(listener, &identity, client, stop).await
            })
        };
        let endpoint = flotilla_aggregated_apiserver::register::Endpoint::External {
            host: "127.0.0.1".into(),
            port,
        };
        flotilla_aggregated_apiserver::register::register(
            &control.client,
            &endpoint,
            &generated.ca_pem,
        )
        .await
        .expect("registered");
        flotilla_aggregated_apiserver::register::wait_available(
            &control.client,
            Duration::from_secs(60),
        )
        .await
        .expect("the APIService is Available");
        Aggregated {
            control,
            shutdown,
            served,
        }
    }

    /// Stops the server and waits for it.
    pub(crate) async fn stop(self) {
        self.shutdown.cancel();
        self.served
            .await
            .expect("the server task ends")
            .expect("the server stops cleanly");
    }
}

/// Installs Karmada's CRDs and waits until the Cluster CRD serves both its versions.
/// Binds ClusterRole `cluster-admin` to user `user` (the embedded servers enforce RBAC).
pub(crate) async fn grant_cluster_admin(client: &Client, user: &str) {
    use k8s_openapi::api::rbac::v1::ClusterRoleBinding;
    let binding: ClusterRoleBinding = serde_json::from_value(serde_json::json!({
        "metadata": {"name": format!("{user}-cluster-admin")},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}]}))
    .expect("binding");
    Api::<ClusterRoleBinding>::all(client.clone())
        .create(&PostParams::default(), &binding)
        .await
        .expect("binding created");
}

pub(crate) async fn install_crds(client: &Client) {
    let api: Api<CustomResourceDefinition> = Api::all(client.clone());
    for crd in flotilla_api::crds::all() {
        api.create(&PostParams::default(), &crd)
            .await
            .expect("a CRD is created");
    }
    eventually(
        "cluster.karmada.io to serve v1alpha1 and storage",
        || async {
            let v1alpha1 = client
                .list_api_group_resources("cluster.karmada.io/v1alpha1")
                .await
                .ok()?;
            let storage = client
                .list_api_group_resources("cluster.karmada.io/storage")
                .await
                .ok()?;
            (!v1alpha1.resources.is_empty() && !storage.resources.is_empty()).then_some(())
        },
    )
    .await;
}

/// An HTTPS client trusting the aggregated server, optionally presenting a client certificate.
#[derive(Clone)]
pub(crate) struct Caller {
    client: HttpClient<hyper_rustls::HttpsConnector<HttpConnector>, Body>,
}

impl Caller {
    /// A caller trusting `serving_ca`, presenting `identity` (certificate and key PEM) if given.
    pub(crate) fn new(serving_ca: &str, identity: Option<(String, String)>) -> Caller {
        let mut roots = rustls::RootCertStore::empty();
        for cert in CertificateDer::pem_slice_iter(serving_ca.as_bytes()) {
            roots.add(cert.expect("PEM")).expect("a root");
        }
        let builder = rustls::ClientConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .expect("protocol versions")
        .with_root_certificates(roots);
        let tls = match identity {
            Some((cert, key)) => {
                let chain = CertificateDer::pem_slice_iter(cert.as_bytes())
                    .collect::<Result<Vec<_>, _>>()
                    .expect("a chain");
                let key = PrivateKeyDer::from_pem_slice(key.as_bytes()).expect("a key");
                builder
                    .with_client_auth_cert(chain, key)
                    .expect("a client certificate")
            }
            None => builder.with_no_client_auth(),
        };
        let connector = hyper_rustls::HttpsConnectorBuilder::new()
            .with_tls_config(tls)
            .https_only()
            .enable_http1()
            .build();
        Caller {
            client: HttpClient::builder(TokioExecutor::new()).build(connector),
        }
    }

    /// Sends `request`.
    pub(crate) async fn send(
        &self,
        request: Request<Body>,
    ) -> Result<Response<Incoming>, hyper_util::client::legacy::Error> {
        self.client.request(request).await
    }

    /// Sends `request` and reads the whole answer: status, headers and body.
    pub(crate) async fn call(&self, request: Request<Body>) -> Answer {
        let response = self.send(request).await.expect("the server answers");
        let (parts, body) = response.into_parts();
        let body = body.collect().await.expect("a body").to_bytes();
        Answer {
            status: parts.status.as_u16(),
            headers: parts.headers,
            body,
        }
    }
}

/// A whole answer.
#[derive(Debug)]
pub(crate) struct Answer {
    /// The status code.
    pub(crate) status: u16,
    /// The headers.
    pub(crate) headers: http::HeaderMap,
    /// The body.
    pub(crate) body: Bytes,
}

impl Answer {
    /// The body as JSON.
    pub(crate) fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&self.body).into_owned()))
    }

    /// The body as text.
    pub(crate) fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// A GET of `url` with no headers.
pub(crate) fn get(url: &str) -> Request<Body> {
    Request::get(url).body(full("")).expect("a request")
}

/// A request of `method` on `url` as the front proxy asserting `user` in `groups`.
pub(crate) fn as_user(
    method: &str,
    url: &str,
    user: &str,
    groups: &[&str],
    body: Body,
) -> Request<Body> {
    let mut builder = Request::builder()
        .method(method)
        .uri(url)
        .header("x-remote-user", user);
    for group in groups {
        builder = builder.header("x-remote-group", *group);
    }
    builder.body(body).expect("a request")
}

/// `caller`'s answer to a request of `method` on `url` as the front proxy asserting an admin (group
/// `system:masters`), with `headers` and `body`.
pub(crate) async fn call_as_admin(
    caller: &Caller,
    method: &str,
    url: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> Answer {
    let mut request = as_user(
        method,
        url,
        "admin",
        &["system:masters", "system:authenticated"],
        full(body.to_owned()),
    );
    for (name, value) in headers {
        request.headers_mut().insert(
            http::HeaderName::from_bytes(name.as_bytes()).expect("a header name"),
            value.parse().expect("a header value"),
        );
    }
    caller.call(request).await
}

/// Runs kubectl with `args` against `kubeconfig`: its exit code, stdout and stderr; fails the test when it
/// has not ended within a minute.
pub(crate) async fn kubectl(
    bin: &str,
    kubeconfig: &Path,
    args: &[&str],
) -> (Option<i32>, String, String) {
    let mut command = tokio::process::Command::new(bin);
    command
        .env("KUBECONFIG", kubeconfig)
        .args(args)
        .kill_on_drop(true);
    let output = tokio::time::timeout(Duration::from_secs(60), command.output())
        .await
        .expect("kubectl ends, not hangs")
        .expect("kubectl runs");
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// The events of a JSON watch response, one per line.
pub(crate) struct Events {
    frames: http_body_util::BodyDataStream<Incoming>,
    pending: String,
}

impl Events {
    /// The events of `response`.
    pub(crate) fn of(response: Response<Incoming>) -> Events {
        Events {
            frames: response.into_body().into_data_stream(),
            pending: String::new(),
        }
    }

    /// The next event; fails the test when none comes within [`flotilla_testing::PATIENCE`] or the watch ends.
    pub(crate) async fn next(&mut self) -> Value {
        use futures::StreamExt;
        loop {
            if let Some(end) = self.pending.find('\n') {
                let line: String = self.pending.drain(..=end).collect();
                return serde_json::from_str(&line).expect("an event");
            }
            let chunk = tokio::time::timeout(flotilla_testing::PATIENCE, self.frames.next())
                .await
                .expect("an event in time")
                .expect("the watch stays open")
                .expect("a chunk");
            self.pending.push_str(&String::from_utf8_lossy(&chunk));
        }
    }
}

/// `kubectl get clusters -w --output-watch-events` running, read line by line; stopped when dropped.
pub(crate) struct KubectlWatch {
    _child: tokio::process::Child,
    lines: tokio::io::Lines<tokio::io::BufReader<tokio::process::ChildStdout>>,
}

impl KubectlWatch {
    /// Starts `bin` against `kubeconfig`.
    pub(crate) fn clusters(bin: &str, kubeconfig: &Path) -> KubectlWatch {
        let mut child = tokio::process::Command::new(bin)
            .env("KUBECONFIG", kubeconfig)
            .args(["get", "clusters", "-w", "--output-watch-events"])
            .stdout(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("kubectl watches");
        let stdout = child.stdout.take().expect("its output");
        KubectlWatch {
            _child: child,
            lines: tokio::io::AsyncBufReadExt::lines(tokio::io::BufReader::new(stdout)),
        }
    }

    /// The next line kubectl prints, split into its cells; fails the test when none comes within
    /// [`flotilla_testing::PATIENCE`] or kubectl ends.
    pub(crate) async fn next(&mut self) -> Vec<String> {
        let line = tokio::time::timeout(flotilla_testing::PATIENCE, self.lines.next_line())
            .await
            .expect("a line in time")
            .expect("kubectl's output")
            .expect("kubectl keeps watching");
        line.split_whitespace().map(str::to_owned).collect()
    }
}
