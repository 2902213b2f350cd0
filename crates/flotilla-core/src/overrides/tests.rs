use flotilla_api::cluster::v1alpha1::{Cluster, ClusterSpec};
use flotilla_api::policy::v1alpha1::{
    ClusterAffinity, ClusterOverridePolicy, CommandArgsOverrider, FieldOverrider, ImageComponent,
    ImageOverrider, ImagePredicate, LabelAnnotationOverrider, OverridePolicy, OverrideSpec,
    OverriderOperator as Op, Overriders, PatchOperation, PlaintextOverrider, ResourceSelector,
    RuleWithCluster,
};
use serde_json::{Value, json};

use super::*;

const SHA: &str = "sha256:50d858e0985ecc7f60418aaf0cc5ab587f42c2570a884095a9e8ccacd0f6545c";

#[test]
fn image_parser_table() {
    let ok = |registry: &str, repository: &str, tag: &str, digest: &str| ImageRef {
        registry: registry.into(),
        repository: repository.into(),
        tag: tag.into(),
        digest: digest.into(),
    };
    let cases: Vec<(String, Result<ImageRef, ImageParseError>)> = vec![
        ("nginx".into(), Ok(ok("", "nginx", "", ""))),
        ("nginx:1.25".into(), Ok(ok("", "nginx", "1.25", ""))),
        (
            "library/nginx:1.25".into(),
            Ok(ok("", "library/nginx", "1.25", "")),
        ),
        (
            "docker.io/library/nginx:1.25".into(),
            Ok(ok("docker.io", "library/nginx", "1.25", "")),
        ),
        (
            "localhost/nginx".into(),
            Ok(ok("localhost", "nginx", "", "")),
        ),
        (
            "localhost:5000/nginx:v1".into(),
            Ok(ok("localhost:5000", "nginx", "v1", "")),
        ),
        ("[::1]:5000/a/b".into(), Ok(ok("[::1]:5000", "a/b", "", ""))),
        ("a/b/c".into(), Ok(ok("", "a/b/c", "", ""))),
        (
            "my_repo/a-b__c.d".into(),
            Ok(ok("", "my_repo/a-b__c.d", "", "")),
        ),
        (
            format!("registry.k8s.io/pause@{SHA}"),
            Ok(ok("registry.k8s.io", "pause", "", SHA)),
        ),
        (format!("nginx:1.25@{SHA}"), Ok(ok("", "nginx", "1.25", ""))),
        ("localhost:5000".into(), Ok(ok("", "localhost", "5000", ""))),
        ("".into(), Err(ImageParseError::Empty)),
        ("Nginx".into(), Err(ImageParseError::Uppercase)),
        ("nginx:".into(), Err(ImageParseError::Format)),
        ("nginx:-bad".into(), Err(ImageParseError::Format)),
        ("a//b".into(), Err(ImageParseError::Format)),
        ("nginx@sha256:abc".into(), Err(ImageParseError::Format)),
        (
            "nginx@md5:0123456789abcdef0123456789abcdef".into(),
            Err(ImageParseError::Digest),
        ),
        (
            format!("{}:1", "a".repeat(256)),
            Err(ImageParseError::NameTooLong),
        ),
    ];
    for (image, want) in cases {
        assert_eq!(ImageRef::parse(&image), want, "{image}");
    }
}

#[test]
fn image_reference_prints_what_it_parsed() {
    for image in ["nginx", "a.io/b/c:1", "localhost:5000/x:y", "a/b"] {
        assert_eq!(
            ImageRef::parse(image).map(|r| r.to_string()).as_deref(),
            Ok(image)
        );
    }
    let digest = format!("a.io/b@{SHA}");
    assert_eq!(ImageRef::parse(&digest).map(|r| r.to_string()), Ok(digest));
}

fn image(component: ImageComponent, operator: Op, value: &str) -> ImageOverrider {
    ImageOverrider {
        predicate: None,
        component,
        operator,
        value: value.into(),
    }
}

