//! The platform groups' built-ins: coordination, `events.k8s.io`, CRDs, networking, discovery, scheduling,
//! storage, admission registration, API registration and node; with CustomResourceDefinitions' validation,
//! defaulting and the resources an established CRD serves.

pub(crate) mod crd;

use super::{
    Builtin, Columns, Defaults, MergeShape as M, NameRule, Printer, Protobuf, Typed, ZeroStatus, r,
};
use crate::defaults::{self, status};
use crate::protobuf::message;
use crate::typed::model;
use k8s_openapi::api::networking::v1 as networking;
use k8s_pb::api as pb;

/// `coordination.k8s.io/v1`.
pub(super) const COORDINATION: &[Builtin] = &[Builtin {
    resource: r(
        "coordination.k8s.io",
        "v1",
        "Lease",
        "leases",
        true,
        &[],
        "",
    ),
    typed: model::<k8s_openapi::api::coordination::v1::Lease>(),
    merge: M::Object,
    protobuf: message::<pb::coordination::v1::Lease>(),
    printer: Printer::Columns(Columns::Lease),
    defaults: Defaults::None,
    zero_status: ZeroStatus::None,
    names: NameRule::Dns1123Subdomain,
}];

/// `events.k8s.io/v1`: a view of the core Event storage (`crate::kinds::core::events`).
pub(super) const EVENTS: &[Builtin] = &[Builtin {
    resource: r("events.k8s.io", "v1", "Event", "events", true, &["ev"], ""),
    typed: model::<k8s_openapi::api::events::v1::Event>(),
    merge: M::Object,
    protobuf: message::<pb::events::v1::Event>(),
    printer: Printer::Columns(Columns::EventV1),
    defaults: Defaults::None,
    zero_status: ZeroStatus::None,
    names: NameRule::Dns1123Subdomain,
}];

/// `apiextensions.k8s.io/v1`: CRDs (`crate::kinds::platform::crd`).
pub(super) const APIEXTENSIONS: &[Builtin] = &[Builtin {
    resource: r(
        "apiextensions.k8s.io",
        "v1",
        "CustomResourceDefinition",
        "customresourcedefinitions",
        false,
        &["crd", "crds"],
        "sg",
    ),
    typed: model::<
        k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition,
    >(),
    merge: M::ConditionsOwner,
    protobuf: Protobuf::None,
    printer: Printer::Default,
    defaults: Defaults::None,
    zero_status: ZeroStatus::None,
    names: NameRule::Dns1123Subdomain,
}];

/// `networking.k8s.io/v1`.
pub(super) const NETWORKING: &[Builtin] = &[
    Builtin {
        resource: r(
            "networking.k8s.io",
            "v1",
            "Ingress",
            "ingresses",
            true,
            &["ing"],
            "sg",
        ),
        typed: model::<networking::Ingress>(),
        merge: M::Object,
        protobuf: message::<pb::networking::v1::Ingress>(),
        printer: Printer::Default,
        defaults: Defaults::None,
        zero_status: ZeroStatus::Of(status::load_balancer, &[]),
        names: NameRule::Dns1123Subdomain,
    },
    Builtin {
        resource: r(
            "networking.k8s.io",
            "v1",
            "NetworkPolicy",
            "networkpolicies",
            true,
            &["netpol"],
            "g",
        ),
        typed: model::<networking::NetworkPolicy>(),
        merge: M::Object,
        protobuf: Protobuf::None,
        printer: Printer::Default,
        defaults: Defaults::None,
        zero_status: ZeroStatus::None,
        names: NameRule::Dns1123Subdomain,
    },
    Builtin {
        resource: r(
            "networking.k8s.io",
            "v1",
            "IngressClass",
            "ingressclasses",
            false,
            &[],
            "",
        ),
        typed: model::<networking::IngressClass>(),
        merge: M::Object,
        protobuf: Protobuf::None,
        printer: Printer::Default,
        defaults: Defaults::None,
        zero_status: ZeroStatus::None,
        names: NameRule::Dns1123Subdomain,
    },
];

/// `discovery.k8s.io/v1`.
pub(super) const DISCOVERY: &[Builtin] = &[Builtin {
    resource: r(
        "discovery.k8s.io",
        "v1",
        "EndpointSlice",
        "endpointslices",
        true,
        &[],
        "",
    ),
    typed: model::<k8s_openapi::api::discovery::v1::EndpointSlice>(),
    merge: M::Object,
    protobuf: message::<pb::discovery::v1::EndpointSlice>(),
    printer: Printer::Columns(Columns::EndpointSlice),
    defaults: Defaults::None,
    zero_status: ZeroStatus::None,
    names: NameRule::Dns1123Subdomain,
}];

