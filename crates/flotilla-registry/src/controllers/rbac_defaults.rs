//! kube-apiserver's bootstrap RBAC policy, created where missing at every start: the roles every cluster's
//! users and installers name (`cluster-admin`, the aggregated `admin`, `edit` and `view` and the
//! `system:aggregate-to-*` roles they gather, `system:discovery`, `system:basic-user`,
//! `system:public-info-viewer`, `system:monitoring`, `system:service-account-issuer-discovery`) and their
//! bindings to `system:masters`, `system:authenticated`, `system:unauthenticated`, `system:monitoring` and all
//! ServiceAccounts; and the certificate roles an installer binds to its agents (`system:node-bootstrapper`,
//! which `karmadactl register`'s bootstrap token is given, the CSR approvers' `system:certificates.k8s.io:*`
//! roles), which the bootstrap policy leaves unbound. Rule fields are sorted, as upstream's rule builder sorts
//! them.
//!
//! Not here: the roles of kube-apiserver's own components and of kube-controller-manager's controllers
//! (`system:kube-controller-manager`, `system:controller:*`, `system:node`, ...), which no process of this
//! server authenticates as.

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
}

/// Every bootstrap ClusterRoleBinding: the role it binds (and is named after) and its group subjects.
const BINDINGS: [(&str, &[&str]); 6] = [
    ("cluster-admin", &["system:masters"]),
    ("system:monitoring", &["system:monitoring"]),
    ("system:discovery", &["system:authenticated"]),
    ("system:basic-user", &["system:authenticated"]),
    (
        "system:public-info-viewer",
        &["system:authenticated", "system:unauthenticated"],
    ),
    (
        "system:service-account-issuer-discovery",
        &["system:serviceaccounts"],
    ),
];

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
    for (role, groups) in BINDINGS {
        let subjects: Vec<Value> = groups
            .iter()
            .map(|g| json!({"apiGroup": RBAC_GROUP, "kind": "Group", "name": g}))
            .collect();
        let binding = json!({"metadata": bootstrap_meta(role, None),
            "roleRef": {"apiGroup": RBAC_GROUP, "kind": "ClusterRole", "name": role},
            "subjects": subjects});
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
        assert!(BINDINGS.iter().all(|(role, _)| {
            *role != "system:node-bootstrapper" && !role.starts_with("system:certificates.k8s.io:")
        }));
    }
}
