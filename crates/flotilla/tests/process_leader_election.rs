//! Two `flotilla controller-manager` replicas elect one leader on Karmada's Lease: the other takes over within
//! the lease duration when the leader is stopped (SIGSTOP), propagates what the leader would have, and the old
//! leader, resumed, finds its leadership gone and exits instead of writing on: on the embedded server, and on a
//! real kube-apiserver whose own `apiserver_request_total` counts that the resumed leader wrote nothing.
#![allow(clippy::unwrap_used, clippy::panic)]

use crate::common;

use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::coordination::v1::Lease;
use kube::api::{Api, DynamicObject, PostParams};
use kube::core::{ApiResource, GroupVersionKind};
use serde_json::json;

use common::real_world::{CONTROL, RealWorld, kube_cache, stop_on_signal};
use common::{
    ControlPlaneAndMember, Proc, control_plane_and_member, controller_manager, eventually,
    free_port,
};
use flotilla::cmd::bench::writes::Writes;

const LEASE_DURATION: Duration = Duration::from_secs(4);
/// Longer than any write a replica has in flight or gathers (the status controllers' 300 and 500 ms).
const QUIET: Duration = Duration::from_secs(2);

/// A replica with short timings in the ratios of Karmada's defaults (15 s, 10 s, 2 s).
fn replica(karmada_config: &std::path::Path, stderr: Stdio) -> Child {
    controller_manager(karmada_config, free_port())
        .args([
            "--leader-elect",
            "--leader-elect-lease-duration=4s",
            "--leader-elect-renew-deadline=3s",
            "--leader-elect-retry-period=500ms",
        ])
        .stdout(Stdio::null())
        .stderr(stderr)
        .spawn()
        .unwrap()
}

