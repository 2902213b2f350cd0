//! Client certificates end to end, as an agent registering with a bootstrap token gets one: a CSR for
//! `kubernetes.io/kube-apiserver-client`, approved, is signed by the cluster CA; the certificate then
//! authenticates its subject (CN the user, O the groups), whom RBAC decides for. Bootstrap tokens authenticate
//! their `system:bootstrap:<id>` user until they expire.

use base64::Engine;
use k8s_openapi::api::authentication::v1::SelfSubjectReview;
use k8s_openapi::api::certificates::v1::CertificateSigningRequest;
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams};
use kube::{Client, Config};
use serde_json::json;

use crate::common::{eventually, grant, start};

const SIGNER: &str = "kubernetes.io/kube-apiserver-client";

async fn config_for(server: &flotilla_apiserver::RunningServer) -> Config {
    let kc: kube::config::Kubeconfig =
        flotilla_yaml::from_str(&server.kubeconfig("flotilla")).unwrap();
    let mut config = Config::from_custom_kubeconfig(kc, &Default::default())
        .await
        .unwrap();
    config.auth_info = kube::config::AuthInfo::default();
    config
}

use flotilla_testing::tls::certificate_request as request;

async fn submit(csrs: &Api<CertificateSigningRequest>, name: &str, pem: &str, usages: &[&str]) {
    let csr = serde_json::from_value(json!({"metadata": {"name": name}, "spec": {
        "request": base64::engine::general_purpose::STANDARD.encode(pem),
        "signerName": SIGNER, "usages": usages, "expirationSeconds": 3600}}))
    .unwrap();
    csrs.create(&PostParams::default(), &csr).await.unwrap();
    let approval = json!({"status": {"conditions": [{"type": "Approved", "status": "True",
        "reason": "Test", "message": "approved by the test"}]}});
    csrs.patch_approval(name, &PatchParams::default(), &Patch::Merge(&approval))
        .await
        .unwrap();
}

#[tokio::test]
async fn an_approved_client_csr_is_signed_and_its_certificate_authenticates_its_subject() {
    let dir = tempfile::tempdir().unwrap();
    let (server, admin) = start(dir.path()).await;
    let csrs: Api<CertificateSigningRequest> = Api::all(admin.clone());
    let (key, pem) = request("system:karmada:agent:member1", &["system:karmada:agents"]);
    submit(
        &csrs,
        "agent",
        &pem,
        &["digital signature", "key encipherment", "client auth"],
    )
    .await;
    eventually("the CSR gets its certificate", || {
        let csrs = csrs.clone();
        async move {
            let csr = csrs.get("agent").await.unwrap();
            csr.status.and_then(|s| s.certificate).is_some()
        }
    })
    .await;
    let certificate = csrs
        .get("agent")
        .await
        .unwrap()
        .status
        .and_then(|s| s.certificate)
        .unwrap()
        .0;
    let (_, parsed) = x509_parser::pem::parse_x509_pem(&certificate).unwrap();
    let cert = parsed.parse_x509().unwrap();
    let lifetime = cert.validity().not_after.timestamp() - cert.validity().not_before.timestamp();
    assert_eq!(
        lifetime,
        3600 + 300,
        "an hour from now, backdated five minutes"
    );

    let mut config = config_for(&server).await;
    config.auth_info.client_certificate_data =
        Some(base64::engine::general_purpose::STANDARD.encode(&certificate));
    config.auth_info.client_key_data = Some(
        base64::engine::general_purpose::STANDARD
            .encode(key.serialize_pem())
            .into(),
    );
    let agent = Client::try_from(config).unwrap();
    let me = Api::<SelfSubjectReview>::all(agent.clone())
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({})).unwrap(),
        )
        .await
        .unwrap();
    let who = me.status.unwrap().user_info.unwrap();
    assert_eq!(
        who.username.as_deref(),
        Some("system:karmada:agent:member1")
    );
    assert_eq!(
        who.groups.unwrap(),
        ["system:karmada:agents", "system:authenticated"]
    );
    let configmaps: Api<ConfigMap> = Api::namespaced(agent, "default");
    let refused = configmaps.list(&ListParams::default()).await;
    assert!(
        matches!(refused, Err(kube::Error::Api(ref s)) if s.code == 403),
        "{refused:?}"
    );
    grant(
        &admin,
        "default",
        "system:karmada:agent:member1",
        &["configmaps"],
    )
    .await;
    configmaps
        .list(&ListParams::default())
        .await
        .expect("RBAC now allows the certificate's user");

    // A CSR for this signer must ask for client usages only.
    let (_, pem) = request("someone", &[]);
    submit(&csrs, "server", &pem, &["server auth"]).await;
    eventually("the signer refuses a server certificate", || {
        let csrs = csrs.clone();
        async move {
            let csr = csrs.get("server").await.unwrap();
            csr.status.and_then(|s| s.conditions).is_some_and(|cs| {
                cs.iter().any(|c| {
                    c.type_ == "Failed"
                        && c.reason.as_deref() == Some("SignerValidationFailure")
                        && c.message.as_deref()
                            == Some("invalid usage for client certificate: server auth")
                })
            })
        }
    })
    .await;
    server.shutdown().await;
}

#[tokio::test]
async fn bootstrap_tokens_authenticate_until_they_expire() {
    let dir = tempfile::tempdir().unwrap();
    let (server, admin) = start(dir.path()).await;
    let secrets: Api<Secret> = Api::namespaced(admin.clone(), "kube-system");
    let token_secret = |id: &str, expiration: &str| -> Secret {
        serde_json::from_value(
            json!({"metadata": {"name": format!("bootstrap-token-{id}")},
            "type": "bootstrap.kubernetes.io/token",
            "stringData": {"token-id": id, "token-secret": "0123456789abcdef",
                "usage-bootstrap-authentication": "true", "expiration": expiration,
                "auth-extra-groups": "system:bootstrappers:karmada:default-cluster-token"}}),
        )
        .unwrap()
    };
    secrets
        .create(
            &PostParams::default(),
            &token_secret("abcdef", "2999-01-01T00:00:00Z"),
        )
        .await
        .unwrap();
    secrets
        .create(
            &PostParams::default(),
            &token_secret("expire", "2000-01-01T00:00:00Z"),
        )
        .await
        .unwrap();
    let as_token = |token: &str| {
        let token = token.to_string();
        let server = &server;
        async move {
            let mut config = config_for(server).await;
            config.auth_info.token = Some(token.into());
            Api::<SelfSubjectReview>::all(Client::try_from(config).unwrap())
                .create(
                    &PostParams::default(),
                    &serde_json::from_value(json!({})).unwrap(),
                )
                .await
        }
    };
    let who = as_token("abcdef.0123456789abcdef")
        .await
        .unwrap()
        .status
        .unwrap()
        .user_info
        .unwrap();
    assert_eq!(who.username.as_deref(), Some("system:bootstrap:abcdef"));
    assert_eq!(
        who.groups.unwrap(),
        [
            "system:bootstrappers",
            "system:bootstrappers:karmada:default-cluster-token",
            "system:authenticated"
        ]
    );
    for refused in ["expire.0123456789abcdef", "abcdef.0123456789abcdee"] {
        let answer = as_token(refused).await;
        assert!(
            matches!(answer, Err(kube::Error::Api(ref s)) if s.code == 401),
            "{refused}: {answer:?}"
        );
    }
    server.shutdown().await;
}
