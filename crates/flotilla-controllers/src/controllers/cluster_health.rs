//! The health monitor of Pull clusters (part of Karmada's cluster controller): every
//! `--cluster-monitor-period`, a Pull cluster whose Ready condition has not changed and whose Lease
//! `karmada-cluster/<cluster>` has not been renewed within the grace period (`--cluster-monitor-grace-period`;
//! `--cluster-startup-grace-period` from its creation while it never posted a status) gets Ready `Unknown`:
//! its agent stopped. Push clusters are the cluster status controller's, which reaches them itself.
//!
//! What was last seen of each cluster (Ready condition, Lease renew time, when either last changed) is kept in
//! memory, as Karmada does: after a restart every cluster gets a full grace period again.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use flotilla_api::cluster::v1alpha1::{Cluster, ClusterSyncMode};
use flotilla_api::names::{conditions as names, namespaces};
use flotilla_core::conditions::{find, new_condition};
use jiff::Timestamp;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::api::{Patch, PatchParams};
use kube::{Api, Client, ResourceExt};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::error::{Error, Result};
use crate::options::Options;
use crate::runtime::{Informer, Informers};
use crate::shared::Shared;

/// Name of the monitor (logs).
pub(crate) const NAME: &str = "cluster-health-monitor";

/// What the health monitor of Pull clusters needs.
pub(crate) struct Context {
    /// The control plane's client.
    pub client: Client,
    /// The control plane's informers, shared with the other controllers.
    pub informers: Informers,
    /// How often it checks (`--cluster-monitor-period`).
    pub cluster_monitor_period: Duration,
    /// How long without a renewal or a Ready change before Ready turns Unknown (`--cluster-monitor-grace-period`).
    pub cluster_monitor_grace_period: Duration,
    /// How long after creation a cluster may post no status at all (`--cluster-startup-grace-period`).
    pub cluster_startup_grace_period: Duration,
}

impl Context {
    /// The health monitor's context: its handles from `shared`, its settings from `options`.
    pub(crate) fn new(shared: &Shared, options: &Options) -> Self {
        Context {
            client: shared.control.client.clone(),
            informers: shared.control.informers.clone(),
            cluster_monitor_period: options.cluster_monitor_period,
            cluster_monitor_grace_period: options.cluster_monitor_grace_period,
            cluster_startup_grace_period: options.cluster_startup_grace_period,
        }
    }
}

/// What the monitor last saw of one cluster.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Seen {
    ready: Option<Condition>,
    renewed: Option<Timestamp>,
    probed: Timestamp,
}

/// Runs the monitor until `shutdown` is cancelled.
pub(crate) async fn run(ctx: Context, shutdown: CancellationToken) {
    let clusters: Arc<Informer<Cluster>> = ctx.informers.typed();
    tokio::select! {
        () = clusters.wait_synced() => {}
        () = shutdown.cancelled() => return,
    }
    let mut seen: HashMap<String, Seen> = HashMap::new();
    loop {
        let list = clusters.list();
        seen.retain(|name, _| list.iter().any(|c| &c.name_any() == name));
        for cluster in list {
            // A deleting cluster is watched too, as Karmada watches it: while it stays Ready its Works wait for
            // its agent, and once Ready is Unknown the cluster controller releases them.
            // Karmada leaves out Push clusters only: one of a sync mode it does not know is watched as a Pull one.
            if cluster.spec.sync_mode == ClusterSyncMode::Push {
                continue;
            }
            if let Err(err) = check(&ctx, &cluster, &mut seen).await {
                tracing::warn!(monitor = NAME, cluster = %cluster.name_any(), error = %err, "failed to check the cluster's health");
            }
        }
        tokio::select! {
            () = tokio::time::sleep(ctx.cluster_monitor_period) => {}
            () = shutdown.cancelled() => return,
        }
    }
}

