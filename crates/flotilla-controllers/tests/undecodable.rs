//! An object the controllers' types cannot read does not blind an informer: the informer syncs, caches every
//! other object, reports the one it left out (hook and metric, with the field that failed), keeps the last
//! readable version of an object that becomes unreadable, and picks the object up once it is fixed.

#![allow(clippy::unwrap_used, clippy::panic)]

use crate::support::{self, eventually};

use std::sync::{Arc, Mutex};
use std::time::Duration;

use flotilla_api::policy::v1alpha1::PropagationPolicy;
use flotilla_controllers::runtime::{Informers, UndecodableHook, UndecodableObject};
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::Client;
use kube::api::{Api, DynamicObject, Patch, PatchParams, PostParams};
use kube::core::{ApiResource, GroupVersionKind};
use serde_json::json;

/// The PropagationPolicy CRD without a schema, as a CRD of another version might let anything through.
fn permissive_crd() -> CustomResourceDefinition {
    serde_json::from_value(json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "propagationpolicies.policy.karmada.io"},
        "spec": {"group": "policy.karmada.io", "scope": "Namespaced",
                 "names": {"plural": "propagationpolicies", "singular": "propagationpolicy",
                           "kind": "PropagationPolicy", "listKind": "PropagationPolicyList"},
                 "versions": [{"name": "v1alpha1", "served": true, "storage": true,
                               "schema": {"openAPIV3Schema": {"type": "object",
                                          "x-kubernetes-preserve-unknown-fields": true}}}]}
    }))
    .unwrap()
}

fn policy(name: &str, scheduling_type: serde_json::Value) -> serde_json::Value {
    json!({
        "apiVersion": "policy.karmada.io/v1alpha1", "kind": "PropagationPolicy",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"resourceSelectors": [{"apiVersion": "v1", "kind": "ConfigMap", "name": name}],
                 "placement": {"replicaScheduling": {"replicaSchedulingType": scheduling_type}}}
    })
}

#[tokio::test]
async fn an_unreadable_object_is_reported_and_left_out_and_the_rest_goes_on() {
    let mut dirs = Vec::new();
    let server = support::start_server(&mut dirs).await;
    let client = support::client_for(&server, "admin").await;
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    crds.create(&PostParams::default(), &permissive_crd())
        .await
        .unwrap();
    let resource = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("policy.karmada.io", "v1alpha1", "PropagationPolicy"),
        "propagationpolicies",
    );
    let raw: Api<DynamicObject> = Api::namespaced_with(client.clone(), "default", &resource);
    let create = |value: serde_json::Value| {
        let raw = raw.clone();
        async move {
            let object: DynamicObject = serde_json::from_value(value).unwrap();
            eventually("the policy to be created", || {
                let (raw, object) = (raw.clone(), object.clone());
                async move { raw.create(&PostParams::default(), &object).await.ok() }
            })
            .await;
        }
    };
    create(policy("good", json!("Divided"))).await;
    // A value Flotilla does not know is kept (Karmada's field is a string); a list is no string at all.
    create(policy("sideways", json!("Sideways"))).await;
    create(policy("wrong-type", json!(["Divided"]))).await;
    create(policy("changes-later", json!("Duplicated"))).await;

    let reports: Arc<Mutex<Vec<(String, String, String)>>> = Arc::default();
    let hook = {
        let reports = reports.clone();
        Arc::new(move |undecodable: &UndecodableObject<'_>| {
            reports.lock().unwrap().push((
                undecodable.kind.to_owned(),
                undecodable.object.meta.name.clone().unwrap_or_default(),
                undecodable.object.error.clone(),
            ));
        })
    };
    let informers = Informers::new(client.clone(), "control-plane").reporting_undecodable(hook);
    let policies = informers.typed::<PropagationPolicy>();
    tokio::time::timeout(Duration::from_secs(30), policies.wait_synced())
        .await
        .expect("the informer synced although one object cannot be read");
    let mut names: Vec<String> = policies
        .list()
        .iter()
        .map(|p| p.metadata.name.clone().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["changes-later", "good", "sideways"]);
    let sideways = policies.get("default", "sideways").unwrap();
    assert_eq!(
        serde_json::to_value(&sideways.spec.placement).unwrap()["replicaScheduling"]["replicaSchedulingType"],
        "Sideways"
    );
    {
        let reports = reports.lock().unwrap();
        assert_eq!(reports.len(), 1, "{reports:?}");
        let (kind, name, error) = &reports[0];
        assert_eq!(
            (kind.as_str(), name.as_str()),
            ("PropagationPolicy", "wrong-type")
        );
        assert!(
            error.starts_with(
                "spec.placement.replicaScheduling.replicaSchedulingType: invalid type: sequence, expected a string"
            ),
            "{error}"
        );
    }

    // An object that becomes unreadable keeps its last readable version in the cache.
    raw.patch(
        "changes-later",
        &PatchParams::default(),
        &Patch::Merge(
            json!({"spec": {"placement": {"replicaScheduling": {"replicaSchedulingType": 7}}}}),
        ),
    )
    .await
    .unwrap();
    eventually("the change to be reported", || async {
        let reports = reports.lock().unwrap();
        reports
            .iter()
            .any(|(_, name, _)| name == "changes-later")
            .then_some(())
    })
    .await;
    let kept = policies.get("default", "changes-later").unwrap();
    assert_eq!(
        serde_json::to_value(&kept.spec.placement).unwrap()["replicaScheduling"]["replicaSchedulingType"],
        "Duplicated"
    );

    // Fixed, the unreadable policy is picked up like any other.
    raw.patch(
        "wrong-type",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"placement": {"replicaScheduling": {"replicaSchedulingType": "Divided"}}}})),
    )
    .await
    .unwrap();
    eventually("the fixed policy in the cache", || async {
        policies.get("default", "wrong-type")
    })
    .await;
    // Deleting an unreadable object removes its cached version too.
    raw.delete("changes-later", &Default::default())
        .await
        .unwrap();
    eventually("the deleted policy gone from the cache", || async {
        policies
            .get("default", "changes-later")
            .is_none()
            .then_some(())
    })
    .await;
    informers.shutdown();
}

