//! Issue 18 item 5: a PropagationPolicy's `spec.suspension` stops dispatching. `dispatchingOnClusters` holds back
//! the named member only, `dispatching: true` holds back every member (a template change then reaches the Works
//! but no member), and removing the suspension resumes both. The suspended Works carry Karmada's `Dispatching`
//! condition and `WorkDispatching` Event.
#![allow(clippy::unwrap_used, clippy::panic)]

use flotilla_api::policy::v1alpha1::PropagationPolicy;
use k8s_openapi::api::apps::v1::Deployment;
use kube::api::{Api, Patch, PatchParams, PostParams};
use serde_json::{Value, json};

use flotilla_e2e::resources::{DEPLOYMENT, WORK, brief, text, web_deployment};
use flotilla_e2e::steps::{event_on, member_object};
use flotilla_e2e::{Env, Options, wait_for};

const SUSPENDED_REASON: &str = "SuspendDispatching";
const SUSPENDED_MESSAGE: &str = "Work dispatching is in a suspended state.";

flotilla_e2e::scenario!(
    suspended_dispatching_holds_back_members_until_resumed,
    "suspend",
    Options::default(),
    suspension
);

async fn suspension(env: &Env, ns: &str) -> anyhow::Result<()> {
    let policies: Api<PropagationPolicy> = Api::namespaced(env.karmada.clone(), ns);
    policies
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({
                "metadata": {"name": "web"},
                "spec": {
                    "resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}],
                    "placement": {
                        "clusterAffinity": {"clusterNames": ["member1", "member2"]},
                        "replicaScheduling": {"replicaSchedulingType": "Duplicated"}
                    },
                    "suspension": {"dispatchingOnClusters": {"clusterNames": ["member2"]}}
                }
            }))?,
        )
        .await?;
    let deployments: Api<Deployment> = Api::namespaced(env.karmada.clone(), ns);
    deployments
        .create(
            &PostParams::default(),
            &serde_json::from_value(web_deployment())?,
        )
        .await?;

    // member2 only is held back: its Work exists, says why it is not dispatched, and nothing reached member2.
    member_object(env, "member1", DEPLOYMENT, ns, "web", "dispatched", |_| {
        true
    })
    .await?;
    let held = suspended_work(env, ns, "member2", true).await?;
    event_on(
        env,
        text(&held, "/metadata/namespace").unwrap_or_default(),
        text(&held, "/metadata/name").unwrap_or_default(),
        "WorkDispatching",
        SUSPENDED_MESSAGE,
    )
    .await?;
    anyhow::ensure!(
        DEPLOYMENT
            .get(env.member("member2")?, Some(ns), "web")
            .await
            .map_err(anyhow::Error::msg)?
            .is_none(),
        "member2 received web while its dispatching was suspended"
    );

    // Every member held back: a template change reaches member1's Work, but not member1.
    let all = json!({"spec": {"suspension": {"dispatching": true, "dispatchingOnClusters": null}}});
    policies
        .patch("web", &PatchParams::default(), &Patch::Merge(&all))
        .await?;
    suspended_work(env, ns, "member1", true).await?;
    let image = json!({"spec": {"template": {"spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]}}}});
    deployments
        .patch("web", &PatchParams::default(), &Patch::Strategic(&image))
        .await?;
    work_until(
        env,
        ns,
        "member1",
        "carrying the new image, still suspended",
        |work| manifest_image(work) == Some("nginx:1.27") && dispatching(work, false),
    )
    .await?;
    let member1 = DEPLOYMENT
        .get(env.member("member1")?, Some(ns), "web")
        .await
        .map_err(anyhow::Error::msg)?
        .ok_or_else(|| anyhow::anyhow!("web vanished from member1 while suspended"))?;
    anyhow::ensure!(
        text(&member1, "/spec/template/spec/containers/0/image") == Some("nginx"),
        "member1 was updated while its dispatching was suspended: {}",
        brief(&member1)
    );

    // Resumed: both members get the current template, and the Works say they are dispatched.
    let resume = json!({"spec": {"suspension": null}});
    policies
        .patch("web", &PatchParams::default(), &Patch::Merge(&resume))
        .await?;
    for member in ["member1", "member2"] {
        member_object(
            env,
            member,
            DEPLOYMENT,
            ns,
            "web",
            "with image nginx:1.27",
            |d| text(d, "/spec/template/spec/containers/0/image") == Some("nginx:1.27"),
        )
        .await?;
        suspended_work(env, ns, member, false).await?;
    }
    Ok(())
}

/// Waits until the Work of `ns/web` for `cluster` is (or is no longer) suspended, in its spec and its
/// `Dispatching` condition; returns it.
async fn suspended_work(
    env: &Env,
    ns: &str,
    cluster: &str,
    suspended: bool,
) -> anyhow::Result<Value> {
    let what = if suspended {
        "suspended, with Dispatching False/SuspendDispatching"
    } else {
        "dispatched, with Dispatching True"
    };
    work_until(env, ns, cluster, what, |work| {
        work.pointer("/spec/suspendDispatching")
            .and_then(Value::as_bool)
            == Some(suspended)
            && dispatching(work, !suspended)
    })
    .await
}

/// Whether the Work's `Dispatching` condition has `status` (with Karmada's reason and message when False).
fn dispatching(work: &Value, status: bool) -> bool {
    let conditions = work
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    conditions.iter().any(|c| {
        c["type"] == "Dispatching"
            && if status {
                c["status"] == "True"
            } else {
                c["status"] == "False"
                    && c["reason"] == SUSPENDED_REASON
                    && c["message"] == SUSPENDED_MESSAGE
            }
    })
}

fn manifest_image(work: &Value) -> Option<&str> {
    text(
        work,
        "/spec/workload/manifests/0/spec/template/spec/containers/0/image",
    )
}

/// Waits until the Work that propagates `ns/web` to `cluster` passes `check`.
async fn work_until<F>(
    env: &Env,
    ns: &str,
    cluster: &str,
    what: &str,
    check: F,
) -> anyhow::Result<Value>
where
    F: Fn(&Value) -> bool,
{
    let check = &check;
    let execution_ns = format!("karmada-es-{cluster}");
    let execution_ns = execution_ns.as_str();
    wait_for(
        &format!("the Work of {ns}/web for {cluster} {what}"),
        || async move {
            let works = WORK.list(&env.karmada, Some(execution_ns)).await?;
            let work = works
                .into_iter()
                .find(|w| {
                    text(
                        w,
                        "/metadata/annotations/resourcebinding.karmada.io~1namespace",
                    ) == Some(ns)
                        && text(w, "/metadata/annotations/resourcebinding.karmada.io~1name")
                            == Some("web-deployment")
                })
                .ok_or_else(|| "absent".to_owned())?;
            if check(&work) {
                Ok(work)
            } else {
                Err(brief(&work))
            }
        },
    )
    .await
}
