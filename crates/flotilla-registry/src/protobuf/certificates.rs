//! JSON names of the certificates.k8s.io/v1 messages client-go 0.32 and later send as protobuf (`kubectl
//! certificate approve|deny` updates a CertificateSigningRequest's approval with one).

use serde_json::Value;

use super::json::{ToJson, message};
use k8s_pb::api::certificates::v1 as certificates;

/// `ExtraValue` is a Go string slice: a JSON array, not an object.
impl ToJson for certificates::ExtraValue {
    fn to_json(&self) -> Value {
        Value::Array(self.items.iter().cloned().map(Value::String).collect())
    }
}

message!(certificates::CertificateSigningRequest {
    metadata => "metadata", spec => "spec", status => "status",
});
message!(certificates::CertificateSigningRequestSpec {
    request => "request", signer_name => "signerName", expiration_seconds => "expirationSeconds",
    usages => "usages", username => "username", uid => "uid", groups => "groups", extra => "extra",
});
message!(certificates::CertificateSigningRequestStatus {
    conditions => "conditions", certificate => "certificate",
});
message!(certificates::CertificateSigningRequestCondition {
    r#type => "type", status => "status", reason => "reason", message => "message",
    last_update_time => "lastUpdateTime", last_transition_time => "lastTransitionTime",
});
