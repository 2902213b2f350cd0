//! The Pull member's agent works with least privilege, as `karmadactl register` leaves karmada-agent: it was given
//! a bootstrap token, not an administrator's credentials, obtained a client certificate of user
//! `system:karmada:agent:member3` with it (kept in the member as Secret `karmada-system/karmada-kubeconfig`), and
//! with that certificate it may touch member3's Works, Cluster and Secrets only.
#![allow(clippy::unwrap_used, clippy::panic)]

use k8s_openapi::api::authentication::v1::SelfSubjectReview;
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use serde_json::json;

use flotilla_api::cluster::v1alpha1::Cluster;
use flotilla_api::work::v1alpha1::Work;
use flotilla_e2e::processes::PULL_MEMBER;
use flotilla_e2e::{Env, Options};

flotilla_e2e::scenario!(
    /// The agent of member3 is user system:karmada:agent:member3 and may not read member1's Works nor write
    /// member1's Cluster or Secrets, while it reads and writes its own.
    pull_agent_works_with_its_own_certificate_and_no_more,
    "agent-identity",
    Options::default(),
    agent_identity
);

/// Whether `result` is the API server's 403.
fn forbidden<T: std::fmt::Debug>(result: Result<T, kube::Error>) -> bool {
    matches!(result, Err(kube::Error::Api(ref s)) if s.code == 403)
}

async fn agent_identity(env: &Env, _ns: &str) -> anyhow::Result<()> {
    let member = env.member(PULL_MEMBER)?;
    let secret = Api::<Secret>::namespaced(member.clone(), "karmada-system")
        .get("karmada-kubeconfig")
        .await?;
    let data = secret
        .data
        .and_then(|d| d.get("karmada-kubeconfig").cloned())
        .ok_or_else(|| {
            anyhow::anyhow!(
                "Secret karmada-system/karmada-kubeconfig of {PULL_MEMBER} has no kubeconfig"
            )
        })?;
    let kubeconfig = Kubeconfig::from_yaml(std::str::from_utf8(&data.0)?)?;
    let config =
        kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default()).await?;
    let agent = kube::Client::try_from(config)?;

    let review: SelfSubjectReview = Api::all(agent.clone())
        .create(&PostParams::default(), &SelfSubjectReview::default())
        .await?;
    let user = review.status.and_then(|s| s.user_info).unwrap_or_default();
    anyhow::ensure!(
        user.username.as_deref() == Some(&format!("system:karmada:agent:{PULL_MEMBER}")[..]),
        "the agent authenticates as {:?}",
        user.username
    );
    anyhow::ensure!(
        user.groups
            .unwrap_or_default()
            .iter()
            .any(|g| g == "system:karmada:agents"),
        "the agent is not in group system:karmada:agents"
    );

    // Its own: its execution namespace's Works, its Cluster.
    Api::<Work>::namespaced(agent.clone(), &format!("karmada-es-{PULL_MEMBER}"))
        .list(&ListParams::default())
        .await?;
    let clusters: Api<Cluster> = Api::all(agent.clone());
    let own = clusters.get(PULL_MEMBER).await?;
    anyhow::ensure!(own.metadata.name.as_deref() == Some(PULL_MEMBER));

    // Another member's: none of it.
    let other = env
        .members
        .iter()
        .map(|(name, _)| name.as_str())
        .find(|name| *name != PULL_MEMBER)
        .ok_or_else(|| anyhow::anyhow!("no member besides {PULL_MEMBER}"))?;
    let works: Api<Work> = Api::namespaced(agent.clone(), &format!("karmada-es-{other}"));
    anyhow::ensure!(
        forbidden(works.list(&ListParams::default()).await),
        "the agent may list the Works of {other}"
    );
    anyhow::ensure!(
        forbidden(
            Api::<Work>::all(agent.clone())
                .list(&ListParams::default())
                .await
        ),
        "the agent may list every Work"
    );
    let taint = json!({"spec": {"taints": [{"key": "evil", "effect": "NoSchedule"}]}});
    anyhow::ensure!(
        forbidden(
            clusters
                .patch(other, &PatchParams::default(), &Patch::Merge(&taint))
                .await
        ),
        "the agent may write Cluster {other}"
    );
    let status = json!({"status": {"conditions": []}});
    anyhow::ensure!(
        forbidden(
            clusters
                .patch_status(other, &PatchParams::default(), &Patch::Merge(&status))
                .await
        ),
        "the agent may write the status of Cluster {other}"
    );
    anyhow::ensure!(
        forbidden(
            Api::<Secret>::namespaced(agent.clone(), "karmada-cluster")
                .get(other)
                .await
        ),
        "the agent may read the credentials of {other}"
    );
    // Nor its own Cluster's spec: it was registered for it.
    anyhow::ensure!(
        forbidden(
            clusters
                .patch(PULL_MEMBER, &PatchParams::default(), &Patch::Merge(&taint))
                .await
        ),
        "the agent may rewrite its own Cluster's spec"
    );
    Ok(())
}
