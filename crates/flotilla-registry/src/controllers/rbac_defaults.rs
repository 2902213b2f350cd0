//! kube-apiserver's bootstrap RBAC policy, created where missing at every start: the roles every cluster's
//! users and installers name (`cluster-admin`, the aggregated `admin`, `edit` and `view` and the
//! `system:aggregate-to-*` roles they gather, `system:discovery`, `system:basic-user`,
//! `system:public-info-viewer`, `system:monitoring`, `system:service-account-issuer-discovery`) and their
//! bindings to `system:masters`, `system:authenticated`, `system:unauthenticated`, `system:monitoring` and all
//! ServiceAccounts; and the certificate roles an installer binds to its agents (`system:node-bootstrapper`,
//! which `karmadactl register`'s bootstrap token is given, the CSR approvers' `system:certificates.k8s.io:*`
//! roles), which the bootstrap policy leaves unbound; and the roles of kube's components and add-ons
//! (`system:node`, `system:kube-scheduler`, `system:kube-controller-manager`, `system:node-proxier`,
//! `system:kube-dns`, `system:auth-delegator`, ...) with their bindings to the users and ServiceAccount those
//! components run as, for clusters that run them against this server. Rules that kube adds behind feature gates
//! are those of a default kube-apiserver of the version this server follows. Rule fields are sorted, as
//! upstream's rule builder sorts them.
//!
//! Not here: kube-controller-manager's per-controller roles and bindings (`system:controller:*`), since this
//! server runs its controllers in its own process, and the namespaced Roles of the bootstrap policy.

use serde_json::{Value, json};

use super::Steps;
use crate::auth::rbac::resolver::GROUP as RBAC_GROUP;
use crate::context::Ctx;
use crate::status::ApiResult;

const READ: &[&str] = &["get", "list", "watch"];
const WRITE: &[&str] = &["create", "update", "patch", "delete", "deletecollection"];
const READ_WRITE: &[&str] = &[
    "get",
    "list",
    "watch",
    "create",
    "update",
    "patch",
    "delete",
    "deletecollection",
];

fn sorted(items: &[&str]) -> Vec<String> {
    let mut out: Vec<String> = items.iter().map(|s| (*s).to_string()).collect();
    out.sort();
    out
}

/// A resource rule.
fn rule(verbs: &[&str], groups: &[&str], resources: &[&str]) -> Value {
    json!({"verbs": sorted(verbs), "apiGroups": sorted(groups), "resources": sorted(resources)})
}

/// A resource rule limited to the objects named `names`.
fn named(verbs: &[&str], groups: &[&str], resources: &[&str], names: &[&str]) -> Value {
    let mut rule = rule(verbs, groups, resources);
    rule["resourceNames"] = json!(sorted(names));
    rule
}

/// A non-resource rule.
fn urls(verbs: &[&str], paths: &[&str]) -> Value {
    json!({"verbs": sorted(verbs), "nonResourceURLs": sorted(paths)})
}

fn view_rules() -> Vec<Value> {
    vec![
        rule(
            READ,
            &[""],
            &[
                "pods",
                "replicationcontrollers",
                "replicationcontrollers/scale",
                "serviceaccounts",
                "services",
                "services/status",
                "endpoints",
                "persistentvolumeclaims",
                "persistentvolumeclaims/status",
                "configmaps",
            ],
        ),
        rule(
            READ,
            &[""],
            &[
                "limitranges",
                "resourcequotas",
                "bindings",
                "pods/status",
                "resourcequotas/status",
                "namespaces/status",
                "replicationcontrollers/status",
                "pods/log",
            ],
        ),
        rule(READ, &[""], &["namespaces"]),
        rule(READ, &["", "events.k8s.io"], &["events"]),
        rule(READ, &["discovery.k8s.io"], &["endpointslices"]),
        rule(
            READ,
            &["apps"],
            &[
                "controllerrevisions",
                "statefulsets",
                "statefulsets/status",
                "statefulsets/scale",
                "daemonsets",
                "daemonsets/status",
                "deployments",
                "deployments/status",
                "deployments/scale",
                "replicasets",
                "replicasets/status",
                "replicasets/scale",
            ],
        ),
        rule(
            READ,
            &["autoscaling"],
            &[
                "horizontalpodautoscalers",
                "horizontalpodautoscalers/status",
            ],
        ),
        rule(
            READ,
            &["batch"],
            &["jobs", "cronjobs", "cronjobs/status", "jobs/status"],
        ),
        rule(
            READ,
            &["extensions"],
            &[
                "daemonsets",
                "daemonsets/status",
                "deployments",
                "deployments/scale",
                "deployments/status",
                "ingresses",
                "ingresses/status",
                "replicasets",
                "replicasets/scale",
                "replicasets/status",
                "replicationcontrollers/scale",
                "networkpolicies",
            ],
        ),
        rule(
            READ,
            &["policy"],
            &["poddisruptionbudgets", "poddisruptionbudgets/status"],
        ),
        rule(
            READ,
            &["networking.k8s.io"],
            &["networkpolicies", "ingresses", "ingresses/status"],
        ),
        rule(
            READ,
            &[RESOURCE],
            &[
                "resourceclaims",
                "resourceclaims/status",
                "resourceclaimtemplates",
            ],
        ),
    ]
}

