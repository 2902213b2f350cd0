use super::*;
use k8s_pb::api::apps::v1 as apps;
use k8s_pb::api::coordination::v1 as coord;
use k8s_pb::api::core::v1 as core;
use k8s_pb::api::rbac::v1 as rbac;
use k8s_pb::apimachinery::pkg::api::resource::Quantity;
use k8s_pb::apimachinery::pkg::apis::meta::v1 as meta;
use k8s_pb::apimachinery::pkg::runtime::TypeMeta;
use k8s_pb::apimachinery::pkg::util::intstr::IntOrString;
use serde_json::json;

/// Wraps a message the way client-go's protobuf serializer does.
fn envelope<M: Message>(api_version: &str, kind: &str, msg: &M) -> Vec<u8> {
    let unknown = Unknown {
        type_meta: Some(TypeMeta {
            api_version: Some(api_version.into()),
            kind: Some(kind.into()),
        }),
        raw: Some(msg.encode_to_vec()),
        content_encoding: Some(String::new()),
        content_type: Some(String::new()),
    };
    let mut out = MAGIC.to_vec();
    out.extend(unknown.encode_to_vec());
    out
}

/// ObjectMeta as Go encodes a fresh object: every non-pointer string present but empty, a zero time.
fn go_meta(name: &str, namespace: &str) -> meta::ObjectMeta {
    meta::ObjectMeta {
        name: Some(name.into()),
        generate_name: Some(String::new()),
        namespace: Some(namespace.into()),
        uid: Some(String::new()),
        resource_version: Some(String::new()),
        generation: Some(0),
        creation_timestamp: Some(meta::Time::default()),
        ..Default::default()
    }
}

fn s(v: &str) -> Option<String> {
    Some(v.to_string())
}

#[test]
fn kubectl_create_namespace() {
    let ns = core::Namespace {
        metadata: Some(go_meta("team-a", "")),
        spec: Some(core::NamespaceSpec::default()),
        status: Some(core::NamespaceStatus {
            phase: s(""),
            conditions: vec![],
        }),
    };
    let out = decode(&envelope("v1", "Namespace", &ns));
    assert_eq!(
        out,
        Ok(
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a"}, "spec": {}, "status": {}})
        )
    );
}

#[test]
fn secrets_keep_bytes_and_pointer_fields() {
    let secret = core::Secret {
        metadata: Some(meta::ObjectMeta {
            labels: [("app".to_string(), "web".to_string())].into(),
            ..go_meta("creds", "prod")
        }),
        immutable: Some(false),
        data: [("token".to_string(), b"s3cr\xffet".to_vec())].into(),
        string_data: Default::default(),
        r#type: s("Opaque"),
    };
    let out = decode(&envelope("v1", "Secret", &secret)).unwrap_or_default();
    assert_eq!(
        out,
        json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "creds", "namespace": "prod", "labels": {"app": "web"}},
               "immutable": false, "data": {"token": "czNjcv9ldA=="}, "type": "Opaque"})
    );
}

fn container() -> core::Container {
    core::Container {
        name: s("web"),
        image: s("nginx:1.27"),
        ports: vec![core::ContainerPort {
            container_port: Some(80),
            protocol: s("TCP"),
            host_port: Some(0),
            ..Default::default()
        }],
        resources: Some(core::ResourceRequirements {
            limits: [("cpu".to_string(), Quantity { string: s("500m") })].into(),
            ..Default::default()
        }),
        readiness_probe: Some(core::Probe {
            handler: Some(core::ProbeHandler {
                http_get: Some(core::HttpGetAction {
                    path: s("/healthz"),
                    port: Some(IntOrString {
                        r#type: Some(0),
                        int_val: Some(8080),
                        str_val: s(""),
                    }),
                    ..Default::default()
                }),
                ..Default::default()
            }),
            period_seconds: Some(10),
            timeout_seconds: Some(0),
            ..Default::default()
        }),
        env: vec![core::EnvVar {
            name: s("TOKEN"),
            value: s(""),
            value_from: Some(core::EnvVarSource {
                secret_key_ref: Some(core::SecretKeySelector {
                    local_object_reference: Some(core::LocalObjectReference { name: s("creds") }),
                    key: s("token"),
                    optional: Some(false),
                }),
                ..Default::default()
            }),
        }],
        security_context: Some(core::SecurityContext {
            run_as_user: Some(0),
            privileged: Some(false),
            ..Default::default()
        }),
        stdin: Some(false),
        ..Default::default()
    }
}

