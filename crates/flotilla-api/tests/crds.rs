//! The generated CRDs: Karmada's names and scopes, structural schemas, defaults and free-form fields exactly
//! where Karmada has them, and the committed YAML under `manifests/crds/` in step with the code.

use std::collections::BTreeSet;
use std::path::PathBuf;

use flotilla_api::crds;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use serde_json::Value;

fn schema(crd: &CustomResourceDefinition) -> Value {
    let version = crd.spec.versions.first().expect("one version");
    let props = version
        .schema
        .as_ref()
        .and_then(|s| s.open_api_v3_schema.as_ref())
        .expect("a schema");
    serde_json::to_value(props).expect("schema as JSON")
}

fn by_name(name: &str) -> CustomResourceDefinition {
    crds::all()
        .into_iter()
        .find(|c| c.metadata.name.as_deref() == Some(name))
        .expect(name)
}

/// Every (path, node) of a schema, paths in the style `.spec.placement.clusterAffinities[].affinityName`.
fn walk(schema: &Value, path: String, out: &mut Vec<(String, Value)>) {
    out.push((path.clone(), schema.clone()));
    if let Some(props) = schema.get("properties").and_then(Value::as_object) {
        for (name, sub) in props {
            walk(sub, format!("{path}.{name}"), out);
        }
    }
    if let Some(items) = schema.get("items") {
        walk(items, format!("{path}[]"), out);
    }
    if let Some(extra) = schema.get("additionalProperties") {
        walk(extra, format!("{path}{{}}"), out);
    }
}

fn nodes(crd: &CustomResourceDefinition) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    walk(&schema(crd), String::new(), &mut out);
    out
}

#[test]
fn twelve_kinds_with_karmada_names_groups_versions_and_scopes() {
    // (name, kind, version, short name, scope, status subresource)
    let expected = [
        (
            "propagationpolicies.policy.karmada.io",
            "PropagationPolicy",
            "v1alpha1",
            Some("pp"),
            "Namespaced",
            false,
        ),
        (
            "clusterpropagationpolicies.policy.karmada.io",
            "ClusterPropagationPolicy",
            "v1alpha1",
            Some("cpp"),
            "Cluster",
            false,
        ),
        (
            "overridepolicies.policy.karmada.io",
            "OverridePolicy",
            "v1alpha1",
            Some("op"),
            "Namespaced",
            false,
        ),
        (
            "clusteroverridepolicies.policy.karmada.io",
            "ClusterOverridePolicy",
            "v1alpha1",
            Some("cop"),
            "Cluster",
            false,
        ),
        (
            "clustertaintpolicies.policy.karmada.io",
            "ClusterTaintPolicy",
            "v1alpha1",
            None,
            "Cluster",
            false,
        ),
        (
            "resourcebindings.work.karmada.io",
            "ResourceBinding",
            "v1alpha2",
            Some("rb"),
            "Namespaced",
            true,
        ),
        (
            "clusterresourcebindings.work.karmada.io",
            "ClusterResourceBinding",
            "v1alpha2",
            Some("crb"),
            "Cluster",
            true,
        ),
        (
            "works.work.karmada.io",
            "Work",
            "v1alpha1",
            Some("wk"),
            "Namespaced",
            true,
        ),
        (
            "clusters.cluster.karmada.io",
            "Cluster",
            "v1alpha1",
            None,
            "Cluster",
            true,
        ),
        (
            "resourceinterpretercustomizations.config.karmada.io",
            "ResourceInterpreterCustomization",
            "v1alpha1",
            Some("ric"),
            "Cluster",
            false,
        ),
        (
            "resourceinterpreterwebhookconfigurations.config.karmada.io",
            "ResourceInterpreterWebhookConfiguration",
            "v1alpha1",
            None,
            "Cluster",
            false,
        ),
        (
            "workloadrebalancers.apps.karmada.io",
            "WorkloadRebalancer",
            "v1alpha1",
            None,
            "Cluster",
            true,
        ),
    ];
    let all = crds::all();
    assert_eq!(all.len(), expected.len());
    for (crd, (name, kind, version, short, scope, status)) in all.iter().zip(expected) {
        let names = &crd.spec.names;
        assert_eq!(crd.metadata.name.as_deref(), Some(name));
        assert_eq!(names.kind, kind);
        assert_eq!(format!("{}.{}", names.plural, crd.spec.group), name);
        assert_eq!(
            names.singular.as_deref(),
            Some(kind.to_ascii_lowercase().as_str())
        );
        assert_eq!(
            names.list_kind.as_deref(),
            Some(format!("{kind}List").as_str())
        );
        assert_eq!(
            names
                .short_names
                .as_ref()
                .and_then(|s| s.first())
                .map(String::as_str),
            short,
            "{name}"
        );
        assert_eq!(crd.spec.scope, scope, "{name}");
        let categories = names.categories.clone().unwrap_or_default();
        if ["Cluster", "ClusterTaintPolicy", "WorkloadRebalancer"].contains(&kind) {
            assert!(categories.is_empty());
        } else {
            assert_eq!(categories, ["karmada-io"], "{name}");
        }
        // The Cluster CRD also serves the aggregated API server's alias version (see the test below).
        let versions = if kind == "Cluster" { 2 } else { 1 };
        assert_eq!(crd.spec.versions.len(), versions, "{name}");
        let v = &crd.spec.versions[0];
        assert_eq!(
            (v.name.as_str(), v.served, v.storage),
            (version, true, true),
            "{name}"
        );
        assert_eq!(
            v.subresources
                .as_ref()
                .and_then(|s| s.status.as_ref())
                .is_some(),
            status,
            "{name}"
        );
        let root = schema(crd);
        for field in ["apiVersion", "kind", "metadata"] {
            assert!(
                root["properties"].get(field).is_some(),
                "{name} lacks {field}"
            );
        }
    }
}

