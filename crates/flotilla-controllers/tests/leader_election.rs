//! Leader election between replicas against an API server: one leader at a time, a leader that stops renewing
//! (a stopped process) fenced off before another may take over, the lease handed on at once when released,
//! and a fenced client that refuses writes without sending them.

#![allow(clippy::unwrap_used, clippy::panic)]

use crate::support;

use std::time::Duration;

use flotilla_client::leader::{Ended, LeaderElection, Observed};
use flotilla_client::{self as kube_client, RateLimit};
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{ObjectMeta, PostParams};
use kube::{Api, Client};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// Short timings, in the ratios of Karmada's defaults (15 s, 10 s, 2 s), so a takeover takes seconds.
fn election(identity: &str) -> LeaderElection {
    let mut election = LeaderElection::new("default", "managers", identity);
    election.lease_duration = Duration::from_millis(3000);
    election.renew_deadline = Duration::from_millis(2000);
    election.retry_period = Duration::from_millis(400);
    election.validate().unwrap();
    election
}

/// `election` renewing in the background until `stop` is cancelled.
fn hold(
    election: &LeaderElection,
    client: &Client,
    observed: Observed,
    stop: &CancellationToken,
) -> tokio::task::JoinHandle<Ended> {
    let (election, client, stop) = (election.clone(), client.clone(), stop.clone());
    tokio::spawn(async move { election.hold(&client, observed, &stop).await })
}

/// `election` waiting for the lease in the background.
fn contend(election: &LeaderElection, client: &Client) -> tokio::task::JoinHandle<Observed> {
    let (election, client) = (election.clone(), client.clone());
    tokio::spawn(async move { election.acquire(&client).await })
}

async fn holder(client: &Client) -> Option<String> {
    let leases: Api<Lease> = Api::namespaced(client.clone(), "default");
    leases
        .get("managers")
        .await
        .unwrap()
        .spec
        .and_then(|spec| spec.holder_identity)
}

#[tokio::test]
async fn a_stopped_leader_is_fenced_before_another_takes_over() {
    let mut dirs = Vec::new();
    let server = support::start_server(&mut dirs).await;
    let client =
        kube_client::client(support::server_config(&server).await, RateLimit::default()).unwrap();
    let (a, b) = (election("a"), election("b"));

    let observed = a.acquire(&client).await;
    assert!(a.fence.allows_writes());
    assert_eq!(holder(&client).await.as_deref(), Some("a"));

    // `a` renews; `b` waits the whole time.
    let stop_a = CancellationToken::new();
    let holding = hold(&a, &client, observed, &stop_a);
    let contender = contend(&b, &client);
    // Two lease durations of renewals by `a`: `b` never gets the lease meanwhile.
    let watch_until = Instant::now() + 2 * a.lease_duration;
    while Instant::now() < watch_until {
        assert_eq!(holder(&client).await.as_deref(), Some("a"));
        assert!(!contender.is_finished(), "b acquired a lease a renews");
        tokio::time::sleep(a.retry_period).await;
    }

    // `a` stops renewing, as a process stopped with SIGSTOP does: its task no longer runs at all.
    holding.abort();
    let stopped_at = Instant::now();
    contender.await.unwrap();
    let taken_after = stopped_at.elapsed();
    // `b` took over within a lease duration of `a`'s last renewal (plus a retry and slack for a busy machine)...
    assert!(
        taken_after <= a.lease_duration + a.retry_period + Duration::from_secs(3),
        "b took {taken_after:?}"
    );
    assert_eq!(holder(&client).await.as_deref(), Some("b"));
    // ...and by then `a`, though nothing of it ran, could no longer write: its fence closed at its renew
    // deadline, which is before any other replica may take the lease.
    assert!(!a.fence.allows_writes());
    assert!(b.fence.allows_writes());
    let fenced = kube_client::builder(support::server_config(&server).await, RateLimit::default())
        .unwrap()
        .with_layer(&a.fence.layer())
        .build();
    let maps: Api<ConfigMap> = Api::namespaced(fenced, "default");
    let map = ConfigMap {
        metadata: ObjectMeta {
            name: Some("written-by-a".to_owned()),
            ..ObjectMeta::default()
        },
        ..ConfigMap::default()
    };
    let refused = maps.create(&PostParams::default(), &map).await.unwrap_err();
    assert!(
        refused
            .to_string()
            .contains("does not hold the leader lease"),
        "{refused}"
    );
    // Reads still pass, and the refused write never reached the server.
    assert!(maps.get_opt("written-by-a").await.unwrap().is_none());
}

#[tokio::test]
async fn a_released_lease_is_taken_at_the_next_try() {
    let mut dirs = Vec::new();
    let server = support::start_server(&mut dirs).await;
    let client =
        kube_client::client(support::server_config(&server).await, RateLimit::default()).unwrap();
    let (a, mut b) = (election("a"), election("b"));
    // A long lease shows that `b` does not wait for it to expire.
    b.lease_duration = Duration::from_secs(60);

    let observed = a.acquire(&client).await;
    let stop_a = CancellationToken::new();
    let holding = hold(&a, &client, observed, &stop_a);
    let contender = contend(&b, &client);
    // `b` has seen `a` hold the lease before `a` lets it go.
    flotilla_testing::eventually("b to observe a's lease", || async {
        (holder(&client).await.as_deref() == Some("a")).then_some(())
    })
    .await;
    tokio::time::sleep(b.retry_period).await;

    stop_a.cancel();
    let released_at = Instant::now();
    assert_eq!(holding.await.unwrap(), Ended::Released);
    assert!(!a.fence.allows_writes());
    contender.await.unwrap();
    let taken_after = released_at.elapsed();
    assert!(
        taken_after < Duration::from_secs(10),
        "b took {taken_after:?} of a released lease"
    );
    assert_eq!(holder(&client).await.as_deref(), Some("b"));
}

#[tokio::test]
async fn a_leader_that_cannot_renew_stops_at_its_renew_deadline() {
    let mut dirs = Vec::new();
    let server = support::start_server(&mut dirs).await;
    let client =
        kube_client::client(support::server_config(&server).await, RateLimit::default()).unwrap();
    let a = election("a");
    let observed = a.acquire(&client).await;

    // Another writer takes the Lease over by hand: `a`'s next renewal sees another holder and stops.
    let leases: Api<Lease> = Api::namespaced(client.clone(), "default");
    let mut lease = leases.get("managers").await.unwrap();
    lease.spec.as_mut().unwrap().holder_identity = Some("intruder".to_owned());
    leases
        .replace("managers", &PostParams::default(), &lease)
        .await
        .unwrap();
    let stop = CancellationToken::new();
    let ended = tokio::time::timeout(Duration::from_secs(30), a.hold(&client, observed, &stop))
        .await
        .unwrap();
    assert_eq!(
        ended,
        Ended::Lost("another candidate holds the lease".to_owned())
    );
    assert!(!a.fence.allows_writes());
}
