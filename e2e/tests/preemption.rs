//! Issue 18 item 3: policy preemption (`PropagationPolicyPreemption`, on in both worlds as in Karmada's
//! local-up). A PropagationPolicy with `preemption: Always` takes a template from a ClusterPropagationPolicy
//! whatever their priorities, a higher-priority one takes it from a lower one, and lowering the winner's
//! priority lets the other take it back. Each time the member objects follow the claim, and the template
//! carries Karmada's `PreemptPolicySucceed` Event.
#![allow(clippy::unwrap_used, clippy::panic)]

use flotilla_api::policy::v1alpha1::{ClusterPropagationPolicy, PropagationPolicy};
use k8s_openapi::api::apps::v1::Deployment;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use serde_json::{Value, json};

use flotilla_e2e::resources::{DEPLOYMENT, text, web_deployment};
use flotilla_e2e::steps::{control_object, event_on, member_object, member_object_gone};
use flotilla_e2e::{Env, Options};

flotilla_e2e::scenario!(
    preempting_policies_take_templates_by_priority,
    "preempt",
    Options::default(),
    preemption
);

async fn preemption(env: &Env, ns: &str) -> anyhow::Result<()> {
    let cluster_policy = format!("{ns}-cluster");
    let result = preempt(env, ns, &cluster_policy).await;
    // Cluster-scoped, so not removed with the scenario's namespace.
    let _ = Api::<ClusterPropagationPolicy>::all(env.karmada.clone())
        .delete(&cluster_policy, &DeleteParams::default())
        .await;
    result
}

async fn preempt(env: &Env, ns: &str, cluster_policy: &str) -> anyhow::Result<()> {
    let spec = |priority: i32, cluster: &str| {
        json!({
            "priority": priority,
            "preemption": "Always",
            "resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment", "namespace": ns, "name": "web"}],
            "placement": {"clusterAffinity": {"clusterNames": [cluster]}}
        })
    };
    Api::<ClusterPropagationPolicy>::all(env.karmada.clone())
        .create(
            &PostParams::default(),
            &serde_json::from_value(
                json!({"metadata": {"name": cluster_policy}, "spec": spec(10, "member3")}),
            )?,
        )
        .await?;
    Api::<Deployment>::namespaced(env.karmada.clone(), ns)
        .create(
            &PostParams::default(),
            &serde_json::from_value(web_deployment())?,
        )
        .await?;
    member_object(
        env,
        "member3",
        DEPLOYMENT,
        ns,
        "web",
        "from the ClusterPropagationPolicy",
        |_| true,
    )
    .await?;

    // A PropagationPolicy preempts a ClusterPropagationPolicy of higher priority.
    let policies: Api<PropagationPolicy> = Api::namespaced(env.karmada.clone(), ns);
    create_pp(&policies, "low", spec(1, "member1")).await?;
    moved(env, ns, "low", "member1", "member3").await?;
    event_on(
        env,
        ns,
        "web",
        "PreemptPolicySucceed",
        &format!("Propagation policy({ns}/low) preempted cluster propagation policy({cluster_policy}) successfully"),
    )
    .await?;

    // A PropagationPolicy of higher priority preempts a lower one.
    create_pp(&policies, "high", spec(5, "member2")).await?;
    moved(env, ns, "high", "member2", "member1").await?;
    event_on(
        env,
        ns,
        "web",
        "PreemptPolicySucceed",
        &format!(
            "Propagation policy({ns}/high) preempted propagation policy({ns}/low) successfully"
        ),
    )
    .await?;

    // Lowering the winner's priority below the other's lets the other take the template back.
    policies
        .patch(
            "high",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"priority": 0}})),
        )
        .await?;
    moved(env, ns, "low", "member1", "member2").await?;
    event_on(
        env,
        ns,
        "web",
        "PreemptPolicySucceed",
        &format!(
            "Propagation policy({ns}/low) preempted propagation policy({ns}/high) successfully"
        ),
    )
    .await
}

async fn create_pp(
    policies: &Api<PropagationPolicy>,
    name: &str,
    spec: Value,
) -> anyhow::Result<()> {
    policies
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({"metadata": {"name": name}, "spec": spec}))?,
        )
        .await?;
    Ok(())
}

/// Waits until `policy` claims the template alone, `web` runs in `to` and is gone from `from`.
async fn moved(env: &Env, ns: &str, policy: &str, to: &str, from: &str) -> anyhow::Result<()> {
    control_object(
        env,
        DEPLOYMENT,
        ns,
        "web",
        &format!("claimed by {policy} alone"),
        |d| {
            text(
                d,
                "/metadata/annotations/propagationpolicy.karmada.io~1name",
            ) == Some(policy)
                && d.pointer("/metadata/annotations/clusterpropagationpolicy.karmada.io~1name")
                    .is_none()
        },
    )
    .await?;
    member_object(
        env,
        to,
        DEPLOYMENT,
        ns,
        "web",
        &format!("placed by {policy}"),
        |_| true,
    )
    .await?;
    member_object_gone(env, from, DEPLOYMENT, ns, "web").await
}
