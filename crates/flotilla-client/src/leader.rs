//! Leader election on a `coordination.k8s.io/v1` Lease, as client-go's leaderelection does, and a write fence
//! that keeps a replica which may have lost the lease from writing.
//!
//! A candidate acquires the lease when it is free, released, or its holder has not renewed it for a whole
//! lease duration (measured on our own clock from when we last saw the record change, so clock skew between
//! replicas does not matter). The leader renews every retry period, each attempt cut off at the renew
//! deadline; when no renewal has succeeded within the renew deadline it stops leading. Because the renew
//! deadline is shorter than the lease duration, it has stopped before any other replica may take the lease.
//!
//! A leader that cannot notice in time (a process stopped with SIGSTOP, a host that froze) must not write when
//! it resumes, whatever its controllers had queued. So the election keeps a [`Fence`]: writes are allowed until
//! the renew deadline after the start of the last successful renewal, on the monotonic clock, and clients
//! built with [`Fence::layer`] refuse every other request than reads once that instant has passed, before it
//! leaves the process.

use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

use futures::future::{Either, Ready, ready};
use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use k8s_openapi::jiff::Timestamp;
use kube::api::PostParams;
use kube::{Api, Client};
use tokio::time::Instant;
use tower::{BoxError, Layer, Service};

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
    /// How long other candidates wait after the lease last changed before they may take it
    /// (`--leader-elect-lease-duration`).
    pub lease_duration: Duration,
    /// How long the leader keeps leading without a successful renewal (`--leader-elect-renew-deadline`);
    /// shorter than `lease_duration`.
    pub renew_deadline: Duration,
    /// How often candidates try to acquire and the leader renews (`--leader-elect-retry-period`).
    pub retry_period: Duration,
    /// The fence this election opens while it leads.
    pub fence: Fence,
}

/// Why timings cannot elect a single leader.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum TimingError {
    /// The renew deadline is not shorter than the lease duration: another replica could take the lease while
    /// this one still writes.
    #[error(
        "the renew deadline ({renew_deadline:?}) must be shorter than the lease duration ({lease_duration:?})"
    )]
    RenewDeadline {
        /// The renew deadline.
        renew_deadline: Duration,
        /// The lease duration.
        lease_duration: Duration,
    },
    /// The retry period is zero or not shorter than the renew deadline: the leader could not try to renew
    /// before it must stop.
    #[error(
        "the retry period ({retry_period:?}) must be positive and shorter than the renew deadline ({renew_deadline:?})"
    )]
    RetryPeriod {
        /// The retry period.
        retry_period: Duration,
        /// The renew deadline.
        renew_deadline: Duration,
    },
}

/// How holding the lease ended.
#[derive(Debug, PartialEq, Eq)]
pub enum Ended {
    /// Asked to stop: the lease was released (or could not be, which the log says).
    Released,
    /// Leadership was lost, for the reason given.
    Lost(String),
}

/// The lease as this election last saw it: the record, and when it last changed on our clock.
#[derive(Debug, Default)]
pub struct Observed {
    record: String,
    at: Option<Instant>,
}

impl LeaderElection {
    /// Karmada's defaults: 15 s lease, 10 s renew deadline, 2 s retry period, Lease `<name>` in `namespace`.
    pub fn new(namespace: &str, name: &str, identity: &str) -> Self {
        LeaderElection {
            namespace: namespace.to_owned(),
            name: name.to_owned(),
            identity: identity.to_owned(),
            lease_duration: Duration::from_secs(15),
            renew_deadline: Duration::from_secs(10),
            retry_period: Duration::from_secs(2),
            fence: Fence::default(),
        }
    }

    /// Checks that the timings can elect one leader at a time, as client-go refuses others.
    ///
    /// # Errors
    /// [`TimingError`] naming the timing at fault.
    pub fn validate(&self) -> Result<(), TimingError> {
        if self.renew_deadline >= self.lease_duration {
            return Err(TimingError::RenewDeadline {
                renew_deadline: self.renew_deadline,
                lease_duration: self.lease_duration,
            });
        }
        if self.retry_period.is_zero() || self.retry_period >= self.renew_deadline {
            return Err(TimingError::RetryPeriod {
                retry_period: self.retry_period,
                renew_deadline: self.renew_deadline,
            });
        }
        Ok(())
    }

