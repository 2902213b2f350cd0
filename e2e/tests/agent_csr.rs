//! A Pull-mode agent's certificate, as a registration with a bootstrap token gets it: the control plane carries
//! the bootstrap-token configuration (`flotilla up` and `hack/local-up.sh` apply it: cluster-info and the RBAC of
//! registration tokens and agents); a client holding a registration token (group
//! `system:bootstrappers:karmada:default-cluster-token`) posts a certificate request for
//! `system:karmada:agent:<cluster>` in `system:karmada:agents`; the agentcsrapproving controller approves it after
//! a SubjectAccessReview; the client signer (the embedded server's own, kube-controller-manager's csrsigning)
//! issues the certificate; and that certificate authenticates the agent.
//!
//! Left alone: a request that is not an agent's (another organization), and an agent's request posted by a
//! token that may post requests but lacks the `certificatesigningrequests/clusteragent` permission. Both are
//! posted before the agent's, so they are looked at no later than it is.
#![allow(clippy::unwrap_used, clippy::panic)]

use base64::Engine;
use k8s_openapi::api::authentication::v1::SelfSubjectReview;
use k8s_openapi::api::certificates::v1::CertificateSigningRequest;
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use k8s_openapi::api::rbac::v1::ClusterRoleBinding;
use kube::Client;
use kube::api::{Api, DeleteParams, PostParams};
use rand::Rng;
use serde_json::{Value, json};

use flotilla_e2e::{Env, Options, Undo, wait_for};

const SIGNER: &str = "kubernetes.io/kube-apiserver-client";
const TOKEN_GROUP: &str = "system:bootstrappers:karmada:default-cluster-token";
const AGENTS: &str = "system:karmada:agents";
const NODE_BOOTSTRAPPER: &str = "system:node-bootstrapper";
const CLIENT_USAGES: [&str; 3] = ["digital signature", "key encipherment", "client auth"];

flotilla_e2e::scenario!(
    an_agent_registering_with_a_bootstrap_token_gets_an_approved_certificate,
    "csr",
    Options::default(),
    agent_csr
);

/// A bootstrap token id: six lowercase letters or digits.
fn token_id() -> String {
    rand::rng()
        .sample_iter(rand::distr::Alphanumeric)
        .take(6)
        .map(|c| char::from(c).to_ascii_lowercase())
        .collect()
}

