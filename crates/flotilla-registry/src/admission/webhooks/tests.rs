//! Dispatch against real HTTPS webhooks on loopback.
#![allow(clippy::unwrap_used, clippy::panic)]

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use base64::Engine;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo};
use serde_json::{Value, json};
use tokio_rustls::TlsAcceptor;

use super::*;
use crate::write::{Outcome, guaranteed_update};
use flotilla_store::Store;

type Reply = dyn Fn(&Value) -> Value + Send + Sync;

/// An HTTPS webhook on loopback answering each AdmissionReview with `reply(request)`, recording the requests.
struct Hook {
    addr: SocketAddr,
    ca: String,
    seen: Arc<Mutex<Vec<Value>>>,
}

impl Hook {
    async fn start(reply: Arc<Reply>) -> Hook {
        let serving =
            flotilla_testing::tls::serving(&["hook.webhooks.svc", "127.0.0.1", "localhost"]);
        let acceptor = TlsAcceptor::from(serving.config);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let recorded = seen.clone();
        tokio::spawn(async move {
            while let Ok((tcp, _)) = listener.accept().await {
                let Ok(tls) = acceptor.accept(tcp).await else {
                    continue;
                };
                let (reply, recorded) = (reply.clone(), recorded.clone());
                let service = service_fn(move |req: hyper::Request<hyper::body::Incoming>| {
                    let (reply, recorded) = (reply.clone(), recorded.clone());
                    async move {
                        let body = req.into_body().collect().await.unwrap().to_bytes();
                        let review: Value = serde_json::from_slice(&body).unwrap();
                        let request = review["request"].clone();
                        recorded.lock().unwrap().push(request.clone());
                        let mut response = reply(&request);
                        response["uid"] = request["uid"].clone();
                        let answer = json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": response});
                        Ok::<_, std::convert::Infallible>(hyper::Response::new(Full::new(
                            Bytes::from(answer.to_string()),
                        )))
                    }
                });
                tokio::spawn(
                    hyper_util::server::conn::auto::Builder::new(TokioExecutor::new())
                        .serve_connection(TokioIo::new(tls), service)
                        .into_owned(),
                );
            }
        });
        Hook {
            addr,
            ca: serving.ca_pem,
            seen,
        }
    }

    fn url_config(&self, path: &str) -> Value {
        json!({"url": format!("https://127.0.0.1:{}{path}", self.addr.port()), "caBundle": b64(&self.ca)})
    }

    fn seen(&self) -> Vec<Value> {
        self.seen.lock().unwrap().clone()
    }
}

fn b64(text: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(text)
}

/// A patch answer adding `value` under `/metadata/labels/<key>`.
fn label_patch(key: &str, value: &str) -> Value {
    let patch = json!([{"op": "add", "path": format!("/metadata/labels/{key}"), "value": value}]);
    json!({"allowed": true, "patchType": "JSONPatch", "patch": b64(&patch.to_string())})
}

async fn put(store: &Store, res: ResKey, ns: &str, obj: Value) {
    let name = obj["metadata"]["name"].as_str().unwrap().to_owned();
    guaranteed_update(store, &res, ns, &name, false, |_| {
        Ok(Outcome::Put(obj.clone()))
    })
    .await
    .unwrap();
}

async fn configuration(store: &Store, plural: &str, name: &str, webhooks: Value) {
    put(
        store,
        ResKey::new(ADMISSION_GROUP, plural),
        "",
        json!({"metadata": {"name": name}, "webhooks": webhooks}),
    )
    .await;
}

fn every_configmap() -> Value {
    json!([{"operations": ["*"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["configmaps"]}])
}

fn admin() -> UserInfo {
    UserInfo::admin()
}

fn create<'a>(user: &'a UserInfo, dry_run: bool) -> Request<'a> {
    Request {
        operation: Operation::Create,
        group: "",
        version: "v1",
        kind: "ConfigMap",
        kind_group_version: None,
        resource: "configmaps",
        subresource: "",
        namespace: "default",
        name: "cm",
        old_object: None,
        dry_run,
        options: json!({}),
        user,
    }
}

fn new_store() -> (Arc<Store>, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    (Store::open(dir.path()).unwrap(), dir)
}

