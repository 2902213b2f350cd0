//! Unit tests of selection and of the wire protocol, without a network. Over-the-wire tests live in
//! `flotilla-webhook/tests/`.

use base64::Engine;
use flotilla_api::config::v1alpha1::{
    InterpreterOperation as Op, ResourceInterpreterWebhook,
    ResourceInterpreterWebhookConfiguration, RuleWithOperations,
};
use flotilla_api::work::v1alpha2::AggregatedStatusItem;
use kube::core::GroupVersionKind;
use serde_json::{Value, json};

use super::error::Reason;
use super::{Hooks, WebhookLayer, wire};
use crate::layer::{Handles, Layer, Request, Response};

fn rule(ops: &[Op], groups: &[&str], versions: &[&str], kinds: &[&str]) -> RuleWithOperations {
    let strings = |values: &[&str]| values.iter().map(|v| (*v).to_owned()).collect();
    RuleWithOperations {
        operations: ops.to_vec(),
        api_groups: strings(groups),
        api_versions: strings(versions),
        kinds: strings(kinds),
    }
}

fn mk_config(
    name: &str,
    hooks: Vec<(&str, Vec<RuleWithOperations>)>,
) -> ResourceInterpreterWebhookConfiguration {
    let mut config = ResourceInterpreterWebhookConfiguration::default();
    config.metadata.name = Some(name.to_owned());
    config.webhooks = hooks
        .into_iter()
        .map(|(hook, rules)| ResourceInterpreterWebhook {
            name: hook.to_owned(),
            rules,
            interpreter_context_versions: vec!["v1alpha1".into()],
            ..Default::default()
        })
        .collect();
    config
}

fn workload_gvk() -> GroupVersionKind {
    GroupVersionKind::gvk("workload.example.io", "v1alpha1", "Workload")
}

fn workload() -> Value {
    json!({
        "apiVersion": "workload.example.io/v1alpha1",
        "kind": "Workload",
        "metadata": {"name": "nginx", "namespace": "default"},
        "spec": {"replicas": 3}
    })
}

#[test]
fn first_matching_webhook_by_id_is_selected() {
    let all = || vec![rule(&[Op::All], &["*"], &["*"], &["*"])];
    let hooks = Hooks::new(vec![
        mk_config("zeta", vec![("a.example.com", all())]),
        mk_config(
            "alpha",
            vec![("z.example.com", all()), ("b.example.com", all())],
        ),
    ]);
    let ids: Vec<&str> = hooks.iter().map(|hook| hook.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "alpha/b.example.com",
            "alpha/z.example.com",
            "zeta/a.example.com"
        ]
    );
    let chosen = hooks
        .select(&workload_gvk(), &Op::Retain)
        .map(|hook| hook.id.as_str());
    assert_eq!(chosen, Some("alpha/b.example.com"));
}

#[test]
fn ids_sort_byte_wise() {
    // Upper-case letters sort before lower-case ones byte-wise.
    let all = || vec![rule(&[Op::All], &["*"], &["*"], &["*"])];
    let hooks = Hooks::new(vec![
        mk_config("b", vec![("x.io", all())]),
        mk_config("B", vec![("x.io", all())]),
    ]);
    assert_eq!(
        hooks
            .select(&workload_gvk(), &Op::InterpretHealth)
            .map(|h| h.id.as_str()),
        Some("B/x.io")
    );
}

#[test]
fn non_matching_webhooks_are_skipped() {
    let hooks = Hooks::new(vec![
        mk_config(
            "a",
            vec![(
                "health.io",
                vec![rule(&[Op::InterpretHealth], &["*"], &["*"], &["*"])],
            )],
        ),
        mk_config(
            "b",
            vec![(
                "retain.io",
                vec![rule(&[Op::Retain], &["*"], &["*"], &["*"])],
            )],
        ),
    ]);
    assert_eq!(
        hooks
            .select(&workload_gvk(), &Op::Retain)
            .map(|h| h.id.as_str()),
        Some("b/retain.io")
    );
    assert!(hooks.select(&workload_gvk(), &Op::ReviseReplica).is_none());
}

#[test]
fn any_rule_may_match() {
    let hooks = Hooks::new(vec![mk_config(
        "a",
        vec![(
            "w.io",
            vec![
                rule(&[Op::Retain], &["apps"], &["v1"], &["Deployment"]),
                rule(
                    &[Op::InterpretReplica],
                    &["workload.example.io"],
                    &["v1alpha1"],
                    &["Workload"],
                ),
            ],
        )],
    )]);
    assert!(
        hooks
            .select(&workload_gvk(), &Op::InterpretReplica)
            .is_some()
    );
    assert!(hooks.select(&workload_gvk(), &Op::Retain).is_none());
    assert!(
        hooks
            .select(
                &GroupVersionKind::gvk("apps", "v1", "Deployment"),
                &Op::Retain
            )
            .is_some()
    );
}

