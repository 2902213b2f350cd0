//! Issue 18 item 8: workloads with several pod templates (gate `MultiplePodTemplatesScheduling`, on in both
//! worlds as in Karmada's local-up). A `Pipeline` custom resource has a leader (1 cpu) and a worker (3 cpu);
//! a ResourceInterpreterCustomization's `componentResource` script reports them as two components, so the
//! binding carries `spec.components` and the template a `GetComponentsSucceed` Event. Its policy holds it to one
//! cluster (a cluster spread constraint with `minGroups` = `maxGroups` = 1), of member1 and member2.
//!
//! member1's resource models are changed so its nodes count as 2-cpu nodes: the leader would fit there, the
//! worker not, so a whole set does not. Every member's summary has room for both, and by name member1 would be
//! chosen; by whole sets of components the workload goes to member2, whose nodes (at least 4 cpu in either
//! world) hold a set, and the
//! target records the components. member1's models are restored at the end (Clusters are shared in the kube
//! world).
#![allow(clippy::unwrap_used, clippy::panic)]

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::Client;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use serde_json::{Value, json};

use flotilla_e2e::resources::{CLUSTER, RESOURCE_BINDING, Res, int, target_clusters, text};
use flotilla_e2e::steps::{control_cluster_serves, control_object, event_on, member_object};
use flotilla_e2e::{Env, Options, wait_for};

flotilla_e2e::scenario!(
    components_are_placed_where_a_whole_set_fits,
    "components",
    Options::default(),
    components
);

const GROUP: &str = "pipeline.e2e.flotilla.io";
const PIPELINE: Res = Res(GROUP, "v1", "Pipeline", "pipelines");
const CUSTOMIZATION: &str = "e2e-pipeline-components";
const CUSTOMIZATIONS: Res = Res(
    "config.karmada.io",
    "v1alpha1",
    "ResourceInterpreterCustomization",
    "resourceinterpretercustomizations",
);

const GET_COMPONENTS: &str = r#"
function GetComponents(desiredObj)
  local components = {}
  for _, part in ipairs({"leader", "worker"}) do
    local spec = desiredObj.spec[part]
    components[#components + 1] = {
      name = part,
      replicas = spec.replicas,
      replicaRequirements = {resourceRequest = {cpu = spec.cpu}}
    }
  end
  return components
end
"#;

fn pipeline_crd() -> anyhow::Result<CustomResourceDefinition> {
    Ok(serde_json::from_value(json!({
        "metadata": {"name": format!("pipelines.{GROUP}")},
        "spec": {
            "group": GROUP,
            "scope": "Namespaced",
            "names": {"plural": "pipelines", "singular": "pipeline", "kind": "Pipeline", "listKind": "PipelineList"},
            "versions": [{
                "name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}
            }]
        }
    }))?)
}

/// Creates the Pipeline CRD where it is missing (it stays: the kube world's API servers are shared).
async fn ensure_crd(client: &Client) -> anyhow::Result<()> {
    match Api::<CustomResourceDefinition>::all(client.clone())
        .create(&PostParams::default(), &pipeline_crd()?)
        .await
    {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(status)) if status.code == 409 => Ok(()),
        Err(err) => Err(err.into()),
    }
}

/// Resource models under which each of member1's 32-cpu nodes counts as a 2-cpu node (grade 1).
fn small_models() -> Value {
    json!([
        {"grade": 0, "ranges": [
            {"name": "cpu", "min": "0", "max": "2"},
            {"name": "memory", "min": "0", "max": "4Gi"}
        ]},
        {"grade": 1, "ranges": [
            {"name": "cpu", "min": "2", "max": "100000"},
            {"name": "memory", "min": "4Gi", "max": "100Ti"}
        ]}
    ])
}

async fn set_models(env: &Env, cluster: &str, models: &Value) -> anyhow::Result<()> {
    CLUSTER
        .api(&env.karmada, None)
        .patch(
            cluster,
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"resourceModels": models}})),
        )
        .await?;
    Ok(())
}

/// Node count of `grade` in a Cluster's `status.resourceSummary.allocatableModelings`.
fn nodes_of_grade(cluster: &Value, grade: i64) -> i64 {
    cluster
        .pointer("/status/resourceSummary/allocatableModelings")
        .and_then(Value::as_array)
        .and_then(|ms| ms.iter().find(|m| int(m, "/grade") == Some(grade)))
        .and_then(|m| int(m, "/count"))
        .unwrap_or(0)
}

async fn components(env: &Env, ns: &str) -> anyhow::Result<()> {
    let cluster = CLUSTER
        .get(&env.karmada, None, "member1")
        .await
        .map_err(anyhow::Error::msg)?
        .ok_or_else(|| anyhow::anyhow!("no Cluster member1"))?;
    let original = cluster
        .pointer("/spec/resourceModels")
        .cloned()
        .unwrap_or(Value::Null);
    let result = placed_by_components(env, ns).await;
    let restored = set_models(env, "member1", &original).await;
    let removed = CUSTOMIZATIONS
        .api(&env.karmada, None)
        .delete(CUSTOMIZATION, &DeleteParams::default())
        .await;
    result?;
    restored?;
    removed.map(|_| ()).map_err(Into::into)
}

