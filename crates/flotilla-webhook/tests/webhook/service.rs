//! `service` client configs: the Service in the control plane decides where to dial, while the TLS server name
//! stays `<name>.<namespace>.svc`. The control plane is a canned kube client answering one Service GET.

use std::convert::Infallible;

use flotilla_api::config::v1alpha1::ResourceInterpreterWebhookConfiguration;
use flotilla_interpreter::webhook::WebhookLayer;
use flotilla_interpreter::{Request, Response};
use flotilla_webhook::example::{ExampleConfig, RunningWebhook, serve};
use flotilla_webhook::generate_self_signed;
use k8s_openapi::api::admissionregistration::v1::ServiceReference;
use serde_json::{Value, json};

use crate::support::{assert_names, call, call_err, mk_workload};

const HOOK: &str = "examples/workloads.example.com";

/// A kube client whose API server answers GET of Service `default/examples` with `service` (404 when `None`).
fn control_plane(service: Option<Value>) -> kube::Client {
    let handler = tower::service_fn(move |request: http::Request<kube::client::Body>| {
        let service = service.clone();
        async move {
            assert_eq!(
                request.uri().path(),
                "/api/v1/namespaces/default/services/examples"
            );
            let (status, body) = match service {
                Some(service) => (200, service),
                None => (
                    404,
                    json!({"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "NotFound", "code": 404}),
                ),
            };
            let body = kube::client::Body::from(serde_json::to_vec(&body).unwrap());
            Ok::<_, Infallible>(http::Response::builder().status(status).body(body).unwrap())
        }
    });
    kube::Client::new(handler, "default")
}

/// The example webhook with a certificate for `examples.default.svc` only, and a configuration that reaches it
/// through Service `default/examples` on its port.
async fn example_behind_service() -> (RunningWebhook, ResourceInterpreterWebhookConfiguration, u16)
{
    let generated = generate_self_signed(&["examples.default.svc"]).unwrap();
    let config = ExampleConfig {
        tls: Some(generated.identity.clone()),
        ..ExampleConfig::default()
    };
    let webhook = serve(config).await.unwrap();
    let port = webhook.local_addr().port();
    let mut configuration =
        flotilla_webhook::example::webhook_configuration("unused", Some(generated.ca_pem));
    let client = &mut configuration.webhooks[0].client_config;
    client.url = None;
    client.service = Some(ServiceReference {
        namespace: "default".into(),
        name: "examples".into(),
        path: Some("/interpreter-workload".into()),
        port: Some(i32::from(port)),
    });
    (webhook, configuration, port)
}

fn layer(
    kube: kube::Client,
    configuration: ResourceInterpreterWebhookConfiguration,
) -> WebhookLayer {
    let layer = WebhookLayer::new(Some(kube));
    layer.replace_all(vec![configuration]);
    layer
}

#[tokio::test]
async fn cluster_ip_service_is_dialled_at_its_cluster_ip() {
    let (_webhook, configuration, port) = example_behind_service().await;
    let service = json!({
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "examples", "namespace": "default"},
        "spec": {"type": "ClusterIP", "clusterIP": "127.0.0.1", "ports": [{"port": port}]}
    });
    let layer = layer(control_plane(Some(service)), configuration);
    let answer = call(
        &layer,
        Request::InterpretReplica {
            object: mk_workload(0),
        },
    )
    .await;
    assert_eq!(
        answer,
        Response::Replicas {
            replicas: 3,
            requirements: None
        }
    );
}

#[tokio::test]
async fn external_name_service_is_dialled_at_its_external_name() {
    let (_webhook, configuration, _port) = example_behind_service().await;
    let service = json!({
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "examples", "namespace": "default"},
        "spec": {"type": "ExternalName", "externalName": "localhost"}
    });
    let layer = layer(control_plane(Some(service)), configuration);
    let answer = call(
        &layer,
        Request::InterpretHealth {
            object: mk_workload(3),
        },
    )
    .await;
    assert_eq!(answer, Response::Healthy(true));
}

#[tokio::test]
async fn unroutable_services_are_errors() {
    let (_webhook, configuration, port) = example_behind_service().await;
    let cases = [
        (
            json!({"type": "ClusterIP", "clusterIP": "None", "ports": [{"port": port}]}),
            "ClusterIP set to None",
        ),
        (
            json!({"type": "ClusterIP", "clusterIP": "127.0.0.1", "ports": [{"port": 1}]}),
            "unable to find service port",
        ),
        (
            json!({"type": "Bogus"}),
            "unsupported service type \"Bogus\"",
        ),
    ];
    for (spec, reason) in cases {
        let service = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "examples"}, "spec": spec});
        let layer = layer(control_plane(Some(service)), configuration.clone());
        let error = call_err(
            &layer,
            Request::InterpretHealth {
                object: mk_workload(3),
            },
        )
        .await;
        assert_names(&error, HOOK, reason);
    }
}

#[tokio::test]
async fn missing_service_falls_back_to_dns() {
    let (_webhook, configuration, _port) = example_behind_service().await;
    let layer = layer(control_plane(None), configuration);
    let error = call_err(
        &layer,
        Request::InterpretHealth {
            object: mk_workload(3),
        },
    )
    .await;
    assert_names(&error, HOOK, "failed to resolve examples.default.svc");
}