#[test]
fn cluster_crd_serves_the_storage_alias_with_v1alpha1s_schema() {
    let crd = by_name("clusters.cluster.karmada.io");
    assert_eq!(crd.spec.versions.len(), 2);
    let (v1alpha1, alias) = (&crd.spec.versions[0], &crd.spec.versions[1]);
    assert_eq!(
        (v1alpha1.name.as_str(), v1alpha1.served, v1alpha1.storage),
        ("v1alpha1", true, true)
    );
    assert_eq!(
        (alias.name.as_str(), alias.served, alias.storage),
        (flotilla_api::cluster::STORAGE_VERSION, true, false)
    );
    assert_eq!(alias.schema, v1alpha1.schema);
    assert_eq!(
        alias.additional_printer_columns,
        v1alpha1.additional_printer_columns
    );
    assert_eq!(alias.subresources, v1alpha1.subresources);
    assert!(
        alias
            .subresources
            .as_ref()
            .is_some_and(|s| s.status.is_some())
    );
    // Only people who fall back to the alias are warned; v1alpha1 is not deprecated.
    assert_eq!(
        (v1alpha1.deprecated, v1alpha1.deprecation_warning.as_deref()),
        (None, None)
    );
    assert_eq!(alias.deprecated, Some(true));
    let warning = alias.deprecation_warning.as_deref().expect("a warning");
    assert_eq!(warning, flotilla_api::cluster::STORAGE_DEPRECATION_WARNING);
    assert!(
        warning.contains("use cluster.karmada.io/v1alpha1"),
        "{warning}"
    );
    // kube-apiserver refuses a longer warning or one with control characters.
    assert!(warning.len() <= 256, "{} characters", warning.len());
    assert!(warning.chars().all(|c| !c.is_control()));
    let conversion = crd.spec.conversion.as_ref().expect("a conversion");
    assert_eq!(conversion.strategy, "None");
    assert!(conversion.webhook.is_none());
    // No other CRD has more than one version.
    for other in crds::all() {
        if other.metadata.name != crd.metadata.name {
            assert_eq!(other.spec.versions.len(), 1, "{:?}", other.metadata.name);
        }
    }
}

#[test]
fn every_schema_is_structural() {
    for crd in crds::all() {
        let violations = crds::structural::violations(&schema(&crd));
        assert!(
            violations.is_empty(),
            "{:?}: {violations:#?}",
            crd.metadata.name
        );
    }
}

