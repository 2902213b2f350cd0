//! What `flotilla up` writes into the control plane before it reports ready: Flotilla's CRDs (waiting until
//! they are established), the admin's proxy permission `cluster-proxy-admin`, the bootstrap-token
//! configuration Pull-mode registrations need and the example webhook's ResourceInterpreterWebhookConfiguration. All are create-or-update, so a restart on the same data dir
//! converges instead of failing on existing objects.

use std::time::Duration;

use anyhow::{Context, bail};
use flotilla_api::cluster::v1alpha1::Cluster;
use flotilla_api::config::v1alpha1::ResourceInterpreterWebhookConfiguration;
use flotilla_api::names::labels;
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, Role, RoleBinding};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use kube::{Client, ResourceExt};

/// The label marking what `flotilla up` registered itself, and its value.
const MANAGED_BY: &str = "app.kubernetes.io/managed-by";
const MANAGER: &str = "flotilla-up";

/// How long CRDs may take to become established.
const ESTABLISH_TIMEOUT: Duration = Duration::from_secs(30);

/// Creates or updates every CRD Flotilla needs, then waits until each is established.
///
/// # Errors
/// When a CRD cannot be written or is not established in time.
pub async fn crds(client: &Client) -> anyhow::Result<usize> {
    let api: Api<CustomResourceDefinition> = Api::all(client.clone());
    let wanted = flotilla_api::crds::all();
    for crd in &wanted {
        let name = crd.name_any();
        match api
            .get_opt(&name)
            .await
            .with_context(|| format!("failed to read CRD {name}"))?
        {
            None => {
                api.create(&PostParams::default(), crd)
                    .await
                    .with_context(|| format!("failed to create CRD {name}"))?;
            }
            Some(existing) if !same_spec(&existing, crd) => {
                let mut updated = crd.clone();
                updated.metadata.resource_version = existing.resource_version();
                api.replace(&name, &PostParams::default(), &updated)
                    .await
                    .with_context(|| format!("failed to update CRD {name}"))?;
            }
            Some(_) => {}
        }
    }
    let deadline = tokio::time::Instant::now() + ESTABLISH_TIMEOUT;
    for crd in &wanted {
        let name = crd.name_any();
        loop {
            let current = api
                .get(&name)
                .await
                .with_context(|| format!("failed to read CRD {name}"))?;
            if established(&current) {
                break;
            }
            if tokio::time::Instant::now() > deadline {
                bail!(
                    "CRD {name} was not established within {}s",
                    ESTABLISH_TIMEOUT.as_secs()
                );
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
    Ok(wanted.len())
}

/// Whether a stored CRD already has the wanted spec, ignoring the `conversion: {strategy: None}` the API
/// server defaults (so a restart does not rewrite every CRD).
fn same_spec(existing: &CustomResourceDefinition, wanted: &CustomResourceDefinition) -> bool {
    let mut stored = existing.spec.clone();
    if wanted.spec.conversion.is_none()
        && stored
            .conversion
            .as_ref()
            .is_some_and(|c| c.strategy == "None" && c.webhook.is_none())
    {
        stored.conversion = None;
    }
    stored == wanted.spec
}

fn established(crd: &CustomResourceDefinition) -> bool {
    crd.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|cs| {
            cs.iter()
                .any(|c| c.type_ == "Established" && c.status == "True")
        })
}

/// ClusterRole and ClusterRoleBinding `cluster-proxy-admin`, letting user `system:admin` proxy to every member
/// through `cluster.karmada.io` `clusters/proxy`; `hack/local-up.sh` applies the same file.
const CLUSTER_PROXY_ADMIN: &str = include_str!("../../../../../manifests/cluster-proxy-admin-rbac.yaml");

/// The objects of [`CLUSTER_PROXY_ADMIN`], labelled `karmada.io/system: "true"` as `karmadactl init` labels them.
fn cluster_proxy_admin_objects() -> anyhow::Result<(ClusterRole, ClusterRoleBinding)> {
    let what = "manifests/cluster-proxy-admin-rbac.yaml";
    let documents: Vec<serde_json::Value> =
        flotilla_yaml::from_str_multiple(CLUSTER_PROXY_ADMIN).with_context(|| format!("invalid {what}"))?;
    let of_kind = |kind: &str| {
        documents
            .iter()
            .find(|d| d["kind"] == kind)
            .cloned()
            .with_context(|| format!("{what} has no {kind}"))
    };
    let mut role: ClusterRole = serde_json::from_value(of_kind("ClusterRole")?)
        .with_context(|| format!("invalid ClusterRole in {what}"))?;
    let mut binding: ClusterRoleBinding = serde_json::from_value(of_kind("ClusterRoleBinding")?)
        .with_context(|| format!("invalid ClusterRoleBinding in {what}"))?;
    // The API server defaults a user's or group's `apiGroup` to RBAC's; spelt out, a restart finds it unchanged.
    for subject in binding.subjects.iter_mut().flatten() {
        if subject.kind == "User" || subject.kind == "Group" {
            subject.api_group.get_or_insert_with(|| "rbac.authorization.k8s.io".to_owned());
        }
    }
    for meta in [&mut role.metadata, &mut binding.metadata] {
        meta.labels
            .get_or_insert_with(Default::default)
            .insert(labels::SYSTEM.to_owned(), labels::SYSTEM_VALUE.to_owned());
    }
    Ok((role, binding))
}

/// Grants `system:admin` the aggregated API's proxy to every member, as `karmadactl init` does (Karmada's
/// `grantProxyPermissionToAdmin`): creates ClusterRole and ClusterRoleBinding `cluster-proxy-admin`, or brings
/// their rules, subjects and labels back to what they should be.
///
/// # Errors
/// When they cannot be read or written.
pub async fn cluster_proxy_admin(client: &Client) -> anyhow::Result<()> {
    let (role, binding) = cluster_proxy_admin_objects()?;
    let roles: Api<ClusterRole> = Api::all(client.clone());
    let name = role.name_any();
    let context = || format!("failed to write ClusterRole {name}");
    match roles.get_opt(&name).await.with_context(context)? {
        None => {
            roles.create(&PostParams::default(), &role).await.with_context(context)?;
        }
        Some(mut existing) if existing.rules != role.rules || !has_labels(&existing, &role) => {
            existing.rules.clone_from(&role.rules);
            existing.labels_mut().extend(role.labels().clone());
            roles.replace(&name, &PostParams::default(), &existing).await.with_context(context)?;
        }
        Some(_) => {}
    }
    let bindings: Api<ClusterRoleBinding> = Api::all(client.clone());
    let name = binding.name_any();
    let context = || format!("failed to write ClusterRoleBinding {name}");
    match bindings.get_opt(&name).await.with_context(context)? {
        None => {
            bindings.create(&PostParams::default(), &binding).await.with_context(context)?;
        }
        Some(mut existing)
            if existing.subjects != binding.subjects || !has_labels(&existing, &binding) =>
        {
            existing.subjects.clone_from(&binding.subjects);
            existing.labels_mut().extend(binding.labels().clone());
            bindings.replace(&name, &PostParams::default(), &existing).await.with_context(context)?;
        }
        Some(_) => {}
    }
    Ok(())
}

/// Whether `existing` carries every label of `wanted`.
fn has_labels(existing: &impl ResourceExt, wanted: &impl ResourceExt) -> bool {
    wanted.labels().iter().all(|(k, v)| existing.labels().get(k) == Some(v))
}

/// The control plane's bootstrap-token configuration (cluster-info, and the RBAC that lets a registration token
/// post an agent's certificate request and the agentcsrapproving controller approve it); `hack/local-up.sh`
/// applies the same file.
const BOOTSTRAP_TOKEN_CONFIGURATION: &str =
    include_str!("../../../../../manifests/bootstrap-token-configuration.yaml");

/// The objects of [`BOOTSTRAP_TOKEN_CONFIGURATION`] for the control plane at `server` whose CA certificate is
/// `ca_pem`.
fn bootstrap_token_objects(server: &str, ca_pem: &str) -> anyhow::Result<Vec<serde_json::Value>> {
    use base64::Engine;
    let what = "manifests/bootstrap-token-configuration.yaml";
    let ca_data = base64::engine::general_purpose::STANDARD.encode(ca_pem);
    let text = BOOTSTRAP_TOKEN_CONFIGURATION
        .replace("FLOTILLA_SERVER", server)
        .replace("FLOTILLA_CA_DATA", &ca_data);
    flotilla_yaml::from_str_multiple(&text).with_context(|| format!("invalid {what}"))
}

/// Sets up what Pull-mode members need to register with a bootstrap token, as Karmada's local-up does: ConfigMap
/// `kube-public/cluster-info` naming the control plane at `server` with CA `ca_pem`, and the RBAC for
/// registration tokens and agents. Server-side apply with Flotilla as the owner of every field it sets, so a
/// restart (a new port, a changed object) converges and what others add (kube's bootstrap signer's signatures
/// in cluster-info) stays.
///
/// # Errors
/// When an object cannot be written.
pub async fn bootstrap_token_configuration(
    client: &Client,
    server: &str,
    ca_pem: &str,
) -> anyhow::Result<()> {
    for object in bootstrap_token_objects(server, ca_pem)? {
        let kind = object["kind"].as_str().unwrap_or_default().to_owned();
        let name = object["metadata"]["name"].as_str().unwrap_or_default().to_owned();
        let namespace = object["metadata"]["namespace"].as_str().unwrap_or_default().to_owned();
        let context = || format!("failed to apply {kind} {name}");
        let ns = namespace.as_str();
        match kind.as_str() {
            "ConfigMap" => apply(Api::<ConfigMap>::namespaced(client.clone(), ns), &name, object).await,
            "Role" => apply(Api::<Role>::namespaced(client.clone(), ns), &name, object).await,
            "RoleBinding" => {
                apply(Api::<RoleBinding>::namespaced(client.clone(), ns), &name, object).await
            }
            "ClusterRole" => apply(Api::<ClusterRole>::all(client.clone()), &name, object).await,
            "ClusterRoleBinding" => {
                apply(Api::<ClusterRoleBinding>::all(client.clone()), &name, object).await
            }
            other => Err(anyhow::anyhow!("unexpected kind {other}")),
        }
        .with_context(context)?;
    }
    Ok(())
}

/// Server-side applies `object` through `api` as `flotilla up`, taking over fields another manager set.
async fn apply<K>(api: Api<K>, name: &str, object: serde_json::Value) -> anyhow::Result<()>
where
    K: kube::Resource + Clone + std::fmt::Debug + serde::Serialize + serde::de::DeserializeOwned,
{
    let typed: K = serde_json::from_value(object).context("invalid object")?;
    api.patch(name, &PatchParams::apply(MANAGER).force(), &Patch::Apply(&typed))
        .await?;
    Ok(())
}

/// Creates or updates a ResourceInterpreterWebhookConfiguration (its URL and CA change on every start).
///
/// # Errors
/// When it cannot be written.
pub async fn webhook_configuration(
    client: &Client,
    wanted: &ResourceInterpreterWebhookConfiguration,
) -> anyhow::Result<()> {
    let api: Api<ResourceInterpreterWebhookConfiguration> = Api::all(client.clone());
    let name = wanted.name_any();
    let context = || format!("failed to register ResourceInterpreterWebhookConfiguration {name}");
    let mut wanted = wanted.clone();
    wanted
        .labels_mut()
        .insert(MANAGED_BY.to_owned(), MANAGER.to_owned());
    let wanted = &wanted;
    match api.get_opt(&name).await.with_context(context)? {
        None => {
            api.create(&PostParams::default(), wanted)
                .await
                .with_context(context)?;
        }
        Some(existing)
            if existing.webhooks != wanted.webhooks || existing.labels() != wanted.labels() =>
        {
            let mut updated = wanted.clone();
            updated.metadata.resource_version = existing.resource_version();
            api.replace(&name, &PostParams::default(), &updated)
                .await
                .with_context(context)?;
        }
        Some(_) => {}
    }
    Ok(())
}

/// Deletes the ResourceInterpreterWebhookConfiguration `name` if `flotilla up` registered it (it carries our
/// `app.kubernetes.io/managed-by` label; one a user registered under the same name is left alone). Returns
/// whether it deleted one.
///
/// # Errors
/// When it cannot be read or deleted.
pub async fn remove_webhook_configuration(client: &Client, name: &str) -> anyhow::Result<bool> {
    let api: Api<ResourceInterpreterWebhookConfiguration> = Api::all(client.clone());
    let context = || format!("failed to remove ResourceInterpreterWebhookConfiguration {name}");
    let Some(existing) = api.get_opt(name).await.with_context(context)? else {
        return Ok(false);
    };
    if existing.labels().get(MANAGED_BY).map(String::as_str) != Some(MANAGER) {
        return Ok(false);
    }
    match api.delete(name, &DeleteParams::default()).await {
        Ok(_) => Ok(true),
        Err(kube::Error::Api(status)) if status.code == 404 => Ok(false),
        Err(e) => Err(e).with_context(context),
    }
}

/// Waits until `count` Clusters report `Ready=True` (the cluster status controller's first probe), so that
/// templates applied right after `ready:` schedule at once.
///
/// # Errors
/// When the clusters cannot be listed or are not ready in time (naming those that are not).
pub async fn clusters_ready(
    client: &Client,
    count: usize,
    timeout: Duration,
) -> anyhow::Result<()> {
    let api: Api<Cluster> = Api::all(client.clone());
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        let clusters = api
            .list(&Default::default())
            .await
            .context("failed to list Clusters")?;
        let not_ready: Vec<String> = clusters
            .iter()
            .filter(|c| {
                !c.status.as_ref().is_some_and(|s| {
                    s.conditions
                        .iter()
                        .any(|c| c.type_ == "Ready" && c.status == "True")
                })
            })
            .map(ResourceExt::name_any)
            .collect();
        if clusters.items.len() >= count && not_ready.is_empty() {
            return Ok(());
        }
        if tokio::time::Instant::now() > deadline {
            bail!(
                "member clusters not Ready within {}s: {}",
                timeout.as_secs(),
                not_ready.join(", ")
            );
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn the_bootstrap_configuration_names_the_control_plane_and_grants_registrations() {
        let ca = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
        let objects = bootstrap_token_objects("https://127.0.0.1:6443", ca).unwrap();
        let named: Vec<(String, String)> = objects
            .iter()
            .map(|o| {
                (
                    o["kind"].as_str().unwrap().to_owned(),
                    o["metadata"]["name"].as_str().unwrap().to_owned(),
                )
            })
            .collect();
        let expected = [
            ("ConfigMap", "cluster-info"),
            ("Role", "system:karmada:bootstrap-signer-clusterinfo"),
            ("RoleBinding", "system:karmada:bootstrap-signer-clusterinfo"),
            ("ClusterRoleBinding", "system:karmada:agent-bootstrap"),
            ("ClusterRole", "system:karmada:certificatesigningrequest:autoapprover"),
            ("ClusterRoleBinding", "system:karmada:agent-autoapprove-bootstrap"),
            ("ClusterRole", "system:karmada:certificatesigningrequest:selfautoapprover"),
            ("ClusterRoleBinding", "system:karmada:agent-autoapprove-certificate-rotation"),
            ("ClusterRole", "system:karmada:agent-rbac-generator"),
            ("ClusterRoleBinding", "system:karmada:agent-rbac-generator"),
        ]
        .map(|(k, n)| (k.to_owned(), n.to_owned()));
        assert_eq!(named, expected);

        // cluster-info holds a kubeconfig with the one cluster and no user.
        let kubeconfig: serde_json::Value =
            flotilla_yaml::from_str(objects[0]["data"]["kubeconfig"].as_str().unwrap()).unwrap();
        use base64::Engine;
        let ca_data = base64::engine::general_purpose::STANDARD.encode(ca);
        assert_eq!(
            kubeconfig,
            serde_json::json!({"apiVersion": "v1", "kind": "Config", "clusters": [{"name": "",
                "cluster": {"server": "https://127.0.0.1:6443", "certificate-authority-data": ca_data}}]})
        );
        assert_eq!(objects[0]["metadata"]["namespace"], "kube-public");
        // Every object parses as its kind, and the bindings name who they should.
        let subject = |name: &str| {
            let binding = objects
                .iter()
                .find(|o| o["metadata"]["name"] == name && o["kind"].as_str().unwrap().ends_with("Binding"))
                .unwrap();
            let subjects = &binding["subjects"];
            assert_eq!(subjects.as_array().unwrap().len(), 1, "{name}");
            (
                subjects[0]["kind"].as_str().unwrap().to_owned(),
                subjects[0]["name"].as_str().unwrap().to_owned(),
                binding["roleRef"]["name"].as_str().unwrap().to_owned(),
            )
        };
        let owned = |a: &str, b: &str, c: &str| (a.to_owned(), b.to_owned(), c.to_owned());
        let token_group = "system:bootstrappers:karmada:default-cluster-token";
        assert_eq!(
            subject("system:karmada:bootstrap-signer-clusterinfo"),
            owned("User", "system:anonymous", "system:karmada:bootstrap-signer-clusterinfo")
        );
        assert_eq!(
            subject("system:karmada:agent-bootstrap"),
            owned("Group", token_group, "system:node-bootstrapper")
        );
        assert_eq!(
            subject("system:karmada:agent-autoapprove-bootstrap"),
            owned("Group", token_group, "system:karmada:certificatesigningrequest:autoapprover")
        );
        assert_eq!(
            subject("system:karmada:agent-autoapprove-certificate-rotation"),
            owned(
                "Group",
                "system:karmada:agents",
                "system:karmada:certificatesigningrequest:selfautoapprover"
            )
        );
        assert_eq!(
            subject("system:karmada:agent-rbac-generator"),
            owned("User", "system:karmada:agent:rbac-generator", "system:karmada:agent-rbac-generator")
        );
        for object in &objects {
            match object["kind"].as_str().unwrap() {
                "ConfigMap" => drop(serde_json::from_value::<ConfigMap>(object.clone()).unwrap()),
                "Role" => drop(serde_json::from_value::<Role>(object.clone()).unwrap()),
                "RoleBinding" => drop(serde_json::from_value::<RoleBinding>(object.clone()).unwrap()),
                "ClusterRole" => drop(serde_json::from_value::<ClusterRole>(object.clone()).unwrap()),
                _ => drop(serde_json::from_value::<ClusterRoleBinding>(object.clone()).unwrap()),
            }
        }
    }

    #[test]
    fn cluster_proxy_admin_lets_system_admin_proxy_every_cluster() {
        let (role, binding) = cluster_proxy_admin_objects().unwrap();
        assert_eq!(role.name_any(), "cluster-proxy-admin");
        let rules = serde_json::to_value(&role.rules).unwrap();
        assert_eq!(
            rules,
            serde_json::json!([{"apiGroups": ["cluster.karmada.io"], "resources": ["clusters/proxy"], "verbs": ["*"]}])
        );
        assert_eq!(binding.role_ref.kind, "ClusterRole");
        assert_eq!(binding.role_ref.name, "cluster-proxy-admin");
        let subjects = binding.subjects.clone().unwrap();
        assert_eq!(subjects.len(), 1);
        assert_eq!((subjects[0].kind.as_str(), subjects[0].name.as_str()), ("User", "system:admin"));
        for labels in [role.labels(), binding.labels()] {
            assert_eq!(labels.get("karmada.io/system").map(String::as_str), Some("true"));
        }
    }
}
