//! Every well-known label, annotation, finalizer, taint key, namespace, condition type and reason, and event
//! reason, spelled once, as Karmada's `well_known_constants.go` files and `pkg/util/names` spell them.
//!
//! No other crate spells these strings: they import them from here. Values are Karmada's, verbatim, because
//! they are part of the compatibility surface.

/// Labels placed on policies, templates, bindings, Works and member objects.
pub mod labels {
    /// PropagationPolicy permanent id (UUID); on the PP, the templates it claims, their RBs and member objects.
    pub const PROPAGATION_POLICY_PERMANENT_ID: &str = "propagationpolicy.karmada.io/permanent-id";
    /// ClusterPropagationPolicy permanent id (UUID); on the CPP, claimed templates, RB/CRB and member objects.
    pub const CLUSTER_PROPAGATION_POLICY_PERMANENT_ID: &str =
        "clusterpropagationpolicy.karmada.io/permanent-id";
    /// ResourceBinding permanent id (UUID); on the RB, its Works and member objects.
    pub const RESOURCE_BINDING_PERMANENT_ID: &str = "resourcebinding.karmada.io/permanent-id";
    /// ClusterResourceBinding permanent id (UUID); on the CRB, its Works and member objects.
    pub const CLUSTER_RESOURCE_BINDING_PERMANENT_ID: &str =
        "clusterresourcebinding.karmada.io/permanent-id";
    /// Work permanent id (UUID); on the Work and member objects.
    pub const WORK_PERMANENT_ID: &str = "work.karmada.io/permanent-id";
    /// Ownership marker on manifests and member objects; value [`MANAGED_VALUE`].
    pub const MANAGED: &str = "karmada.io/managed";
    /// Value of [`MANAGED`].
    pub const MANAGED_VALUE: &str = "true";
    /// On a template: `"true"` keeps the member's Deployment replicas.
    pub const RETAIN_REPLICAS: &str = "resourcetemplate.karmada.io/retain-replicas";
    /// On a template: any value makes the detector ignore it (MultiClusterService).
    pub const CLAIMED_BY: &str = "resourcetemplate.karmada.io/claimed-by";
    /// On any template: [`DELETION_PROTECTED_ALWAYS`] denies DELETE.
    pub const DELETION_PROTECTED: &str = "resourcetemplate.karmada.io/deletion-protected";
    /// Value of [`DELETION_PROTECTED`] that protects the object.
    pub const DELETION_PROTECTED_ALWAYS: &str = "Always";
    /// Prefix of the label an attached (dependency) RB carries per independent RB; the suffix is a hash of the
    /// independent RB's `namespace/name` (the decimal FNV-1a 32 of the text, its digits mapped by apimachinery's
    /// `SafeEncodeString`) and the value its permanent id.
    pub const DEPENDED_BY_PREFIX: &str = "resourcebinding.karmada.io/depended-by-";
    /// On RBs created by MultiClusterService; makes the scheduler accept the binding.
    pub const BINDING_MANAGED_BY: &str = "binding.karmada.io/managed-by";
    /// On a Namespace: `"true"` (case-insensitive) keeps it from being propagated automatically.
    pub const SKIP_AUTO_PROPAGATION: &str = "namespace.karmada.io/skip-auto-propagation";
    /// On `karmada-es-*` namespaces; value [`SYSTEM_VALUE`].
    pub const SYSTEM: &str = "karmada.io/system";
    /// Value of [`SYSTEM`].
    pub const SYSTEM_VALUE: &str = "true";
}