#[test]
fn structural_check_catches_what_kubernetes_rejects() {
    let bad = serde_json::json!({
        "type": "object",
        "properties": {
            "untyped": {"description": "no type"},
            "ref": {"$ref": "#/definitions/X", "type": "object"},
            "nullable": {"type": "string", "nullable": true},
            "union": {"anyOf": [{"type": "string"}, {"type": "object"}]},
            "map": {"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": {"type": "string"}},
            "list": {"type": "array"},
            "count": {"type": "integer", "format": "uint32", "default": "zero"},
        },
        "required": ["missing"],
    });
    let found = crds::structural::violations(&bad).join("\n");
    for expected in [
        ".untyped: missing type",
        ".ref: forbidden keyword $ref",
        ".nullable: forbidden keyword nullable",
        ".union: anyOf other than the int-or-string form",
        ".union: missing type",
        ".map: both properties and additionalProperties",
        ".list: array without items",
        ".count: unknown format uint32",
        ".count: default value \"zero\" is not of type integer",
        ".: required property missing is not declared",
    ] {
        assert!(found.contains(expected), "missing {expected:?} in\n{found}");
    }
}

fn assert_same_set(found: &BTreeSet<String>, expected: &BTreeSet<String>) {
    let unexpected: Vec<_> = found.difference(expected).collect();
    let missing: Vec<_> = expected.difference(found).collect();
    assert!(
        unexpected.is_empty() && missing.is_empty(),
        "unexpected {unexpected:#?}\nmissing {missing:#?}"
    );
}

#[test]
fn crd_defaults_are_exactly_karmadas() {
    let mut found = BTreeSet::new();
    for crd in crds::all() {
        for (path, node) in nodes(&crd) {
            if let Some(default) = node.get("default") {
                found.insert(format!("{} {path} = {default}", crd.spec.names.kind));
            }
        }
    }
    let mut expected = BTreeSet::new();
    for kind in ["PropagationPolicy", "ClusterPropagationPolicy"] {
        for line in [
            ".spec.priority = 0",
            ".spec.preemption = \"Never\"",
            ".spec.schedulerName = \"default-scheduler\"",
            ".spec.conflictResolution = \"Abort\"",
            ".spec.placement.replicaScheduling.replicaSchedulingType = \"Divided\"",
            ".spec.failover.application.decisionConditions.tolerationSeconds = 300",
            ".spec.failover.application.purgeMode = \"Gracefully\"",
            ".spec.failover.cluster.purgeMode = \"Gracefully\"",
        ] {
            expected.insert(format!("{kind} {line}"));
        }
    }
    for kind in ["ResourceBinding", "ClusterResourceBinding"] {
        for line in [
            ".spec.conflictResolution = \"Abort\"",
            ".spec.schedulePriority.priority = 0",
            ".spec.placement.replicaScheduling.replicaSchedulingType = \"Divided\"",
            ".spec.failover.application.decisionConditions.tolerationSeconds = 300",
            ".spec.failover.application.purgeMode = \"Gracefully\"",
            ".spec.failover.cluster.purgeMode = \"Gracefully\"",
        ] {
            expected.insert(format!("{kind} {line}"));
        }
    }
    assert_same_set(&found, &expected);
}

#[test]
fn free_form_json_only_where_karmada_has_it() {
    let mut found = BTreeSet::new();
    for crd in crds::all() {
        for (path, node) in nodes(&crd) {
            if node.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(true)) {
                found.insert(format!("{} {path}", crd.spec.names.kind));
            }
        }
    }
    let mut expected: BTreeSet<String> = [
        "Work .spec.workload.manifests[]",
        "Work .status.manifestStatuses[].status",
        "ResourceBinding .status.aggregatedStatus[].status",
        "ClusterResourceBinding .status.aggregatedStatus[].status",
    ]
    .into_iter()
    .map(str::to_owned)
    .collect();
    for kind in ["OverridePolicy", "ClusterOverridePolicy"] {
        for rule in [".spec.overriders", ".spec.overrideRules[].overriders"] {
            expected.insert(format!("{kind} {rule}.plaintext[].value"));
            expected.insert(format!("{kind} {rule}.fieldOverrider[].json[].value"));
            expected.insert(format!("{kind} {rule}.fieldOverrider[].yaml[].value"));
        }
    }
    assert_same_set(&found, &expected);
}

