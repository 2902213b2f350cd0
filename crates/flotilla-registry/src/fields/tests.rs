use super::*;
use serde_json::json;

fn pod() -> Value {
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "web-1", "namespace": "prod"},
        "spec": {"nodeName": "node-a", "restartPolicy": "Always", "serviceAccountName": "default"},
        "status": {"phase": "Running", "podIPs": [{"ip": "10.0.0.5"}, {"ip": "fd00::5"}]}
    })
}

const POD: KindInfo<'static> = KindInfo {
    group: "",
    version: "v1",
    kind: "Pod",
    namespaced: true,
    crd_version: None,
};

#[test]
fn parses_terms_operators_and_escapes() {
    type Row<'a> = (&'a str, &'a [(&'a str, &'a str, bool)]);
    let cases: &[Row<'_>] = &[
        ("", &[]),
        ("metadata.name=web", &[("metadata.name", "web", false)]),
        ("metadata.name==web", &[("metadata.name", "web", false)]),
        ("metadata.name!=web", &[("metadata.name", "web", true)]),
        ("metadata.name=", &[("metadata.name", "", false)]),
        ("b=2,a=1", &[("a", "1", false), ("b", "2", false)]),
        ("a=1,,b=2,", &[("a", "1", false), ("b", "2", false)]),
        (r"a=x\,y", &[("a", "x,y", false)]),
        (r"a=x\=y\\z", &[("a", "x=y\\z", false)]),
    ];
    for (input, want) in cases {
        let got = FieldSelector::parse(input);
        let want: Vec<Term> = want
            .iter()
            .map(|(f, v, n)| Term {
                field: (*f).into(),
                value: (*v).into(),
                negated: *n,
            })
            .collect();
        match got {
            Ok(sel) => assert_eq!(sel.terms(), want.as_slice(), "{input}"),
            Err(e) => panic!("{input}: {e}"),
        }
    }
}

#[test]
fn rejects_bad_grammar_with_upstream_messages() {
    let cases = [
        (
            "metadata.name",
            "invalid selector: 'metadata.name'; can't understand 'metadata.name'",
        ),
        ("a=1,b", "invalid selector: 'a=1,b'; can't understand 'b'"),
        (
            r"a=x\y",
            r"invalid field selector: invalid escape sequence: \y",
        ),
        (
            r"a=x\",
            r"invalid field selector: invalid escape sequence: \",
        ),
        (
            "a==b=c",
            "invalid field selector: unescaped character in value: 61",
        ),
        (
            "a!==b",
            "invalid field selector: unescaped character in value: 61",
        ),
    ];
    for (input, want) in cases {
        let err = FieldSelector::parse(input).expect_err(input);
        assert_eq!(err.message, want, "{input}");
        assert_eq!(err.to_status().code, 400);
        assert_eq!(err.to_status().reason, "BadRequest");
    }
}

#[test]
fn refuses_unknown_fields_per_kind() {
    let crd_version = json!({"name": "v1", "selectableFields": [{"jsonPath": ".spec.color"}]});
    let cases = [
        (
            KindInfo::builtin("apps", "v1", "Deployment", true),
            "spec.replicas",
            "\"spec.replicas\" is not a known field selector: only \"metadata.name\", \"metadata.namespace\"",
        ),
        (POD, "spec.foo", "field label not supported: spec.foo"),
        (
            KindInfo::builtin("", "v1", "Node", false),
            "metadata.namespace",
            "field label not supported: metadata.namespace",
        ),
        (
            KindInfo::builtin("", "v1", "ConfigMap", true),
            "data.x",
            "field label \"data.x\" not supported for \"ConfigMap\"",
        ),
        (
            KindInfo::builtin("batch", "v1", "Job", true),
            "status.succeeded",
            "field label \"status.succeeded\" not supported for batchv1.Job",
        ),
        (
            KindInfo::custom("example.com", "v1", "Foo", true, &crd_version),
            "spec.size",
            "\"spec.size\" is not a known field selector: only \"metadata.name\", \"metadata.namespace\"",
        ),
    ];
    for (kind, field, want) in cases {
        let err = FieldSelector::parse_for_kind(&format!("{field}=x"), &kind).expect_err(field);
        assert_eq!(err.message, want);
    }
}