/// Annotations placed on templates, bindings, Works and member objects.
pub mod annotations {
    /// Namespace of the claiming PropagationPolicy.
    pub const PROPAGATION_POLICY_NAMESPACE: &str = "propagationpolicy.karmada.io/namespace";
    /// Name of the claiming PropagationPolicy.
    pub const PROPAGATION_POLICY_NAME: &str = "propagationpolicy.karmada.io/name";
    /// Name of the claiming ClusterPropagationPolicy.
    pub const CLUSTER_PROPAGATION_POLICY_NAME: &str = "clusterpropagationpolicy.karmada.io/name";
    /// Namespace of the owning ResourceBinding (on Works and manifests).
    pub const RESOURCE_BINDING_NAMESPACE: &str = "resourcebinding.karmada.io/namespace";
    /// Name of the owning ResourceBinding (on Works and manifests).
    pub const RESOURCE_BINDING_NAME: &str = "resourcebinding.karmada.io/name";
    /// Name of the owning ClusterResourceBinding (on Works and manifests).
    pub const CLUSTER_RESOURCE_BINDING_NAME: &str = "clusterresourcebinding.karmada.io/name";
    /// Namespace of the owning Work (on manifests and member objects).
    pub const WORK_NAMESPACE: &str = "work.karmada.io/namespace";
    /// Name of the owning Work (on manifests and member objects).
    pub const WORK_NAME: &str = "work.karmada.io/name";
    /// Conflict resolution of a template, Work or manifest: [`CONFLICT_RESOLUTION_OVERWRITE`] or
    /// [`CONFLICT_RESOLUTION_ABORT`].
    pub const CONFLICT_RESOLUTION: &str = "work.karmada.io/conflict-resolution";
    /// Value of [`CONFLICT_RESOLUTION`]: take over existing member objects.
    pub const CONFLICT_RESOLUTION_OVERWRITE: &str = "overwrite";
    /// Value of [`CONFLICT_RESOLUTION`]: leave existing member objects alone.
    pub const CONFLICT_RESOLUTION_ABORT: &str = "abort";
    /// UID of the template (on manifests and member objects).
    pub const RESOURCE_TEMPLATE_UID: &str = "resourcetemplate.karmada.io/uid";
    /// `metadata.generation` of the template, when > 0 (on manifests and member objects).
    pub const RESOURCE_TEMPLATE_GENERATION: &str = "resourcetemplate.karmada.io/generation";
    /// Comma-joined sorted label keys present in the manifest.
    pub const MANAGED_LABELS: &str = "resourcetemplate.karmada.io/managed-labels";
    /// Comma-joined sorted annotation keys present in the manifest (always includes both managed-* keys).
    pub const MANAGED_ANNOTATIONS: &str = "resourcetemplate.karmada.io/managed-annotations";
    /// On RB/CRB: JSON of the placement the scheduler last used.
    pub const APPLIED_PLACEMENT: &str = "policy.karmada.io/applied-placement";
    /// On Works: JSON list of the OverridePolicies applied.
    pub const APPLIED_OVERRIDES: &str = "policy.karmada.io/applied-overrides";
    /// On Works: JSON list of the ClusterOverridePolicies applied.
    pub const APPLIED_CLUSTER_OVERRIDES: &str = "policy.karmada.io/applied-cluster-overrides";
    /// On an independent RB: JSON list of its DependentObjectReferences.
    pub const DEPENDENCIES: &str = "resourcebinding.karmada.io/dependencies";
    /// Search cache only: the member cluster an object was cached from.
    pub const CACHED_FROM_CLUSTER: &str = "resource.karmada.io/cached-from-cluster";
}

/// Finalizers Karmada's controllers own.
pub mod finalizers {
    /// On PropagationPolicies.
    pub const PROPAGATION_POLICY: &str = "karmada.io/propagation-policy-controller";
    /// On ClusterPropagationPolicies.
    pub const CLUSTER_PROPAGATION_POLICY: &str = "karmada.io/cluster-propagation-policy-controller";
    /// On ResourceBindings.
    pub const BINDING: &str = "karmada.io/binding-controller";
    /// On ClusterResourceBindings.
    pub const CLUSTER_RESOURCE_BINDING: &str = "karmada.io/cluster-resource-binding-controller";
    /// On independent ResourceBindings with `propagateDeps`.
    pub const BINDING_DEPENDENCIES_DISTRIBUTOR: &str =
        "karmada.io/binding-dependencies-distributor";
    /// On Works.
    pub const EXECUTION: &str = "karmada.io/execution-controller";
    /// On Clusters.
    pub const CLUSTER: &str = "karmada.io/cluster-controller";
}

/// Cluster taint keys: the cluster controller sets the first two from the Ready condition, users the third.
pub mod taints {
    /// Set while the cluster's Ready condition is False (or absent).
    pub const NOT_READY: &str = "cluster.karmada.io/not-ready";
    /// Set while the cluster's Ready condition is Unknown.
    pub const UNREACHABLE: &str = "cluster.karmada.io/unreachable";
    /// Set by users to stop new placements on a cluster.
    pub const UNSCHEDULABLE: &str = "cluster.karmada.io/unschedulable";
}

