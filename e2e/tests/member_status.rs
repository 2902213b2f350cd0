//! Member status for kinds beyond the replicated workloads: a propagated DaemonSet reports one pod per member
//! Node, and a PodDisruptionBudget counts the pods of the Deployment it guards, both summed into the template by
//! the native interpreter. In the kube world real controllers report them; in the embedded world the simulator
//! must report the same.
#![allow(clippy::unwrap_used, clippy::panic)]

use flotilla_e2e::resources::{Res, int};
use flotilla_e2e::steps::{apply, control_object};
use flotilla_e2e::{Env, Kubectl, Options, testdata};

const DAEMON_SET: Res = Res("apps", "v1", "DaemonSet", "daemonsets");
const PDB: Res = Res(
    "policy",
    "v1",
    "PodDisruptionBudget",
    "poddisruptionbudgets",
);
const NODE: Res = Res("", "v1", "Node", "nodes");

flotilla_e2e::scenario!(
    /// The DaemonSet's template sums one ready pod per Node of member1 and member2; the budget's sums the two
    /// members' healthy pods of Deployment web (2 each) against one required in each.
    daemon_set_and_pod_disruption_budget_status_aggregates,
    "member-status",
    Options::default(),
    daemon_set_and_budget
);

async fn daemon_set_and_budget(env: &Env, ns: &str) -> anyhow::Result<()> {
    apply(
        env,
        &Kubectl::machine(),
        Some(ns),
        &testdata("daemonset-pdb.yaml"),
    )
    .await?;
    let mut nodes = 0;
    for member in ["member1", "member2"] {
        let listed = NODE
            .list(env.member(member)?, None)
            .await
            .map_err(anyhow::Error::msg)?;
        nodes += i64::try_from(listed.len())?;
    }
    anyhow::ensure!(nodes > 0, "member1 and member2 have no Nodes");
    control_object(
        env,
        DAEMON_SET,
        ns,
        "agent",
        &format!("reporting a ready daemon on each of the {nodes} Nodes of member1 and member2"),
        |ds| {
            [
                "desiredNumberScheduled",
                "currentNumberScheduled",
                "updatedNumberScheduled",
                "numberReady",
                "numberAvailable",
            ]
            .iter()
            .all(|k| int(ds, &format!("/status/{k}")) == Some(nodes))
        },
    )
    .await?;
    control_object(
        env,
        PDB,
        ns,
        "web",
        "summing 2 healthy of 2 expected pods, 1 desired, in each member",
        |pdb| {
            [
                ("currentHealthy", 4),
                ("expectedPods", 4),
                ("desiredHealthy", 2),
                ("disruptionsAllowed", 2),
            ]
            .iter()
            .all(|(k, v)| int(pdb, &format!("/status/{k}")) == Some(*v))
        },
    )
    .await?;
    Ok(())
}
