use serde_json::{Value, json};

use super::{err, mk, object, ok};
use crate::layer::Request;

fn retain(desired: Value, observed: Value) -> Value {
    object(ok(Request::Retain { desired, observed }))
}

#[test]
fn deployment_keeps_member_replicas_only_when_labelled() {
    let labelled = json!({"metadata": {"labels": {"resourcetemplate.karmada.io/retain-replicas": "true"}}, "spec": {"replicas": 2}});
    let desired = mk("apps/v1", "Deployment", labelled.clone());
    let observed = mk("apps/v1", "Deployment", json!({"spec": {"replicas": 9}}));
    assert_eq!(retain(desired, observed.clone())["spec"]["replicas"], 9);

    let other_value = mk(
        "apps/v1",
        "Deployment",
        json!({"metadata": {"labels": {"resourcetemplate.karmada.io/retain-replicas": "yes"}}, "spec": {"replicas": 2}}),
    );
    assert_eq!(retain(other_value, observed)["spec"]["replicas"], 2);

    let missing = mk("apps/v1", "Deployment", json!({"spec": {}}));
    let message = err(Request::Retain {
        desired: mk("apps/v1", "Deployment", labelled),
        observed: missing,
    });
    assert!(message.contains("failed to get spec.replicas"), "{message}");
}

#[test]
fn pod_takes_scheduling_and_volume_fields_from_the_member() {
    let desired = mk(
        "v1",
        "Pod",
        json!({"spec": {
            "serviceAccountName": "mine",
            "volumes": [{"name": "a", "emptyDir": {}}],
            "containers": [
                {"name": "c1", "image": "x", "volumeMounts": [{"name": "a", "mountPath": "/a"}]},
                {"name": "c2", "image": "y", "volumeMounts": [{"name": "a", "mountPath": "/a"}]}
            ],
            "initContainers": [{"name": "i", "image": "z"}]
        }}),
    );
    let observed = mk(
        "v1",
        "Pod",
        json!({"spec": {
            "nodeName": "node-1",
            "serviceAccountName": "default",
            "volumes": [{"name": "token", "projected": {"sources": []}}],
            "containers": [
                {"name": "c1", "image": "x", "volumeMounts": [{"name": "token", "mountPath": "/var/run"}]},
                {"name": "c2", "image": "y"}
            ],
            "initContainers": [{"name": "i", "image": "z", "volumeMounts": [{"name": "token", "mountPath": "/t"}]}]
        }}),
    );
    let retained = retain(desired, observed);
    assert_eq!(retained["spec"]["nodeName"], "node-1");
    assert_eq!(retained["spec"]["serviceAccountName"], "default");
    assert_eq!(
        retained["spec"]["volumes"],
        json!([{"name": "token", "projected": {"sources": []}}])
    );
    assert_eq!(
        retained["spec"]["containers"][0]["volumeMounts"],
        json!([{"name": "token", "mountPath": "/var/run"}])
    );
    assert!(
        retained["spec"]["containers"][1]
            .get("volumeMounts")
            .is_none(),
        "empty member mounts clear desired's"
    );
    assert_eq!(
        retained["spec"]["initContainers"][0]["volumeMounts"][0]["mountPath"],
        "/t"
    );
    assert_eq!(retained["spec"]["containers"][1]["image"], "y");
}

#[test]
fn service_keeps_allocated_cluster_ip_and_health_check_port() {
    let desired = mk(
        "v1",
        "Service",
        json!({"spec": {"type": "LoadBalancer", "ports": [{"port": 80}]}}),
    );
    let observed = mk(
        "v1",
        "Service",
        json!({"spec": {"clusterIP": "10.0.0.9", "clusterIPs": ["10.0.0.9"], "healthCheckNodePort": 31000, "ports": [{"port": 80, "nodePort": 30080}]}}),
    );
    let retained = retain(desired, observed);
    assert_eq!(
        retained["spec"],
        json!({"type": "LoadBalancer", "ports": [{"port": 80}], "clusterIP": "10.0.0.9", "healthCheckNodePort": 31000})
    );
    let unallocated = mk(
        "v1",
        "Service",
        json!({"spec": {"clusterIP": "", "healthCheckNodePort": 0}}),
    );
    let desired = mk("v1", "Service", json!({"spec": {"clusterIP": "None"}}));
    assert_eq!(
        retain(desired, unallocated)["spec"],
        json!({"clusterIP": "None"})
    );
}

