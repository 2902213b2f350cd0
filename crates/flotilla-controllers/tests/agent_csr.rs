//! The agent CSR approving controller against an in-process API server, with the RBAC a control plane's
//! bootstrap-token configuration grants: a registration token's request for an agent certificate is approved and
//! signed, and the certificate then renews itself; a request that is not an agent's, and an agent's request from a
//! requester without the `clusteragent` permission, are left alone. The end-to-end scenario `agent_csr` runs the
//! same against `flotilla up` and the kube world with the configuration they apply.

#![allow(clippy::unwrap_used, clippy::panic)]

use crate::support;

use base64::Engine;
use k8s_openapi::api::authentication::v1::SelfSubjectReview;
use k8s_openapi::api::certificates::v1::CertificateSigningRequest;
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding};
use kube::api::{Api, PostParams};
use kube::{Client, Config};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use support::{Env, eventually, fast_options};

const TOKEN_GROUP: &str = "system:bootstrappers:karmada:default-cluster-token";
const AGENTS: &str = "system:karmada:agents";
const AGENT: &str = "system:karmada:agent:member1";
const SECRET: &str = "0123456789abcdef";

fn role(name: &str, resource: &str, verbs: &[&str]) -> ClusterRole {
    serde_json::from_value(json!({"metadata": {"name": name},
        "rules": [{"apiGroups": ["certificates.k8s.io"], "resources": [resource], "verbs": verbs}]}))
    .unwrap()
}