fn edit_rules() -> Vec<Value> {
    let pod_access = ["pods/attach", "pods/proxy", "pods/exec", "pods/portforward"];
    let mut pod_reads = pod_access.to_vec();
    pod_reads.extend(["secrets", "services/proxy"]);
    let mut pod_writes = vec!["pods"];
    pod_writes.extend(pod_access);
    vec![
        rule(READ, &[""], &pod_reads),
        rule(&["impersonate"], &[""], &["serviceaccounts"]),
        rule(WRITE, &[""], &pod_writes),
        rule(&["create"], &[""], &["pods/eviction"]),
        rule(
            WRITE,
            &[""],
            &[
                "replicationcontrollers",
                "replicationcontrollers/scale",
                "serviceaccounts",
                "services",
                "services/proxy",
                "persistentvolumeclaims",
                "configmaps",
                "secrets",
            ],
        ),
        rule(&["create"], &[""], &["serviceaccounts/token"]),
        rule(WRITE, &["", "events.k8s.io"], &["events"]),
        rule(
            WRITE,
            &["apps"],
            &[
                "statefulsets",
                "statefulsets/scale",
                "daemonsets",
                "deployments",
                "deployments/scale",
                "deployments/rollback",
                "replicasets",
                "replicasets/scale",
            ],
        ),
        rule(WRITE, &["autoscaling"], &["horizontalpodautoscalers"]),
        rule(WRITE, &["batch"], &["jobs", "cronjobs"]),
        rule(
            WRITE,
            &["extensions"],
            &[
                "daemonsets",
                "deployments",
                "deployments/scale",
                "deployments/rollback",
                "ingresses",
                "replicasets",
                "replicasets/scale",
                "replicationcontrollers/scale",
                "networkpolicies",
            ],
        ),
        rule(WRITE, &["policy"], &["poddisruptionbudgets"]),
        rule(
            WRITE,
            &["networking.k8s.io"],
            &["networkpolicies", "ingresses"],
        ),
        rule(READ_WRITE, &["coordination.k8s.io"], &["leases"]),
        rule(
            WRITE,
            &[RESOURCE],
            &["resourceclaims", "resourceclaimtemplates"],
        ),
    ]
}

const AGGREGATE_TO: &str = "rbac.authorization.k8s.io/aggregate-to-";

/// A ClusterRole gathering the roles labelled `aggregate-to-<to>`.
fn aggregating(name: &str, labels: Value, to: &str) -> (String, Value) {
    let selector = json!({"matchLabels": {format!("{AGGREGATE_TO}{to}"): "true"}});
    (
        name.to_string(),
        json!({"metadata": {"labels": labels}, "aggregationRule": {"clusterRoleSelectors": [selector]}}),
    )
}

fn aggregated_to(to: &str) -> Value {
    json!({format!("{AGGREGATE_TO}{to}"): "true"})
}

const CERTIFICATES: &str = "certificates.k8s.io";

/// The role that lets its subjects approve the CSRs of one signer
/// (`system:certificates.k8s.io:<name>`: `approve` on `signers` of that name).
fn approver(name: &str, signer: &str) -> (String, Value) {
    (
        format!("system:certificates.k8s.io:{name}"),
        json!({"rules": [named(&["approve"], &[CERTIFICATES], &["signers"], &[signer])]}),
    )
}

