//! The embedded members' simulator held to a real member: the same workloads applied to member1 of the embedded
//! world (simulated controllers) and member1 of the kube world (kube-controller-manager, kube-scheduler, KWOK
//! Nodes) settle to the same status, up to timestamps and revision hash values (the real controllers hash Go's
//! dump of the pod template, which the simulator cannot reproduce; it spells its hashes the same way).
//!
//! Pods are not compared: the simulator reports what a kubelet reports (`PodReadyToStartContainers`, container
//! ids, `started`), KWOK a reduced form, and the two schedulers spread pods over the Nodes by rules of their own
//! (docs/COMPATIBILITY.md).
#![allow(clippy::unwrap_used, clippy::panic)]

use kube::Client;
use kube::api::{Api, DynamicObject, PostParams};
use serde_json::{Value, json};

use flotilla_e2e::resources::Res;
use flotilla_e2e::{Env, Options, World, wait_for};

const STATEFUL_SET: Res = Res("apps", "v1", "StatefulSet", "statefulsets");
const DAEMON_SET: Res = Res("apps", "v1", "DaemonSet", "daemonsets");
const JOB: Res = Res("batch", "v1", "Job", "jobs");
const PDB: Res = Res(
    "policy",
    "v1",
    "PodDisruptionBudget",
    "poddisruptionbudgets",
);
const DEPLOYMENT: Res = flotilla_e2e::resources::DEPLOYMENT;

fn pod_template(app: &str) -> Value {
    json!({"metadata": {"labels": {"app": app}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}})
}

/// Whether a status has settled.
type Settled = fn(&Value) -> bool;

/// The workloads, and when each has settled.
fn workloads() -> Vec<(Res, Value, Settled)> {
    let selector = |app: &str| json!({"matchLabels": {"app": app}});
    vec![
        (
            DEPLOYMENT,
            json!({"metadata": {"name": "d"}, "spec": {"replicas": 2, "selector": selector("d"), "template": pod_template("d")}}),
            |s| s["availableReplicas"] == 2 && s["updatedReplicas"] == 2,
        ),
        (
            STATEFUL_SET,
            json!({"metadata": {"name": "s"}, "spec": {"replicas": 2, "serviceName": "s", "selector": selector("s"), "template": pod_template("s")}}),
            |s| s["availableReplicas"] == 2 && s["currentReplicas"] == 2,
        ),
        (
            DAEMON_SET,
            json!({"metadata": {"name": "ds"}, "spec": {"selector": selector("ds"), "template": pod_template("ds")}}),
            |s| {
                s["numberAvailable"].as_i64().is_some_and(|n| n > 0)
                    && s["numberAvailable"] == s["desiredNumberScheduled"]
            },
        ),
        (
            PDB,
            json!({"metadata": {"name": "pdb"}, "spec": {"minAvailable": 1, "selector": selector("d")}}),
            |s| s["currentHealthy"] == 2,
        ),
        (
            JOB,
            json!({"metadata": {"name": "j"}, "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}}}}),
            |s| s["succeeded"] == 1,
        ),
    ]
}

/// Status without what differs by nature: timestamps, and the values (not the shape) of revision hashes.
fn normalised(status: &Value, name: &str) -> Value {
    match status {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, _)| {
                    !k.ends_with("Time") && *k != "startTime" && *k != "completionTime"
                })
                .map(|(k, v)| (k.clone(), normalised(v, name)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(|v| normalised(v, name)).collect()),
        Value::String(s) => {
            let prefix = format!("{name}-");
            let hashed = |word: &str| {
                word.strip_prefix(&prefix)
                    .is_some_and(|h| !h.is_empty() && h.chars().all(|c| "456789bcdf".contains(c)))
            };
            Value::String(
                s.split(' ')
                    .map(|w| {
                        let bare = w.trim_matches('"');
                        if hashed(bare) {
                            w.replace(bare, &format!("{name}-<hash>"))
                        } else {
                            w.to_owned()
                        }
                    })
                    .collect::<Vec<_>>()
                    .join(" "),
            )
        }
        other => other.clone(),
    }
}

async fn settled(
    client: &Client,
    ns: &str,
    res: Res,
    name: &str,
    done: fn(&Value) -> bool,
) -> anyhow::Result<Value> {
    wait_for(&format!("{} {ns}/{name} to settle", res.2), || async move {
        let object = res.get(client, Some(ns), name).await?.ok_or("absent")?;
        let status = object.get("status").cloned().unwrap_or(Value::Null);
        if done(&status) {
            Ok(status)
        } else {
            Err(status.to_string())
        }
    })
    .await
}

async fn create_all(client: &Client, ns: &str) -> anyhow::Result<()> {
    let namespaces: Api<k8s_openapi::api::core::v1::Namespace> = Api::all(client.clone());
    // The control plane's namespace may already be on the member: Karmada's namespace sync propagates it.
    match namespaces
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({"metadata": {"name": ns}}))?,
        )
        .await
    {
        Ok(_) => {}
        Err(kube::Error::Api(status)) if status.code == 409 => {}
        Err(e) => return Err(e.into()),
    }
    for (res, object, _) in workloads() {
        let mut object: DynamicObject = serde_json::from_value(object)?;
        object.types = Some(kube::api::TypeMeta {
            api_version: format!("{}/{}", res.0, res.1),
            kind: res.2.to_owned(),
        });
        res.api(client, Some(ns))
            .create(&PostParams::default(), &object)
            .await?;
    }
    Ok(())
}

mod simulator_reports_what_a_real_member_reports {
    use super::*;

    #[tokio::test]
    async fn kube() -> anyhow::Result<()> {
        let real = Env::start_in(World::Kube, Options::default()).await?;
        let simulated = Env::start_in(World::Embedded, Options::default()).await?;
        let ns = real.namespace("simulator").await?;
        let result = async {
            let (real_member, simulated_member) =
                (real.member("member1")?, simulated.member("member1")?);
            create_all(real_member, &ns.name).await?;
            create_all(simulated_member, &ns.name).await?;
            let mut differences = Vec::new();
            for (res, object, done) in workloads() {
                let name = object["metadata"]["name"].as_str().unwrap_or_default();
                let want = settled(real_member, &ns.name, res, name, done).await?;
                let got = settled(simulated_member, &ns.name, res, name, done).await?;
                let (want, got) = (normalised(&want, name), normalised(&got, name));
                if want != got {
                    differences.push(format!(
                        "{} {name}:\n  real:      {want}\n  simulated: {got}",
                        res.2
                    ));
                }
            }
            anyhow::ensure!(
                differences.is_empty(),
                "the simulator differs from a real member:\n{}",
                differences.join("\n")
            );
            Ok(())
        }
        .await;
        let _ = Api::<k8s_openapi::api::core::v1::Namespace>::all(real.member("member1")?.clone())
            .delete(&ns.name, &Default::default())
            .await;
        simulated.stop().await;
        real.finish(&ns, result).await
    }
}
