use serde_json::{Value, json};

use super::{err, mk, object, ok};
use crate::layer::{Request, Response};

fn replicas(object: Value) -> (i32, Value) {
    match ok(Request::InterpretReplica { object }) {
        Response::Replicas {
            replicas,
            requirements,
        } => (
            replicas,
            serde_json::to_value(requirements).unwrap_or_default(),
        ),
        other => panic!("unexpected {other:?}"),
    }
}

fn template(cpu: &str) -> Value {
    json!({"template": {"spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}]}}})
}

#[test]
fn replica_counts_per_kind() {
    let with_spec = |api: &str, kind: &str, spec: Value| mk(api, kind, json!({ "spec": spec }));
    let mut job_spec = template("1");
    super::merge(&mut job_spec, json!({"parallelism": 5, "completions": 3}));
    let mut job_no_completions = template("1");
    super::merge(&mut job_no_completions, json!({"parallelism": 4}));
    let mut job_fewer = template("1");
    super::merge(&mut job_fewer, json!({"parallelism": 2, "completions": 3}));
    let mut deployment = template("100m");
    super::merge(&mut deployment, json!({"replicas": 3}));
    let cases = [
        (
            "deployment",
            with_spec("apps/v1", "Deployment", deployment),
            3,
            json!({"resourceRequest": {"cpu": "100m"}}),
        ),
        (
            "deployment without replicas",
            with_spec("apps/v1", "Deployment", template("1")),
            0,
            json!({"resourceRequest": {"cpu": "1"}}),
        ),
        (
            "replicaset",
            with_spec("apps/v1", "ReplicaSet", json!({"replicas": 2})),
            2,
            Value::Null,
        ),
        (
            "statefulset",
            with_spec(
                "apps/v1",
                "StatefulSet",
                json!({"replicas": 4, "template": {"spec": {"containers": []}}}),
            ),
            4,
            Value::Null,
        ),
        (
            "job takes min(parallelism, completions)",
            with_spec("batch/v1", "Job", job_spec),
            3,
            json!({"resourceRequest": {"cpu": "1"}}),
        ),
        (
            "job without completions",
            with_spec("batch/v1", "Job", job_no_completions),
            4,
            json!({"resourceRequest": {"cpu": "1"}}),
        ),
        (
            "job with fewer parallel pods",
            with_spec("batch/v1", "Job", job_fewer),
            2,
            json!({"resourceRequest": {"cpu": "1"}}),
        ),
        (
            "pod is one replica",
            mk(
                "v1",
                "Pod",
                json!({"spec": {"nodeSelector": {"a": "b"}, "containers": []}}),
            ),
            1,
            json!({"nodeClaim": {"nodeSelector": {"a": "b"}}}),
        ),
    ];
    for (name, input, count, requirements) in cases {
        assert_eq!(replicas(input), (count, requirements), "{name}");
    }
}

#[test]
fn replica_errors_name_the_problem() {
    let bad_type = mk(
        "apps/v1",
        "Deployment",
        json!({"spec": {"replicas": "three"}}),
    );
    let message = err(Request::InterpretReplica { object: bad_type });
    assert!(message.contains("Deployment ns/web"), "{message}");
    let no_handler = mk("apps/v1", "DaemonSet", json!({}));
    assert_eq!(
        err(Request::InterpretReplica { object: no_handler }),
        r#"default InterpretReplica interpreter for "apps/v1, Kind=DaemonSet" not found"#
    );
    let message = err(Request::InterpretComponent {
        object: mk("apps/v1", "Deployment", json!({})),
    });
    assert_eq!(message, "interface GetComponents not implemented yet");
}

#[test]
fn revise_replica_writes_only_existing_fields() {
    let revise =
        |object: Value, replicas: i64| object_of(Request::ReviseReplica { object, replicas });
    fn object_of(r: Request) -> Value {
        object(ok(r))
    }
    let cases = [
        (
            mk(
                "apps/v1",
                "Deployment",
                json!({"spec": {"replicas": 3, "paused": true}}),
            ),
            json!({"spec": {"replicas": 7, "paused": true}}),
        ),
        (
            mk("apps/v1", "ReplicaSet", json!({"spec": {"replicas": 1}})),
            json!({"spec": {"replicas": 7}}),
        ),
        (
            mk("apps/v1", "StatefulSet", json!({"spec": {"replicas": 0}})),
            json!({"spec": {"replicas": 7}}),
        ),
        (
            mk(
                "batch/v1",
                "Job",
                json!({"spec": {"parallelism": 2, "completions": 9}}),
            ),
            json!({"spec": {"parallelism": 7, "completions": 9}}),
        ),
        (
            mk("apps/v1", "Deployment", json!({"spec": {"paused": true}})),
            json!({"spec": {"paused": true}}),
        ),
        (
            mk("batch/v1", "Job", json!({"spec": {"completions": 9}})),
            json!({"spec": {"completions": 9}}),
        ),
    ];
    for (input, expected) in cases {
        let expected = {
            let mut e = input.clone();
            super::merge(&mut e, expected);
            e
        };
        assert_eq!(revise(input, 7), expected);
    }
    let float = mk("apps/v1", "Deployment", json!({"spec": {"replicas": 2.5}}));
    let message = err(Request::ReviseReplica {
        object: float,
        replicas: 1,
    });
    assert!(
        message.contains("spec.replicas") && message.contains("float64"),
        "{message}"
    );
    let pod = mk("v1", "Pod", json!({}));
    assert!(
        err(Request::ReviseReplica {
            object: pod,
            replicas: 1
        })
        .contains("ReviseReplica")
    );
}