/// The rule that lets a component write events, in both event APIs.
fn events_rule() -> Value {
    rule(
        &["create", "update", "patch"],
        &["", "events.k8s.io"],
        &["events"],
    )
}

const AUTHENTICATION: &str = "authentication.k8s.io";
const AUTHORIZATION: &str = "authorization.k8s.io";
const COORDINATION: &str = "coordination.k8s.io";
const RESOURCE: &str = "resource.k8s.io";
const STORAGE: &str = "storage.k8s.io";
const READ_UPDATE: &[&str] = &["get", "list", "watch", "update", "patch"];

/// `system:node`'s rules: what a kubelet needs (the Node authorizer and the NodeRestriction admission
/// plugin narrow them to the node's own objects), with the rules of the feature gates a default
/// kube-apiserver enables (dynamic resource allocation, ClusterTrustBundles, service account tokens for
/// credential providers, PodCertificateRequests; not CSI volume health).
fn node_rules() -> Vec<Value> {
    vec![
        rule(&["create"], &[AUTHENTICATION], &["tokenreviews"]),
        rule(
            &["create"],
            &[AUTHORIZATION],
            &["subjectaccessreviews", "localsubjectaccessreviews"],
        ),
        rule(READ, &[""], &["services"]),
        rule(&["create", "get", "list", "watch"], &[""], &["nodes"]),
        rule(&["update", "patch"], &[""], &["nodes/status"]),
        rule(&["update", "patch"], &[""], &["nodes"]),
        events_rule(),
        rule(READ, &[""], &["pods"]),
        rule(&["create", "delete"], &[""], &["pods"]),
        rule(&["update", "patch"], &[""], &["pods/status"]),
        rule(&["create"], &[""], &["pods/eviction"]),
        rule(READ, &[""], &["secrets", "configmaps"]),
        rule(
            &["get"],
            &[""],
            &["persistentvolumeclaims", "persistentvolumes"],
        ),
        rule(&["get"], &[""], &["endpoints"]),
        rule(
            &["create", "get", "list", "watch"],
            &[CERTIFICATES],
            &["certificatesigningrequests"],
        ),
        rule(
            &["get", "create", "update", "patch", "delete"],
            &[COORDINATION],
            &["leases"],
        ),
        rule(&["get"], &[STORAGE], &["volumeattachments"]),
        rule(&["create"], &[""], &["serviceaccounts/token"]),
        rule(
            &["get", "update", "patch"],
            &[""],
            &["persistentvolumeclaims/status"],
        ),
        rule(READ, &[STORAGE], &["csidrivers"]),
        rule(
            &["get", "create", "update", "patch", "delete"],
            &[STORAGE],
            &["csinodes"],
        ),
        rule(READ, &["node.k8s.io"], &["runtimeclasses"]),
        rule(&["get"], &[RESOURCE], &["resourceclaims"]),
        rule(&["deletecollection"], &[RESOURCE], &["resourceslices"]),
        rule(READ, &[CERTIFICATES], &["clustertrustbundles"]),
        rule(&["get"], &[""], &["serviceaccounts"]),
        rule(
            &["get", "list", "watch", "create"],
            &[CERTIFICATES],
            &["podcertificaterequests"],
        ),
    ]
}