async fn placed_by_components(env: &Env, ns: &str) -> anyhow::Result<()> {
    ensure_crd(&env.karmada).await?;
    for (name, client) in &env.members {
        ensure_crd(client).await?;
        control_cluster_serves(env, name, &format!("{GROUP}/v1"), "Pipeline").await?;
    }
    set_models(env, "member1", &small_models()).await?;
    wait_for("member1's nodes to count as 2-cpu nodes", || async move {
        let cluster = CLUSTER
            .get(&env.karmada, None, "member1")
            .await?
            .ok_or("absent")?;
        if nodes_of_grade(&cluster, 1) > 0 && nodes_of_grade(&cluster, 0) == 0 {
            Ok(())
        } else {
            Err(format!(
                "{}",
                cluster
                    .pointer("/status/resourceSummary/allocatableModelings")
                    .cloned()
                    .unwrap_or_default()
            ))
        }
    })
    .await?;

    let customization: kube::api::DynamicObject = serde_json::from_value(json!({
        "apiVersion": "config.karmada.io/v1alpha1",
        "kind": "ResourceInterpreterCustomization",
        "metadata": {"name": CUSTOMIZATION},
        "spec": {
            "target": {"apiVersion": format!("{GROUP}/v1"), "kind": "Pipeline"},
            "customizations": {"componentResource": {"luaScript": GET_COMPONENTS}}
        }
    }))?;
    CUSTOMIZATIONS
        .api(&env.karmada, None)
        .create(&PostParams::default(), &customization)
        .await?;

    Api::<flotilla_api::policy::v1alpha1::PropagationPolicy>::namespaced(env.karmada.clone(), ns)
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({
                "metadata": {"name": "pipeline"},
                "spec": {
                    "resourceSelectors": [{"apiVersion": format!("{GROUP}/v1"), "kind": "Pipeline"}],
                    "placement": {
                        "clusterAffinity": {"clusterNames": ["member1", "member2"]},
                        "spreadConstraints": [{"spreadByField": "cluster", "minGroups": 1, "maxGroups": 1}]
                    }
                }
            }))?,
        )
        .await?;
    let pipeline: kube::api::DynamicObject = serde_json::from_value(json!({
        "apiVersion": format!("{GROUP}/v1"),
        "kind": "Pipeline",
        "metadata": {"name": "etl"},
        "spec": {
            "leader": {"replicas": 1, "cpu": "1"},
            "worker": {"replicas": 1, "cpu": "3"}
        }
    }))?;
    PIPELINE
        .api(&env.karmada, Some(ns))
        .create(&PostParams::default(), &pipeline)
        .await?;

    let binding = control_object(
        env,
        RESOURCE_BINDING,
        ns,
        "etl-pipeline",
        "scheduled by its components",
        |b| !target_clusters(b).is_empty(),
    )
    .await?;
    let components: Vec<(String, i64, String)> = binding
        .pointer("/spec/components")
        .and_then(Value::as_array)
        .map(|cs| {
            cs.iter()
                .map(|c| {
                    (
                        text(c, "/name").unwrap_or_default().to_owned(),
                        int(c, "/replicas").unwrap_or(0),
                        text(c, "/replicaRequirements/resourceRequest/cpu")
                            .unwrap_or_default()
                            .to_owned(),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    anyhow::ensure!(
        components
            == [
                ("leader".to_owned(), 1, "1".to_owned()),
                ("worker".to_owned(), 1, "3".to_owned())
            ],
        "unexpected spec.components: {binding}"
    );
    anyhow::ensure!(
        int(&binding, "/spec/replicas").unwrap_or(0) == 0,
        "replicas were interpreted besides the components: {binding}"
    );
    anyhow::ensure!(
        target_clusters(&binding) == [("member2".to_owned(), 0)],
        "not placed on member2 alone: {binding}"
    );
    let recorded = binding
        .pointer("/spec/clusters/0/components")
        .cloned()
        .unwrap_or_default();
    anyhow::ensure!(
        recorded == json!([{"name": "leader", "replicas": 1}, {"name": "worker", "replicas": 1}]),
        "the target does not record the components: {binding}"
    );
    event_on(
        env,
        ns,
        "etl",
        "GetComponentsSucceed",
        "Get components of resource template successfully.",
    )
    .await?;
    member_object(env, "member2", PIPELINE, ns, "etl", "propagated", |p| {
        text(p, "/spec/worker/cpu") == Some("3")
    })
    .await?;
    Ok(())
}