#[test]
fn kubectl_create_deployment_with_zero_replicas() {
    let deploy = apps::Deployment {
        metadata: Some(go_meta("web", "prod")),
        spec: Some(apps::DeploymentSpec {
            replicas: Some(0),
            selector: Some(meta::LabelSelector {
                match_labels: [("app".to_string(), "web".to_string())].into(),
                ..Default::default()
            }),
            template: Some(core::PodTemplateSpec {
                metadata: Some(meta::ObjectMeta {
                    labels: [("app".to_string(), "web".to_string())].into(),
                    ..go_meta("", "")
                }),
                spec: Some(core::PodSpec {
                    containers: vec![container()],
                    ..Default::default()
                }),
            }),
            strategy: Some(apps::DeploymentStrategy {
                r#type: s("RollingUpdate"),
                rolling_update: Some(apps::RollingUpdateDeployment {
                    max_surge: Some(IntOrString {
                        r#type: Some(1),
                        int_val: Some(0),
                        str_val: s("25%"),
                    }),
                    max_unavailable: Some(IntOrString {
                        r#type: Some(0),
                        int_val: Some(0),
                        str_val: s(""),
                    }),
                }),
            }),
            min_ready_seconds: Some(0),
            paused: Some(false),
            ..Default::default()
        }),
        status: Some(apps::DeploymentStatus::default()),
    };
    let out = decode(&envelope("apps/v1", "Deployment", &deploy)).unwrap_or_default();
    assert_eq!(
        out,
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "prod"},
            "spec": {
                "replicas": 0,
                "selector": {"matchLabels": {"app": "web"}},
                "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{
                    "name": "web", "image": "nginx:1.27",
                    "ports": [{"containerPort": 80, "protocol": "TCP"}],
                    "resources": {"limits": {"cpu": "500m"}},
                    "readinessProbe": {"httpGet": {"path": "/healthz", "port": 8080}, "periodSeconds": 10},
                    "env": [{"name": "TOKEN", "valueFrom": {"secretKeyRef": {"name": "creds", "key": "token", "optional": false}}}],
                    "securityContext": {"runAsUser": 0, "privileged": false}
                }]}},
                "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 0}}
            },
            "status": {}})
    );
}

#[test]
fn pods_with_volumes_and_tolerations() {
    let pod = core::Pod {
        metadata: Some(go_meta("p", "d")),
        spec: Some(core::PodSpec {
            containers: vec![core::Container {
                name: s("c"),
                image: s("busybox"),
                ..Default::default()
            }],
            volumes: vec![core::Volume {
                name: s("cfg"),
                volume_source: Some(core::VolumeSource {
                    config_map: Some(core::ConfigMapVolumeSource {
                        local_object_reference: Some(core::LocalObjectReference {
                            name: s("settings"),
                        }),
                        default_mode: Some(420),
                        ..Default::default()
                    }),
                    ..Default::default()
                }),
            }],
            tolerations: vec![core::Toleration {
                key: s("k"),
                operator: s("Exists"),
                toleration_seconds: Some(0),
                ..Default::default()
            }],
            termination_grace_period_seconds: Some(0),
            restart_policy: s("Never"),
            ..Default::default()
        }),
        status: None,
    };
    let out = decode(&envelope("v1", "Pod", &pod)).unwrap_or_default();
    assert_eq!(
        out["spec"]["volumes"],
        json!([{"name": "cfg", "configMap": {"name": "settings", "defaultMode": 420}}])
    );
    assert_eq!(
        out["spec"]["tolerations"],
        json!([{"key": "k", "operator": "Exists", "tolerationSeconds": 0}])
    );
    assert_eq!(out["spec"]["terminationGracePeriodSeconds"], 0);
    assert_eq!(out["spec"]["restartPolicy"], "Never");
    assert!(out.get("status").is_none());
}

