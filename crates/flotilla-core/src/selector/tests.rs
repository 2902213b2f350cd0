use std::collections::BTreeMap;

use flotilla_api::cluster::v1alpha1::{Cluster, ClusterSpec};
use flotilla_api::policy::v1alpha1::{
    ClusterAffinity, ClusterPropagationPolicy, FieldSelector, PropagationPolicy, PropagationSpec,
    ResourceSelector,
};
use k8s_openapi::api::core::v1::NodeSelectorRequirement;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, LabelSelectorRequirement};

use super::*;

fn template(labels: &[(&str, &str)]) -> TemplateRef {
    TemplateRef {
        api_version: "apps/v1".into(),
        kind: "Deployment".into(),
        namespace: "default".into(),
        name: "nginx".into(),
        labels: labels
            .iter()
            .map(|(k, v)| ((*k).into(), (*v).into()))
            .collect(),
    }
}

fn sel(name: &str, labels: Option<LabelSelector>) -> ResourceSelector {
    ResourceSelector {
        api_version: "apps/v1".into(),
        kind: "Deployment".into(),
        namespace: String::new(),
        name: name.into(),
        label_selector: labels,
    }
}

fn match_labels(pairs: &[(&str, &str)]) -> LabelSelector {
    LabelSelector {
        match_labels: Some(
            pairs
                .iter()
                .map(|(k, v)| ((*k).into(), (*v).into()))
                .collect(),
        ),
        match_expressions: None,
    }
}

fn expr(key: &str, op: &str, values: &[&str]) -> LabelSelectorRequirement {
    LabelSelectorRequirement {
        key: key.into(),
        operator: op.into(),
        values: Some(values.iter().map(|v| (*v).into()).collect()),
    }
}

#[test]
fn selector_priority_table() {
    let t = template(&[("app", "nginx")]);
    let cases: Vec<(&str, ResourceSelector, ImplicitPriority)> = vec![
        (
            "name match",
            sel("nginx", None),
            ImplicitPriority::MatchName,
        ),
        (
            "name mismatch",
            sel("other", None),
            ImplicitPriority::MisMatch,
        ),
        (
            "name wins over a failing label selector",
            sel("nginx", Some(match_labels(&[("app", "x")]))),
            ImplicitPriority::MatchName,
        ),
        ("match all", sel("", None), ImplicitPriority::MatchAll),
        (
            "label selector match",
            sel("", Some(match_labels(&[("app", "nginx")]))),
            ImplicitPriority::MatchLabelSelector,
        ),
        (
            "empty label selector counts as label-selector precision",
            sel("", Some(LabelSelector::default())),
            ImplicitPriority::MatchLabelSelector,
        ),
        (
            "label selector mismatch",
            sel("", Some(match_labels(&[("app", "x")]))),
            ImplicitPriority::MisMatch,
        ),
        (
            "invalid label selector never matches",
            sel(
                "",
                Some(LabelSelector {
                    match_labels: None,
                    match_expressions: Some(vec![expr("app", "In", &[])]),
                }),
            ),
            ImplicitPriority::MisMatch,
        ),
        (
            "kind differs",
            ResourceSelector {
                kind: "StatefulSet".into(),
                ..sel("", None)
            },
            ImplicitPriority::MisMatch,
        ),
        (
            "apiVersion compared exactly",
            ResourceSelector {
                api_version: "apps/v1beta1".into(),
                ..sel("", None)
            },
            ImplicitPriority::MisMatch,
        ),
        (
            "namespace differs",
            ResourceSelector {
                namespace: "other".into(),
                ..sel("", None)
            },
            ImplicitPriority::MisMatch,
        ),
        (
            "namespace equal",
            ResourceSelector {
                namespace: "default".into(),
                ..sel("nginx", None)
            },
            ImplicitPriority::MatchName,
        ),
    ];
    for (what, s, want) in cases {
        assert_eq!(selector_priority(&s, &t), want, "{what}");
    }
}

#[test]
fn policy_priority_is_the_best_selector() {
    let t = template(&[("app", "nginx")]);
    let selectors = vec![sel("", None), sel("nginx", None), sel("other", None)];
    assert_eq!(
        selectors_priority(&selectors, &t),
        ImplicitPriority::MatchName
    );
    assert_eq!(selectors_priority(&[], &t), ImplicitPriority::MisMatch);
    assert!(selectors_match(&selectors, &t));
    assert!(!selectors_match(&[sel("other", None)], &t));
}

#[test]
fn template_ref_reads_json() {
    let obj = serde_json::json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "nginx", "namespace": "default", "labels": {"app": "nginx", "n": 1}},
    });
    let t = TemplateRef::from_value(&obj);
    assert_eq!(t, template(&[("app", "nginx")]));
}

fn pp(name: &str, priority: i32, selectors: Vec<ResourceSelector>) -> PropagationPolicy {
    PropagationPolicy::new(
        name,
        PropagationSpec {
            resource_selectors: selectors,
            priority,
            ..Default::default()
        },
    )
}