async fn agent_csr(env: &Env, ns: &str) -> anyhow::Result<()> {
    cluster_info(env).await?;
    let registration = token_id();
    let mut other = token_id();
    while other == registration {
        other = token_id();
    }
    let csr_names = ["agent", "not-agent", "unpermitted"].map(|n| format!("{ns}-{n}"));
    let undo = cleanup(env, &registration, &other, &csr_names);

    // The registration token, as a registration makes it; and a token of no registration, allowed to post
    // certificate requests by a binding of its own but not to have agents' approved.
    let secret = "0123456789abcdef";
    bootstrap_token(env, &registration, secret, Some(TOKEN_GROUP)).await?;
    bootstrap_token(env, &other, secret, None).await?;
    let binding: ClusterRoleBinding = serde_json::from_value(json!({
        "metadata": {"name": format!("e2e-csr-{other}")},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": NODE_BOOTSTRAPPER},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User",
            "name": format!("system:bootstrap:{other}")}],
    }))?;
    Api::<ClusterRoleBinding>::all(env.karmada.clone())
        .create(&PostParams::default(), &binding)
        .await?;
    let registrant = authenticated(env, &format!("{registration}.{secret}")).await?;
    let stranger = authenticated(env, &format!("{other}.{secret}")).await?;

    let cluster = ns;
    let agent_user = format!("system:karmada:agent:{cluster}");
    let (_, not_agent) = request(&agent_user, "system:nodes");
    post(&registrant, &csr_names[1], &not_agent).await?;
    let (_, unpermitted) = request(&agent_user, AGENTS);
    post(&stranger, &csr_names[2], &unpermitted).await?;
    let (key, agent) = request(&agent_user, AGENTS);
    post(&registrant, &csr_names[0], &agent).await?;

    let csrs: Api<CertificateSigningRequest> = Api::all(env.karmada.clone());
    let issued = wait_for("the agent's request to be approved and signed", || {
        let (csrs, name) = (csrs.clone(), csr_names[0].clone());
        async move {
            let csr = csrs.get(&name).await.map_err(|e| e.to_string())?;
            let status = csr.status.clone().unwrap_or_default();
            match status.certificate {
                Some(certificate) if !certificate.0.is_empty() => Ok((csr, certificate.0)),
                _ => Err(format!("{:?}", status.conditions)),
            }
        }
    })
    .await?;
    let (csr, certificate) = issued;
    let conditions = serde_json::to_value(csr.status.unwrap_or_default().conditions)?;
    let approval = conditions
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["type"] == "Approved"))
        .cloned()
        .unwrap_or_default();
    assert_eq!(
        (
            &approval["status"],
            &approval["reason"],
            &approval["message"]
        ),
        (
            &json!("True"),
            &json!("AutoApproved"),
            &json!("Auto approving karmada agent certificate after SubjectAccessReview.")
        ),
        "{conditions}"
    );
    // The requester the controller reviewed is the registration token's.
    assert_eq!(
        csr.spec.username.as_deref(),
        Some(format!("system:bootstrap:{registration}").as_str())
    );

    for name in &csr_names[1..] {
        let left = csrs.get(name).await?;
        let status = serde_json::to_value(left.status)?;
        assert!(
            status.get("conditions").is_none_or(Value::is_null)
                && status.get("certificate").is_none_or(Value::is_null),
            "{name} was not left alone: {status}"
        );
    }

    // The certificate is the agent's identity.
    let b64 = base64::engine::general_purpose::STANDARD;
    let agent_client = env
        .karmada_client_with(kube::config::AuthInfo {
            client_certificate_data: Some(b64.encode(&certificate)),
            client_key_data: Some(b64.encode(key.serialize_pem()).into()),
            ..kube::config::AuthInfo::default()
        })
        .await?;
    let who = whoami(&agent_client).await?;
    assert_eq!(who["username"], agent_user.as_str(), "{who}");
    let groups: Vec<&str> = who["groups"]
        .as_array()
        .map(|g| g.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    assert!(
        groups.contains(&AGENTS) && groups.contains(&"system:authenticated"),
        "{who}"
    );

    undo.run(&env.karmada).await?;
    Ok(())
}

/// `kube-public/cluster-info` names the control plane the scenario talks to, with a CA and no credentials.
async fn cluster_info(env: &Env) -> anyhow::Result<()> {
    let map = Api::<ConfigMap>::namespaced(env.karmada.clone(), "kube-public")
        .get("cluster-info")
        .await?;
    let text = map
        .data
        .unwrap_or_default()
        .get("kubeconfig")
        .cloned()
        .unwrap_or_default();
    let kubeconfig: kube::config::Kubeconfig = kube::config::Kubeconfig::from_yaml(&text)?;
    assert_eq!(kubeconfig.clusters.len(), 1, "{text}");
    assert!(kubeconfig.auth_infos.is_empty(), "{text}");
    let cluster = kubeconfig.clusters[0].cluster.clone().unwrap_or_default();
    assert_eq!(
        cluster.server.as_deref().map(|s| s.trim_end_matches('/')),
        Some(env.karmada_url().await?.as_str()),
        "{text}"
    );
    let ca = base64::engine::general_purpose::STANDARD
        .decode(cluster.certificate_authority_data.unwrap_or_default())?;
    assert!(
        String::from_utf8_lossy(&ca).starts_with("-----BEGIN CERTIFICATE-----"),
        "{text}"
    );
    Ok(())
}

