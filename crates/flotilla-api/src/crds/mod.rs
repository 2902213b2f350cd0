//! The CustomResourceDefinitions of every kind Flotilla serves, generated from the types.
//!
//! [`all`] is the one source: `flotilla crds` prints it and `manifests/crds/` holds it, one file per CRD named
//! like Karmada's (`<group>_<plural>.yaml`). Schemas are structural (see [`structural`]); free-form JSON
//! (`x-kubernetes-preserve-unknown-fields`) appears only where Karmada has it: Work manifests, raw statuses and
//! override values. Where a schema embeds a Kubernetes type, it carries the keywords that type declares (atomic
//! selectors, Condition limits; see `k8s_markers`), as Karmada's CRDs do.

mod k8s_markers;
mod riwc;
pub mod structural;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceConversion, CustomResourceDefinition,
};
use kube::CustomResourceExt;
use schemars::SchemaGenerator;
use schemars::generate::SchemaSettings;
use serde_json::{Value, json};

use crate::apps::v1alpha1::WorkloadRebalancer;
use crate::cluster::v1alpha1::Cluster;
use crate::config::v1alpha1::ResourceInterpreterCustomization;
use crate::policy::v1alpha1::{
    ClusterOverridePolicy, ClusterPropagationPolicy, ClusterTaintPolicy, OverridePolicy,
    PropagationPolicy,
};
use crate::work::v1alpha1::Work;
use crate::work::v1alpha2::{ClusterResourceBinding, ResourceBinding};

/// A CRD could not be rendered as YAML.
#[derive(Debug, thiserror::Error)]
#[error("failed to render CRD {name} as YAML")]
pub struct RenderError {
    /// The CRD's name.
    pub name: String,
    /// Why.
    #[source]
    pub source: flotilla_yaml::Error,
}

/// Enum values Karmada's CRDs narrow for one field of a shared Rust enum.
const NARROWED_ENUMS: &[(&str, &[&str])] = &[
    (
        "spec.failover.cluster.purgeMode",
        &["Directly", "Gracefully"],
    ),
    (
        "spec.schedulePriority.priorityClassSource",
        &["KubePriorityClass"],
    ),
    (
        "spec.overrideRules[].overriders.commandOverrider[].operator",
        &["add", "remove"],
    ),
    (
        "spec.overrideRules[].overriders.argsOverrider[].operator",
        &["add", "remove"],
    ),
    (
        "spec.overriders.commandOverrider[].operator",
        &["add", "remove"],
    ),
    (
        "spec.overriders.argsOverrider[].operator",
        &["add", "remove"],
    ),
];

/// Every CRD, in a fixed order: policies (propagation, override, taint), bindings, Work, Cluster, interpreter
/// configuration, WorkloadRebalancer.
pub fn all() -> Vec<CustomResourceDefinition> {
    let described = [
        (
            PropagationPolicy::crd(),
            "PropagationPolicy selects resource templates and propagates them to member clusters.",
        ),
        (
            ClusterPropagationPolicy::crd(),
            "ClusterPropagationPolicy selects cluster-scoped resource templates, and templates in any namespace, and \
             propagates them to member clusters.",
        ),
        (
            OverridePolicy::crd(),
            "OverridePolicy changes resource templates per member cluster as they are propagated.",
        ),
        (
            ClusterOverridePolicy::crd(),
            "ClusterOverridePolicy changes cluster-scoped resource templates, and templates in any namespace, per \
             member cluster as they are propagated.",
        ),
        (
            ClusterTaintPolicy::crd(),
            "ClusterTaintPolicy adds taints to, and removes them from, member clusters as their status conditions \
             change.",
        ),
        (
            ResourceBinding::crd(),
            "ResourceBinding binds a namespaced resource template to its policy's placement and records where it is \
             scheduled.",
        ),
        (
            ClusterResourceBinding::crd(),
            "ClusterResourceBinding binds a cluster-scoped resource template to its policy's placement and records \
             where it is scheduled.",
        ),
        (
            Work::crd(),
            "Work holds the manifests to apply to the member cluster of its execution namespace.",
        ),
        (
            Cluster::crd(),
            "Cluster is a member cluster registered with the control plane.",
        ),
        (
            ResourceInterpreterCustomization::crd(),
            "ResourceInterpreterCustomization describes, in Lua, how to interpret a kind of resource.",
        ),
    ];
    described
        .into_iter()
        .map(|(crd, description)| finish(crd, description))
        .chain([
            finish(riwc::crd(), riwc::DESCRIPTION),
            finish(
                WorkloadRebalancer::crd(),
                "WorkloadRebalancer asks for the bindings of the workloads it names to be scheduled afresh, \
                 once.",
            ),
        ])
        .map(|crd| {
            if crd.metadata.name.as_deref() == Some(Cluster::crd_name()) {
                // Karmada serves Cluster from its aggregated API server, not from a CRD, and that server holds
                // Cluster's conditions to none of the limits Kubernetes' types declare for CRDs.
                with_storage_alias(crd)
            } else {
                with_kubernetes_markers(crd)
            }
        })
        .collect()
}

/// The file a CRD is committed as under `manifests/crds/`: `<group>_<plural>.yaml`, as Karmada names them.
pub fn file_name(crd: &CustomResourceDefinition) -> String {
    format!("{}_{}.yaml", crd.spec.group, crd.spec.names.plural)
}

