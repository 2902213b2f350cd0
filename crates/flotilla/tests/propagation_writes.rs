//! The writes a template costs on the control plane, counted by the API server's own
//! `apiserver_request_total`: the writes Karmada's semantics need (docs/BENCHMARKS.md, "Writes per
//! template") and no more. A controller that writes a status that changes nothing, reschedules its own
//! result or rewrites a binding for a status-only template change fails this test.
#![allow(clippy::unwrap_used, clippy::panic)]

use std::time::Duration;

use flotilla::cmd::bench::writes::Writes;
use flotilla::cmd::up::{Environment, UpConfig};
use k8s_openapi::api::apps::v1::Deployment;
use kube::ResourceExt;
use kube::api::{Api, DynamicObject, PostParams};
use kube::core::{ApiResource, GroupVersionKind};
use serde_json::json;

const TEMPLATES: usize = 10;
const MEMBERS: usize = 2;
/// Templates go to `default`, which the namespace sync controller does not propagate, so no namespace Work
/// adds to the count.
const NAMESPACE: &str = "default";

fn api(
    client: &kube::Client,
    group: &str,
    version: &str,
    kind: &str,
    plural: &str,
) -> Api<DynamicObject> {
    let resource =
        ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(group, version, kind), plural);
    Api::namespaced_with(client.clone(), NAMESPACE, &resource)
}