async fn check(ctx: &Context, cluster: &Cluster, seen: &mut HashMap<String, Seen>) -> Result<()> {
    let name = cluster.name_any();
    let leases: Api<Lease> = Api::namespaced(ctx.client.clone(), namespaces::KARMADA_CLUSTER);
    let renewed = leases
        .get_opt(&name)
        .await
        .map_err(|source| {
            Error::kube(
                "get",
                format!("Lease {}/{name}", namespaces::KARMADA_CLUSTER),
                source,
            )
        })?
        .and_then(|lease| lease.spec?.renew_time.map(|t| t.0));
    let conditions = cluster
        .status
        .as_ref()
        .map(|s| s.conditions.clone())
        .unwrap_or_default();
    let created = cluster
        .metadata
        .creation_timestamp
        .as_ref()
        .map_or_else(Timestamp::now, |t| t.0);
    let verdict = observe(
        seen.get(&name),
        &conditions,
        renewed,
        created,
        Timestamp::now(),
        ctx.cluster_monitor_grace_period,
        ctx.cluster_startup_grace_period,
    );
    seen.insert(name.clone(), verdict.seen);
    let Some(updated) = verdict.update else {
        return Ok(());
    };
    tracing::info!(cluster = %name, "no status or Lease renewal from the cluster's agent within the grace period: Ready is Unknown");
    let api: Api<Cluster> = Api::all(ctx.client.clone());
    let patch = json!({"status": {"conditions": updated}});
    api.patch_status(&name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .map_err(|source| Error::kube("patch status of", format!("Cluster {name}"), source))?;
    if let Some(entry) = seen.get_mut(&name) {
        entry.ready = find(&updated, names::CLUSTER_READY).cloned();
        entry.probed = Timestamp::now();
    }
    Ok(())
}

/// What one check concludes: what to remember, and the new conditions if Ready must turn Unknown.
#[derive(Debug)]
pub(crate) struct Verdict {
    seen: Seen,
    update: Option<Vec<Condition>>,
}

/// One check of a Pull cluster: a changed Ready condition or a newer Lease renewal is a sign of life; none
/// for the grace period (the startup grace, counted from creation, while Ready was never posted) turns Ready
/// Unknown.
pub(crate) fn observe(
    before: Option<&Seen>,
    conditions: &[Condition],
    renewed: Option<Timestamp>,
    created: Timestamp,
    now: Timestamp,
    grace: Duration,
    startup_grace: Duration,
) -> Verdict {
    let ready = find(conditions, names::CLUSTER_READY).cloned();
    let grace = if ready.is_none() {
        startup_grace
    } else {
        grace
    };
    let mut seen = match before {
        Some(before) if before.ready == ready => before.clone(),
        Some(before) => Seen {
            ready: ready.clone(),
            renewed: before.renewed,
            probed: now,
        },
        None => Seen {
            ready: ready.clone(),
            renewed: None,
            probed: if ready.is_none() { created } else { now },
        },
    };
    if let Some(renewed) = renewed
        && seen.renewed.is_none_or(|last| last < renewed)
    {
        seen.renewed = Some(renewed);
        seen.probed = now;
    }
    let lapsed = jiff::SignedDuration::try_from(grace)
        .ok()
        .and_then(|grace| seen.probed.checked_add(grace).ok())
        .is_some_and(|deadline| now > deadline);
    let update = match &ready {
        _ if !lapsed => None,
        None => {
            let mut updated = conditions.to_vec();
            updated.push(new_condition(
                names::CLUSTER_READY,
                "Unknown",
                names::REASON_CLUSTER_STATUS_NEVER_UPDATED,
                names::MESSAGE_CLUSTER_STATUS_NEVER_UPDATED,
            ));
            Some(updated)
        }
        Some(current) if current.status != "Unknown" => {
            let mut updated = conditions.to_vec();
            if let Some(ready) = updated.iter_mut().find(|c| c.type_ == names::CLUSTER_READY) {
                *ready = new_condition(
                    names::CLUSTER_READY,
                    "Unknown",
                    names::REASON_CLUSTER_STATUS_UNKNOWN,
                    names::MESSAGE_CLUSTER_STATUS_UNKNOWN,
                );
            }
            Some(updated)
        }
        Some(_) => None,
    };
    Verdict { seen, update }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GRACE: Duration = Duration::from_secs(40);
    const STARTUP: Duration = Duration::from_secs(60);

    fn at(seconds: i64) -> Timestamp {
        Timestamp::from_second(1_800_000_000 + seconds).unwrap_or(Timestamp::UNIX_EPOCH)
    }

    fn ready(status: &str) -> Vec<Condition> {
        vec![new_condition(
            names::CLUSTER_READY,
            status,
            "ClusterReady",
            "m",
        )]
    }

    fn status_of(update: &[Condition]) -> (&str, &str) {
        let ready =
            find(update, names::CLUSTER_READY).map(|c| (c.status.as_str(), c.reason.as_str()));
        ready.unwrap_or(("", ""))
    }

    #[test]
    fn renewed_lease_keeps_ready_and_a_lapsed_one_turns_it_unknown() {
        let conditions = ready("True");
        let first = observe(
            None,
            &conditions,
            Some(at(0)),
            at(-100),
            at(0),
            GRACE,
            STARTUP,
        );
        assert!(first.update.is_none());
        // Renewed at 30 s: checked at 60 s it is within the grace period.
        let renewed = observe(
            Some(&first.seen),
            &conditions,
            Some(at(30)),
            at(-100),
            at(60),
            GRACE,
            STARTUP,
        );
        assert!(renewed.update.is_none());
        // The renewal was seen at 60 s and none since: at 101 s the grace period has passed (it counts from when a
        // renewal is seen, as Karmada's monitor counts).
        let lapsed = observe(
            Some(&renewed.seen),
            &conditions,
            Some(at(30)),
            at(-100),
            at(101),
            GRACE,
            STARTUP,
        );
        let update = lapsed.update.unwrap_or_default();
        assert_eq!(
            status_of(&update),
            ("Unknown", names::REASON_CLUSTER_STATUS_UNKNOWN)
        );
    }

    #[test]
    fn a_cluster_that_never_posted_gets_the_startup_grace_from_its_creation() {
        let within = observe(None, &[], None, at(0), at(59), GRACE, STARTUP);
        assert!(within.update.is_none());
        let after = observe(Some(&within.seen), &[], None, at(0), at(61), GRACE, STARTUP);
        let update = after.update.unwrap_or_default();
        assert_eq!(
            status_of(&update),
            ("Unknown", names::REASON_CLUSTER_STATUS_NEVER_UPDATED)
        );
    }

    #[test]
    fn a_ready_change_counts_as_a_sign_of_life_and_unknown_is_not_rewritten() {
        let first = observe(None, &ready("True"), None, at(-100), at(0), GRACE, STARTUP);
        let changed = observe(
            Some(&first.seen),
            &ready("False"),
            None,
            at(-100),
            at(39),
            GRACE,
            STARTUP,
        );
        assert!(changed.update.is_none());
        let still = observe(
            Some(&changed.seen),
            &ready("False"),
            None,
            at(-100),
            at(60),
            GRACE,
            STARTUP,
        );
        assert!(
            still.update.is_none(),
            "the change at 39 s starts a new grace period"
        );
        let unknown = observe(
            Some(&changed.seen),
            &ready("Unknown"),
            None,
            at(-100),
            at(200),
            GRACE,
            STARTUP,
        );
        assert!(unknown.update.is_none());
    }
}
