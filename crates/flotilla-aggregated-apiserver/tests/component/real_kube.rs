//! Behind a real kube-apiserver's aggregator: registration until Available (taking over kube-aggregator's own
//! registration of the CRD's version), discovery preferring v1alpha1, Cluster CRUD through the APIService, the
//! caller's identity reaching the control plane's admission (impersonated) and a member (proxied), kube's
//! 403 wording for a denied proxy, and upgrades (`real_kube_upgrade`).
//!
//! Needs a kube-apiserver started with a front proxy (`--requestheader-client-ca-file`,
//! `--requestheader-allowed-names=front-proxy-client`, `--requestheader-username-headers=X-Remote-User`,
//! `--requestheader-group-headers=X-Remote-Group`, `--requestheader-extra-headers-prefix=X-Remote-Extra-`,
//! `--proxy-client-cert-file`, `--proxy-client-key-file`, and no `--enable-aggregator-routing`, which would
//! refuse the ExternalName Service) and an admin kubeconfig in `FLOTILLA_AGGAPI_KUBECONFIG`.

use std::path::PathBuf;
use std::time::Duration;

use flotilla_aggregated_apiserver::names;
use flotilla_aggregated_apiserver::register::{self, Endpoint};
use flotilla_api::cluster::STORAGE_DEPRECATION_WARNING;
use flotilla_api::cluster::v1alpha1::{Cluster, ClusterSpec, ClusterSyncMode};
use k8s_openapi::api::admissionregistration::v1::{
    ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding,
};
use k8s_openapi::api::core::v1::{Secret, Service};
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, PolicyRule, RoleRef, Subject};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use k8s_openapi::kube_aggregator::pkg::apis::apiregistration::v1::APIService;
use kube::api::{DeleteParams, ObjectMeta, Patch, PatchParams, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Api, Client, ResourceExt};
use serde_json::json;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use flotilla_testing::kubectl::{header, kubectl_bins, kubectl_split, must_quiet, row};

use crate::member::{Behaviour, FakeMember, register as register_cluster};
use crate::support::{KubectlWatch, eventually, eventually_within};

const PROXY_PATH: &str = "/apis/cluster.karmada.io/v1alpha1/clusters/fake/proxy/api/v1/namespaces";

async fn client(path: &PathBuf, impersonate: Option<(&str, &[&str])>) -> Client {
    let kubeconfig = Kubeconfig::read_from(path).expect("the kubeconfig reads");
    let mut config =
        kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
            .await
            .expect("a configuration");
    if let Some((user, groups)) = impersonate {
        config.auth_info.impersonate = Some(user.to_owned());
        config.auth_info.impersonate_groups =
            Some(groups.iter().map(|g| (*g).to_owned()).collect());
    }
    Client::try_from(config).expect("a client")
}

/// Deletes everything the test writes but the CRDs, whether it is there or not.
async fn remove_what_the_test_writes(admin: &Client) {
    let delete = DeleteParams::default();
    let _ = Api::<APIService>::all(admin.clone())
        .delete(names::API_SERVICE_NAME, &delete)
        .await;
    let _ = Api::<Service>::namespaced(admin.clone(), names::SERVICE_NAMESPACE)
        .delete(names::SERVICE_NAME, &delete)
        .await;
    let secrets = Api::<Secret>::namespaced(admin.clone(), "karmada-cluster");
    let clusters = std::iter::once("fake").chain(crate::real_kube_upgrade::CLUSTERS);
    for cluster in clusters {
        for name in [cluster.to_owned(), format!("{cluster}-impersonator")] {
            let _ = secrets.delete(&name, &delete).await;
        }
    }
    if let Ok(stored) = crate::clusters::on_control_plane(admin, "storage")
        .list(&Default::default())
        .await
    {
        for cluster in stored {
            let _ = crate::clusters::on_control_plane(admin, "storage")
                .delete(&cluster.name_any(), &delete)
                .await;
        }
    }
    let _ = Api::<ValidatingAdmissionPolicyBinding>::all(admin.clone())
        .delete("no-clusters-for-tom", &delete)
        .await;
    let _ = Api::<ValidatingAdmissionPolicy>::all(admin.clone())
        .delete("no-clusters-for-tom", &delete)
        .await;
    let _ = Api::<ClusterRoleBinding>::all(admin.clone())
        .delete("fake-proxy", &delete)
        .await;
    let _ = Api::<ClusterRole>::all(admin.clone())
        .delete("fake-proxy", &delete)
        .await;
}

