//! The workload groups (`apps`, `batch`, `autoscaling`, `policy`): their built-ins' entries, the workloads'
//! create and update strategies, and HorizontalPodAutoscalers' two versions over one storage.

pub(crate) mod autoscaling;
pub(crate) mod strategy;

use super::{Builtin, Columns, Defaults, MergeShape as M, NameRule, Printer, ZeroStatus, r};
use crate::defaults::{self, status};
use crate::protobuf::message;
use crate::typed::{hpa_v1_model, model};
use k8s_openapi::api::{
    apps::v1 as apps, autoscaling as autoscaling_api, batch::v1 as batch, policy::v1 as policy,
};
use k8s_pb::api as pb;

/// `apps/v1`.
pub(super) const APPS: &[Builtin] = &[
    Builtin {
        resource: r(
            "apps",
            "v1",
            "Deployment",
            "deployments",
            true,
            &["deploy"],
            "scga",
        ),
        typed: model::<apps::Deployment>(),
        merge: M::Workload,
        protobuf: message::<pb::apps::v1::Deployment>(),
        printer: Printer::Columns(Columns::Deployment),
        defaults: Defaults::Fill(defaults::deployment),
        zero_status: ZeroStatus::Of(status::empty, status::DEPLOYMENT_CONDITION_TIMES),
        names: NameRule::Dns1123Subdomain,
    },
    Builtin {
        resource: r(
            "apps",
            "v1",
            "ReplicaSet",
            "replicasets",
            true,
            &["rs"],
            "scga",
        ),
        typed: model::<apps::ReplicaSet>(),
        merge: M::Workload,
        protobuf: message::<pb::apps::v1::ReplicaSet>(),
        printer: Printer::Columns(Columns::ReplicaSet),
        defaults: Defaults::Fill(defaults::replica_set),
        zero_status: ZeroStatus::Of(status::replicas, status::WORKLOAD_CONDITION_TIMES),
        names: NameRule::Dns1123Subdomain,
    },
    Builtin {
        resource: r(
            "apps",
            "v1",
            "StatefulSet",
            "statefulsets",
            true,
            &["sts"],
            "scga",
        ),
        typed: model::<apps::StatefulSet>(),
        merge: M::Workload,
        protobuf: message::<pb::apps::v1::StatefulSet>(),
        printer: Printer::Columns(Columns::StatefulSet),
        defaults: Defaults::Fill(defaults::statefulset),
        zero_status: ZeroStatus::Of(status::stateful_set, status::WORKLOAD_CONDITION_TIMES),
        names: NameRule::Dns1123Subdomain,
    },
    Builtin {
        resource: r(
            "apps",
            "v1",
            "DaemonSet",
            "daemonsets",
            true,
            &["ds"],
            "sga",
        ),
        typed: model::<apps::DaemonSet>(),
        merge: M::Workload,
        protobuf: message::<pb::apps::v1::DaemonSet>(),
        printer: Printer::Columns(Columns::DaemonSet),
        defaults: Defaults::Fill(defaults::daemonset),
        zero_status: ZeroStatus::Of(status::daemon_set, status::WORKLOAD_CONDITION_TIMES),
        names: NameRule::Dns1123Subdomain,
    },
    Builtin {
        resource: r(
            "apps",
            "v1",
            "ControllerRevision",
            "controllerrevisions",
            true,
            &[],
            "",
        ),
        typed: model::<apps::ControllerRevision>(),
        merge: M::Object,
        protobuf: message::<pb::apps::v1::ControllerRevision>(),
        printer: Printer::Default,
        defaults: Defaults::None,
        zero_status: ZeroStatus::None,
        names: NameRule::Dns1123Subdomain,
    },
];

/// `batch/v1`.
pub(super) const BATCH: &[Builtin] = &[
    Builtin {
        resource: r("batch", "v1", "Job", "jobs", true, &[], "sga"),
        typed: model::<batch::Job>(),
        merge: M::Job,
        protobuf: message::<pb::batch::v1::Job>(),
        printer: Printer::Columns(Columns::Job),
        defaults: Defaults::Fill(defaults::job),
        zero_status: ZeroStatus::Of(status::empty, status::JOB_CONDITION_TIMES),
        names: NameRule::Dns1123Subdomain,
    },
    Builtin {
        resource: r("batch", "v1", "CronJob", "cronjobs", true, &["cj"], "sga"),
        typed: model::<batch::CronJob>(),
        merge: M::CronJob,
        protobuf: message::<pb::batch::v1::CronJob>(),
        printer: Printer::Columns(Columns::CronJob),
        defaults: Defaults::Fill(defaults::cron_job),
        zero_status: ZeroStatus::Of(status::empty, &[]),
        names: NameRule::Dns1123Subdomain,
    },
];

/// `policy/v1`.
pub(super) const POLICY: &[Builtin] = &[Builtin {
    resource: r(
        "policy",
        "v1",
        "PodDisruptionBudget",
        "poddisruptionbudgets",
        true,
        &["pdb"],
        "sg",
    ),
    typed: model::<policy::PodDisruptionBudget>(),
    merge: M::ConditionsOwner,
    protobuf: message::<pb::policy::v1::PodDisruptionBudget>(),
    printer: Printer::Default,
    defaults: Defaults::None,
    zero_status: ZeroStatus::Of(status::disruption_budget, &[]),
    names: NameRule::Dns1123Subdomain,
}];

/// `autoscaling`: HorizontalPodAutoscalers are stored as `v2`; `v1` is a converted view (`crate::kinds::workloads::autoscaling`).
pub(super) const AUTOSCALING: &[Builtin] = &[
    Builtin {
        resource: r(
            "autoscaling",
            "v2",
            "HorizontalPodAutoscaler",
            "horizontalpodautoscalers",
            true,
            &["hpa"],
            "sga",
        ),
        typed: model::<autoscaling_api::v2::HorizontalPodAutoscaler>(),
        merge: M::ConditionsOwner,
        protobuf: message::<pb::autoscaling::v2::HorizontalPodAutoscaler>(),
        printer: Printer::Columns(Columns::Hpa),
        defaults: Defaults::Fill(crate::kinds::workloads::autoscaling::default_v2),
        zero_status: ZeroStatus::Of(status::autoscaler, &[]),
        names: NameRule::Dns1123Subdomain,
    },
    Builtin {
        resource: r(
            "autoscaling",
            "v1",
            "HorizontalPodAutoscaler",
            "horizontalpodautoscalers",
            true,
            &["hpa"],
            "sga",
        )
        .stored_as("v2"),
        typed: hpa_v1_model(),
        merge: M::ConditionsOwner,
        protobuf: message::<pb::autoscaling::v1::HorizontalPodAutoscaler>(),
        printer: Printer::Columns(Columns::Hpa),
        defaults: Defaults::None,
        zero_status: ZeroStatus::Of(status::autoscaler, &[]),
        names: NameRule::Dns1123Subdomain,
    },
];