#[test]
fn rules_match_core_group_and_exact_values_only() {
    let core = rule(&[Op::InterpretHealth], &[""], &["v1"], &["Pod"]);
    let pod = GroupVersionKind::gvk("", "v1", "Pod");
    assert!(super::rule_matches(&core, &pod, &Op::InterpretHealth));
    assert!(!super::rule_matches(
        &core,
        &GroupVersionKind::gvk("apps", "v1", "Pod"),
        &Op::InterpretHealth
    ));
    assert!(!super::rule_matches(
        &core,
        &GroupVersionKind::gvk("", "v1", "pod"),
        &Op::InterpretHealth
    ));
    assert!(!super::rule_matches(
        &core,
        &GroupVersionKind::gvk("", "v2", "Pod"),
        &Op::InterpretHealth
    ));
    assert!(!super::rule_matches(&core, &pod, &Op::Retain));
    let wildcard = rule(&[Op::All], &["*"], &["*"], &["*"]);
    for op in Op::DISPATCHED {
        assert!(super::rule_matches(&wildcard, &pod, &op), "{op}");
    }
}

#[test]
fn webhook_without_rules_never_matches() {
    let hooks = Hooks::new(vec![mk_config("a", vec![("w.io", vec![])])]);
    assert!(hooks.select(&workload_gvk(), &Op::Retain).is_none());
}

#[test]
fn layer_handles_reports_rule_and_reason() {
    let layer = WebhookLayer::default();
    assert!(!layer.is_loaded());
    assert_eq!(
        layer.handles(&workload_gvk(), &Op::Retain),
        Handles::No("no webhook is configured".into())
    );
    layer.replace_all(vec![mk_config(
        "examples",
        vec![(
            "workloads.example.com",
            vec![rule(
                &[Op::Retain],
                &["workload.example.io"],
                &["*"],
                &["Workload"],
            )],
        )],
    )]);
    assert!(layer.is_loaded());
    assert_eq!(
        layer.handles(&workload_gvk(), &Op::Retain),
        Handles::Yes("examples/workloads.example.com".into())
    );
    assert_eq!(
        layer.handles(&workload_gvk(), &Op::InterpretHealth),
        Handles::No("no webhook rule matches InterpretHealth on workload.example.io/v1alpha1, Kind=Workload".into())
    );
    layer.replace_all(vec![]);
    assert!(matches!(
        layer.handles(&workload_gvk(), &Op::Retain),
        Handles::No(_)
    ));
}

#[test]
fn request_carries_every_field_of_the_wire_format() {
    let items = vec![AggregatedStatusItem {
        cluster_name: "member1".into(),
        status: Some(json!({"readyReplicas": 1})),
        applied: true,
        ..Default::default()
    }];
    let outgoing = wire::encode(
        Request::AggregateStatus {
            object: workload(),
            items,
        },
        &workload_gvk(),
    )
    .unwrap();
    let body: Value = serde_json::from_slice(&outgoing.body).unwrap();
    assert_eq!(
        body,
        json!({
            "apiVersion": "config.karmada.io/v1alpha1",
            "kind": "ResourceInterpreterContext",
            "request": {
                "uid": outgoing.uid,
                "kind": {"group": "workload.example.io", "version": "v1alpha1", "kind": "Workload"},
                "name": "nginx",
                "namespace": "default",
                "operation": "AggregateStatus",
                "object": workload(),
                "replicas": 0,
                "aggregatedStatus": [{"clusterName": "member1", "status": {"readyReplicas": 1}, "applied": true}]
            }
        })
    );
    assert_eq!(outgoing.object, workload());
}

#[test]
fn request_for_core_cluster_scoped_object_keeps_empty_group_and_name() {
    let object = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {}});
    let gvk = GroupVersionKind::gvk("", "v1", "Namespace");
    let outgoing = wire::encode(Request::InterpretHealth { object }, &gvk).unwrap();
    let request = &serde_json::from_slice::<Value>(&outgoing.body).unwrap()["request"];
    assert_eq!(
        request["kind"],
        json!({"group": "", "version": "v1", "kind": "Namespace"})
    );
    assert_eq!(request["name"], json!(""));
    assert!(request.get("namespace").is_none());
    assert!(request.get("observedObject").is_none());
    assert!(request.get("aggregatedStatus").is_none());
    assert_eq!(request["replicas"], json!(0));
}

