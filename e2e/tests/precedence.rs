//! Scenario 3 of issue 5: interpreter precedence end to end. A ResourceInterpreterCustomization beats the
//! webhook while it exists; deleting it lets the webhook answer again; a customization's Retain for Deployment
//! replaces the native Retain. `flotilla interpret --explain --kubeconfig` names the answering layer each time.
#![allow(clippy::unwrap_used, clippy::panic)]

use std::path::Path;

use kube::api::{Patch, PatchParams};
use serde_json::{Value, json};

use flotilla_e2e::resources::{DEPLOYMENT, WORKLOAD, brief, int, text};
use flotilla_e2e::steps::{
    apply, explained_layer, install_workload_crd, member_object, touch, touched,
};
use flotilla_e2e::{Env, Kubectl, Options, example, testdata, wait_for};

const MEMBERS: [&str; 3] = ["member1", "member2", "member3"];
const REVISED_BY: &str = "/metadata/annotations/e2e.flotilla.io~1revised-by";

flotilla_e2e::scenario!(
    customization_beats_webhook_and_replaces_native_retain,
    "precedence",
    Options {
        webhook_example: true,
        ..Options::default()
    },
    precedence
);

/// Touches the template with increasing values until every member shows the latest touch and `check` holds
/// (the interpreter learns of a new or deleted customization asynchronously, so one touch may be too early).
async fn poke_until<F>(
    env: &Env,
    res: flotilla_e2e::resources::Res,
    ns: &str,
    name: &str,
    members: &[&str],
    what: &str,
    check: F,
) -> anyhow::Result<()>
where
    F: Fn(&Value) -> bool,
{
    let round = std::sync::atomic::AtomicU32::new(0);
    let (round, check) = (&round, &check);
    wait_for(what, || async move {
        let n = round.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        if n % 5 == 0 {
            touch(env, res, ns, name, &n.to_string())
                .await
                .map_err(|e| e.to_string())?;
        }
        let mut states = Vec::new();
        let mut all = true;
        for member in members {
            let client = env.member(member).map_err(|e| e.to_string())?;
            match res.get(client, Some(ns), name).await? {
                Some(object) => {
                    all &= check(&object) && touched(&object).is_some();
                    states.push(format!("{member}: {}", brief(&object["metadata"])));
                }
                None => {
                    all = false;
                    states.push(format!("{member}: absent"));
                }
            }
        }
        if all { Ok(()) } else { Err(states.join("; ")) }
    })
    .await
}

async fn precedence(env: &Env, ns: &str) -> anyhow::Result<()> {
    let kubectl = Kubectl::newest();
    install_workload_crd(env, &kubectl).await?;
    apply(env, &kubectl, Some(ns), &example("workload.yaml")).await?;
    for member in MEMBERS {
        member_object(
            env,
            member,
            WORKLOAD,
            ns,
            "nginx",
            "revised by the webhook",
            |w| int(w, "/spec/replicas") == Some(1) && w.pointer(REVISED_BY).is_none(),
        )
        .await?;
    }
    let dir = tempfile::tempdir()?;
    let desired = dir.path().join("workload.yaml");
    std::fs::write(&desired, serde_json::to_string(&workload_template(ns))?)?;
    expect_layer(env, "reviseReplica", &desired, "webhook").await?;

    // The customization's ReviseReplica takes over from the webhook.
    apply(
        env,
        &kubectl,
        None,
        &testdata("workload-revise-customization.yaml"),
    )
    .await?;
    poke_until(
        env,
        WORKLOAD,
        ns,
        "nginx",
        &MEMBERS,
        "members revised by the customization",
        |w| text(w, REVISED_BY) == Some("customization") && int(w, "/spec/replicas") == Some(1),
    )
    .await?;
    expect_layer(env, "reviseReplica", &desired, "customization").await?;

    // Without it the webhook answers again: the customization's mark goes away.
    env.kubectl_karmada(
        &kubectl,
        &[
            "delete",
            "resourceinterpretercustomization",
            "e2e-workload-revise",
        ],
    )
    .await?;
    poke_until(
        env,
        WORKLOAD,
        ns,
        "nginx",
        &MEMBERS,
        "members revised by the webhook again",
        |w| w.pointer(REVISED_BY).is_none() && int(w, "/spec/replicas") == Some(1),
    )
    .await?;
    expect_layer(env, "reviseReplica", &desired, "webhook").await?;

    deployment_retain(env, &kubectl, ns).await
}

