//! Scenario 3 of issue 11: a Pull member. member3 is registered with `syncMode: Pull` and served by its agent
//! (in-process in the embedded world, a `flotilla agent` process in the kube world). The nginx and Workload
//! walkthroughs reach it through the agent with status aggregated into the templates, and restarting the agent
//! converges, and so does restarting the control plane's controllers: the same member objects (not recreated), no
//! extra Works or copies, later changes still applied and their status aggregated.
#![allow(clippy::unwrap_used, clippy::panic)]

use kube::api::{Patch, PatchParams};
use serde_json::{Value, json};

use flotilla_e2e::processes::{PULL_MEMBER, Restartable};
use flotilla_e2e::resources::{
    CLUSTER, DEPLOYMENT, RESOURCE_BINDING, WORK, WORKLOAD, aggregated_item, brief, int, text,
};
use flotilla_e2e::steps::{apply, control_object, install_workload_crd, member_object};
use flotilla_e2e::{Env, Kubectl, Options, example, testdata, wait_for};

flotilla_e2e::scenario!(
    /// Scenario 3: nginx on member1 (Push) and member3 (Pull), the Workload divided over all three; both reach
    /// member3 through its agent with status aggregated; the agent and the controllers restart without
    /// duplicates.
    pull_member_serves_the_walkthroughs_and_survives_agent_and_control_plane_restarts,
    "pull",
    Options {
        webhook_example: true,
        ..Options::default()
    },
    pull_member
);

async fn pull_member(env: &Env, ns: &str) -> anyhow::Result<()> {
    let result = walkthroughs_and_restart(env, ns).await;
    // The kube world is shared: it must keep its controllers and member3 its agent, also when the scenario failed.
    let controllers = env.ensure_running(Restartable::Controllers).await;
    let agent = env.ensure_running(Restartable::Agent).await;
    result.and(controllers).and(agent)
}

fn uid(object: &Value) -> Option<&str> {
    text(object, "/metadata/uid")
}

/// The Works in member3's execution namespace that carry objects of `ns`.
async fn member3_works(env: &Env, ns: &str) -> anyhow::Result<Vec<String>> {
    let works = WORK
        .list(&env.karmada, Some(&format!("karmada-es-{PULL_MEMBER}")))
        .await
        .map_err(anyhow::Error::msg)?;
    let mut names: Vec<String> = works
        .iter()
        .filter(|w| w.to_string().contains(&format!("\"namespace\":\"{ns}\"")))
        .filter_map(|w| text(w, "/metadata/name").map(str::to_owned))
        .collect();
    names.sort();
    Ok(names)
}

/// The names of `res` objects in `ns` of member3.
async fn member3_names(
    env: &Env,
    res: flotilla_e2e::resources::Res,
    ns: &str,
) -> anyhow::Result<Vec<String>> {
    let items = res
        .list(env.member(PULL_MEMBER)?, Some(ns))
        .await
        .map_err(anyhow::Error::msg)?;
    Ok(items
        .iter()
        .filter_map(|o| text(o, "/metadata/name").map(str::to_owned))
        .collect())
}