#[test]
fn revise_and_retain_requests_carry_replicas_and_observed_object() {
    let revise = wire::encode(
        Request::ReviseReplica {
            object: workload(),
            replicas: 7,
        },
        &workload_gvk(),
    )
    .unwrap();
    let request = &serde_json::from_slice::<Value>(&revise.body).unwrap()["request"];
    assert_eq!(request["replicas"], json!(7));
    let observed = json!({"kind": "Workload", "spec": {"paused": true}});
    let retain = wire::encode(
        Request::Retain {
            desired: workload(),
            observed: observed.clone(),
        },
        &workload_gvk(),
    )
    .unwrap();
    let request = &serde_json::from_slice::<Value>(&retain.body).unwrap()["request"];
    assert_eq!(request["observedObject"], observed);
    assert_eq!(request["object"], workload());
    let too_many = wire::encode(
        Request::ReviseReplica {
            object: workload(),
            replicas: 1 << 40,
        },
        &workload_gvk(),
    );
    assert!(matches!(too_many, Err(Reason::ReplicasOutOfRange(_))));
}

#[test]
fn every_call_gets_a_new_uid() {
    let a = wire::encode(
        Request::InterpretHealth { object: workload() },
        &workload_gvk(),
    )
    .unwrap();
    let b = wire::encode(
        Request::InterpretHealth { object: workload() },
        &workload_gvk(),
    )
    .unwrap();
    assert_ne!(a.uid, b.uid);
    assert!(uuid::Uuid::parse_str(&a.uid).is_ok());
}

fn reply(operation: Request, response: impl FnOnce(&str) -> Value) -> Result<Response, Reason> {
    let outgoing = wire::encode(operation, &workload_gvk()).unwrap();
    let body = serde_json::to_vec(&json!({"response": response(&outgoing.uid)})).unwrap();
    wire::decode(&body, outgoing)
}

fn patch(ops: Value) -> String {
    base64::engine::general_purpose::STANDARD.encode(serde_json::to_vec(&ops).unwrap())
}

#[test]
fn responses_are_checked_per_operation() {
    let replicas = reply(Request::InterpretReplica { object: workload() }, |uid| {
        json!({"uid": uid, "successful": true, "replicas": 3, "replicaRequirements": {"resourceRequest": {"cpu": "1"}}})
    })
    .unwrap();
    let Response::Replicas {
        replicas,
        requirements,
    } = replicas
    else {
        panic!("{replicas:?}")
    };
    assert_eq!(replicas, 3);
    assert_eq!(requirements.unwrap().resource_request["cpu"].0, "1");

    let missing = |op: Request| {
        reply(op, |uid| json!({"uid": uid, "successful": true}))
            .unwrap_err()
            .to_string()
    };
    assert_eq!(
        missing(Request::InterpretReplica { object: workload() }),
        "webhook returned nil response.replicas"
    );
    assert_eq!(
        missing(Request::InterpretHealth { object: workload() }),
        "webhook returned nil response.healthy"
    );
    assert_eq!(
        missing(Request::InterpretStatus { object: workload() }),
        "webhook returned nill response.rawStatus"
    );
    assert_eq!(
        reply(
            Request::InterpretDependency { object: workload() },
            |uid| json!({"uid": uid, "successful": true})
        )
        .unwrap(),
        Response::Dependencies(vec![])
    );
    assert_eq!(
        reply(
            Request::ReviseReplica {
                object: workload(),
                replicas: 1
            },
            |uid| json!({"uid": uid, "successful": true})
        )
        .unwrap(),
        Response::Object(workload())
    );
    let null_status = reply(
        Request::InterpretStatus { object: workload() },
        |uid| json!({"uid": uid, "successful": true, "rawStatus": null}),
    );
    assert!(matches!(null_status, Err(Reason::MissingRawStatus)));
}

#[test]
fn failed_and_foreign_responses_are_errors() {
    let failed = reply(
        Request::InterpretHealth { object: workload() },
        |uid| json!({"uid": uid, "successful": false, "status": {"code": 403, "message": "denied"}}),
    );
    assert_eq!(
        failed.unwrap_err().to_string(),
        "webhook call failed, get status code: 403, msg: denied"
    );
    let bare = reply(
        Request::InterpretHealth { object: workload() },
        |uid| json!({"uid": uid, "successful": false}),
    );
    assert!(matches!(bare, Err(Reason::FailedWithoutStatus)));
    let foreign = reply(
        Request::InterpretHealth { object: workload() },
        |_| json!({"uid": "someone-else", "successful": true, "healthy": true}),
    );
    assert!(matches!(foreign, Err(Reason::UidMismatch { .. })));
    let outgoing = wire::encode(
        Request::InterpretHealth { object: workload() },
        &workload_gvk(),
    )
    .unwrap();
    assert!(matches!(
        wire::decode(b"{}", outgoing),
        Err(Reason::MissingResponse)
    ));
    let outgoing = wire::encode(
        Request::InterpretHealth { object: workload() },
        &workload_gvk(),
    )
    .unwrap();
    assert!(matches!(
        wire::decode(b"<html>", outgoing),
        Err(Reason::DecodeResponse(_))
    ));
}

