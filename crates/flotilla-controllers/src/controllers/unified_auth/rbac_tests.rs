use super::*;
use pretty_assertions::assert_eq;

fn mk_rule(
    groups: Option<&[&str]>,
    resources: Option<&[&str]>,
    names: Option<&[&str]>,
) -> PolicyRule {
    let list =
        |values: Option<&[&str]>| values.map(|v| v.iter().map(|s| (*s).to_owned()).collect());
    PolicyRule {
        verbs: vec!["get".to_owned()],
        api_groups: list(groups),
        resources: list(resources),
        resource_names: list(names),
        non_resource_urls: None,
    }
}

fn mk_role(name: &str, rules: Vec<PolicyRule>) -> ClusterRole {
    serde_json::from_value(json!({"metadata": {"name": name}, "rules": rules})).unwrap()
}

fn mk_binding(name: &str, role_kind: &str, role: &str, subjects: Value) -> ClusterRoleBinding {
    serde_json::from_value(json!({
        "metadata": {"name": name},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": role_kind, "name": role},
        "subjects": subjects,
    }))
    .unwrap()
}

fn subject(kind: &str, name: &str) -> Subject {
    Subject {
        kind: kind.to_owned(),
        name: name.to_owned(),
        ..Subject::default()
    }
}

#[test]
fn api_groups_and_resources_match_exactly_or_by_a_lone_star() {
    let cases: &[(Option<&[&str]>, bool)] = &[
        (Some(&["*"]), true),
        (Some(&["cluster.karmada.io"]), true),
        (Some(&["apps", "cluster.karmada.io"]), true),
        (Some(&["apps"]), false),
        (Some(&["cluster.karmada.*"]), false),
        (Some(&[]), false),
        (None, false),
    ];
    for (groups, want) in cases {
        let rule = mk_rule(*groups, Some(&["*"]), None);
        assert_eq!(
            api_group_matches(&rule, CLUSTER_API_GROUP),
            *want,
            "{groups:?}"
        );
    }
    let cases: &[(Option<&[&str]>, bool)] = &[
        (Some(&["*"]), true),
        (Some(&["clusters/proxy"]), true),
        (Some(&["clusters", "clusters/proxy"]), true),
        // Kubernetes' own authorizer reads `*/proxy` and `clusters/*` as patterns; Karmada does not.
        (Some(&["clusters"]), false),
        (Some(&["*/proxy"]), false),
        (Some(&["clusters/*"]), false),
        (None, false),
    ];
    for (resources, want) in cases {
        let rule = mk_rule(Some(&["*"]), *resources, None);
        assert_eq!(
            resource_matches(&rule, CLUSTER_PROXY_RESOURCE),
            *want,
            "{resources:?}"
        );
    }
}

#[test]
fn no_resource_names_cover_every_cluster() {
    let cases: &[(Option<&[&str]>, &str, bool)] = &[
        (None, "member1", true),
        (Some(&[]), "member1", true),
        (Some(&["member1", "member3"]), "member1", true),
        (Some(&["member1", "member3"]), "member2", false),
        (Some(&["*"]), "member2", false),
    ];
    for (names, cluster, want) in cases {
        let rule = mk_rule(Some(&["*"]), Some(&["*"]), *names);
        assert_eq!(
            resource_name_matches(&rule, cluster),
            *want,
            "{names:?} {cluster}"
        );
    }
}

#[test]
fn roles_granting_the_proxy_of_a_cluster() {
    let group = Some(&[CLUSTER_API_GROUP][..]);
    let proxy = Some(&[CLUSTER_PROXY_RESOURCE][..]);
    let cases = [
        (
            "cluster-admin",
            vec![mk_rule(Some(&["*"]), Some(&["*"]), None)],
            "member1",
            true,
        ),
        (
            "named",
            vec![mk_rule(group, proxy, Some(&["member1"]))],
            "member1",
            true,
        ),
        (
            "named",
            vec![mk_rule(group, proxy, Some(&["member1"]))],
            "member2",
            false,
        ),
        (
            "unnamed",
            vec![mk_rule(group, proxy, None)],
            "member2",
            true,
        ),
        (
            "clusters only",
            vec![mk_rule(group, Some(&["clusters"]), None)],
            "member1",
            false,
        ),
        (
            "core group",
            vec![mk_rule(Some(&[""]), proxy, None)],
            "member1",
            false,
        ),
        // karmada-search's proxy reaches every cluster, whatever names the rule lists.
        (
            "search",
            vec![mk_rule(
                Some(&[SEARCH_API_GROUP]),
                Some(&[PROXYING_PROXY_RESOURCE]),
                Some(&["x"]),
            )],
            "member2",
            true,
        ),
        (
            "second rule",
            vec![
                mk_rule(Some(&["apps"]), Some(&["deployments"]), None),
                mk_rule(Some(&["*"]), proxy, Some(&["member2"])),
            ],
            "member2",
            true,
        ),
        ("no rules", vec![], "member1", false),
    ];
    for (name, rules, cluster, want) in cases {
        assert_eq!(
            grants_proxy_to(&mk_role(name, rules), cluster),
            want,
            "{name} {cluster}"
        );
    }
}

