//! ServiceAccount token Secrets (what `karmadactl join` relies on): the server fills the Secret, the
//! token authenticates, and deleting the Secret revokes it; the review resources (SelfSubjectReview,
//! TokenReview, SubjectAccessReview) answer for the token's user; bound tokens from the `token` subresource
//! authenticate across restarts until their ServiceAccount is deleted.

use k8s_openapi::api::authentication::v1::{SelfSubjectReview, TokenRequest, TokenReview};
use k8s_openapi::api::authorization::v1::{LocalSubjectAccessReview, SubjectAccessReview};
use k8s_openapi::api::core::v1::{ConfigMap, Secret, ServiceAccount};
use kube::api::{Api, DeleteParams, ListParams, PostParams};
use kube::{Client, Config};
use serde_json::json;

use crate::common::{client_for, eventually, start};

async fn client_with_token(server: &flotilla_apiserver::RunningServer, token: &str) -> Client {
    let kc: kube::config::Kubeconfig =
        flotilla_yaml::from_str(&server.kubeconfig("flotilla")).unwrap();
    let mut config = Config::from_custom_kubeconfig(kc, &Default::default())
        .await
        .unwrap();
    config.auth_info.token = Some(token.to_string().into());
    Client::try_from(config).unwrap()
}

#[tokio::test]
async fn service_account_token_secrets_authenticate_until_deleted() {
    let dir = tempfile::tempdir().unwrap();
    let (server, client) = start(dir.path()).await;
    let sas: Api<ServiceAccount> = Api::namespaced(client.clone(), "default");
    sas.create(
        &PostParams::default(),
        &serde_json::from_value(json!({"metadata": {"name": "agent"}})).unwrap(),
    )
    .await
    .unwrap();
    let secrets: Api<Secret> = Api::namespaced(client.clone(), "default");
    secrets
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({"metadata": {"name": "agent-token",
                "annotations": {"kubernetes.io/service-account.name": "agent"}},
                "type": "kubernetes.io/service-account-token"}))
            .unwrap(),
        )
        .await
        .unwrap();
    eventually("the token is filled in", || {
        let secrets = secrets.clone();
        async move {
            secrets
                .get("agent-token")
                .await
                .ok()
                .and_then(|s| s.data)
                .is_some_and(|d| d.contains_key("token") && d.contains_key("ca.crt"))
        }
    })
    .await;
    let secret = secrets.get("agent-token").await.unwrap();
    let data = secret.data.unwrap_or_default();
    let token = String::from_utf8(data["token"].0.clone()).unwrap();
    assert_eq!(data["namespace"].0, b"default");
    assert_eq!(
        String::from_utf8(data["ca.crt"].0.clone()).unwrap(),
        server.ca_pem()
    );
    let as_agent: Api<ConfigMap> =
        Api::namespaced(client_with_token(&server, &token).await, "default");
    // Authenticated, but RBAC grants the account nothing yet.
    let refused = as_agent.list(&ListParams::default()).await;
    assert!(
        matches!(refused, Err(kube::Error::Api(ref s)) if s.code == 403 && s.message.contains("system:serviceaccount:default:agent")),
        "{refused:?}"
    );
    let bindings: Api<k8s_openapi::api::rbac::v1::RoleBinding> =
        Api::namespaced(client.clone(), "default");
    bindings
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({"metadata": {"name": "agent-views"},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
                "subjects": [{"kind": "ServiceAccount", "name": "agent", "namespace": "default"}]}))
            .unwrap(),
        )
        .await
        .unwrap();
    as_agent
        .list(&ListParams::default())
        .await
        .expect("the token authenticates and the binding allows");
    // Who the token is, asked by its holder and by someone checking it.
    let me: Api<SelfSubjectReview> = Api::all(client_with_token(&server, &token).await);
    let review = me
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({})).unwrap(),
        )
        .await
        .unwrap();
    let user = review.status.and_then(|s| s.user_info).unwrap();
    assert_eq!(
        user.username.as_deref(),
        Some("system:serviceaccount:default:agent")
    );
    assert_eq!(
        user.groups.unwrap_or_default(),
        [
            "system:serviceaccounts",
            "system:serviceaccounts:default",
            "system:authenticated"
        ]
    );
    let reviews: Api<TokenReview> = Api::all(client.clone());
    for (candidate, expected) in [(token.as_str(), true), ("not-a-token", false)] {
        let answer = reviews
            .create(
                &PostParams::default(),
                &serde_json::from_value(json!({"spec": {"token": candidate}})).unwrap(),
            )
            .await
            .unwrap()
            .status
            .unwrap();
        assert_eq!(
            answer.authenticated.unwrap_or(false),
            expected,
            "{answer:?}"
        );
    }
    let bogus: Api<ConfigMap> =
        Api::namespaced(client_with_token(&server, "not-a-token").await, "default");
    let err = bogus.list(&ListParams::default()).await.expect_err("401");
    assert!(
        matches!(err, kube::Error::Api(ref s) if s.code == 401),
        "{err:?}"
    );

    secrets
        .delete("agent-token", &DeleteParams::default())
        .await
        .unwrap();
    eventually("the token is revoked", || {
        let as_agent = as_agent.clone();
        async move {
            matches!(as_agent.list(&ListParams::default()).await, Err(kube::Error::Api(ref s)) if s.code == 401)
        }
    })
    .await;
    server.shutdown().await;
}

