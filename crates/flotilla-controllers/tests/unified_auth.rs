//! The unified-auth controller against in-process API servers: a Cluster with `impersonatorSecretRef` gets the
//! two impersonation Works, exactly as Karmada writes them, following the control plane's proxy RBAC
//! (`cluster-admin`, bound to `system:masters`, counts from the start); a ClusterRoleBinding that gains a subject
//! updates them; a Cluster without `impersonatorSecretRef` gets nothing.

#![allow(clippy::unwrap_used, clippy::panic)]

use crate::support;

use flotilla_api::cluster::v1alpha1::{Cluster, LocalSecretReference};
use flotilla_api::work::v1alpha1::Work;
use k8s_openapi::api::events::v1::Event;
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding};
use kube::api::{Api, Patch, PatchParams, PostParams};
use kube::{Resource, ResourceExt};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use support::{Env, client_for, eventually, fast_options, register, register_with, start_server};

/// Karmada's `names.GenerateWorkName("ClusterRole", "karmada-impersonator", "")`.
const ROLE_WORK: &str = "karmada-impersonator-7cbb6bd5c9";
/// Karmada's `names.GenerateWorkName("ClusterRoleBinding", "karmada-impersonator", "")`.
const BINDING_WORK: &str = "karmada-impersonator-84f8c8f8c6";

/// The manifest Karmada's `CreateOrUpdateWork` writes for `object` into Work `work` of `karmada-es-member1`,
/// with the Work's permanent id `id`.
fn karmada_manifest(mut object: Value, work: &str, id: &str) -> Value {
    object["metadata"]["labels"] = json!({
        "karmada.io/system": "true", "karmada.io/managed": "true", "work.karmada.io/permanent-id": id,
    });
    object["metadata"]["annotations"] = json!({
        "resourcetemplate.karmada.io/uid": "",
        "work.karmada.io/name": work,
        "work.karmada.io/namespace": "karmada-es-member1",
        "resourcetemplate.karmada.io/managed-annotations": "resourcetemplate.karmada.io/managed-annotations,\
            resourcetemplate.karmada.io/managed-labels,resourcetemplate.karmada.io/uid,work.karmada.io/name,\
            work.karmada.io/namespace",
        "resourcetemplate.karmada.io/managed-labels": "karmada.io/managed,karmada.io/system,work.karmada.io/permanent-id",
    });
    object
}

fn manifest(work: &Work) -> Value {
    work.spec.workload.manifests[0].0.clone()
}

fn impersonator_role(rules: Value) -> Value {
    json!({
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
        "metadata": {"name": "karmada-impersonator"},
        "rules": rules,
    })
}

/// kube-apiserver's user of kube-controller-manager, whose bootstrap role lists and watches everything.
const KCM: &str = "system:kube-controller-manager";