/// The paths of every node carrying `keyword: atomic`, each prefixed by its CRD's kind.
fn atomic_markers(keyword: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for crd in crds::all() {
        for (path, node) in nodes(&crd) {
            if node.get(keyword).and_then(Value::as_str) == Some("atomic") {
                found.insert(format!("{} {path}", crd.spec.names.kind));
            }
        }
    }
    found
}

/// Where one kind embeds Kubernetes selectors.
struct Selectors {
    kind: &'static str,
    /// Karmada's cluster affinities: a label selector, and a field selector of node selector requirements.
    affinities: &'static [&'static str],
    /// Resource selectors: a label selector.
    resource_selectors: &'static [&'static str],
    /// Node claims: a node selector.
    node_claims: &'static [&'static str],
}

const PLACEMENT_AFFINITIES: &[&str] = &[
    ".spec.placement.clusterAffinity",
    ".spec.placement.clusterAffinities[]",
    ".spec.placement.clusterAffinities[].overflowAffinities[]",
    ".spec.placement.replicaScheduling.weightPreference.staticWeightList[].targetCluster",
];

const SELECTORS: &[Selectors] = &[
    Selectors {
        kind: "PropagationPolicy",
        affinities: PLACEMENT_AFFINITIES,
        resource_selectors: &[".spec.resourceSelectors[]"],
        node_claims: &[],
    },
    Selectors {
        kind: "ClusterPropagationPolicy",
        affinities: PLACEMENT_AFFINITIES,
        resource_selectors: &[".spec.resourceSelectors[]"],
        node_claims: &[],
    },
    Selectors {
        kind: "OverridePolicy",
        affinities: &[".spec.targetCluster", ".spec.overrideRules[].targetCluster"],
        resource_selectors: &[".spec.resourceSelectors[]"],
        node_claims: &[],
    },
    Selectors {
        kind: "ClusterOverridePolicy",
        affinities: &[".spec.targetCluster", ".spec.overrideRules[].targetCluster"],
        resource_selectors: &[".spec.resourceSelectors[]"],
        node_claims: &[],
    },
    Selectors {
        kind: "ClusterTaintPolicy",
        affinities: &[".spec.targetClusters"],
        resource_selectors: &[],
        node_claims: &[],
    },
    Selectors {
        kind: "ResourceBinding",
        affinities: PLACEMENT_AFFINITIES,
        resource_selectors: &[],
        node_claims: &[
            ".spec.replicaRequirements.nodeClaim",
            ".spec.components[].replicaRequirements.nodeClaim",
        ],
    },
    Selectors {
        kind: "ClusterResourceBinding",
        affinities: PLACEMENT_AFFINITIES,
        resource_selectors: &[],
        node_claims: &[
            ".spec.replicaRequirements.nodeClaim",
            ".spec.components[].replicaRequirements.nodeClaim",
        ],
    },
];

#[test]
fn selectors_are_atomic_where_karmadas_crds_have_them() {
    let mut structs = BTreeSet::new();
    let mut lists = BTreeSet::new();
    for selectors in SELECTORS {
        let kind = selectors.kind;
        for root in selectors
            .affinities
            .iter()
            .chain(selectors.resource_selectors)
        {
            structs.insert(format!("{kind} {root}.labelSelector"));
            lists.insert(format!("{kind} {root}.labelSelector.matchExpressions"));
            lists.insert(format!(
                "{kind} {root}.labelSelector.matchExpressions[].values"
            ));
        }
        // Karmada's own FieldSelector declares no list type; the requirements it holds are Kubernetes'.
        for root in selectors.affinities {
            lists.insert(format!(
                "{kind} {root}.fieldSelector.matchExpressions[].values"
            ));
        }
        for root in selectors.node_claims {
            let affinity = format!("{root}.hardNodeAffinity");
            let terms = format!("{affinity}.nodeSelectorTerms");
            structs.insert(format!("{kind} {affinity}"));
            structs.insert(format!("{kind} {terms}[]"));
            lists.insert(format!("{kind} {terms}"));
            for requirements in ["matchExpressions", "matchFields"] {
                lists.insert(format!("{kind} {terms}[].{requirements}"));
                lists.insert(format!("{kind} {terms}[].{requirements}[].values"));
            }
        }
    }
    assert_eq!(structs.len(), 33);
    assert_eq!(lists.len(), 91);
    assert_same_set(&atomic_markers("x-kubernetes-map-type"), &structs);
    assert_same_set(&atomic_markers("x-kubernetes-list-type"), &lists);
}

