//! The simulated kubelet's pieces without a server: options, log lines, the channel framing, the commands and the
//! Nodes' endpoints. `tests/against_a_server.rs` holds them to an API server and real clients.
#![allow(clippy::unwrap_used)]

use jiff::Timestamp;
use k8s_openapi::api::core::v1::{Container, Pod};
use serde_json::json;

use super::channels::{self, Incoming, Outcome, STDOUT, V4, V5};
use super::commands::{self, Context, Run};
use super::exec::Streams;
use super::logs::{self, BadOptions, Options};
use super::nodes::with_endpoint;

fn pairs(query: &[(&str, &str)]) -> Vec<(String, String)> {
    query
        .iter()
        .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
        .collect()
}

fn pod() -> Pod {
    serde_json::from_value(json!({
        "metadata": {"name": "web", "namespace": "ns", "uid": "u1"},
        "spec": {"nodeName": "node-1", "containers": [{
            "name": "nginx", "image": "nginx:1.19.0", "command": ["nginx"], "args": ["-g", "daemon off;"],
            "ports": [{"name": "web", "containerPort": 80, "protocol": "TCP"}],
            "env": [{"name": "MODE", "value": "test"}, {"name": "FROM_SECRET", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}}]}]},
        "status": {"phase": "Running", "containerStatuses": [{"name": "nginx", "image": "nginx:1.19.0", "imageID": "",
            "ready": true, "restartCount": 0, "state": {"running": {"startedAt": "2024-05-01T10:00:00Z"}}}]}
    }))
    .unwrap()
}

fn container(pod: &Pod) -> Container {
    pod.spec.as_ref().unwrap().containers[0].clone()
}

const T0: &str = "2024-05-01T10:00:00Z";

fn at(text: &str) -> Timestamp {
    text.parse().unwrap()
}

#[test]
fn a_simulated_container_logs_its_start_a_millisecond_a_line() {
    let pod = pod();
    let lines = logs::lines(&pod, &container(&pod), at(T0));
    let text: Vec<&str> = lines.iter().map(|(_, l)| l.as_str()).collect();
    assert_eq!(
        text,
        [
            "flotilla simulated container nginx started on node node-1 in pod ns/web",
            "image: nginx:1.19.0",
            "command: nginx -g daemon off;",
            "listening on port 80/TCP (web)",
            "ready",
        ]
    );
    assert_eq!(logs::rfc3339_nano(lines[0].0), "2024-05-01T10:00:00Z");
    assert_eq!(logs::rfc3339_nano(lines[2].0), "2024-05-01T10:00:00.002Z");
}

#[test]
fn log_options_apply_as_a_kubelet_applies_them() {
    let pod = pod();
    let lines = logs::lines(&pod, &container(&pod), at(T0));
    let now = at("2024-05-01T11:00:00Z");
    let opts = |query: &[(&str, &str)]| Options::parse(&pairs(query), now).unwrap();

    let (all, limited) = logs::render(&lines, &opts(&[]));
    assert!(!limited);
    assert_eq!(String::from_utf8(all.clone()).unwrap().lines().count(), 5);

    let (tail, _) = logs::render(&lines, &opts(&[("tailLines", "2"), ("timestamps", "true")]));
    assert_eq!(
        String::from_utf8(tail).unwrap(),
        "2024-05-01T10:00:00.003Z listening on port 80/TCP (web)\n2024-05-01T10:00:00.004Z ready\n"
    );
    let (old_tail, _) = logs::render(&lines, &opts(&[("tail", "1")]));
    assert_eq!(old_tail, b"ready\n");
    let (nothing, _) = logs::render(&lines, &opts(&[("tailLines", "0")]));
    assert!(nothing.is_empty());

    let (cut, limited) = logs::render(&lines, &opts(&[("limitBytes", "10")]));
    assert!(limited);
    assert_eq!(cut, &all[..10]);

    let (since, _) = logs::render(&lines, &opts(&[("sinceTime", "2024-05-01T10:00:00.003Z")]));
    assert_eq!(String::from_utf8(since).unwrap().lines().count(), 2);
    let (recent, _) = logs::render(&lines, &opts(&[("sinceSeconds", "60")]));
    assert!(recent.is_empty(), "the lines are an hour old");

    assert_eq!(
        Options::parse(&pairs(&[("tailLines", "x")]), now),
        Err(BadOptions::Decode)
    );
    for bad in [
        &[("tailLines", "-1")][..],
        &[("limitBytes", "0")],
        &[("sinceSeconds", "0")],
        &[("sinceSeconds", "5"), ("sinceTime", T0)],
    ] {
        assert_eq!(
            Options::parse(&pairs(bad), now),
            Err(BadOptions::Invalid),
            "{bad:?}"
        );
    }
}

#[test]
fn a_container_without_a_log_gets_the_kubelets_reason() {
    let mut pod = pod();
    assert_eq!(logs::started(&pod, "nginx", false), Ok(at(T0)));
    assert_eq!(
        logs::started(&pod, "nginx", true),
        Err("previous terminated container \"nginx\" in pod \"web\" not found".to_string())
    );
    assert_eq!(
        logs::started(&pod, "sidecar", false),
        Err("container \"sidecar\" in pod \"web\" is not available".to_string())
    );
    pod.status
        .as_mut()
        .unwrap()
        .container_statuses
        .as_mut()
        .unwrap()[0]
        .state =
        Some(serde_json::from_value(json!({"waiting": {"reason": "ImagePullBackOff"}})).unwrap());
    assert_eq!(
        logs::started(&pod, "nginx", false),
        Err(
            "container \"nginx\" in pod \"web\" is waiting to start: trying and failing to pull image"
                .to_string()
        )
    );
}

