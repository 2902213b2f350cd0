//! Issue 12 item 1: Karmada's Events. A propagated Deployment, Service, DaemonSet, PodDisruptionBudget, ConfigMap
//! and Workload each leave Karmada's full set of Events on the template, the binding and the Works, with
//! Karmada's messages first and, beyond Karmada, the interpreter layer that answered; a Warning follows its
//! current cause; no Event message is a debug dump.
#![allow(clippy::unwrap_used, clippy::panic)]

use serde_json::Value;

use flotilla_e2e::resources::{EVENT, WORK, text};
use flotilla_e2e::steps::{apply, install_workload_crd, touch};
use flotilla_e2e::{Env, Kubectl, Options, example, testdata, wait_for};

use flotilla_e2e::resources::Res;

const STATEFUL_SET: Res = Res("apps", "v1", "StatefulSet", "statefulsets");
const CUSTOMIZATION: &str = "e2e-events-statefulset-replicas";
const WEBHOOK: &str = "e2e-events-refused";

/// One propagated template and what Karmada records about it.
struct Followed {
    kind: &'static str,
    name: &'static str,
    policy: &'static str,
    members: &'static [&'static str],
    /// InterpretReplica runs (GetReplicasSucceed).
    replicas: bool,
    /// AggregateStatus changes the template's status (AggregateStatusSucceed on the template).
    aggregates_template: bool,
    /// InterpretHealth runs on the member object (InterpretHealthSucceed on the Work).
    health: bool,
    /// How the interpreter Events name the answering layer.
    layer: &'static str,
}

const TWO: &[&str] = &["member1", "member2"];
const NATIVE: &str = "answered by the native";

const FOLLOWED: [Followed; 6] = [
    Followed {
        kind: "Deployment",
        name: "web",
        policy: "events",
        members: TWO,
        replicas: true,
        aggregates_template: true,
        health: true,
        layer: NATIVE,
    },
    Followed {
        kind: "Service",
        name: "web",
        policy: "events",
        members: TWO,
        replicas: false,
        // A ClusterIP Service's aggregated status is the template's own: nothing to write, no Event.
        aggregates_template: false,
        health: true,
        layer: NATIVE,
    },
    Followed {
        kind: "DaemonSet",
        name: "agent",
        policy: "events",
        members: TWO,
        replicas: false,
        aggregates_template: true,
        health: true,
        layer: NATIVE,
    },
    Followed {
        kind: "PodDisruptionBudget",
        name: "web",
        policy: "events",
        members: TWO,
        replicas: false,
        aggregates_template: true,
        health: true,
        layer: NATIVE,
    },
    Followed {
        kind: "ConfigMap",
        name: "settings",
        policy: "events",
        members: TWO,
        replicas: false,
        // No layer aggregates nor assesses a ConfigMap: Karmada records neither.
        aggregates_template: false,
        health: false,
        layer: NATIVE,
    },
    Followed {
        kind: "Workload",
        name: "nginx",
        policy: "nginx-workload-propagation",
        members: &["member1", "member2", "member3"],
        replicas: true,
        aggregates_template: true,
        health: true,
        layer: "answered by webhook",
    },
];

flotilla_e2e::scenario!(
    /// Every followed template, its binding and its Works show Karmada's Events.
    propagated_objects_leave_karmadas_events,
    "events",
    Options {
        webhook_example: true,
        ..Options::default()
    },
    full_set
);

async fn full_set(env: &Env, ns: &str) -> anyhow::Result<()> {
    let kubectl = Kubectl::machine();
    install_workload_crd(env, &kubectl).await?;
    apply(env, &kubectl, Some(ns), &example("workload.yaml")).await?;
    apply(env, &kubectl, Some(ns), &testdata("events.yaml")).await?;
    let mut seen = Vec::new();
    for object in &FOLLOWED {
        seen.extend(template_and_binding(env, ns, object).await?);
        for member in object.members {
            seen.extend(work_events(env, ns, object, member).await?);
        }
    }
    no_debug_dump(&seen)
}

