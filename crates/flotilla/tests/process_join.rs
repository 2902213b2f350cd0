//! What the real `flotilla join`, `register`, `unjoin` and `unregister` processes leave in the member and the
//! control plane (in-process API servers): the ServiceAccounts and token Secrets Karmada's registration creates in
//! the member, the control plane's Secrets owned by the Cluster and named by `secretRef` and
//! `impersonatorSecretRef`, idempotence and token rotation, and their removal.
#![allow(clippy::unwrap_used, clippy::panic)]

use crate::common;

use std::path::Path;
use std::process::Stdio;

use flotilla_api::cluster::v1alpha1::{Cluster, ClusterSyncMode, LocalSecretReference};
use k8s_openapi::api::core::v1::{Namespace, Secret, ServiceAccount};
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding};
use kube::api::Api;
use kube::{Client, Resource, ResourceExt};
use serde_json::json;

use common::{
    ControlPlaneAndMember, Proc, control_plane_and_member, controller_manager, eventually,
    flotilla, free_port,
};

/// Runs `flotilla ARGS` with the control plane's and the member's kubeconfigs and asserts it succeeds.
fn run(args: &[&str], karmada_config: &Path, member_config: &Path) {
    let mut all = args.to_vec();
    all.extend([
        "--kubeconfig",
        karmada_config.to_str().unwrap(),
        "--cluster-kubeconfig",
        member_config.to_str().unwrap(),
    ]);
    let output = flotilla(&all);
    assert!(
        output.status.success(),
        "flotilla {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}

fn system_labelled(object: &impl ResourceExt) -> bool {
    object.labels().get("karmada.io/system").map(String::as_str) == Some("true")
}

fn token(secret: &Secret) -> Vec<u8> {
    secret.data.as_ref().unwrap()["token"].0.clone()
}

fn secret_ref(name: &str) -> Option<LocalSecretReference> {
    Some(LocalSecretReference {
        namespace: "karmada-cluster".into(),
        name: name.into(),
    })
}

/// The member's token Secret of ServiceAccount `karmada-cluster/<account>`, checked to be the one Karmada makes.
async fn member_token_secret(member: &Client, account: &str) -> Secret {
    let accounts: Api<ServiceAccount> = Api::namespaced(member.clone(), "karmada-cluster");
    assert!(
        system_labelled(&accounts.get(account).await.unwrap()),
        "{account}"
    );
    let secret = Api::<Secret>::namespaced(member.clone(), "karmada-cluster")
        .get(account)
        .await
        .unwrap();
    assert_eq!(
        secret.type_.as_deref(),
        Some("kubernetes.io/service-account-token")
    );
    assert_eq!(
        secret
            .annotations()
            .get("kubernetes.io/service-account.name"),
        Some(&account.to_owned())
    );
    secret
}

/// The control plane's Secret `karmada-cluster/<name>`, checked to be labelled and owned by `cluster` alone.
async fn reported_secret(control: &Client, name: &str, cluster: &Cluster) -> Secret {
    let secret = Api::<Secret>::namespaced(control.clone(), "karmada-cluster")
        .get(name)
        .await
        .unwrap();
    assert!(system_labelled(&secret), "{name}");
    assert_eq!(
        secret.owner_references(),
        [cluster.controller_owner_ref(&()).unwrap()],
        "{name}"
    );
    secret
}

/// The resourceVersions of Cluster `name` and of its two Secrets: the same after a registration that wrote nothing.
async fn versions(control: &Client, name: &str) -> [Option<String>; 3] {
    let secrets: Api<Secret> = Api::namespaced(control.clone(), "karmada-cluster");
    let cluster = Api::<Cluster>::all(control.clone())
        .get(name)
        .await
        .unwrap();
    let secret = |name: String| {
        let secrets = secrets.clone();
        async move { secrets.get(&name).await.unwrap().resource_version() }
    };
    [
        cluster.resource_version(),
        secret(name.to_owned()).await,
        secret(format!("{name}-impersonator")).await,
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn join_reports_the_impersonator_and_unjoin_removes_it() {
    let dir = tempfile::tempdir().unwrap();
    // The control plane's server runs as long as it is held.
    let ControlPlaneAndMember {
        control: _control,
        member,
        karmada_config,
        member_config,
        control_client,
        member_client,
        clusters,
    } = control_plane_and_member(dir.path(), "member1").await;
    run(&["join", "member1"], &karmada_config, &member_config);

    let namespace = Api::<Namespace>::all(member_client.clone())
        .get("karmada-cluster")
        .await
        .unwrap();
    assert!(system_labelled(&namespace));
    let issued = member_token_secret(&member_client, "karmada-impersonator").await;
    let cluster = clusters.get("member1").await.unwrap();
    assert_eq!(
        cluster.spec.impersonator_secret_ref,
        secret_ref("member1-impersonator")
    );
    assert_eq!(cluster.spec.secret_ref, secret_ref("member1"));
    let copied = reported_secret(&control_client, "member1-impersonator", &cluster).await;
    assert_eq!(copied.data.as_ref().unwrap().len(), 1, "only `token`");
    assert_eq!(token(&copied), token(&issued));
    let credentials = reported_secret(&control_client, "member1", &cluster).await;
    // The member kubeconfig has a token: no credentials ServiceAccount is needed.
    assert_eq!(token(&credentials), member.admin_token().as_bytes());

    // Joining again writes nothing.
    let before = versions(&control_client, "member1").await;
    run(&["join", "member1"], &karmada_config, &member_config);
    assert_eq!(versions(&control_client, "member1").await, before);
    let secrets: Api<Secret> = Api::namespaced(control_client.clone(), "karmada-cluster");

    // A token rotated in the member (its Secret made again) is carried over by the next join.
    Api::<Secret>::namespaced(member_client.clone(), "karmada-cluster")
        .delete("karmada-impersonator", &Default::default())
        .await
        .unwrap();
    run(&["join", "member1"], &karmada_config, &member_config);
    let rotated = member_token_secret(&member_client, "karmada-impersonator").await;
    assert_ne!(token(&rotated), token(&issued));
    let copied = reported_secret(&control_client, "member1-impersonator", &cluster).await;
    assert_eq!(token(&copied), token(&rotated));

    // The controller manager's unified-auth controller lets the impersonator impersonate system:masters
    // (bound to cluster-admin in the control plane), through a Work applied to the member.
    let port = free_port();
    let manager = Proc(
        controller_manager(&karmada_config, port)
            .args(["--cluster-status-update-frequency", "1s"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let member_roles: Api<ClusterRole> = Api::all(member_client.clone());
    let role = eventually("ClusterRole karmada-impersonator in the member", || async {
        member_roles
            .get_opt("karmada-impersonator")
            .await
            .ok()
            .flatten()
    })
    .await;
    assert_eq!(
        serde_json::to_value(&role.rules).unwrap(),
        // cluster-admin's group, and kube-controller-manager's user (its bootstrap role lists every resource).
        json!([{"verbs": ["impersonate"], "apiGroups": [""], "resources": ["users"],
                "resourceNames": ["system:kube-controller-manager"]},
               {"verbs": ["impersonate"], "apiGroups": [""], "resources": ["groups"],
                "resourceNames": ["system:masters"]}])
    );
    let member_bindings: Api<ClusterRoleBinding> = Api::all(member_client.clone());
    let binding = eventually(
        "ClusterRoleBinding karmada-impersonator in the member",
        || async {
            member_bindings
                .get_opt("karmada-impersonator")
                .await
                .ok()
                .flatten()
        },
    )
    .await;
    let subject = &binding.subjects.unwrap()[0];
    assert_eq!(
        (
            subject.kind.as_str(),
            subject.namespace.as_deref(),
            subject.name.as_str()
        ),
        (
            "ServiceAccount",
            Some("karmada-cluster"),
            "karmada-impersonator"
        )
    );

    // A Push cluster is unjoined, not unregistered.
    let refused = flotilla(&[
        "unregister",
        "member1",
        "--kubeconfig",
        karmada_config.to_str().unwrap(),
    ]);
    assert!(!refused.status.success());
    assert!(
        String::from_utf8_lossy(&refused.stderr)
            .contains("is a Push mode member cluster, please use command `unjoin`"),
        "{}",
        String::from_utf8_lossy(&refused.stderr)
    );
    run(
        &["unjoin", "member1", "--wait", "25"],
        &karmada_config,
        &member_config,
    );
    drop(manager);
    assert!(clusters.get_opt("member1").await.unwrap().is_none());
    for name in ["member1", "member1-impersonator"] {
        assert!(secrets.get_opt(name).await.unwrap().is_none(), "{name}");
    }
    // The Works' member objects went with the Cluster; what join made goes with unjoin.
    assert!(
        member_roles
            .get_opt("karmada-impersonator")
            .await
            .unwrap()
            .is_none()
    );
    let accounts: Api<ServiceAccount> = Api::namespaced(member_client.clone(), "karmada-cluster");
    assert!(
        accounts
            .get_opt("karmada-impersonator")
            .await
            .unwrap()
            .is_none()
    );
    let namespaces: Api<Namespace> = Api::all(member_client.clone());
    eventually("namespace karmada-cluster gone from the member", || async {
        namespaces
            .get_opt("karmada-cluster")
            .await
            .ok()?
            .is_none()
            .then_some(())
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn register_reports_what_karmada_agent_reports_and_unregister_removes_it() {
    let dir = tempfile::tempdir().unwrap();
    // The control plane's server runs as long as it is held.
    let ControlPlaneAndMember {
        control: _control,
        member,
        karmada_config,
        member_config,
        control_client,
        member_client,
        clusters,
    } = control_plane_and_member(dir.path(), "member2").await;
    run(&["register", "member2"], &karmada_config, &member_config);

    let cluster = clusters.get("member2").await.unwrap();
    assert_eq!(cluster.spec.sync_mode, ClusterSyncMode::Pull);
    assert_eq!(cluster.spec.secret_ref, secret_ref("member2"));
    assert_eq!(
        cluster.spec.impersonator_secret_ref,
        secret_ref("member2-impersonator")
    );
    // KubeCredentials: ServiceAccount karmada-member2 with karmadactl's ClusterRole, its token and the member's CA.
    let issued = member_token_secret(&member_client, "karmada-member2").await;
    let role = Api::<ClusterRole>::all(member_client.clone())
        .get("karmada-controller-manager:karmada-member2")
        .await
        .unwrap();
    assert!(system_labelled(&role));
    assert_eq!(
        serde_json::to_value(&role.rules).unwrap(),
        json!([{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]},
               {"verbs": ["get"], "nonResourceURLs": ["*"]}])
    );
    let binding = Api::<ClusterRoleBinding>::all(member_client.clone())
        .get("karmada-controller-manager:karmada-member2")
        .await
        .unwrap();
    assert_eq!(
        binding.role_ref.name,
        "karmada-controller-manager:karmada-member2"
    );
    let subject = &binding.subjects.as_ref().unwrap()[0];
    assert_eq!(
        (
            subject.kind.as_str(),
            subject.namespace.as_deref(),
            subject.name.as_str()
        ),
        ("ServiceAccount", Some("karmada-cluster"), "karmada-member2")
    );
    let credentials = reported_secret(&control_client, "member2", &cluster).await;
    let data = credentials.data.as_ref().unwrap();
    assert_eq!(data["token"].0, token(&issued));
    assert_eq!(data["caBundle"].0, member.ca_pem().as_bytes());
    // KubeImpersonator.
    let impersonator = member_token_secret(&member_client, "karmada-impersonator").await;
    let copied = reported_secret(&control_client, "member2-impersonator", &cluster).await;
    assert_eq!(token(&copied), token(&impersonator));

    // Registering again writes nothing.
    let before = versions(&control_client, "member2").await;
    run(&["register", "member2"], &karmada_config, &member_config);
    assert_eq!(versions(&control_client, "member2").await, before);
    let secrets: Api<Secret> = Api::namespaced(control_client.clone(), "karmada-cluster");

    // `--report-secrets None` reports nothing; a value karmada-agent does not know is refused.
    run(
        &["register", "quiet", "--report-secrets", "None"],
        &karmada_config,
        &member_config,
    );
    let quiet = clusters.get("quiet").await.unwrap();
    assert_eq!(
        (quiet.spec.secret_ref, quiet.spec.impersonator_secret_ref),
        (None, None)
    );
    assert!(secrets.get_opt("quiet").await.unwrap().is_none());
    assert!(
        secrets
            .get_opt("quiet-impersonator")
            .await
            .unwrap()
            .is_none()
    );
    let refused = flotilla(&[
        "register",
        "typo",
        "--report-secrets",
        "KubeCredential",
        "--kubeconfig",
        karmada_config.to_str().unwrap(),
        "--cluster-kubeconfig",
        member_config.to_str().unwrap(),
    ]);
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains("unknown secret \"KubeCredential\" to report"),
        "{stderr}"
    );
    assert!(clusters.get_opt("typo").await.unwrap().is_none());

    // No controller manager runs, so nothing holds the Clusters back.
    run(
        &["unregister", "member2", "--wait", "10"],
        &karmada_config,
        &member_config,
    );
    assert!(clusters.get_opt("member2").await.unwrap().is_none());
    for name in ["member2", "member2-impersonator"] {
        assert!(secrets.get_opt(name).await.unwrap().is_none(), "{name}");
    }
    let roles: Api<ClusterRole> = Api::all(member_client.clone());
    assert!(
        roles
            .get_opt("karmada-controller-manager:karmada-member2")
            .await
            .unwrap()
            .is_none()
    );
    let bindings: Api<ClusterRoleBinding> = Api::all(member_client.clone());
    assert!(
        bindings
            .get_opt("karmada-controller-manager:karmada-member2")
            .await
            .unwrap()
            .is_none()
    );
    let accounts: Api<ServiceAccount> = Api::namespaced(member_client.clone(), "karmada-cluster");
    for account in ["karmada-member2", "karmada-impersonator"] {
        assert!(
            accounts.get_opt(account).await.unwrap().is_none(),
            "{account}"
        );
    }
}