#[tokio::test]
async fn access_reviews_decide_and_check_their_spec_as_upstream_does() {
    let dir = tempfile::tempdir().unwrap();
    let (server, client) = start(dir.path()).await;
    let sars: Api<SubjectAccessReview> = Api::all(client.clone());
    let attrs = json!({"namespace": "default", "verb": "get", "resource": "pods"});
    let allowed = sars
        .create(
            &PostParams::default(),
            &serde_json::from_value(
                json!({"spec": {"user": "someone", "resourceAttributes": attrs}}),
            )
            .unwrap(),
        )
        .await
        .unwrap();
    assert!(!allowed.status.unwrap().allowed, "no role names someone");
    let masters = sars
        .create(
            &PostParams::default(),
            &serde_json::from_value(
                json!({"spec": {"user": "someone", "groups": ["system:masters"], "resourceAttributes": attrs}}),
            )
            .unwrap(),
        )
        .await
        .unwrap();
    assert!(masters.status.unwrap().allowed);
    // No subject, or both kinds of attributes: 422 like upstream's validation.
    for spec in [
        json!({"resourceAttributes": attrs}),
        json!({"user": "u", "resourceAttributes": attrs, "nonResourceAttributes": {"path": "/x", "verb": "get"}}),
    ] {
        let err = sars
            .create(
                &PostParams::default(),
                &serde_json::from_value(json!({"spec": spec})).unwrap(),
            )
            .await
            .expect_err("invalid review");
        assert!(
            matches!(err, kube::Error::Api(ref s) if s.code == 422),
            "{err:?}"
        );
    }
    // A local review must ask about its own namespace.
    let local: Api<LocalSubjectAccessReview> = Api::namespaced(client.clone(), "kube-system");
    let err = local
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({"metadata": {"namespace": "kube-system"},
                "spec": {"user": "u", "resourceAttributes": attrs}}))
            .unwrap(),
        )
        .await
        .expect_err("namespace mismatch");
    assert!(
        matches!(err, kube::Error::Api(ref s) if s.code == 400),
        "{err:?}"
    );
    // Reviews are never stored: there is nothing to list.
    let err = sars.list(&ListParams::default()).await.expect_err("405");
    assert!(
        matches!(err, kube::Error::Api(ref s) if s.code == 405),
        "{err:?}"
    );
    server.shutdown().await;
}

/// The user name a token authenticates as, through a SelfSubjectReview.
async fn whoami(
    server: &flotilla_apiserver::RunningServer,
    token: &str,
) -> Result<Option<String>, kube::Error> {
    let me: Api<SelfSubjectReview> = Api::all(client_with_token(server, token).await);
    me.create(
        &PostParams::default(),
        &serde_json::from_value(json!({})).unwrap(),
    )
    .await
    .map(|r| r.status.and_then(|s| s.user_info).and_then(|u| u.username))
}

#[tokio::test]
async fn bound_tokens_survive_restarts_and_die_with_their_service_account() {
    let dir = tempfile::tempdir().unwrap();
    let (server, client) = start(dir.path()).await;
    let sas: Api<ServiceAccount> = Api::namespaced(client.clone(), "default");
    sas.create(
        &PostParams::default(),
        &serde_json::from_value(json!({"metadata": {"name": "bot"}})).unwrap(),
    )
    .await
    .unwrap();
    let request = |seconds: i64| -> TokenRequest {
        serde_json::from_value(json!({"spec": {"expirationSeconds": seconds}})).unwrap()
    };
    let err = sas
        .create_token_request("bot", &PostParams::default(), &request(599))
        .await
        .expect_err("under ten minutes");
    assert!(
        matches!(err, kube::Error::Api(ref s) if s.code == 422),
        "{err:?}"
    );
    let issued = sas
        .create_token_request("bot", &PostParams::default(), &request(3600))
        .await
        .unwrap();
    let status = issued.status.unwrap();
    assert!(status.expiration_timestamp.is_some());
    let token = status.token.unwrap();
    assert_eq!(
        whoami(&server, &token).await.unwrap().as_deref(),
        Some("system:serviceaccount:default:bot")
    );
    server.shutdown().await;
    // Nothing about the token is stored: it verifies after a restart by its signature.
    let (server, _) = start(dir.path()).await;
    assert!(whoami(&server, &token).await.is_ok());
    let sas: Api<ServiceAccount> = Api::namespaced(client_for(&server).await, "default");
    sas.delete("bot", &DeleteParams::default()).await.unwrap();
    let err = whoami(&server, &token)
        .await
        .expect_err("revoked with its account");
    assert!(
        matches!(err, kube::Error::Api(ref s) if s.code == 401),
        "{err:?}"
    );
    server.shutdown().await;
}
