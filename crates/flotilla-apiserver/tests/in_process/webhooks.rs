//! Admission webhooks on the write path of the embedded server alone (the differential suite compares them with
//! kube-apiserver; this runs by default): a mutating webhook's label lands on creates, updates and server-side
//! apply, a validating webhook refuses a name and a deletion, and dry runs are admitted too.

use std::sync::Arc;

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use serde_json::{Value, json};

use crate::common::{mk_cm, start};

#[path = "../differential/webhook.rs"]
mod webhook;

fn configuration(kind: &str, hook: &str, url: &str, ca: &str, operations: Value) -> Value {
    json!({
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": kind,
        "metadata": {"name": format!("test-{hook}")},
        "webhooks": [{
            "name": format!("{hook}.test.flotilla.dev"),
            "admissionReviewVersions": ["v1"],
            "sideEffects": "None",
            "failurePolicy": "Fail",
            "clientConfig": {"url": format!("{url}/{hook}"), "caBundle": ca},
            "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "default"}},
            "rules": [{"operations": operations, "apiGroups": [""], "apiVersions": ["v1"], "resources": ["configmaps"]}],
        }],
    })
}

fn admitted(cm: &ConfigMap) -> bool {
    cm.metadata
        .labels
        .as_ref()
        .and_then(|l| l.get("admitted-by"))
        .is_some_and(|v| v == "differential-webhook")
}

#[tokio::test]
async fn webhooks_mutate_and_refuse_writes() {
    let dir = tempfile::tempdir().unwrap();
    let (server, client) = start(dir.path()).await;
    let hook = Arc::new(webhook::WebhookServer::start().await);
    let url = hook.url("embedded");
    let ca = hook.ca_bundle();
    let mutating: Api<kube::api::DynamicObject> = Api::all_with(
        client.clone(),
        &kube::api::ApiResource::erase::<
            k8s_openapi::api::admissionregistration::v1::MutatingWebhookConfiguration,
        >(&()),
    );
    let validating: Api<kube::api::DynamicObject> = Api::all_with(
        client.clone(),
        &kube::api::ApiResource::erase::<
            k8s_openapi::api::admissionregistration::v1::ValidatingWebhookConfiguration,
        >(&()),
    );
    let post = |v: Value| serde_json::from_value::<kube::api::DynamicObject>(v).unwrap();
    mutating
        .create(
            &PostParams::default(),
            &post(configuration(
                "MutatingWebhookConfiguration",
                "mutate",
                &url,
                &ca,
                json!(["CREATE", "UPDATE"]),
            )),
        )
        .await
        .unwrap();
    validating
        .create(
            &PostParams::default(),
            &post(configuration(
                "ValidatingWebhookConfiguration",
                "validate",
                &url,
                &ca,
                json!(["CREATE", "UPDATE", "DELETE"]),
            )),
        )
        .await
        .unwrap();

    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let made = cms
        .create(
            &PostParams::default(),
            &mk_cm("plain", json!({"labels": {"app": "web"}})),
        )
        .await
        .unwrap();
    assert!(admitted(&made), "{made:?}");
    // The label the webhook added is owned by no one: the creator's managedFields name only its own label.
    let owned = serde_json::to_string(&made.metadata.managed_fields).unwrap();
    assert!(
        owned.contains("f:app") && !owned.contains("f:admitted-by"),
        "{owned}"
    );

    // An update that drops the label gets it back.
    let mut next = made.clone();
    next.metadata.labels = None;
    next.data = Some([("k".to_string(), "v".to_string())].into());
    let updated = cms
        .replace("plain", &PostParams::default(), &next)
        .await
        .unwrap();
    assert!(admitted(&updated), "{updated:?}");

    let applied = cms
        .patch(
            "applied",
            &PatchParams::apply("test"),
            &Patch::Apply(
                json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "applied"}}),
            ),
        )
        .await
        .unwrap();
    assert!(admitted(&applied), "{applied:?}");

    let dry = cms
        .create(
            &PostParams {
                dry_run: true,
                ..Default::default()
            },
            &mk_cm("dry", json!({})),
        )
        .await
        .unwrap();
    assert!(admitted(&dry));

    let refused = cms
        .create(&PostParams::default(), &mk_cm("refused-one", json!({})))
        .await
        .unwrap_err();
    assert!(
        matches!(&refused, kube::Error::Api(s) if s.code == 403
            && s.message.contains("admission webhook \"validate.test.flotilla.dev\" denied the request")),
        "{refused:?}"
    );
    cms.create(&PostParams::default(), &mk_cm("undeletable", json!({})))
        .await
        .unwrap();
    let kept = cms
        .delete("undeletable", &DeleteParams::default())
        .await
        .unwrap_err();
    assert!(
        matches!(&kept, kube::Error::Api(s) if s.code == 403),
        "{kept:?}"
    );
    assert!(cms.get_opt("undeletable").await.unwrap().is_some());

    // What the webhooks were told: every write of this test, in order, the deletion with its old object.
    let seen = hook.take("embedded", "default");
    let summary: Vec<(String, String, String)> = seen
        .iter()
        .map(|r| {
            let name = r["name"]
                .as_str()
                .or_else(|| r.pointer("/object/metadata/name").and_then(Value::as_str));
            (
                r["hook"].as_str().unwrap_or("").into(),
                r["operation"].as_str().unwrap_or("").into(),
                name.unwrap_or("").into(),
            )
        })
        .collect();
    let delete = seen
        .iter()
        .find(|r| r["operation"] == "DELETE")
        .expect("the deletion was reviewed");
    assert!(delete["object"].is_null() && delete["oldObject"]["metadata"]["name"] == "undeletable");
    assert!(seen.iter().any(|r| r["dryRun"] == true), "{summary:?}");
    assert_eq!(
        summary
            .iter()
            .filter(|(hook, _, _)| hook == "mutate")
            .count(),
        6,
        "create, update, apply, dry run, refused and undeletable creates: {summary:?}"
    );
    server.shutdown().await;
}
