//! A member pod's logs and exec, as Karmada's `karmadactl logs` and `karmadactl exec` specs use them: kubectl asks
//! the member directly, and through the control plane's cluster proxy
//! (`/apis/cluster.karmada.io/v1alpha1/clusters/<member>/proxy`, the server karmadactl points its member client
//! at), for the logs of the pod Karmada's specs make (with `-c`, `--tail`, `--timestamps`), for a container the pod
//! does not have (`container non-existent-container is not valid for pod web`), for a pod that does not exist, and
//! runs `echo hello` and `false` in it; and `kubectl top pod` of it, as Karmada's `karmadactl top` specs ask the
//! member's metrics-server (the pod sets its usage with `kwok.x-k8s.io/usage-cpu`, the rule of both worlds), and
//! of a pod that does not exist.
//!
//! In the embedded world the member's simulator binds the pod and its simulated kubelet answers; in the kube world
//! kube-scheduler binds it and KWOK's server answers (hack/kube/debugging.yaml): the log's words differ by world,
//! its last line is `ready` in both, and `echo hello` says `hello` in both; `false` exits 1 in the embedded world,
//! while KWOK reports the failed command as an internal error. The metrics come from the simulator's metrics-server
//! in the embedded world and from a real metrics-server scraping KWOK in the kube world, which has them only
//! after two scrapes (about 20 s).
#![allow(clippy::unwrap_used, clippy::panic)]

use flotilla_api::policy::v1alpha1::PropagationPolicy;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, PostParams};
use serde_json::json;
use std::time::Duration;

use flotilla_e2e::resources::Res;
use flotilla_e2e::steps::member_object;
use flotilla_e2e::wait::wait_within;
use flotilla_e2e::{Env, Kubectl, Options, World};

const POD: Res = Res("", "v1", "Pod", "pods");
const PROXY: &str = "/apis/cluster.karmada.io/v1alpha1/clusters";
const MEMBERS: [&str; 3] = ["member1", "member2", "member3"];

flotilla_e2e::scenario!(
    member_pods_give_logs_and_run_exec_directly_and_through_the_cluster_proxy,
    "podio",
    Options::default(),
    pod_io
);

async fn pod_io(env: &Env, ns: &str) -> anyhow::Result<()> {
    propagate_pod(env, ns).await?;
    for member in MEMBERS {
        member_object(env, member, POD, ns, "web", "the pod to run", |pod| {
            pod["status"]["phase"] == "Running" && pod["spec"]["nodeName"].is_string()
        })
        .await?;
    }
    let karmada = env.karmada_url().await?;
    let kubectls = [Kubectl::newest(), Kubectl::machine()];
    for member in MEMBERS {
        let through = format!("{karmada}{PROXY}/{member}/proxy");
        for kubectl in &kubectls {
            let exec = [
                "exec", "web", "-n", ns, "-c", "nginx", "--", "echo", "hello",
            ];
            let direct = kubectl
                .run(&env.members_config, Some(member), &exec)
                .await?;
            assert_eq!(direct, "hello\n", "{member} directly");
            let proxied = run_through(env, kubectl, &through, &exec).await?;
            assert_eq!(proxied, "hello\n", "{member} through the proxy");
        }
    }
    let through = format!("{karmada}{PROXY}/member1/proxy");
    for kubectl in &kubectls {
        logs(env, kubectl, ns, None).await?;
        logs(env, kubectl, ns, Some(&through)).await?;
    }
    for member in MEMBERS {
        let through = format!("{karmada}{PROXY}/{member}/proxy");
        top(env, ns, member, &through).await?;
    }
    Ok(())
}

/// `kubectl top pod` of `web` in `member`, directly and through `server`: both containers at the annotated 250m
/// of CPU (KWOK's rate may print one milli-core off), and the refusal for a pod that does not exist.
async fn top(env: &Env, ns: &str, member: &str, server: &str) -> anyhow::Result<()> {
    let kubectl = Kubectl::newest();
    let (kubectl, members_config) = (&kubectl, &env.members_config);
    let top = ["top", "pod", "web", "-n", ns, "--no-headers"];
    for via in ["directly", "through the proxy"] {
        let line = wait_within(
            &format!("the metrics of pod web in {member} ({via})"),
            Duration::from_secs(120),
            || async move {
                let out = if via == "directly" {
                    kubectl.run(members_config, Some(member), &top).await
                } else {
                    run_through(env, kubectl, server, &top).await
                };
                out.map_err(|e| e.to_string())
            },
        )
        .await?;
        let cpu = line
            .split_whitespace()
            .nth(1)
            .and_then(|c| c.strip_suffix('m'))
            .and_then(|c| c.parse::<i64>().ok())
            .unwrap_or_else(|| panic!("{member} {via}: no CPU in {line:?}"));
        assert!((499..=501).contains(&cpu), "{member} {via}: {line:?}");
    }
    let missing = kubectl
        .run(
            members_config,
            Some(member),
            &["top", "pod", "ghost", "-n", ns],
        )
        .await
        .expect_err("no such pod");
    assert!(
        missing.to_string().contains("pods \"ghost\" not found"),
        "{member}: {missing}"
    );
    Ok(())
}

