//! The customization layer: the seed example's every operation, merging by name, replacement by
//! the reflector, and precedence over the bundled and native layers through the facade.

use std::sync::Arc;

use flotilla_api::config::v1alpha1::{
    CustomizationRules, CustomizationTarget, LuaScript, ResourceInterpreterCustomizationSpec,
};
use flotilla_api::work::v1alpha2::{AggregatedStatusItem, ResourceHealth};
use serde_json::{Value, json};

use super::*;
use crate::facade::ResourceInterpreter;
use crate::lua::VmConfig;
use crate::thirdparty::ThirdPartyLayer;

const SEED: &str = include_str!("../../../../manifests/examples/deployment-customization.yaml");

fn vm() -> LuaVm {
    LuaVm::new(VmConfig {
        concurrency: 2,
        ..VmConfig::default()
    })
}

fn seed() -> ResourceInterpreterCustomization {
    flotilla_yaml::from_str(SEED).expect("the seed customization parses")
}

fn deployment() -> Value {
    json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "nginx", "namespace": "default"},
        "spec": {
            "replicas": 3,
            "paused": false,
            "template": {"spec": {
                "serviceAccountName": "nginx",
                "containers": [{"name": "nginx", "image": "nginx", "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}}}]
            }}
        },
        "status": {"replicas": 3, "readyReplicas": 3}
    })
}

pub(super) fn ric(
    name: &str,
    api_version: &str,
    kind: &str,
    rules: CustomizationRules,
) -> ResourceInterpreterCustomization {
    let mut ric = ResourceInterpreterCustomization::new(
        name,
        ResourceInterpreterCustomizationSpec {
            target: CustomizationTarget {
                api_version: api_version.to_owned(),
                kind: kind.to_owned(),
            },
            customizations: rules,
        },
    );
    ric.metadata.name = Some(name.to_owned());
    ric
}

pub(super) fn lua(source: &str) -> Option<LuaScript> {
    Some(LuaScript {
        lua_script: source.to_owned(),
    })
}

#[tokio::test]
async fn the_seed_customization_answers_every_operation() {
    let layer = CustomizationLayer::with_customizations(vm(), &[seed()]);
    let run = |request| layer.interpret(request);

    let out = run(Request::InterpretReplica {
        object: deployment(),
    })
    .await
    .unwrap();
    let Response::Replicas {
        replicas,
        requirements,
    } = out
    else {
        panic!("replicas")
    };
    assert_eq!(replicas, 3);
    let requests = requirements.unwrap().resource_request;
    assert_eq!(
        (requests["cpu"].0.as_str(), requests["memory"].0.as_str()),
        ("100m", "128Mi")
    );

    let Response::Object(revised) = run(Request::ReviseReplica {
        object: deployment(),
        replicas: 7,
    })
    .await
    .unwrap() else {
        panic!("revised")
    };
    assert_eq!(revised["spec"]["replicas"], json!(7));

    let mut observed = deployment();
    observed["spec"]["paused"] = json!(true);
    let Response::Object(retained) = run(Request::Retain {
        desired: deployment(),
        observed,
    })
    .await
    .unwrap() else {
        panic!("retained")
    };
    assert_eq!(retained["spec"]["paused"], json!(true));

    let item = |name: &str, replicas: i64| AggregatedStatusItem {
        cluster_name: name.to_owned(),
        status: Some(json!({"replicas": replicas})),
        applied: true,
        applied_message: String::new(),
        health: Some(ResourceHealth::Healthy),
    };
    let items = vec![item("member1", 1), item("member2", 2), item("member3", 4)];
    let Response::Object(aggregated) = run(Request::AggregateStatus {
        object: deployment(),
        items,
    })
    .await
    .unwrap() else {
        panic!("aggregated")
    };
    assert_eq!(aggregated["status"]["replicas"], json!(7));
    // Without items the script receives nil and returns the template unchanged.
    let out = run(Request::AggregateStatus {
        object: deployment(),
        items: Vec::new(),
    })
    .await
    .unwrap();
    assert_eq!(out, Response::Object(deployment()));

    let out = run(Request::InterpretStatus {
        object: deployment(),
    })
    .await
    .unwrap();
    assert_eq!(
        out,
        Response::Status(Some(json!({"replicas": 3, "readyReplicas": 3})))
    );

    assert_eq!(
        run(Request::InterpretHealth {
            object: deployment()
        })
        .await
        .unwrap(),
        Response::Healthy(true)
    );
    let mut unready = deployment();
    unready["status"]["readyReplicas"] = json!(1);
    assert_eq!(
        run(Request::InterpretHealth { object: unready })
            .await
            .unwrap(),
        Response::Healthy(false)
    );

    let Response::Dependencies(refs) = run(Request::InterpretDependency {
        object: deployment(),
    })
    .await
    .unwrap() else {
        panic!("dependencies")
    };
    assert_eq!(refs.len(), 1);
    assert_eq!(
        (
            refs[0].kind.as_str(),
            refs[0].name.as_str(),
            refs[0].namespace.as_str()
        ),
        ("ServiceAccount", "nginx", "default")
    );
}