#[tokio::test]
async fn the_controllers_count_an_unreadable_object_and_say_on_it_which_field_failed() {
    use k8s_openapi::api::events::v1::Event;
    let env = support::Env::start(0).await;
    // Karmada's CRD is replaced by one without a schema, as a CRD of another version might let anything through.
    let crds: Api<CustomResourceDefinition> = Api::all(env.client.clone());
    let mut crd = permissive_crd();
    crd.metadata.resource_version = crds
        .get("propagationpolicies.policy.karmada.io")
        .await
        .unwrap()
        .metadata
        .resource_version;
    crds.replace(
        "propagationpolicies.policy.karmada.io",
        &PostParams::default(),
        &crd,
    )
    .await
    .unwrap();
    let resource = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("policy.karmada.io", "v1alpha1", "PropagationPolicy"),
        "propagationpolicies",
    );
    let raw: Api<DynamicObject> = Api::namespaced_with(env.client.clone(), "default", &resource);
    let object: DynamicObject =
        serde_json::from_value(policy("wrong-type", json!(["Divided"]))).unwrap();
    eventually("the policy to be created", || {
        let (raw, object) = (raw.clone(), object.clone());
        async move { raw.create(&PostParams::default(), &object).await.ok() }
    })
    .await;

    let events: Api<Event> = Api::namespaced(env.client.clone(), "default");
    let event = eventually("a Warning Event on the policy", || async {
        events
            .list(&Default::default())
            .await
            .ok()?
            .items
            .into_iter()
            .find(|event| {
                event.reason.as_deref() == Some("ObjectUndecodable")
                    && event.regarding.as_ref().and_then(|r| r.name.as_deref())
                        == Some("wrong-type")
            })
    })
    .await;
    assert_eq!(event.type_.as_deref(), Some("Warning"));
    let note = event.note.unwrap_or_default();
    assert!(
        note.contains(
            "spec.placement.replicaScheduling.replicaSchedulingType: invalid type: sequence, expected a string"
        ),
        "{note}"
    );
    let regarding = event.regarding.unwrap();
    assert_eq!(regarding.kind.as_deref(), Some("PropagationPolicy"));
    assert_eq!(
        regarding.api_version.as_deref(),
        Some("policy.karmada.io/v1alpha1")
    );
    let manager = env.manager.as_ref().unwrap();
    assert!(
        manager
            .metrics()
            .undecodable("control-plane: propagationpolicies")
            >= 1
    );
    assert!(
        manager
            .metrics()
            .encode()
            .contains("undecodable_objects_total{informer=\"control-plane: propagationpolicies\"}")
    );
    env.stop().await;
}

