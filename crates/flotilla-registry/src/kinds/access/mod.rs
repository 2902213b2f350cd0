//! The access-control groups' built-ins: RBAC, the reviews (`authorization.k8s.io`, `authentication.k8s.io`:
//! create-only, answered and never stored by the server's review handler) and CertificateSigningRequests, with
//! their strategies and validation.

pub mod certificates;

use std::sync::Arc;

use serde_json::Value;

use super::{Builtin, Columns, Defaults, MergeShape as M, NameRule, Printer, Typed, ZeroStatus, r};
use crate::defaults::{self, status};
use crate::protobuf::message;
use crate::resource::ResourceInfo;
use crate::typed::model;
use k8s_openapi::api::rbac::v1 as rbac;
use k8s_pb::api as pb;

const RBAC_GROUP: &str = "rbac.authorization.k8s.io";

/// A Role or ClusterRole as Go writes it: `rules` (a list without `omitempty`) is `null` when there are none.
/// Added when read, not stored, so that no writer is recorded as owning it.
pub(crate) fn rbac_rules_on_read(info: &ResourceInfo, obj: Arc<Value>) -> Arc<Value> {
    let role = !info.custom
        && info.group == RBAC_GROUP
        && matches!(info.plural.as_str(), "roles" | "clusterroles");
    if !role || obj.get("rules").is_some() || !obj.is_object() {
        return obj;
    }
    let mut out = obj.as_ref().clone();
    if let Some(o) = out.as_object_mut() {
        o.insert("rules".into(), Value::Null);
    }
    Arc::new(out)
}

/// `rbac.authorization.k8s.io/v1`.
pub(super) const RBAC: &[Builtin] = &[
    Builtin {
        resource: r(RBAC_GROUP, "v1", "Role", "roles", true, &[], ""),
        typed: model::<rbac::Role>(),
        merge: M::Object,
        protobuf: message::<pb::rbac::v1::Role>(),
        printer: Printer::Columns(Columns::Role),
        defaults: Defaults::None,
        zero_status: ZeroStatus::None,
        names: NameRule::PathSegment,
    },
    Builtin {
        resource: r(
            RBAC_GROUP,
            "v1",
            "RoleBinding",
            "rolebindings",
            true,
            &[],
            "",
        ),
        typed: model::<rbac::RoleBinding>(),
        merge: M::Object,
        protobuf: message::<pb::rbac::v1::RoleBinding>(),
        printer: Printer::Columns(Columns::RoleBinding),
        defaults: Defaults::Fill(defaults::rbac_subjects),
        zero_status: ZeroStatus::None,
        names: NameRule::PathSegment,
    },
    Builtin {
        resource: r(
            RBAC_GROUP,
            "v1",
            "ClusterRole",
            "clusterroles",
            false,
            &[],
            "",
        ),
        typed: model::<rbac::ClusterRole>(),
        merge: M::Object,
        protobuf: message::<pb::rbac::v1::ClusterRole>(),
        printer: Printer::Columns(Columns::Role),
        defaults: Defaults::None,
        zero_status: ZeroStatus::None,
        names: NameRule::PathSegment,
    },
    Builtin {
        resource: r(
            RBAC_GROUP,
            "v1",
            "ClusterRoleBinding",
            "clusterrolebindings",
            false,
            &[],
            "",
        ),
        typed: model::<rbac::ClusterRoleBinding>(),
        merge: M::Object,
        protobuf: message::<pb::rbac::v1::ClusterRoleBinding>(),
        printer: Printer::Columns(Columns::RoleBinding),
        defaults: Defaults::Fill(defaults::rbac_subjects),
        zero_status: ZeroStatus::None,
        names: NameRule::PathSegment,
    },
];

const AUTHZ: &str = "authorization.k8s.io";

