//! Two `flotilla controller-manager` replicas elect one leader on Karmada's Lease: the other takes over within
//! the lease duration when the leader is stopped (SIGSTOP), propagates what the leader would have, and the old
//! leader, resumed, finds its leadership gone and exits instead of writing on.
#![allow(clippy::unwrap_used, clippy::panic)]

use crate::common;

use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use k8s_openapi::api::coordination::v1::Lease;
use kube::api::Api;

use common::{
    ControlPlaneAndMember, Proc, control_plane_and_member, controller_manager, eventually,
    free_port,
};

const LEASE_DURATION: Duration = Duration::from_secs(4);

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

    signal(&first.0, "-STOP");
    let stopped = Instant::now();
    eventually("the second replica to take the lease", || async {
        (holder_pid(&leases).await? == second.0.id()).then_some(())
    })
    .await;
    let taken_after = stopped.elapsed();
    assert!(
        taken_after <= LEASE_DURATION + Duration::from_secs(3),
        "the lease was taken {taken_after:?} after the leader stopped"
    );

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
