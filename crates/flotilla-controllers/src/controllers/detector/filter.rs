//! What the detector watches (the preferred version of every resource that can be listed, watched and deleted,
//! except Karmada's own groups, events, Leases and `--skipped-propagating-apis`) and which template events it
//! acts on. Pure.

use std::collections::{BTreeMap, BTreeSet};

use flotilla_api::names::{annotations, labels};
use kube::api::DynamicObject;
use regex::Regex;
use serde_json::Value;

use crate::discovery::ServedResource;

/// API groups never propagated (Karmada's own and events).
const SKIPPED_GROUPS: [&str; 9] = [
    "cluster.karmada.io",
    "policy.karmada.io",
    "work.karmada.io",
    "config.karmada.io",
    "networking.karmada.io",
    "autoscaling.karmada.io",
    "remedy.karmada.io",
    "apps.karmada.io",
    "events.k8s.io",
];

/// `--skipped-propagating-apis`, parsed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct SkippedApis {
    groups: BTreeSet<String>,
    group_versions: BTreeSet<String>,
    kinds: BTreeSet<(String, String)>,
}

impl SkippedApis {
    /// Parses `;`-separated entries `group`, `group/version` or `group/version/Kind1,Kind2` (kinds compared
    /// case-insensitively; the core group is written as an empty group, e.g. `/v1/Pod`).
    pub(crate) fn parse(spec: &str) -> Self {
        let mut out = SkippedApis::default();
        for entry in spec.split(';').map(str::trim).filter(|e| !e.is_empty()) {
            let parts: Vec<&str> = entry.splitn(3, '/').collect();
            match parts.as_slice() {
                [group] => {
                    out.groups.insert((*group).to_owned());
                }
                [group, version] => {
                    out.group_versions.insert(group_version(group, version));
                }
                [group, version, kinds] => {
                    let gv = group_version(group, version);
                    for kind in kinds.split(',').map(str::trim).filter(|k| !k.is_empty()) {
                        out.kinds.insert((gv.clone(), kind.to_ascii_lowercase()));
                    }
                }
                _ => {}
            }
        }
        out
    }

    fn skips(&self, resource: &ServedResource) -> bool {
        let r = &resource.resource;
        self.groups.contains(&r.group)
            || self.group_versions.contains(&r.api_version)
            || self
                .kinds
                .contains(&(r.api_version.clone(), r.kind.to_ascii_lowercase()))
    }
}

fn group_version(group: &str, version: &str) -> String {
    if group.is_empty() {
        version.to_owned()
    } else {
        format!("{group}/{version}")
    }
}

/// Whether the detector watches this resource: the preferred version of its group, with list, watch and
/// delete, not in a skipped group, not core `Event`, not `coordination.k8s.io/v1`, not skipped by the user.
pub(crate) fn watchable(resource: &ServedResource, skipped: &SkippedApis) -> bool {
    let r = &resource.resource;
    resource.preferred
        && ["list", "watch", "delete"]
            .iter()
            .all(|verb| resource.supports(verb))
        && !SKIPPED_GROUPS.contains(&r.group.as_str())
        && !(r.api_version == "v1" && r.kind == "Event")
        && r.api_version != "coordination.k8s.io/v1"
        && !skipped.skips(resource)
}

/// Whether objects in `namespace` are never propagated: reserved namespaces (`karmada-system`,
/// `karmada-cluster`, `karmada-es-*`) and those matching a pattern of `skipped`
/// (`--skipped-propagating-namespaces`).
pub(crate) fn namespace_skipped(skipped: &[Regex], namespace: &str) -> bool {
    !namespace.is_empty()
        && (flotilla_api::names::namespaces::is_reserved(namespace)
            || skipped.iter().any(|re| re.is_match(namespace)))
}

/// Whether a template event passes the detector's event filter: not in a reserved or skipped namespace, and
/// not the API server's own `kube-system/ConfigMap/extension-apiserver-authentication`.
pub(crate) fn template_event_passes(
    skipped: &[Regex],
    kind: &str,
    namespace: &str,
    name: &str,
) -> bool {
    if namespace_skipped(skipped, namespace) {
        return false;
    }
    !(kind == "ConfigMap"
        && namespace == "kube-system"
        && name == "extension-apiserver-authentication")
}

