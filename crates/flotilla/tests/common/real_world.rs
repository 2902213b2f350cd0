//! Real Kubernetes clusters for one test, started by `hack/kube.sh` (a control plane and members with real
//! controllers and KWOK's Nodes): for tests that count what reaches a real kube-apiserver, which a control plane
//! shared with other tests could not tell apart.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const KUBE_SH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../hack/kube.sh");
/// The real control plane's name, which is also its context in the kubeconfig hack/kube.sh writes.
pub(crate) const CONTROL: &str = "karmada-host";

/// Real clusters started by hack/kube.sh for one test, stopped when dropped.
pub(crate) struct RealWorld {
    /// The control plane's kubeconfig (context [`CONTROL`]).
    pub(crate) control: PathBuf,
    /// Each member's kubeconfig (contexts `member1`, `member2`).
    pub(crate) members: Vec<PathBuf>,
    /// Each cluster's state directory.
    pub(crate) dirs: Vec<PathBuf>,
    /// hack/kube.sh's cache of binaries.
    cache: PathBuf,
    member_qps: String,
}

impl RealWorld {
    /// Starts a control plane and `members` members side by side under `dir`, the members' controllers limited
    /// to `member_qps` requests a second (hack/kube.sh's `FLOTILLA_KUBE_MEMBER_QPS`) with one fake Node each.
    pub(crate) fn start(dir: &Path, cache: &Path, members: usize, member_qps: &str) -> RealWorld {
        let mut clusters = vec![(CONTROL.to_owned(), "control-plane")];
        clusters.extend((1..=members).map(|i| (format!("member{i}"), "member")));
        let mut world = RealWorld {
            control: PathBuf::new(),
            members: Vec::new(),
            dirs: clusters.iter().map(|(name, _)| dir.join(name)).collect(),
            cache: cache.to_owned(),
            member_qps: member_qps.to_owned(),
        };
        let starting: Vec<_> = clusters
            .iter()
            .map(|(name, role)| {
                world
                    .kube_sh(&["up", name, dir.to_str().unwrap(), role])
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        // Every start is waited for before any failure is reported, so that dropping the world stops them all.
        let started: Vec<_> = starting
            .into_iter()
            .map(|child| child.wait_with_output().unwrap())
            .collect();
        for ((name, _), out) in clusters.iter().zip(started) {
            assert!(
                out.status.success(),
                "hack/kube.sh up {name} failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            let config = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
            if name == CONTROL {
                world.control = config;
            } else {
                world.members.push(config);
            }
        }
        world
    }

    pub(crate) fn kube_sh(&self, args: &[&str]) -> Command {
        let mut command = Command::new("bash");
        command
            .arg(KUBE_SH)
            .args(args)
            .env("FLOTILLA_KUBE_CACHE", &self.cache)
            // The tests' Deployments have no Pods: one fake Node is plenty.
            .env("FLOTILLA_KUBE_NODES", "1")
            .env("FLOTILLA_KUBE_MEMBER_QPS", &self.member_qps);
        command
    }
}

impl Drop for RealWorld {
    fn drop(&mut self) {
        kill_clusters(&self.dirs, None);
    }
}

/// Kills every process of the clusters in `dirs` (and `also`) at once: their state goes with the test's
/// directory, so there is nothing to shut down cleanly, and `hack/kube.sh down` gives each process up to 10 s (a
/// member took 17 s).
pub(crate) fn kill_clusters(dirs: &[PathBuf], also: Option<u32>) {
    let mut pids: Vec<String> = also.map(|pid| pid.to_string()).into_iter().collect();
    for dir in dirs {
        let Ok(files) = std::fs::read_dir(dir.join("pids")) else {
            continue;
        };
        for file in files.flatten() {
            pids.push(
                std::fs::read_to_string(file.path())
                    .unwrap_or_default()
                    .trim()
                    .to_owned(),
            );
        }
    }
    if !pids.is_empty() {
        let _ = Command::new("kill").arg("-KILL").args(&pids).status();
    }
}

/// Stops the clusters and the controller manager `manager` and removes `dir` when the test is interrupted
/// (nextest's timeout, a person's Ctrl-C), which ends the process without running `Drop`.
pub(crate) fn stop_on_signal(world: &RealWorld, manager: u32, dir: &Path) {
    use tokio::signal::unix::{SignalKind, signal};
    let (dirs, dir) = (world.dirs.clone(), dir.to_owned());
    tokio::spawn(async move {
        let (Ok(mut term), Ok(mut int)) = (
            signal(SignalKind::terminate()),
            signal(SignalKind::interrupt()),
        ) else {
            return;
        };
        tokio::select! {
            _ = term.recv() => {}
            _ = int.recv() => {}
        }
        kill_clusters(&dirs, Some(manager));
        let _ = std::fs::remove_dir_all(&dir);
        std::process::exit(130);
    });
}

/// hack/kube.sh's cache of real Kubernetes binaries, the directory above `FLOTILLA_KUBE_BIN` (which
/// hack/test-deps.sh sets once it built them). Without it the test is skipped with a message, unless `CI` is set.
pub(crate) fn kube_cache() -> Option<PathBuf> {
    let Some(bin) = std::env::var_os("FLOTILLA_KUBE_BIN").map(PathBuf::from) else {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI counts writes on real kube-apiservers too: FLOTILLA_KUBE_BIN must name hack/kube.sh's binaries \
             (hack/test-deps.sh builds them and sets it)"
        );
        eprintln!(
            "skipping the count on real kube-apiservers: FLOTILLA_KUBE_BIN is not set \
             (`eval \"$(hack/test-deps.sh)\"` builds hack/kube.sh's binaries and sets it)"
        );
        return None;
    };
    assert!(
        bin.join("kube-apiserver").is_file(),
        "FLOTILLA_KUBE_BIN={} holds no kube-apiserver",
        bin.display()
    );
    Some(
        bin.parent()
            .expect("FLOTILLA_KUBE_BIN is hack/kube.sh's CACHE/bin")
            .to_owned(),
    )
}
