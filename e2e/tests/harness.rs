//! The harness itself: waits report what they last saw, and the environment the scenarios get is complete.
#![allow(clippy::unwrap_used, clippy::panic)]

use std::time::Duration;

use flotilla_e2e::resources::{CLUSTER, CONFIG_MAP, NAMESPACE, text};
use flotilla_e2e::wait::wait_within;
use flotilla_e2e::{Env, Kubectl, Options, Undo, World};

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

flotilla_e2e::scenario!(
    a_member_taken_away_comes_back_also_when_the_scenario_fails,
    "outage",
    Options::default(),
    outage_ends
);

/// An in-process member taken away refuses connections until brought back; elsewhere the Cluster's
/// `apiEndpoint` is dead until restored, and an outage dropped on a failure's way out restores it too, as does
/// any dropped [`Undo`] (an in-process environment ends with the scenario instead).
async fn outage_ends(env: &Env, ns: &str) -> anyhow::Result<()> {
    let endpoint = |cluster: Option<serde_json::Value>| {
        cluster
            .and_then(|c| text(&c, "/spec/apiEndpoint").map(str::to_string))
            .unwrap_or_default()
    };
    let before = endpoint(
        CLUSTER
            .get(&env.karmada, None, "member3")
            .await
            .map_err(anyhow::Error::msg)?,
    );
    let away = env.take_member_away("member3").await?;
    anyhow::ensure!(away.member() == "member3");
    let during = endpoint(
        CLUSTER
            .get(&env.karmada, None, "member3")
            .await
            .map_err(anyhow::Error::msg)?,
    );
    if env.world == World::Embedded {
        anyhow::ensure!(during == before, "the in-process member's Cluster changed");
        anyhow::ensure!(
            CONFIG_MAP
                .list(env.member("member3")?, Some("default"))
                .await
                .is_err(),
            "member3 still answers while taken away"
        );
        away.bring_back(env).await?;
        CONFIG_MAP
            .list(env.member("member3")?, Some("default"))
            .await
            .map_err(anyhow::Error::msg)?;
    } else {
        anyhow::ensure!(during != before, "member3's apiEndpoint was not replaced");
        // As on a failure's way out: dropped without bring_back.
        drop(away);
        let after = endpoint(
            CLUSTER
                .get(&env.karmada, None, "member3")
                .await
                .map_err(anyhow::Error::msg)?,
        );
        anyhow::ensure!(
            after == before,
            "member3's apiEndpoint {after} was not restored to {before}"
        );
    }
    let namespace = ns.to_string();
    let undo = Undo::new(env, "label the namespace", move |client| async move {
        let patch = serde_json::json!({"metadata": {"labels": {"undone": "yes"}}});
        kube::Api::<k8s_openapi::api::core::v1::Namespace>::all(client)
            .patch(
                &namespace,
                &kube::api::PatchParams::default(),
                &kube::api::Patch::Merge(&patch),
            )
            .await?;
        Ok(())
    });
    if env.world == World::Embedded {
        undo.run(&env.karmada).await?;
    } else {
        drop(undo);
    }
    let labelled = NAMESPACE
        .get(&env.karmada, None, ns)
        .await
        .map_err(anyhow::Error::msg)?
        .and_then(|n| text(&n, "/metadata/labels/undone").map(str::to_string));
    anyhow::ensure!(
        labelled.as_deref() == Some("yes"),
        "a dropped Undo did not run"
    );
    Ok(())
}