/// Namespaces and the names derived from them.
pub mod namespaces {
    /// Prefix of a cluster's execution namespace: `karmada-es-<cluster>`.
    pub const EXECUTION_SPACE_PREFIX: &str = "karmada-es-";
    /// The control plane's own namespace.
    pub const KARMADA_SYSTEM: &str = "karmada-system";
    /// Where member credentials and leases live.
    pub const KARMADA_CLUSTER: &str = "karmada-cluster";
    /// The namespaces never propagated nor watched, besides every `karmada-es-*`.
    pub const RESERVED: [&str; 2] = [KARMADA_SYSTEM, KARMADA_CLUSTER];
    /// Excluded from automatic namespace propagation (not from templates).
    pub const DEFAULT: &str = "default";

    /// The execution namespace of a cluster.
    pub fn execution_space(cluster: &str) -> String {
        format!("{EXECUTION_SPACE_PREFIX}{cluster}")
    }

    /// The cluster an execution namespace belongs to, or `None` if the name lacks the prefix.
    pub fn cluster_of_execution_space(namespace: &str) -> Option<&str> {
        namespace.strip_prefix(EXECUTION_SPACE_PREFIX)
    }

    /// Whether objects in this namespace are never propagated nor watched.
    pub fn is_reserved(namespace: &str) -> bool {
        RESERVED.contains(&namespace) || namespace.starts_with(EXECUTION_SPACE_PREFIX)
    }
}

/// What registering a member creates (Karmada's `pkg/util/names`, `pkg/util/credential.go`): ServiceAccounts and
/// their RBAC in the member's `karmada-cluster` namespace, Secrets in the control plane's.
pub mod registration {
    /// The member's ServiceAccount whose token the aggregated API server presents when it proxies a request,
    /// impersonating the caller (`names.GenerateServiceAccountName("impersonator")`).
    pub const IMPERSONATOR_SERVICE_ACCOUNT: &str = "karmada-impersonator";

    /// The member's ServiceAccount whose token the control plane uses to reach it: `karmada-<cluster>`.
    pub fn service_account(cluster: &str) -> String {
        format!("karmada-{cluster}")
    }

    /// The member's ClusterRole (and ClusterRoleBinding) giving `service_account` its rights:
    /// `karmada-controller-manager:<service account>`.
    pub fn role(service_account: &str) -> String {
        format!("karmada-controller-manager:{service_account}")
    }

    /// The control plane's Secret holding the impersonator token: `<cluster>-impersonator`.
    pub fn impersonator_secret(cluster: &str) -> String {
        format!("{cluster}-impersonator")
    }
}

/// The identities of Pull-mode agents and of the bootstrap tokens they register with, as `karmadactl init` and
/// `karmadactl register` name them.
pub mod agents {
    /// The group of every agent's client certificate (its subject's organization).
    pub const GROUP: &str = "system:karmada:agents";
    /// Prefix of an agent's user (its certificate's common name): `system:karmada:agent:<cluster>`.
    pub const USER_PREFIX: &str = "system:karmada:agent:";
    /// The extra group of the bootstrap tokens agents register with.
    pub const BOOTSTRAP_TOKEN_GROUP: &str = "system:bootstrappers:karmada:default-cluster-token";
    /// The member Secret (in `karmada-system` by default) whose key of the same name holds the agent's
    /// kubeconfig for the control plane.
    pub const KUBECONFIG_SECRET: &str = "karmada-kubeconfig";

    /// The user of the agent of `cluster`.
    pub fn user(cluster: &str) -> String {
        format!("{USER_PREFIX}{cluster}")
    }

    /// The control plane's ClusterRole and ClusterRoleBinding of the agent of `cluster`.
    pub fn cluster_role(cluster: &str) -> String {
        format!("system:karmada:{cluster}:agent")
    }

    /// The Role and RoleBinding in `karmada-cluster` letting the agent of `cluster` report its Secrets.
    pub fn secret_role(cluster: &str) -> String {
        format!("system:karmada:{cluster}:agent-secret")
    }

    /// The Role and RoleBinding in the execution namespace letting the agent of `cluster` handle its Works.
    pub fn work_role(cluster: &str) -> String {
        format!("system:karmada:{cluster}:agent-work")
    }
}

/// Keys of a member cluster's credentials Secret.
pub mod secret_keys {
    /// Bearer token.
    pub const TOKEN: &str = "token";
    /// PEM CA bundle.
    pub const CA_BUNDLE: &str = "caBundle";
}