/// The pod of Karmada's e2e helper (two containers, `nginx` with a named port, `busybox` sleeping), propagated to
/// every member.
async fn propagate_pod(env: &Env, ns: &str) -> anyhow::Result<()> {
    let policy = json!({
        "apiVersion": "policy.karmada.io/v1alpha1", "kind": "PropagationPolicy",
        "metadata": {"name": "web", "namespace": ns},
        "spec": {
            "resourceSelectors": [{"apiVersion": "v1", "kind": "Pod", "name": "web"}],
            "placement": {"clusterAffinity": {"clusterNames": MEMBERS}},
        }
    });
    Api::<PropagationPolicy>::namespaced(env.karmada.clone(), ns)
        .create(&PostParams::default(), &serde_json::from_value(policy)?)
        .await?;
    let pod = json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "web", "namespace": ns, "annotations": {"kwok.x-k8s.io/usage-cpu": "250m"}},
        "spec": {"containers": [
            {"name": "nginx", "image": "nginx:1.19.0",
             "ports": [{"name": "web", "containerPort": 80, "protocol": "TCP"}]},
            {"name": "busybox", "image": "busybox:1.36.0", "command": ["sleep", "3600"],
             "ports": [{"name": "web", "containerPort": 81, "protocol": "TCP"}]},
        ]}
    });
    Api::<Pod>::namespaced(env.karmada.clone(), ns)
        .create(&PostParams::default(), &serde_json::from_value(pod)?)
        .await?;
    Ok(())
}

/// kubectl with the control plane's kubeconfig against `server` (a member's cluster proxy), as karmadactl's
/// member client is.
async fn run_through(
    env: &Env,
    kubectl: &Kubectl,
    server: &str,
    args: &[&str],
) -> anyhow::Result<String> {
    let mut all = vec!["--server", server];
    all.extend_from_slice(args);
    env.kubectl_karmada(kubectl, &all).await
}

/// member1's pod `web`: its logs, with and without `-c`, the last line with its time, the refusals for a container
/// it does not have and a pod that does not exist, and a command that fails; directly, or through `server`.
async fn logs(env: &Env, kubectl: &Kubectl, ns: &str, server: Option<&str>) -> anyhow::Result<()> {
    let run = |args: Vec<String>| async move {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        match server {
            Some(server) => run_through(env, kubectl, server, &args).await,
            None => {
                kubectl
                    .run(&env.members_config, Some("member1"), &args)
                    .await
            }
        }
    };
    // The namespace first: what follows `--` in an exec is the command's.
    let args = |words: &[&str]| {
        let mut all = vec!["-n".to_owned(), ns.to_owned()];
        all.extend(words.iter().map(|w| (*w).to_owned()));
        all
    };
    let via = server.unwrap_or("member1 directly");

    // Without -c kubectl takes the first container, as karmadactl does.
    let first = run(args(&["logs", "web"])).await?;
    let started = match env.world {
        World::Embedded => "flotilla simulated container nginx started on node",
        World::Kube => "kwok fake container started",
    };
    assert!(first.contains(started), "{via}: {first}");
    let named = run(args(&["logs", "web", "-c", "busybox"])).await?;
    assert!(!named.trim().is_empty(), "{via}: no log");
    if env.world == World::Embedded {
        assert!(named.contains("command: sleep 3600"), "{via}: {named}");
    }
    let last = run(args(&[
        "logs",
        "web",
        "-c",
        "nginx",
        "--tail",
        "1",
        "--timestamps",
    ]))
    .await?;
    let (stamp, line) = last
        .trim_end()
        .split_once(' ')
        .unwrap_or_else(|| panic!("{via}: no time: {last:?}"));
    assert_eq!(line, "ready", "{via}: {last:?}");
    assert!(
        stamp.len() >= "2025-01-01T00:00:00Z".len() && stamp.ends_with('Z'),
        "{via}: {last:?}"
    );

    let refused = run(args(&["logs", "web", "-c", "non-existent-container"]))
        .await
        .expect_err("no such container");
    assert!(
        refused
            .to_string()
            .contains("container non-existent-container is not valid for pod web"),
        "{via}: {refused}"
    );
    let missing = run(args(&["logs", "ghost"]))
        .await
        .expect_err("no such pod");
    assert!(
        missing.to_string().contains("pods \"ghost\" not found"),
        "{via}: {missing}"
    );
    let failed = run(args(&["exec", "web", "-c", "nginx", "--", "false"]))
        .await
        .expect_err("false fails");
    // KWOK passes a command's failure on as an error of its own, not as the exit code a runtime reports.
    let exited = match env.world {
        World::Embedded => "command terminated with exit code 1",
        World::Kube => "exit status 1",
    };
    assert!(failed.to_string().contains(exited), "{via}: {failed}");
    Ok(())
}