/// Writes to the objects a template causes: the template, its binding and its Works.
fn pipeline(writes: &Writes) -> Writes {
    Writes(
        writes
            .0
            .iter()
            .filter(|(key, _)| {
                [
                    "deployments.apps",
                    "resourcebindings.work.karmada.io",
                    "works.work.karmada.io",
                ]
                .iter()
                .any(|r| key.starts_with(&format!("{r} ")) || key.starts_with(&format!("{r}/")))
            })
            .map(|(k, v)| (k.clone(), *v))
            .collect(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_template_costs_the_writes_karmadas_semantics_need_and_no_more() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = UpConfig::new(dir.path());
    config.port = 0;
    config.members = MEMBERS;
    config.simulator_delay = Duration::from_millis(50);
    // One status report per member object, as the bound assumes: a member's ReplicaSet and Pods move a
    // Deployment's status through several steps, each reflected into its Work (Karmada reflects them too), and
    // how many of those fall apart in time depends on the machine's load, not on Flotilla.
    config.simulator_children = false;
    let env = Environment::start(&config, &|_| {}).await.unwrap();
    let control = env.control_client.clone();
    let members: Vec<String> = env.members.iter().map(|m| m.name.clone()).collect();

    let policies = api(
        &control,
        "policy.karmada.io",
        "v1alpha1",
        "PropagationPolicy",
        "propagationpolicies",
    );
    let policy = json!({
        "apiVersion": "policy.karmada.io/v1alpha1", "kind": "PropagationPolicy",
        "metadata": {"name": "writes", "namespace": NAMESPACE},
        "spec": {"resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment"}],
                 "placement": {"clusterAffinity": {"clusterNames": members}}},
    });
    policies
        .create(
            &PostParams::default(),
            &serde_json::from_value(policy).unwrap(),
        )
        .await
        .unwrap();
    // The policy's own writes (its permanent id) are not the templates' (and not counted below anyway).
    flotilla_testing::eventually("the policy to get its permanent id", || {
        let policies = policies.clone();
        async move {
            let policy = policies.get("writes").await.ok()?;
            policy
                .labels()
                .contains_key("propagationpolicy.karmada.io/permanent-id")
                .then_some(())
        }
    })
    .await;

    let before = Writes::scrape(&control).await.unwrap();
    let deployments: Api<Deployment> = Api::namespaced(control.clone(), NAMESPACE);
    for i in 0..TEMPLATES {
        let name = format!("writes-{i}");
        let template = json!({
            "metadata": {"name": name, "namespace": NAMESPACE, "labels": {"app": name}},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"containers": [{"name": "app", "image": "nginx"}]}}},
        });
        deployments
            .create(
                &PostParams::default(),
                &serde_json::from_value(template).unwrap(),
            )
            .await
            .unwrap();
    }
    // Done: every template shows both members' ready replicas, and every binding aggregated every member's
    // applied Work with its status (the last writes of the pipeline).
    let bindings = api(
        &control,
        "work.karmada.io",
        "v1alpha2",
        "ResourceBinding",
        "resourcebindings",
    );
    flotilla_testing::eventually_within(
        Duration::from_secs(60),
        "every template aggregated",
        || {
            let (deployments, bindings) = (deployments.clone(), bindings.clone());
            async move {
                let templates = deployments.list(&Default::default()).await.ok()?;
                let ready = templates
                    .items
                    .iter()
                    .filter(|d| {
                        d.status.as_ref().and_then(|s| s.ready_replicas) == Some(MEMBERS as i32)
                    })
                    .count();
                let bindings = bindings.list(&Default::default()).await.ok()?;
                let aggregated = bindings
                    .items
                    .iter()
                    .filter(|b| {
                        let items = b
                            .data
                            .pointer("/status/aggregatedStatus")
                            .and_then(|v| v.as_array());
                        items.is_some_and(|items| {
                            items.len() == MEMBERS
                                && items.iter().all(|i| {
                                    i["applied"] == json!(true)
                                        && i["status"]["readyReplicas"] == json!(1)
                                })
                        })
                    })
                    .count();
                (ready == TEMPLATES && aggregated == TEMPLATES).then_some(())
            }
        },
    )
    .await;
    // A request is counted once its response is ready, just after its effect became visible: wait until
    // the last writes of the pipeline are counted too.
    let writes = flotilla_testing::eventually("the last writes to be counted", || {
        let (control, before) = (control.clone(), before.clone());
        async move {
            let writes = pipeline(&Writes::scrape(&control).await.ok()?.since(&before));
            let counted = |key: &str| writes.0.get(key).copied().unwrap_or(0) as usize;
            (counted("deployments.apps/status PUT") >= TEMPLATES
                && counted("resourcebindings.work.karmada.io/status PUT") >= TEMPLATES)
                .then_some(writes)
        }
    })
    .await;
    env.shutdown().await;

    let per_template =
        |key: &str| writes.0.get(key).copied().unwrap_or(0) as f64 / TEMPLATES as f64;
    let m = MEMBERS as f64;
    // The writes that happen exactly once per template (per member for Works) whatever the timing.
    for (key, want) in [
        ("deployments.apps POST", 1.0),
        ("deployments.apps PUT", 1.0),
        ("resourcebindings.work.karmada.io POST", 1.0),
        ("resourcebindings.work.karmada.io PATCH", 1.0),
        ("resourcebindings.work.karmada.io/status PATCH", 1.0),
        ("works.work.karmada.io POST", m),
        ("resourcebindings.work.karmada.io PUT", 0.0),
    ] {
        assert_eq!(
            per_template(key),
            want,
            "{key} per template; all writes: {:?}",
            writes.0
        );
    }
    // Status writes follow the members' reports: each Work's first status carries its `Applied` condition, so
    // with one report per member object a template costs 2M+7 (docs/BENCHMARKS.md); reports of one object that
    // arrive apart can each be reflected, which the bound of 3M+6 leaves room for.
    assert!(
        per_template("works.work.karmada.io/status PATCH") >= m,
        "every Work's status is written; all writes: {:?}",
        writes.0
    );
    let bound = 3.0 * m + 6.0;
    let total = writes.total() as f64 / TEMPLATES as f64;
    eprintln!("{total} writes per template: {:?}", writes.0);
    assert!(
        total <= bound,
        "{total} writes per template, bound {bound} (3M+6 with M = {MEMBERS}); all writes: {:?}",
        writes.0
    );
}
