//! The patch metadata of built-in kinds: which lists merge, and by which key, as strategic merge patch and
//! server-side apply read them.
//!
//! Upstream reads `patchStrategy`/`patchMergeKey` struct tags through reflection; we walk a small type graph
//! that names only the types holding merging lists. Any field not listed here is a plain map (merged key by
//! key) or an atomic list (replaced), which is what the tags say for everything else.

pub(crate) use crate::kinds::MergeShape as Ty;

/// How the list (or map) at a field merges.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Strategy {
    /// Replace wholesale (the default for lists); maps still merge key by key.
    Default,
    /// `patchStrategy: merge`: lists of maps merge by `key`; lists of scalars (key `None`) form a set.
    Merge(Option<&'static str>),
}

/// The type a top-level object of this group/kind has: its built-in entry's (`crate::kinds`), or
/// [`Ty::Object`] for kinds that are not built-in (strategic merge patch does not apply to custom resources).
pub(crate) fn root(group: &str, kind: &str) -> Ty {
    crate::kinds::find_kind(group, kind).map_or(Ty::Object, |b| b.merge)
}

/// The type and merge strategy of field `key` inside an object of type `ty`.
pub(crate) fn field(ty: Ty, key: &str) -> (Ty, Strategy) {
    use Strategy::{Default as Atomic, Merge};
    let by = |k: &'static str| Merge(Some(k));
    let top = matches!(
        ty,
        Ty::Object
            | Ty::Pod
            | Ty::Workload
            | Ty::Job
            | Ty::CronJob
            | Ty::PodTemplate
            | Ty::Service
            | Ty::ServiceAccount
            | Ty::Node
            | Ty::ConditionsOwner
            | Ty::WebhookConfiguration
    );
    if top && key == "metadata" {
        return (Ty::Meta, Atomic);
    }
    match (ty, key) {
        (Ty::Pod, "spec") => (Ty::PodSpec, Atomic),
        (Ty::Pod, "status") => (Ty::PodStatus, Atomic),
        (Ty::Workload, "spec") => (Ty::WorkloadSpec, Atomic),
        (Ty::Job, "spec") | (Ty::JobTemplateSpec, "spec") => (Ty::JobSpec, Atomic),
        (Ty::CronJob, "spec") => (Ty::CronJobSpec, Atomic),
        (Ty::Workload | Ty::Job | Ty::Service | Ty::ConditionsOwner, "status") => {
            (Ty::ConditionsStatus, Atomic)
        }
        (Ty::PodTemplate | Ty::WorkloadSpec | Ty::JobSpec, "template") => {
            (Ty::PodTemplateSpec, Atomic)
        }
        (Ty::CronJobSpec, "jobTemplate") => (Ty::JobTemplateSpec, Atomic),
        (Ty::JobTemplateSpec | Ty::PodTemplateSpec, "metadata") => (Ty::Meta, Atomic),
        (Ty::PodTemplateSpec, "spec") => (Ty::PodSpec, Atomic),
        (Ty::Service, "spec") => (Ty::ServiceSpec, Atomic),
        (Ty::ServiceAccount, "secrets") | (Ty::WebhookConfiguration, "webhooks") => {
            (Ty::Plain, by("name"))
        }
        (Ty::Node, "spec") => (Ty::NodeSpec, Atomic),
        (Ty::Node, "status") => (Ty::NodeStatus, Atomic),
        (Ty::Meta, "ownerReferences") => (Ty::Plain, by("uid")),
        (Ty::Meta, "finalizers") | (Ty::NodeSpec, "podCIDRs") => (Ty::Plain, Merge(None)),
        (Ty::PodSpec, "containers" | "initContainers" | "ephemeralContainers") => {
            (Ty::Container, by("name"))
        }
        (Ty::PodSpec, "volumes" | "imagePullSecrets" | "schedulingGates" | "resourceClaims") => {
            (Ty::Plain, by("name"))
        }
        (Ty::PodSpec, "hostAliases") => (Ty::Plain, by("ip")),
        (Ty::PodSpec, "topologySpreadConstraints") => (Ty::Plain, by("topologyKey")),
        (Ty::Container, "ports") => (Ty::Plain, by("containerPort")),
        (Ty::Container, "env") => (Ty::Plain, by("name")),
        (Ty::Container, "volumeMounts") => (Ty::Plain, by("mountPath")),
        (Ty::Container, "volumeDevices") => (Ty::Plain, by("devicePath")),
        (Ty::PodStatus | Ty::NodeStatus | Ty::ConditionsStatus, "conditions") => {
            (Ty::Plain, by("type"))
        }
        (Ty::PodStatus, "podIPs" | "hostIPs") => (Ty::Plain, by("ip")),
        (Ty::PodStatus, "resourceClaimStatuses") => (Ty::Plain, by("name")),
        (Ty::NodeStatus, "addresses") => (Ty::Plain, by("type")),
        (Ty::ServiceSpec, "ports") => (Ty::Plain, by("port")),
        _ => (Ty::Plain, Atomic),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Follows a dotted path from a kind's root and reports the strategy of its last field.
    fn strategy_at(group: &str, kind: &str, path: &str) -> Strategy {
        let mut ty = root(group, kind);
        let mut strategy = Strategy::Default;
        for key in path.split('.') {
            (ty, strategy) = field(ty, key);
        }
        strategy
    }

    #[test]
    fn merge_keys_of_the_spec_table() {
        let by = |k| Strategy::Merge(Some(k));
        let cases = [
            ("", "Pod", "spec.containers", by("name")),
            ("", "Pod", "spec.initContainers", by("name")),
            ("", "Pod", "spec.volumes", by("name")),
            ("", "Pod", "spec.tolerations", Strategy::Default),
            ("", "Pod", "status.conditions", by("type")),
            ("", "Pod", "status.podIPs", by("ip")),
            ("", "Pod", "metadata.finalizers", Strategy::Merge(None)),
            ("", "Pod", "metadata.ownerReferences", by("uid")),
            (
                "apps",
                "Deployment",
                "spec.template.spec.containers",
                by("name"),
            ),
            (
                "apps",
                "Deployment",
                "spec.template.metadata.finalizers",
                Strategy::Merge(None),
            ),
            (
                "apps",
                "StatefulSet",
                "spec.volumeClaimTemplates",
                Strategy::Default,
            ),
            ("apps", "Deployment", "status.conditions", by("type")),
            (
                "batch",
                "CronJob",
                "spec.jobTemplate.spec.template.spec.containers",
                by("name"),
            ),
            ("batch", "Job", "spec.template.spec.hostAliases", by("ip")),
            ("", "Service", "spec.ports", by("port")),
            ("", "ServiceAccount", "secrets", by("name")),
            ("", "ServiceAccount", "imagePullSecrets", Strategy::Default),
            ("", "Node", "status.addresses", by("type")),
            (
                "",
                "ConfigMap",
                "metadata.finalizers",
                Strategy::Merge(None),
            ),
            ("", "ConfigMap", "data", Strategy::Default),
        ];
        for (group, kind, path, want) in cases {
            assert_eq!(strategy_at(group, kind, path), want, "{kind} {path}");
        }
        let container_fields = [
            ("ports", by("containerPort")),
            ("env", by("name")),
            ("volumeMounts", by("mountPath")),
            ("volumeDevices", by("devicePath")),
            ("args", Strategy::Default),
            ("envFrom", Strategy::Default),
        ];
        for (f, want) in container_fields {
            assert_eq!(
                strategy_at("", "Pod", &format!("spec.containers.{f}")),
                want,
                "{f}"
            );
        }
    }
}
