use serde_json::{Value, json};

use super::*;
use crate::auth::rbac::escalation::check_write;
use flotilla_store::ResKey;

async fn put(store: &Store, plural: &str, ns: &str, object: Value) {
    crate::write::put_in_for_test(store, &ResKey::new(resolver::GROUP, plural), ns, object).await;
}

fn store() -> (tempfile::TempDir, std::sync::Arc<Store>) {
    let dir = tempfile::tempdir().expect("dir");
    let store = Store::open(dir.path()).expect("store");
    (dir, store)
}

fn app() -> UserInfo {
    UserInfo::service_account("ns1", "app", "")
}

fn request(user: UserInfo, verb: &str, ns: &str, resource: &str, name: &str) -> Attributes {
    Attributes {
        user,
        verb: verb.into(),
        resource_request: true,
        namespace: ns.into(),
        api_version: "v1".into(),
        resource: resource.into(),
        name: name.into(),
        ..Attributes::default()
    }
}

fn rule(v: Value) -> PolicyRule {
    serde_json::from_value(v).expect("rule")
}

#[test]
fn rules_match_as_kube_matches_them() {
    let pods = request(app(), "get", "ns1", "pods", "p1");
    assert!(rule(json!({"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]})).allows(&pods));
    assert!(
        !rule(json!({"verbs": ["list"], "apiGroups": [""], "resources": ["pods"]})).allows(&pods)
    );
    assert!(
        !rule(json!({"verbs": ["get"], "apiGroups": ["apps"], "resources": ["pods"]}))
            .allows(&pods)
    );
    let named = rule(
        json!({"verbs": ["get"], "apiGroups": [""], "resources": ["pods"], "resourceNames": ["p2"]}),
    );
    assert!(!named.allows(&pods));
    let status = Attributes {
        subresource: "status".into(),
        ..pods.clone()
    };
    assert!(
        !rule(json!({"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]})).allows(&status)
    );
    assert!(
        rule(json!({"verbs": ["get"], "apiGroups": [""], "resources": ["*/status"]}))
            .allows(&status)
    );
    assert!(
        rule(json!({"verbs": ["get"], "apiGroups": [""], "resources": ["pods/status"]}))
            .allows(&status)
    );
    let path = Attributes {
        user: app(),
        verb: "get".into(),
        path: "/apis/apps/v1".into(),
        ..Attributes::default()
    };
    assert!(rule(json!({"verbs": ["get"], "nonResourceURLs": ["/apis/*"]})).allows(&path));
    assert!(!rule(json!({"verbs": ["get"], "nonResourceURLs": ["/api/*"]})).allows(&path));
    assert_eq!(
        named.compact_string(),
        r#"{APIGroups:[""], Resources:["pods"], ResourceNames:["p2"], Verbs:["get"]}"#
    );
}

#[tokio::test]
async fn bindings_decide_and_reasons_name_them() {
    let (_dir, store) = store();
    put(
        &store,
        "roles",
        "ns1",
        json!({"metadata": {"name": "reader", "namespace": "ns1"},
        "rules": [{"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods"]}]}),
    )
    .await;
    put(
        &store,
        "rolebindings",
        "ns1",
        json!({"metadata": {"name": "read", "namespace": "ns1"},
        "roleRef": {"apiGroup": resolver::GROUP, "kind": "Role", "name": "reader"},
        "subjects": [{"kind": "ServiceAccount", "name": "app"}]}),
    )
    .await;
    put(
        &store,
        "rolebindings",
        "ns1",
        json!({"metadata": {"name": "dangling", "namespace": "ns1"},
        "roleRef": {"apiGroup": resolver::GROUP, "kind": "ClusterRole", "name": "missing"},
        "subjects": [{"kind": "Group", "name": "system:serviceaccounts"}]}),
    )
    .await;

    let allowed = authorize(&store, &request(app(), "list", "ns1", "pods", ""));
    assert_eq!(
        allowed,
        Decision {
            allowed: true,
            reason: r#"RBAC: allowed by RoleBinding "read/ns1" of Role "reader" to ServiceAccount "app/ns1""#.into()
        }
    );
    // Elsewhere the RoleBinding does not apply; in ns1 a write is not allowed and the dangling binding shows.
    assert_eq!(
        authorize(&store, &request(app(), "list", "ns2", "pods", "")).reason,
        ""
    );
    let denied = authorize(&store, &request(app(), "delete", "ns1", "pods", "p1"));
    assert!(!denied.allowed);
    assert_eq!(
        denied.reason,
        r#"rbac: RBAC: clusterrole.rbac.authorization.k8s.io "missing" not found"#
    );
    let error = forbidden(
        &request(app(), "delete", "ns1", "pods", "p1"),
        &denied.reason,
    );
    assert_eq!(error.code, 403);
    assert_eq!(
        error.message,
        r#"pods "p1" is forbidden: User "system:serviceaccount:ns1:app" cannot delete resource "pods" in API group "" in the namespace "ns1": rbac: RBAC: clusterrole.rbac.authorization.k8s.io "missing" not found"#
    );
    let admin = authorize(
        &store,
        &request(UserInfo::admin(), "delete", "", "nodes", "n1"),
    );
    assert_eq!((admin.allowed, admin.reason.as_str()), (true, ""));
}

#[tokio::test]
async fn rbac_writes_may_not_grant_more_than_the_writer_holds() {
    let (_dir, store) = store();
    let info = crate::catalog::Catalog::with_builtins()
        .get(resolver::GROUP, "v1", "roles")
        .expect("roles");
    put(&store, "roles", "ns1", json!({"metadata": {"name": "reader", "namespace": "ns1"},
        "rules": [{"verbs": ["get", "list", "create"], "apiGroups": ["rbac.authorization.k8s.io"], "resources": ["roles"]},
                  {"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}]})).await;
    put(
        &store,
        "rolebindings",
        "ns1",
        json!({"metadata": {"name": "read", "namespace": "ns1"},
        "roleRef": {"apiGroup": resolver::GROUP, "kind": "Role", "name": "reader"},
        "subjects": [{"kind": "ServiceAccount", "name": "app"}]}),
    )
    .await;
    let role =
        |rules: Value| json!({"metadata": {"name": "wanted", "namespace": "ns1"}, "rules": rules});

    let within = role(json!([{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}]));
    check_write(&store, &info, &app(), "ns1", None, &within).expect("within the writer's rights");
    let beyond = role(
        json!([{"verbs": ["get", "delete", "list"], "apiGroups": [""], "resources": ["pods", "secrets"]}]),
    );
    let error = check_write(&store, &info, &app(), "ns1", None, &beyond).expect_err("escalates");
    assert_eq!(error.code, 403);
    assert_eq!(
        error.message,
        "roles.rbac.authorization.k8s.io \"wanted\" is forbidden: user \"system:serviceaccount:ns1:app\" \
         (groups=[\"system:serviceaccounts\" \"system:serviceaccounts:ns1\" \"system:authenticated\"]) is \
         attempting to grant RBAC permissions not currently held:\n\
         {APIGroups:[\"\"], Resources:[\"pods\"], Verbs:[\"delete\" \"list\"]}\n\
         {APIGroups:[\"\"], Resources:[\"secrets\"], Verbs:[\"get\" \"delete\" \"list\"]}"
    );
    // The `escalate` verb on roles lifts the check.
    put(&store, "roles", "ns1", json!({"metadata": {"name": "escalator", "namespace": "ns1"},
        "rules": [{"verbs": ["escalate"], "apiGroups": ["rbac.authorization.k8s.io"], "resources": ["roles"]}]})).await;
    put(
        &store,
        "rolebindings",
        "ns1",
        json!({"metadata": {"name": "escalate", "namespace": "ns1"},
        "roleRef": {"apiGroup": resolver::GROUP, "kind": "Role", "name": "escalator"},
        "subjects": [{"kind": "ServiceAccount", "name": "app", "namespace": "ns1"}]}),
    )
    .await;
    check_write(&store, &info, &app(), "ns1", None, &beyond).expect("escalate allows");
}