/// `system:kube-scheduler`'s rules, with those of the dynamic resource allocation gates a default
/// kube-apiserver enables (extended resources, device taint rules, the claims' binding status), not those of
/// the workload and pod group APIs.
fn kube_scheduler_rules() -> Vec<Value> {
    vec![
        events_rule(),
        rule(&["create"], &[COORDINATION], &["leases"]),
        named(
            &["get", "update", "list", "watch"],
            &[COORDINATION],
            &["leases"],
            &["kube-scheduler"],
        ),
        rule(READ_WRITE, &[COORDINATION], &["leasecandidates"]),
        rule(READ, &[""], &["nodes"]),
        rule(&["get", "list", "watch", "delete"], &[""], &["pods"]),
        rule(&["create"], &[""], &["pods/binding", "bindings"]),
        rule(&["patch", "update"], &[""], &["pods/status"]),
        rule(READ, &[""], &["services", "replicationcontrollers"]),
        rule(READ, &["apps", "extensions"], &["replicasets"]),
        rule(READ, &["apps"], &["statefulsets"]),
        rule(READ, &["policy"], &["poddisruptionbudgets"]),
        rule(
            READ,
            &[""],
            &["persistentvolumeclaims", "persistentvolumes"],
        ),
        rule(&["create"], &[AUTHENTICATION], &["tokenreviews"]),
        rule(&["create"], &[AUTHORIZATION], &["subjectaccessreviews"]),
        rule(READ, &[STORAGE], &["csinodes"]),
        rule(READ, &[STORAGE], &["volumeattachments"]),
        rule(READ, &[""], &["namespaces"]),
        rule(READ, &[STORAGE], &["csidrivers"]),
        rule(READ, &[STORAGE], &["csistoragecapacities"]),
        rule(READ, &[RESOURCE], &["deviceclasses"]),
        rule(READ_UPDATE, &[RESOURCE], &["resourceclaims"]),
        rule(READ_UPDATE, &[RESOURCE], &["resourceclaims/status"]),
        rule(&["update"], &[""], &["pods/finalizers"]),
        rule(READ, &[RESOURCE], &["resourceslices"]),
        rule(&["create", "delete"], &[RESOURCE], &["resourceclaims"]),
        rule(READ, &[RESOURCE], &["devicetaintrules"]),
        rule(
            &["update", "patch"],
            &[RESOURCE],
            &["resourceclaims/binding"],
        ),
    ]
}

/// The roles of kube's components and add-ons, which kube-apiserver bootstraps for clusters that run them
/// (and binds to the users the components authenticate as). Not kube-controller-manager's per-controller
/// `system:controller:*` roles: this server runs its controllers in its own process.
fn component_roles() -> Vec<(String, Value)> {
    let with_rules = |name: &str, rules: Vec<Value>| (name.to_string(), json!({"rules": rules}));
    vec![
        with_rules(
            "system:heapster",
            vec![
                rule(READ, &[""], &["events", "pods", "nodes", "namespaces"]),
                rule(READ, &["extensions"], &["deployments"]),
            ],
        ),
        with_rules("system:node", node_rules()),
        with_rules(
            "system:node-problem-detector",
            vec![
                rule(&["get"], &[""], &["nodes"]),
                rule(&["patch"], &[""], &["nodes/status"]),
                events_rule(),
            ],
        ),
        with_rules(
            "system:auth-delegator",
            vec![
                rule(&["create"], &[AUTHENTICATION], &["tokenreviews"]),
                rule(&["create"], &[AUTHORIZATION], &["subjectaccessreviews"]),
            ],
        ),
        with_rules(
            "system:kube-aggregator",
            vec![rule(READ, &[""], &["services", "endpoints"])],
        ),
        with_rules(
            "system:kube-controller-manager",
            vec![
                events_rule(),
                rule(&["create"], &[COORDINATION], &["leases"]),
                named(
                    &["get", "update"],
                    &[COORDINATION],
                    &["leases"],
                    &["kube-controller-manager"],
                ),
                rule(&["create"], &[""], &["secrets", "serviceaccounts"]),
                rule(&["delete"], &[""], &["secrets"]),
                rule(
                    &["get"],
                    &[""],
                    &["namespaces", "secrets", "serviceaccounts", "configmaps"],
                ),
                rule(&["update"], &[""], &["secrets", "serviceaccounts"]),
                rule(&["create"], &[AUTHENTICATION], &["tokenreviews"]),
                rule(&["create"], &[AUTHORIZATION], &["subjectaccessreviews"]),
                rule(&["list", "watch"], &["*"], &["*"]),
                rule(&["create"], &[""], &["serviceaccounts/token"]),
            ],
        ),
        with_rules(
            "system:kube-dns",
            vec![rule(&["list", "watch"], &[""], &["endpoints", "services"])],
        ),
        with_rules(
            "system:persistent-volume-provisioner",
            vec![
                rule(
                    &["get", "list", "watch", "create", "delete"],
                    &[""],
                    &["persistentvolumes"],
                ),
                rule(
                    &["get", "list", "watch", "update"],
                    &[""],
                    &["persistentvolumeclaims"],
                ),
                rule(READ, &[STORAGE], &["storageclasses"]),
                rule(&["watch"], &[""], &["events"]),
                events_rule(),
            ],
        ),
        with_rules(
            "system:volume-scheduler",
            vec![
                rule(READ_UPDATE, &[""], &["persistentvolumes"]),
                rule(READ, &[STORAGE], &["storageclasses"]),
                rule(READ_UPDATE, &[""], &["persistentvolumeclaims"]),
            ],
        ),
        with_rules(
            "system:kubelet-api-admin",
            vec![
                rule(READ, &[""], &["nodes"]),
                rule(&["proxy"], &[""], &["nodes"]),
                rule(
                    &["*"],
                    &[""],
                    &["nodes/proxy", "nodes/metrics", "nodes/stats", "nodes/log"],
                ),
                rule(
                    &["*"],
                    &[""],
                    &["nodes/pods", "nodes/healthz", "nodes/configz"],
                ),
            ],
        ),
        with_rules(
            "system:node-proxier",
            vec![
                rule(&["list", "watch"], &[""], &["services", "endpoints"]),
                rule(READ, &[""], &["nodes"]),
                events_rule(),
                rule(
                    &["list", "watch"],
                    &["networking.k8s.io"],
                    &["servicecidrs"],
                ),
                rule(
                    &["list", "watch"],
                    &["discovery.k8s.io"],
                    &["endpointslices"],
                ),
            ],
        ),
        with_rules("system:kube-scheduler", kube_scheduler_rules()),
        with_rules(
            "system:cluster-trust-bundle-discovery",
            vec![rule(READ, &[CERTIFICATES], &["clustertrustbundles"])],
        ),
    ]
}

