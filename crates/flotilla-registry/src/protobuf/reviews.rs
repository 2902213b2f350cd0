//! JSON names of the authorization.k8s.io and authentication.k8s.io review messages kubectl sends as protobuf
//! (`auth can-i` posts a SelfSubjectAccessReview or SelfSubjectRulesReview, `auth whoami` a SelfSubjectReview),
//! plus the other reviews of those groups.

use serde_json::Value;

use super::json::{ToJson, message};
use k8s_pb::api::authentication::v1 as authentication;
use k8s_pb::api::authorization::v1 as authorization;
use k8s_pb::apimachinery::pkg::apis::meta::v1 as meta;

/// `ExtraValue` is a Go string slice: a JSON array, not an object.
impl ToJson for authorization::ExtraValue {
    fn to_json(&self) -> Value {
        Value::Array(self.items.iter().cloned().map(Value::String).collect())
    }
}

/// `ExtraValue` is a Go string slice: a JSON array, not an object.
impl ToJson for authentication::ExtraValue {
    fn to_json(&self) -> Value {
        Value::Array(self.items.iter().cloned().map(Value::String).collect())
    }
}

message!(meta::FieldSelectorRequirement {
    key => "key", operator => "operator", values => "values",
});
message!(authorization::FieldSelectorAttributes {
    raw_selector => "rawSelector", requirements => "requirements",
});
message!(authorization::LabelSelectorAttributes {
    raw_selector => "rawSelector", requirements => "requirements",
});
message!(authorization::ResourceAttributes {
    namespace => "namespace", verb => "verb", group => "group", version => "version", resource => "resource",
    subresource => "subresource", name => "name", field_selector => "fieldSelector",
    label_selector => "labelSelector",
});
message!(authorization::NonResourceAttributes {
    path => "path", verb => "verb",
});
message!(authorization::SelfSubjectAccessReview {
    metadata => "metadata", spec => "spec", status => "status",
});
message!(authorization::SelfSubjectAccessReviewSpec {
    resource_attributes => "resourceAttributes", non_resource_attributes => "nonResourceAttributes",
});
message!(authorization::SubjectAccessReview {
    metadata => "metadata", spec => "spec", status => "status",
});
message!(authorization::LocalSubjectAccessReview {
    metadata => "metadata", spec => "spec", status => "status",
});
message!(authorization::SubjectAccessReviewSpec {
    resource_attributes => "resourceAttributes", non_resource_attributes => "nonResourceAttributes",
    user => "user", groups => "groups", extra => "extra", uid => "uid",
});
message!(authorization::SubjectAccessReviewStatus {
    allowed => "allowed" keep, denied => "denied", reason => "reason", evaluation_error => "evaluationError",
});
message!(authorization::SelfSubjectRulesReview {
    metadata => "metadata", spec => "spec", status => "status",
});
message!(authorization::SelfSubjectRulesReviewSpec {
    namespace => "namespace",
});
message!(authorization::SubjectRulesReviewStatus {
    resource_rules => "resourceRules", non_resource_rules => "nonResourceRules", incomplete => "incomplete" keep,
    evaluation_error => "evaluationError",
});
message!(authorization::ResourceRule {
    verbs => "verbs", api_groups => "apiGroups", resources => "resources", resource_names => "resourceNames",
});
message!(authorization::NonResourceRule {
    verbs => "verbs", non_resource_ur_ls => "nonResourceURLs",
});
message!(authentication::SelfSubjectReview {
    metadata => "metadata", status => "status",
});
message!(authentication::SelfSubjectReviewStatus {
    user_info => "userInfo",
});
message!(authentication::UserInfo {
    username => "username", uid => "uid", groups => "groups", extra => "extra",
});
message!(authentication::TokenReview {
    metadata => "metadata", spec => "spec", status => "status",
});
message!(authentication::TokenReviewSpec {
    token => "token", audiences => "audiences",
});
message!(authentication::TokenReviewStatus {
    authenticated => "authenticated", user => "user", audiences => "audiences", error => "error",
});
