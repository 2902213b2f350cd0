//! The parts of a built-in's entry that only name something another module implements: the type graph strategic
//! merge patch and server-side apply follow from the object's root (`crate::patch`), and the printer of its
//! `kubectl get` table (`crate::table`).

/// A node of the type graph: what kind of object sits at some path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MergeShape {
    /// No merging lists below: maps merge, lists replace.
    Plain,
    /// A top-level object of a kind with no merging lists outside `metadata`.
    Object,
    /// Pod.
    Pod,
    /// Deployment, ReplicaSet, StatefulSet, DaemonSet, ReplicationController.
    Workload,
    /// Job.
    Job,
    /// CronJob.
    CronJob,
    /// PodTemplate.
    PodTemplate,
    /// Service.
    Service,
    /// ServiceAccount.
    ServiceAccount,
    /// Node.
    Node,
    /// Namespace, PersistentVolumeClaim, HorizontalPodAutoscaler, CertificateSigningRequest and other objects whose
    /// status has conditions.
    ConditionsOwner,
    /// ObjectMeta.
    Meta,
    /// PodTemplateSpec.
    PodTemplateSpec,
    /// The spec of a workload (holds `template`).
    WorkloadSpec,
    /// JobSpec.
    JobSpec,
    /// CronJobSpec.
    CronJobSpec,
    /// JobTemplateSpec.
    JobTemplateSpec,
    /// PodSpec.
    PodSpec,
    /// Container, init container or ephemeral container.
    Container,
    /// PodStatus.
    PodStatus,
    /// ServiceSpec.
    ServiceSpec,
    /// NodeSpec.
    NodeSpec,
    /// NodeStatus.
    NodeStatus,
    /// A status whose `conditions` merge by `type`.
    ConditionsStatus,
    /// ValidatingWebhookConfiguration, MutatingWebhookConfiguration (`webhooks` merge by `name`).
    WebhookConfiguration,
}

/// The printers of built-in kinds with one of their own; which kind uses which is said by its entry in
/// `crate::kinds`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Columns {
    Namespace,
    Node,
    Pod,
    Service,
    ConfigMap,
    Secret,
    ServiceAccount,
    Endpoints,
    EndpointSlice,
    Deployment,
    ReplicaSet,
    StatefulSet,
    DaemonSet,
    Job,
    CronJob,
    Event,
    EventV1,
    Lease,
    Hpa,
    PriorityClass,
    Webhooks,
    ApiService,
    RuntimeClass,
    Role,
    RoleBinding,
    Csr,
}
