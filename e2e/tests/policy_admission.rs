//! karmada-webhook's admission of policies, in both worlds: `kubectl apply` of an invalid PropagationPolicy or
//! OverridePolicy is refused with Karmada's message and webhook name, and a PropagationPolicy created with
//! `kubectl create` carries its defaults, permanent id and finalizer in its first version, which no controller
//! writes again.
#![allow(clippy::unwrap_used, clippy::panic)]

use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration,
};
use k8s_openapi::api::apps::v1::Deployment;
use kube::api::{Api, PostParams};
use serde_json::{Value, json};

use flotilla_e2e::resources::web_deployment;
use flotilla_e2e::steps::scheduled_binding;
use flotilla_e2e::{Env, Kubectl, Options};

flotilla_e2e::scenario!(
    invalid_policies_are_refused_and_created_ones_carry_their_defaults,
    "policyadmission",
    Options::default(),
    policy_admission
);

async fn policy_admission(env: &Env, ns: &str) -> anyhow::Result<()> {
    registered(env).await?;
    refused(env, ns).await?;
    defaulted(env, ns).await
}

/// The controller manager registered Karmada's policy webhooks, mutating and validating.
async fn registered(env: &Env) -> anyhow::Result<()> {
    let mutating = Api::<MutatingWebhookConfiguration>::all(env.karmada.clone())
        .get("mutating-config")
        .await?;
    let mutating: Vec<String> = mutating
        .webhooks
        .unwrap_or_default()
        .into_iter()
        .map(|w| w.name)
        .collect();
    assert_eq!(
        mutating,
        [
            "propagationpolicy.karmada.io",
            "clusterpropagationpolicy.karmada.io",
            "overridepolicy.karmada.io",
            "resourcebinding.karmada.io",
            "clusterresourcebinding.karmada.io",
            "work.karmada.io"
        ]
    );
    let validating = Api::<ValidatingWebhookConfiguration>::all(env.karmada.clone())
        .get("validating-config")
        .await?;
    let validating: Vec<String> = validating
        .webhooks
        .unwrap_or_default()
        .into_iter()
        .map(|w| w.name)
        .collect();
    for name in [
        "propagationpolicy.karmada.io",
        "clusterpropagationpolicy.karmada.io",
        "overridepolicy.karmada.io",
        "clusteroverridepolicy.karmada.io",
    ] {
        assert!(
            validating.iter().any(|n| n == name),
            "{name} not in {validating:?}"
        );
    }
    Ok(())
}

fn propagation_policy(ns: &str, name: &str, placement: Value) -> Value {
    json!({
        "apiVersion": "policy.karmada.io/v1alpha1", "kind": "PropagationPolicy",
        "metadata": {"name": name, "namespace": ns},
        "spec": {
            "resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}],
            "placement": placement
        }
    })
}

fn resource_binding(ns: &str, name: &str, annotations: Value, components: Value) -> Value {
    json!({
        "apiVersion": "work.karmada.io/v1alpha2", "kind": "ResourceBinding",
        "metadata": {"name": name, "namespace": ns, "annotations": annotations},
        "spec": {
            "resource": {"apiVersion": "apps/v1", "kind": "Deployment", "namespace": ns, "name": name},
            "components": components
        }
    })
}

fn override_policy(ns: &str, name: &str, spec: Value) -> Value {
    json!({
        "apiVersion": "policy.karmada.io/v1alpha1", "kind": "OverridePolicy",
        "metadata": {"name": name, "namespace": ns},
        "spec": spec
    })
}

/// Runs kubectl with `object` in a file (`-f`), returning its output or its error.
async fn kubectl_with(env: &Env, verb: &[&str], object: &Value) -> anyhow::Result<String> {
    let file = tempfile::NamedTempFile::new()?;
    std::fs::write(file.path(), serde_json::to_vec(object)?)?;
    let path = file.path().to_string_lossy().into_owned();
    let mut args = verb.to_vec();
    args.extend(["-f", path.as_str()]);
    env.kubectl_karmada(&Kubectl::newest(), &args).await
}