/// Scales member1's copy to 5, changes the template, and returns member1's replicas once the change arrived.
async fn scale_then_change_template(env: &Env, ns: &str, round: &str) -> Result<i64, String> {
    let member1 = env.member("member1").map_err(|e| e.to_string())?;
    DEPLOYMENT
        .api(member1, Some(ns))
        .patch(
            "nginx",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"replicas": 5}})),
        )
        .await
        .map_err(|e| e.to_string())?;
    touch(env, DEPLOYMENT, ns, "nginx", round)
        .await
        .map_err(|e| e.to_string())?;
    let updated = member_object(
        env,
        "member1",
        DEPLOYMENT,
        ns,
        "nginx",
        "with the template change",
        |d| touched(d) == Some(round),
    )
    .await
    .map_err(|e| e.to_string())?;
    int(&updated, "/spec/replicas").ok_or_else(|| brief(&updated))
}

/// Repeats [`scale_then_change_template`] until member1 ends with `replicas` (a new customization reaches the
/// interpreter asynchronously, so early rounds may still see the previous rule).
async fn retained_replicas_become(
    env: &Env,
    ns: &str,
    replicas: i64,
    what: &str,
) -> anyhow::Result<()> {
    let round = std::sync::atomic::AtomicU32::new(0);
    let round = &round;
    wait_for(what, || async move {
        let n = round.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let name = format!("{replicas}-{n}");
        match scale_then_change_template(env, ns, &name).await? {
            found if found == replicas => Ok(()),
            found => Err(format!(
                "member1 has {found} replicas after template change {name}"
            )),
        }
    })
    .await
}

/// The native Retain of Deployment gives the template's replicas back after a member-side scale; a customization's
/// Retain that keeps the member's replicas replaces it.
async fn deployment_retain(env: &Env, kubectl: &Kubectl, ns: &str) -> anyhow::Result<()> {
    apply(env, kubectl, Some(ns), &example("nginx-deployment.yaml")).await?;
    let member_copy = member_object(
        env,
        "member1",
        DEPLOYMENT,
        ns,
        "nginx",
        "with 2 replicas",
        |d| int(d, "/spec/replicas") == Some(2),
    )
    .await?;
    retained_replicas_become(
        env,
        ns,
        2,
        "native Retain to restore the template's 2 replicas",
    )
    .await?;
    let dir = tempfile::tempdir()?;
    let desired = dir.path().join("desired.json");
    let observed = dir.path().join("observed.json");
    std::fs::write(&observed, member_copy.to_string())?;
    std::fs::write(&desired, member_copy.to_string())?;
    let retain_args = [
        "--desired-file",
        desired.to_str().unwrap_or_default(),
        "--observed-file",
        observed.to_str().unwrap_or_default(),
    ];
    if let Some(layer) = explained_layer(env, "retain", &retain_args).await? {
        anyhow::ensure!(
            layer == "native",
            "retain answered by {layer}, expected native"
        );
    }

    apply(
        env,
        kubectl,
        None,
        &testdata("deployment-retain-customization.yaml"),
    )
    .await?;
    retained_replicas_become(
        env,
        ns,
        5,
        "the customization's Retain to keep member1's 5 replicas",
    )
    .await?;
    if let Some(layer) = explained_layer(env, "retain", &retain_args).await? {
        anyhow::ensure!(
            layer == "customization",
            "retain answered by {layer}, expected customization"
        );
    }
    env.kubectl_karmada(
        kubectl,
        &[
            "delete",
            "resourceinterpretercustomization",
            "e2e-deployment-retain",
        ],
    )
    .await?;
    Ok(())
}

fn workload_template(ns: &str) -> Value {
    json!({
        "apiVersion": "workload.example.io/v1alpha1", "kind": "Workload",
        "metadata": {"name": "nginx", "namespace": ns},
        "spec": {"replicas": 3, "template": {"spec": {"containers": [{"name": "nginx", "image": "nginx"}]}}},
    })
}

async fn expect_layer(
    env: &Env,
    operation: &str,
    desired: &Path,
    layer: &str,
) -> anyhow::Result<()> {
    let path = desired.to_string_lossy();
    let args = ["--desired-file", path.as_ref(), "--desired-replica", "1"];
    let layer = layer.to_string();
    let expected = &layer;
    wait_for(
        &format!("--explain to name the {layer} layer for {operation}"),
        || async move {
            match explained_layer(env, operation, &args).await {
                Ok(None) => Ok(()),
                Ok(Some(found)) if &found == expected => Ok(()),
                Ok(Some(found)) => Err(format!("answered by {found}")),
                Err(e) => Err(e.to_string()),
            }
        },
    )
    .await
}