/// `(reason, message)` of the Events about object `kind` `namespace/name`.
async fn events_about(
    env: &Env,
    namespace: &str,
    kind: &str,
    name: &str,
) -> Result<Vec<(String, String)>, String> {
    let events = EVENT.list(&env.karmada, Some(namespace)).await?;
    Ok(events
        .iter()
        .filter(|e| {
            text(e, "/involvedObject/kind") == Some(kind)
                && text(e, "/involvedObject/name") == Some(name)
        })
        .map(|e| {
            (
                text(e, "/reason").unwrap_or_default().to_owned(),
                text(e, "/message").unwrap_or_default().to_owned(),
            )
        })
        .collect())
}

/// Waits until object `kind` `namespace/name` has an Event of each `(reason, message prefix)`; returns every
/// Event about it.
async fn wait_for_events(
    env: &Env,
    namespace: &str,
    kind: &str,
    name: &str,
    expected: &[(&str, String)],
) -> anyhow::Result<Vec<(String, String)>> {
    wait_for(
        &format!("Karmada's Events on {kind} {namespace}/{name}"),
        || async move {
            let events = events_about(env, namespace, kind, name).await?;
            let missing: Vec<String> = expected
                .iter()
                .filter(|(reason, prefix)| {
                    !events
                        .iter()
                        .any(|(r, m)| r == reason && m.starts_with(prefix.as_str()))
                })
                .map(|(reason, prefix)| format!("{reason}: {prefix}"))
                .collect();
            if missing.is_empty() {
                Ok(events)
            } else {
                Err(format!("missing {missing:?}; Events on it: {events:?}"))
            }
        },
    )
    .await
}

async fn template_and_binding(
    env: &Env,
    ns: &str,
    object: &Followed,
) -> anyhow::Result<Vec<(String, String)>> {
    let binding = format!("{}-{}", object.name, object.kind.to_lowercase());
    let scheduled = "Binding has been scheduled successfully. Result: {".to_owned();
    let synced = format!("Sync work of ResourceBinding({ns}/{binding}) successful.");
    let mut on_template = vec![
        (
            "ApplyPolicySucceed",
            format!("Apply policy({ns}/{}) succeed", object.policy),
        ),
        ("ScheduleBindingSucceed", scheduled.clone()),
        ("SyncWorkSucceed", synced.clone()),
    ];
    for member in object.members {
        on_template.push((
            "SyncSucceed",
            format!(
                "Successfully applied resource({ns}/{}) to cluster {member}",
                object.name
            ),
        ));
    }
    if object.replicas {
        on_template.push((
            "GetReplicasSucceed",
            format!(
                "Get replicas of resource template successfully. ({}",
                object.layer
            ),
        ));
    }
    if object.aggregates_template {
        on_template.push((
            "AggregateStatusSucceed",
            format!(
                "Update Resource with AggregatedStatus successfully. ({}",
                object.layer
            ),
        ));
    }
    let mut seen = wait_for_events(env, ns, object.kind, object.name, &on_template).await?;
    let on_binding = [
        ("ScheduleBindingSucceed", scheduled),
        ("SyncWorkSucceed", synced),
        (
            "AggregateStatusSucceed",
            format!("Update ResourceBinding({ns}/{binding}) with AggregatedStatus successfully."),
        ),
    ];
    seen.extend(wait_for_events(env, ns, "ResourceBinding", &binding, &on_binding).await?);
    Ok(seen)
}

/// The name of the Work in `member`'s execution namespace that carries binding `ns/binding`.
async fn work_of(env: &Env, ns: &str, binding: &str, member: &str) -> anyhow::Result<String> {
    let space = format!("karmada-es-{member}");
    let space = &space;
    wait_for(
        &format!("the Work of ResourceBinding {ns}/{binding} in {space}"),
        || async move {
            let works = WORK.list(&env.karmada, Some(space)).await?;
            works
                .iter()
                .find(|w| {
                    text(w, "/metadata/annotations/resourcebinding.karmada.io~1name")
                        == Some(binding)
                        && text(
                            w,
                            "/metadata/annotations/resourcebinding.karmada.io~1namespace",
                        ) == Some(ns)
                })
                .and_then(|w| text(w, "/metadata/name").map(str::to_owned))
                .ok_or_else(|| format!("{} Works, none of it", works.len()))
        },
    )
    .await
}

