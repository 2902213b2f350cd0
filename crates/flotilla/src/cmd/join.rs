//! `flotilla join NAME`: registers a member cluster in Push mode, as `karmadactl join` does: its credentials
//! in Secret `karmada-cluster/NAME` (`token`, `caBundle`) and a Cluster with `apiEndpoint` and `syncMode: Push`.
//!
//! The token is the member kubeconfig user's token; when that user authenticates otherwise (client
//! certificates, as kind's kubeconfigs do), a ServiceAccount with cluster-admin rights is created in the
//! member and its token used, like karmadactl's.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, anyhow, bail};
use base64::Engine;
use flotilla_controllers::join::{Registration, member_id, register};
use k8s_openapi::api::core::v1::{Namespace, Secret, ServiceAccount};
use k8s_openapi::api::rbac::v1::{ClusterRoleBinding, RoleRef, Subject};
use kube::api::{ObjectMeta, PostParams};
use kube::{Api, Client};
use serde_yaml::Value;

use super::kube_access;

/// Namespace of the member-side ServiceAccount (as karmadactl's).
const MEMBER_NAMESPACE: &str = "karmada-cluster";

/// Arguments of `flotilla join`.
#[derive(Debug, Clone, clap::Args)]
pub struct Args {
    /// Name of the member cluster (the Cluster object's name).
    pub name: String,
    /// Kubeconfig of the control plane; without it, in-cluster configuration or KUBECONFIG.
    #[arg(long)]
    pub kubeconfig: Option<PathBuf>,
    /// Context of the control plane in `--kubeconfig`.
    #[arg(long)]
    pub karmada_context: Option<String>,
    /// Kubeconfig of the member cluster.
    #[arg(long)]
    pub cluster_kubeconfig: PathBuf,
    /// Context of the member in `--cluster-kubeconfig` (default: its current context).
    #[arg(long)]
    pub cluster_context: Option<String>,
}

/// What the member kubeconfig says about reaching the member.
#[derive(Debug, Default, PartialEq)]
struct MemberAccess {
    server: String,
    ca_bundle: Option<Vec<u8>>,
    token: Option<String>,
}

/// Reads server, CA and token of a context from a kubeconfig document.
fn member_access(
    document: &str,
    context: Option<&str>,
    base: &Path,
) -> anyhow::Result<MemberAccess> {
    let doc: Value = serde_yaml::from_str(document).context("the member kubeconfig is not YAML")?;
    let context = match context {
        Some(name) => name.to_owned(),
        None => doc["current-context"]
            .as_str()
            .ok_or_else(|| {
                anyhow!("the member kubeconfig has no current-context; pass --cluster-context")
            })?
            .to_owned(),
    };
    let named = |list: &str, name: &str| -> Option<Value> {
        doc[list]
            .as_sequence()?
            .iter()
            .find(|item| item["name"].as_str() == Some(name))
            .cloned()
    };
    let ctx = named("contexts", &context)
        .ok_or_else(|| anyhow!("context {context:?} is not in the member kubeconfig"))?;
    let cluster_name = ctx["context"]["cluster"].as_str().unwrap_or_default();
    let user_name = ctx["context"]["user"].as_str().unwrap_or_default();
    let cluster = named("clusters", cluster_name).ok_or_else(|| {
        anyhow!("cluster {cluster_name:?} of context {context:?} is not in the member kubeconfig")
    })?;
    let server = cluster["cluster"]["server"]
        .as_str()
        .ok_or_else(|| anyhow!("cluster {cluster_name:?} in the member kubeconfig has no server"))?
        .to_owned();
    let resolve = |file: &str| {
        if Path::new(file).is_absolute() {
            PathBuf::from(file)
        } else {
            base.join(file)
        }
    };
    let ca_bundle = if let Some(data) = cluster["cluster"]["certificate-authority-data"].as_str() {
        Some(
            base64::engine::general_purpose::STANDARD
                .decode(data.trim())
                .context("certificate-authority-data of the member kubeconfig is not base64")?,
        )
    } else if let Some(file) = cluster["cluster"]["certificate-authority"].as_str() {
        let path = resolve(file);
        Some(std::fs::read(&path).with_context(|| format!("failed to read {}", path.display()))?)
    } else {
        None
    };
    let user = named("users", user_name)
        .map(|u| u["user"].clone())
        .unwrap_or(Value::Null);
    let token = if let Some(token) = user["token"].as_str() {
        Some(token.to_owned())
    } else if let Some(file) = user["tokenFile"]
        .as_str()
        .or_else(|| user["token-file"].as_str())
    {
        let path = resolve(file);
        Some(
            std::fs::read_to_string(&path)
                .with_context(|| format!("failed to read {}", path.display()))?
                .trim()
                .to_owned(),
        )
    } else {
        None
    };
    Ok(MemberAccess {
        server,
        ca_bundle,
        token,
    })
}