#[tokio::test]
async fn mutating_webhooks_patch_in_name_order_and_validating_ones_see_the_result() {
    let (store, _dir) = new_store();
    let first = Hook::start(Arc::new(|_: &Value| label_patch("first", "yes"))).await;
    let second = Hook::start(Arc::new(|req: &Value| {
        // It sees the first webhook's label.
        assert_eq!(req["object"]["metadata"]["labels"]["first"], "yes");
        label_patch("second", "yes")
    }))
    .await;
    let validator = Hook::start(Arc::new(|req: &Value| {
        let ok = req["object"]["metadata"]["labels"]["second"] == "yes";
        json!({"allowed": ok, "warnings": ["checked"]})
    }))
    .await;
    configuration(&store, "mutatingwebhookconfigurations", "b-second", json!([{"name": "second.example.com", "clientConfig": second.url_config("/m"), "rules": every_configmap(), "sideEffects": "None", "admissionReviewVersions": ["v1"]}])).await;
    configuration(&store, "mutatingwebhookconfigurations", "a-first", json!([{"name": "first.example.com", "clientConfig": first.url_config("/m"), "rules": every_configmap(), "sideEffects": "None", "admissionReviewVersions": ["v1"]}])).await;
    configuration(&store, "validatingwebhookconfigurations", "v", json!([{"name": "v.example.com", "clientConfig": validator.url_config("/v"), "rules": every_configmap(), "sideEffects": "None", "admissionReviewVersions": ["v1"]}])).await;

    let webhooks = Webhooks::default();
    let user = admin();
    let request = create(&user, false);
    let mut object = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm", "namespace": "default", "labels": {}}});
    let mut defaulted = 0;
    let warnings = webhooks
        .mutate(&store, &request, &mut object, &mut |_| {
            defaulted += 1;
            Ok(())
        })
        .await
        .unwrap();
    assert!(warnings.is_empty());
    assert_eq!(
        object["metadata"]["labels"],
        json!({"first": "yes", "second": "yes"})
    );
    assert_eq!(
        defaulted, 2,
        "the object is defaulted again after each patch"
    );
    let warnings = webhooks
        .validate(&store, &request, Some(&object))
        .await
        .unwrap();
    assert_eq!(warnings, ["checked"]);
    let review = &validator.seen()[0];
    assert_eq!(review["operation"], "CREATE");
    assert_eq!(
        review["resource"],
        json!({"group": "", "version": "v1", "resource": "configmaps"})
    );
    assert_eq!(review["userInfo"]["username"], "system:admin");
    assert_eq!(review["options"]["kind"], "CreateOptions");
    assert_eq!(review["oldObject"], Value::Null);
    assert_eq!(first.seen().len(), 1);
}

#[tokio::test]
async fn a_denial_fails_the_request_with_the_webhooks_status() {
    let (store, _dir) = new_store();
    let deny = Hook::start(Arc::new(|_: &Value| {
        json!({"allowed": false, "status": {"code": 403, "reason": "Forbidden", "message": "not here"}})
    }))
    .await;
    configuration(&store, "validatingwebhookconfigurations", "deny", json!([{"name": "deny.example.com", "clientConfig": deny.url_config("/"), "rules": every_configmap(), "sideEffects": "None", "admissionReviewVersions": ["v1"]}])).await;
    let user = admin();
    let err = Webhooks::default()
        .validate(
            &store,
            &create(&user, false),
            Some(&json!({"metadata": {"name": "cm"}})),
        )
        .await
        .unwrap_err();
    assert_eq!(err.code, 403);
    assert_eq!(
        err.message,
        "admission webhook \"deny.example.com\" denied the request: not here"
    );
}

#[tokio::test]
async fn failure_policy_decides_what_an_unreachable_webhook_does() {
    let (store, _dir) = new_store();
    // A port nothing listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let config = json!({"url": format!("https://127.0.0.1:{port}/"), "caBundle": b64("")});
    configuration(&store, "validatingwebhookconfigurations", "gone", json!([{"name": "gone.example.com", "clientConfig": config, "rules": every_configmap(), "sideEffects": "None", "failurePolicy": "Ignore", "admissionReviewVersions": ["v1"]}])).await;
    let user = admin();
    let object = json!({"metadata": {"name": "cm"}});
    let webhooks = Webhooks::default();
    assert!(
        webhooks
            .validate(&store, &create(&user, false), Some(&object))
            .await
            .is_ok()
    );
    configuration(&store, "validatingwebhookconfigurations", "gone", json!([{"name": "gone.example.com", "clientConfig": config, "rules": every_configmap(), "sideEffects": "None", "admissionReviewVersions": ["v1"]}])).await;
    let err = webhooks
        .validate(&store, &create(&user, false), Some(&object))
        .await
        .unwrap_err();
    assert_eq!(err.code, 500);
    assert!(
        err.message.starts_with("Internal error occurred: failed calling webhook \"gone.example.com\": failed to call webhook: Post"),
        "{}",
        err.message
    );
}