/// Each invalid object is refused at `kubectl apply` by the named webhook with Karmada's message.
async fn refused(env: &Env, ns: &str) -> anyhow::Result<()> {
    let cluster = |names: &[&str]| json!({"clusterNames": names});
    let cases = [
        (
            propagation_policy(
                ns,
                "max-below-min",
                json!({"spreadConstraints": [{"spreadByField": "cluster", "minGroups": 3, "maxGroups": 2}]}),
            ),
            "propagationpolicy.karmada.io",
            "spec.placement.spreadConstraints[0]: Invalid value: {\"spreadByField\":\"cluster\",\"maxGroups\":2,\"minGroups\":3}: maxGroups lower than minGroups is not allowed",
        ),
        (
            propagation_policy(
                ns,
                "label-and-field",
                json!({"spreadConstraints": [
                    {"spreadByField": "cluster", "spreadByLabel": "zone", "minGroups": 1}
                ]}),
            ),
            "propagationpolicy.karmada.io",
            "spreadByLabel should not co-exist with spreadByField",
        ),
        (
            propagation_policy(
                ns,
                "affinity-and-affinities",
                json!({"clusterAffinity": cluster(&["member1"]),
                    "clusterAffinities": [{"affinityName": "main", "clusterNames": ["member1"]}]}),
            ),
            "propagationpolicy.karmada.io",
            "clusterAffinities cannot co-exist with clusterAffinity",
        ),
        (
            propagation_policy(
                ns,
                "twin-terms",
                json!({"clusterAffinities": [
                    {"affinityName": "main", "clusterNames": ["member1"]},
                    {"affinityName": "main", "clusterNames": ["member2"]}
                ]}),
            ),
            "propagationpolicy.karmada.io",
            "each affinity term in a policy must have a unique name",
        ),
        (
            json!({
                "apiVersion": "policy.karmada.io/v1alpha1", "kind": "PropagationPolicy",
                "metadata": {"name": "elsewhere", "namespace": ns},
                "spec": {
                    "resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "kube-system"}],
                    "placement": {"clusterAffinity": cluster(&["member1"])}
                }
            }),
            "propagationpolicy.karmada.io",
            "spec.resourceSelectors[0].namespace: Invalid value: \"kube-system\": namespace of resource selector must be the same as the namespace of the policy",
        ),
        (
            override_policy(
                ns,
                "target-and-rules",
                json!({"targetCluster": cluster(&["member1"]),
                    "overrideRules": [{"overriders": {"labelsOverrider": [{"operator": "add", "value": {"tier": "edge"}}]}}]}),
            ),
            "overridepolicy.karmada.io",
            "spec.targetCluster: Invalid value: {\"clusterNames\":[\"member1\"]}: overrideRules and targetCluster can't co-exist",
        ),
        (
            override_policy(
                ns,
                "no-document",
                json!({"overrideRules": [{"overriders": {"fieldOverrider": [{"fieldPath": "/data/config"}]}}]}),
            ),
            "overridepolicy.karmada.io",
            "spec.overrideRules[0].overriders.fieldOverrider[0]: Required value: FieldOverrider must have either JSON or YAML set",
        ),
        (
            override_policy(
                ns,
                "replace-nothing",
                json!({"overrideRules": [{"overriders": {"fieldOverrider": [
                    {"fieldPath": "/data/config", "json": [{"subPath": "/level", "operator": "replace"}]}
                ]}}]}),
            ),
            "overridepolicy.karmada.io",
            "spec.overrideRules[0].overriders.fieldOverrider[0].json[0].value: Invalid value: null: value is required for add or replace operation",
        ),
        (
            resource_binding(
                ns,
                "bad-dependencies",
                json!({"resourcebinding.karmada.io/dependencies": "[{\"kind\":\"ConfigMap\""}),
                json!([]),
            ),
            "resourcebinding.karmada.io",
            "metadata.annotations.resourcebinding.karmada.io/dependencies: Invalid value: \"[{\\\"kind\\\":\\\"ConfigMap\\\"\": annotation value must be a valid JSON",
        ),
        (
            // Both worlds run with MultiplePodTemplatesScheduling, which the components check needs.
            resource_binding(
                ns,
                "twin-components",
                json!({}),
                json!([{"name": "web", "replicas": 1}, {"name": "web", "replicas": 1}]),
            ),
            "resourcebinding.karmada.io",
            "spec.components[1].name: Invalid value: \"web\": component names must be unique",
        ),
    ];
    for (object, webhook, message) in cases {
        let name = object["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        match kubectl_with(env, &["apply"], &object).await {
            Ok(out) => panic!("{name}: applied ({out}), expected a refusal"),
            Err(error) => {
                let error = format!("{error:#}");
                let denied = format!("admission webhook \"{webhook}\" denied the request");
                assert!(
                    error.contains(&denied) && error.contains(message),
                    "{name}: refused with {error}, expected {denied:?} and {message:?}"
                );
            }
        }
    }
    Ok(())
}

/// A created policy's first version carries what Karmada's mutating webhook adds; nothing writes it again.
async fn defaulted(env: &Env, ns: &str) -> anyhow::Result<()> {
    let policy = propagation_policy(
        ns,
        "web",
        json!({
            "clusterAffinity": {"clusterNames": ["member1", "member2"]},
            "spreadConstraints": [{"maxGroups": 2}],
            "replicaScheduling": {"replicaSchedulingType": "Divided"}
        }),
    );
    let created: Value =
        serde_json::from_str(&kubectl_with(env, &["create", "-o", "json"], &policy).await?)?;
    let id = created
        .pointer("/metadata/labels/propagationpolicy.karmada.io~1permanent-id")
        .and_then(Value::as_str)
        .map(str::to_owned);
    assert!(
        id.as_deref().is_some_and(|id| id.len() == 36),
        "no permanent id in the created policy: {created}"
    );
    assert_eq!(
        created["metadata"]["finalizers"],
        json!(["karmada.io/propagation-policy-controller"])
    );
    assert_eq!(
        created["spec"]["placement"]["spreadConstraints"],
        json!([{"spreadByField": "cluster", "maxGroups": 2, "minGroups": 1}])
    );
    assert_eq!(
        created["spec"]["placement"]["replicaScheduling"]["replicaDivisionPreference"],
        "Weighted"
    );
    assert_eq!(created["spec"]["resourceSelectors"][0]["namespace"], ns);

    // Once the policy has been applied and scheduled, it is still its first version.
    Api::<Deployment>::namespaced(env.karmada.clone(), ns)
        .create(
            &PostParams::default(),
            &serde_json::from_value(web_deployment())?,
        )
        .await?;
    scheduled_binding(env, ns, "web-deployment", "scheduled", |_| true).await?;
    let now: Value = serde_json::from_str(
        &env.kubectl_karmada(
            &Kubectl::newest(),
            &["get", "propagationpolicy", "web", "-n", ns, "-o", "json"],
        )
        .await?,
    )?;
    assert_eq!(
        now["metadata"]["resourceVersion"], created["metadata"]["resourceVersion"],
        "the policy was written again after its creation: {now}"
    );
    Ok(())
}