/// Every bootstrap ClusterRole: name and body (without the bootstrap labels and annotation).
fn cluster_roles() -> Vec<(String, Value)> {
    let all = &["*"];
    let monitoring = [
        "/metrics",
        "/metrics/slis",
        "/livez",
        "/readyz",
        "/healthz",
        "/livez/*",
        "/readyz/*",
        "/healthz/*",
        "/flagz",
        "/statusz",
    ];
    let with_rules = |name: &str, rules: Vec<Value>| (name.to_string(), json!({"rules": rules}));
    vec![
        with_rules("cluster-admin", vec![rule(all, all, all), urls(all, all)]),
        with_rules(
            "system:discovery",
            vec![urls(
                &["get"],
                &[
                    "/livez",
                    "/readyz",
                    "/healthz",
                    "/version",
                    "/version/",
                    "/openapi",
                    "/openapi/*",
                    "/api",
                    "/api/*",
                    "/apis",
                    "/apis/*",
                ],
            )],
        ),
        with_rules(
            "system:monitoring",
            vec![
                urls(&["get"], &monitoring),
                rule(&["get"], &[""], &["nodes/metrics"]),
            ],
        ),
        with_rules(
            "system:basic-user",
            vec![
                rule(
                    &["create"],
                    &["authorization.k8s.io"],
                    &["selfsubjectaccessreviews", "selfsubjectrulesreviews"],
                ),
                rule(
                    &["create"],
                    &["authentication.k8s.io"],
                    &["selfsubjectreviews"],
                ),
            ],
        ),
        with_rules(
            "system:public-info-viewer",
            vec![urls(
                &["get"],
                &["/livez", "/readyz", "/healthz", "/version", "/version/"],
            )],
        ),
        aggregating("admin", json!({}), "admin"),
        aggregating("edit", aggregated_to("admin"), "edit"),
        aggregating("view", aggregated_to("edit"), "view"),
        (
            "system:aggregate-to-admin".into(),
            json!({"metadata": {"labels": aggregated_to("admin")}, "rules": [
                rule(&["create"], &["authorization.k8s.io"], &["localsubjectaccessreviews"]),
                rule(READ_WRITE, &[RBAC_GROUP], &["roles", "rolebindings"]),
            ]}),
        ),
        (
            "system:aggregate-to-edit".into(),
            json!({"metadata": {"labels": aggregated_to("edit")}, "rules": edit_rules()}),
        ),
        (
            "system:aggregate-to-view".into(),
            json!({"metadata": {"labels": aggregated_to("view")}, "rules": view_rules()}),
        ),
        // Bound by whoever bootstraps agents: `kubeadm` and `karmadactl register` bind it to their bootstrap
        // tokens' groups, so that an agent can ask for its client certificate and watch for it.
        with_rules(
            "system:node-bootstrapper",
            vec![rule(
                &["create", "get", "list", "watch"],
                &[CERTIFICATES],
                &["certificatesigningrequests"],
            )],
        ),
        with_rules(
            "system:certificates.k8s.io:certificatesigningrequests:nodeclient",
            vec![rule(
                &["create"],
                &[CERTIFICATES],
                &["certificatesigningrequests/nodeclient"],
            )],
        ),
        with_rules(
            "system:certificates.k8s.io:certificatesigningrequests:selfnodeclient",
            vec![rule(
                &["create"],
                &[CERTIFICATES],
                &["certificatesigningrequests/selfnodeclient"],
            )],
        ),
        approver("legacy-unknown-approver", "kubernetes.io/legacy-unknown"),
        approver("kubelet-serving-approver", "kubernetes.io/kubelet-serving"),
        approver(
            "kube-apiserver-client-approver",
            "kubernetes.io/kube-apiserver-client",
        ),
        approver(
            "kube-apiserver-client-kubelet-approver",
            "kubernetes.io/kube-apiserver-client-kubelet",
        ),
        with_rules(
            "system:service-account-issuer-discovery",
            vec![urls(
                &["get"],
                &[
                    "/.well-known/openid-configuration",
                    "/.well-known/openid-configuration/",
                    "/openid/v1/jwks",
                    "/openid/v1/jwks/",
                ],
            )],
        ),
    ]
    .into_iter()
    .chain(component_roles())
    .collect()
}

