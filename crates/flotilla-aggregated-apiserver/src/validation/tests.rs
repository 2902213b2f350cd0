use pretty_assertions::assert_eq;
use serde_json::json;

use super::*;

fn cluster(name: &str, spec: Value) -> Value {
    json!({"apiVersion": "cluster.karmada.io/v1alpha1", "kind": "Cluster", "metadata": {"name": name}, "spec": spec})
}

fn push(extra: Value) -> Value {
    let mut spec = json!({"syncMode": "Push", "apiEndpoint": "https://10.0.0.1:6443"});
    if let (Some(spec), Some(extra)) = (spec.as_object_mut(), extra.as_object()) {
        spec.extend(extra.clone());
    }
    spec
}

/// Each error as kubectl lists it: `field: body`.
fn errors(object: &Value) -> Vec<String> {
    validate_new_cluster(object, None)
        .iter()
        .map(ToString::to_string)
        .collect()
}

#[test]
fn a_cluster_karmada_accepts_passes() {
    let spec = push(json!({
        "secretRef": {"namespace": "karmada-cluster", "name": "m1"},
        "impersonatorSecretRef": {"namespace": "karmada-cluster", "name": "m1-impersonator"},
        "proxyURL": "socks5://proxy.example.com:1080",
        "provider": "kwok", "region": "eu-west-1", "zones": ["eu-west-1a", "eu-west-1b"],
        "taints": [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"},
                   {"key": "dedicated", "effect": "NoExecute"},
                   {"key": "example.com/maintenance", "effect": "NoSchedule"}],
    }));
    assert_eq!(errors(&cluster("member1", spec)), Vec::<String>::new());
    assert_eq!(
        errors(&cluster(&"a".repeat(48), push(json!({})))),
        Vec::<String>::new()
    );
}

#[test]
fn names_are_dns_labels_of_at_most_48_characters() {
    // Karmada's answer, recorded in design/karmada-answers/16-cluster-crud.txt.
    assert_eq!(
        errors(&cluster("Bad_Name", push(json!({})))),
        [
            "metadata.name: Invalid value: \"Bad_Name\": a lowercase RFC 1123 label must consist of lower case \
          alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  \
          or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
        ]
    );
    assert_eq!(
        errors(&cluster("a.b", push(json!({})))),
        ["metadata.name: Invalid value: \"a.b\": must not contain dots"]
    );
    let long = "abcdefghij-abcdefghij-abcdefghij-abcdefghij-abcdefghij";
    assert_eq!(
        errors(&cluster(long, push(json!({})))),
        [format!(
            "metadata.name: Invalid value: \"{long}\": must be no more than 48 characters"
        )]
    );
}

#[test]
fn generated_names_are_judged_by_their_prefix() {
    let generated =
        |prefix: &str| json!({"metadata": {"generateName": prefix}, "spec": push(json!({}))});
    assert_eq!(errors(&generated("member-")), Vec::<String>::new());
    assert_eq!(errors(&generated(&"m".repeat(43))), Vec::<String>::new());
    assert_eq!(
        errors(&generated("a.b-")),
        ["metadata.generateName: Invalid value: \"a.b-\": must not contain dots"]
    );
    assert_eq!(
        errors(&generated("-x")).len(),
        1,
        "a prefix starting with a dash never makes a label"
    );
    assert_eq!(
        errors(&generated(&"m".repeat(44))),
        [format!(
            "metadata.generateName: Invalid value: \"{}\": must be no more than 43 characters: a generated name \
             adds 5 random characters and a cluster name must be no more than 48 characters",
            "m".repeat(44)
        )]
    );
    assert_eq!(
        errors(&json!({"metadata": {}, "spec": push(json!({}))})),
        ["metadata.name: Required value: name or generateName is required"]
    );
    // An apply names the Cluster in its path.
    let applied = json!({"spec": push(json!({}))});
    assert_eq!(validate_new_cluster(&applied, Some("m1")), Vec::new());
    assert_eq!(validate_new_cluster(&applied, Some("a.b")).len(), 1);
}

#[test]
fn sync_mode_errors_read_as_karmadas() {
    assert_eq!(
        errors(&cluster("minimal", json!({}))),
        [
            "spec.syncMode: Required value",
            "spec.syncMode: Unsupported value: \"\": supported values: \"Pull\", \"Push\""
        ]
    );
    assert_eq!(
        errors(&json!({"metadata": {"name": "nospec"}})).len(),
        2,
        "no spec at all is an empty one"
    );
    assert_eq!(
        errors(&cluster("bad", json!({"syncMode": "Sideways"}))),
        ["spec.syncMode: Unsupported value: \"Sideways\": supported values: \"Pull\", \"Push\""]
    );
    assert_eq!(
        errors(&cluster("typed", json!({"syncMode": 1}))),
        Vec::<String>::new(),
        "the schema refuses a number"
    );
}

