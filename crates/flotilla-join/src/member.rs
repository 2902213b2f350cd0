//! The member's side of a registration, as Karmada's `ObtainCredentialsFromMemberCluster` does it: namespace
//! `karmada-cluster` (labelled `karmada.io/system: "true"`), a ServiceAccount per token the control plane keeps,
//! and a `kubernetes.io/service-account-token` Secret named like each ServiceAccount, whose `token` the member's
//! token controller fills; and the removal of all that when the member leaves (`unjoin`, `unregister`).
//!
//! Everything is created only when missing, never updated, as Karmada does: an administrator may have made the
//! namespace, the accounts or their roles beforehand, with fewer rights.

use std::time::Duration;

use flotilla_api::names::{namespaces, registration, secret_keys};
use k8s_openapi::api::core::v1::{Namespace, Secret, ServiceAccount};
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, PolicyRule, RoleRef, Subject};
use kube::Client;
use kube::api::{Api, DeleteParams, ObjectMeta, PostParams};
use serde::de::DeserializeOwned;

use super::{create_if_missing, ensure_namespace, system_labels};
use crate::error::{Error, Result};

/// How errors name where the objects here are.
const MEMBER: &str = "the member";

/// How long the member's token controller may take to fill a token Secret (Karmada waits 30 s too).
pub const TOKEN_TIMEOUT: Duration = Duration::from_secs(30);

/// How often a token Secret is read while waiting.
const TOKEN_POLL: Duration = Duration::from_millis(200);

/// A ServiceAccount token the member issued, with the CA its token controller publishes beside it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IssuedToken {
    /// The bearer token.
    pub token: String,
    /// The Secret's `ca.crt` (the member's root CA, PEM), if its token controller published one.
    pub ca_crt: Option<Vec<u8>>,
}

/// The token of ServiceAccount `karmada-cluster/karmada-impersonator`, which the aggregated API server presents
/// when it proxies a request to the member impersonating the caller. Creates the namespace, the ServiceAccount
/// and its token Secret when missing, then waits up to `timeout` for the token.
///
/// # Errors
/// `Kube` naming the object the member refused; `TokenNotIssued` when no token came in time.
pub async fn impersonator_token(member: &Client, timeout: Duration) -> Result<IssuedToken> {
    ensure_namespace(member, namespaces::KARMADA_CLUSTER, MEMBER).await?;
    let account = registration::IMPERSONATOR_SERVICE_ACCOUNT;
    ensure_service_account(member, account).await?;
    service_account_token(member, account, timeout).await
}

/// The token of ServiceAccount `karmada-cluster/karmada-<cluster>`, which the control plane keeps to reach the
/// member (a Pull member's agent reports it too), with its rights: ClusterRole and ClusterRoleBinding
/// `karmada-controller-manager:karmada-<cluster>` granting every verb on every resource and `get` on every
/// non-resource URL. Creates what is missing, then waits up to `timeout` for the token.
///
/// # Errors
/// As [`impersonator_token`].
pub async fn credentials_token(
    member: &Client,
    cluster: &str,
    timeout: Duration,
) -> Result<IssuedToken> {
    ensure_namespace(member, namespaces::KARMADA_CLUSTER, MEMBER).await?;
    let account = registration::service_account(cluster);
    ensure_service_account(member, &account).await?;
    let role = registration::role(&account);
    let all = |values: &[&str]| Some(values.iter().map(|v| (*v).to_owned()).collect());
    let cluster_role = ClusterRole {
        metadata: meta(&role, None),
        rules: Some(vec![
            PolicyRule {
                verbs: vec!["*".into()],
                api_groups: all(&["*"]),
                resources: all(&["*"]),
                ..PolicyRule::default()
            },
            PolicyRule {
                verbs: vec!["get".into()],
                non_resource_urls: all(&["*"]),
                ..PolicyRule::default()
            },
        ]),
        aggregation_rule: None,
    };
    let what = format!("ClusterRole {role} in {MEMBER}");
    create_if_missing(Api::all(member.clone()), &cluster_role, &what).await?;
    let binding = ClusterRoleBinding {
        metadata: meta(&role, None),
        role_ref: RoleRef {
            api_group: Some("rbac.authorization.k8s.io".into()),
            kind: "ClusterRole".into(),
            name: role.clone(),
        },
        subjects: Some(vec![Subject {
            kind: "ServiceAccount".into(),
            name: account.clone(),
            namespace: Some(namespaces::KARMADA_CLUSTER.into()),
            ..Subject::default()
        }]),
    };
    let what = format!("ClusterRoleBinding {role} in {MEMBER}");
    create_if_missing(Api::all(member.clone()), &binding, &what).await?;
    service_account_token(member, &account, timeout).await
}

