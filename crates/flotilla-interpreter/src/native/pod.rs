//! The objects a pod spec depends on, shared by the native layer and the Lua `kube` library so
//! their results match exactly. The per-replica requirements of a pod template are in
//! [`super::requirements`].

use std::collections::BTreeSet;

use flotilla_api::config::v1alpha1::DependentObjectReference;
use flotilla_api::work::v1alpha2::ReplicaRequirements;
use k8s_openapi::api::core::v1::{EnvFromSource, EnvVar, PodSpec, PodTemplateSpec, Volume};

use super::NativeError;

/// [`super::requirements::template_requirements`] for a template already decoded into its Kubernetes type (as
/// the webhook SDK's example holds it): the same computation, through the template's JSON.
///
/// # Errors
/// As [`super::requirements::template_requirements`].
pub fn replica_requirements(
    template: &PodTemplateSpec,
) -> Result<Option<ReplicaRequirements>, NativeError> {
    let json = serde_json::to_value(template).map_err(|source| NativeError::Decode {
        what: "pod template".to_owned(),
        source,
    })?;
    super::requirements::template_requirements(&json, || "pod template".to_owned())
}

/// The ConfigMaps, Secrets, ServiceAccount and PersistentVolumeClaims a pod spec refers to, each as a
/// `v1` reference in `namespace`: all ConfigMaps, then Secrets, then the ServiceAccount, then
/// PVCs; names are deduplicated and sorted within a kind, empty names skipped, and the `default` service
/// account is not a dependency.
pub fn dependencies(spec: &PodSpec, namespace: &str) -> Vec<DependentObjectReference> {
    let mut config_maps = BTreeSet::new();
    let mut secrets = BTreeSet::new();
    for (env, env_from) in env_sources(spec) {
        for source in env_from {
            config_maps.extend(source.config_map_ref.as_ref().map(|r| r.name.as_str()));
            secrets.extend(source.secret_ref.as_ref().map(|r| r.name.as_str()));
        }
        for var in env {
            let Some(from) = &var.value_from else {
                continue;
            };
            config_maps.extend(from.config_map_key_ref.as_ref().map(|r| r.name.as_str()));
            secrets.extend(from.secret_key_ref.as_ref().map(|r| r.name.as_str()));
        }
    }
    secrets.extend(
        spec.image_pull_secrets
            .iter()
            .flatten()
            .map(|r| r.name.as_str()),
    );
    let volumes = spec.volumes.as_deref().unwrap_or_default();
    for volume in volumes {
        volume_config_maps(volume, &mut config_maps);
        secrets.extend(volume_secrets(volume));
    }
    let service_account = spec
        .service_account_name
        .as_deref()
        .filter(|name| *name != "default");
    let claims = volumes
        .iter()
        .filter_map(|v| v.persistent_volume_claim.as_ref())
        .map(|c| c.claim_name.as_str());
    let claims: BTreeSet<&str> = claims.collect();

    let mut refs = Vec::new();
    let mut push = |kind: &str, names: &mut dyn Iterator<Item = &str>| {
        for name in names.filter(|name| !name.is_empty()) {
            refs.push(DependentObjectReference {
                api_version: "v1".to_owned(),
                kind: kind.to_owned(),
                namespace: namespace.to_owned(),
                name: name.to_owned(),
                label_selector: None,
            });
        }
    };
    push("ConfigMap", &mut config_maps.into_iter());
    push("Secret", &mut secrets.into_iter());
    push("ServiceAccount", &mut service_account.into_iter());
    push("PersistentVolumeClaim", &mut claims.into_iter());
    refs
}

/// `env` and `envFrom` of every init, regular and ephemeral container.
fn env_sources(spec: &PodSpec) -> Vec<(&[EnvVar], &[EnvFromSource])> {
    fn of<'a>(
        env: &'a Option<Vec<EnvVar>>,
        from: &'a Option<Vec<EnvFromSource>>,
    ) -> (&'a [EnvVar], &'a [EnvFromSource]) {
        (
            env.as_deref().unwrap_or_default(),
            from.as_deref().unwrap_or_default(),
        )
    }
    let init = spec
        .init_containers
        .iter()
        .flatten()
        .map(|c| of(&c.env, &c.env_from));
    let regular = spec.containers.iter().map(|c| of(&c.env, &c.env_from));
    let ephemeral = spec
        .ephemeral_containers
        .iter()
        .flatten()
        .map(|c| of(&c.env, &c.env_from));
    init.chain(regular).chain(ephemeral).collect()
}

/// ConfigMaps a volume mounts, directly or through a projection.
fn volume_config_maps<'a>(volume: &'a Volume, out: &mut BTreeSet<&'a str>) {
    if let Some(projected) = &volume.projected {
        out.extend(
            projected
                .sources
                .iter()
                .flatten()
                .filter_map(|s| s.config_map.as_ref())
                .map(|c| c.name.as_str()),
        );
    } else if let Some(config_map) = &volume.config_map {
        out.insert(config_map.name.as_str());
    }
}

/// Secrets a volume refers to; like Kubernetes' visitor, only the first source type found counts.
fn volume_secrets(volume: &Volume) -> Vec<&str> {
    fn name(r: &Option<k8s_openapi::api::core::v1::LocalObjectReference>) -> Vec<&str> {
        r.iter().map(|r| r.name.as_str()).collect()
    }
    if let Some(s) = &volume.azure_file {
        vec![s.secret_name.as_str()]
    } else if let Some(s) = &volume.cephfs {
        name(&s.secret_ref)
    } else if let Some(s) = &volume.cinder {
        name(&s.secret_ref)
    } else if let Some(s) = &volume.flex_volume {
        name(&s.secret_ref)
    } else if let Some(s) = &volume.projected {
        s.sources
            .iter()
            .flatten()
            .filter_map(|p| p.secret.as_ref())
            .map(|p| p.name.as_str())
            .collect()
    } else if let Some(s) = &volume.rbd {
        name(&s.secret_ref)
    } else if let Some(s) = &volume.secret {
        s.secret_name.iter().map(String::as_str).collect()
    } else if let Some(s) = &volume.scale_io {
        vec![s.secret_ref.name.as_str()]
    } else if let Some(s) = &volume.iscsi {
        name(&s.secret_ref)
    } else if let Some(s) = &volume.storageos {
        name(&s.secret_ref)
    } else if let Some(s) = &volume.csi {
        name(&s.node_publish_secret_ref)
    } else {
        Vec::new()
    }
}

#[cfg(test)]
#[path = "pod_tests.rs"]
mod tests;