#[test]
fn api_endpoints_must_be_urls_with_a_host_and_nothing_else() {
    const FORM: &str = "; desired format: hostname, hostname:port, IP or IP:port";
    let endpoint = |value: &str| {
        errors(&cluster(
            "m",
            json!({"syncMode": "Push", "apiEndpoint": value}),
        ))
    };
    assert_eq!(
        endpoint("10.0.0.1:6443"),
        [format!(
            "spec.apiEndpoint: Invalid value: \"10.0.0.1:6443\": apiEndpoint must be a valid URL: parse \
             \"10.0.0.1:6443\": first path segment in URL cannot contain colon{FORM}"
        )]
    );
    assert_eq!(
        endpoint("member1.example.com"),
        [format!(
            "spec.apiEndpoint: Invalid value: \"\": host must be provided{FORM}"
        )]
    );
    assert_eq!(
        endpoint("https://admin:pw@m1:6443/?watch=1#x"),
        [
            "spec.apiEndpoint: Invalid value: \"admin:pw\": user information is not permitted in the URL",
            "spec.apiEndpoint: Invalid value: \"x\": fragments are not permitted in the URL",
            "spec.apiEndpoint: Invalid value: \"watch=1\": query parameters are not permitted in the URL",
        ]
    );
    assert_eq!(
        endpoint("http://m1"),
        Vec::<String>::new(),
        "HTTPS is not forced"
    );
}

#[test]
fn proxy_urls_need_a_proxy_scheme() {
    let proxy = |value: &str| errors(&cluster("m", push(json!({"proxyURL": value}))));
    assert_eq!(
        proxy("ftp://proxy:21"),
        [
            "spec.proxyURL: Invalid value: \"ftp://proxy:21\": unsupported scheme \"ftp\", must be http, https, or socks5"
        ]
    );
    assert_eq!(
        proxy("http://my proxy"),
        [
            "spec.proxyURL: Invalid value: \"http://my proxy\": apiEndpoint must be a valid URL: parse \
          \"http://my proxy\": invalid character \" \" in host name"
        ]
    );
}

#[test]
fn secret_references_need_a_namespace_and_a_name() {
    assert_eq!(
        errors(&cluster(
            "m",
            push(json!({"secretRef": {"namespace": "", "name": "m"},
                                         "impersonatorSecretRef": {"namespace": "karmada-cluster"}}))
        )),
        [
            "spec.secretRef.namespace: Required value",
            "spec.impersonatorSecretRef.name: Required value"
        ]
    );
    assert_eq!(
        errors(&cluster("m", push(json!({"secretRef": null})))),
        Vec::<String>::new()
    );
}

#[test]
fn placement_fields_are_label_values() {
    let label = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and \
                 must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', \
                 regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
    assert_eq!(
        errors(&cluster(
            "m",
            push(json!({"provider": "My Cloud", "region": "eu west", "zones": ["a", "b c"]}))
        )),
        [
            format!("spec.provider: Invalid value: \"My Cloud\": {label}"),
            format!("spec.region: Invalid value: \"eu west\": {label}"),
            format!("spec.Zones: Invalid value: \"b c\": {label}"),
        ]
    );
    assert_eq!(
        errors(&cluster("m", push(json!({"zone": "z 1"})))),
        [format!("spec.Zone: Invalid value: \"z 1\": {label}")]
    );
    let both = push(json!({"zone": "z1", "zones": ["z1"]}));
    let found = validate_new_cluster(&cluster("m", both.clone()), None);
    assert_eq!(found.len(), 1);
    assert_eq!(
        (
            found[0].field.as_str(),
            found[0].reason(),
            found[0].bad_value.clone()
        ),
        ("spec.spec", "FieldValueTypeInvalid", Some(both.into()))
    );
    assert!(
        found[0]
            .to_string()
            .ends_with(": Zone and Zones cannot co-exist")
    );
}

#[test]
fn taints_are_node_taints_with_a_clusters_effects() {
    let taints = json!([
        {"key": "a", "effect": "PreferNoSchedule"},
        {"key": "b"},
        {"key": "bad key", "value": "v v", "effect": "NoSchedule"},
        {"key": "c", "effect": "NoExecute"},
        {"key": "c", "value": "other", "effect": "NoExecute"},
    ]);
    let found = errors(&cluster("m", push(json!({"taints": taints}))));
    assert_eq!(
        found[0],
        "spec.taints[0].effect: Unsupported value: \"PreferNoSchedule\": supported values: \"NoSchedule\", \
         \"NoExecute\""
    );
    assert_eq!(found[1], "spec.taints[1].effect: Required value");
    assert!(
        found[2].starts_with(
            "spec.taints[2].key: Invalid value: \"bad key\": name part must consist of"
        )
    );
    assert!(
        found[3].starts_with("spec.taints[2].value: Invalid value: \"v v\": a valid label must be")
    );
    assert_eq!(
        found[4],
        "spec.taints[4]: Duplicate value: {\"effect\":\"NoExecute\",\"key\":\"c\",\"value\":\"other\"}: taints \
         must be unique by key and effect pair"
    );
    assert_eq!(found.len(), 5, "{found:#?}");
}