fn conditions(crd: &str) -> Value {
    let schema = schema(&by_name(crd));
    schema["properties"]["status"]["properties"]["conditions"]["items"].clone()
}

#[test]
fn conditions_carry_the_limits_karmadas_crds_have() {
    for crd in [
        "resourcebindings.work.karmada.io",
        "clusterresourcebindings.work.karmada.io",
        "works.work.karmada.io",
    ] {
        let condition = conditions(crd);
        let field = |name: &str| condition["properties"][name].clone();
        assert_eq!(field("type")["maxLength"], 316, "{crd}");
        assert!(field("type")["pattern"].is_string(), "{crd}");
        assert_eq!(field("reason")["minLength"], 1, "{crd}");
        assert_eq!(field("reason")["maxLength"], 1024, "{crd}");
        assert!(field("reason")["pattern"].is_string(), "{crd}");
        assert_eq!(field("message")["maxLength"], 32768, "{crd}");
        assert_eq!(
            field("status")["enum"],
            serde_json::json!(["True", "False", "Unknown"]),
            "{crd}"
        );
        assert_eq!(field("observedGeneration")["minimum"], 0.0, "{crd}");
        assert_eq!(field("lastTransitionTime")["format"], "date-time", "{crd}");
        assert_eq!(
            condition["required"],
            serde_json::json!(["lastTransitionTime", "message", "reason", "status", "type"]),
            "{crd}"
        );
    }
    // Karmada serves Cluster from its aggregated API server, which does not hold conditions to these limits.
    let cluster = conditions("clusters.cluster.karmada.io");
    assert!(cluster["properties"]["reason"].get("minLength").is_none());
    assert!(cluster["properties"]["status"].get("enum").is_none());
}

#[test]
fn resource_requests_are_quantities_and_go_ints_have_no_format() {
    for crd in [
        "resourcebindings.work.karmada.io",
        "clusterresourcebindings.work.karmada.io",
    ] {
        let spec = &schema(&by_name(crd))["properties"]["spec"]["properties"];
        for requirements in [
            &spec["replicaRequirements"],
            &spec["components"]["items"]["properties"]["replicaRequirements"],
        ] {
            let quantity = &requirements["properties"]["resourceRequest"]["additionalProperties"];
            assert_eq!(
                quantity["anyOf"],
                serde_json::json!([{"type": "integer"}, {"type": "string"}]),
                "{crd}"
            );
            assert_eq!(quantity["x-kubernetes-int-or-string"], true, "{crd}");
            assert!(quantity["pattern"].is_string(), "{crd}");
        }
    }
    let pp = schema(&by_name("propagationpolicies.policy.karmada.io"));
    let spread = &pp["properties"]["spec"]["properties"]["placement"]["properties"]["spreadConstraints"]
        ["items"]["properties"];
    let work = schema(&by_name("works.work.karmada.io"));
    let identifier = &work["properties"]["status"]["properties"]["manifestStatuses"]["items"]["properties"]
        ["identifier"]["properties"];
    for int in [
        &spread["minGroups"],
        &spread["maxGroups"],
        &identifier["ordinal"],
    ] {
        assert_eq!(int["type"], "integer");
        assert!(int.get("format").is_none(), "{int}");
    }
}