async fn proxied(client: &Client) -> Result<String, kube::Error> {
    let request = http::Request::get(PROXY_PATH)
        .body(Vec::new())
        .expect("a request");
    client.request_text(request).await
}

// Several threads: kubectl runs blocking while the server in this process answers the aggregator.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs a kube-apiserver with a front proxy; its admin kubeconfig in FLOTILLA_AGGAPI_KUBECONFIG"]
async fn behind_a_real_kube_aggregator() {
    let path = PathBuf::from(
        std::env::var("FLOTILLA_AGGAPI_KUBECONFIG").expect("FLOTILLA_AGGAPI_KUBECONFIG"),
    );
    let admin = client(&path, None).await;
    // What an earlier run that failed left behind.
    remove_what_the_test_writes(&admin).await;
    let crds: Api<CustomResourceDefinition> = Api::all(admin.clone());
    for crd in flotilla_api::crds::all() {
        crds.patch(
            &crd.name_any(),
            &PatchParams::apply("test").force(),
            &Patch::Apply(&crd),
        )
        .await
        .expect("a CRD is applied");
    }
    eventually("the storage version to be served", || async {
        admin
            .list_api_group_resources("cluster.karmada.io/storage")
            .await
            .ok()
    })
    .await;

    let listener = TcpListener::bind("127.0.0.1:0").await.expect("a port");
    let port = listener.local_addr().expect("an address").port();
    let generated = flotilla_webhook::generate_self_signed(&["127.0.0.1", names::SERVICE_HOST])
        .expect("a certificate");
    let shutdown = CancellationToken::new();
    let served = {
        let (identity, client, stop) =
            (generated.identity.clone(), admin.clone(), shutdown.clone());
        tokio::spawn(async move {
            flotilla_aggregated_apiserver::serve(listener, &identity, client, stop).await
        })
    };
    let endpoint = Endpoint::External {
        host: "127.0.0.1".into(),
        port,
    };
    register::register(&admin, &endpoint, &generated.ca_pem)
        .await
        .expect("registered");
    register::register(&admin, &endpoint, &generated.ca_pem)
        .await
        .expect("registering again converges");
    register::wait_available(&admin, Duration::from_secs(60))
        .await
        .expect("the APIService is Available");

    // The aggregator prefers v1alpha1 to the CRD's storage version.
    let groups = admin.list_api_groups().await.expect("groups");
    let group = groups
        .groups
        .iter()
        .find(|g| g.name == "cluster.karmada.io")
        .expect("the group");
    assert_eq!(
        group.preferred_version.as_ref().map(|v| v.version.as_str()),
        Some("v1alpha1")
    );

    // Clusters through the APIService land in the CRD.
    let member = FakeMember::start(Behaviour::default()).await;
    register_cluster(
        &admin,
        "fake",
        &member.url,
        &member.ca_pem,
        Some("imp-fake"),
        |_| {},
    )
    .await;
    let clusters: Api<Cluster> = Api::all(admin.clone());
    let fake = clusters
        .get("fake")
        .await
        .expect("read through the aggregator");
    assert_eq!(fake.spec.api_endpoint, member.url);
    let other = Cluster::new(
        "made-through-v1alpha1",
        ClusterSpec {
            sync_mode: ClusterSyncMode::Pull,
            ..ClusterSpec::default()
        },
    );
    clusters
        .create(&PostParams::default(), &other)
        .await
        .expect("created through the aggregator");
    let stored = crate::clusters::on_control_plane(&admin, "storage")
        .get("made-through-v1alpha1")
        .await
        .expect("in the CRD");
    assert_eq!(stored.data["spec"]["syncMode"], "Pull");

    // kube-apiserver authorizes the proxy itself before its aggregator passes the request on (and this server
    // asks again, as every aggregated server does): the denial reads the same either way.
    let tom = client(&path, Some(("tom", &["devs"]))).await;
    let denied = proxied(&tom).await.expect_err("tom may not proxy");
    let kube::Error::Api(status) = denied else {
        panic!("{denied}")
    };
    assert_eq!(status.code, 403);
    assert_eq!(
        status.message,
        "clusters.cluster.karmada.io \"fake\" is forbidden: User \"tom\" cannot get resource \"clusters/proxy\" in API \
         group \"cluster.karmada.io\" at the cluster scope"
    );
    let rule = |resource: &str, verb: &str, name: Option<&str>| PolicyRule {
        api_groups: Some(vec!["cluster.karmada.io".into()]),
        resources: Some(vec![resource.into()]),
        resource_names: name.map(|n| vec![n.into()]),
        verbs: vec![verb.into()],
        ..PolicyRule::default()
    };
    let role = ClusterRole {
        metadata: ObjectMeta {
            name: Some("fake-proxy".into()),
            ..ObjectMeta::default()
        },
        rules: Some(vec![
            rule("clusters/proxy", "get", Some("fake")),
            rule("clusters", "create", None),
        ]),
        ..ClusterRole::default()
    };
    let binding = ClusterRoleBinding {
        metadata: ObjectMeta {
            name: Some("fake-proxy".into()),
            ..ObjectMeta::default()
        },
        role_ref: RoleRef {
            api_group: Some("rbac.authorization.k8s.io".into()),
            kind: "ClusterRole".into(),
            name: "fake-proxy".into(),
        },
        subjects: Some(vec![Subject {
            kind: "User".into(),
            name: "tom".into(),
            api_group: Some("rbac.authorization.k8s.io".into()),
            ..Subject::default()
        }]),
    };
    let apply = PatchParams::apply("test").force();
    Api::<ClusterRole>::all(admin.clone())
        .patch("fake-proxy", &apply, &Patch::Apply(&role))
        .await
        .expect("role");
    Api::<ClusterRoleBinding>::all(admin.clone())
        .patch("fake-proxy", &apply, &Patch::Apply(&binding))
        .await
        .expect("binding");

    // The caller's identity reaches the control plane's admission through the pass-through: a policy refusing
    // tom's Clusters refuses the one tom creates through v1alpha1, which the aggregator's RBAC allows.
    let policy: ValidatingAdmissionPolicy = serde_json::from_value(json!({
        "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": "no-clusters-for-tom"},
        "spec": {
            "failurePolicy": "Fail",
            "matchConstraints": {"resourceRules": [{"apiGroups": ["cluster.karmada.io"], "apiVersions": ["*"],
                "operations": ["CREATE"], "resources": ["clusters"]}]},
            "validations": [{"expression": "request.userInfo.username != 'tom'", "message": "tom may not create clusters"}],
        },
    }))
    .expect("a policy");
    let policy_binding: ValidatingAdmissionPolicyBinding = serde_json::from_value(json!({
        "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": "no-clusters-for-tom"},
        "spec": {"policyName": "no-clusters-for-tom", "validationActions": ["Deny"]},
    }))
    .expect("a binding");
    Api::<ValidatingAdmissionPolicy>::all(admin.clone())
        .patch("no-clusters-for-tom", &apply, &Patch::Apply(&policy))
        .await
        .expect("policy");
    Api::<ValidatingAdmissionPolicyBinding>::all(admin.clone())
        .patch(
            "no-clusters-for-tom",
            &apply,
            &Patch::Apply(&policy_binding),
        )
        .await
        .expect("policy binding");
    let toms = Cluster::new(
        "toms",
        ClusterSpec {
            sync_mode: ClusterSyncMode::Push,
            ..ClusterSpec::default()
        },
    );
    let refused = eventually_within(
        Duration::from_secs(40),
        "the policy to refuse tom",
        || async {
            match Api::<Cluster>::all(tom.clone())
                .create(&PostParams::default(), &toms)
                .await
            {
                Err(kube::Error::Api(status))
                    if status.message.contains("tom may not create clusters") =>
                {
                    Some(status)
                }
                Ok(_) => {
                    // Created before the policy took effect: try again.
                    let _ = clusters.delete("toms", &DeleteParams::default()).await;
                    None
                }
                Err(_) => None,
            }
        },
    )
    .await;
    assert_eq!(refused.code, 422, "{}", refused.message);

    // The proxy, now allowed, reaches the member as tom.
    eventually_within(
        Duration::from_secs(40),
        "tom's proxy to be allowed",
        || async { proxied(&tom).await.ok() },
    )
    .await;
    let seen = member.requests().pop().expect("the member was called");
    assert_eq!(seen.path, "/api/v1/namespaces");
    assert_eq!(seen.values("authorization"), ["Bearer imp-fake"]);
    assert_eq!(seen.values("impersonate-user"), ["tom"]);
    assert_eq!(seen.values("impersonate-group"), ["devs"]);

    // Upgrades (exec) through kube-aggregator and this server.
    crate::real_kube_upgrade::check(&admin, &tom, &path).await;

    // kubectl, as a user runs it against the control plane.
    let dir = tempfile::tempdir().expect("a directory");
    let dotted = dir.path().join("dotted.yaml");
    std::fs::write(
        &dotted,
        "apiVersion: cluster.karmada.io/v1alpha1\nkind: Cluster\nmetadata: {name: a.b}\nspec: {syncMode: Push, apiEndpoint: 'https://x'}\n",
    )
    .expect("written");
    for (index, bin) in kubectl_bins().into_iter().enumerate() {
        let table = must_quiet(&bin, &path, &["get", "clusters"]);
        assert_eq!(
            header(&table),
            ["NAME", "VERSION", "MODE", "READY", "AGE"],
            "{table}"
        );
        // Empty cells (no status yet) leave only the filled ones in a row.
        assert_eq!(row(&table, "fake")[1..2], ["Push"], "{table}");
        // Karmada's Table: READY Unknown without a Ready condition, and the wide columns.
        assert_eq!(row(&table, "fake")[2], "Unknown", "{table}");
        let wide = must_quiet(&bin, &path, &["get", "clusters", "-o", "wide"]);
        assert_eq!(header(&wide), crate::tables::wide_header(), "{wide}");
        let fake_row = row(&wide, "fake");
        assert_eq!(
            [&fake_row[1..3], &fake_row[4..]].concat(),
            [
                "Push",
                "Unknown",
                "<none>",
                "<none>",
                "<none>",
                member.url.as_str(),
                "<none>"
            ],
            "{wide}"
        );
        // The storage version warns whoever reaches it (kube-apiserver sends the CRD's deprecation warning);
        // through v1alpha1 kubectl stays quiet (`must_quiet` above).
        let (code, _, stderr) =
            kubectl_split(&bin, &path, &["get", "clusters.storage.cluster.karmada.io"]);
        assert_eq!(code, Some(0), "{stderr}");
        assert!(
            stderr.contains(&format!("Warning: {STORAGE_DEPRECATION_WARNING}")),
            "{stderr}"
        );
        // Karmada's validation refuses a name `karmada-es-<name>` cannot be made of.
        let (code, _, stderr) = kubectl_split(
            &bin,
            &path,
            &["create", "-f", dotted.to_str().unwrap_or_default()],
        );
        assert_eq!(code, Some(1), "{stderr}");
        assert_eq!(
            stderr.trim(),
            "The Cluster \"a.b\" is invalid: metadata.name: Invalid value: \"a.b\": must not contain dots"
        );
        // `kubectl get clusters -w` through kube-aggregator: Table events as they happen.
        let mut watch = KubectlWatch::clusters(&bin, &path);
        assert_eq!(
            watch.next().await,
            ["EVENT", "NAME", "VERSION", "MODE", "READY", "AGE"],
            "{bin}"
        );
        while watch.next().await[..2] != ["ADDED", "fake"] {}
        let version = format!("v1.37.{}", 20 + index);
        clusters
            .patch_status(
                "fake",
                &PatchParams::default(),
                &Patch::Merge(json!({"status": {"kubernetesVersion": version}})),
            )
            .await
            .expect("fake's status is written");
        let modified = loop {
            let line = watch.next().await;
            if line[..2] == ["MODIFIED", "fake"] {
                break line;
            }
        };
        assert_eq!(
            modified[2..5],
            [version.as_str(), "Push", "Unknown"],
            "{bin}"
        );
        drop(watch);
        clusters
            .patch_status(
                "fake",
                &PatchParams::default(),
                &Patch::Merge(json!({"status": {"kubernetesVersion": null}})),
            )
            .await
            .expect("fake's version is removed again");
        let yaml = must_quiet(&bin, &path, &["get", "clusters", "fake", "-o", "yaml"]);
        assert!(
            yaml.contains("apiVersion: cluster.karmada.io/v1alpha1"),
            "{yaml}"
        );
        assert!(!yaml.contains("cluster.karmada.io/storage"), "{yaml}");
        let resources = must_quiet(
            &bin,
            &path,
            &["api-resources", "--api-group", "cluster.karmada.io"],
        );
        assert!(
            resources
                .lines()
                .any(|l| l.starts_with("clusters ") && l.contains("cluster.karmada.io/v1alpha1")),
            "{resources}"
        );
        let explained = must_quiet(&bin, &path, &["explain", "clusters.spec.apiEndpoint"]);
        assert!(explained.contains("VERSION:    v1alpha1"), "{explained}");
        let raw = must_quiet(&bin, &path, &["get", "--raw", PROXY_PATH]);
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&raw).ok(),
            Some(json!({"echo": "/api/v1/namespaces"}))
        );
    }

    // Leave the control plane as it was: no APIService routing to a server that is gone.
    remove_what_the_test_writes(&admin).await;
    shutdown.cancel();
    served
        .await
        .expect("the server task ends")
        .expect("the server stops cleanly");
}