/// Removes from the member what registering `cluster` created there, as `karmadactl unregister` lists it (and
/// `karmadactl unjoin` does by deleting the namespace): the credentials ClusterRoleBinding and ClusterRole, both
/// ServiceAccounts and their token Secrets, and namespace `karmada-cluster`. What is already gone is skipped.
///
/// # Errors
/// `Kube` naming the first object the member refused to delete.
pub async fn remove(member: &Client, cluster: &str) -> Result<()> {
    let ns = namespaces::KARMADA_CLUSTER;
    let account = registration::service_account(cluster);
    let role = registration::role(&account);
    let binding = format!("ClusterRoleBinding {role}");
    delete(
        Api::<ClusterRoleBinding>::all(member.clone()),
        &role,
        &binding,
    )
    .await?;
    let cluster_role = format!("ClusterRole {role}");
    delete(
        Api::<ClusterRole>::all(member.clone()),
        &role,
        &cluster_role,
    )
    .await?;
    for account in [account.as_str(), registration::IMPERSONATOR_SERVICE_ACCOUNT] {
        let what = format!("ServiceAccount {ns}/{account}");
        delete(
            Api::<ServiceAccount>::namespaced(member.clone(), ns),
            account,
            &what,
        )
        .await?;
        let what = format!("Secret {ns}/{account}");
        delete(
            Api::<Secret>::namespaced(member.clone(), ns),
            account,
            &what,
        )
        .await?;
    }
    let what = format!("Namespace {ns}");
    delete(Api::<Namespace>::all(member.clone()), ns, &what).await
}

fn meta(name: &str, namespace: Option<&str>) -> ObjectMeta {
    ObjectMeta {
        name: Some(name.to_owned()),
        namespace: namespace.map(str::to_owned),
        labels: Some(system_labels()),
        ..ObjectMeta::default()
    }
}

async fn ensure_service_account(member: &Client, account: &str) -> Result<()> {
    let ns = namespaces::KARMADA_CLUSTER;
    let sa = ServiceAccount {
        metadata: meta(account, Some(ns)),
        ..ServiceAccount::default()
    };
    let what = format!("ServiceAccount {ns}/{account} in {MEMBER}");
    create_if_missing(Api::namespaced(member.clone(), ns), &sa, &what).await
}

/// Deletes object `name` (`what`, as errors name it), unless it is gone already.
async fn delete<K>(api: Api<K>, name: &str, what: &str) -> Result<()>
where
    K: kube::Resource + Clone + DeserializeOwned + std::fmt::Debug,
{
    match api.delete(name, &DeleteParams::default()).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(status)) if status.code == 404 => Ok(()),
        Err(source) => Err(Error::kube("delete", format!("{what} in {MEMBER}"), source)),
    }
}

/// Waits until the token Secret of `account` (named like it, as Karmada names it) holds a token, creating the
/// Secret when it is missing: since Kubernetes 1.24 no token Secret is made for a ServiceAccount by itself.
async fn service_account_token(
    member: &Client,
    account: &str,
    timeout: Duration,
) -> Result<IssuedToken> {
    let ns = namespaces::KARMADA_CLUSTER;
    let secrets: Api<Secret> = Api::namespaced(member.clone(), ns);
    let describe = || format!("Secret {ns}/{account} in {MEMBER}");
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        let found = secrets
            .get_opt(account)
            .await
            .map_err(|source| Error::kube("get", describe(), source))?;
        match found {
            None => {
                let secret = Secret {
                    metadata: ObjectMeta {
                        name: Some(account.to_owned()),
                        namespace: Some(ns.to_owned()),
                        annotations: Some(
                            [(
                                "kubernetes.io/service-account.name".to_owned(),
                                account.to_owned(),
                            )]
                            .into(),
                        ),
                        ..ObjectMeta::default()
                    },
                    type_: Some("kubernetes.io/service-account-token".into()),
                    ..Secret::default()
                };
                match secrets.create(&PostParams::default(), &secret).await {
                    Ok(_) => {}
                    Err(kube::Error::Api(status)) if status.code == 409 => {}
                    Err(source) => return Err(Error::kube("create", describe(), source)),
                }
            }
            Some(secret) => {
                let data = secret.data.unwrap_or_default();
                let token = data
                    .get(secret_keys::TOKEN)
                    .map(|t| String::from_utf8_lossy(&t.0).into_owned())
                    .filter(|t| !t.is_empty());
                if let Some(token) = token {
                    let ca_crt = data
                        .get("ca.crt")
                        .map(|ca| ca.0.clone())
                        .filter(|ca| !ca.is_empty());
                    return Ok(IssuedToken { token, ca_crt });
                }
            }
        }
        if tokio::time::Instant::now() >= deadline {
            return Err(Error::TokenNotIssued {
                namespace: ns.to_owned(),
                service_account: account.to_owned(),
                waited: timeout,
            });
        }
        tokio::time::sleep(TOKEN_POLL).await;
    }
}