#[test]
fn messages_carry_their_channel_first() {
    assert_eq!(channels::frame(STDOUT, b"hello\n"), b"\x01hello\n");
    assert_eq!(channels::frame(STDOUT, b""), [1]);
    assert_eq!(channels::read(b"\x00abc", V5), Incoming::Stdin(b"abc"));
    assert_eq!(channels::read(&[255, 0], V5), Incoming::StdinClosed);
    assert_eq!(
        channels::read(&[255, 0], V4),
        Incoming::Other,
        "v4 has no close signal"
    );
    assert_eq!(
        channels::read(b"\x04{\"Width\":80,\"Height\":24}", V5),
        Incoming::Resize
    );
    assert_eq!(channels::read(&[], V5), Incoming::Other);
}

#[test]
fn the_outcome_is_a_status_as_the_remote_command_server_writes_it() {
    let argv = ["false".to_string()];
    assert_eq!(
        String::from_utf8(channels::status(&argv, &Outcome::Exited(0))).unwrap(),
        r#"{"status":"Success"}"#
    );
    assert_eq!(
        String::from_utf8(channels::status(&argv, &Outcome::Exited(1))).unwrap(),
        r#"{"status":"Failure","message":"command terminated with non-zero exit code: error executing command [false], exit code 1","reason":"NonZeroExitCode","details":{"causes":[{"reason":"ExitCode","message":"1"}]}}"#
    );
    assert_eq!(
        String::from_utf8(channels::status(&argv, &Outcome::Failed("no".into()))).unwrap(),
        r#"{"status":"Failure","message":"Internal error occurred: error executing command in container: no","reason":"InternalError","code":500}"#
    );
}

fn argv(words: &[&str]) -> Vec<String> {
    words.iter().map(|w| (*w).to_string()).collect()
}

fn output(run: Run) -> (String, String, i32) {
    match run {
        Run::Done {
            stdout,
            stderr,
            code,
        } => (
            String::from_utf8(stdout).unwrap(),
            String::from_utf8(stderr).unwrap(),
            code,
        ),
        other => panic!("not a finished command: {other:?}"),
    }
}

#[test]
fn simulated_containers_answer_their_few_commands_from_the_pod() {
    let pod = pod();
    let context = Context::of(&pod, &container(&pod));
    let run = |words: &[&str]| commands::run(&argv(words), &context, "id");
    assert_eq!(
        output(run(&["echo", "hello"])),
        ("hello\n".into(), String::new(), 0)
    );
    assert_eq!(output(run(&["/bin/echo", "-n", "a", "b"])).0, "a b");
    assert_eq!(output(run(&["echo"])).0, "\n");
    assert_eq!(output(run(&["true"])).2, 0);
    assert_eq!(output(run(&["/usr/bin/false"])).2, 1);
    assert_eq!(output(run(&["hostname"])).0, "web\n");
    assert_eq!(
        output(run(&["env"])).0,
        "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\nHOSTNAME=web\nMODE=test\nHOME=/root\n"
    );
    assert_eq!(run(&["cat"]), Run::Cat);
    assert_eq!(output(run(&["cat", "/etc/hosts"])).2, 1);
    assert_eq!(
        run(&["ls", "/"]),
        Run::Missing("failed to exec in container: failed to start exec \"id\": OCI runtime exec failed: exec failed: unable to start container process: exec: \"ls\": executable file not found in $PATH: unknown".into())
    );
    assert!(
        matches!(run(&["/opt/echo"]), Run::Missing(why) if why.contains("exec: \"/opt/echo\": stat /opt/echo: no such file or directory")),
        "a path outside the bin directories is not a known command"
    );
}

#[test]
fn exec_streams_are_on_only_when_one_and_a_terminal_takes_standard_error() {
    assert_eq!(
        Streams::of(&pairs(&[("stdout", "1"), ("stderr", "1"), ("tty", "1")])),
        Ok(Streams {
            stdin: false,
            stdout: true,
            stderr: false,
            tty: true
        })
    );
    assert_eq!(
        Streams::of(&pairs(&[("stdout", "true")])),
        Err("you must specify at least 1 of stdin, stdout, stderr")
    );
}

#[test]
fn nodes_point_at_the_kubelet_once() {
    let node = json!({"metadata": {"name": "node-1"}, "status": {"addresses": [{"type": "Hostname", "address": "node-1"}]}});
    let updated = with_endpoint(&node, 4321).unwrap();
    assert_eq!(
        updated["status"]["addresses"],
        json!([{"type": "InternalIP", "address": "127.0.0.1"}, {"type": "Hostname", "address": "node-1"}])
    );
    assert_eq!(
        updated["status"]["daemonEndpoints"]["kubeletEndpoint"]["Port"],
        4321
    );
    assert_eq!(with_endpoint(&updated, 4321), None);
    let moved = with_endpoint(&updated, 4322).unwrap();
    assert_eq!(
        moved["status"]["daemonEndpoints"]["kubeletEndpoint"]["Port"],
        4322
    );
    assert_eq!(moved["status"]["addresses"], updated["status"]["addresses"]);
}