#[test]
fn accepts_per_kind_fields() {
    let crd_version = json!({"name": "v1", "selectableFields": [{"jsonPath": ".spec.color"}]});
    let cases = [
        (
            POD,
            "spec.nodeName=a,status.phase!=Failed,spec.hostNetwork=false",
        ),
        (
            KindInfo::builtin("", "v1", "Event", true),
            "involvedObject.name=web,involvedObject.kind=Pod,reason=x,source=kubelet,type=Normal",
        ),
        (
            KindInfo::builtin("events.k8s.io", "v1", "Event", true),
            "regarding.name=web,reportingController=x",
        ),
        (KindInfo::builtin("", "v1", "Secret", true), "type=Opaque"),
        (
            KindInfo::builtin("", "v1", "Namespace", false),
            "status.phase=Active,metadata.name=x",
        ),
        (
            KindInfo::builtin("", "v1", "Node", false),
            "spec.unschedulable=true",
        ),
        (
            KindInfo::builtin("apps", "v1", "Deployment", true),
            "metadata.name=a,metadata.namespace=b",
        ),
        (
            KindInfo::custom("example.com", "v1", "Foo", true, &crd_version),
            "spec.color=red,metadata.name=a",
        ),
    ];
    for (kind, input) in cases {
        assert!(
            FieldSelector::parse_for_kind(input, &kind).is_ok(),
            "{} {input}",
            kind.kind
        );
    }
}

#[test]
fn matches_pods_like_the_real_server() {
    let p = pod();
    let cases = [
        ("", true),
        ("metadata.name=web-1", true),
        ("metadata.name=web-2", false),
        ("metadata.name!=web-2", true),
        ("metadata.namespace=prod", true),
        ("spec.nodeName=node-a", true),
        ("spec.host=node-a", true),
        ("spec.nodeName=", false),
        ("spec.schedulerName=", true),
        ("status.phase=Running,spec.restartPolicy=Always", true),
        ("status.phase=Running,spec.restartPolicy=Never", false),
        ("status.podIP=10.0.0.5", true),
        ("spec.hostNetwork=false", true),
        ("spec.hostNetwork=true", false),
        ("status.nominatedNodeName!=x", true),
    ];
    for (input, want) in cases {
        let sel =
            FieldSelector::parse_for_kind(input, &POD).unwrap_or_else(|e| panic!("{input}: {e}"));
        assert_eq!(sel.matches(&p), want, "{input}");
    }
}

#[test]
fn matches_other_kinds() {
    let event = json!({"kind": "Event", "metadata": {"name": "e", "namespace": "d"},
        "involvedObject": {"kind": "Pod", "name": "web"}, "reportingComponent": "ctrl", "type": "Warning"});
    let sel = |s: &str, k: &str, g: &str| {
        FieldSelector::parse_for_kind(s, &KindInfo::builtin(g, "v1", k, true)).unwrap_or_default()
    };
    assert!(sel("involvedObject.name=web,type=Warning", "Event", "").matches(&event));
    assert!(
        sel("source=ctrl", "Event", "").matches(&event),
        "source falls back to reportingComponent"
    );
    let job = json!({"kind": "Job", "metadata": {"name": "j"}, "status": {"succeeded": 2}});
    assert!(sel("status.successful=2", "Job", "batch").matches(&job));
    assert!(
        sel("status.successful=0", "Job", "batch")
            .matches(&json!({"kind": "Job", "metadata": {"name": "j"}}))
    );
    let secret = json!({"kind": "Secret", "metadata": {"name": "s"}, "type": "kubernetes.io/tls"});
    assert!(sel("type=kubernetes.io/tls", "Secret", "").matches(&secret));
    let crd_version = json!({"selectableFields": [{"jsonPath": ".spec.size"}]});
    let foo = FieldSelector::parse_for_kind(
        "spec.size=3",
        &KindInfo::custom("x.io", "v1", "Foo", true, &crd_version),
    );
    let foo = foo.unwrap_or_default();
    assert!(foo.matches(&json!({"kind": "Foo", "spec": {"size": 3}})));
    assert!(!foo.matches(&json!({"kind": "Foo", "spec": {"size": 4}})));
}

#[test]
fn required_name_finds_point_reads() {
    let sel = FieldSelector::parse("metadata.namespace=a,metadata.name=web").unwrap_or_default();
    assert_eq!(sel.required_name(), Some("web"));
    assert_eq!(
        FieldSelector::parse("metadata.name!=web")
            .unwrap_or_default()
            .required_name(),
        None
    );
    assert!(FieldSelector::parse("").unwrap_or_default().is_empty());
}