/// Condition types, reasons and fixed messages of bindings, Works and Clusters.
pub mod conditions {
    /// Binding condition set by the scheduler.
    pub const SCHEDULED: &str = "Scheduled";
    /// Binding condition set by the binding status controller.
    pub const FULLY_APPLIED: &str = "FullyApplied";
    /// `Scheduled` reason: scheduled.
    pub const REASON_SUCCESS: &str = "Success";
    /// `Scheduled` reason: unexpected scheduler error (retried).
    pub const REASON_SCHEDULER_ERROR: &str = "SchedulerError";
    /// `Scheduled` reason: no cluster fits the placement (not retried).
    pub const REASON_NO_CLUSTER_FIT: &str = "NoClusterFit";
    /// `Scheduled` reason: not enough capacity (retried).
    pub const REASON_UNSCHEDULABLE: &str = "Unschedulable";
    /// `Scheduled` reason: a quota rejected the result (retried).
    pub const REASON_QUOTA_EXCEEDED: &str = "QuotaExceeded";
    /// `Scheduled` message on success.
    pub const MESSAGE_SCHEDULED_SUCCESS: &str = "Binding has been scheduled successfully.";
    /// `FullyApplied` reason: every Work applied.
    pub const REASON_FULLY_APPLIED_SUCCESS: &str = "FullyAppliedSuccess";
    /// `FullyApplied` reason: some Work not applied.
    pub const REASON_FULLY_APPLIED_FAILED: &str = "FullyAppliedFailed";
    /// `FullyApplied` message on success.
    pub const MESSAGE_FULLY_APPLIED_SUCCESS: &str = "All works have been successfully applied";
    /// `FullyApplied` message on failure.
    pub const MESSAGE_FULLY_APPLIED_FAILED: &str =
        "Failed to apply all works, see status.aggregatedStatus for details";

    /// Work condition: the manifests were applied.
    pub const WORK_APPLIED: &str = "Applied";
    /// Work condition: reserved, not produced by the core controllers.
    pub const WORK_PROGRESSING: &str = "Progressing";
    /// Work condition: reserved, not produced by the core controllers.
    pub const WORK_AVAILABLE: &str = "Available";
    /// Work condition: reserved, not produced by the core controllers.
    pub const WORK_DEGRADED: &str = "Degraded";
    /// Work condition: dispatching state.
    pub const WORK_DISPATCHING: &str = "Dispatching";
    /// `Applied` reason: every manifest applied.
    pub const REASON_APPLIED_SUCCESSFUL: &str = "AppliedSuccessful";
    /// `Applied` reason: some manifest failed.
    pub const REASON_APPLIED_FAILED: &str = "AppliedFailed";
    /// `Applied` message on success.
    pub const MESSAGE_APPLIED_SUCCESSFUL: &str = "Manifest has been successfully applied";
    /// `Dispatching` reason when dispatching.
    pub const REASON_DISPATCHING: &str = "Dispatching";
    /// `Dispatching` message when dispatching.
    pub const MESSAGE_DISPATCHING: &str = "Work is being dispatched to member clusters.";
    /// `Dispatching` reason when suspended.
    pub const REASON_SUSPEND_DISPATCHING: &str = "SuspendDispatching";
    /// `Dispatching` message when suspended.
    pub const MESSAGE_SUSPEND_DISPATCHING: &str = "Work dispatching is in a suspended state.";

