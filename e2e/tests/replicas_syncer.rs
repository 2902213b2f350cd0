//! Issue 18 item 9: a Deployment template labelled `resourcetemplate.karmada.io/retain-replicas: "true"` whose
//! member copies are scaled in the members (by an HPA there; in the first two scenarios the member Deployment is
//! scaled directly, as the HPA would). The members keep their replicas (the native
//! Retain), and with Divided scheduling Karmada's `deploymentReplicasSyncer` (which `flotilla up` and the kube
//! world run, as Karmada's deployment does) writes the members' total back into the template, even when the
//! HPA's floor exceeds what was propagated. With Duplicated scheduling the template keeps its replicas.
//!
//! The last scenario runs the whole chain with a real HPA propagated next to the Deployment: Karmada's
//! `hpaScaleTargetMarker` labels the template, and the members' HPA controllers (the simulator's in the
//! embedded world, kube-controller-manager's in the kube world; neither has metrics, so each only keeps its
//! target within its bounds) scale the copies.
#![allow(clippy::unwrap_used, clippy::panic)]

use flotilla_api::policy::v1alpha1::PropagationPolicy;
use k8s_openapi::api::apps::v1::Deployment;
use kube::api::{Api, Patch, PatchParams, PostParams};
use serde_json::{Value, json};

use flotilla_e2e::resources::{
    DEPLOYMENT, RESOURCE_BINDING, Res, int, target_clusters, web_deployment,
};
use flotilla_e2e::steps::{control_object, member_object, touch, touched};
use flotilla_e2e::{Env, Options};

flotilla_e2e::scenario!(
    divided_templates_take_the_replicas_members_scaled_to,
    "resync",
    Options::default(),
    divided
);

flotilla_e2e::scenario!(
    propagated_hpas_mark_their_target_and_scale_it_in_the_members,
    "hpa",
    Options::default(),
    propagated_hpa
);

flotilla_e2e::scenario!(
    duplicated_templates_keep_their_replicas_while_members_keep_theirs,
    "retain",
    Options::default(),
    duplicated
);

async fn setup(env: &Env, ns: &str, replica_scheduling: Value) -> anyhow::Result<()> {
    Api::<PropagationPolicy>::namespaced(env.karmada.clone(), ns)
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({
                "metadata": {"name": "web"},
                "spec": {
                    "resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}],
                    "placement": {
                        "clusterAffinity": {"clusterNames": ["member1", "member2"]},
                        "replicaScheduling": replica_scheduling
                    }
                }
            }))?,
        )
        .await?;
    let mut deployment = web_deployment();
    deployment["metadata"]["labels"]["resourcetemplate.karmada.io/retain-replicas"] = json!("true");
    deployment["spec"]["replicas"] = json!(2);
    Api::<Deployment>::namespaced(env.karmada.clone(), ns)
        .create(&PostParams::default(), &serde_json::from_value(deployment)?)
        .await?;
    Ok(())
}

/// Scales member `cluster`'s copy of `web` to `replicas`, as an HPA there would.
async fn member_scales(env: &Env, cluster: &str, ns: &str, replicas: i64) -> anyhow::Result<()> {
    DEPLOYMENT
        .api(env.member(cluster)?, Some(ns))
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"replicas": replicas}})),
        )
        .await?;
    Ok(())
}

/// Waits until the template `web` holds `replicas` in spec and status: the members' total, synced back.
async fn template_replicas(env: &Env, ns: &str, replicas: i64) -> anyhow::Result<()> {
    control_object(
        env,
        DEPLOYMENT,
        ns,
        "web",
        "synced to the members' total",
        |d| {
            int(d, "/spec/replicas") == Some(replicas)
                && int(d, "/status/replicas") == Some(replicas)
        },
    )
    .await?;
    Ok(())
}

async fn member_replicas(
    env: &Env,
    cluster: &str,
    ns: &str,
    replicas: i64,
) -> anyhow::Result<Value> {
    member_object(
        env,
        cluster,
        DEPLOYMENT,
        ns,
        "web",
        &format!("at {replicas} replicas"),
        |d| {
            int(d, "/spec/replicas") == Some(replicas)
                && int(d, "/status/replicas") == Some(replicas)
        },
    )
    .await
}

async fn divided(env: &Env, ns: &str) -> anyhow::Result<()> {
    let equal = |cluster: &str| json!({"targetCluster": {"clusterNames": [cluster]}, "weight": 1});
    setup(
        env,
        ns,
        json!({
            "replicaSchedulingType": "Divided",
            "replicaDivisionPreference": "Weighted",
            "weightPreference": {"staticWeightList": [equal("member1"), equal("member2")]}
        }),
    )
    .await?;
    member_replicas(env, "member1", ns, 1).await?;
    member_replicas(env, "member2", ns, 1).await?;

    // Each member's HPA keeps at least 3, more than the 1 each was given: the template follows the total.
    member_scales(env, "member1", ns, 3).await?;
    member_scales(env, "member2", ns, 3).await?;
    template_replicas(env, ns, 6).await?;
    control_object(
        env,
        RESOURCE_BINDING,
        ns,
        "web-deployment",
        "divided anew",
        |b| target_clusters(b) == [("member1".to_owned(), 3), ("member2".to_owned(), 3)],
    )
    .await?;
    member_replicas(env, "member1", ns, 3).await?;
    member_replicas(env, "member2", ns, 3).await?;

    // One member's HPA scales down: the template follows again, the other member keeps its replicas.
    member_scales(env, "member1", ns, 2).await?;
    control_object(env, DEPLOYMENT, ns, "web", "synced to the new total", |d| {
        int(d, "/spec/replicas") == Some(5) && int(d, "/status/replicas") == Some(5)
    })
    .await?;
    member_replicas(env, "member1", ns, 2).await?;
    member_replicas(env, "member2", ns, 3).await?;
    Ok(())
}