    /// Waits until this process holds the lease, trying every retry period; opens the fence. Returns what
    /// [`LeaderElection::hold`] continues from.
    pub async fn acquire(&self, client: &Client) -> Observed {
        let mut observed = Observed::default();
        loop {
            let began = Instant::now();
            match self.attempt(client, &mut observed, began).await {
                Ok(true) => return observed,
                Ok(false) => {}
                Err(reason) => tracing::debug!(%reason, "leader election attempt failed"),
            }
            tokio::time::sleep(self.retry_period).await;
        }
    }

    /// Renews the lease every retry period until leadership is lost (no renewal within the renew deadline,
    /// or another holder) or `stop` is cancelled, when the lease is released for the next candidate. The
    /// fence is closed before this returns, and at the renew deadline whether or not this task runs.
    pub async fn hold(
        &self,
        client: &Client,
        mut observed: Observed,
        stop: &tokio_util::sync::CancellationToken,
    ) -> Ended {
        loop {
            tokio::select! {
                () = tokio::time::sleep(self.retry_period) => {}
                () = stop.cancelled() => {
                    self.fence.close();
                    self.release(client).await;
                    return Ended::Released;
                }
            }
            let began = Instant::now();
            let Some(deadline) = self.fence.until().filter(|until| began < *until) else {
                self.fence.close();
                return Ended::Lost(format!(
                    "the lease was not renewed within the renew deadline ({:?})",
                    self.renew_deadline
                ));
            };
            match self
                .attempt_until(client, &mut observed, began, deadline)
                .await
            {
                Ok(true) => {}
                Ok(false) => {
                    self.fence.close();
                    return Ended::Lost("another candidate holds the lease".to_owned());
                }
                Err(reason) => tracing::warn!(%reason, "failed to renew the leader lease"),
            }
        }
    }

    /// One attempt, cut off at `deadline`.
    async fn attempt_until(
        &self,
        client: &Client,
        observed: &mut Observed,
        began: Instant,
        deadline: Instant,
    ) -> Result<bool, String> {
        match tokio::time::timeout_at(deadline, self.attempt(client, observed, began)).await {
            Ok(result) => result,
            Err(_) => Err("the renewal did not finish before the renew deadline".to_owned()),
        }
    }

    /// One attempt to acquire or renew, begun at `began`; on success the fence opens until the renew deadline
    /// after `began` (the server wrote the new renew time no earlier than that).
    async fn attempt(
        &self,
        client: &Client,
        observed: &mut Observed,
        began: Instant,
    ) -> Result<bool, String> {
        let held = self
            .try_acquire_or_renew(client, observed)
            .await
            .map_err(|err| error_chain(&err))?;
        if held {
            self.fence.open_until(began + self.renew_deadline);
        }
        Ok(held)
    }

    async fn try_acquire_or_renew(
        &self,
        client: &Client,
        observed: &mut Observed,
    ) -> Result<bool, CallError> {
        let api: Api<Lease> = Api::namespaced(client.clone(), &self.namespace);
        let object = format!("Lease {}/{}", self.namespace, self.name);
        let now = MicroTime(Timestamp::now());
        let seconds = duration_seconds(self.lease_duration);
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
        let record = format!(
            "{holder}|{:?}|{:?}",
            spec.renew_time.as_ref().map(|t| t.0),
            spec.lease_duration_seconds
        );
        if observed.record != record {
            observed.record = record;
            observed.at = Some(Instant::now());
        }
        let held_by_us = holder == self.identity;
        // The holder's own lease duration counts (a released lease says one second), as client-go reads it.
        let holder_duration = spec
            .lease_duration_seconds
            .and_then(|s| u64::try_from(s).ok())
            .map_or(self.lease_duration, Duration::from_secs);
        let expired =
            holder.is_empty() || observed.at.is_none_or(|at| at.elapsed() >= holder_duration);
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
        replace_lease(&api, &lease, object).await
    }

    /// Gives the lease up if this process still holds it, as client-go's `ReleaseOnCancel` does: no holder, a
    /// one-second duration, so the next candidate takes it at its next try instead of a lease duration later.
    /// Bounded by the renew deadline; a failure is logged (the lease then expires by itself).
    pub async fn release(&self, client: &Client) {
        let released = tokio::time::timeout(self.renew_deadline, self.try_release(client)).await;
        match released {
            Ok(Ok(true)) => tracing::info!(lease = %self.name, "released the leader lease"),
            Ok(Ok(false)) => {}
            Ok(Err(err)) => {
                tracing::warn!(error = %error_chain(&err), "failed to release the leader lease")
            }
            Err(_) => tracing::warn!(lease = %self.name, "releasing the leader lease timed out"),
        }
    }