#[tokio::test]
async fn dry_runs_refuse_webhooks_with_side_effects_and_selectors_narrow_the_match() {
    let (store, _dir) = new_store();
    let hook = Hook::start(Arc::new(|_: &Value| json!({"allowed": true}))).await;
    put(
        &store,
        ResKey::new("", "namespaces"),
        "",
        json!({"metadata": {"name": "default", "labels": {"env": "dev"}}}),
    )
    .await;
    configuration(&store, "validatingwebhookconfigurations", "v", json!([
        {"name": "prod-only.example.com", "clientConfig": hook.url_config("/"), "rules": every_configmap(), "sideEffects": "Some", "admissionReviewVersions": ["v1"],
         "namespaceSelector": {"matchLabels": {"env": "prod"}}},
        {"name": "labelled.example.com", "clientConfig": hook.url_config("/"), "rules": every_configmap(), "sideEffects": "Some", "admissionReviewVersions": ["v1"],
         "objectSelector": {"matchLabels": {"checked": "true"}}},
    ])).await;
    let user = admin();
    let webhooks = Webhooks::default();
    let plain = json!({"metadata": {"name": "cm"}});
    // Neither webhook matches: the dry run goes through and nothing is called.
    webhooks
        .validate(&store, &create(&user, true), Some(&plain))
        .await
        .unwrap();
    assert!(hook.seen().is_empty());
    let labelled = json!({"metadata": {"name": "cm", "labels": {"checked": "true"}}});
    let err = webhooks
        .validate(&store, &create(&user, true), Some(&labelled))
        .await
        .unwrap_err();
    assert_eq!(err.code, 400);
    assert_eq!(
        err.message,
        "admission webhook \"labelled.example.com\" does not support dry run"
    );
    webhooks
        .validate(&store, &create(&user, false), Some(&labelled))
        .await
        .unwrap();
    assert_eq!(hook.seen().len(), 1);
}

#[tokio::test]
async fn if_needed_webhooks_run_again_after_a_later_change() {
    let (store, _dir) = new_store();
    let calls = Arc::new(Mutex::new(0));
    let counted = calls.clone();
    let early = Hook::start(Arc::new(move |_: &Value| {
        *counted.lock().unwrap() += 1;
        json!({"allowed": true})
    }))
    .await;
    let late = Hook::start(Arc::new(|_: &Value| label_patch("late", "yes"))).await;
    configuration(&store, "mutatingwebhookconfigurations", "m", json!([
        {"name": "early.example.com", "clientConfig": early.url_config("/"), "rules": every_configmap(), "sideEffects": "None", "admissionReviewVersions": ["v1"], "reinvocationPolicy": "IfNeeded"},
        {"name": "late.example.com", "clientConfig": late.url_config("/"), "rules": every_configmap(), "sideEffects": "None", "admissionReviewVersions": ["v1"]},
    ])).await;
    let user = admin();
    let mut object = json!({"metadata": {"name": "cm", "labels": {}}});
    Webhooks::default()
        .mutate(&store, &create(&user, false), &mut object, &mut |_| Ok(()))
        .await
        .unwrap();
    assert_eq!(
        *calls.lock().unwrap(),
        2,
        "early runs again after late's change"
    );
    assert_eq!(
        early.seen()[1]["object"]["metadata"]["labels"]["late"],
        "yes"
    );
}

#[tokio::test]
async fn a_service_reference_dials_the_services_endpoint_and_verifies_its_dns_name() {
    let (store, _dir) = new_store();
    let hook = Hook::start(Arc::new(|_: &Value| label_patch("via", "service"))).await;
    put(&store, ResKey::new("", "services"), "webhooks", json!({"metadata": {"name": "hook", "namespace": "webhooks"}, "spec": {"ports": [{"name": "https", "port": 443}]}})).await;
    put(&store, ResKey::new("", "endpoints"), "webhooks", json!({"metadata": {"name": "hook", "namespace": "webhooks"}, "subsets": [{"addresses": [{"ip": "127.0.0.1"}], "ports": [{"name": "https", "port": hook.addr.port()}]}]})).await;
    let config = json!({"service": {"namespace": "webhooks", "name": "hook", "path": "/mutate"}, "caBundle": b64(&hook.ca)});
    configuration(&store, "mutatingwebhookconfigurations", "m", json!([{"name": "svc.example.com", "clientConfig": config, "rules": every_configmap(), "sideEffects": "None", "admissionReviewVersions": ["v1"]}])).await;
    let user = admin();
    let mut object = json!({"metadata": {"name": "cm", "labels": {}}});
    Webhooks::default()
        .mutate(&store, &create(&user, false), &mut object, &mut |_| Ok(()))
        .await
        .unwrap();
    assert_eq!(object["metadata"]["labels"]["via"], "service");
}

#[tokio::test]
async fn webhook_configurations_themselves_are_never_sent_to_webhooks() {
    let (store, _dir) = new_store();
    let hook = Hook::start(Arc::new(|_: &Value| json!({"allowed": false}))).await;
    let all = json!([{"operations": ["*"], "apiGroups": ["*"], "apiVersions": ["*"], "resources": ["*"]}]);
    configuration(&store, "validatingwebhookconfigurations", "v", json!([{"name": "all.example.com", "clientConfig": hook.url_config("/"), "rules": all, "sideEffects": "None", "admissionReviewVersions": ["v1"]}])).await;
    let user = admin();
    let request = Request {
        group: ADMISSION_GROUP,
        resource: "validatingwebhookconfigurations",
        kind: "ValidatingWebhookConfiguration",
        namespace: "",
        ..create(&user, false)
    };
    Webhooks::default()
        .validate(&store, &request, Some(&json!({"metadata": {"name": "v"}})))
        .await
        .unwrap();
    assert!(hook.seen().is_empty());
}