/// One CRD as a YAML document starting with `---`.
///
/// # Errors
/// [`RenderError`] if serialization fails (it does not for generated CRDs).
pub fn to_yaml(crd: &CustomResourceDefinition) -> Result<String, RenderError> {
    flotilla_yaml::to_string(crd)
        .map(|body| format!("---\n{body}"))
        .map_err(|source| RenderError {
            name: crd.metadata.name.clone().unwrap_or_default(),
            source,
        })
}

/// Every CRD as one YAML stream: the committed files concatenated in [`all`]'s order.
///
/// # Errors
/// [`RenderError`] if serialization fails.
pub fn yaml_stream() -> Result<String, RenderError> {
    all().iter().map(to_yaml).collect()
}

/// A schema generator set up as kube's `CustomResource` derive sets up its own, for the schemas built here
/// rather than by the derive.
fn schema_generator() -> SchemaGenerator {
    SchemaSettings::openapi3()
        .with(|s| {
            s.inline_subschemas = true;
            s.meta_schema = None;
        })
        .with_transform(schemars::transform::AddNullable::default())
        .with_transform(kube::core::schema::StructuralSchemaRewriter)
        .with_transform(kube::core::schema::OptionalEnum)
        .with_transform(kube::core::schema::OptionalIntOrString)
        .into_generator()
}

/// Edits the schema of every version of a CRD as JSON: JSONSchemaProps round-trips through JSON losslessly, and
/// editing the JSON is simpler than the typed tree.
fn edit_schemas(crd: &mut CustomResourceDefinition, mut edit: impl FnMut(&mut Value)) {
    for version in &mut crd.spec.versions {
        let Some(validation) = version.schema.as_mut() else {
            continue;
        };
        let Some(props) = validation.open_api_v3_schema.take() else {
            continue;
        };
        let mut schema = serde_json::to_value(props).unwrap_or(Value::Null);
        edit(&mut schema);
        validation.open_api_v3_schema = serde_json::from_value(schema).ok();
    }
}

/// Adds the keywords the Kubernetes types embedded in a CRD declare for CRD generators, as Karmada's CRDs have
/// them (see [`k8s_markers`]).
fn with_kubernetes_markers(mut crd: CustomResourceDefinition) -> CustomResourceDefinition {
    edit_schemas(&mut crd, k8s_markers::apply);
    crd
}

/// Gives a generated CRD Karmada's finishing touches: a structural schema with `apiVersion`, `kind` and
/// `metadata`, the kind's description, the list kind, and the enum values Karmada narrows per field.
fn finish(mut crd: CustomResourceDefinition, description: &str) -> CustomResourceDefinition {
    crd.spec.names.list_kind = Some(format!("{}List", crd.spec.names.kind));
    edit_schemas(&mut crd, |schema| {
        structural::normalize(schema);
        if let Some(root) = schema.as_object_mut() {
            root.insert("description".to_owned(), json!(description));
            root.insert("type".to_owned(), json!("object"));
            let properties = root.entry("properties").or_insert_with(|| json!({}));
            if let Some(properties) = properties.as_object_mut() {
                properties.insert(
                    "apiVersion".to_owned(),
                    json!({"description": API_VERSION_DOC, "type": "string"}),
                );
                properties.insert(
                    "kind".to_owned(),
                    json!({"description": KIND_DOC, "type": "string"}),
                );
                properties.insert("metadata".to_owned(), json!({"type": "object"}));
            }
        }
        for (path, values) in NARROWED_ENUMS {
            if let Some(node) = structural::node_mut(schema, path).and_then(Value::as_object_mut) {
                node.insert("enum".to_owned(), json!(values));
            }
        }
    });
    crd
}

/// Adds the served, non-storage version [`STORAGE_VERSION`](crate::cluster::STORAGE_VERSION) to the Cluster
/// CRD: a copy of its one version (schema, printer columns, status subresource) under the other name, with
/// conversion `None`, so both versions read and write the same objects. The aggregated API server serves
/// `v1alpha1` through it (crate `flotilla-aggregated-apiserver`).
///
/// The alias is deprecated, with [`STORAGE_DEPRECATION_WARNING`](crate::cluster::STORAGE_DEPRECATION_WARNING):
/// it is the group's other version in discovery, so clients fall back to it when the aggregated API server is
/// unavailable (and kubectl's discovery cache keeps it for a while after), and kube-apiserver then warns them
/// with every answer.
fn with_storage_alias(mut crd: CustomResourceDefinition) -> CustomResourceDefinition {
    if let Some(first) = crd.spec.versions.first() {
        let mut alias = first.clone();
        alias.name = crate::cluster::STORAGE_VERSION.to_owned();
        alias.storage = false;
        alias.served = true;
        alias.deprecated = Some(true);
        alias.deprecation_warning = Some(crate::cluster::STORAGE_DEPRECATION_WARNING.to_owned());
        crd.spec.versions.push(alias);
    }
    crd.spec.conversion = Some(CustomResourceConversion {
        strategy: "None".to_owned(),
        webhook: None,
    });
    crd
}

const API_VERSION_DOC: &str =
    "APIVersion defines the versioned schema of this representation of an object.";
const KIND_DOC: &str =
    "Kind is a string value representing the REST resource this object represents.";