/// `scheduling.k8s.io/v1`.
pub(super) const SCHEDULING: &[Builtin] = &[Builtin {
    resource: r(
        "scheduling.k8s.io",
        "v1",
        "PriorityClass",
        "priorityclasses",
        false,
        &["pc"],
        "",
    ),
    typed: model::<k8s_openapi::api::scheduling::v1::PriorityClass>(),
    merge: M::Object,
    protobuf: message::<pb::scheduling::v1::PriorityClass>(),
    printer: Printer::Columns(Columns::PriorityClass),
    defaults: Defaults::Fill(defaults::priority_class),
    zero_status: ZeroStatus::None,
    names: NameRule::Dns1123Subdomain,
}];

/// `storage.k8s.io/v1`.
pub(super) const STORAGE: &[Builtin] = &[Builtin {
    resource: r(
        "storage.k8s.io",
        "v1",
        "StorageClass",
        "storageclasses",
        false,
        &["sc"],
        "",
    ),
    typed: model::<k8s_openapi::api::storage::v1::StorageClass>(),
    merge: M::Object,
    protobuf: Protobuf::None,
    printer: Printer::Default,
    defaults: Defaults::None,
    zero_status: ZeroStatus::None,
    names: NameRule::Dns1123Subdomain,
}];

const ADMISSION: &str = "admissionregistration.k8s.io";

/// `admissionregistration.k8s.io/v1`: the webhook configurations called on writes
/// (`crate::admission::webhooks`).
pub(super) const ADMISSIONREGISTRATION: &[Builtin] = &[
    Builtin {
        resource: r(
            ADMISSION,
            "v1",
            "ValidatingWebhookConfiguration",
            "validatingwebhookconfigurations",
            false,
            &[],
            "g",
        ),
        typed: model::<k8s_openapi::api::admissionregistration::v1::ValidatingWebhookConfiguration>(
        ),
        merge: M::WebhookConfiguration,
        protobuf: Protobuf::None,
        printer: Printer::Columns(Columns::Webhooks),
        defaults: Defaults::Fill(defaults::validating_webhooks),
        zero_status: ZeroStatus::None,
        names: NameRule::Dns1123Subdomain,
    },
    Builtin {
        resource: r(
            ADMISSION,
            "v1",
            "MutatingWebhookConfiguration",
            "mutatingwebhookconfigurations",
            false,
            &[],
            "g",
        ),
        typed: model::<k8s_openapi::api::admissionregistration::v1::MutatingWebhookConfiguration>(),
        merge: M::WebhookConfiguration,
        protobuf: Protobuf::None,
        printer: Printer::Columns(Columns::Webhooks),
        defaults: Defaults::Fill(defaults::mutating_webhooks),
        zero_status: ZeroStatus::None,
        names: NameRule::Dns1123Subdomain,
    },
];

/// `apiregistration.k8s.io/v1`: APIServices, whose group-versions the server's aggregator proxies when they name a
/// service.
pub(super) const APIREGISTRATION: &[Builtin] = &[Builtin {
    resource: r(
        "apiregistration.k8s.io",
        "v1",
        "APIService",
        "apiservices",
        false,
        &[],
        "s",
    ),
    typed: Typed::None,
    merge: M::Object,
    protobuf: Protobuf::None,
    printer: Printer::Columns(Columns::ApiService),
    defaults: Defaults::Fill(defaults::apiservice),
    zero_status: ZeroStatus::Of(status::empty, &[]),
    names: NameRule::Dns1123Subdomain,
}];

/// `node.k8s.io/v1`: RuntimeClasses are stored only (no containers run).
pub(super) const NODE: &[Builtin] = &[Builtin {
    resource: r(
        "node.k8s.io",
        "v1",
        "RuntimeClass",
        "runtimeclasses",
        false,
        &[],
        "",
    ),
    typed: model::<k8s_openapi::api::node::v1::RuntimeClass>(),
    merge: M::Object,
    protobuf: Protobuf::None,
    printer: Printer::Columns(Columns::RuntimeClass),
    defaults: Defaults::None,
    zero_status: ZeroStatus::None,
    names: NameRule::Dns1123Subdomain,
}];