#[test]
fn leases_rbac_and_delete_options() {
    let lease = coord::Lease {
        metadata: Some(go_meta("leader", "kube-system")),
        spec: Some(coord::LeaseSpec {
            holder_identity: s(""),
            lease_duration_seconds: Some(15),
            renew_time: Some(meta::MicroTime {
                seconds: Some(1_795_000_000),
                nanos: Some(250_000_000),
            }),
            ..Default::default()
        }),
    };
    let out = decode(&envelope("coordination.k8s.io/v1", "Lease", &lease)).unwrap_or_default();
    assert_eq!(
        out["spec"],
        json!({"holderIdentity": "", "leaseDurationSeconds": 15, "renewTime": "2026-11-18T11:06:40.250000Z"})
    );

    let binding = rbac::ClusterRoleBinding {
        metadata: Some(go_meta("karmada:agent", "")),
        subjects: vec![rbac::Subject {
            kind: s("ServiceAccount"),
            api_group: s(""),
            name: s("agent"),
            namespace: s("karmada-system"),
        }],
        role_ref: Some(rbac::RoleRef {
            api_group: s("rbac.authorization.k8s.io"),
            kind: s("ClusterRole"),
            name: s("karmada:agent"),
        }),
    };
    let out = decode(&envelope(
        "rbac.authorization.k8s.io/v1",
        "ClusterRoleBinding",
        &binding,
    ))
    .unwrap_or_default();
    assert_eq!(
        out["subjects"],
        json!([{"kind": "ServiceAccount", "name": "agent", "namespace": "karmada-system"}])
    );
    assert_eq!(
        out["roleRef"],
        json!({"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "karmada:agent"})
    );

    let opts = meta::DeleteOptions {
        grace_period_seconds: Some(0),
        propagation_policy: s("Foreground"),
        preconditions: Some(meta::Preconditions {
            uid: s("1234"),
            resource_version: None,
        }),
        dry_run: vec!["All".to_string()],
        ..Default::default()
    };
    for api_version in ["v1", "apps/v1", "meta.k8s.io/v1"] {
        let out = decode(&envelope(api_version, "DeleteOptions", &opts));
        assert_eq!(
            out,
            Ok(
                json!({"apiVersion": api_version, "kind": "DeleteOptions", "gracePeriodSeconds": 0,
                "preconditions": {"uid": "1234"}, "propagationPolicy": "Foreground", "dryRun": ["All"]})
            )
        );
    }
}

#[test]
fn bad_and_unsupported_bodies() {
    let err = decode(b"{\"kind\":\"Namespace\"}").expect_err("json is not protobuf");
    assert_eq!(err.to_status().code, 400);
    assert!(
        err.to_string()
            .starts_with("provided data does not appear to be a protobuf message")
    );
    let mut garbage = MAGIC.to_vec();
    garbage.extend([0xff, 0xff, 0xff]);
    assert_eq!(decode(&garbage).map_err(|e| e.to_status().code), Err(400));
    let node = core::Node {
        metadata: Some(go_meta("n1", "")),
        ..Default::default()
    };
    let err =
        decode(&envelope("storage.k8s.io/v1", "StorageClass", &node)).expect_err("unsupported");
    let status = err.to_status();
    assert_eq!(
        (status.code, status.reason.as_str()),
        (415, "UnsupportedMediaType")
    );
    assert_eq!(
        status.message,
        "protobuf request bodies are not supported for StorageClass (storage.k8s.io/v1); send application/json instead"
    );
    // A message of the wrong type under a known kind is a decode error, not a crash.
    let mut wrong = MAGIC.to_vec();
    wrong.extend(
        Unknown {
            type_meta: Some(TypeMeta {
                api_version: s("v1"),
                kind: s("Secret"),
            }),
            raw: Some(vec![0x0a, 0x05, 0x01]),
            ..Default::default()
        }
        .encode_to_vec(),
    );
    assert_eq!(decode(&wrong).map_err(|e| e.to_status().code), Err(400));
    assert!(
        supports("apps/v1", "Deployment")
            && supports("v1", "Node")
            && !supports("storage.k8s.io/v1", "StorageClass")
    );
    assert!(
        is_protobuf("application/vnd.kubernetes.protobuf; charset=x")
            && !is_protobuf("application/json")
    );
}

#[test]
fn kubectl_create_token_ingress_and_nodes() {
    use k8s_pb::api::authentication::v1 as authn;
    use k8s_pb::api::networking::v1 as networking;
    let token = authn::TokenRequest {
        metadata: Some(go_meta("agent", "karmada-system")),
        spec: Some(authn::TokenRequestSpec {
            audiences: vec!["https://kubernetes.default.svc".into()],
            expiration_seconds: Some(3600),
            bound_object_ref: None,
        }),
        status: Some(authn::TokenRequestStatus::default()),
    };
    let out = decode(&envelope(
        "authentication.k8s.io/v1",
        "TokenRequest",
        &token,
    ))
    .unwrap_or_default();
    assert_eq!(
        out["spec"],
        json!({"audiences": ["https://kubernetes.default.svc"], "expirationSeconds": 3600})
    );

    let ingress = networking::Ingress {
        metadata: Some(go_meta("web", "prod")),
        spec: Some(networking::IngressSpec {
            rules: vec![networking::IngressRule {
                host: s("web.example.com"),
                ingress_rule_value: Some(networking::IngressRuleValue {
                    http: Some(networking::HttpIngressRuleValue {
                        paths: vec![networking::HttpIngressPath {
                            path: s("/"),
                            path_type: s("Prefix"),
                            backend: Some(networking::IngressBackend {
                                service: Some(networking::IngressServiceBackend {
                                    name: s("web"),
                                    port: Some(networking::ServiceBackendPort {
                                        name: s(""),
                                        number: Some(80),
                                    }),
                                }),
                                resource: None,
                            }),
                        }],
                    }),
                }),
            }],
            ..Default::default()
        }),
        status: None,
    };
    let out = decode(&envelope("networking.k8s.io/v1", "Ingress", &ingress)).unwrap_or_default();
    assert_eq!(
        out["spec"]["rules"],
        json!([{"host": "web.example.com", "http": {"paths": [{"path": "/", "pathType": "Prefix",
            "backend": {"service": {"name": "web", "port": {"number": 80}}}}]}}])
    );

    let node = core::Node {
        metadata: Some(go_meta("n1", "")),
        spec: Some(core::NodeSpec {
            unschedulable: Some(true),
            ..Default::default()
        }),
        status: Some(core::NodeStatus {
            allocatable: [("cpu".to_string(), Quantity { string: s("4") })].into(),
            ..Default::default()
        }),
    };
    let out = decode(&envelope("v1", "Node", &node)).unwrap_or_default();
    assert_eq!(out["spec"], json!({"unschedulable": true}));
    assert_eq!(out["status"], json!({"allocatable": {"cpu": "4"}}));
}

#[test]
fn every_built_in_is_read_from_protobuf_exactly_when_its_entry_names_a_message() {
    let catalog = flotilla_registry::catalog::Catalog::with_builtins();
    for info in catalog.all().into_iter().filter(|i| !i.custom) {
        let meta = if info.namespaced {
            go_meta("probe", "default")
        } else {
            go_meta("probe", "")
        };
        // Every k8s.io/api object message holds its metadata as field 1.
        let body = envelope(
            &info.api_version(),
            &info.kind,
            &core::ConfigMap {
                metadata: Some(meta),
                ..Default::default()
            },
        );
        let named = kinds::find_api_version(&info.api_version(), &info.kind)
            .is_some_and(|b| matches!(b.protobuf, protobuf::Protobuf::Message(_)));
        match decode(&body) {
            Ok(obj) => {
                assert!(
                    named,
                    "{} {} is read without a message",
                    info.api_version(),
                    info.kind
                );
                assert_eq!(obj["metadata"]["name"], "probe");
            }
            Err(ProtobufError::Unsupported { .. }) => {
                assert!(!named, "{} {} is refused", info.api_version(), info.kind);
            }
            Err(e) => panic!("{} {}: {e}", info.api_version(), info.kind),
        }
    }
}