#[test]
fn customizations_merge_by_name_and_accumulate_dependencies() {
    let target = |name: &str, rules| ric(name, "apps/v1", "Deployment", rules);
    let layer = CustomizationLayer::new(vm());
    layer.replace_all(vec![
        target(
            "b-second",
            CustomizationRules {
                health_interpretation: lua("function InterpretHealth(o) return false end"),
                retention: lua("function Retain(d, o) d.fromB = true return d end"),
                dependency_interpretation: lua(
                    "function GetDependencies(o) return {{apiVersion = 'v1', kind = 'Secret', name = 'z', namespace = 'default'}, \
                     {apiVersion = 'v1', kind = 'ConfigMap', name = 'a', namespace = 'default'}} end",
                ),
                ..CustomizationRules::default()
            },
        ),
        target(
            "a-first",
            CustomizationRules {
                // An empty script does not win over a later customization's.
                retention: lua(""),
                health_interpretation: lua("function InterpretHealth(o) return true end"),
                dependency_interpretation: lua(
                    "function GetDependencies(o) return {{apiVersion = 'v1', kind = 'ConfigMap', name = 'a', namespace = 'default'}} end",
                ),
                ..CustomizationRules::default()
            },
        ),
    ]);
    let gvk = GroupVersionKind::gvk("apps", "v1", "Deployment");
    assert_eq!(
        layer.handles(&gvk, &InterpreterOperation::InterpretHealth),
        Handles::Yes("a-first".to_owned())
    );
    assert_eq!(
        layer.handles(&gvk, &InterpreterOperation::Retain),
        Handles::Yes("b-second".to_owned())
    );
    assert_eq!(
        layer.handles(&gvk, &InterpreterOperation::InterpretDependency),
        Handles::Yes("a-first,b-second".to_owned())
    );
    assert!(matches!(
        layer.handles(&gvk, &InterpreterOperation::InterpretReplica),
        Handles::No(_)
    ));
    let other_version = GroupVersionKind::gvk("apps", "v1beta2", "Deployment");
    assert!(matches!(
        layer.handles(&other_version, &InterpreterOperation::InterpretHealth),
        Handles::No(_)
    ));

    assert_eq!(
        layer
            .interpret_blocking(Request::InterpretHealth {
                object: deployment()
            })
            .unwrap(),
        Response::Healthy(true)
    );
    let Response::Dependencies(refs) = layer
        .interpret_blocking(Request::InterpretDependency {
            object: deployment(),
        })
        .unwrap()
    else {
        panic!("dependencies")
    };
    let names: Vec<(&str, &str)> = refs
        .iter()
        .map(|r| (r.kind.as_str(), r.name.as_str()))
        .collect();
    assert_eq!(
        names,
        [("ConfigMap", "a"), ("Secret", "z")],
        "deduplicated and sorted"
    );

    // The reflector's next list replaces everything.
    layer.replace_all(Vec::new());
    assert!(matches!(
        layer.handles(&gvk, &InterpreterOperation::InterpretHealth),
        Handles::No(_)
    ));
    let err = layer
        .interpret_blocking(Request::InterpretHealth {
            object: deployment(),
        })
        .unwrap_err();
    assert!(matches!(err, Error::NotEnabled { .. }), "{err}");
}

#[test]
fn a_bad_apiversion_matches_nothing_and_a_broken_script_fails_when_called() {
    let layer = CustomizationLayer::new(vm());
    layer.replace_all(vec![
        ric(
            "bad",
            "a/b/c",
            "Deployment",
            CustomizationRules {
                retention: lua("x = 1"),
                ..CustomizationRules::default()
            },
        ),
        ric(
            "broken",
            "apps/v1",
            "Deployment",
            CustomizationRules {
                health_interpretation: lua("function InterpretHealth("),
                ..CustomizationRules::default()
            },
        ),
    ]);
    let gvk = GroupVersionKind::gvk("apps", "v1", "Deployment");
    assert!(matches!(
        layer.handles(&gvk, &InterpreterOperation::Retain),
        Handles::No(_)
    ));
    assert_eq!(
        layer.handles(&gvk, &InterpreterOperation::InterpretHealth),
        Handles::Yes("broken".to_owned())
    );
    let err = layer
        .interpret_blocking(Request::InterpretHealth {
            object: deployment(),
        })
        .unwrap_err();
    let text = crate::facade::error_text(&err);
    assert!(
        text.contains("customization")
            && text.contains("Deployment default/nginx")
            && text.contains("broken"),
        "{text}"
    );
}

