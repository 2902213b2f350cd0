//! Scenarios 1 and 4 of issue 5: the nginx Deployment walkthrough, and OverridePolicy plus deletion semantics.
#![allow(clippy::unwrap_used, clippy::panic)]

use flotilla_api::names::labels;
use flotilla_e2e::resources::{
    DEPLOYMENT, RESOURCE_BINDING, aggregated_item, brief, int, target_clusters, text,
};
use flotilla_e2e::steps::{apply, control_object, member_object, member_object_gone};
use flotilla_e2e::{Env, Kubectl, Options, example, testdata};

flotilla_e2e::scenario!(
    /// Scenario 1: `nginx-deployment.yaml` puts Deployment nginx with 2 replicas in member1 and member2 (not
    /// member3), and the template's status aggregates both members' status.
    nginx_deployment_reaches_two_members_and_status_aggregates,
    "nginx",
    Options::default(),
    nginx
);

async fn nginx(env: &Env, ns: &str) -> anyhow::Result<()> {
    // The machine's kubectl, as a user would.
    apply(
        env,
        &Kubectl::machine(),
        Some(ns),
        &example("nginx-deployment.yaml"),
    )
    .await?;
    for member in ["member1", "member2"] {
        member_object(
            env,
            member,
            DEPLOYMENT,
            ns,
            "nginx",
            "with 2 replicas",
            |d| int(d, "/spec/replicas") == Some(2),
        )
        .await?;
    }
    control_object(
        env,
        DEPLOYMENT,
        ns,
        "nginx",
        "aggregating 2 + 2 replicas",
        |d| {
            [
                "replicas",
                "readyReplicas",
                "updatedReplicas",
                "availableReplicas",
            ]
            .iter()
            .all(|k| int(d, &format!("/status/{k}")) == Some(4))
        },
    )
    .await?;
    let binding = control_object(
        env,
        RESOURCE_BINDING,
        ns,
        "nginx-deployment",
        "with both members applied and healthy",
        |rb| {
            ["member1", "member2"].iter().all(|m| {
                aggregated_item(rb, m).is_some_and(|i| {
                    i["applied"] == true
                        && i["health"] == "Healthy"
                        && int(i, "/status/readyReplicas") == Some(2)
                })
            })
        },
    )
    .await?;
    assert_eq!(
        target_clusters(&binding),
        [("member1".to_string(), 2), ("member2".to_string(), 2)],
        "Duplicated placement keeps the template's replicas in each cluster"
    );
    let member3 = env.member("member3")?;
    let absent = DEPLOYMENT
        .get(member3, Some(ns), "nginx")
        .await
        .map_err(anyhow::Error::msg)?;
    anyhow::ensure!(absent.is_none(), "member3 got nginx: {absent:?}");
    Ok(())
}

flotilla_e2e::scenario!(
    /// Scenario 4: an OverridePolicy changes the image in member2 only; deleting only the PropagationPolicy leaves
    /// the member objects; deleting the template removes them.
    override_policy_then_policy_and_template_deletion,
    "override",
    Options::default(),
    override_and_delete
);

fn image(d: &serde_json::Value) -> Option<&str> {
    text(d, "/spec/template/spec/containers/0/image")
}

async fn override_and_delete(env: &Env, ns: &str) -> anyhow::Result<()> {
    let kubectl = Kubectl::newest();
    apply(
        env,
        &kubectl,
        Some(ns),
        &testdata("override-image-member2.yaml"),
    )
    .await?;
    apply(env, &kubectl, Some(ns), &example("nginx-deployment.yaml")).await?;
    member_object(
        env,
        "member2",
        DEPLOYMENT,
        ns,
        "nginx",
        "with image nginx:1.27",
        |d| image(d) == Some("nginx:1.27"),
    )
    .await?;
    let member1 =
        member_object(env, "member1", DEPLOYMENT, ns, "nginx", "present", |_| true).await?;
    anyhow::ensure!(
        image(&member1) == Some("nginx"),
        "member1's image must not be overridden: {}",
        brief(&member1)
    );

    env.kubectl_karmada(
        &kubectl,
        &["delete", "-n", ns, "propagationpolicy", "nginx-propagation"],
    )
    .await?;
    control_object(
        env,
        DEPLOYMENT,
        ns,
        "nginx",
        "released by the deleted policy",
        |d| {
            d.pointer("/metadata/labels")
                .and_then(|l| l.get(labels::PROPAGATION_POLICY_PERMANENT_ID))
                .is_none()
        },
    )
    .await?;
    for member in ["member1", "member2"] {
        member_object(
            env,
            member,
            DEPLOYMENT,
            ns,
            "nginx",
            "kept after the policy's deletion",
            |_| true,
        )
        .await?;
    }

    env.kubectl_karmada(&kubectl, &["delete", "-n", ns, "deployment", "nginx"])
        .await?;
    for member in ["member1", "member2"] {
        member_object_gone(env, member, DEPLOYMENT, ns, "nginx").await?;
    }
    Ok(())
}