    /// Cluster condition: the member is healthy.
    pub const CLUSTER_READY: &str = "Ready";
    /// Cluster condition: `apiEnablements` is complete.
    pub const CLUSTER_COMPLETE_API_ENABLEMENTS: &str = "CompleteAPIEnablements";
    /// `Ready` reason: healthy.
    pub const REASON_CLUSTER_READY: &str = "ClusterReady";
    /// `Ready` message when healthy.
    pub const MESSAGE_CLUSTER_READY: &str = "cluster is healthy and ready to accept workloads";
    /// `Ready` reason: reachable but unhealthy.
    pub const REASON_CLUSTER_NOT_READY: &str = "ClusterNotReady";
    /// `Ready` message when reachable but unhealthy.
    pub const MESSAGE_CLUSTER_NOT_READY: &str =
        "cluster is reachable but health endpoint responded without ok";
    /// `Ready` reason: unreachable.
    pub const REASON_CLUSTER_NOT_REACHABLE: &str = "ClusterNotReachable";
    /// `Ready` message when unreachable.
    pub const MESSAGE_CLUSTER_NOT_REACHABLE: &str = "cluster is not reachable";
    /// `Ready` reason: no member client could be built.
    pub const REASON_STATUS_COLLECTION_FAILED: &str = "StatusCollectionFailed";
    /// `Ready` reason: a Pull cluster stopped reporting.
    pub const REASON_CLUSTER_STATUS_UNKNOWN: &str = "ClusterStatusUnknown";
    /// `Ready` message when a Pull cluster stopped reporting.
    pub const MESSAGE_CLUSTER_STATUS_UNKNOWN: &str =
        "Cluster status controller stopped posting cluster status.";
    /// `Ready` reason: a Pull cluster never reported.
    pub const REASON_CLUSTER_STATUS_NEVER_UPDATED: &str = "ClusterStatusNeverUpdated";
    /// `Ready` message when a Pull cluster never reported.
    pub const MESSAGE_CLUSTER_STATUS_NEVER_UPDATED: &str =
        "Cluster status controller never posted cluster status.";
    /// `CompleteAPIEnablements` reason: discovery succeeded.
    pub const REASON_API_ENABLEMENTS_COMPLETE: &str = "Complete";
    /// `CompleteAPIEnablements` message when complete.
    pub const MESSAGE_API_ENABLEMENTS_COMPLETE: &str =
        "collected complete APIEnablements from the cluster";
    /// `CompleteAPIEnablements` reason: discovery partly failed.
    pub const REASON_API_ENABLEMENTS_PARTIAL: &str = "Partial";
    /// `CompleteAPIEnablements` reason: discovery returned nothing.
    pub const REASON_API_ENABLEMENTS_EMPTY: &str = "Empty";
    /// `CompleteAPIEnablements` message when discovery returned nothing.
    pub const MESSAGE_API_ENABLEMENTS_EMPTY: &str =
        "collected empty APIEnablements from the cluster";
}

/// Reasons and producers of a binding's graceful eviction tasks (`spec.gracefulEvictionTasks`).
pub mod eviction {
    /// Reason: the cluster has a NoExecute taint the binding does not tolerate.
    pub const REASON_TAINT_UNTOLERATED: &str = "TaintUntolerated";
    /// Reason: the application failed in the cluster.
    pub const REASON_APPLICATION_FAILURE: &str = "ApplicationFailure";
    /// Producer: the taint manager.
    pub const PRODUCER_TAINT_MANAGER: &str = "TaintManager";
    /// Producer: the application failover controller of ResourceBindings (its controller name).
    pub const PRODUCER_RB_APPLICATION_FAILOVER: &str =
        "resource-binding-application-failover-controller";
    /// Producer: the application failover controller of ClusterResourceBindings (its controller name).
    pub const PRODUCER_CRB_APPLICATION_FAILOVER: &str =
        "cluster-resource-binding-application-failover-controller";
}