fn group(name: &str) -> Value {
    json!({"apiGroup": RBAC_GROUP, "kind": "Group", "name": name})
}

fn user(name: &str) -> Value {
    json!({"apiGroup": RBAC_GROUP, "kind": "User", "name": name})
}

/// Every bootstrap ClusterRoleBinding: the role it binds (and is named after) and its subjects.
/// `system:node` is bound to nobody: its binding to the nodes' group was emptied when the Node authorizer
/// took over, and kube still creates it, subjectless.
fn bindings() -> Vec<(&'static str, Vec<Value>)> {
    let scheduler = "system:kube-scheduler";
    let all_service_accounts = "system:serviceaccounts";
    vec![
        ("cluster-admin", vec![group("system:masters")]),
        ("system:monitoring", vec![group("system:monitoring")]),
        ("system:discovery", vec![group("system:authenticated")]),
        ("system:basic-user", vec![group("system:authenticated")]),
        (
            "system:public-info-viewer",
            vec![
                group("system:authenticated"),
                group("system:unauthenticated"),
            ],
        ),
        ("system:node-proxier", vec![user("system:kube-proxy")]),
        (
            "system:kube-controller-manager",
            vec![user("system:kube-controller-manager")],
        ),
        (
            "system:kube-dns",
            vec![json!({"kind": "ServiceAccount", "namespace": "kube-system", "name": "kube-dns"})],
        ),
        ("system:kube-scheduler", vec![user(scheduler)]),
        ("system:volume-scheduler", vec![user(scheduler)]),
        ("system:node", vec![]),
        (
            "system:service-account-issuer-discovery",
            vec![group(all_service_accounts)],
        ),
        (
            "system:cluster-trust-bundle-discovery",
            vec![group(all_service_accounts)],
        ),
    ]
}

/// The bootstrap label and annotation every default object carries.
fn bootstrap_meta(name: &str, extra_labels: Option<&Value>) -> Value {
    let mut labels = json!({"kubernetes.io/bootstrapping": "rbac-defaults"});
    if let (Some(l), Some(extra)) = (
        labels.as_object_mut(),
        extra_labels.and_then(Value::as_object),
    ) {
        l.extend(extra.clone());
    }
    json!({"name": name, "labels": labels,
        "annotations": {"rbac.authorization.kubernetes.io/autoupdate": "true"}})
}

/// Creates `obj` of the RBAC resource `plural` if it is missing, with kube-apiserver as the manager of its
/// fields, as kube-apiserver's own bootstrap writes them (an `Update` of manager `kube-apiserver`).
async fn ensure_as_apiserver(ctx: &Ctx, plural: &str, mut obj: Value) -> ApiResult<()> {
    let Some(info) = ctx.catalog.get(RBAC_GROUP, "v1", plural) else {
        return Ok(());
    };
    crate::write::create::record_created_fields(&info, &mut obj, "kube-apiserver");
    crate::write::ensure(ctx, &info, obj).await
}