/// `authorization.k8s.io/v1`: access reviews.
pub(super) const AUTHORIZATION: &[Builtin] = &[
    Builtin {
        resource: r(
            AUTHZ,
            "v1",
            "SelfSubjectAccessReview",
            "selfsubjectaccessreviews",
            false,
            &[],
            "",
        ),
        typed: Typed::None,
        merge: M::Object,
        protobuf: message::<pb::authorization::v1::SelfSubjectAccessReview>(),
        printer: Printer::Default,
        defaults: Defaults::None,
        zero_status: ZeroStatus::None,
        names: NameRule::Dns1123Subdomain,
    },
    Builtin {
        resource: r(
            AUTHZ,
            "v1",
            "SelfSubjectRulesReview",
            "selfsubjectrulesreviews",
            false,
            &[],
            "",
        ),
        typed: Typed::None,
        merge: M::Object,
        protobuf: message::<pb::authorization::v1::SelfSubjectRulesReview>(),
        printer: Printer::Default,
        defaults: Defaults::None,
        zero_status: ZeroStatus::None,
        names: NameRule::Dns1123Subdomain,
    },
    Builtin {
        resource: r(
            AUTHZ,
            "v1",
            "SubjectAccessReview",
            "subjectaccessreviews",
            false,
            &[],
            "",
        ),
        typed: Typed::None,
        merge: M::Object,
        protobuf: message::<pb::authorization::v1::SubjectAccessReview>(),
        printer: Printer::Default,
        defaults: Defaults::None,
        zero_status: ZeroStatus::None,
        names: NameRule::Dns1123Subdomain,
    },
    Builtin {
        resource: r(
            AUTHZ,
            "v1",
            "LocalSubjectAccessReview",
            "localsubjectaccessreviews",
            true,
            &[],
            "",
        ),
        typed: Typed::None,
        merge: M::Object,
        protobuf: message::<pb::authorization::v1::LocalSubjectAccessReview>(),
        printer: Printer::Default,
        defaults: Defaults::None,
        zero_status: ZeroStatus::None,
        names: NameRule::Dns1123Subdomain,
    },
];

const AUTHN: &str = "authentication.k8s.io";

/// `authentication.k8s.io/v1`: token and self reviews.
pub(super) const AUTHENTICATION: &[Builtin] = &[
    Builtin {
        resource: r(
            AUTHN,
            "v1",
            "SelfSubjectReview",
            "selfsubjectreviews",
            false,
            &[],
            "",
        ),
        typed: Typed::None,
        merge: M::Object,
        protobuf: message::<pb::authentication::v1::SelfSubjectReview>(),
        printer: Printer::Default,
        defaults: Defaults::None,
        zero_status: ZeroStatus::None,
        names: NameRule::Dns1123Subdomain,
    },
    Builtin {
        resource: r(AUTHN, "v1", "TokenReview", "tokenreviews", false, &[], ""),
        typed: Typed::None,
        merge: M::Object,
        protobuf: message::<pb::authentication::v1::TokenReview>(),
        printer: Printer::Default,
        defaults: Defaults::None,
        zero_status: ZeroStatus::None,
        names: NameRule::Dns1123Subdomain,
    },
];

/// `certificates.k8s.io/v1`: approval through the `approval` subresource (`crate::kinds::access::certificates`); no signer
/// runs here.
pub(super) const CERTIFICATES: &[Builtin] = &[Builtin {
    resource: r(
        "certificates.k8s.io",
        "v1",
        "CertificateSigningRequest",
        "certificatesigningrequests",
        false,
        &["csr"],
        "s",
    ),
    typed: model::<k8s_openapi::api::certificates::v1::CertificateSigningRequest>(),
    merge: M::ConditionsOwner,
    protobuf: message::<pb::certificates::v1::CertificateSigningRequest>(),
    printer: Printer::Columns(Columns::Csr),
    defaults: Defaults::None,
    zero_status: ZeroStatus::Of(status::empty, &[]),
    names: NameRule::Dns1123Subdomain,
}];