/// Every Karmada CRD without a schema, and in each an object whose `spec` is a string: what CRDs of another
/// version could let into the control plane before the controllers start.
async fn an_unreadable_object_of_every_kind(client: Client) -> Vec<String> {
    let mut plurals = Vec::new();
    for crd in flotilla_api::crds::all() {
        loosen(&client, &crd.spec.names.plural).await;
        let version = crd
            .spec
            .versions
            .iter()
            .find(|v| v.storage)
            .unwrap()
            .name
            .clone();
        let resource = ApiResource::from_gvk_with_plural(
            &GroupVersionKind::gvk(&crd.spec.group, &version, &crd.spec.names.kind),
            &crd.spec.names.plural,
        );
        let api: Api<DynamicObject> = if crd.spec.scope == "Namespaced" {
            Api::namespaced_with(client.clone(), "default", &resource)
        } else {
            Api::all_with(client.clone(), &resource)
        };
        let object: DynamicObject = serde_json::from_value(json!({
            "apiVersion": resource.api_version, "kind": resource.kind,
            "metadata": {"name": "unreadable"},
            "spec": "not an object",
        }))
        .unwrap();
        // The new schema takes effect a moment after the write.
        eventually(&format!("an unreadable {}", resource.kind), || {
            let (api, object) = (api.clone(), object.clone());
            async move { api.create(&PostParams::default(), &object).await.ok() }
        })
        .await;
        plurals.push(crd.spec.names.plural.clone());
    }
    plurals
}

#[tokio::test]
async fn no_unreadable_object_of_any_kind_stops_the_controllers() {
    let plurals = Arc::new(Mutex::new(Vec::new()));
    let prepared = plurals.clone();
    let env = support::Env::start_prepared(1, support::fast_options(), |client| async move {
        *prepared.lock().unwrap() = an_unreadable_object_of_every_kind(client).await;
    })
    .await;
    // The manager started, and propagation goes on beside an unreadable object of every kind.
    let configmaps: Api<ConfigMap> = Api::namespaced(env.client.clone(), "default");
    let map: ConfigMap =
        serde_json::from_value(json!({"metadata": {"name": "settings"}, "data": {"a": "1"}}))
            .unwrap();
    configmaps
        .create(&PostParams::default(), &map)
        .await
        .unwrap();
    let raw: Api<DynamicObject> = Api::namespaced_with(
        env.client.clone(),
        "default",
        &ApiResource::from_gvk_with_plural(
            &GroupVersionKind::gvk("policy.karmada.io", "v1alpha1", "PropagationPolicy"),
            "propagationpolicies",
        ),
    );
    let policy: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "policy.karmada.io/v1alpha1", "kind": "PropagationPolicy",
        "metadata": {"name": "settings", "namespace": "default"},
        "spec": {"resourceSelectors": [{"apiVersion": "v1", "kind": "ConfigMap", "name": "settings"}],
                 "placement": {"clusterAffinity": {"clusterNames": ["member1"]}}}
    }))
    .unwrap();
    raw.create(&PostParams::default(), &policy).await.unwrap();
    let member: Api<ConfigMap> = Api::namespaced(env.member("member1").client.clone(), "default");
    eventually("the ConfigMap in member1", || async {
        member.get("settings").await.ok()
    })
    .await;

    // Each kind the controllers watch reported its unreadable object.
    let manager = env.manager.as_ref().unwrap();
    let metrics = manager.metrics().encode();
    for plural in [
        "propagationpolicies",
        "clusterpropagationpolicies",
        "overridepolicies",
        "clusteroverridepolicies",
        "resourcebindings",
        "clusterresourcebindings",
        "works",
        "clusters",
    ] {
        assert!(
            plurals.lock().unwrap().iter().any(|p| p == plural),
            "{plural} is a Karmada CRD"
        );
        assert!(
            manager
                .metrics()
                .undecodable(&format!("control-plane: {plural}"))
                >= 1,
            "{plural} not reported:\n{metrics}"
        );
    }
    env.stop().await;
}