#[test]
fn image_component_operations() {
    use ImageComponent::{Registry, Repository, Tag};
    let cases: Vec<(String, ImageOverrider, String)> = vec![
        (
            "a.io/nginx:1".into(),
            image(Registry, Op::Add, ".cn"),
            "a.io.cn/nginx:1".into(),
        ),
        (
            "a.io/nginx:1".into(),
            image(Registry, Op::Replace, "b.io"),
            "b.io/nginx:1".into(),
        ),
        (
            "nginx:1".into(),
            image(Registry, Op::Replace, "b.io"),
            "b.io/nginx:1".into(),
        ),
        (
            "a.io/nginx:1".into(),
            image(Registry, Op::Remove, ""),
            "nginx:1".into(),
        ),
        (
            "a.io/nginx:1".into(),
            image(Repository, Op::Add, "-x"),
            "a.io/nginx-x:1".into(),
        ),
        (
            "a.io/nginx:1".into(),
            image(Repository, Op::Replace, "lib/web"),
            "a.io/lib/web:1".into(),
        ),
        (
            "a.io/nginx:1".into(),
            image(Repository, Op::Remove, ""),
            "a.io/:1".into(),
        ),
        (
            "nginx:1.25".into(),
            image(Tag, Op::Add, "-alpine"),
            "nginx:1.25-alpine".into(),
        ),
        ("nginx".into(), image(Tag, Op::Add, "v2"), "nginx:v2".into()),
        (
            "nginx:1".into(),
            image(Tag, Op::Replace, "2"),
            "nginx:2".into(),
        ),
        (
            "nginx:1".into(),
            image(Tag, Op::Replace, SHA),
            format!("nginx@{SHA}"),
        ),
        (
            format!("nginx@{SHA}"),
            image(Tag, Op::Replace, "v3"),
            "nginx:v3".into(),
        ),
        (
            "nginx:1".into(),
            image(Tag, Op::Replace, "not/a tag"),
            "nginx:1".into(),
        ),
        ("nginx:1".into(), image(Tag, Op::Remove, ""), "nginx".into()),
        (
            format!("nginx@{SHA}"),
            image(Tag, Op::Remove, ""),
            "nginx".into(),
        ),
    ];
    for (before, overrider, after) in cases {
        let mut parsed = ImageRef::parse(&before).unwrap();
        parsed.apply(&overrider).unwrap();
        assert_eq!(parsed.to_string(), after, "{before} {overrider:?}");
    }
}

fn deployment() -> Value {
    json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "nginx", "namespace": "default"},
        "spec": {"template": {"spec": {
            "initContainers": [{"name": "init", "image": "busybox"}],
            "containers": [
                {"name": "web", "image": "nginx:1.25", "args": ["-a", "-b", "-a"]},
                {"name": "side", "image": "a.io/side:1"}
            ]
        }}}
    })
}

fn member(name: &str, region: &str) -> Cluster {
    Cluster::new(
        name,
        ClusterSpec {
            region: region.into(),
            ..Default::default()
        },
    )
}

fn rule(overriders: Overriders) -> RuleWithCluster {
    RuleWithCluster {
        target_cluster: None,
        overriders,
    }
}

fn op(name: &str, rules: Vec<RuleWithCluster>) -> OverridePolicy {
    let mut p = OverridePolicy::new(
        name,
        OverrideSpec {
            override_rules: rules,
            ..Default::default()
        },
    );
    p.metadata.namespace = Some("default".into());
    p
}

fn cop(name: &str, rules: Vec<RuleWithCluster>) -> ClusterOverridePolicy {
    ClusterOverridePolicy::new(
        name,
        OverrideSpec {
            override_rules: rules,
            ..Default::default()
        },
    )
}

fn labels(operator: Op, pairs: &[(&str, &str)]) -> Overriders {
    Overriders {
        labels_overrider: vec![LabelAnnotationOverrider {
            operator,
            value: pairs
                .iter()
                .map(|(k, v)| ((*k).into(), (*v).into()))
                .collect(),
        }],
        ..Default::default()
    }
}

