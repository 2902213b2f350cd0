use std::sync::Arc;

use serde_json::{Value, json};

use super::apiservice::{ApiService, ServiceRef};
use super::available::{Availability, check};
use super::resolve::{self, ResolveError};
use crate::context::Ctx;
use flotilla_registry::controllers::ensure;

fn apiservice(name: &str, service: Option<Value>) -> Value {
    let (version, group) = name.split_once('.').expect("version.group");
    let mut obj = json!({"metadata": {"name": name},
        "spec": {"group": group, "version": version, "groupPriorityMinimum": 2000, "versionPriority": 10,
                 "insecureSkipTLSVerify": true}});
    if let Some(s) = service {
        obj["spec"]["service"] = s;
    }
    obj
}

async fn put(ctx: &Ctx, group: &str, plural: &str, obj: Value) {
    ensure(&ctx.registry, group, "v1", plural, obj)
        .await
        .expect("object created");
}

fn svc(name: &str, port: i64) -> ServiceRef {
    ServiceRef {
        namespace: "ns".into(),
        name: name.into(),
        port,
    }
}

async fn fixture() -> (tempfile::TempDir, Arc<Ctx>) {
    let dir = tempfile::tempdir().expect("tempdir");
    let ctx = Ctx::for_test(dir.path());
    put(&ctx, "", "namespaces", json!({"metadata": {"name": "ns"}})).await;
    (dir, ctx)
}

#[tokio::test]
async fn only_paths_under_an_apiservice_with_a_service_are_claimed() {
    let (_dir, ctx) = fixture().await;
    let remote = json!({"namespace": "ns", "name": "backend"});
    put(
        &ctx,
        "apiregistration.k8s.io",
        "apiservices",
        apiservice("v1.remote.example.com", Some(remote)),
    )
    .await;
    put(
        &ctx,
        "apiregistration.k8s.io",
        "apiservices",
        apiservice("v1.local.example.com", None),
    )
    .await;
    ctx.aggregator.reload();
    let claimed = |p: &str| ctx.aggregator.claims(p).map(|r| r.spec.name.clone());
    assert_eq!(
        claimed("/apis/remote.example.com/v1").as_deref(),
        Some("v1.remote.example.com")
    );
    assert_eq!(
        claimed("/apis/remote.example.com/v1/").as_deref(),
        Some("v1.remote.example.com")
    );
    assert_eq!(
        claimed("/apis/remote.example.com/v1/namespaces/a/things/b").as_deref(),
        Some("v1.remote.example.com")
    );
    assert_eq!(
        claimed("/apis/remote.example.com"),
        None,
        "the group document is the aggregator's own"
    );
    assert_eq!(claimed("/apis/remote.example.com/v1beta1/things"), None);
    assert_eq!(claimed("/apis/remote.example.com/v1x"), None);
    assert_eq!(
        claimed("/apis/local.example.com/v1/things"),
        None,
        "Local changes nothing"
    );
    assert_eq!(claimed("/api/v1/pods"), None);
    // A new status keeps the client (and its pooled connections); a new CA bundle does not.
    let before = ctx
        .aggregator
        .remote("remote.example.com", "v1")
        .expect("registered");
    flotilla_registry::write::guaranteed_update(
        &ctx.registry.store,
        &super::apiservices(),
        "",
        "v1.remote.example.com",
        false,
        |cur| {
            let mut next = cur.expect("exists").as_ref().clone();
            next["status"] = json!({"conditions": [{"type": "Available", "status": "True"}]});
            Ok(flotilla_registry::write::Outcome::Put(next))
        },
    )
    .await
    .expect("status written");
    ctx.aggregator.reload();
    let after = ctx
        .aggregator
        .remote("remote.example.com", "v1")
        .expect("registered");
    assert!(after.available && !before.available);
    match (&before.transport, &after.transport) {
        (Ok(a), Ok(b)) => assert!(Arc::ptr_eq(a, b)),
        other => panic!("transports: {other:?}"),
    }
}

