//! `flotilla up`'s Pull member: member3 is registered with `syncMode: Pull` and the Secrets karmada-agent reports
//! by default (its credentials and its impersonator's token), and its
//! in-process agent reports it Ready and renews its Lease; a data dir whose member3 was registered in Push mode
//! (as before member3 became Pull) converges to one Pull Cluster on the next start.
#![allow(clippy::unwrap_used, clippy::panic)]

use crate::common;

use flotilla_api::cluster::v1alpha1::{Cluster, ClusterSyncMode, LocalSecretReference};
use k8s_openapi::api::coordination::v1::Lease;
use kube::ResourceExt;
use kube::api::{Api, Patch, PatchParams};
use serde_json::json;

use common::{client, eventually, up};

fn ready(cluster: &Cluster) -> bool {
    cluster.status.as_ref().is_some_and(|s| {
        s.conditions
            .iter()
            .any(|c| c.type_ == "Ready" && c.status == "True")
    })
}

/// member3's Cluster once it is Pull, Ready and has its Lease renewed by the agent.
async fn served_by_its_agent(karmada: &kube::Client) -> Cluster {
    let clusters: Api<Cluster> = Api::all(karmada.clone());
    let leases: Api<Lease> = Api::namespaced(karmada.clone(), "karmada-cluster");
    eventually(
        "member3 to be a Ready Pull cluster with a Lease",
        || async {
            let cluster = clusters.get("member3").await.ok()?;
            let lease = leases.get("member3").await.ok()?;
            let renewed = lease.spec?.renew_time.is_some();
            let reported = |reference: &Option<LocalSecretReference>, name: &str| {
                reference
                    .as_ref()
                    .is_some_and(|r| r.namespace == "karmada-cluster" && r.name == name)
            };
            (cluster.spec.sync_mode == ClusterSyncMode::Pull
                && reported(&cluster.spec.secret_ref, "member3")
                && reported(
                    &cluster.spec.impersonator_secret_ref,
                    "member3-impersonator",
                )
                && ready(&cluster)
                && renewed)
                .then_some(cluster)
        },
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn up_serves_member3_in_pull_mode_and_converges_from_a_push_registration() {
    let dir = tempfile::tempdir().unwrap();
    let first = up(dir.path(), &[]);
    let progress = first.progress();
    assert!(
        progress
            .iter()
            .any(|l| l.contains("registered member3 as a Pull cluster")),
        "{progress:?}"
    );
    assert!(
        progress
            .iter()
            .any(|l| l.contains("registered member1, member2 as Push clusters")),
        "{progress:?}"
    );
    let karmada = client(&first.karmada, "karmada-apiserver").await;
    let clusters: Api<Cluster> = Api::all(karmada.clone());
    let member3 = served_by_its_agent(&karmada).await;
    assert!(
        !member3.spec.id.is_empty(),
        "spec.id is member3's kube-system uid"
    );
    assert_eq!(
        clusters.get("member1").await.unwrap().spec.sync_mode,
        ClusterSyncMode::Push
    );
    // The members' kubeconfig still reaches member3 directly.
    let direct = client(&first.members, "member3").await;
    assert_eq!(
        flotilla_join::member_id(&direct).await.unwrap(),
        member3.spec.id
    );

    // What an earlier Flotilla left: member3 registered in Push mode, with another credentials reference.
    // A merge patch: the controllers keep updating the Cluster, a replace could lose the race.
    clusters
        .patch(
            "member3",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"syncMode": "Push",
                "secretRef": {"namespace": "karmada-cluster", "name": "member3-push"}}})),
        )
        .await
        .unwrap();
    first.terminate();

    let second = up(dir.path(), &[]);
    let karmada = client(&second.karmada, "karmada-apiserver").await;
    let again = served_by_its_agent(&karmada).await;
    assert_eq!(
        again.uid(),
        member3.uid(),
        "the same Cluster, not a new one"
    );
    let names: Vec<String> = Api::<Cluster>::all(karmada)
        .list(&Default::default())
        .await
        .unwrap()
        .iter()
        .map(ResourceExt::name_any)
        .collect();
    assert_eq!(names.len(), 3, "{names:?}");
    second.terminate();
}