fn run(
    obj: &mut Value,
    cops: &[ClusterOverridePolicy],
    ops: &[OverridePolicy],
) -> AppliedOverrides {
    apply_overrides(obj, &member("member1", "eu"), cops, ops).unwrap()
}

#[test]
fn image_overrider_changes_every_container_but_not_init_containers() {
    let mut obj = deployment();
    let rules = vec![rule(Overriders {
        image_overrider: vec![image(ImageComponent::Registry, Op::Replace, "mirror.io")],
        ..Default::default()
    })];
    run(&mut obj, &[], &[op("p", rules)]);
    let spec = &obj["spec"]["template"]["spec"];
    assert_eq!(spec["containers"][0]["image"], "mirror.io/nginx:1.25");
    assert_eq!(spec["containers"][1]["image"], "mirror.io/side:1");
    assert_eq!(spec["initContainers"][0]["image"], "busybox");
}

#[test]
fn image_overrider_with_predicate_and_unknown_kinds() {
    let mut obj = deployment();
    let mut o = image(ImageComponent::Tag, Op::Replace, "2.0");
    o.predicate = Some(ImagePredicate {
        path: "/spec/template/spec/initContainers/0/image".into(),
    });
    run(
        &mut obj,
        &[],
        &[op(
            "p",
            vec![rule(Overriders {
                image_overrider: vec![o],
                ..Default::default()
            })],
        )],
    );
    assert_eq!(
        obj["spec"]["template"]["spec"]["initContainers"][0]["image"],
        "busybox:2.0"
    );
    assert_eq!(
        obj["spec"]["template"]["spec"]["containers"][0]["image"],
        "nginx:1.25"
    );

    let mut cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "default"}});
    let before = cm.clone();
    let o = image(ImageComponent::Registry, Op::Replace, "x.io");
    run(
        &mut cm,
        &[],
        &[op(
            "p",
            vec![rule(Overriders {
                image_overrider: vec![o],
                ..Default::default()
            })],
        )],
    );
    assert_eq!(
        cm, before,
        "no predicate: kinds without known containers are left alone"
    );
}