#[test]
fn policy_choice_priority_then_implicit_then_name() {
    let t = template(&[("app", "nginx")]);
    let labels = || Some(match_labels(&[("app", "nginx")]));
    let cases: Vec<(&str, Vec<PropagationPolicy>, Option<&str>)> = vec![
        (
            "none match",
            vec![pp("a", 0, vec![sel("other", None)])],
            None,
        ),
        (
            "explicit priority beats implicit",
            vec![
                pp("byname", 0, vec![sel("nginx", None)]),
                pp("all", 5, vec![sel("", None)]),
            ],
            Some("all"),
        ),
        (
            "name beats label selector beats match-all",
            vec![
                pp("a-all", 0, vec![sel("", None)]),
                pp("b-labels", 0, vec![sel("", labels())]),
                pp("c-name", 0, vec![sel("nginx", None)]),
            ],
            Some("c-name"),
        ),
        (
            "label selector beats match-all",
            vec![
                pp("a-all", 0, vec![sel("", None)]),
                pp("b-labels", 0, vec![sel("", labels())]),
            ],
            Some("b-labels"),
        ),
        (
            "full tie: smaller name",
            vec![
                pp("zeta", 1, vec![sel("", None)]),
                pp("alpha", 1, vec![sel("", None)]),
            ],
            Some("alpha"),
        ),
        (
            "names compare byte-wise",
            vec![
                pp("b", 0, vec![sel("", None)]),
                pp("B", 0, vec![sel("", None)]),
            ],
            Some("B"),
        ),
        (
            "negative priority loses to default",
            vec![
                pp("a", -1, vec![sel("nginx", None)]),
                pp("b", 0, vec![sel("", None)]),
            ],
            Some("b"),
        ),
        (
            "mismatching high priority ignored",
            vec![
                pp("a", 100, vec![sel("other", None)]),
                pp("b", 0, vec![sel("", None)]),
            ],
            Some("b"),
        ),
    ];
    for (what, policies, want) in cases {
        let chosen = select_policy(&policies, &t).and_then(|p| p.metadata.name.as_deref());
        assert_eq!(chosen, want, "{what}");
        let reversed: Vec<_> = policies.iter().rev().collect();
        let chosen = select_policy(reversed, &t).and_then(|p| p.metadata.name.as_deref());
        assert_eq!(chosen, want, "{what} (reversed input)");
    }
}

#[test]
fn policy_choice_works_for_cluster_policies() {
    let t = template(&[]);
    let cpps = [
        ClusterPropagationPolicy::new(
            "b",
            PropagationSpec {
                resource_selectors: vec![sel("nginx", None)],
                ..Default::default()
            },
        ),
        ClusterPropagationPolicy::new(
            "a",
            PropagationSpec {
                resource_selectors: vec![sel("", None)],
                ..Default::default()
            },
        ),
    ];
    assert_eq!(
        select_policy(&cpps, &t).and_then(|p| p.metadata.name.as_deref()),
        Some("b")
    );
}

fn cluster(
    name: &str,
    labels: &[(&str, &str)],
    provider: &str,
    region: &str,
    zones: &[&str],
) -> Cluster {
    let mut c = Cluster::new(
        name,
        ClusterSpec {
            provider: provider.into(),
            region: region.into(),
            zones: zones.iter().map(|z| (*z).into()).collect(),
            ..Default::default()
        },
    );
    c.metadata.labels = Some(
        labels
            .iter()
            .map(|(k, v)| ((*k).into(), (*v).into()))
            .collect::<BTreeMap<_, _>>(),
    );
    c
}

fn field(key: &str, op: &str, values: &[&str]) -> NodeSelectorRequirement {
    NodeSelectorRequirement {
        key: key.into(),
        operator: op.into(),
        values: if values.is_empty() {
            None
        } else {
            Some(values.iter().map(|v| (*v).into()).collect())
        },
    }
}

fn fields(exprs: Vec<NodeSelectorRequirement>) -> ClusterAffinity {
    ClusterAffinity {
        field_selector: Some(FieldSelector {
            match_expressions: exprs,
        }),
        ..Default::default()
    }
}