#[test]
fn service_account_appends_member_secrets() {
    let desired = mk(
        "v1",
        "ServiceAccount",
        json!({"secrets": [{"name": "a"}], "imagePullSecrets": [{"name": "p"}]}),
    );
    let observed = mk(
        "v1",
        "ServiceAccount",
        json!({"secrets": [{"name": "web-token-x"}, {"name": "a"}], "imagePullSecrets": [{"name": "p"}]}),
    );
    let retained = retain(desired, observed);
    assert_eq!(
        retained["secrets"],
        json!([{"name": "a"}, {"name": "web-token-x"}])
    );
    assert_eq!(retained["imagePullSecrets"], json!([{"name": "p"}]));
    let both_empty = retain(
        mk("v1", "ServiceAccount", json!({})),
        mk("v1", "ServiceAccount", json!({})),
    );
    assert_eq!(both_empty["secrets"], Value::Null);
    assert!(
        both_empty
            .as_object()
            .is_some_and(|o| o.contains_key("secrets") && o.contains_key("imagePullSecrets"))
    );
}

#[test]
fn volumes_claims_jobs_and_token_secrets() {
    let pvc = retain(
        mk("v1", "PersistentVolumeClaim", json!({"spec": {}})),
        mk(
            "v1",
            "PersistentVolumeClaim",
            json!({"spec": {"volumeName": "pv-1"}}),
        ),
    );
    assert_eq!(pvc["spec"]["volumeName"], "pv-1");
    let pv = retain(
        mk("v1", "PersistentVolume", json!({"spec": {}})),
        mk(
            "v1",
            "PersistentVolume",
            json!({"spec": {"claimRef": {"name": "c"}}}),
        ),
    );
    assert_eq!(pv["spec"]["claimRef"], json!({"name": "c"}));
    let pv_without = retain(
        mk(
            "v1",
            "PersistentVolume",
            json!({"spec": {"claimRef": {"name": "mine"}}}),
        ),
        mk("v1", "PersistentVolume", json!({"spec": {}})),
    );
    assert_eq!(pv_without["spec"]["claimRef"], json!({"name": "mine"}));

    let job = retain(
        mk(
            "batch/v1",
            "Job",
            json!({"spec": {"selector": {"matchLabels": {"a": "b"}}, "template": {"metadata": {"labels": {"a": "b"}}}}}),
        ),
        mk(
            "batch/v1",
            "Job",
            json!({"spec": {"selector": {"matchLabels": {"controller-uid": "u"}}, "template": {"metadata": {"labels": {"controller-uid": "u", "job-name": "web"}}}}}),
        ),
    );
    assert_eq!(
        job["spec"]["selector"]["matchLabels"],
        json!({"controller-uid": "u"})
    );
    assert_eq!(
        job["spec"]["template"]["metadata"]["labels"],
        json!({"controller-uid": "u", "job-name": "web"})
    );
    let bad = mk(
        "batch/v1",
        "Job",
        json!({"spec": {"selector": {"matchLabels": {"a": 1}}}}),
    );
    assert!(
        err(Request::Retain {
            desired: mk("batch/v1", "Job", json!({})),
            observed: bad
        })
        .contains("spec.selector.matchLabels")
    );

    let token = json!({"type": "kubernetes.io/service-account-token"});
    let secret = retain(
        mk("v1", "Secret", token),
        mk("v1", "Secret", json!({"data": {"token": "dA=="}})),
    );
    assert_eq!(secret["data"], json!({"token": "dA=="}));
    let opaque = retain(
        mk("v1", "Secret", json!({"data": {"k": "dg=="}})),
        mk("v1", "Secret", json!({"data": {"token": "dA=="}})),
    );
    assert_eq!(opaque["data"], json!({"k": "dg=="}));
}

#[test]
fn kinds_without_retain_are_not_found() {
    let message = err(Request::Retain {
        desired: mk("apps/v1", "StatefulSet", json!({})),
        observed: mk("apps/v1", "StatefulSet", json!({})),
    });
    assert_eq!(
        message,
        r#"default Retain interpreter for "apps/v1, Kind=StatefulSet" not found"#
    );
}