fn binding(name: &str, role: &str, kind: &str, subject: &str) -> ClusterRoleBinding {
    serde_json::from_value(json!({"metadata": {"name": name},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": kind, "name": subject}]}))
    .unwrap()
}

/// The grants of the bootstrap-token configuration the controller relies on (kube's `system:node-bootstrapper`
/// is the server's own). Agents may also post requests here, which a member's
/// registration grants them in the real world, so that one can renew its certificate.
async fn grant(admin: &Client) {
    let roles: Api<ClusterRole> = Api::all(admin.clone());
    let bindings: Api<ClusterRoleBinding> = Api::all(admin.clone());
    let pp = PostParams::default();
    for (name, resource) in [
        ("autoapprover", "certificatesigningrequests/clusteragent"),
        (
            "selfautoapprover",
            "certificatesigningrequests/selfclusteragent",
        ),
    ] {
        roles
            .create(&pp, &role(name, resource, &["create"]))
            .await
            .unwrap();
    }
    for (name, role, kind, subject) in [
        (
            "bootstrap",
            "system:node-bootstrapper",
            "Group",
            TOKEN_GROUP,
        ),
        ("autoapprove", "autoapprover", "Group", TOKEN_GROUP),
        ("rotation", "selfautoapprover", "Group", AGENTS),
        ("agents-post", "system:node-bootstrapper", "Group", AGENTS),
        (
            "stranger-post",
            "system:node-bootstrapper",
            "User",
            "system:bootstrap:other1",
        ),
    ] {
        bindings
            .create(&pp, &binding(name, role, kind, subject))
            .await
            .unwrap();
    }
}

async fn bootstrap_token(admin: &Client, id: &str, group: Option<&str>) {
    let mut data =
        json!({"token-id": id, "token-secret": SECRET, "usage-bootstrap-authentication": "true"});
    if let Some(group) = group {
        data["auth-extra-groups"] = json!(group);
    }
    let secret: Secret = serde_json::from_value(json!({
        "metadata": {"name": format!("bootstrap-token-{id}")},
        "type": "bootstrap.kubernetes.io/token", "stringData": data}))
    .unwrap();
    Api::<Secret>::namespaced(admin.clone(), "kube-system")
        .create(&PostParams::default(), &secret)
        .await
        .unwrap();
}

/// A client of `env`'s control plane authenticating with `auth_info`.
async fn client_with(env: &Env, auth_info: kube::config::AuthInfo) -> Client {
    let mut config: Config = support::server_config(&env.control).await;
    config.auth_info = auth_info;
    Client::try_from(config).unwrap()
}

async fn token_client(env: &Env, id: &str) -> Client {
    client_with(
        env,
        kube::config::AuthInfo {
            token: Some(format!("{id}.{SECRET}").into()),
            ..Default::default()
        },
    )
    .await
}

async fn whoami(client: &Client) -> Value {
    let review: SelfSubjectReview = serde_json::from_value(json!({})).unwrap();
    let answer = Api::<SelfSubjectReview>::all(client.clone())
        .create(&PostParams::default(), &review)
        .await
        .unwrap();
    serde_json::to_value(answer.status.unwrap().user_info).unwrap()
}

/// A key and a PEM certificate request for user `cn` in group `org`.
fn request(cn: &str, org: &str) -> (rcgen::KeyPair, String) {
    flotilla_testing::tls::certificate_request(cn, &[org])
}

async fn post(client: &Client, name: &str, pem: &str) {
    let csr: CertificateSigningRequest = serde_json::from_value(json!({
        "metadata": {"name": name},
        "spec": {"request": base64::engine::general_purpose::STANDARD.encode(pem),
            "signerName": "kubernetes.io/kube-apiserver-client",
            "usages": ["digital signature", "key encipherment", "client auth"]}}))
    .unwrap();
    Api::<CertificateSigningRequest>::all(client.clone())
        .create(&PostParams::default(), &csr)
        .await
        .unwrap();
}

/// The certificate of CSR `name` once issued, and its Approved condition.
async fn issued(admin: &Client, name: &str) -> (String, Value) {
    let csrs: Api<CertificateSigningRequest> = Api::all(admin.clone());
    let csr = eventually(&format!("CSR {name} to get its certificate"), || {
        let csrs = csrs.clone();
        async move {
            let csr = csrs.get(name).await.ok()?;
            csr.status
                .as_ref()?
                .certificate
                .as_ref()
                .filter(|c| !c.0.is_empty())?;
            Some(csr)
        }
    })
    .await;
    let status = csr.status.unwrap();
    let approved = serde_json::to_value(status.conditions.unwrap_or_default())
        .unwrap()
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["type"] == "Approved")
        .cloned()
        .unwrap();
    (
        String::from_utf8(status.certificate.unwrap().0).unwrap(),
        approved,
    )
}

fn certificate_auth(certificate: &str, key: &rcgen::KeyPair) -> kube::config::AuthInfo {
    let b64 = base64::engine::general_purpose::STANDARD;
    kube::config::AuthInfo {
        client_certificate_data: Some(b64.encode(certificate)),
        client_key_data: Some(b64.encode(key.serialize_pem()).into()),
        ..Default::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agent_requests_are_approved_when_their_requester_may_have_them() {
    // One worker: reconciles take turns in request order, so once a later request is approved, every request
    // posted before it has been decided on.
    let mut options = fast_options();
    options.workers = 1;
    let env = Env::start_with(0, options).await;
    let admin = env.client.clone();
    grant(&admin).await;
    bootstrap_token(&admin, "abcdef", Some(TOKEN_GROUP)).await;
    bootstrap_token(&admin, "other1", None).await;
    let registrant = token_client(&env, "abcdef").await;
    let stranger = token_client(&env, "other1").await;
    assert_eq!(
        whoami(&registrant).await["username"],
        "system:bootstrap:abcdef"
    );

    let (_, not_agent) = request(AGENT, "system:nodes");
    post(&registrant, "not-agent", &not_agent).await;
    let (_, unpermitted) = request(AGENT, AGENTS);
    post(&stranger, "unpermitted", &unpermitted).await;
    let (key, agent) = request(AGENT, AGENTS);
    post(&registrant, "agent", &agent).await;

    let (certificate, approved) = issued(&admin, "agent").await;
    assert_eq!(
        approved,
        json!({"type": "Approved", "status": "True", "reason": "AutoApproved",
            "message": "Auto approving karmada agent certificate after SubjectAccessReview.",
            "lastUpdateTime": approved["lastUpdateTime"], "lastTransitionTime": approved["lastTransitionTime"]})
    );
    let csrs: Api<CertificateSigningRequest> = Api::all(admin.clone());
    for name in ["not-agent", "unpermitted"] {
        let status = serde_json::to_value(csrs.get(name).await.unwrap().status).unwrap();
        assert!(
            status.get("conditions").is_none_or(Value::is_null),
            "{name}: {status}"
        );
    }

    // The certificate is the agent's identity, with which it renews it: approved on the self permission.
    let agent_client = client_with(&env, certificate_auth(&certificate, &key)).await;
    let who = whoami(&agent_client).await;
    assert_eq!(who["username"], AGENT);
    assert_eq!(who["groups"], json!([AGENTS, "system:authenticated"]));
    let (key, renewal) = request(AGENT, AGENTS);
    post(&agent_client, "renewal", &renewal).await;
    let (certificate, approved) = issued(&admin, "renewal").await;
    assert_eq!(
        approved["message"],
        "Auto approving self karmada agent certificate after SubjectAccessReview."
    );
    let renewed = client_with(&env, certificate_auth(&certificate, &key)).await;
    assert_eq!(whoami(&renewed).await["username"], AGENT);
    env.stop().await;
}