#[test]
fn cluster_matches_table() {
    let a = cluster("a", &[("env", "prod")], "aws", "us-east", &["z1", "z2"]);
    let bare = cluster("bare", &[], "", "", &[]);
    let names = |n: &[&str]| n.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
    let cases: Vec<(&str, &Cluster, ClusterAffinity, bool)> = vec![
        (
            "empty affinity matches all",
            &a,
            ClusterAffinity::default(),
            true,
        ),
        (
            "exclude wins over names",
            &a,
            ClusterAffinity {
                cluster_names: names(&["a"]),
                exclude_clusters: names(&["a"]),
                ..Default::default()
            },
            false,
        ),
        (
            "names list",
            &a,
            ClusterAffinity {
                cluster_names: names(&["b", "a"]),
                ..Default::default()
            },
            true,
        ),
        (
            "names list misses",
            &a,
            ClusterAffinity {
                cluster_names: names(&["b"]),
                ..Default::default()
            },
            false,
        ),
        (
            "labels match",
            &a,
            ClusterAffinity {
                label_selector: Some(match_labels(&[("env", "prod")])),
                ..Default::default()
            },
            true,
        ),
        (
            "labels and names are ANDed",
            &a,
            ClusterAffinity {
                label_selector: Some(match_labels(&[("env", "prod")])),
                cluster_names: names(&["b"]),
                ..Default::default()
            },
            false,
        ),
        (
            "invalid label selector matches nothing",
            &a,
            ClusterAffinity {
                label_selector: Some(LabelSelector {
                    match_labels: None,
                    match_expressions: Some(vec![expr("env", "Bogus", &["x"])]),
                }),
                ..Default::default()
            },
            false,
        ),
        (
            "provider In",
            &a,
            fields(vec![field("provider", "In", &["aws"])]),
            true,
        ),
        (
            "provider In misses",
            &a,
            fields(vec![field("provider", "In", &["gcp"])]),
            false,
        ),
        (
            "region NotIn",
            &a,
            fields(vec![field("region", "NotIn", &["eu"])]),
            true,
        ),
        (
            "region NotIn matches a cluster without region",
            &bare,
            fields(vec![field("region", "NotIn", &["eu"])]),
            true,
        ),
        (
            "region In needs a region",
            &bare,
            fields(vec![field("region", "In", &["eu"])]),
            false,
        ),
        (
            "region Exists",
            &a,
            fields(vec![field("region", "Exists", &[])]),
            true,
        ),
        (
            "region DoesNotExist",
            &bare,
            fields(vec![field("region", "DoesNotExist", &[])]),
            true,
        ),
        (
            "invalid requirement matches nothing",
            &a,
            fields(vec![field("region", "In", &[])]),
            false,
        ),
        (
            "zone In any overlap",
            &a,
            fields(vec![field("zone", "In", &["z2", "z9"])]),
            true,
        ),
        (
            "zone In without zones",
            &bare,
            fields(vec![field("zone", "In", &["z1"])]),
            false,
        ),
        (
            "zone NotIn",
            &a,
            fields(vec![field("zone", "NotIn", &["z9"])]),
            true,
        ),
        (
            "zone NotIn with one listed",
            &a,
            fields(vec![field("zone", "NotIn", &["z1"])]),
            false,
        ),
        (
            "zone NotIn without zones",
            &bare,
            fields(vec![field("zone", "NotIn", &["z1"])]),
            true,
        ),
        (
            "zone Exists",
            &a,
            fields(vec![field("zone", "Exists", &[])]),
            true,
        ),
        (
            "zone DoesNotExist",
            &a,
            fields(vec![field("zone", "DoesNotExist", &[])]),
            false,
        ),
        (
            "zone Gt is unsupported",
            &a,
            fields(vec![field("zone", "Gt", &["1"])]),
            false,
        ),
        (
            "zone only selector",
            &bare,
            fields(vec![field("zone", "DoesNotExist", &[])]),
            true,
        ),
        (
            "field expressions are ANDed",
            &a,
            fields(vec![
                field("provider", "In", &["aws"]),
                field("region", "In", &["eu"]),
            ]),
            false,
        ),
        ("empty field selector matches", &a, fields(vec![]), true),
    ];
    for (what, c, affinity, want) in cases {
        assert_eq!(cluster_matches(c, &affinity), want, "{what}");
    }
}

#[test]
fn deprecated_zone_counts_as_zones() {
    let mut c = cluster("a", &[], "", "", &[]);
    c.spec.zone = "z1".into();
    assert_eq!(cluster_zones(&c), vec!["z1"]);
    assert!(cluster_matches(
        &c,
        &fields(vec![field("zone", "In", &["z1"])])
    ));
}

#[test]
fn label_selector_semantics() {
    let labels: BTreeMap<String, String> = [("a".to_owned(), "1".to_owned())].into();
    let with = |e: LabelSelectorRequirement| LabelSelector {
        match_labels: None,
        match_expressions: Some(vec![e]),
    };
    assert!(label_selector_matches(&LabelSelector::default(), &labels));
    assert!(label_selector_matches(
        &with(expr("a", "In", &["1", "2"])),
        &labels
    ));
    assert!(label_selector_matches(
        &with(expr("b", "NotIn", &["1"])),
        &labels
    ));
    assert!(!label_selector_matches(
        &with(expr("a", "NotIn", &["1"])),
        &labels
    ));
    assert!(label_selector_matches(
        &with(expr("a", "Exists", &[])),
        &labels
    ));
    assert!(
        !label_selector_matches(&with(expr("a", "Exists", &["1"])), &labels),
        "values on Exists are invalid"
    );
    assert!(!label_selector_matches(
        &with(expr("a", "DoesNotExist", &[])),
        &labels
    ));
}