fn signal(child: &Child, signal: &str) {
    let sent = std::process::Command::new("kill")
        .args([signal, &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success(), "kill {signal} {}", child.id());
}

/// The pid in the Lease's holder identity (`<host>_<pid>`), if it is held.
/// Stops `leader` with SIGSTOP and asserts that `other` takes the Lease within the lease duration (plus its
/// retry and the test's polling).
async fn stop_and_hand_over(leases: &Api<Lease>, leader: &Child, other: &Child) {
    signal(leader, "-STOP");
    let stopped = Instant::now();
    eventually("the second replica to take the lease", || async {
        (holder_pid(leases).await? == other.id()).then_some(())
    })
    .await;
    let taken_after = stopped.elapsed();
    assert!(
        taken_after <= LEASE_DURATION + Duration::from_secs(3),
        "the lease was taken {taken_after:?} after the leader stopped"
    );
}

async fn holder_pid(leases: &Api<Lease>) -> Option<u32> {
    let lease = leases.get_opt("karmada-controller-manager").await.ok()??;
    let holder = lease.spec?.holder_identity?;
    holder.rsplit('_').next()?.parse().ok()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopped_leader_is_replaced_and_stops_when_resumed() {
    let dir = tempfile::tempdir().unwrap();
    let ControlPlaneAndMember {
        control: _control,
        member: _member,
        karmada_config,
        member_config,
        control_client,
        member_client,
        ..
    } = control_plane_and_member(dir.path(), "member1").await;
    common::join_member1(&karmada_config, &member_config);
    let leases: Api<Lease> = Api::namespaced(control_client.clone(), "karmada-system");

    let mut first = Proc(replica(&karmada_config, Stdio::piped()));
    // Read as it comes, so the replica never blocks on a full pipe.
    let first_stderr = {
        let mut pipe = first.0.stderr.take().unwrap();
        std::thread::spawn(move || {
            let mut text = String::new();
            let _ = std::io::Read::read_to_string(&mut pipe, &mut text);
            text
        })
    };
    eventually("the first replica to lead", || async {
        (holder_pid(&leases).await? == first.0.id()).then_some(())
    })
    .await;
    let second = Proc(replica(&karmada_config, Stdio::null()));
    // The second replica waits while the first renews.
    let watch_until = Instant::now() + 2 * LEASE_DURATION;
    while Instant::now() < watch_until {
        assert_eq!(holder_pid(&leases).await, Some(first.0.id()));
        tokio::time::sleep(Duration::from_millis(500)).await;
    }

    stop_and_hand_over(&leases, &first.0, &second.0).await;

    // The new leader does the work.
    common::propagate_configmap_to_member1(&control_client, member_client, "settings").await;

    // Resumed, the old leader sees at once that its renew deadline passed and exits; the lease stays taken.
    signal(&first.0, "-CONT");
    let status = eventually("the old leader to exit", || {
        let exited = first.0.try_wait().unwrap();
        async move { exited }
    })
    .await;
    assert!(!status.success(), "the old leader exited with {status}");
    let stderr = first_stderr.join().unwrap();
    assert!(stderr.contains("leadership lost"), "{stderr}");
    assert_eq!(holder_pid(&leases).await, Some(second.0.id()));
}

/// The same takeover on a real kube-apiserver (`hack/kube.sh`, for this test alone: its request counter has no
/// label telling replicas apart, so nothing else may write to it). While the old leader is stopped, the new one
/// binds a new template; the new one is then stopped too, and the old one resumed with that template's watch
/// events waiting for it: the API server counts no write from then on. Skipped where hack/kube.sh's binaries are
/// not built, unless `CI` is set.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resumed_leader_writes_nothing_on_a_real_kube_apiserver() {
    let Some(cache) = kube_cache() else { return };
    let dir = tempfile::tempdir().unwrap();
    let world = RealWorld::start(dir.path(), &cache, 0, "20");
    let control = flotilla_testing::client_from_file(&world.control, Some(CONTROL)).await;
    flotilla::cmd::up::install::crds(&control).await.unwrap();
    let leases: Api<Lease> = Api::namespaced(control.clone(), "karmada-system");
    let first = Proc(replica(&world.control, Stdio::null()));
    stop_on_signal(&world, first.0.id(), dir.path());
    eventually("the first replica to lead", || async {
        (holder_pid(&leases).await? == first.0.id()).then_some(())
    })
    .await;
    let mut first = first;
    let second = Proc(replica(&world.control, Stdio::null()));
    stop_and_hand_over(&leases, &first.0, &second.0).await;

    // Work the old leader has not seen: a template and its policy, bound by the new leader.
    let template: Deployment = serde_json::from_value(json!({
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "web", "image": "nginx"}]}}}}))
    .unwrap();
    Api::<Deployment>::namespaced(control.clone(), "default")
        .create(&PostParams::default(), &template)
        .await
        .unwrap();
    let policy = json!({"apiVersion": "policy.karmada.io/v1alpha1", "kind": "PropagationPolicy",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}],
            "placement": {"clusterAffinity": {"clusterNames": ["member1"]}}}});
    let policies = Api::<DynamicObject>::namespaced_with(
        control.clone(),
        "default",
        &ApiResource::from_gvk_with_plural(
            &GroupVersionKind::gvk("policy.karmada.io", "v1alpha1", "PropagationPolicy"),
            "propagationpolicies",
        ),
    );
    policies
        .create(
            &PostParams::default(),
            &serde_json::from_value(policy).unwrap(),
        )
        .await
        .unwrap();
    let bindings = Api::<DynamicObject>::namespaced_with(
        control.clone(),
        "default",
        &ApiResource::from_gvk_with_plural(
            &GroupVersionKind::gvk("work.karmada.io", "v1alpha2", "ResourceBinding"),
            "resourcebindings",
        ),
    );
    eventually("the new leader to bind the template", || async {
        bindings.get_opt("web-deployment").await.ok()?
    })
    .await;

    // Only the old leader may write from here on.
    signal(&second.0, "-STOP");
    tokio::time::sleep(QUIET).await;
    let before = Writes::scrape(&control).await.unwrap();
    signal(&first.0, "-CONT");
    let status = eventually("the old leader to exit", || {
        let exited = first.0.try_wait().unwrap();
        async move { exited }
    })
    .await;
    assert!(!status.success(), "the old leader exited with {status}");
    tokio::time::sleep(QUIET).await;
    let after = Writes::scrape(&control).await.unwrap();
    // kube-apiserver renews its own identity Lease meanwhile, so Leases are judged by their holder instead.
    let written: Vec<_> = after
        .since(&before)
        .0
        .into_iter()
        .filter(|(key, _)| !key.starts_with("leases.coordination.k8s.io "))
        .collect();
    assert!(written.is_empty(), "the resumed leader wrote: {written:?}");
    assert_eq!(holder_pid(&leases).await, Some(second.0.id()));
    signal(&second.0, "-CONT");
    drop(second);
    drop(world);
}