/// Makes the CRD of `plural` take any object, as a CRD of another version might.
async fn loosen(client: &Client, plural: &str) {
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    let crd = flotilla_api::crds::all()
        .into_iter()
        .find(|crd| crd.spec.names.plural == plural)
        .unwrap();
    let name = crd.metadata.name.clone().unwrap();
    let mut value = serde_json::to_value(&crd).unwrap();
    for version in value["spec"]["versions"].as_array_mut().unwrap() {
        version["schema"] = json!({"openAPIV3Schema": {"type": "object",
                                                       "x-kubernetes-preserve-unknown-fields": true}});
    }
    let mut permissive: CustomResourceDefinition = serde_json::from_value(value).unwrap();
    permissive.metadata.resource_version = crds.get(&name).await.unwrap().metadata.resource_version;
    crds.replace(&name, &PostParams::default(), &permissive)
        .await
        .unwrap();
}

#[tokio::test]
async fn an_unreadable_customization_does_not_keep_the_interpreter_from_its_configuration() {
    let mut dirs = Vec::new();
    let server = support::start_server(&mut dirs).await;
    let client = support::client_for(&server, "karmada").await;
    support::install_crds(&client).await;
    for plural in [
        "resourceinterpretercustomizations",
        "resourceinterpreterwebhookconfigurations",
    ] {
        loosen(&client, plural).await;
    }
    let resource = |kind: &str, plural: &str| {
        ApiResource::from_gvk_with_plural(
            &GroupVersionKind::gvk("config.karmada.io", "v1alpha1", kind),
            plural,
        )
    };
    let customizations: Api<DynamicObject> = Api::all_with(
        client.clone(),
        &resource(
            "ResourceInterpreterCustomization",
            "resourceinterpretercustomizations",
        ),
    );
    let webhooks: Api<DynamicObject> = Api::all_with(
        client.clone(),
        &resource(
            "ResourceInterpreterWebhookConfiguration",
            "resourceinterpreterwebhookconfigurations",
        ),
    );
    let objects = [
        (
            &customizations,
            json!({
            "apiVersion": "config.karmada.io/v1alpha1", "kind": "ResourceInterpreterCustomization",
            "metadata": {"name": "widgets"},
            "spec": {"target": {"apiVersion": "example.com/v1", "kind": "Widget"},
                     "customizations": {"replicaResource": {"luaScript":
                        "function GetReplicas(obj) return obj.spec.size, {} end"}}}}),
        ),
        (
            &customizations,
            json!({
            "apiVersion": "config.karmada.io/v1alpha1", "kind": "ResourceInterpreterCustomization",
            "metadata": {"name": "unreadable"}, "spec": "not an object"}),
        ),
        (
            &webhooks,
            json!({
            "apiVersion": "config.karmada.io/v1alpha1", "kind": "ResourceInterpreterWebhookConfiguration",
            "metadata": {"name": "unreadable"}, "webhooks": "not a list"}),
        ),
    ];
    for (api, object) in objects {
        let object: DynamicObject = serde_json::from_value(object).unwrap();
        // The loosened schema takes effect a moment after the write.
        eventually("an object under the loosened schema", || {
            let (api, object) = (api.clone(), object.clone());
            async move { api.create(&PostParams::default(), &object).await.ok() }
        })
        .await;
    }

    let (interpreter, sync) = flotilla_interpreter::config::control_plane(client).unwrap();
    let sync = tokio::spawn(sync);
    tokio::time::timeout(Duration::from_secs(30), interpreter.ready())
        .await
        .expect("the interpreter became ready beside unreadable configuration");
    let widget = GroupVersionKind::gvk("example.com", "v1", "Widget");
    assert!(interpreter.hook_enabled(
        &widget,
        flotilla_api::config::v1alpha1::InterpreterOperation::InterpretReplica
    ));
    // A hook set after the first list is still told of both.
    let told = Arc::new(Mutex::new(Vec::new()));
    let seen = told.clone();
    let hook: UndecodableHook = Arc::new(move |undecodable: &UndecodableObject<'_>| {
        seen.lock().unwrap().push((
            undecodable.kind.to_owned(),
            undecodable.object.error.clone(),
        ));
    });
    interpreter.report_undecodable_to(&hook);
    let mut told = told.lock().unwrap().clone();
    told.sort();
    assert_eq!(
        told,
        [
            (
                "ResourceInterpreterCustomization".to_owned(),
                "spec: invalid type: string \"not an object\", expected struct ResourceInterpreterCustomizationSpec".to_owned()
            ),
            (
                "ResourceInterpreterWebhookConfiguration".to_owned(),
                "webhooks: invalid type: string \"not a list\", expected a sequence".to_owned()
            ),
        ]
    );
    sync.abort();
}
