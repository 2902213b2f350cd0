//! What a fresh cluster holds and keeps: the `default` ServiceAccount and `kube-root-ca.crt` in every
//! namespace, the `kubernetes` Service with its Endpoints and EndpointSlice in `default`.

use k8s_openapi::api::core::v1::{ConfigMap, Endpoints, Namespace, Service, ServiceAccount};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use serde_json::json;

use crate::common::{eventually, start};

#[tokio::test]
async fn a_fresh_server_publishes_the_kubernetes_service_and_its_endpoints() {
    let dir = tempfile::tempdir().unwrap();
    let (server, client) = start(dir.path()).await;
    let port = i32::from(server.local_addr().port());
    let svc = Api::<Service>::namespaced(client.clone(), "default")
        .get("kubernetes")
        .await
        .unwrap();
    let spec = svc.spec.unwrap();
    assert_eq!(spec.cluster_ip.as_deref(), Some("10.96.0.1"));
    assert_eq!(spec.type_.as_deref(), Some("ClusterIP"));
    let p = &spec.ports.unwrap()[0];
    assert_eq!((p.name.as_deref(), p.port), (Some("https"), 443));
    assert_eq!(
        p.target_port,
        Some(k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::Int(port))
    );
    let ep = Api::<Endpoints>::namespaced(client.clone(), "default")
        .get("kubernetes")
        .await
        .unwrap();
    let subset = &ep.subsets.unwrap()[0];
    assert_eq!(subset.addresses.as_ref().unwrap()[0].ip, "127.0.0.1");
    assert_eq!(subset.ports.as_ref().unwrap()[0].port, port);
    let slice = Api::<EndpointSlice>::namespaced(client.clone(), "default")
        .get("kubernetes")
        .await
        .unwrap();
    assert_eq!(slice.address_type, "IPv4");
    assert_eq!(slice.ports.unwrap()[0].port, Some(port));
    assert_eq!(
        slice.metadata.labels.unwrap()["kubernetes.io/service-name"],
        "kubernetes"
    );

    // Deleted, it comes back (with the same reserved IP); its endpoints are pointed back at this server.
    let svcs: Api<Service> = Api::namespaced(client.clone(), "default");
    svcs.delete("kubernetes", &DeleteParams::default())
        .await
        .unwrap();
    eventually("the kubernetes Service to be recreated", || {
        let svcs = svcs.clone();
        let old_uid = svc.metadata.uid.clone();
        async move {
            svcs.get_opt("kubernetes")
                .await
                .unwrap()
                .is_some_and(|s| s.metadata.uid != old_uid)
        }
    })
    .await;
    let eps: Api<Endpoints> = Api::namespaced(client, "default");
    let moved = json!({"subsets": [{"addresses": [{"ip": "10.1.2.3"}], "ports": [{"name": "https", "port": 1}]}]});
    eps.patch("kubernetes", &PatchParams::default(), &Patch::Merge(moved))
        .await
        .unwrap();
    eventually("the kubernetes Endpoints to point back here", || {
        let eps = eps.clone();
        async move {
            let ep = eps.get("kubernetes").await.unwrap();
            ep.subsets.unwrap()[0].ports.as_ref().unwrap()[0].port == port
        }
    })
    .await;
    server.shutdown().await;
}

#[tokio::test]
async fn every_namespace_holds_the_server_ca_and_keeps_it() {
    let dir = tempfile::tempdir().unwrap();
    let (server, client) = start(dir.path()).await;
    let ca = server.ca_pem().to_string();
    let ca_of = |cm: ConfigMap| cm.data.unwrap_or_default().get("ca.crt").cloned();
    for ns in ["default", "kube-system", "kube-public", "kube-node-lease"] {
        let cm = Api::<ConfigMap>::namespaced(client.clone(), ns)
            .get("kube-root-ca.crt")
            .await
            .unwrap();
        assert_eq!(ca_of(cm).as_deref(), Some(ca.as_str()), "in {ns}");
        let sa = Api::<ServiceAccount>::namespaced(client.clone(), ns)
            .get_opt("default")
            .await
            .unwrap();
        assert!(sa.is_some(), "no default ServiceAccount in {ns}");
    }
    Api::<Namespace>::all(client.clone())
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({"metadata": {"name": "fresh"}})).unwrap(),
        )
        .await
        .unwrap();
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "fresh");
    let has_ca = || {
        let (cms, ca) = (cms.clone(), ca.clone());
        async move {
            cms.get_opt("kube-root-ca.crt")
                .await
                .unwrap()
                .filter(|cm| cm.binary_data.is_none())
                .and_then(ca_of)
                .is_some_and(|c| c == ca)
        }
    };
    eventually("the CA ConfigMap in a new namespace", has_ca).await;
    // Changed, it is set back; deleted, it is recreated.
    cms.patch(
        "kube-root-ca.crt",
        &PatchParams::default(),
        &Patch::Merge(json!({"data": {"ca.crt": "not a CA"}, "binaryData": {"x": "AA=="}})),
    )
    .await
    .unwrap();
    eventually("the CA ConfigMap restored", has_ca).await;
    cms.delete("kube-root-ca.crt", &DeleteParams::default())
        .await
        .unwrap();
    eventually("the CA ConfigMap recreated", has_ca).await;
    // So is a deleted `default` ServiceAccount.
    let sas: Api<ServiceAccount> = Api::namespaced(client, "fresh");
    let old = sas.get("default").await.unwrap().metadata.uid;
    sas.delete("default", &DeleteParams::default())
        .await
        .unwrap();
    eventually("the default ServiceAccount recreated", || {
        let (sas, old) = (sas.clone(), old.clone());
        async move {
            sas.get_opt("default")
                .await
                .unwrap()
                .is_some_and(|s| s.metadata.uid != old)
        }
    })
    .await;
    server.shutdown().await;
}