    async fn try_release(&self, client: &Client) -> Result<bool, CallError> {
        let api: Api<Lease> = Api::namespaced(client.clone(), &self.namespace);
        let object = format!("Lease {}/{}", self.namespace, self.name);
        let mut lease = match api.get(&self.name).await {
            Ok(lease) => lease,
            Err(err) if is_not_found(&err) => return Ok(false),
            Err(source) => return Err(CallError::new("get", object, source)),
        };
        let mut spec = lease.spec.clone().unwrap_or_default();
        if spec.holder_identity.as_deref() != Some(self.identity.as_str()) {
            return Ok(false);
        }
        let now = MicroTime(Timestamp::now());
        spec.holder_identity = None;
        spec.lease_duration_seconds = Some(1);
        spec.acquire_time = Some(now.clone());
        spec.renew_time = Some(now);
        lease.spec = Some(spec);
        replace_lease(&api, &lease, object).await
    }
}

/// Writes `lease` back over the version it was read at: `false` when another writer changed it meanwhile.
async fn replace_lease(api: &Api<Lease>, lease: &Lease, object: String) -> Result<bool, CallError> {
    let name = lease.metadata.name.as_deref().unwrap_or_default();
    match api.replace(name, &PostParams::default(), lease).await {
        Ok(_) => Ok(true),
        Err(err) if is_conflict(&err) => Ok(false),
        Err(source) => Err(CallError::new("update", object, source)),
    }
}

fn duration_seconds(duration: Duration) -> i32 {
    i32::try_from(duration.as_secs()).unwrap_or(i32::MAX)
}

/// Until when this process may write, shared by the election and the clients it guards. Closed until the
/// lease is first acquired.
#[derive(Clone, Debug, Default)]
pub struct Fence {
    until: Arc<Mutex<Option<Instant>>>,
}

impl Fence {
    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Instant>> {
        self.until.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The instant writes stop being allowed, if the fence was opened.
    pub fn until(&self) -> Option<Instant> {
        *self.lock()
    }

    /// Whether writes are allowed now.
    pub fn allows_writes(&self) -> bool {
        self.until().is_some_and(|until| Instant::now() < until)
    }

    fn open_until(&self, until: Instant) {
        *self.lock() = Some(until);
    }

    fn close(&self) {
        *self.lock() = None;
    }

    /// A client layer that refuses, without sending it, every request but reads (`GET`, `HEAD`, `OPTIONS`)
    /// while the fence does not allow writes.
    pub fn layer(&self) -> FenceLayer {
        FenceLayer {
            fence: self.clone(),
        }
    }
}

/// The request a fenced client refused.
#[derive(Debug, thiserror::Error)]
#[error("refused to send {method} {path}: this process does not hold the leader lease")]
pub struct NotLeader {
    method: http::Method,
    path: String,
}

/// See [`Fence::layer`].
#[derive(Clone, Debug)]
pub struct FenceLayer {
    fence: Fence,
}

impl<S> Layer<S> for FenceLayer {
    type Service = Fenced<S>;

    fn layer(&self, inner: S) -> Fenced<S> {
        Fenced {
            inner,
            fence: self.fence.clone(),
        }
    }
}

/// See [`Fence::layer`].
#[derive(Clone, Debug)]
pub struct Fenced<S> {
    inner: S,
    fence: Fence,
}

impl<S, B> Service<http::Request<B>> for Fenced<S>
where
    S: Service<http::Request<B>>,
    S::Error: Into<BoxError>,
{
    type Response = S::Response;
    type Error = BoxError;
    type Future = Either<
        Ready<Result<S::Response, BoxError>>,
        futures::future::MapErr<S::Future, fn(S::Error) -> BoxError>,
    >;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, request: http::Request<B>) -> Self::Future {
        let read = matches!(
            *request.method(),
            http::Method::GET | http::Method::HEAD | http::Method::OPTIONS
        );
        if !read && !self.fence.allows_writes() {
            let refused = NotLeader {
                method: request.method().clone(),
                path: request.uri().path().to_owned(),
            };
            return Either::Left(ready(Err(refused.into())));
        }
        use futures::TryFutureExt;
        Either::Right(
            self.inner
                .call(request)
                .map_err(Into::into as fn(S::Error) -> BoxError),
        )
    }
}

#[cfg(test)]
mod tests;
