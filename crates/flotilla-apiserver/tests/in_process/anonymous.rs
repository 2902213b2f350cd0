//! Anonymous requests, as kube-apiserver with `--anonymous-auth=true` answers them: a request without a client
//! certificate or bearer token is `system:anonymous` in `system:unauthenticated`, whom RBAC lets read the health
//! and version paths and nothing else until someone grants more; a bearer token nobody accepts is 401. And the
//! bootstrap signer, whose signed `kube-public/cluster-info` is what an agent reads anonymously.

use base64::Engine;
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::api::{Api, DeleteParams, PostParams};
use serde_json::{Value, json};

use crate::common::{eventually, start};

fn anonymous_client() -> reqwest::Client {
    reqwest::Client::builder()
        .danger_accept_invalid_certs(true)
        .build()
        .unwrap()
}

async fn get(url: &str, authorization: Option<&str>) -> (u16, String) {
    let mut request = anonymous_client().get(url);
    if let Some(value) = authorization {
        request = request.header("Authorization", value);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    (status, response.text().await.unwrap())
}

fn message(body: &str) -> String {
    let status: Value = serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {body}"));
    status["message"].as_str().unwrap_or_default().to_string()
}

#[tokio::test]
async fn requests_without_credentials_are_the_anonymous_users_and_rbac_decides_them() {
    let dir = tempfile::tempdir().unwrap();
    let (server, _client) = start(dir.path()).await;
    let url = server.url();
    // At once after the start: the bootstrap policy that lets everyone read them exists before serving.
    for path in ["/healthz", "/livez", "/readyz", "/version"] {
        assert_eq!(get(&format!("{url}{path}"), None).await.0, 200, "{path}");
    }
    // The single checks are `system:monitoring`'s, not public.
    let (status, body) = get(&format!("{url}/healthz/ping"), None).await;
    assert_eq!(status, 403, "{body}");
    assert_eq!(
        message(&body),
        r#"forbidden: User "system:anonymous" cannot get path "/healthz/ping""#
    );
    for header in [
        None,
        Some("Basic YWxpY2U6c2VjcmV0"),
        Some("Bearer  two-spaces"),
    ] {
        let (status, body) = get(&format!("{url}/api"), header).await;
        assert_eq!(status, 403, "{header:?}: {body}");
        assert_eq!(
            message(&body),
            r#"forbidden: User "system:anonymous" cannot get path "/api""#
        );
        let (status, body) = get(
            &format!("{url}/api/v1/namespaces/default/configmaps"),
            header,
        )
        .await;
        assert_eq!(status, 403, "{body}");
        assert_eq!(
            message(&body),
            r#"configmaps is forbidden: User "system:anonymous" cannot list resource "configmaps" in API group "" in the namespace "default""#
        );
    }
    // A bearer token nobody accepts is refused before anything else, on the health paths too.
    for path in ["/healthz", "/api"] {
        let (status, body) = get(&format!("{url}{path}"), Some("Bearer not-a-token")).await;
        assert_eq!(status, 401, "{path}: {body}");
        assert_eq!(message(&body), "Unauthorized");
    }
    // The anonymous user may impersonate nobody.
    let response = anonymous_client()
        .get(format!("{url}/api/v1/namespaces"))
        .header("Impersonate-User", "system:admin")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 403);
    let body = response.text().await.unwrap();
    // Constrained impersonation's first mode refuses first (the differential corpus holds kube's exact words).
    assert!(
        message(&body).contains(r#"User "system:anonymous" cannot impersonate-on:user-info:list"#),
        "{body}"
    );
    // Who the anonymous user is, as the server tells it.
    let review = anonymous_client()
        .post(format!(
            "{url}/apis/authentication.k8s.io/v1/selfsubjectreviews"
        ))
        .json(&json!({"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}))
        .send()
        .await
        .unwrap();
    assert_eq!(
        review.status().as_u16(),
        403,
        "basic-user is for the authenticated"
    );
    server.shutdown().await;
}

const KUBECONFIG: &str = "apiVersion: v1\nkind: Config\nclusters:\n- name: \"\"\n  cluster:\n    server: https://127.0.0.1:6443\n";
/// What kube's own `jws.ComputeDetachedSignature` makes of `KUBECONFIG` under token `abcdef.0123456789abcdef`.
const SIGNATURE: &str =
    "eyJhbGciOiJIUzI1NiIsImtpZCI6ImFiY2RlZiJ9..FmDd1cUgWwYSBjgJsqLp5-YyHI4LMaBSB3xm-xU6fy0";

fn token_secret(id: &str, extra: &[(&str, String)]) -> Secret {
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
    let mut data = json!({"token-id": b64(id), "token-secret": b64("0123456789abcdef"),
        "usage-bootstrap-signing": b64("true")});
    for (k, v) in extra {
        data[*k] = json!(b64(v));
    }
    serde_json::from_value(
        json!({"metadata": {"name": format!("bootstrap-token-{id}")},
        "type": "bootstrap.kubernetes.io/token", "data": data}),
    )
    .unwrap()
}

#[tokio::test]
async fn cluster_info_is_signed_for_each_signing_token_and_read_anonymously_once_granted() {
    let dir = tempfile::tempdir().unwrap();
    let (server, client) = start(dir.path()).await;
    let url = server.url();
    let public: Api<ConfigMap> = Api::namespaced(client.clone(), "kube-public");
    let tokens: Api<Secret> = Api::namespaced(client.clone(), "kube-system");
    let cm: ConfigMap = serde_json::from_value(
        json!({"metadata": {"name": "cluster-info"}, "data": {"kubeconfig": KUBECONFIG}}),
    )
    .unwrap();
    public.create(&PostParams::default(), &cm).await.unwrap();
    tokens
        .create(&PostParams::default(), &token_secret("abcdef", &[]))
        .await
        .unwrap();
    let signature = |cm: &ConfigMap| {
        cm.data
            .as_ref()
            .and_then(|d| d.get("jws-kubeconfig-abcdef"))
            .cloned()
    };
    eventually("cluster-info is signed", || {
        let public = public.clone();
        async move {
            signature(&public.get("cluster-info").await.unwrap()).as_deref() == Some(SIGNATURE)
        }
    })
    .await;

    // Anonymous readers need a grant, as `kubeadm init` and `karmadactl init` give it.
    let path = format!("{url}/api/v1/namespaces/kube-public/configmaps/cluster-info");
    assert_eq!(get(&path, None).await.0, 403);
    crate::common::grant_named(
        &client,
        "kube-public",
        "system:anonymous",
        "configmaps",
        "cluster-info",
        &["get"],
    )
    .await;
    let (status, body) = get(&path, None).await;
    assert_eq!(status, 200, "{body}");
    let read: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(read["data"]["jws-kubeconfig-abcdef"], SIGNATURE);
    assert_eq!(read["data"]["kubeconfig"], KUBECONFIG);

    // A token that expires is deleted then, and its signature goes with it.
    let soon = jiff::Timestamp::now() + jiff::SignedDuration::from_secs(2);
    tokens
        .create(
            &PostParams::default(),
            &token_secret("q1w2e3", &[("expiration", soon.to_string())]),
        )
        .await
        .unwrap();
    eventually("the expiring token signs", || {
        let public = public.clone();
        async move {
            let cm = public.get("cluster-info").await.unwrap();
            cm.data
                .is_some_and(|d| d.contains_key("jws-kubeconfig-q1w2e3"))
        }
    })
    .await;
    eventually("the expired token is deleted with its signature", || {
        let (public, tokens) = (public.clone(), tokens.clone());
        async move {
            let cm = public.get("cluster-info").await.unwrap();
            tokens
                .get_opt("bootstrap-token-q1w2e3")
                .await
                .unwrap()
                .is_none()
                && cm
                    .data
                    .is_some_and(|d| !d.contains_key("jws-kubeconfig-q1w2e3"))
        }
    })
    .await;

    tokens
        .delete("bootstrap-token-abcdef", &DeleteParams::default())
        .await
        .unwrap();
    eventually("the deleted token's signature is gone", || {
        let public = public.clone();
        async move { signature(&public.get("cluster-info").await.unwrap()).is_none() }
    })
    .await;
    server.shutdown().await;
}
