//! Credential rotation: a 401 from the member makes the next `get` rebuild the client from the Secret.

use std::convert::Infallible;
use std::sync::{Arc, Mutex};

use axum::http::{HeaderMap, StatusCode};
use base64::Engine as _;
use k8s_openapi::api::core::v1::Namespace;
use serde_json::json;

use super::*;

/// The token the member accepts, and the one the control plane's Secret holds.
#[derive(Default)]
struct Tokens {
    accepted: Mutex<String>,
    in_secret: Mutex<String>,
    secret_reads: Mutex<u32>,
}

fn set(slot: &Mutex<String>, value: &str) {
    *slot.lock().unwrap() = value.to_owned();
}

/// A member API server answering every GET with the `default` Namespace, or 401 to a wrong token.
async fn start_member(tokens: Arc<Tokens>) -> String {
    let app = axum::Router::new().fallback(move |headers: HeaderMap| {
        let tokens = tokens.clone();
        async move {
            let want = format!("Bearer {}", tokens.accepted.lock().unwrap());
            let given = headers
                .get("authorization")
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default();
            if given == want {
                let body = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "default"}});
                (StatusCode::OK, body.to_string())
            } else {
                let body = json!({"apiVersion": "v1", "kind": "Status", "status": "Failure",
                    "message": "Unauthorized", "reason": "Unauthorized", "code": 401});
                (StatusCode::UNAUTHORIZED, body.to_string())
            }
        }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{address}")
}

/// A control-plane client serving only the cluster's Secret, with the current token.
fn control_client(tokens: Arc<Tokens>) -> Client {
    let service = tower::service_fn(move |_request: http::Request<kube::client::Body>| {
        let tokens = tokens.clone();
        async move {
            let mut reads = tokens.secret_reads.lock().unwrap();
            *reads += 1;
            let token = tokens.in_secret.lock().unwrap().clone();
            let secret = json!({
                "apiVersion": "v1", "kind": "Secret",
                "metadata": {"name": "m1", "namespace": "karmada-cluster", "resourceVersion": reads.to_string()},
                "data": {"token": base64::engine::general_purpose::STANDARD.encode(token)},
            });
            Ok::<_, Infallible>(http::Response::new(secret.to_string()))
        }
    });
    Client::new(service, "default")
}

#[tokio::test]
async fn a_401_from_the_member_rebuilds_the_client_with_the_rotated_secret() {
    let tokens = Arc::new(Tokens::default());
    set(&tokens.accepted, "old");
    set(&tokens.in_secret, "old");
    let endpoint = start_member(tokens.clone()).await;
    let cluster: Cluster = serde_json::from_value(json!({
        "apiVersion": "cluster.karmada.io/v1alpha1", "kind": "Cluster",
        "metadata": {"name": "m1"},
        "spec": {"syncMode": "Push", "apiEndpoint": endpoint, "insecureSkipTLSVerification": true,
                 "secretRef": {"namespace": "karmada-cluster", "name": "m1"}},
    }))
    .unwrap();
    let members = Members::new(
        control_client(tokens.clone()),
        Duration::from_secs(5),
        RateLimit::default(),
        None,
    );

    let first = members.get(&cluster).await.unwrap();
    let namespaces = |member: &Member| Api::<Namespace>::all(member.client.clone());
    namespaces(&first).get("default").await.unwrap();
    assert!(Arc::ptr_eq(&first, &members.get(&cluster).await.unwrap()));
    assert_eq!(*tokens.secret_reads.lock().unwrap(), 1);

    // The credentials are rotated: the member now rejects the cached client.
    set(&tokens.accepted, "new");
    set(&tokens.in_secret, "new");
    let err = namespaces(&first).get("default").await.unwrap_err();
    assert!(
        matches!(err, kube::Error::Api(ref status) if status.code == 401),
        "{err}"
    );
    assert!(first.credentials_rejected());

    let second = members.get(&cluster).await.unwrap();
    assert!(!Arc::ptr_eq(&first, &second));
    assert_eq!(*tokens.secret_reads.lock().unwrap(), 2);
    namespaces(&second).get("default").await.unwrap();
    assert!(!second.credentials_rejected());
    assert!(Arc::ptr_eq(&second, &members.get(&cluster).await.unwrap()));
}
