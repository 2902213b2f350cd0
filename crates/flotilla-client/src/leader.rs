//! Optional leader election on a `coordination.k8s.io/v1` Lease, as client-go's leaderelection does: acquire
//! when the lease is free or its holder stopped renewing for a whole lease duration (measured on our own clock,
//! from when we last saw the record change, so clock skew between replicas does not matter), then renew
//! periodically; losing the lease ends leadership.

use std::time::Duration;

use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use k8s_openapi::jiff::Timestamp;
use kube::api::PostParams;
use kube::{Api, Client};
use tokio::time::Instant;

use crate::api_error::{CallError, error_chain, is_already_exists, is_conflict, is_not_found};

/// Lease timings and identity.
#[derive(Clone, Debug)]
pub struct LeaderElection {
    /// Namespace of the Lease (`karmada-system`).
    pub namespace: String,
    /// Name of the Lease.
    pub name: String,
    /// This process's identity (written as `holderIdentity`).
    pub identity: String,
    /// How long a lease is valid without renewal.
    pub lease_duration: Duration,
    /// How often the holder renews.
    pub renew_period: Duration,
    /// How often a candidate retries.
    pub retry_period: Duration,
}

impl LeaderElection {
    /// Karmada-like defaults: 15 s lease, renew every 5 s, retry every 2 s, Lease `<name>` in `namespace`.
    pub fn new(namespace: &str, name: &str, identity: &str) -> Self {
        LeaderElection {
            namespace: namespace.to_owned(),
            name: name.to_owned(),
            identity: identity.to_owned(),
            lease_duration: Duration::from_secs(15),
            renew_period: Duration::from_secs(5),
            retry_period: Duration::from_secs(2),
        }
    }

    /// Waits until this process holds the lease.
    ///
    /// # Errors
    /// A read or write of the Lease that failed otherwise than by a conflict or a lost race (those are retried).
    pub async fn acquire(&self, client: &Client) -> Result<(), CallError> {
        let mut observed = Observed::default();
        loop {
            match self.try_acquire_or_renew(client, &mut observed).await {
                Ok(true) => return Ok(()),
                Ok(false) => {}
                Err(err) => {
                    tracing::debug!(error = %error_chain(&err), "leader election attempt failed")
                }
            }
            tokio::time::sleep(self.retry_period).await;
        }
    }

    /// Renews the lease until renewal fails for a whole lease duration; returns when leadership is lost.
    pub async fn hold(&self, client: &Client) {
        let mut observed = Observed::default();
        let mut last_renewal = Instant::now();
        loop {
            tokio::time::sleep(self.renew_period).await;
            match self.try_acquire_or_renew(client, &mut observed).await {
                Ok(true) => last_renewal = Instant::now(),
                Ok(false) => return,
                Err(err) => {
                    tracing::warn!(error = %error_chain(&err), "failed to renew the leader lease");
                    if last_renewal.elapsed() >= self.lease_duration {
                        return;
                    }
                }
            }
        }
    }

    async fn try_acquire_or_renew(
        &self,
        client: &Client,
        observed: &mut Observed,
    ) -> Result<bool, CallError> {
        let api: Api<Lease> = Api::namespaced(client.clone(), &self.namespace);
        let object = format!("Lease {}/{}", self.namespace, self.name);
        let now = MicroTime(Timestamp::now());
        let seconds = i32::try_from(self.lease_duration.as_secs()).unwrap_or(i32::MAX);
        let existing = match api.get(&self.name).await {
            Ok(lease) => lease,
            Err(err) if is_not_found(&err) => {
                let lease = Lease {
                    metadata: ObjectMeta {
                        name: Some(self.name.clone()),
                        ..ObjectMeta::default()
                    },
                    spec: Some(LeaseSpec {
                        holder_identity: Some(self.identity.clone()),
                        lease_duration_seconds: Some(seconds),
                        acquire_time: Some(now.clone()),
                        renew_time: Some(now),
                        lease_transitions: Some(0),
                        ..LeaseSpec::default()
                    }),
                };
                return match api.create(&PostParams::default(), &lease).await {
                    Ok(_) => Ok(true),
                    Err(err) if is_already_exists(&err) => Ok(false),
                    Err(source) => Err(CallError::new("create", object, source)),
                };
            }
            Err(source) => return Err(CallError::new("get", object, source)),
        };
        let spec = existing.spec.clone().unwrap_or_default();
        let holder = spec.holder_identity.clone().unwrap_or_default();
        let record = format!("{holder}|{:?}", spec.renew_time.as_ref().map(|t| t.0));
        if observed.record != record {
            observed.record = record;
            observed.at = Some(Instant::now());
        }
        let held_by_us = holder == self.identity;
        let expired = holder.is_empty()
            || observed
                .at
                .is_none_or(|at| at.elapsed() >= self.lease_duration);
        if !held_by_us && !expired {
            return Ok(false);
        }
        let mut lease = existing;
        let mut new_spec = spec;
        if !held_by_us {
            new_spec.acquire_time = Some(now.clone());
            new_spec.lease_transitions = Some(new_spec.lease_transitions.unwrap_or(0) + 1);
        }
        new_spec.holder_identity = Some(self.identity.clone());
        new_spec.lease_duration_seconds = Some(seconds);
        new_spec.renew_time = Some(now);
        lease.spec = Some(new_spec);
        match api
            .replace(&self.name, &PostParams::default(), &lease)
            .await
        {
            Ok(_) => Ok(true),
            Err(err) if is_conflict(&err) => Ok(false),
            Err(source) => Err(CallError::new("update", object, source)),
        }
    }
}

#[derive(Default)]
struct Observed {
    record: String,
    at: Option<Instant>,
}
