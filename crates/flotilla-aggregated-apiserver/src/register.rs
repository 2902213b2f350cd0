//! Registering this server with the control plane's aggregator: the APIService `v1alpha1.cluster.karmada.io`
//! (Karmada's name, labels and group priority; a version priority above the CRD's own versions) pointing at a
//! Service, and, when the server is reached at a host and port rather than through an existing Service, the
//! ExternalName Service `karmada-system/karmada-aggregated-apiserver` for them. Both are written by
//! server-side apply as the controller manager, so registering again converges.
//!
//! kube-aggregator has usually registered `v1alpha1.cluster.karmada.io` itself already, as a local APIService for
//! the Cluster CRD's version, and resets the spec of the APIServices it manages; the apply takes the object
//! over in the same write (see [`names::AUTOMANAGED_LABEL`]).

use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::{Namespace, Service, ServicePort, ServiceSpec};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use k8s_openapi::kube_aggregator::pkg::apis::apiregistration::v1::{
    APIService, APIServiceSpec, ServiceReference,
};
use kube::api::{ObjectMeta, Patch, PatchParams};
use kube::{Api, Client};

use crate::{Error, names};

/// Where the control plane's aggregator reaches this server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Endpoint {
    /// At `host:port`: the ExternalName Service `karmada-system/karmada-aggregated-apiserver` is created for
    /// them (the aggregator then connects to `host`, verifying the certificate for
    /// `karmada-aggregated-apiserver.karmada-system.svc`).
    External {
        /// A host name or IPv4 address.
        host: String,
        /// The port.
        port: u16,
    },
    /// Through an existing Service.
    Service {
        /// The Service's namespace.
        namespace: String,
        /// The Service's name.
        name: String,
        /// Its port (the aggregator's default, 443, when unset).
        port: Option<i32>,
    },
}

/// The APIService registering the server at `endpoint`, whose serving certificate `ca_bundle` (PEM) verifies.
pub fn api_service(endpoint: &Endpoint, ca_bundle: &[u8]) -> APIService {
    let service = match endpoint {
        Endpoint::External { port, .. } => ServiceReference {
            namespace: Some(names::SERVICE_NAMESPACE.to_owned()),
            name: Some(names::SERVICE_NAME.to_owned()),
            port: Some(i32::from(*port)),
        },
        Endpoint::Service {
            namespace,
            name,
            port,
        } => ServiceReference {
            namespace: Some(namespace.clone()),
            name: Some(name.clone()),
            port: *port,
        },
    };
    let mut labels = labels();
    labels.insert(
        names::AUTOMANAGED_LABEL.0.to_owned(),
        names::AUTOMANAGED_LABEL.1.to_owned(),
    );
    APIService {
        metadata: ObjectMeta {
            name: Some(names::API_SERVICE_NAME.to_owned()),
            labels: Some(labels),
            ..ObjectMeta::default()
        },
        spec: Some(APIServiceSpec {
            group: Some(names::GROUP.to_owned()),
            version: Some(names::VERSION.to_owned()),
            group_priority_minimum: names::GROUP_PRIORITY_MINIMUM,
            version_priority: names::VERSION_PRIORITY,
            service: Some(service),
            ca_bundle: Some(ByteString(ca_bundle.to_vec())),
            insecure_skip_tls_verify: None,
        }),
        status: None,
    }
}

/// The ExternalName Service sending the aggregator to `host:port`.
pub fn external_service(host: &str, port: u16) -> Service {
    Service {
        metadata: ObjectMeta {
            name: Some(names::SERVICE_NAME.to_owned()),
            namespace: Some(names::SERVICE_NAMESPACE.to_owned()),
            labels: Some(labels()),
            ..ObjectMeta::default()
        },
        spec: Some(ServiceSpec {
            type_: Some("ExternalName".to_owned()),
            external_name: Some(host.to_owned()),
            ports: Some(vec![ServicePort {
                name: Some("https".to_owned()),
                protocol: Some("TCP".to_owned()),
                port: i32::from(port),
                target_port: Some(IntOrString::Int(i32::from(port))),
                ..ServicePort::default()
            }]),
            ..ServiceSpec::default()
        }),
        status: None,
    }
}