/// Whether an update changed more than `status`, `metadata.managedFields` and `metadata.resourceVersion`.
pub(crate) fn update_is_significant(old: &DynamicObject, new: &DynamicObject) -> bool {
    let strip = |obj: &DynamicObject| {
        let mut meta = obj.metadata.clone();
        meta.managed_fields = None;
        meta.resource_version = None;
        let mut data = obj.data.clone();
        if let Some(map) = data.as_object_mut() {
            map.remove("status");
        }
        (meta, data)
    };
    strip(old) != strip(new)
}

/// Lazy activation: whether two versions of a template are equal apart from what Karmada itself writes
/// (status, managedFields, resourceVersion, generation, and `*.karmada.io*` labels and annotations other than
/// the user's `namespace.karmada.io/skip-auto-propagation`), i.e. whether the change came from Karmada.
pub(crate) fn changed_by_karmada(old: &DynamicObject, new: &DynamicObject) -> bool {
    let strip = |obj: &DynamicObject| {
        let mut meta = obj.metadata.clone();
        meta.managed_fields = None;
        meta.resource_version = None;
        meta.generation = None;
        let keep =
            |key: &String| !key.contains(".karmada.io") || key == labels::SKIP_AUTO_PROPAGATION;
        // An emptied map counts as absent, so a first Karmada label on a bare template is still Karmada's.
        let filtered = |map: Option<BTreeMap<String, String>>| {
            map.map(|m| {
                m.into_iter()
                    .filter(|(k, _)| keep(k))
                    .collect::<BTreeMap<_, _>>()
            })
            .filter(|m| !m.is_empty())
        };
        meta.labels = filtered(meta.labels);
        meta.annotations = filtered(meta.annotations);
        let mut data = obj.data.clone();
        if let Some(map) = data.as_object_mut() {
            map.remove("status");
        }
        (meta, data)
    };
    strip(old) == strip(new)
}

/// The claim a template carries, if any: a PropagationPolicy's (its namespace and name annotations and
/// permanent-id label all set) before a ClusterPropagationPolicy's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Claim {
    /// Claimed by PropagationPolicy `namespace/name` with permanent id `id`.
    Namespaced {
        /// Policy namespace.
        namespace: String,
        /// Policy name.
        name: String,
        /// Policy permanent id.
        id: String,
    },
    /// Claimed by ClusterPropagationPolicy `name` with permanent id `id`.
    Cluster {
        /// Policy name.
        name: String,
        /// Policy permanent id.
        id: String,
    },
}

/// The claim on an object (template or binding) in JSON form: a PP claim needs both annotations and the
/// label non-empty; a CPP claim needs the name annotation and the label.
pub(crate) fn claim_of(object: &Value) -> Option<Claim> {
    use crate::objects::{annotation, label};
    let non_empty = |v: Option<&str>| v.filter(|s| !s.is_empty()).map(str::to_owned);
    let pp = (
        non_empty(annotation(
            object,
            annotations::PROPAGATION_POLICY_NAMESPACE,
        )),
        non_empty(annotation(object, annotations::PROPAGATION_POLICY_NAME)),
        non_empty(label(object, labels::PROPAGATION_POLICY_PERMANENT_ID)),
    );
    if let (Some(namespace), Some(name), Some(id)) = pp {
        return Some(Claim::Namespaced {
            namespace,
            name,
            id,
        });
    }
    let cpp = (
        non_empty(annotation(
            object,
            annotations::CLUSTER_PROPAGATION_POLICY_NAME,
        )),
        non_empty(label(
            object,
            labels::CLUSTER_PROPAGATION_POLICY_PERMANENT_ID,
        )),
    );
    if let (Some(name), Some(id)) = cpp {
        return Some(Claim::Cluster { name, id });
    }
    None
}
