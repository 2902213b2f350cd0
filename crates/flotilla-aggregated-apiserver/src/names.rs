//! Every name this server shares with Karmada, Kubernetes or the rest of Flotilla: group, versions, resource,
//! the registration's objects and the field manager that writes them.

/// The API group served.
pub const GROUP: &str = "cluster.karmada.io";
/// The version served, as Karmada's aggregated API server serves it.
pub const VERSION: &str = "v1alpha1";
/// `apiVersion` of the objects served.
pub const API_VERSION: &str = "cluster.karmada.io/v1alpha1";
/// The CRD's version the objects are read and written through on the control plane.
pub const STORAGE_VERSION: &str = flotilla_api::cluster::STORAGE_VERSION;
/// `apiVersion` of the objects as the control plane's CRD serves them at [`STORAGE_VERSION`].
pub const STORAGE_API_VERSION: &str = "cluster.karmada.io/storage";
/// The resource (plural).
pub const RESOURCE: &str = "clusters";
/// The proxy subresource.
pub const PROXY: &str = "proxy";
/// The cluster name that selects every cluster in a proxy request (Karmada's `matchAllClusters`).
pub const ALL_CLUSTERS: &str = "*";

/// The APIService registering this server (Karmada's name).
pub const API_SERVICE_NAME: &str = "v1alpha1.cluster.karmada.io";
/// The namespace of the Service the APIService points at.
pub const SERVICE_NAMESPACE: &str = "karmada-system";
/// The Service the APIService points at (Karmada's name).
pub const SERVICE_NAME: &str = "karmada-aggregated-apiserver";
/// The host name kube-aggregator verifies the serving certificate against: `<service>.<namespace>.svc`.
pub const SERVICE_HOST: &str = "karmada-aggregated-apiserver.karmada-system.svc";
/// Karmada's `groupPriorityMinimum`.
pub const GROUP_PRIORITY_MINIMUM: i32 = 2000;
/// The APIService's `versionPriority`. Karmada registers 10, but kube-aggregator gives the APIServices it makes
/// for CRD versions 100, so with 10 the CRD's `storage` version would become the group's preferred version;
/// anything above 100 keeps `v1alpha1` first.
pub const VERSION_PRIORITY: i32 = 200;
const _: () = assert!(
    VERSION_PRIORITY > 100,
    "v1alpha1 must stay ahead of the CRD's versions"
);
/// The field manager of the registration's server-side applies (the controller manager's).
pub const FIELD_MANAGER: &str = "flotilla-controller-manager";
/// Labels Karmada gives its APIService.
pub const LABELS: [(&str, &str); 2] = [
    ("app", "karmada-aggregated-apiserver"),
    ("apiserver", "true"),
];

/// kube-aggregator's label marking an APIService it registered itself (one per CRD version, `v1alpha1` of the
/// Cluster CRD included) and keeps in step with the CRD: while it says `true` or `onstart`, kube-aggregator
/// puts back the local spec over the registration. Ours says `false`, in the same write as the spec, so the
/// registration is the user's from then on.
pub const AUTOMANAGED_LABEL: (&str, &str) = ("kube-aggregator.kubernetes.io/automanaged", "false");

/// The ConfigMap in `kube-system` where an API server publishes how it authenticates to extension servers.
pub const AUTHENTICATION_CONFIG_MAP: &str = "extension-apiserver-authentication";
/// Its namespace.
pub const AUTHENTICATION_CONFIG_MAP_NAMESPACE: &str = "kube-system";

/// Groups never passed on as `Impersonate-Group`: every user is in one of them anyway (Karmada's `SkipGroup`).
pub const SKIPPED_GROUPS: [&str; 2] = ["system:authenticated", "system:unauthenticated"];
/// The group authorized without asking the control plane, as the delegating authorizer of every aggregated
/// API server does (`AlwaysAllowGroups`).
pub const MASTERS_GROUP: &str = "system:masters";