#[tokio::test]
async fn customization_beats_bundled_beats_native_per_operation() {
    let cloneset = json!({
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "CloneSet",
        "metadata": {"name": "web", "namespace": "shop", "generation": 1},
        "spec": {"replicas": 2, "template": {"spec": {"containers": [{"name": "a", "image": "i"}]}}},
        "status": {"observedGeneration": 1, "updatedReplicas": 2, "availableReplicas": 2}
    });
    let customizations = Arc::new(CustomizationLayer::new(vm()));
    let interpreter = ResourceInterpreter::builder()
        .layer(customizations.clone())
        .layer(Arc::new(ThirdPartyLayer::new(vm())))
        .native()
        .build()
        .unwrap();
    let health = || {
        interpreter.interpret(Request::InterpretHealth {
            object: cloneset.clone(),
        })
    };
    let (out, explanation) = health().await;
    assert_eq!(out.unwrap(), Response::Healthy(true));
    assert_eq!(explanation.answered.unwrap().layer, LayerKind::ThirdParty);

    // A user customization for the same kind takes over only the operation it defines.
    customizations.replace_all(vec![ric(
        "override",
        "apps.kruise.io/v1alpha1",
        "CloneSet",
        CustomizationRules {
            health_interpretation: lua("function InterpretHealth(o) return false end"),
            ..CustomizationRules::default()
        },
    )]);
    let (out, explanation) = health().await;
    assert_eq!(out.unwrap(), Response::Healthy(false));
    assert_eq!(
        explanation.answered.unwrap().layer,
        LayerKind::Customization
    );
    let (out, explanation) = interpreter
        .interpret(Request::InterpretReplica {
            object: cloneset.clone(),
        })
        .await;
    assert_eq!(
        out.unwrap(),
        Response::Replicas {
            replicas: 2,
            requirements: None
        }
    );
    assert_eq!(explanation.answered.unwrap().layer, LayerKind::ThirdParty);

    // A native kind without a customization falls through both Lua layers; a failing script does not.
    let (out, explanation) = interpreter
        .interpret(Request::InterpretReplica {
            object: deployment(),
        })
        .await;
    assert_eq!(
        out.unwrap().clone(),
        Response::Replicas {
            replicas: 3,
            requirements: native_requirements()
        }
    );
    assert_eq!(explanation.answered.unwrap().layer, LayerKind::Native);
    customizations.replace_all(vec![ric(
        "failing",
        "apps/v1",
        "Deployment",
        CustomizationRules {
            replica_resource: lua("function GetReplicas(o) error('no') end"),
            ..CustomizationRules::default()
        },
    )]);
    let (out, _) = interpreter
        .interpret(Request::InterpretReplica {
            object: deployment(),
        })
        .await;
    assert!(out.is_err(), "errors never fall back");
}

fn native_requirements() -> Option<flotilla_api::work::v1alpha2::ReplicaRequirements> {
    let requests = [("cpu", "100m"), ("memory", "128Mi")]
        .into_iter()
        .map(|(k, v)| {
            (
                k.to_owned(),
                k8s_openapi::apimachinery::pkg::api::resource::Quantity(v.to_owned()),
            )
        })
        .collect();
    Some(flotilla_api::work::v1alpha2::ReplicaRequirements {
        resource_request: requests,
        ..Default::default()
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_calls_share_the_pool() {
    let layer = Arc::new(CustomizationLayer::with_customizations(
        LuaVm::new(VmConfig {
            concurrency: 2,
            pool_size: 2,
            ..VmConfig::default()
        }),
        &[seed()],
    ));
    let calls = (0..32).map(|i| {
        let layer = layer.clone();
        tokio::spawn(async move {
            let out = layer
                .interpret(Request::ReviseReplica {
                    object: deployment(),
                    replicas: i,
                })
                .await
                .unwrap();
            let Response::Object(object) = out else {
                panic!("object")
            };
            assert_eq!(object["spec"]["replicas"], json!(i));
        })
    });
    for call in calls {
        call.await.unwrap();
    }
}
