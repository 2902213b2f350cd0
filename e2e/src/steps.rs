//! Steps several scenarios share: applying manifests, installing the walkthrough's Workload CRD, waiting for member
//! objects, poking a template so its binding is reconciled again, and asking `flotilla interpret --explain`
//! which layer answers.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context;
use kube::Client;
use kube::api::{Patch, PatchParams};
use serde_json::{Value, json};

use crate::resources::{CLUSTER, CRD, EVENT, RESOURCE_BINDING, Res, brief, int, text};
use crate::wait::{patience, wait_within};
use crate::{Env, Kubectl, example, manifest, wait_for};

/// `kubectl apply -f FILE` (in `namespace` when given) against the control plane with `kubectl`.
///
/// # Errors
/// When kubectl fails.
pub async fn apply(
    env: &Env,
    kubectl: &Kubectl,
    namespace: Option<&str>,
    file: &Path,
) -> anyhow::Result<()> {
    let file = file.to_string_lossy();
    let mut args = vec!["apply", "-f", file.as_ref()];
    if let Some(ns) = namespace {
        args.extend(["-n", ns]);
    }
    env.kubectl_karmada(kubectl, &args).await.map(|_| ())
}

/// Installs the Workload CRD in the control plane and the walkthrough's ClusterPropagationPolicy, and waits until
/// every member serves Workloads.
///
/// # Errors
/// When applying fails or a member never establishes the CRD.
pub async fn install_workload_crd(env: &Env, kubectl: &Kubectl) -> anyhow::Result<()> {
    apply(env, kubectl, None, &manifest("examples/workload-crd.yaml")).await?;
    apply(env, kubectl, None, &example("workload-crd-cpp.yaml")).await?;
    for (name, client) in &env.members {
        wait_for(
            &format!("{name} to establish the Workload CRD propagated by workload-crd-cpp"),
            || async move {
                let crd = CRD
                    .get(client, None, "workloads.workload.example.io")
                    .await?
                    .ok_or("absent")?;
                let established = crd
                    .pointer("/status/conditions")
                    .and_then(Value::as_array)
                    .is_some_and(|cs| {
                        cs.iter()
                            .any(|c| c["type"] == "Established" && c["status"] == "True")
                    });
                if established {
                    Ok(())
                } else {
                    Err(brief(&crd))
                }
            },
        )
        .await?;
        // The scheduler filters clusters by the API enablements in their status, collected periodically: a
        // template applied before every Cluster lists Workload would be divided over fewer clusters.
        control_cluster_serves(env, name, "workload.example.io/v1alpha1", "Workload").await?;
    }
    Ok(())
}

/// Waits until Cluster `cluster`'s `status.apiEnablements` lists `kind` in `group_version`.
///
/// # Errors
/// When the deadline passes.
pub async fn control_cluster_serves(
    env: &Env,
    cluster: &str,
    group_version: &str,
    kind: &str,
) -> anyhow::Result<()> {
    let karmada = &env.karmada;
    wait_for(
        &format!("Cluster {cluster} to list {group_version} {kind} in its API enablements"),
        || async move {
            let c = CLUSTER.get(karmada, None, cluster).await?.ok_or("absent")?;
            let served = c
                .pointer("/status/apiEnablements")
                .and_then(Value::as_array)
                .is_some_and(|gvs| {
                    gvs.iter().any(|gv| {
                        gv["groupVersion"] == group_version
                            && gv["resources"]
                                .as_array()
                                .is_some_and(|rs| rs.iter().any(|r| r["kind"] == kind))
                    })
                });
            if served {
                Ok(())
            } else {
                Err("not listed yet".into())
            }
        },
    )
    .await
}

/// Waits until `check` accepts object `res` `namespace/name` that `client` reaches (`place` names it in
/// messages); returns it.
///
/// # Errors
/// When the deadline passes (with the last state seen).
pub async fn object_until<F>(
    client: &Client,
    place: &str,
    res: Res,
    namespace: &str,
    name: &str,
    what: &str,
    check: F,
) -> anyhow::Result<Value>
where
    F: Fn(&Value) -> bool,
{
    object_within(
        client,
        place,
        res,
        Some(namespace),
        name,
        what,
        patience(),
        check,
    )
    .await
}