fn impersonate(resource: &str, names: &[&str]) -> Value {
    json!({"verbs": ["impersonate"], "apiGroups": [""], "resources": [resource], "resourceNames": names})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn impersonation_works_follow_the_control_planes_proxy_rbac() {
    // One worker: reconciles take turns in request order, so once the effect of a later request shows, every
    // reconcile requested before it has finished.
    let mut options = fast_options();
    options.workers = 1;
    let env = Env::start_with(0, options).await;
    let mut dirs = Vec::new();
    let member = start_server(&mut dirs).await;
    let member_client = client_for(&member, "member1").await;
    // Both Clusters reach the same API server; only member1 has an impersonator.
    register(&env.client, "member0", &member).await;
    register_with(&env.client, "member1", &member, |spec| {
        spec.impersonator_secret_ref = Some(LocalSecretReference {
            namespace: "karmada-cluster".into(),
            name: "member1-impersonator".into(),
        });
    })
    .await;
    let cluster = Api::<Cluster>::all(env.client.clone())
        .get("member1")
        .await
        .unwrap();
    let works: Api<Work> = Api::namespaced(env.client.clone(), "karmada-es-member1");

    // The embedded server, as kube-apiserver, binds cluster-admin (every group, every resource) to system:masters,
    // and system:kube-controller-manager (list and watch of every group and resource) to its user: Karmada matches
    // `clusters/proxy` whatever the verbs, so both count.
    let role_work = eventually("the ClusterRole Work of member1", || async {
        works.get_opt(ROLE_WORK).await.ok().flatten()
    })
    .await;
    let binding_work = eventually("the ClusterRoleBinding Work of member1", || async {
        works.get_opt(BINDING_WORK).await.ok().flatten()
    })
    .await;
    for work in [&role_work, &binding_work] {
        assert_eq!(work.finalizers(), ["karmada.io/execution-controller"]);
        assert_eq!(
            work.owner_references(),
            [cluster.controller_owner_ref(&()).unwrap()]
        );
        let labels: Vec<&String> = work.labels().keys().collect();
        assert_eq!(labels, ["work.karmada.io/permanent-id"]);
        assert!(work.annotations().is_empty());
    }
    let id = |work: &Work| work.labels()["work.karmada.io/permanent-id"].clone();
    assert_eq!(
        manifest(&role_work),
        karmada_manifest(
            impersonator_role(json!([
                impersonate("users", &[KCM]),
                impersonate("groups", &["system:masters"])
            ])),
            ROLE_WORK,
            &id(&role_work)
        )
    );
    assert_eq!(
        manifest(&binding_work),
        karmada_manifest(
            json!({
                "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
                "metadata": {"name": "karmada-impersonator"},
                "subjects": [{"kind": "ServiceAccount", "namespace": "karmada-cluster", "name": "karmada-impersonator"}],
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "karmada-impersonator"},
            }),
            BINDING_WORK,
            &id(&binding_work)
        )
    );
    // The execution controller applies them to the member, and the Cluster gets Karmada's Event.
    let applied: Api<ClusterRole> = Api::all(member_client.clone());
    eventually("ClusterRole karmada-impersonator in the member", || async {
        applied.get_opt("karmada-impersonator").await.ok().flatten()
    })
    .await;
    let events: Api<Event> = Api::namespaced(env.client.clone(), "default");
    eventually(
        "SyncImpersonationConfigSucceed on Cluster member1",
        || async {
            let list = events.list(&Default::default()).await.ok()?;
            list.items.into_iter().find(|e| {
                e.reason.as_deref() == Some("SyncImpersonationConfigSucceed")
                    && e.regarding.as_ref().and_then(|r| r.name.as_deref()) == Some("member1")
                    && e.note.as_deref() == Some("Sync impersonation config succeed.")
                    && e.type_.as_deref() == Some("Normal")
            })
        },
    )
    .await;

    // A ClusterRole granting the proxy of member1 alone, and a binding of it that gains a subject.
    let roles: Api<ClusterRole> = Api::all(env.client.clone());
    let role: ClusterRole = serde_json::from_value(json!({
        "metadata": {"name": "proxy-member1"},
        "rules": [{"apiGroups": ["cluster.karmada.io"], "resources": ["clusters/proxy"],
                   "resourceNames": ["member1"], "verbs": ["get"]}],
    }))
    .unwrap();
    roles.create(&PostParams::default(), &role).await.unwrap();
    let bindings: Api<ClusterRoleBinding> = Api::all(env.client.clone());
    let binding: ClusterRoleBinding = serde_json::from_value(json!({
        "metadata": {"name": "proxy-member1"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "proxy-member1"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "tom"}],
    }))
    .unwrap();
    bindings
        .create(&PostParams::default(), &binding)
        .await
        .unwrap();
    let rules_of = |work: Work| manifest(&work)["rules"].clone();
    eventually("tom in member1's impersonation rules", || async {
        let work = works.get(ROLE_WORK).await.ok()?;
        (rules_of(work)
            == json!([
                impersonate("users", &[KCM, "tom"]),
                impersonate("groups", &["system:masters"])
            ]))
        .then_some(())
    })
    .await;
    let gained = json!({"subjects": [
        {"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "tom"},
        {"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "ops"},
        {"kind": "ServiceAccount", "namespace": "ci", "name": "deployer"},
    ]});
    bindings
        .patch(
            "proxy-member1",
            &PatchParams::default(),
            &Patch::Merge(&gained),
        )
        .await
        .unwrap();
    let expected = json!([
        impersonate("users", &[KCM, "tom"]),
        impersonate("serviceaccounts", &["deployer"]),
        impersonate("groups", &["ops", "system:masters"]),
    ]);
    eventually(
        "the gained subjects in member1's impersonation rules",
        || async { (rules_of(works.get(ROLE_WORK).await.ok()?) == expected).then_some(()) },
    )
    .await;
    eventually("the member's ClusterRole to follow", || async {
        let role = applied.get("karmada-impersonator").await.ok()?;
        (serde_json::to_value(role.rules).ok()? == expected).then_some(())
    })
    .await;

    // member0 has no impersonatorSecretRef. A role naming it asks for its reconcile, then a role naming member1
    // (seen later by the same informer) asks for member1's; with one worker taking requests in order, member0's
    // reconcile is over once member1's Work shows zoe, and it wrote nothing.
    let zoe: ClusterRoleBinding = serde_json::from_value(json!({
        "metadata": {"name": "proxy-zoe"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "proxy-zoe"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "zoe"}],
    }))
    .unwrap();
    bindings.create(&PostParams::default(), &zoe).await.unwrap();
    let proxy_role = |name: &str, cluster: &str| -> ClusterRole {
        serde_json::from_value(json!({
            "metadata": {"name": name},
            "rules": [{"apiGroups": ["*"], "resources": ["clusters/proxy"], "resourceNames": [cluster],
                       "verbs": ["*"]}],
        }))
        .unwrap()
    };
    roles
        .create(
            &PostParams::default(),
            &proxy_role("proxy-member0", "member0"),
        )
        .await
        .unwrap();
    roles
        .create(&PostParams::default(), &proxy_role("proxy-zoe", "member1"))
        .await
        .unwrap();
    eventually("zoe in member1's impersonation rules", || async {
        let rules = rules_of(works.get(ROLE_WORK).await.ok()?);
        (rules[0] == impersonate("users", &[KCM, "tom", "zoe"])).then_some(())
    })
    .await;
    let member0_works: Api<Work> = Api::namespaced(env.client.clone(), "karmada-es-member0");
    let names: Vec<String> = member0_works
        .list(&Default::default())
        .await
        .unwrap()
        .iter()
        .map(ResourceExt::name_any)
        .collect();
    assert!(
        !names.iter().any(|n| n == ROLE_WORK || n == BINDING_WORK),
        "member0 has no impersonatorSecretRef, yet got {names:?}"
    );

    // A binding deleted takes its subjects away; the unchanged ClusterRoleBinding Work is not rewritten.
    let generation = |work: Work| work.metadata.generation;
    let before = generation(works.get(BINDING_WORK).await.unwrap());
    bindings
        .delete("proxy-zoe", &Default::default())
        .await
        .unwrap();
    eventually("zoe gone from member1's impersonation rules", || async {
        (rules_of(works.get(ROLE_WORK).await.ok()?) == expected).then_some(())
    })
    .await;
    assert_eq!(generation(works.get(BINDING_WORK).await.unwrap()), before);
    env.stop().await;
    member.shutdown().await;
}