/// Registers the member with the control plane.
pub async fn run(args: Args) -> anyhow::Result<()> {
    let control = kube_access::client(args.kubeconfig.as_deref(), args.karmada_context.as_deref())
        .await
        .context("failed to reach the control plane")?;
    let path = &args.cluster_kubeconfig;
    let document = std::fs::read_to_string(path)
        .with_context(|| format!("failed to read {}", path.display()))?;
    let base = path.parent().unwrap_or_else(|| Path::new("."));
    let access = member_access(&document, args.cluster_context.as_deref(), base)
        .with_context(|| format!("invalid member kubeconfig {}", path.display()))?;
    let member = kube_access::client(Some(path), args.cluster_context.as_deref())
        .await
        .context("failed to reach the member cluster")?;
    let token = match access.token {
        Some(token) => token,
        None => service_account_token(&member, &args.name).await?,
    };
    let id = member_id(&member)
        .await
        .context("failed to read the member's kube-system namespace")?;
    let registration = Registration {
        name: args.name.clone(),
        api_endpoint: access.server,
        token,
        ca_bundle: access.ca_bundle,
        id,
    };
    register(&control, &registration)
        .await
        .with_context(|| format!("failed to register cluster {}", args.name))?;
    println!("cluster({}) is joined successfully", args.name);
    Ok(())
}

/// A long-lived token of a cluster-admin ServiceAccount `karmada-<name>` in the member's `karmada-cluster`.
async fn service_account_token(member: &Client, cluster: &str) -> anyhow::Result<String> {
    let account = format!("karmada-{cluster}");
    let create = |what: String, result: Result<(), kube::Error>| match result {
        Ok(()) => Ok(()),
        Err(kube::Error::Api(status)) if status.code == 409 => Ok(()),
        Err(err) => {
            Err(anyhow::Error::new(err).context(format!("failed to create {what} in the member")))
        }
    };
    let meta = |name: &str, namespace: Option<&str>| ObjectMeta {
        name: Some(name.to_owned()),
        namespace: namespace.map(str::to_owned),
        ..ObjectMeta::default()
    };
    let pp = PostParams::default();
    let namespace = Namespace {
        metadata: meta(MEMBER_NAMESPACE, None),
        ..Namespace::default()
    };
    create(
        format!("namespace {MEMBER_NAMESPACE}"),
        Api::<Namespace>::all(member.clone())
            .create(&pp, &namespace)
            .await
            .map(|_| ()),
    )?;
    let sa = ServiceAccount {
        metadata: meta(&account, Some(MEMBER_NAMESPACE)),
        ..ServiceAccount::default()
    };
    create(
        format!("ServiceAccount {MEMBER_NAMESPACE}/{account}"),
        Api::<ServiceAccount>::namespaced(member.clone(), MEMBER_NAMESPACE)
            .create(&pp, &sa)
            .await
            .map(|_| ()),
    )?;
    let binding = ClusterRoleBinding {
        metadata: meta(&format!("karmada-controller-manager:{account}"), None),
        role_ref: RoleRef {
            api_group: Some("rbac.authorization.k8s.io".into()),
            kind: "ClusterRole".into(),
            name: "cluster-admin".into(),
        },
        subjects: Some(vec![Subject {
            kind: "ServiceAccount".into(),
            name: account.clone(),
            namespace: Some(MEMBER_NAMESPACE.into()),
            ..Subject::default()
        }]),
    };
    create(
        "the cluster-admin binding".into(),
        Api::<ClusterRoleBinding>::all(member.clone())
            .create(&pp, &binding)
            .await
            .map(|_| ()),
    )?;
    let secret_name = format!("{account}-token");
    let mut secret_meta = meta(&secret_name, Some(MEMBER_NAMESPACE));
    secret_meta.annotations = Some(
        [(
            "kubernetes.io/service-account.name".to_owned(),
            account.clone(),
        )]
        .into(),
    );
    let secret = Secret {
        metadata: secret_meta,
        type_: Some("kubernetes.io/service-account-token".into()),
        ..Secret::default()
    };
    let secrets: Api<Secret> = Api::namespaced(member.clone(), MEMBER_NAMESPACE);
    create(
        format!("Secret {MEMBER_NAMESPACE}/{secret_name}"),
        secrets.create(&pp, &secret).await.map(|_| ()),
    )?;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let token = secrets
            .get(&secret_name)
            .await
            .ok()
            .and_then(|s| s.data)
            .and_then(|d| {
                d.get("token")
                    .map(|t| String::from_utf8_lossy(&t.0).into_owned())
            });
        if let Some(token) = token.filter(|t| !t.is_empty()) {
            return Ok(token);
        }
        if tokio::time::Instant::now() > deadline {
            bail!(
                "the member did not issue a token for ServiceAccount {MEMBER_NAMESPACE}/{account} within 30s"
            );
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn member_access_reads_server_ca_and_token_of_the_context() {
        let doc = flotilla_apiserver::kubeconfig::render(
            "https://127.0.0.1:7444",
            "PEM-DATA",
            "t0ken",
            "member1",
        );
        let access = member_access(&doc, None, Path::new(".")).unwrap();
        assert_eq!(access.server, "https://127.0.0.1:7444");
        assert_eq!(access.ca_bundle.as_deref(), Some(b"PEM-DATA".as_slice()));
        assert_eq!(access.token.as_deref(), Some("t0ken"));
        assert!(member_access(&doc, Some("nope"), Path::new(".")).is_err());
    }
}