/// Deletes what the scenario made outside its namespace: the tokens, the binding and the requests.
fn cleanup(env: &Env, registration: &str, other: &str, csrs: &[String; 3]) -> Undo {
    let secrets = [registration, other].map(|id| format!("bootstrap-token-{id}"));
    let binding = format!("e2e-csr-{other}");
    let csrs = csrs.clone();
    Undo::new(
        env,
        format!("delete {secrets:?}, ClusterRoleBinding {binding} and CSRs {csrs:?}"),
        move |client| async move {
            let dp = DeleteParams::default();
            let tokens: Api<Secret> = Api::namespaced(client.clone(), "kube-system");
            for secret in &secrets {
                let _ = tokens.delete(secret, &dp).await;
            }
            let _ = Api::<ClusterRoleBinding>::all(client.clone())
                .delete(&binding, &dp)
                .await;
            let requests: Api<CertificateSigningRequest> = Api::all(client);
            for csr in &csrs {
                let _ = requests.delete(csr, &dp).await;
            }
            Ok(())
        },
    )
}

/// Secret `kube-system/bootstrap-token-<id>` for bootstrap authentication, in `group` besides
/// `system:bootstrappers` when given.
async fn bootstrap_token(
    env: &Env,
    id: &str,
    secret: &str,
    group: Option<&str>,
) -> anyhow::Result<()> {
    let mut data =
        json!({"token-id": id, "token-secret": secret, "usage-bootstrap-authentication": "true"});
    if let Some(group) = group {
        data["auth-extra-groups"] = json!(group);
    }
    let token: Secret = serde_json::from_value(json!({
        "metadata": {"name": format!("bootstrap-token-{id}")},
        "type": "bootstrap.kubernetes.io/token",
        "stringData": data,
    }))?;
    Api::<Secret>::namespaced(env.karmada.clone(), "kube-system")
        .create(&PostParams::default(), &token)
        .await?;
    Ok(())
}

/// A client with bootstrap token `token`, once the control plane knows the token (kube-apiserver reads token
/// Secrets through a cache).
async fn authenticated(env: &Env, token: &str) -> anyhow::Result<Client> {
    let client = env.karmada_client_as(token).await?;
    let id = token.split('.').next().unwrap_or_default();
    let user = format!("system:bootstrap:{id}");
    wait_for(&format!("bootstrap token {id} to authenticate"), || {
        let (client, user) = (client.clone(), user.clone());
        async move {
            let who = whoami(&client).await.map_err(|e| e.to_string())?;
            if who["username"] == user.as_str() {
                Ok(())
            } else {
                Err(who.to_string())
            }
        }
    })
    .await?;
    Ok(client)
}

/// Who the control plane takes `client` for (a SelfSubjectReview's `status.userInfo`).
async fn whoami(client: &Client) -> anyhow::Result<Value> {
    let review: SelfSubjectReview = serde_json::from_value(json!({}))?;
    let answer = Api::<SelfSubjectReview>::all(client.clone())
        .create(&PostParams::default(), &review)
        .await?;
    Ok(serde_json::to_value(
        answer.status.and_then(|s| s.user_info),
    )?)
}

/// A key and a PEM certificate request for user `cn` in group `org`.
fn request(cn: &str, org: &str) -> (rcgen::KeyPair, String) {
    flotilla_testing::tls::certificate_request(cn, &[org])
}

/// Posts CSR `name` for the client signer with `pem`, as `client`.
async fn post(client: &Client, name: &str, pem: &str) -> anyhow::Result<()> {
    let csr: CertificateSigningRequest = serde_json::from_value(json!({
        "metadata": {"name": name},
        "spec": {"request": base64::engine::general_purpose::STANDARD.encode(pem),
            "signerName": SIGNER, "usages": CLIENT_USAGES, "expirationSeconds": 3600},
    }))?;
    Api::<CertificateSigningRequest>::all(client.clone())
        .create(&PostParams::default(), &csr)
        .await?;
    Ok(())
}
