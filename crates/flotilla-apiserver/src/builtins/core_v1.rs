//! The core group's built-ins (`v1`).

use super::{Builtin, Columns, MergeShape as M, Printer, Protobuf, r};
use crate::protobuf::message;
use crate::typed::model;
use k8s_openapi::api::core::v1 as api;
use k8s_pb::api::core::v1 as pb;

/// The core group.
pub(super) const CORE: &[Builtin] = &[
    Builtin {
        resource: r("", "v1", "Namespace", "namespaces", false, &["ns"], "s"),
        typed: model::<api::Namespace>(),
        merge: M::ConditionsOwner,
        protobuf: message::<pb::Namespace>(),
        printer: Printer::Columns(Columns::Namespace),
    },
    Builtin {
        resource: r("", "v1", "ConfigMap", "configmaps", true, &["cm"], ""),
        typed: model::<api::ConfigMap>(),
        merge: M::Object,
        protobuf: message::<pb::ConfigMap>(),
        printer: Printer::Columns(Columns::ConfigMap),
    },
    Builtin {
        resource: r("", "v1", "Secret", "secrets", true, &[], ""),
        typed: model::<api::Secret>(),
        merge: M::Object,
        protobuf: message::<pb::Secret>(),
        printer: Printer::Columns(Columns::Secret),
    },
    Builtin {
        resource: r(
            "",
            "v1",
            "ServiceAccount",
            "serviceaccounts",
            true,
            &["sa"],
            "",
        ),
        typed: model::<api::ServiceAccount>(),
        merge: M::ServiceAccount,
        protobuf: message::<pb::ServiceAccount>(),
        printer: Printer::Columns(Columns::ServiceAccount),
    },
    Builtin {
        resource: r("", "v1", "Service", "services", true, &["svc"], "sa"),
        typed: model::<api::Service>(),
        merge: M::Service,
        protobuf: message::<pb::Service>(),
        printer: Printer::Columns(Columns::Service),
    },
    Builtin {
        resource: r("", "v1", "Endpoints", "endpoints", true, &["ep"], ""),
        typed: model::<api::Endpoints>(),
        merge: M::Object,
        protobuf: message::<pb::Endpoints>(),
        printer: Printer::Columns(Columns::Endpoints),
    },
    Builtin {
        resource: r("", "v1", "Event", "events", true, &["ev"], ""),
        typed: model::<api::Event>(),
        merge: M::Object,
        protobuf: message::<pb::Event>(),
        printer: Printer::Columns(Columns::Event),
    },
    Builtin {
        resource: r("", "v1", "Pod", "pods", true, &["po"], "sga"),
        typed: model::<api::Pod>(),
        merge: M::Pod,
        protobuf: message::<pb::Pod>(),
        printer: Printer::Columns(Columns::Pod),
    },
    Builtin {
        resource: r("", "v1", "Node", "nodes", false, &["no"], "s"),
        typed: model::<api::Node>(),
        merge: M::Node,
        protobuf: message::<pb::Node>(),
        printer: Printer::Columns(Columns::Node),
    },
    Builtin {
        resource: r(
            "",
            "v1",
            "PersistentVolumeClaim",
            "persistentvolumeclaims",
            true,
            &["pvc"],
            "s",
        ),
        typed: model::<api::PersistentVolumeClaim>(),
        merge: M::ConditionsOwner,
        protobuf: message::<pb::PersistentVolumeClaim>(),
        printer: Printer::Default,
    },
    Builtin {
        resource: r(
            "",
            "v1",
            "PersistentVolume",
            "persistentvolumes",
            false,
            &["pv"],
            "s",
        ),
        typed: model::<api::PersistentVolume>(),
        merge: M::ConditionsOwner,
        protobuf: Protobuf::None,
        printer: Printer::Default,
    },
    Builtin {
        resource: r(
            "",
            "v1",
            "ResourceQuota",
            "resourcequotas",
            true,
            &["quota"],
            "s",
        ),
        typed: model::<api::ResourceQuota>(),
        merge: M::Object,
        protobuf: message::<pb::ResourceQuota>(),
        printer: Printer::Default,
    },
    Builtin {
        resource: r("", "v1", "LimitRange", "limitranges", true, &["limits"], ""),
        typed: model::<api::LimitRange>(),
        merge: M::Object,
        protobuf: message::<pb::LimitRange>(),
        printer: Printer::Default,
    },
    Builtin {
        resource: r(
            "",
            "v1",
            "ReplicationController",
            "replicationcontrollers",
            true,
            &["rc"],
            "scga",
        ),
        typed: model::<api::ReplicationController>(),
        merge: M::Workload,
        protobuf: message::<pb::ReplicationController>(),
        printer: Printer::Default,
    },
    Builtin {
        resource: r("", "v1", "PodTemplate", "podtemplates", true, &[], ""),
        typed: model::<api::PodTemplate>(),
        merge: M::PodTemplate,
        protobuf: message::<pb::PodTemplate>(),
        printer: Printer::Default,
    },
];