/// Creates every bootstrap ClusterRole and ClusterRoleBinding that is missing; existing ones are left as
/// they are (an administrator's edits stay).
pub(crate) async fn ensure(ctx: &Ctx) -> ApiResult<()> {
    let mut steps = Steps::default();
    for (name, mut role) in cluster_roles() {
        let labels = role.pointer("/metadata/labels").cloned();
        role["metadata"] = bootstrap_meta(&name, labels.as_ref());
        steps.note(ensure_as_apiserver(ctx, "clusterroles", role).await);
    }
    for (role, subjects) in bindings() {
        let mut binding = json!({"metadata": bootstrap_meta(role, None),
            "roleRef": {"apiGroup": RBAC_GROUP, "kind": "ClusterRole", "name": role}});
        if !subjects.is_empty() {
            binding["subjects"] = json!(subjects);
        }
        steps.note(ensure_as_apiserver(ctx, "clusterrolebindings", binding).await);
    }
    steps.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules_of(name: &str) -> Option<Value> {
        cluster_roles()
            .into_iter()
            .find(|(n, _)| n == name)
            .map(|(_, role)| role["rules"].clone())
    }

    #[test]
    fn the_certificate_roles_are_kubes_and_nobody_is_bound_to_them() {
        assert_eq!(
            rules_of("system:node-bootstrapper"),
            Some(json!([{"verbs": ["create", "get", "list", "watch"],
                "apiGroups": ["certificates.k8s.io"], "resources": ["certificatesigningrequests"]}]))
        );
        assert_eq!(
            rules_of("system:certificates.k8s.io:certificatesigningrequests:selfnodeclient"),
            Some(
                json!([{"verbs": ["create"], "apiGroups": ["certificates.k8s.io"],
                "resources": ["certificatesigningrequests/selfnodeclient"]}])
            )
        );
        assert_eq!(
            rules_of("system:certificates.k8s.io:kube-apiserver-client-approver"),
            Some(
                json!([{"verbs": ["approve"], "apiGroups": ["certificates.k8s.io"],
                "resources": ["signers"], "resourceNames": ["kubernetes.io/kube-apiserver-client"]}])
            )
        );
        let approvers = cluster_roles()
            .into_iter()
            .filter(|(n, _)| n.starts_with("system:certificates.k8s.io:"))
            .count();
        assert_eq!(approvers, 6);
        assert!(bindings().iter().all(|(role, _)| {
            *role != "system:node-bootstrapper" && !role.starts_with("system:certificates.k8s.io:")
        }));
    }

    #[test]
    fn every_binding_binds_a_bootstrap_role_and_no_controller_has_one() {
        let roles: Vec<String> = cluster_roles().into_iter().map(|(n, _)| n).collect();
        for (role, _) in bindings() {
            assert!(
                roles.iter().any(|r| r == role),
                "{role} is bound but missing"
            );
        }
        assert!(!roles.iter().any(|r| r.starts_with("system:controller:")));
        let mut unique = roles.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), roles.len());
    }

    #[test]
    fn the_component_bindings_name_kubes_subjects() {
        let subjects = |role: &str| {
            bindings()
                .into_iter()
                .find(|(n, _)| *n == role)
                .map(|(_, s)| s)
        };
        assert_eq!(
            subjects("system:kube-dns"),
            Some(vec![
                json!({"kind": "ServiceAccount", "namespace": "kube-system", "name": "kube-dns"})
            ])
        );
        assert_eq!(
            subjects("system:volume-scheduler"),
            Some(vec![
                json!({"apiGroup": "rbac.authorization.k8s.io", "kind": "User",
                "name": "system:kube-scheduler"})
            ])
        );
        assert_eq!(subjects("system:node"), Some(vec![]));
        assert_eq!(
            rules_of("system:auth-delegator"),
            Some(json!([
                {"verbs": ["create"], "apiGroups": ["authentication.k8s.io"], "resources": ["tokenreviews"]},
                {"verbs": ["create"], "apiGroups": ["authorization.k8s.io"], "resources": ["subjectaccessreviews"]},
            ]))
        );
    }
}