#[test]
fn declared_patterns_accept_what_kubernetes_parses() {
    let rb = schema(&by_name("resourcebindings.work.karmada.io"));
    let pattern = |node: &Value| {
        regex::Regex::new(node["pattern"].as_str().expect("a pattern")).expect("compiles")
    };
    let quantity = pattern(
        &rb["properties"]["spec"]["properties"]["replicaRequirements"]["properties"]["resourceRequest"]
            ["additionalProperties"],
    );
    for good in [
        "1", "100m", "1.5Gi", "+2k", "-0.5", ".5", "1e3", "2E-3", "7Ei",
    ] {
        assert!(quantity.is_match(good), "quantity {good}");
    }
    for bad in ["", "lots", "1GB", "1 Gi", "1.2.3", "Mi", "1e"] {
        assert!(!quantity.is_match(bad), "quantity {bad}");
    }
    let condition = conditions("works.work.karmada.io");
    let kind = pattern(&condition["properties"]["type"]);
    for good in ["Applied", "example.com/Ready", "a.b-c/Some_Type.x", "Z"] {
        assert!(kind.is_match(good), "type {good}");
    }
    for bad in ["", "Bad Type", "Example.com/Ready", "/Ready", "Ready-"] {
        assert!(!kind.is_match(bad), "type {bad}");
    }
    let reason = pattern(&condition["properties"]["reason"]);
    for good in ["AppliedSuccessful", "Failed:Timeout", "a_b,c", "R"] {
        assert!(reason.is_match(good), "reason {good}");
    }
    for bad in ["", "1Reason", "Has space", "Trailing,", "dash-ed"] {
        assert!(!reason.is_match(bad), "reason {bad}");
    }
}

#[test]
fn narrowed_enums_follow_karmadas_crds() {
    let pp = schema(&by_name("propagationpolicies.policy.karmada.io"));
    let spec = &pp["properties"]["spec"]["properties"];
    let failover = &spec["failover"]["properties"];
    assert_eq!(
        failover["cluster"]["properties"]["purgeMode"]["enum"],
        serde_json::json!(["Directly", "Gracefully"])
    );
    assert_eq!(
        failover["application"]["properties"]["purgeMode"]["enum"],
        serde_json::json!(["Directly", "Gracefully", "Never"])
    );
    assert_eq!(
        spec["schedulePriority"]["properties"]["priorityClassSource"]["enum"],
        serde_json::json!(["KubePriorityClass"])
    );
    let op = schema(&by_name("overridepolicies.policy.karmada.io"));
    let overriders = &op["properties"]["spec"]["properties"]["overrideRules"]["items"]["properties"]
        ["overriders"];
    let command = &overriders["properties"]["commandOverrider"]["items"]["properties"]["operator"];
    assert_eq!(command["enum"], serde_json::json!(["add", "remove"]));
    let plaintext = &overriders["properties"]["plaintext"]["items"]["properties"]["operator"];
    assert_eq!(
        plaintext["enum"],
        serde_json::json!(["add", "remove", "replace"])
    );
}

#[test]
fn printer_columns_as_karmada_shows_them() {
    let columns = |name: &str| -> Vec<(String, String)> {
        by_name(name).spec.versions[0]
            .additional_printer_columns
            .clone()
            .unwrap_or_default()
            .into_iter()
            .map(|c| (c.name, c.json_path))
            .collect()
    };
    let pair = |a: &str, b: &str| (a.to_owned(), b.to_owned());
    let age = pair("AGE", ".metadata.creationTimestamp");
    let policy = vec![
        pair("CONFLICT-RESOLUTION", ".spec.conflictResolution"),
        pair("PRIORITY", ".spec.priority"),
        age.clone(),
    ];
    assert_eq!(columns("propagationpolicies.policy.karmada.io"), policy);
    assert_eq!(
        columns("clusterpropagationpolicies.policy.karmada.io"),
        policy
    );
    let binding = vec![
        pair(
            "SCHEDULED",
            ".status.conditions[?(@.type==\"Scheduled\")].status",
        ),
        pair(
            "FULLYAPPLIED",
            ".status.conditions[?(@.type==\"FullyApplied\")].status",
        ),
        age.clone(),
    ];
    assert_eq!(columns("resourcebindings.work.karmada.io"), binding);
    assert_eq!(columns("clusterresourcebindings.work.karmada.io"), binding);
    assert_eq!(
        columns("works.work.karmada.io"),
        vec![
            pair("WORKLOAD-KIND", ".spec.workload.manifests[*].kind"),
            pair(
                "APPLIED",
                ".status.conditions[?(@.type==\"Applied\")].status"
            ),
            age.clone()
        ]
    );
    assert_eq!(
        columns("resourceinterpretercustomizations.config.karmada.io"),
        vec![
            pair("TARGET-API-VERSION", ".spec.target.apiVersion"),
            pair("TARGET-KIND", ".spec.target.kind"),
            age
        ]
    );
}

