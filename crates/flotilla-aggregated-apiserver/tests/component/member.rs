//! A fake member API server over HTTPS that records what it receives, and the registration of clusters on the
//! control plane as karmadactl join does it (Secret, impersonator Secret, Cluster).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use axum::extract::{Request, State};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use flotilla_api::cluster::v1alpha1::{
    Cluster, ClusterSpec, ClusterSyncMode, LocalSecretReference,
};
use flotilla_webhook::{RunningServer, generate_self_signed, serve_tls};
use futures::StreamExt;
use http::{HeaderMap, StatusCode};
use http_body_util::BodyExt;
use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::{Namespace, Secret};
use kube::api::{ObjectMeta, PostParams};
use kube::{Api, Client};
use serde_json::{Value, json};
use tokio::sync::mpsc;

/// One request a fake member received.
#[derive(Clone, Debug)]
pub(crate) struct Recorded {
    pub(crate) method: String,
    pub(crate) path: String,
    pub(crate) query: Option<String>,
    pub(crate) headers: HeaderMap,
    pub(crate) body: Bytes,
}

impl Recorded {
    pub(crate) fn values(&self, name: &str) -> Vec<String> {
        self.headers
            .get_all(name)
            .iter()
            .filter_map(|v| v.to_str().ok().map(str::to_owned))
            .collect()
    }
}

/// What a fake member does.
#[derive(Default)]
pub(crate) struct Behaviour {
    pub(crate) requests: Mutex<Vec<Recorded>>,
    /// Pods in `default` it holds, by name.
    pub(crate) pods: Vec<&'static str>,
    /// The body of `/stream`, fed by the test.
    pub(crate) stream: Mutex<Option<mpsc::Receiver<Bytes>>>,
    /// Each chunk of an `/upload` body, as it arrives.
    pub(crate) uploaded: Mutex<Option<mpsc::Sender<Bytes>>>,
}

/// An HTTPS server standing in for a member's API server.
pub(crate) struct FakeMember {
    pub(crate) url: String,
    pub(crate) ca_pem: Vec<u8>,
    pub(crate) behaviour: Arc<Behaviour>,
    _server: RunningServer,
}

impl FakeMember {
    pub(crate) async fn start(behaviour: Behaviour) -> FakeMember {
        let generated = generate_self_signed(&["127.0.0.1"]).expect("a certificate");
        let tls = generated
            .identity
            .server_config()
            .expect("a TLS configuration");
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a port");
        let behaviour = Arc::new(behaviour);
        let router = axum::Router::new()
            .fallback(answer)
            .with_state(behaviour.clone());
        let server = serve_tls(listener, tls, router).expect("serving");
        FakeMember {
            url: format!("https://{}", server.local_addr()),
            ca_pem: generated.ca_pem,
            behaviour,
            _server: server,
        }
    }

    pub(crate) fn requests(&self) -> Vec<Recorded> {
        self.behaviour.requests.lock().expect("lock").clone()
    }
}