#[test]
fn patches_are_applied_and_checked() {
    let revise = |response: &dyn Fn(&str) -> Value| {
        let outgoing = wire::encode(
            Request::ReviseReplica {
                object: workload(),
                replicas: 5,
            },
            &workload_gvk(),
        )
        .unwrap();
        let body = serde_json::to_vec(&json!({"response": response(&outgoing.uid)})).unwrap();
        wire::decode(&body, outgoing)
    };
    let set = patch(json!([{"op": "replace", "path": "/spec/replicas", "value": 5}]));
    let revised = revise(
        &|uid| json!({"uid": uid, "successful": true, "patch": set, "patchType": "JSONPatch"}),
    );
    let mut expected = workload();
    expected["spec"]["replicas"] = json!(5);
    assert_eq!(revised.unwrap(), Response::Object(expected));

    let empty = patch(json!([]));
    let unchanged = revise(
        &|uid| json!({"uid": uid, "successful": true, "patch": empty, "patchType": "JSONPatch"}),
    );
    assert_eq!(unchanged.unwrap(), Response::Object(workload()));

    let no_type = revise(&|uid| json!({"uid": uid, "successful": true, "patch": set}));
    assert!(matches!(no_type, Err(Reason::MissingPatchType)));
    let no_patch = revise(&|uid| json!({"uid": uid, "successful": true, "patchType": "JSONPatch"}));
    assert!(matches!(no_patch, Err(Reason::EmptyPatch)));
    let merge = revise(
        &|uid| json!({"uid": uid, "successful": true, "patch": set, "patchType": "MergePatch"}),
    );
    assert!(matches!(merge, Err(Reason::InvalidPatchType(t)) if t == "MergePatch"));
    let missing_path = patch(json!([{"op": "remove", "path": "/spec/paused"}]));
    let unappliable = revise(
        &|uid| json!({"uid": uid, "successful": true, "patch": missing_path, "patchType": "JSONPatch"}),
    );
    assert!(matches!(unappliable, Err(Reason::ApplyPatch(_))));
    let not_a_patch = base64::engine::general_purpose::STANDARD.encode(b"{\"op\":1}");
    let garbage = revise(
        &|uid| json!({"uid": uid, "successful": true, "patch": not_a_patch, "patchType": "JSONPatch"}),
    );
    assert!(matches!(garbage, Err(Reason::DecodePatch(_))));
    let drop_kind = patch(json!([{"op": "remove", "path": "/kind"}]));
    let kindless = revise(
        &|uid| json!({"uid": uid, "successful": true, "patch": drop_kind, "patchType": "JSONPatch"}),
    );
    assert!(matches!(kindless, Err(Reason::PatchedObjectWithoutKind)));
}

#[tokio::test]
async fn interpret_names_the_webhook_and_the_object() {
    let layer = WebhookLayer::default();
    let mut config = mk_config(
        "examples",
        vec![("w.io", vec![rule(&[Op::All], &["*"], &["*"], &["*"])])],
    );
    config.webhooks[0].interpreter_context_versions = vec!["v1beta9".into()];
    layer.replace_all(vec![config]);
    let error = layer
        .interpret(Request::InterpretHealth { object: workload() })
        .await
        .unwrap_err();
    assert_eq!(
        super::error_chain(&error),
        "webhook interpreter failed for InterpretHealth on Workload default/nginx: failed calling webhook \
         \"examples/w.io\": webhook does not accept known ResourceInterpreterContext versions (v1alpha1)"
    );
}

#[tokio::test]
async fn unusable_client_configs_are_errors() {
    let layer = WebhookLayer::default();
    let call = |url: Option<&str>, timeout: Option<i32>| {
        let mut config = mk_config(
            "c",
            vec![("w.io", vec![rule(&[Op::All], &["*"], &["*"], &["*"])])],
        );
        config.webhooks[0].client_config.url = url.map(str::to_owned);
        config.webhooks[0].timeout_seconds = timeout;
        layer.replace_all(vec![config]);
        layer.interpret(Request::InterpretHealth { object: workload() })
    };
    for (url, timeout, expected) in [
        (None, None, "neither url nor service is set"),
        (Some("http://127.0.0.1:1/x"), None, "is not https"),
        (Some("not a url"), None, "does not parse"),
        (
            Some("https://127.0.0.1:1/x"),
            Some(0),
            "timeoutSeconds 0 is not positive",
        ),
    ] {
        let error = super::error_chain(&call(url, timeout).await.unwrap_err());
        assert!(
            error.contains("\"c/w.io\"") && error.contains(expected),
            "{error}"
        );
    }
}
