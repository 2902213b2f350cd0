//! The harness itself: waits report what they last saw, and the environment the scenarios get is complete.
#![allow(clippy::unwrap_used, clippy::panic)]

use std::time::Duration;

use flotilla_e2e::resources::CLUSTER;
use flotilla_e2e::wait::wait_within;
use flotilla_e2e::{Env, Kubectl, Options};

#[tokio::test]
async fn a_wait_that_times_out_reports_the_last_state() {
    let rounds = std::sync::atomic::AtomicU32::new(0);
    let rounds = &rounds;
    let err = wait_within(
        "the impossible",
        Duration::from_millis(100),
        || async move {
            let n = rounds.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            Err::<(), _>(format!("round {n}"))
        },
    )
    .await
    .unwrap_err()
    .to_string();
    assert!(err.contains("waiting for the impossible"), "{err}");
    let last = rounds.load(std::sync::atomic::Ordering::Relaxed) - 1;
    assert!(err.ends_with(&format!("last seen: round {last}")), "{err}");
}

flotilla_e2e::scenario!(
    the_environment_has_every_member_registered_and_usable_kubeconfigs,
    "harness",
    Options::default(),
    environment_is_complete
);

async fn environment_is_complete(env: &Env, _ns: &str) -> anyhow::Result<()> {
    let clusters = CLUSTER
        .list(&env.karmada, None)
        .await
        .map_err(anyhow::Error::msg)?;
    let mut names: Vec<&str> = clusters
        .iter()
        .filter_map(|c| c.pointer("/metadata/name").and_then(|n| n.as_str()))
        .collect();
    names.sort_unstable();
    let members: Vec<&str> = env.members.iter().map(|(n, _)| n.as_str()).collect();
    anyhow::ensure!(
        names == members,
        "clusters {names:?} vs member contexts {members:?}"
    );
    let out = env
        .kubectl_karmada(&Kubectl::machine(), &["get", "clusters", "-o", "name"])
        .await?;
    anyhow::ensure!(out.contains("cluster.cluster.karmada.io/member1"), "{out}");
    for (name, _) in &env.members {
        let out = Kubectl::newest()
            .run(
                &env.members_config,
                Some(name),
                &["get", "nodes", "-o", "name"],
            )
            .await?;
        anyhow::ensure!(out.lines().count() >= 1, "{name} has no nodes: {out}");
    }
    Ok(())
}