async fn walkthroughs_and_restart(env: &Env, ns: &str) -> anyhow::Result<()> {
    let cluster = CLUSTER
        .get(&env.karmada, None, PULL_MEMBER)
        .await
        .map_err(anyhow::Error::msg)?
        .ok_or_else(|| anyhow::anyhow!("Cluster {PULL_MEMBER} is missing"))?;
    anyhow::ensure!(
        text(&cluster, "/spec/syncMode") == Some("Pull"),
        "{PULL_MEMBER} is not a Pull cluster: {}",
        brief(&cluster)
    );

    // nginx: a Push and the Pull member, status aggregated from both.
    let kubectl = Kubectl::newest();
    apply(
        env,
        &kubectl,
        Some(ns),
        &testdata("nginx-member1-member3.yaml"),
    )
    .await?;
    let nginx = member_object(
        env,
        PULL_MEMBER,
        DEPLOYMENT,
        ns,
        "nginx",
        "with 2 replicas",
        |d| int(d, "/spec/replicas") == Some(2),
    )
    .await?;
    control_object(
        env,
        DEPLOYMENT,
        ns,
        "nginx",
        "aggregating 2 + 2 ready replicas",
        |d| int(d, "/status/readyReplicas") == Some(4) && int(d, "/status/replicas") == Some(4),
    )
    .await?;
    control_object(
        env,
        RESOURCE_BINDING,
        ns,
        "nginx-deployment",
        "with member3 applied and healthy",
        |rb| {
            aggregated_item(rb, PULL_MEMBER).is_some_and(|i| {
                i["applied"] == true
                    && i["health"] == "Healthy"
                    && int(i, "/status/readyReplicas") == Some(2)
            })
        },
    )
    .await?;

    // The Workload walkthrough: the example webhook interprets it for the agent as for the control plane.
    install_workload_crd(env, &kubectl).await?;
    apply(env, &kubectl, Some(ns), &example("workload.yaml")).await?;
    let workload = member_object(
        env,
        PULL_MEMBER,
        WORKLOAD,
        ns,
        "nginx",
        "with 1 replica",
        |w| int(w, "/spec/replicas") == Some(1),
    )
    .await?;
    // InterpretStatus and InterpretHealth of the agent's status reflection, AggregateStatus of the control plane.
    WORKLOAD
        .api(env.member(PULL_MEMBER)?, Some(ns))
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
        "with member3's readyReplicas and health",
        |rb| {
            aggregated_item(rb, PULL_MEMBER).is_some_and(|i| {
                int(i, "/status/readyReplicas") == Some(1) && i["health"] == "Healthy"
            })
        },
    )
    .await?;
    control_object(
        env,
        WORKLOAD,
        ns,
        "nginx",
        "with member3's ready replica",
        |w| int(w, "/status/readyReplicas") == Some(1),
    )
    .await?;

    // Restarting the agent converges: nothing recreated or duplicated, and it keeps serving.
    let works = member3_works(env, ns).await?;
    anyhow::ensure!(works.len() == 2, "member3's Works of {ns}: {works:?}");
    env.restart(Restartable::Agent).await?;
    WORKLOAD
        .api(&env.karmada, Some(ns))
        .patch(
            "nginx",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"template": {"spec": {"containers": [{"name": "nginx", "image": "nginx:1.27"}]}}}})),
        )
        .await?;
    scale_converges(env, &kubectl, ns, 3, &nginx).await?;
    let updated = member_object(
        env,
        PULL_MEMBER,
        WORKLOAD,
        ns,
        "nginx",
        "with the new image",
        |w| text(w, "/spec/template/spec/containers/0/image") == Some("nginx:1.27"),
    )
    .await?;
    anyhow::ensure!(
        uid(&updated) == uid(&workload),
        "the Workload was recreated in member3: {}",
        brief(&updated)
    );
    works_stay(env, ns, &works, "the agent's restart").await?;
    only_the_originals(env, ns).await?;

    // Restarting the control plane's controllers converges the same way.
    env.restart(Restartable::Controllers).await?;
    scale_converges(env, &kubectl, ns, 1, &nginx).await?;
    works_stay(env, ns, &works, "the controllers' restart").await?;
    only_the_originals(env, ns).await
}

/// Scales the nginx template to `replicas` per member: member3's copy follows in place (the uid of `original`)
/// and both members' ready replicas are aggregated into the template.
async fn scale_converges(
    env: &Env,
    kubectl: &Kubectl,
    ns: &str,
    replicas: i64,
    original: &Value,
) -> anyhow::Result<()> {
    let count = replicas.to_string();
    env.kubectl_karmada(
        kubectl,
        &[
            "scale",
            "-n",
            ns,
            "deployment",
            "nginx",
            "--replicas",
            &count,
        ],
    )
    .await?;
    let scaled = member_object(
        env,
        PULL_MEMBER,
        DEPLOYMENT,
        ns,
        "nginx",
        &format!("with {replicas} replicas"),
        |d| int(d, "/spec/replicas") == Some(replicas),
    )
    .await?;
    anyhow::ensure!(
        uid(&scaled) == uid(original),
        "nginx was recreated in member3: {}",
        brief(&scaled)
    );
    control_object(
        env,
        DEPLOYMENT,
        ns,
        "nginx",
        &format!("aggregating {replicas} + {replicas} ready replicas"),
        |d| {
            int(d, "/status/readyReplicas") == Some(2 * replicas)
                && int(d, "/status/replicas") == Some(2 * replicas)
        },
    )
    .await?;
    Ok(())
}

/// Waits until member3's Works are `works` again after `what`: none made anew, none left behind.
async fn works_stay(env: &Env, ns: &str, works: &[String], what: &str) -> anyhow::Result<()> {
    wait_for(
        &format!("member3's Works to stay the same after {what}"),
        || async {
            let now = member3_works(env, ns).await.map_err(|e| e.to_string())?;
            if now == works {
                Ok(())
            } else {
                Err(format!("{now:?}"))
            }
        },
    )
    .await
}

/// member3 holds one nginx Deployment and one nginx Workload in `ns`, nothing else.
async fn only_the_originals(env: &Env, ns: &str) -> anyhow::Result<()> {
    let deployments = member3_names(env, DEPLOYMENT, ns).await?;
    anyhow::ensure!(
        deployments == ["nginx"],
        "member3's Deployments: {deployments:?}"
    );
    let workloads = member3_names(env, WORKLOAD, ns).await?;
    anyhow::ensure!(workloads == ["nginx"], "member3's Workloads: {workloads:?}");
    Ok(())
}
