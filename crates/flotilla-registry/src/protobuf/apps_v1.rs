//! JSON names of the apps/v1 and batch/v1 messages reachable from the supported workload kinds.

use super::json::message;
use k8s_pb::api::apps::v1 as apps;
use k8s_pb::api::batch::v1 as batch;

message!(apps::ControllerRevision {
    metadata => "metadata", data => "data", revision => "revision",
});
message!(apps::DaemonSet {
    metadata => "metadata", spec => "spec", status => "status",
});
message!(apps::DaemonSetCondition {
    r#type => "type", status => "status", last_transition_time => "lastTransitionTime", reason => "reason",
    message => "message",
});
message!(apps::DaemonSetSpec {
    selector => "selector", template => "template", update_strategy => "updateStrategy",
    min_ready_seconds => "minReadySeconds", revision_history_limit => "revisionHistoryLimit" keep,
});
message!(apps::DaemonSetStatus {
    current_number_scheduled => "currentNumberScheduled", number_misscheduled => "numberMisscheduled",
    desired_number_scheduled => "desiredNumberScheduled", number_ready => "numberReady",
    observed_generation => "observedGeneration", updated_number_scheduled => "updatedNumberScheduled",
    number_available => "numberAvailable", number_unavailable => "numberUnavailable",
    collision_count => "collisionCount" keep, conditions => "conditions",
});
message!(apps::DaemonSetUpdateStrategy {
    r#type => "type", rolling_update => "rollingUpdate",
});
message!(apps::Deployment {
    metadata => "metadata", spec => "spec", status => "status",
});
message!(apps::DeploymentCondition {
    r#type => "type", status => "status", last_update_time => "lastUpdateTime",
    last_transition_time => "lastTransitionTime", reason => "reason", message => "message",
});
message!(apps::DeploymentSpec {
    replicas => "replicas" keep, selector => "selector", template => "template", strategy => "strategy",
    min_ready_seconds => "minReadySeconds", revision_history_limit => "revisionHistoryLimit" keep,
    paused => "paused", progress_deadline_seconds => "progressDeadlineSeconds" keep,
});
message!(apps::DeploymentStatus {
    observed_generation => "observedGeneration", replicas => "replicas", updated_replicas => "updatedReplicas",
    ready_replicas => "readyReplicas", available_replicas => "availableReplicas",
    unavailable_replicas => "unavailableReplicas", terminating_replicas => "terminatingReplicas",
    conditions => "conditions", collision_count => "collisionCount" keep,
});
message!(apps::DeploymentStrategy {
    r#type => "type", rolling_update => "rollingUpdate",
});
message!(apps::ReplicaSet {
    metadata => "metadata", spec => "spec", status => "status",
});
message!(apps::ReplicaSetCondition {
    r#type => "type", status => "status", last_transition_time => "lastTransitionTime", reason => "reason",
    message => "message",
});
message!(apps::ReplicaSetSpec {
    replicas => "replicas" keep, min_ready_seconds => "minReadySeconds", selector => "selector",
    template => "template",
});
message!(apps::ReplicaSetStatus {
    replicas => "replicas", fully_labeled_replicas => "fullyLabeledReplicas", ready_replicas => "readyReplicas",
    available_replicas => "availableReplicas", terminating_replicas => "terminatingReplicas",
    observed_generation => "observedGeneration", conditions => "conditions",
});
message!(apps::RollingUpdateDaemonSet {
    max_unavailable => "maxUnavailable", max_surge => "maxSurge",
});
message!(apps::RollingUpdateDeployment {
    max_unavailable => "maxUnavailable", max_surge => "maxSurge",
});
message!(apps::RollingUpdateStatefulSetStrategy {
    partition => "partition" keep, max_unavailable => "maxUnavailable",
});
message!(apps::StatefulSet {
    metadata => "metadata", spec => "spec", status => "status",
});
message!(apps::StatefulSetCondition {
    r#type => "type", status => "status", last_transition_time => "lastTransitionTime", reason => "reason",
    message => "message",
});
message!(apps::StatefulSetOrdinals {
    start => "start",
});
message!(apps::StatefulSetPersistentVolumeClaimRetentionPolicy {
    when_deleted => "whenDeleted", when_scaled => "whenScaled",
});
message!(apps::StatefulSetSpec {
    replicas => "replicas" keep, selector => "selector", template => "template",
    volume_claim_templates => "volumeClaimTemplates", service_name => "serviceName",
    pod_management_policy => "podManagementPolicy", update_strategy => "updateStrategy",
    revision_history_limit => "revisionHistoryLimit" keep, min_ready_seconds => "minReadySeconds",
    persistent_volume_claim_retention_policy => "persistentVolumeClaimRetentionPolicy", ordinals => "ordinals",
});
message!(apps::StatefulSetStatus {
    observed_generation => "observedGeneration", replicas => "replicas", ready_replicas => "readyReplicas",
    current_replicas => "currentReplicas", updated_replicas => "updatedReplicas",
    current_revision => "currentRevision", update_revision => "updateRevision",
    collision_count => "collisionCount" keep, conditions => "conditions",
    available_replicas => "availableReplicas",
});
message!(apps::StatefulSetUpdateStrategy {
    r#type => "type", rolling_update => "rollingUpdate",
});
message!(batch::CronJob {
    metadata => "metadata", spec => "spec", status => "status",
});
message!(batch::CronJobSpec {
    schedule => "schedule", time_zone => "timeZone" keep,
    starting_deadline_seconds => "startingDeadlineSeconds" keep, concurrency_policy => "concurrencyPolicy",
    suspend => "suspend" keep, job_template => "jobTemplate",
    successful_jobs_history_limit => "successfulJobsHistoryLimit" keep,
    failed_jobs_history_limit => "failedJobsHistoryLimit" keep,
});
message!(batch::CronJobStatus {
    active => "active", last_schedule_time => "lastScheduleTime", last_successful_time => "lastSuccessfulTime",
});
message!(batch::Job {
    metadata => "metadata", spec => "spec", status => "status",
});
message!(batch::JobCondition {
    r#type => "type", status => "status", last_probe_time => "lastProbeTime",
    last_transition_time => "lastTransitionTime", reason => "reason", message => "message",
});
message!(batch::JobSpec {
    parallelism => "parallelism" keep, completions => "completions" keep,
    active_deadline_seconds => "activeDeadlineSeconds" keep, pod_failure_policy => "podFailurePolicy",
    success_policy => "successPolicy", backoff_limit => "backoffLimit" keep,
    backoff_limit_per_index => "backoffLimitPerIndex" keep, max_failed_indexes => "maxFailedIndexes" keep,
    selector => "selector", manual_selector => "manualSelector" keep, template => "template",
    ttl_seconds_after_finished => "ttlSecondsAfterFinished" keep, completion_mode => "completionMode" keep,
    suspend => "suspend" keep, pod_replacement_policy => "podReplacementPolicy" keep,
    managed_by => "managedBy" keep,
});
message!(batch::JobStatus {
    conditions => "conditions", start_time => "startTime", completion_time => "completionTime", active => "active",
    succeeded => "succeeded", failed => "failed", terminating => "terminating" keep,
    completed_indexes => "completedIndexes", failed_indexes => "failedIndexes",
    uncounted_terminated_pods => "uncountedTerminatedPods", ready => "ready" keep,
});
message!(batch::JobTemplateSpec {
    metadata => "metadata", spec => "spec",
});
message!(batch::PodFailurePolicy {
    rules => "rules",
});
message!(batch::PodFailurePolicyOnExitCodesRequirement {
    container_name => "containerName" keep, operator => "operator", values => "values",
});
message!(batch::PodFailurePolicyOnPodConditionsPattern {
    r#type => "type", status => "status",
});
message!(batch::PodFailurePolicyRule {
    action => "action", on_exit_codes => "onExitCodes", on_pod_conditions => "onPodConditions",
});
message!(batch::SuccessPolicy {
    rules => "rules",
});
message!(batch::SuccessPolicyRule {
    succeeded_indexes => "succeededIndexes" keep, succeeded_count => "succeededCount" keep,
});
message!(batch::UncountedTerminatedPods {
    succeeded => "succeeded", failed => "failed",
});