#[tokio::test]
async fn external_names_resolve_to_their_host_and_the_apiservice_port() {
    let (_dir, ctx) = fixture().await;
    let err = resolve::resolve(&ctx.registry.store, &svc("backend", 8443));
    assert_eq!(err, Err(ResolveError::NotFound("backend".into())));
    put(
        &ctx,
        "",
        "services",
        json!({"metadata": {"name": "backend", "namespace": "ns"},
        "spec": {"type": "ExternalName", "externalName": "127.0.0.1"}}),
    )
    .await;
    assert_eq!(
        resolve::resolve(&ctx.registry.store, &svc("backend", 8443)).as_deref(),
        Ok("127.0.0.1:8443")
    );
    put(
        &ctx,
        "",
        "services",
        json!({"metadata": {"name": "v6", "namespace": "ns"},
        "spec": {"type": "ExternalName", "externalName": "::1"}}),
    )
    .await;
    assert_eq!(
        resolve::resolve(&ctx.registry.store, &svc("v6", 443)).as_deref(),
        Ok("[::1]:443")
    );
}

#[tokio::test]
async fn cluster_ip_services_resolve_to_a_ready_endpoint_of_the_named_port() {
    let (_dir, ctx) = fixture().await;
    put(
        &ctx,
        "",
        "services",
        json!({"metadata": {"name": "api", "namespace": "ns"},
        "spec": {"ports": [{"name": "https", "port": 443, "targetPort": 6443}]}}),
    )
    .await;
    assert_eq!(
        resolve::resolve(&ctx.registry.store, &svc("api", 444)),
        Err(ResolveError::NoPort {
            port: 444,
            service: "api".into()
        })
    );
    assert_eq!(
        resolve::resolve(&ctx.registry.store, &svc("api", 443)),
        Err(ResolveError::NoEndpoints("api".into()))
    );
    put(&ctx, "discovery.k8s.io", "endpointslices", json!({
        "metadata": {"name": "api-1", "namespace": "ns", "labels": {"kubernetes.io/service-name": "api"}},
        "addressType": "IPv4",
        "endpoints": [{"addresses": ["10.0.0.1"], "conditions": {"ready": false}},
                      {"addresses": ["127.0.0.1"], "conditions": {"ready": true}}],
        "ports": [{"name": "metrics", "port": 9090}, {"name": "https", "port": 6443}]})).await;
    for _ in 0..10 {
        assert_eq!(
            resolve::resolve(&ctx.registry.store, &svc("api", 443)).as_deref(),
            Ok("127.0.0.1:6443")
        );
    }
    assert!(resolve::has_available_endpoint(
        &ctx.registry.store,
        &svc("api", 443),
        "https"
    ));
    assert!(!resolve::has_available_endpoint(
        &ctx.registry.store,
        &svc("api", 443),
        "grpc"
    ));
}

#[tokio::test]
async fn without_endpoint_slices_the_endpoints_stand_in() {
    let (_dir, ctx) = fixture().await;
    put(
        &ctx,
        "",
        "services",
        json!({"metadata": {"name": "old", "namespace": "ns"},
        "spec": {"type": "NodePort", "ports": [{"port": 443}]}}),
    )
    .await;
    put(
        &ctx,
        "",
        "endpoints",
        json!({"metadata": {"name": "old", "namespace": "ns"},
        "subsets": [{"addresses": [{"ip": "127.0.0.2"}], "ports": [{"port": 8443}]}]}),
    )
    .await;
    assert_eq!(
        resolve::resolve(&ctx.registry.store, &svc("old", 443)).as_deref(),
        Ok("127.0.0.2:8443")
    );
    put(
        &ctx,
        "",
        "services",
        json!({"metadata": {"name": "lb", "namespace": "ns"},
        "spec": {"type": "Weird"}}),
    )
    .await;
    assert_eq!(
        resolve::resolve(&ctx.registry.store, &svc("lb", 443)),
        Err(ResolveError::UnsupportedType("Weird".into()))
    );
}

async fn availability(ctx: &Ctx, service: Option<Value>) -> Availability {
    let spec = ApiService::parse(&apiservice("v1.things.example.com", service)).expect("parses");
    check(&ctx.aggregator, &spec).await.expect("decided")
}

