//! Scenario 2 of issue 5: the Workload walkthrough of `manifests/examples/README.md` with the example interpreter
//! webhook (`flotilla up --webhook-example`).
#![allow(clippy::unwrap_used, clippy::panic)]

use kube::api::{Patch, PatchParams};
use serde_json::{Value, json};

use flotilla_e2e::resources::{
    RESOURCE_BINDING, WORKLOAD, aggregated_item, brief, int, target_clusters, text,
};
use flotilla_e2e::steps::{apply, control_object, install_workload_crd, member_object};
use flotilla_e2e::{Env, Kubectl, Options, example};

const MEMBERS: [&str; 3] = ["member1", "member2", "member3"];

flotilla_e2e::scenario!(
    workload_walkthrough_with_the_example_webhook,
    "workload",
    Options {
        webhook_example: true,
        ..Options::default()
    },
    walkthrough
);

async fn walkthrough(env: &Env, ns: &str) -> anyhow::Result<()> {
    // The newest kubectl (1.37), as a user with a current client would.
    let kubectl = Kubectl::newest();
    install_workload_crd(env, &kubectl).await?;
    apply(env, &kubectl, Some(ns), &example("workload.yaml")).await?;

    // InterpretReplica (webhook): the binding carries the template's 3 replicas, divided 1:1:1.
    let binding = control_object(
        env,
        RESOURCE_BINDING,
        ns,
        "nginx-workload",
        "with 3 replicas over three members",
        |rb| int(rb, "/spec/replicas") == Some(3) && target_clusters(rb).len() == 3,
    )
    .await?;
    let expected: Vec<(String, i64)> = MEMBERS.iter().map(|m| (m.to_string(), 1)).collect();
    anyhow::ensure!(
        target_clusters(&binding) == expected,
        "{}",
        brief(&binding["spec"])
    );

    // ReviseReplica (webhook): each member's copy has 1 replica.
    for member in MEMBERS {
        member_object(env, member, WORKLOAD, ns, "nginx", "with 1 replica", |w| {
            int(w, "/spec/replicas") == Some(1)
        })
        .await?;
    }

    // Retain (webhook): member1's spec.paused survives a template change.
    let member1 = env.member("member1")?;
    WORKLOAD
        .api(member1, Some(ns))
        .patch(
            "nginx",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"paused": true}})),
        )
        .await?;
    WORKLOAD
        .api(&env.karmada, Some(ns))
        .patch(
            "nginx",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"template": {"spec": {"containers": [{"name": "nginx", "image": "nginx:1.27"}]}}}})),
        )
        .await?;
    let image = |w: &Value| text(w, "/spec/template/spec/containers/0/image") == Some("nginx:1.27");
    let updated = member_object(
        env,
        "member1",
        WORKLOAD,
        ns,
        "nginx",
        "with the new image",
        image,
    )
    .await?;
    anyhow::ensure!(
        updated.pointer("/spec/paused") == Some(&json!(true)),
        "member1's spec.paused was not retained: {}",
        brief(&updated)
    );
    member_object(
        env,
        "member2",
        WORKLOAD,
        ns,
        "nginx",
        "with the new image",
        image,
    )
    .await?;

    // InterpretStatus, InterpretHealth and AggregateStatus (webhook): member1 reports 1 ready replica.
    WORKLOAD
        .api(member1, Some(ns))
        .patch_status(
            "nginx",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"readyReplicas": 1}})),
        )
        .await?;
    control_object(
        env,
        RESOURCE_BINDING,
        ns,
        "nginx-workload",
        "with member1's readyReplicas and per-cluster health",
        |rb| {
            aggregated_item(rb, "member1").is_some_and(|i| {
                int(i, "/status/readyReplicas") == Some(1) && i["health"] == "Healthy"
            }) && aggregated_item(rb, "member2").is_some_and(|i| i["health"] == "Unhealthy")
        },
    )
    .await?;
    control_object(
        env,
        WORKLOAD,
        ns,
        "nginx",
        "with status.readyReplicas 1",
        |w| int(w, "/status/readyReplicas") == Some(1),
    )
    .await?;

    // Static weights 2:1 over member1 and member2.
    apply(
        env,
        &kubectl,
        Some(ns),
        &example("workload-weighted-2-1.yaml"),
    )
    .await?;
    for (member, replicas) in [("member1", 2), ("member2", 1)] {
        member_object(
            env,
            member,
            WORKLOAD,
            ns,
            "nginx-2-1",
            &format!("with {replicas} replicas"),
            |w| int(w, "/spec/replicas") == Some(replicas),
        )
        .await?;
    }
    let rb = RESOURCE_BINDING
        .get(&env.karmada, Some(ns), "nginx-2-1-workload")
        .await
        .map_err(anyhow::Error::msg)?
        .ok_or_else(|| anyhow::anyhow!("binding nginx-2-1-workload is missing"))?;
    anyhow::ensure!(
        target_clusters(&rb) == [("member1".to_string(), 2), ("member2".to_string(), 1)],
        "{}",
        brief(&rb["spec"])
    );
    Ok(())
}