#[test]
fn workload_rebalancer_validates_as_karmadas() {
    let crd = by_name("workloadrebalancers.apps.karmada.io");
    assert!(
        crd.spec.versions[0].additional_printer_columns.is_none(),
        "Karmada's WorkloadRebalancer has no printer columns"
    );
    let root = schema(&crd);
    assert_eq!(root["required"], serde_json::json!(["spec"]));
    let spec = &root["properties"]["spec"];
    assert_eq!(spec["required"], serde_json::json!(["workloads"]));
    let workloads = &spec["properties"]["workloads"];
    assert_eq!(workloads["minItems"], 1);
    let reference = &workloads["items"];
    assert_eq!(
        reference["required"],
        serde_json::json!(["apiVersion", "kind", "name"])
    );
    assert_eq!(reference["properties"]["namespace"]["type"], "string");
    let ttl = &spec["properties"]["ttlSecondsAfterFinished"];
    assert_eq!(ttl["type"], "integer");
    assert_eq!(ttl["format"], "int32");
    let status = &root["properties"]["status"]["properties"];
    assert_eq!(status["finishTime"]["format"], "date-time");
    assert_eq!(status["observedGeneration"]["format"], "int64");
    let observed = &status["observedWorkloads"]["items"];
    assert_eq!(observed["required"], serde_json::json!(["workload"]));
    let workload = &observed["properties"]["workload"];
    assert_eq!(workload["required"], reference["required"]);
    assert_eq!(workload["properties"], reference["properties"]);
    // Free strings, as in Karmada: no enum narrows the result or the reason.
    for field in ["result", "reason"] {
        let node = &observed["properties"][field];
        assert_eq!(node["type"], "string", "{field}");
        assert!(node.get("enum").is_none(), "{field}");
    }
}

fn manifests_dir() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../manifests/crds"))
}

#[test]
fn committed_crds_match_the_generated_ones() {
    let dir = manifests_dir();
    let update = std::env::var_os("FLOTILLA_UPDATE_CRDS").is_some_and(|v| v == "1");
    let mut expected_files = BTreeSet::new();
    let mut stale = Vec::new();
    for crd in crds::all() {
        let file = crds::file_name(&crd);
        let yaml = crds::to_yaml(&crd).expect("render");
        let path = dir.join(&file);
        if update {
            std::fs::create_dir_all(&dir).expect("create manifests/crds");
            std::fs::write(&path, &yaml).expect("write CRD");
        } else if std::fs::read_to_string(&path).ok().as_deref() != Some(yaml.as_str()) {
            stale.push(file.clone());
        }
        expected_files.insert(file);
    }
    let present: BTreeSet<String> = std::fs::read_dir(&dir)
        .expect("manifests/crds exists")
        .filter_map(|e| e.ok().and_then(|e| e.file_name().into_string().ok()))
        .collect();
    let extra: Vec<_> = present.difference(&expected_files).collect();
    assert!(
        stale.is_empty() && extra.is_empty(),
        "manifests/crds is out of date (stale: {stale:?}, not generated: {extra:?}); regenerate with \
         `FLOTILLA_UPDATE_CRDS=1 cargo test -p flotilla-api --test crds` and commit the result"
    );
}

#[test]
fn yaml_stream_is_the_committed_files_concatenated() {
    let stream = crds::yaml_stream().expect("render");
    let joined: String = crds::all()
        .iter()
        .map(|c| crds::to_yaml(c).expect("render"))
        .collect();
    assert_eq!(stream, joined);
    assert_eq!(
        stream.matches("\n---\n").count() + 1,
        12,
        "twelve documents"
    );
    let crds: Vec<CustomResourceDefinition> =
        flotilla_yaml::from_str_multiple(&stream).expect("CRDs");
    assert_eq!(crds.len(), 12);
    for crd in crds {
        assert!(crd.metadata.name.is_some());
    }
}