async fn duplicated(env: &Env, ns: &str) -> anyhow::Result<()> {
    setup(env, ns, json!({"replicaSchedulingType": "Duplicated"})).await?;
    member_replicas(env, "member1", ns, 2).await?;
    member_replicas(env, "member2", ns, 2).await?;

    member_scales(env, "member1", ns, 5).await?;
    // The template's status sums the members; its spec is not synced for Duplicated scheduling.
    control_object(
        env,
        DEPLOYMENT,
        ns,
        "web",
        "with the members' total in its status",
        |d| int(d, "/status/replicas") == Some(7),
    )
    .await?;
    // A template change makes the Works be applied again: member1 keeps what its HPA set (Retain).
    touch(env, DEPLOYMENT, ns, "web", "1").await?;
    let member1 = member_object(env, "member1", DEPLOYMENT, ns, "web", "re-applied", |d| {
        touched(d) == Some("1")
    })
    .await?;
    anyhow::ensure!(
        int(&member1, "/spec/replicas") == Some(5),
        "member1 lost the replicas its HPA set: {member1}"
    );
    member_replicas(env, "member2", ns, 2).await?;
    let template = control_object(env, DEPLOYMENT, ns, "web", "read", |_| true).await?;
    anyhow::ensure!(
        int(&template, "/spec/replicas") == Some(2),
        "a Duplicated template's replicas were synced: {template}"
    );
    Ok(())
}

/// `autoscaling/v2 HorizontalPodAutoscaler`.
const HPA: Res = Res(
    "autoscaling",
    "v2",
    "HorizontalPodAutoscaler",
    "horizontalpodautoscalers",
);

const RETAIN_REPLICAS: &str = "resourcetemplate.karmada.io/retain-replicas";

fn retains_replicas(template: &Value) -> bool {
    template
        .pointer("/metadata/labels")
        .and_then(|l| l.get(RETAIN_REPLICAS))
        .and_then(Value::as_str)
        == Some("true")
}

async fn propagated_hpa(env: &Env, ns: &str) -> anyhow::Result<()> {
    let equal = |cluster: &str| json!({"targetCluster": {"clusterNames": [cluster]}, "weight": 1});
    Api::<PropagationPolicy>::namespaced(env.karmada.clone(), ns)
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({
                "metadata": {"name": "web"},
                "spec": {
                    "resourceSelectors": [
                        {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                        {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "name": "web"}
                    ],
                    "placement": {
                        "clusterAffinity": {"clusterNames": ["member1", "member2"]},
                        "replicaScheduling": {
                            "replicaSchedulingType": "Divided",
                            "replicaDivisionPreference": "Weighted",
                            "weightPreference": {"staticWeightList": [equal("member1"), equal("member2")]}
                        }
                    }
                }
            }))?,
        )
        .await?;
    let mut deployment = web_deployment();
    deployment["spec"]["replicas"] = json!(2);
    Api::<Deployment>::namespaced(env.karmada.clone(), ns)
        .create(&PostParams::default(), &serde_json::from_value(deployment)?)
        .await?;
    member_replicas(env, "member1", ns, 1).await?;
    member_replicas(env, "member2", ns, 1).await?;

    // Each member's HPA keeps at least 3: the template is marked, the members keep what their HPAs set, and
    // the template follows their total.
    HPA.api(&env.karmada, Some(ns))
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({
                "apiVersion": "autoscaling/v2",
                "kind": "HorizontalPodAutoscaler",
                "metadata": {"name": "web"},
                "spec": {
                    "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                    "minReplicas": 3,
                    "maxReplicas": 10
                }
            }))?,
        )
        .await?;
    control_object(
        env,
        DEPLOYMENT,
        ns,
        "web",
        "marked by its HPA",
        retains_replicas,
    )
    .await?;
    member_replicas(env, "member1", ns, 3).await?;
    member_replicas(env, "member2", ns, 3).await?;
    template_replicas(env, ns, 6).await?;

    // Without its HPA the template is no longer marked.
    HPA.api(&env.karmada, Some(ns))
        .delete("web", &Default::default())
        .await?;
    control_object(env, DEPLOYMENT, ns, "web", "unmarked", |d| {
        !retains_replicas(d)
    })
    .await?;
    Ok(())
}