#[tokio::test]
async fn availability_names_what_is_missing_in_kube_aggregators_words() {
    let (_dir, ctx) = fixture().await;
    let local = availability(&ctx, None).await;
    assert_eq!(
        (local.status, local.reason, local.message.as_str()),
        ("True", "Local", "Local APIServices are always available")
    );
    let svc_ref = json!({"namespace": "ns", "name": "api", "port": 443});
    let missing = availability(&ctx, Some(svc_ref.clone())).await;
    assert_eq!(
        (missing.status, missing.reason, missing.message.as_str()),
        (
            "False",
            "ServiceNotFound",
            "service/api in \"ns\" is not present"
        )
    );
    put(
        &ctx,
        "",
        "services",
        json!({"metadata": {"name": "api", "namespace": "ns"},
        "spec": {"ports": [{"name": "https", "port": 8443}]}}),
    )
    .await;
    let port = availability(&ctx, Some(svc_ref.clone())).await;
    assert_eq!(
        (port.reason, port.message.as_str()),
        (
            "ServicePortError",
            "service/api in \"ns\" is not listening on port 443"
        )
    );
    let svc_ref = json!({"namespace": "ns", "name": "api", "port": 8443});
    let slices = availability(&ctx, Some(svc_ref.clone())).await;
    assert_eq!(
        (slices.reason, slices.message.as_str()),
        (
            "EndpointsNotFound",
            "cannot find endpointslices for service/api in \"ns\""
        )
    );
    put(&ctx, "discovery.k8s.io", "endpointslices", json!({
        "metadata": {"name": "api-1", "namespace": "ns", "labels": {"kubernetes.io/service-name": "api"}},
        "addressType": "IPv4", "endpoints": [{"addresses": ["127.0.0.1"], "conditions": {"ready": false}}],
        "ports": [{"name": "https", "port": 1}]})).await;
    let ready = availability(&ctx, Some(svc_ref)).await;
    assert_eq!(
        (ready.reason, ready.message.as_str()),
        (
            "MissingEndpoints",
            "endpointslices for service/api in \"ns\" have no addresses with port name \"https\""
        )
    );
}

/// An ExternalName Service `gone` on a port of 127.0.0.1 nothing listens on (bound, then released).
async fn refusing_service(ctx: &Ctx) -> u16 {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("free port")
        .port();
    put(
        ctx,
        "",
        "services",
        json!({"metadata": {"name": "gone", "namespace": "ns"},
        "spec": {"type": "ExternalName", "externalName": "127.0.0.1"}}),
    )
    .await;
    port
}

#[tokio::test]
async fn an_unreachable_backend_fails_the_discovery_check() {
    let (_dir, ctx) = fixture().await;
    let port = refusing_service(&ctx).await;
    let a = availability(
        &ctx,
        Some(json!({"namespace": "ns", "name": "gone", "port": port})),
    )
    .await;
    let url = format!("https://127.0.0.1:{port}/apis/things.example.com/v1");
    assert_eq!((a.status, a.reason), ("False", "FailedDiscoveryCheck"));
    assert_eq!(
        a.message,
        format!(
            "failing or missing response from {url}: Get \"{url}\": dial tcp 127.0.0.1:{port}: connect: connection refused"
        )
    );
}

#[tokio::test]
async fn a_backend_that_refuses_connections_is_answered_as_kube_aggregator_answers() {
    let (_dir, ctx) = fixture().await;
    let port = refusing_service(&ctx).await;
    let spec = ApiService::parse(&apiservice(
        "v1.things.example.com",
        Some(json!({"namespace": "ns", "name": "gone", "port": port})),
    ))
    .expect("parses");
    let transport = super::transport::Transport::build(&spec, ctx.aggregator.front_proxy())
        .map(Arc::new)
        .map_err(|e| e.to_string());
    let target = super::Registered {
        spec,
        available: true,
        transport,
    };
    let request = || {
        use http_body_util::BodyExt;
        http::Request::get("/apis/things.example.com/v1/things")
            .body(
                http_body_util::Empty::new()
                    .map_err(|e| match e {})
                    .boxed_unsync(),
            )
            .expect("request")
    };
    let user = flotilla_registry::auth::UserInfo::admin();
    let failure = super::proxy::send(&ctx.aggregator, &target, request(), &user, None)
        .await
        .expect_err("refused");
    assert_eq!(
        failure.message(),
        format!(
            "error trying to reach service: dial tcp 127.0.0.1:{port}: connect: connection refused"
        )
    );
    let unavailable = super::Registered {
        available: false,
        ..target
    };
    let failure = super::proxy::send(&ctx.aggregator, &unavailable, request(), &user, None)
        .await
        .expect_err("unavailable");
    assert_eq!(failure.message(), "service unavailable");
}