#[test]
fn command_and_args_overriders() {
    let mut obj = deployment();
    let overriders = Overriders {
        command_overrider: vec![CommandArgsOverrider {
            container_name: "web".into(),
            operator: Op::Add,
            value: vec!["nginx".into(), "-g".into()],
        }],
        args_overrider: vec![
            CommandArgsOverrider {
                container_name: "web".into(),
                operator: Op::Remove,
                value: vec!["-a".into()],
            },
            CommandArgsOverrider {
                container_name: "web".into(),
                operator: Op::Add,
                value: vec!["-c".into()],
            },
            CommandArgsOverrider {
                container_name: "other".into(),
                operator: Op::Add,
                value: vec!["-z".into()],
            },
        ],
        ..Default::default()
    };
    run(&mut obj, &[], &[op("p", vec![rule(overriders)])]);
    let web = &obj["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(web["command"], json!(["nginx", "-g"]));
    assert_eq!(web["args"], json!(["-b", "-c"]));
    assert!(
        obj["spec"]["template"]["spec"]["containers"][1]
            .get("args")
            .is_none()
    );
}

#[test]
fn labels_and_annotations_overriders() {
    let mut obj = deployment();
    let mut overriders = labels(Op::Add, &[("app", "web"), ("example.io/tier", "front")]);
    overriders.annotations_overrider = vec![
        LabelAnnotationOverrider {
            operator: Op::Add,
            value: [("a".into(), "1".into())].into(),
        },
        LabelAnnotationOverrider {
            operator: Op::Replace,
            value: [("a".into(), "2".into()), ("missing".into(), "x".into())].into(),
        },
        LabelAnnotationOverrider {
            operator: Op::Remove,
            value: [("gone".into(), String::new())].into(),
        },
    ];
    run(&mut obj, &[], &[op("p", vec![rule(overriders)])]);
    assert_eq!(
        obj["metadata"]["labels"],
        json!({"app": "web", "example.io/tier": "front"})
    );
    assert_eq!(
        obj["metadata"]["annotations"],
        json!({"a": "2"}),
        "replace and remove skip missing keys"
    );

    let mut obj = deployment();
    obj["metadata"]["labels"] = json!({"app": "old", "drop": "x"});
    let rules = vec![
        rule(labels(Op::Replace, &[("app", "new")])),
        rule(labels(Op::Remove, &[("drop", "")])),
    ];
    run(&mut obj, &[], &[op("p", rules)]);
    assert_eq!(obj["metadata"]["labels"], json!({"app": "new"}));
}

#[test]
fn field_overrider_json_and_yaml() {
    let mut cm = json!({
        "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "default"},
        "data": {"config.json": "{\"db\":{\"host\":\"a\"}}", "config.yaml": "db:\n  host: a\n  port: 1\n"}
    });
    let patch_op = |path: &str, operator, value: Option<Value>| PatchOperation {
        sub_path: path.into(),
        operator,
        value,
    };
    let overriders = Overriders {
        field_overrider: vec![
            FieldOverrider {
                field_path: "/data/config.json".into(),
                json: vec![
                    patch_op("/db/host", Op::Replace, Some(json!("b"))),
                    patch_op("/db/tls", Op::Add, Some(json!(true))),
                ],
                yaml: vec![],
            },
            FieldOverrider {
                field_path: "/data/config.yaml".into(),
                json: vec![],
                yaml: vec![
                    patch_op("/db/port", Op::Remove, None),
                    patch_op("/db/host", Op::Replace, Some(json!("c"))),
                ],
            },
        ],
        ..Default::default()
    };
    run(&mut cm, &[], &[op("p", vec![rule(overriders)])]);
    assert_eq!(
        cm["data"]["config.json"],
        "{\"db\":{\"host\":\"b\",\"tls\":true}}"
    );
    assert_eq!(cm["data"]["config.yaml"], "db:\n  host: c\n");
}

#[test]
fn plaintext_runs_last_and_errors_name_the_policy() {
    let mut obj = deployment();
    let overriders = Overriders {
        image_overrider: vec![image(ImageComponent::Tag, Op::Replace, "1.26")],
        plaintext: vec![PlaintextOverrider {
            path: "/spec/template/spec/containers/0/image".into(),
            operator: Op::Replace,
            value: Some(json!("final:1")),
        }],
        ..Default::default()
    };
    run(&mut obj, &[], &[op("p", vec![rule(overriders)])]);
    assert_eq!(
        obj["spec"]["template"]["spec"]["containers"][0]["image"],
        "final:1"
    );
    assert_eq!(
        obj["spec"]["template"]["spec"]["containers"][1]["image"],
        "a.io/side:1.26"
    );

    let mut obj = deployment();
    let before = obj.clone();
    let bad = Overriders {
        plaintext: vec![PlaintextOverrider {
            path: "/spec/missing/field".into(),
            operator: Op::Replace,
            value: Some(json!(1)),
        }],
        ..Default::default()
    };
    let good = labels(Op::Add, &[("x", "y")]);
    let err = apply_overrides(
        &mut obj,
        &member("m1", ""),
        &[],
        &[op("broken", vec![rule(good), rule(bad)])],
    )
    .unwrap_err();
    assert_eq!(obj, before, "object unchanged on error");
    assert_eq!(
        (err.scope, err.policy.as_str(), err.rule, err.overrider),
        (Scope::Namespaced, "broken", 1, "plaintext")
    );
    assert!(err.to_string().contains("default/broken"), "{err}");
    assert!(
        err.to_string()
            .contains("overrideRules[1].overriders.plaintext[0]"),
        "{err}"
    );
    assert_eq!(
        err.event_message(),
        "Apply override policy(default/broken) for cluster(m1) failed."
    );

    let mut obj = deployment();
    let o = ImageOverrider {
        predicate: Some(ImagePredicate {
            path: "/metadata/name".into(),
        }),
        ..image(ImageComponent::Tag, Op::Add, "x")
    };
    obj["metadata"]["name"] = json!("Not An Image");
    let err = apply_overrides(
        &mut obj,
        &member("m1", ""),
        &[cop(
            "c",
            vec![rule(Overriders {
                image_overrider: vec![o],
                ..Default::default()
            })],
        )],
        &[],
    )
    .unwrap_err();
    assert!(matches!(*err.source, OverriderError::ParseImage { .. }));
    assert_eq!(
        err.event_message(),
        "Apply cluster override policy(c) for cluster(m1) failed."
    );
}

fn selector(name: &str) -> ResourceSelector {
    ResourceSelector {
        api_version: "apps/v1".into(),
        kind: "Deployment".into(),
        name: name.into(),
        ..Default::default()
    }
}

#[test]
fn policy_order_cluster_scope_first_then_implicit_priority_then_name() {
    let mut obj = deployment();
    let mut by_name = op(
        "a-by-name",
        vec![rule(labels(Op::Add, &[("who", "by-name")]))],
    );
    by_name.spec.resource_selectors = vec![selector("nginx")];
    let mut match_all = op(
        "z-match-all",
        vec![rule(labels(Op::Add, &[("who", "match-all"), ("all", "1")]))],
    );
    match_all.spec.resource_selectors = vec![selector("")];
    let no_selectors = op(
        "y-none",
        vec![rule(labels(Op::Add, &[("who", "none"), ("none", "1")]))],
    );
    let mut mismatch = op(
        "mismatch",
        vec![rule(labels(Op::Add, &[("mismatch", "1")]))],
    );
    mismatch.spec.resource_selectors = vec![selector("other")];
    let cluster_policy = cop(
        "cop",
        vec![rule(labels(Op::Add, &[("who", "cop"), ("cop", "1")]))],
    );

    let applied = run(
        &mut obj,
        &[cluster_policy],
        &[by_name, match_all, no_selectors, mismatch],
    );
    assert_eq!(
        obj["metadata"]["labels"]["who"], "by-name",
        "name selector applies last and wins"
    );
    assert!(obj["metadata"]["labels"].get("mismatch").is_none());
    let order: Vec<_> = applied
        .rules
        .iter()
        .map(|r| r.policy_name.as_str())
        .collect();
    assert_eq!(order, ["cop", "y-none", "z-match-all", "a-by-name"]);
    let annotations = applied.annotations().unwrap();
    assert_eq!(
        annotations[flotilla_api::names::annotations::APPLIED_CLUSTER_OVERRIDES],
        r#"[{"policyName":"cop","overriders":{"labelsOverrider":[{"operator":"add","value":{"cop":"1","who":"cop"}}]}}]"#
    );
    let namespaced: Value =
        serde_json::from_str(&annotations[flotilla_api::names::annotations::APPLIED_OVERRIDES])
            .unwrap();
    let names: Vec<_> = namespaced
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["policyName"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["a-by-name", "y-none", "z-match-all"],
        "annotation sorted by policy name"
    );
    assert_eq!(
        applied.rules[1].event_message("member1"),
        "Apply override policy(default/y-none) for cluster(member1) succeed."
    );
}

#[test]
fn rules_target_clusters_and_scopes_are_respected() {
    let target = |names: &[&str]| {
        Some(ClusterAffinity {
            cluster_names: names.iter().map(|s| (*s).into()).collect(),
            ..Default::default()
        })
    };
    let rules = vec![
        RuleWithCluster {
            target_cluster: target(&["member2"]),
            overriders: labels(Op::Add, &[("m2", "1")]),
        },
        RuleWithCluster {
            target_cluster: target(&["member1"]),
            overriders: labels(Op::Add, &[("m1", "1")]),
        },
        rule(labels(Op::Add, &[("all", "1")])),
    ];
    let mut obj = deployment();
    let applied = run(&mut obj, &[], &[op("p", rules)]);
    assert_eq!(obj["metadata"]["labels"], json!({"m1": "1", "all": "1"}));
    assert_eq!(applied.rules.len(), 2);

    // The deprecated single-rule form.
    let mut old = op("old", vec![]);
    old.spec.target_cluster = target(&["member1"]);
    old.spec.overriders = labels(Op::Add, &[("old", "1")]);
    let mut other_ns = op(
        "elsewhere",
        vec![rule(labels(Op::Add, &[("elsewhere", "1")]))],
    );
    other_ns.metadata.namespace = Some("other".into());
    let mut obj = deployment();
    run(&mut obj, &[], &[old, other_ns]);
    assert_eq!(obj["metadata"]["labels"], json!({"old": "1"}));

    // Cluster-scoped objects only get ClusterOverridePolicies.
    let mut ns = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "foo"}});
    let applied = run(
        &mut ns,
        &[cop("c", vec![rule(labels(Op::Add, &[("c", "1")]))])],
        &[op("p", vec![rule(labels(Op::Add, &[("p", "1")]))])],
    );
    assert_eq!(ns["metadata"]["labels"], json!({"c": "1"}));
    assert!(
        applied
            .annotation_value(Scope::Namespaced)
            .unwrap()
            .is_none()
    );
}