async fn answer(State(behaviour): State<Arc<Behaviour>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let path = parts.uri.path().to_owned();
    let mut recorded = Recorded {
        method: parts.method.to_string(),
        path: path.clone(),
        query: parts.uri.query().map(str::to_owned),
        headers: parts.headers.clone(),
        body: Bytes::new(),
    };
    if path == "/stream" {
        behaviour.requests.lock().expect("lock").push(recorded);
        let receiver = behaviour
            .stream
            .lock()
            .expect("lock")
            .take()
            .expect("one stream");
        let chunks = futures::stream::unfold(receiver, |mut receiver| async move {
            let chunk = receiver.recv().await?;
            Some((Ok::<_, std::io::Error>(chunk), receiver))
        });
        return axum::body::Body::from_stream(chunks).into_response();
    }
    if path == "/upload" {
        let sender = behaviour
            .uploaded
            .lock()
            .expect("lock")
            .clone()
            .expect("an upload channel");
        let mut frames = body.into_data_stream();
        let mut all = Vec::new();
        while let Some(Ok(chunk)) = frames.next().await {
            all.extend_from_slice(&chunk);
            let _ = sender.send(chunk).await;
        }
        recorded.body = all.into();
        behaviour.requests.lock().expect("lock").push(recorded);
        return (StatusCode::CREATED, "uploaded").into_response();
    }
    recorded.body = body
        .collect()
        .await
        .map(|b| b.to_bytes())
        .unwrap_or_default();
    behaviour.requests.lock().expect("lock").push(recorded);
    let json = |status: StatusCode, value: Value| {
        (
            status,
            [("content-type", "application/json")],
            value.to_string(),
        )
            .into_response()
    };
    if path == "/api/v1/pods" {
        let items: Vec<Value> = behaviour
            .pods
            .iter()
            .map(|name| json!({"metadata": {"name": name}}))
            .collect();
        return json(
            StatusCode::OK,
            json!({"apiVersion": "v1", "kind": "PodList", "metadata": {"resourceVersion": "5"}, "items": items}),
        );
    }
    if let Some(name) = path.strip_prefix("/api/v1/namespaces/default/pods/") {
        return if behaviour.pods.contains(&name) {
            json(
                StatusCode::OK,
                json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}}),
            )
        } else {
            json(
                StatusCode::NOT_FOUND,
                json!({"kind": "Status", "apiVersion": "v1", "code": 404, "reason": "NotFound"}),
            )
        };
    }
    json(StatusCode::OK, json!({"echo": path}))
}

/// Registers a cluster reaching `endpoint` with the CA `ca`: its Secret, its impersonator Secret holding
/// `token` (when given) and the Cluster itself, whose spec `customize` may change.
pub(crate) async fn register(
    client: &Client,
    name: &str,
    endpoint: &str,
    ca: &[u8],
    token: Option<&str>,
    customize: impl FnOnce(&mut ClusterSpec),
) {
    let _ = Api::<Namespace>::all(client.clone())
        .create(
            &PostParams::default(),
            &Namespace {
                metadata: ObjectMeta {
                    name: Some("karmada-cluster".into()),
                    ..ObjectMeta::default()
                },
                ..Namespace::default()
            },
        )
        .await;
    let secrets: Api<Secret> = Api::namespaced(client.clone(), "karmada-cluster");
    let secret = |secret_name: String, data: BTreeMap<String, ByteString>| Secret {
        metadata: ObjectMeta {
            name: Some(secret_name),
            ..ObjectMeta::default()
        },
        data: Some(data),
        ..Secret::default()
    };
    secrets
        .create(
            &PostParams::default(),
            &secret(
                name.to_owned(),
                [("caBundle".to_owned(), ByteString(ca.to_vec()))].into(),
            ),
        )
        .await
        .expect("the cluster's Secret");
    let mut impersonator = BTreeMap::new();
    if let Some(token) = token {
        impersonator.insert("token".to_owned(), ByteString(token.as_bytes().to_vec()));
    }
    secrets
        .create(
            &PostParams::default(),
            &secret(format!("{name}-impersonator"), impersonator),
        )
        .await
        .expect("the impersonator Secret");
    let reference = |secret_name: String| LocalSecretReference {
        namespace: "karmada-cluster".into(),
        name: secret_name,
    };
    let mut spec = ClusterSpec {
        sync_mode: ClusterSyncMode::Push,
        api_endpoint: endpoint.to_owned(),
        secret_ref: Some(reference(name.to_owned())),
        impersonator_secret_ref: Some(reference(format!("{name}-impersonator"))),
        ..ClusterSpec::default()
    };
    customize(&mut spec);
    Api::<Cluster>::all(client.clone())
        .create(&PostParams::default(), &Cluster::new(name, spec))
        .await
        .expect("the Cluster");
}

/// Registers the embedded API server `member` as cluster `name`, its admin token as the impersonator's.
pub(crate) async fn register_embedded(
    client: &Client,
    name: &str,
    member: &crate::support::Embedded,
) {
    let (url, ca) = (member.server.url(), member.server.ca_pem().as_bytes());
    // The member lets the impersonated caller do everything, as its RBAC would an administrator.
    crate::support::grant_cluster_admin(&member.client, "tom").await;
    register(
        client,
        name,
        &url,
        ca,
        Some(member.server.admin_token()),
        |_| {},
    )
    .await;
}