#[test]
fn subjects_come_from_cluster_role_bindings_of_granting_cluster_roles_only() {
    let roles = [
        mk_role(
            "cluster-admin",
            vec![mk_rule(Some(&["*"]), Some(&["*"]), None)],
        ),
        mk_role(
            "proxy-member2",
            vec![mk_rule(
                Some(&[CLUSTER_API_GROUP]),
                Some(&[CLUSTER_PROXY_RESOURCE]),
                Some(&["member2"]),
            )],
        ),
        mk_role("view", vec![mk_rule(Some(&[""]), Some(&["pods"]), None)]),
    ];
    let bindings = [
        mk_binding(
            "cluster-admin",
            "ClusterRole",
            "cluster-admin",
            json!([{"kind": "Group", "name": "system:masters"}]),
        ),
        mk_binding(
            "tom",
            "ClusterRole",
            "proxy-member2",
            json!([{"kind": "User", "name": "tom"}]),
        ),
        // A roleRef of kind Role never counts, even when a granting ClusterRole has its name.
        mk_binding(
            "role",
            "Role",
            "cluster-admin",
            json!([{"kind": "User", "name": "mallory"}]),
        ),
        mk_binding(
            "viewers",
            "ClusterRole",
            "view",
            json!([{"kind": "User", "name": "eve"}]),
        ),
        mk_binding("nobody", "ClusterRole", "cluster-admin", Value::Null),
    ];
    let names = |cluster| -> Vec<String> {
        subjects_for(cluster, &roles, &bindings)
            .into_iter()
            .map(|s| s.name)
            .collect()
    };
    assert_eq!(names("member1"), ["system:masters"]);
    assert_eq!(names("member2"), ["system:masters", "tom"]);
    assert!(subjects_for("member1", &roles[2..], &bindings).is_empty());
}

#[test]
fn a_changed_role_names_the_clusters_to_sync() {
    let all = [
        "member1".to_owned(),
        "member2".to_owned(),
        "member3".to_owned(),
    ];
    let group = Some(&[CLUSTER_API_GROUP][..]);
    let proxy = Some(&[CLUSTER_PROXY_RESOURCE][..]);
    let affected = |rules| {
        clusters_affected_by(&mk_role("r", rules), &all)
            .into_iter()
            .collect::<Vec<_>>()
    };
    assert_eq!(
        affected(vec![mk_rule(group, proxy, Some(&["member2", "gone"]))]),
        ["gone", "member2"]
    );
    assert_eq!(affected(vec![mk_rule(group, proxy, None)]), all);
    assert_eq!(
        affected(vec![mk_rule(Some(&["*"]), Some(&["*"]), None)]),
        all
    );
    assert_eq!(
        affected(vec![mk_rule(
            Some(&[SEARCH_API_GROUP]),
            Some(&[PROXYING_PROXY_RESOURCE]),
            None
        )]),
        all
    );
    assert!(affected(vec![mk_rule(Some(&["apps"]), Some(&["*"]), None)]).is_empty());
}

#[test]
fn impersonation_rules_list_users_service_accounts_and_groups_by_name() {
    let subjects = [
        subject("User", "tom"),
        subject("Group", "system:masters"),
        subject("User", "ada"),
        Subject {
            namespace: Some("ci".into()),
            ..subject("ServiceAccount", "deployer")
        },
        subject("User", "tom"),
        subject("Robot", "r2"),
    ];
    let rules = serde_json::to_value(impersonation_rules(&subjects)).unwrap();
    assert_eq!(
        rules,
        json!([
            {"verbs": ["impersonate"], "apiGroups": [""], "resources": ["users"], "resourceNames": ["ada", "tom"]},
            {"verbs": ["impersonate"], "apiGroups": [""], "resources": ["serviceaccounts"], "resourceNames": ["deployer"]},
            {"verbs": ["impersonate"], "apiGroups": [""], "resources": ["groups"], "resourceNames": ["system:masters"]},
        ])
    );
    assert!(impersonation_rules(&[subject("Group", "")]).len() == 1);
    assert!(impersonation_rules(&[]).is_empty());
    assert!(impersonation_rules(&[subject("Robot", "r2")]).is_empty());
}

#[test]
fn member_objects_are_karmadas() {
    let rules = impersonation_rules(&[subject("Group", "system:masters")]);
    assert_eq!(
        impersonator_cluster_role(&rules),
        json!({
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": "karmada-impersonator", "labels": {"karmada.io/system": "true"}},
            "rules": [{"verbs": ["impersonate"], "apiGroups": [""], "resources": ["groups"],
                       "resourceNames": ["system:masters"]}],
        })
    );
    assert_eq!(impersonator_cluster_role(&[])["rules"], Value::Null);
    assert_eq!(
        impersonator_cluster_role_binding("karmada-cluster"),
        json!({
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
            "metadata": {"name": "karmada-impersonator", "labels": {"karmada.io/system": "true"}},
            "subjects": [{"kind": "ServiceAccount", "namespace": "karmada-cluster", "name": "karmada-impersonator"}],
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "karmada-impersonator"},
        })
    );
}