/// Operators and components this version does not know do what Karmada's string comparisons make of them.
#[test]
fn unknown_operators_and_components_act_as_in_karmada() {
    let unknown = || Op::Other("merge".into());
    let apply = |overriders: Overriders| {
        let mut obj = deployment();
        apply_overrides(
            &mut obj,
            &member("m1", ""),
            &[],
            &[op("p", vec![rule(overriders)])],
        )
        .map(|_| obj)
    };

    // An image overrider with an unknown operator leaves the component as it is.
    let obj = apply(Overriders {
        image_overrider: vec![image(ImageComponent::Registry, unknown(), "mirror.io")],
        ..Default::default()
    })
    .unwrap();
    assert_eq!(obj, deployment());
    // One with an unknown component is refused once an image is read.
    let err = apply(Overriders {
        image_overrider: vec![image(
            ImageComponent::Other("Digest".into()),
            Op::Replace,
            "x",
        )],
        ..Default::default()
    })
    .unwrap_err();
    assert_eq!(
        err.source.to_string(),
        "unsupported image component(Digest)"
    );

    // The args overrider rewrites the list unchanged.
    let obj = apply(Overriders {
        args_overrider: vec![CommandArgsOverrider {
            container_name: "web".into(),
            operator: unknown(),
            value: vec!["-a".into()],
        }],
        ..Default::default()
    })
    .unwrap();
    assert_eq!(obj, deployment());

    // Labels, annotations and plaintext write the operator as the JSON patch's op: only `test` is one.
    for overriders in [
        labels(unknown(), &[("x", "y")]),
        Overriders {
            plaintext: vec![PlaintextOverrider {
                path: "/metadata/name".into(),
                operator: unknown(),
                value: Some(json!("nginx")),
            }],
            ..Default::default()
        },
    ] {
        let err = apply(overriders).unwrap_err();
        assert!(
            matches!(&*err.source, OverriderError::UnknownOperation { operation } if operation == "merge"),
            "{err:?}"
        );
    }
    let test = |value: &str| {
        apply(Overriders {
            plaintext: vec![PlaintextOverrider {
                path: "/metadata/name".into(),
                operator: Op::Other("test".into()),
                value: Some(json!(value)),
            }],
            ..Default::default()
        })
    };
    assert_eq!(test("nginx").unwrap(), deployment());
    assert!(matches!(
        *test("apache").unwrap_err().source,
        OverriderError::Patch { .. }
    ));
}