/// [`object_until`] with an explicit deadline, for namespaced (`Some`) and cluster-scoped (`None`) objects.
///
/// # Errors
/// When the deadline passes (with the last state seen).
#[allow(clippy::too_many_arguments)]
pub async fn object_within<F>(
    client: &Client,
    place: &str,
    res: Res,
    namespace: Option<&str>,
    name: &str,
    what: &str,
    within: Duration,
    check: F,
) -> anyhow::Result<Value>
where
    F: Fn(&Value) -> bool,
{
    let check = &check;
    let key = namespace.map_or_else(|| name.to_owned(), |ns| format!("{ns}/{name}"));
    wait_within(
        &format!("{} {key} in {place} {what}", res.2),
        within,
        || async move {
            match res.get(client, namespace, name).await? {
                Some(object) if check(&object) => Ok(object),
                Some(object) => Err(brief(&object)),
                None => Err("absent".into()),
            }
        },
    )
    .await
}

/// [`object_until`] for an object in member `cluster`.
///
/// # Errors
/// When there is no such member or the deadline passes.
pub async fn member_object<F>(
    env: &Env,
    cluster: &str,
    res: Res,
    namespace: &str,
    name: &str,
    what: &str,
    check: F,
) -> anyhow::Result<Value>
where
    F: Fn(&Value) -> bool,
{
    object_until(
        env.member(cluster)?,
        cluster,
        res,
        namespace,
        name,
        what,
        check,
    )
    .await
}

/// [`object_until`] for an object in the control plane (a template or a binding).
///
/// # Errors
/// When the deadline passes.
pub async fn control_object<F>(
    env: &Env,
    res: Res,
    namespace: &str,
    name: &str,
    what: &str,
    check: F,
) -> anyhow::Result<Value>
where
    F: Fn(&Value) -> bool,
{
    object_until(
        &env.karmada,
        "the control plane",
        res,
        namespace,
        name,
        what,
        check,
    )
    .await
}

/// Waits until ResourceBinding `namespace/name` is scheduled for its generation (`status.schedulerObservedGeneration`)
/// with `check` holding; returns it.
///
/// # Errors
/// When the deadline passes.
pub async fn scheduled_binding(
    env: &Env,
    namespace: &str,
    name: &str,
    what: &str,
    check: impl Fn(&Value) -> bool,
) -> anyhow::Result<Value> {
    control_object(env, RESOURCE_BINDING, namespace, name, what, |b| {
        int(b, "/metadata/generation") == int(b, "/status/schedulerObservedGeneration") && check(b)
    })
    .await
}

/// Sets (`Some`) or removes (`None`) label `key` on Cluster `cluster`. Clusters are shared by every scenario of
/// the kube world: a scenario labels them with a key of its own and removes it on its way out ([`crate::Undo`]).
///
/// # Errors
/// When the patch fails.
pub async fn label_cluster(
    env: &Env,
    cluster: &str,
    key: &str,
    value: Option<&str>,
) -> anyhow::Result<()> {
    CLUSTER
        .api(&env.karmada, None)
        .patch(
            cluster,
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": {key: value}}})),
        )
        .await
        .with_context(|| format!("failed to label Cluster {cluster} with {key}={value:?}"))?;
    Ok(())
}

/// Waits until member object `res` `namespace/name` is gone from `cluster`.
///
/// # Errors
/// When the deadline passes.
pub async fn member_object_gone(
    env: &Env,
    cluster: &str,
    res: Res,
    namespace: &str,
    name: &str,
) -> anyhow::Result<()> {
    let client = env.member(cluster)?;
    wait_for(
        &format!("{} {namespace}/{name} to be deleted from {cluster}", res.2),
        || async move {
            match res.get(client, Some(namespace), name).await? {
                Some(object) => Err(brief(&object)),
                None => Ok(()),
            }
        },
    )
    .await
}