/// Kubernetes Event reasons the controllers record.
pub mod events {
    /// Detector: a policy was applied to a template.
    pub const APPLY_POLICY_SUCCEED: &str = "ApplyPolicySucceed";
    /// Detector: applying a policy failed.
    pub const APPLY_POLICY_FAILED: &str = "ApplyPolicyFailed";
    /// Detector: a policy preempted another.
    pub const PREEMPT_POLICY_SUCCEED: &str = "PreemptPolicySucceed";
    /// Detector: preemption failed.
    pub const PREEMPT_POLICY_FAILED: &str = "PreemptPolicyFailed";
    /// Detector: InterpretReplica succeeded.
    pub const GET_REPLICAS_SUCCEED: &str = "GetReplicasSucceed";
    /// Detector: InterpretReplica failed.
    pub const GET_REPLICAS_FAILED: &str = "GetReplicasFailed";
    /// Detector: InterpretComponent succeeded (gate `MultiplePodTemplatesScheduling`).
    pub const GET_COMPONENTS_SUCCEED: &str = "GetComponentsSucceed";
    /// Detector: InterpretComponent failed.
    pub const GET_COMPONENTS_FAILED: &str = "GetComponentsFailed";
    /// Scheduler: binding scheduled.
    pub const SCHEDULE_BINDING_SUCCEED: &str = "ScheduleBindingSucceed";
    /// Scheduler: scheduling failed.
    pub const SCHEDULE_BINDING_FAILED: &str = "ScheduleBindingFailed";
    /// Binding controller: Works written.
    pub const SYNC_WORK_SUCCEED: &str = "SyncWorkSucceed";
    /// Binding controller: writing Works failed.
    pub const SYNC_WORK_FAILED: &str = "SyncWorkFailed";
    /// Binding controller: removing orphan Works failed.
    pub const CLEANUP_WORK_FAILED: &str = "CleanupWorkFailed";
    /// Override manager: overrides applied.
    pub const APPLY_OVERRIDE_POLICY_SUCCEED: &str = "ApplyOverridePolicySucceed";
    /// Override manager: applying overrides failed.
    pub const APPLY_OVERRIDE_POLICY_FAILED: &str = "ApplyOverridePolicyFailed";
    /// Execution controller: dispatching state changed.
    pub const WORK_DISPATCHING: &str = "WorkDispatching";
    /// Execution controller: applied to the member.
    pub const SYNC_SUCCEED: &str = "SyncSucceed";
    /// Execution controller: applying to the member failed.
    pub const SYNC_FAILED: &str = "SyncFailed";
    /// Work status controller: InterpretStatus succeeded.
    pub const REFLECT_STATUS_SUCCEED: &str = "ReflectStatusSucceed";
    /// Work status controller: InterpretStatus failed.
    pub const REFLECT_STATUS_FAILED: &str = "ReflectStatusFailed";
    /// Work status controller: InterpretHealth succeeded.
    pub const INTERPRET_HEALTH_SUCCEED: &str = "InterpretHealthSucceed";
    /// Work status controller: InterpretHealth failed.
    pub const INTERPRET_HEALTH_FAILED: &str = "InterpretHealthFailed";
    /// Binding status controller: status aggregated.
    pub const AGGREGATE_STATUS_SUCCEED: &str = "AggregateStatusSucceed";
    /// Binding status controller: aggregation failed.
    pub const AGGREGATE_STATUS_FAILED: &str = "AggregateStatusFailed";
    /// Dependencies distributor: InterpretDependency succeeded.
    pub const GET_DEPENDENCIES_SUCCEED: &str = "GetDependenciesSucceed";
    /// Dependencies distributor: InterpretDependency failed.
    pub const GET_DEPENDENCIES_FAILED: &str = "GetDependenciesFailed";
    /// Dependencies distributor: attached bindings updated.
    pub const SYNC_SCHEDULE_RESULT_TO_DEPENDENCIES_SUCCEED: &str =
        "SyncScheduleResultToDependenciesSucceed";
    /// Dependencies distributor: updating attached bindings failed.
    pub const SYNC_SCHEDULE_RESULT_TO_DEPENDENCIES_FAILED: &str =
        "SyncScheduleResultToDependenciesFailed";
    /// Dependencies distributor: referrers disagree on a dependency's policy.
    pub const DEPENDENCY_POLICY_CONFLICT: &str = "DependencyPolicyConflict";
    /// Cluster controller: execution namespace created.
    pub const CREATE_EXECUTION_SPACE_SUCCEED: &str = "CreateExecutionSpaceSucceed";
    /// Cluster controller: creating the execution namespace failed.
    pub const CREATE_EXECUTION_SPACE_FAILED: &str = "CreateExecutionSpaceFailed";
    /// Cluster controller: execution namespace removed.
    pub const REMOVE_EXECUTION_SPACE_SUCCEED: &str = "RemoveExecutionSpaceSucceed";
    /// Cluster controller: removing the execution namespace failed.
    pub const REMOVE_EXECUTION_SPACE_FAILED: &str = "RemoveExecutionSpaceFailed";
    /// Cluster controller: taints updated.
    pub const TAINT_CLUSTER_SUCCEED: &str = "TaintClusterSucceed";
    /// Cluster controller: updating taints failed.
    pub const TAINT_CLUSTER_FAILED: &str = "TaintClusterFailed";
    /// Unified-auth controller: the impersonation ClusterRole and ClusterRoleBinding Works written.
    pub const SYNC_IMPERSONATION_CONFIG_SUCCEED: &str = "SyncImpersonationConfigSucceed";
    /// Unified-auth controller: writing the impersonation Works failed.
    pub const SYNC_IMPERSONATION_CONFIG_FAILED: &str = "SyncImpersonationConfigFailed";
    /// Taint manager: workload evicted.
    pub const EVICT_WORKLOAD_FROM_CLUSTER_SUCCEED: &str = "EvictWorkloadFromClusterSucceed";
    /// Taint manager: eviction failed.
    pub const EVICT_WORKLOAD_FROM_CLUSTER_FAILED: &str = "EvictWorkloadFromClusterFailed";
    /// Any informer: an object Flotilla cannot read (a field of another type, an enum value it does not know)
    /// is left out. Flotilla's own reason: Karmada's Go types read such objects or fail otherwise.
    pub const OBJECT_UNDECODABLE: &str = "ObjectUndecodable";
}