fn labels() -> BTreeMap<String, String> {
    names::LABELS
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

/// Applies the APIService for `endpoint` (and the ExternalName Service with its namespace, for
/// [`Endpoint::External`]) through `client`.
///
/// # Errors
/// [`Error::Register`] naming the object the control plane refused.
pub async fn register(client: &Client, endpoint: &Endpoint, ca_bundle: &[u8]) -> Result<(), Error> {
    let params = PatchParams::apply(names::FIELD_MANAGER).force();
    if let Endpoint::External { host, port } = endpoint {
        let namespace = Namespace {
            metadata: ObjectMeta {
                name: Some(names::SERVICE_NAMESPACE.to_owned()),
                ..ObjectMeta::default()
            },
            ..Namespace::default()
        };
        apply(
            &Api::<Namespace>::all(client.clone()),
            names::SERVICE_NAMESPACE,
            &namespace,
            &params,
        )
        .await?;
        apply(
            &Api::<Service>::namespaced(client.clone(), names::SERVICE_NAMESPACE),
            names::SERVICE_NAME,
            &external_service(host, *port),
            &params,
        )
        .await?;
    }
    apply(
        &Api::<APIService>::all(client.clone()),
        names::API_SERVICE_NAME,
        &api_service(endpoint, ca_bundle),
        &params,
    )
    .await
}

async fn apply<K>(api: &Api<K>, name: &str, object: &K, params: &PatchParams) -> Result<(), Error>
where
    K: kube::Resource<DynamicType = ()>
        + Clone
        + serde::Serialize
        + serde::de::DeserializeOwned
        + std::fmt::Debug,
{
    api.patch(name, params, &Patch::Apply(object))
        .await
        .map(drop)
        .map_err(|source| Error::Register {
            action: "apply",
            object: format!("{} {name}", K::kind(&())),
            source,
        })
}

/// Waits until the APIService names a service, its `Available` condition is `True`, and the control plane's
/// `v1alpha1` discovery is this server's; polls every half second.
///
/// # Errors
/// [`Error::NotAvailable`] after `timeout`, with the condition's last reason and message.
pub async fn wait_available(client: &Client, timeout: Duration) -> Result<(), Error> {
    let api: Api<APIService> = Api::all(client.clone());
    let started = tokio::time::Instant::now();
    loop {
        let reason = match api.get_opt(names::API_SERVICE_NAME).await {
            // kube-aggregator's own local registration of the CRD's version is Available too: not ours.
            Ok(Some(service)) if service.spec.as_ref().is_none_or(|s| s.service.is_none()) => {
                "it names no service (it is the CRD's local registration)".to_owned()
            }
            Ok(Some(service)) => {
                let available = service
                    .status
                    .and_then(|status| status.conditions)
                    .unwrap_or_default()
                    .into_iter()
                    .find(|condition| condition.type_ == "Available");
                match available {
                    Some(condition) if condition.status == "True" => {
                        match routed_here(client).await {
                            Ok(true) => return Ok(()),
                            Ok(false) => {
                                "the control plane still answers v1alpha1 itself".to_owned()
                            }
                            Err(error) => crate::error::chain(&error),
                        }
                    }
                    Some(condition) => format!(
                        "{}: {}",
                        condition.reason.unwrap_or_default(),
                        condition.message.unwrap_or_default()
                    ),
                    None => "no Available condition yet".to_owned(),
                }
            }
            Ok(None) => "it does not exist".to_owned(),
            Err(error) => crate::error::chain(&error),
        };
        if started.elapsed() >= timeout {
            return Err(Error::NotAvailable {
                name: names::API_SERVICE_NAME.to_owned(),
                waited: timeout,
                reason,
            });
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// Whether the control plane's `v1alpha1` discovery is this server's: only it serves `clusters/proxy`. The
/// `Available` condition alone may still be the one of kube-aggregator's local registration just taken over.
async fn routed_here(client: &Client) -> Result<bool, kube::Error> {
    let resources = client.list_api_group_resources(names::API_VERSION).await?;
    let proxy = format!("{}/{}", names::RESOURCE, names::PROXY);
    Ok(resources.resources.iter().any(|r| r.name == proxy))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_api_service_is_karmadas_with_a_priority_above_crd_versions() {
        let external = Endpoint::External {
            host: "127.0.0.1".into(),
            port: 7443,
        };
        let body = serde_json::to_value(api_service(&external, b"PEM")).expect("serializes");
        assert_eq!(
            body,
            json!({
                "apiVersion": "apiregistration.k8s.io/v1",
                "kind": "APIService",
                "metadata": {
                    "name": "v1alpha1.cluster.karmada.io",
                    "labels": {
                        "app": "karmada-aggregated-apiserver",
                        "apiserver": "true",
                        "kube-aggregator.kubernetes.io/automanaged": "false",
                    },
                },
                "spec": {
                    "group": "cluster.karmada.io",
                    "version": "v1alpha1",
                    "groupPriorityMinimum": 2000,
                    "versionPriority": 200,
                    "service": {"namespace": "karmada-system", "name": "karmada-aggregated-apiserver", "port": 7443},
                    "caBundle": "UEVN",
                },
            })
        );
    }

    #[test]
    fn an_existing_service_is_referenced_as_given() {
        let endpoint = Endpoint::Service {
            namespace: "ns".into(),
            name: "svc".into(),
            port: None,
        };
        let service = api_service(&endpoint, b"").spec.and_then(|s| s.service);
        assert_eq!(
            service,
            Some(ServiceReference {
                namespace: Some("ns".into()),
                name: Some("svc".into()),
                port: None,
            })
        );
    }

    #[test]
    fn the_external_service_points_at_the_host_and_port() {
        let body = serde_json::to_value(external_service("127.0.0.1", 7443)).expect("serializes");
        assert_eq!(body["metadata"]["namespace"], "karmada-system");
        assert_eq!(body["metadata"]["name"], "karmada-aggregated-apiserver");
        assert_eq!(body["spec"]["type"], "ExternalName");
        assert_eq!(body["spec"]["externalName"], "127.0.0.1");
        assert_eq!(body["spec"]["ports"][0]["port"], 7443);
    }
}
