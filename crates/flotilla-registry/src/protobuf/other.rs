//! JSON names of meta/v1, rbac/v1, coordination/v1 and events.k8s.io/v1 messages.

use super::json::message;
use k8s_pb::api::coordination::v1 as coordination;
use k8s_pb::api::events::v1 as events;
use k8s_pb::api::rbac::v1 as rbac;
use k8s_pb::apimachinery::pkg::apis::meta::v1 as meta;

message!(meta::Condition {
    r#type => "type", status => "status", observed_generation => "observedGeneration",
    last_transition_time => "lastTransitionTime", reason => "reason", message => "message",
});
message!(meta::DeleteOptions {
    grace_period_seconds => "gracePeriodSeconds" keep, preconditions => "preconditions",
    orphan_dependents => "orphanDependents" keep, propagation_policy => "propagationPolicy" keep,
    dry_run => "dryRun",
    ignore_store_read_error_with_cluster_breaking_potential => "ignoreStoreReadErrorWithClusterBreakingPotential" keep,
});
message!(meta::LabelSelector {
    match_labels => "matchLabels", match_expressions => "matchExpressions",
});
message!(meta::LabelSelectorRequirement {
    key => "key", operator => "operator", values => "values",
});
message!(meta::ManagedFieldsEntry {
    manager => "manager", operation => "operation", api_version => "apiVersion", time => "time",
    fields_type => "fieldsType", fields_v1 => "fieldsV1", subresource => "subresource",
});
message!(meta::ObjectMeta {
    name => "name", generate_name => "generateName", namespace => "namespace", self_link => "selfLink",
    uid => "uid", resource_version => "resourceVersion", generation => "generation",
    creation_timestamp => "creationTimestamp", deletion_timestamp => "deletionTimestamp",
    deletion_grace_period_seconds => "deletionGracePeriodSeconds" keep, labels => "labels",
    annotations => "annotations", owner_references => "ownerReferences", finalizers => "finalizers",
    managed_fields => "managedFields",
});
message!(meta::OwnerReference {
    api_version => "apiVersion", kind => "kind", name => "name", uid => "uid", controller => "controller" keep,
    block_owner_deletion => "blockOwnerDeletion" keep,
});
message!(meta::Preconditions {
    uid => "uid" keep, resource_version => "resourceVersion" keep,
});
message!(rbac::AggregationRule {
    cluster_role_selectors => "clusterRoleSelectors",
});
message!(rbac::ClusterRole {
    metadata => "metadata", rules => "rules", aggregation_rule => "aggregationRule",
});
message!(rbac::ClusterRoleBinding {
    metadata => "metadata", subjects => "subjects", role_ref => "roleRef",
});
message!(rbac::PolicyRule {
    verbs => "verbs", api_groups => "apiGroups", resources => "resources", resource_names => "resourceNames",
    non_resource_ur_ls => "nonResourceURLs",
});
message!(rbac::Role {
    metadata => "metadata", rules => "rules",
});
message!(rbac::RoleBinding {
    metadata => "metadata", subjects => "subjects", role_ref => "roleRef",
});
message!(rbac::RoleRef {
    api_group => "apiGroup", kind => "kind", name => "name",
});
message!(rbac::Subject {
    kind => "kind", api_group => "apiGroup", name => "name", namespace => "namespace",
});
message!(coordination::Lease {
    metadata => "metadata", spec => "spec",
});
message!(coordination::LeaseSpec {
    holder_identity => "holderIdentity" keep, lease_duration_seconds => "leaseDurationSeconds" keep,
    acquire_time => "acquireTime", renew_time => "renewTime", lease_transitions => "leaseTransitions" keep,
    strategy => "strategy" keep, preferred_holder => "preferredHolder" keep,
});
message!(events::Event {
    metadata => "metadata", event_time => "eventTime", series => "series",
    reporting_controller => "reportingController", reporting_instance => "reportingInstance", action => "action",
    reason => "reason", regarding => "regarding", related => "related", note => "note", r#type => "type",
    deprecated_source => "deprecatedSource", deprecated_first_timestamp => "deprecatedFirstTimestamp",
    deprecated_last_timestamp => "deprecatedLastTimestamp", deprecated_count => "deprecatedCount",
});
message!(events::EventSeries {
    count => "count", last_observed_time => "lastObservedTime",
});