/// Waits until the control plane holds an Event with `reason` and `message` about object `namespace/name`.
///
/// # Errors
/// When the deadline passes (with the Events seen on the object).
pub async fn event_on(
    env: &Env,
    namespace: &str,
    name: &str,
    reason: &str,
    message: &str,
) -> anyhow::Result<()> {
    wait_for(
        &format!("a {reason} Event on {namespace}/{name} saying {message:?}"),
        || async move {
            let events = EVENT.list(&env.karmada, Some(namespace)).await?;
            let seen: Vec<String> = events
                .iter()
                .filter(|e| text(e, "/involvedObject/name") == Some(name))
                .map(|e| {
                    format!(
                        "{}: {}",
                        text(e, "/reason").unwrap_or_default(),
                        text(e, "/message").unwrap_or_default()
                    )
                })
                .collect();
            if seen.iter().any(|e| *e == format!("{reason}: {message}")) {
                Ok(())
            } else {
                Err(format!("Events on it: {seen:?}"))
            }
        },
    )
    .await
}

/// Sets label `e2e.flotilla.io/touch` on a template to `value`: a spec-neutral change that makes the detector
/// and binding controller build its Works again.
///
/// # Errors
/// When the patch fails.
pub async fn touch(
    env: &Env,
    res: Res,
    namespace: &str,
    name: &str,
    value: &str,
) -> anyhow::Result<()> {
    res.api(&env.karmada, Some(namespace))
        .patch(
            name,
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": {"e2e.flotilla.io/touch": value}}})),
        )
        .await
        .with_context(|| format!("failed to touch {} {namespace}/{name}", res.2))?;
    Ok(())
}

/// The label `e2e.flotilla.io/touch` of an object.
pub fn touched(object: &Value) -> Option<&str> {
    text(object, "/metadata/labels/e2e.flotilla.io~1touch")
}

/// The `flotilla` binary next to this test's executable (`target/<profile>/flotilla`), or `FLOTILLA_BIN`.
pub fn flotilla_binary() -> Option<PathBuf> {
    if let Some(bin) = std::env::var_os("FLOTILLA_BIN") {
        return Some(bin.into());
    }
    let exe = std::env::current_exe().ok()?;
    // target/<profile>/deps/<test> -> target/<profile>/flotilla
    let candidate = exe.parent()?.parent()?.join("flotilla");
    candidate.is_file().then_some(candidate)
}

/// Which layer `flotilla interpret --explain --kubeconfig` says answers `operation` for the objects in the given
/// files, resolved through every layer registered in the control plane; `None` without a flotilla binary.
///
/// # Errors
/// When the command fails.
pub async fn explained_layer(
    env: &Env,
    operation: &str,
    args: &[&str],
) -> anyhow::Result<Option<String>> {
    let Some(bin) = flotilla_binary() else {
        eprintln!(
            "no flotilla binary next to the test (set FLOTILLA_BIN): skipping the --explain check"
        );
        return Ok(None);
    };
    let output = tokio::process::Command::new(&bin)
        .arg("interpret")
        .arg("--kubeconfig")
        .arg(&env.karmada_config)
        .args(["--operation", operation, "--explain"])
        .args(args)
        .output()
        .await
        .with_context(|| format!("failed to run {}", bin.display()))?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    if !output.status.success() {
        anyhow::bail!(
            "flotilla interpret failed: {}{}",
            String::from_utf8_lossy(&output.stderr),
            stdout
        );
    }
    let layer = stdout
        .lines()
        .find_map(|l| {
            let l = l.trim_start_matches('#').trim();
            l.split_once(": answered")
                .map(|(layer, _)| layer.trim().to_string())
        })
        .with_context(|| format!("no answering layer in the explanation:\n{stdout}"))?;
    Ok(Some(layer))
}