async fn work_events(
    env: &Env,
    ns: &str,
    object: &Followed,
    member: &str,
) -> anyhow::Result<Vec<(String, String)>> {
    let binding = format!("{}-{}", object.name, object.kind.to_lowercase());
    let work = work_of(env, ns, &binding, member).await?;
    let space = format!("karmada-es-{member}");
    let target = format!("{}/{ns}/{}", object.kind, object.name);
    let mut expected = vec![
        (
            "WorkDispatching",
            "Work is being dispatched to member clusters.".to_owned(),
        ),
        (
            "SyncSucceed",
            format!("Sync work({space}/{work}) to cluster({member}) successful."),
        ),
        (
            "ReflectStatusSucceed",
            format!(
                "Reflect status for object({target}) succeed. ({}",
                object.layer
            ),
        ),
    ];
    if object.health {
        expected.push((
            "InterpretHealthSucceed",
            format!("Interpret health of object({target}) as "),
        ));
    }
    let seen = wait_for_events(env, &space, "Work", &work, &expected).await?;
    if object.health {
        let layered = seen.iter().any(|(reason, message)| {
            reason == "InterpretHealthSucceed" && message.contains(object.layer)
        });
        anyhow::ensure!(
            layered,
            "no InterpretHealthSucceed on Work {space}/{work} names the layer ({}): {seen:?}",
            object.layer
        );
    }
    Ok(seen)
}

/// Event messages are sentences: no Rust debug rendering of a value.
fn no_debug_dump(events: &[(String, String)]) -> anyhow::Result<()> {
    let dumps: Vec<&(String, String)> = events
        .iter()
        .filter(|(_, m)| {
            ["Some(", "{ status:", "Status {", "None,"]
                .iter()
                .any(|d| m.contains(d))
        })
        .collect();
    anyhow::ensure!(
        dumps.is_empty(),
        "Event messages with a debug dump: {dumps:?}"
    );
    Ok(())
}

flotilla_e2e::scenario!(
    /// A customization's InterpretReplica fails with one cause, then with another, then the customization is
    /// replaced by a webhook that refuses connections: each time the Warning `GetReplicasFailed` says the
    /// current cause (a new Event, not a count on the old message) and names the layer that failed.
    a_warning_follows_its_current_cause,
    "events-cause",
    Options::default(),
    current_cause
);

async fn current_cause(env: &Env, ns: &str) -> anyhow::Result<()> {
    let kubectl = Kubectl::machine();
    apply(
        env,
        &kubectl,
        None,
        &testdata("statefulset-failing-replicas-customization.yaml"),
    )
    .await?;
    let result = causes(env, &kubectl, ns).await;
    // The customization and the webhook are cluster-wide: remove them whatever happened.
    let mut cleaned = Ok(());
    for (kind, name) in [
        ("resourceinterpretercustomization", CUSTOMIZATION),
        ("resourceinterpreterwebhookconfiguration", WEBHOOK),
    ] {
        let deleted = env
            .kubectl_karmada(&kubectl, &["delete", kind, name, "--ignore-not-found"])
            .await;
        cleaned = cleaned.and(deleted.map(|_| ()));
    }
    result.and(cleaned)
}

