//! What `flotilla up` writes into the control plane before it reports ready: Flotilla's CRDs (waiting until
//! they are established) and the example webhook's ResourceInterpreterWebhookConfiguration. Both are
//! create-or-update, so a restart on the same data dir converges instead of failing on existing objects.

use std::time::Duration;

use anyhow::{Context, bail};
use flotilla_api::cluster::v1alpha1::Cluster;
use flotilla_api::config::v1alpha1::ResourceInterpreterWebhookConfiguration;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, DeleteParams, PostParams};
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