async fn causes(env: &Env, kubectl: &Kubectl, ns: &str) -> anyhow::Result<()> {
    let template = serde_json::json!({
        "apiVersion": "apps/v1", "kind": "StatefulSet",
        "metadata": {"name": "failing", "namespace": ns},
        "spec": {
            "replicas": 1, "serviceName": "failing",
            "selector": {"matchLabels": {"app": "failing"}},
            "template": {"metadata": {"labels": {"app": "failing"}},
                         "spec": {"containers": [{"name": "c", "image": "nginx"}]}}
        }
    });
    let policy = serde_json::json!({
        "apiVersion": "policy.karmada.io/v1alpha1", "kind": "PropagationPolicy",
        "metadata": {"name": "failing", "namespace": ns},
        "spec": {
            "resourceSelectors": [{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "failing"}],
            "placement": {"clusterAffinity": {"clusterNames": ["member1"]}}
        }
    });
    let dir = tempfile::tempdir()?;
    let file = dir.path().join("failing.json");
    std::fs::write(
        &file,
        serde_json::to_vec(
            &serde_json::json!({"apiVersion": "v1", "kind": "List", "items": [template, policy]}),
        )?,
    )?;
    apply(env, kubectl, Some(ns), &file).await?;

    let first = "first cause: the replica count is unreadable";
    let second = "second cause: the replica count is negative";
    let by_customization = format!("answered by customization \"{CUSTOMIZATION}\"");
    warned(env, ns, first, 0, |m| {
        m.contains(first) && m.contains(&by_customization)
    })
    .await?;

    let script =
        std::fs::read_to_string(testdata("statefulset-failing-replicas-customization.yaml"))?
            .replace(first, second);
    let replaced = dir.path().join("second.yaml");
    std::fs::write(&replaced, script)?;
    apply(env, kubectl, None, &replaced).await?;
    // The interpreter learns of the new script asynchronously; touching the template reconciles it again.
    warned(env, ns, second, 1, |m| {
        m.contains(second) && m.contains(&by_customization)
    })
    .await?;

    // Replaced by a webhook that refuses connections: the webhook's failure, named, is the current cause.
    env.kubectl_karmada(
        kubectl,
        &["delete", "resourceinterpretercustomization", CUSTOMIZATION],
    )
    .await?;
    apply(
        env,
        kubectl,
        None,
        &testdata("statefulset-refused-webhook.yaml"),
    )
    .await?;
    let by_webhook = format!("answered by webhook \"{WEBHOOK}/");
    warned(env, ns, "the refusing webhook", 1, |m| {
        m.contains(&by_webhook) && !m.contains("cause:")
    })
    .await?;
    let all = events_about(env, ns, "StatefulSet", "failing")
        .await
        .map_err(anyhow::Error::msg)?;
    no_debug_dump(&all)
}

/// Waits until StatefulSet `ns/failing` has a Warning `GetReplicasFailed` whose message `current` accepts
/// (`cause` names it in messages), touching the template now and then (from `round` on) so it is interpreted
/// again.
async fn warned<F>(env: &Env, ns: &str, cause: &str, round: u32, current: F) -> anyhow::Result<()>
where
    F: Fn(&str) -> bool,
{
    let rounds = std::sync::atomic::AtomicU32::new(round);
    let (rounds, current) = (&rounds, &current);
    wait_for(
        &format!("a Warning GetReplicasFailed on StatefulSet {ns}/failing saying {cause:?}"),
        || async move {
            let n = rounds.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            if n % 10 == 1 {
                touch(env, STATEFUL_SET, ns, "failing", &n.to_string())
                    .await
                    .map_err(|e| e.to_string())?;
            }
            let events = EVENT.list(&env.karmada, Some(ns)).await?;
            let failed: Vec<&Value> = events
                .iter()
                .filter(|e| {
                    text(e, "/involvedObject/name") == Some("failing")
                        && text(e, "/reason") == Some("GetReplicasFailed")
                })
                .collect();
            let found = failed.iter().any(|e| {
                text(e, "/type") == Some("Warning")
                    && current(text(e, "/message").unwrap_or_default())
            });
            if found {
                Ok(())
            } else {
                let messages: Vec<&str> = failed
                    .iter()
                    .map(|e| text(e, "/message").unwrap_or_default())
                    .collect();
                Err(format!("GetReplicasFailed Events: {messages:?}"))
            }
        },
    )
    .await
}
