//! Protobuf request bodies (`application/vnd.kubernetes.protobuf`).
//!
//! client-go 0.32 and later (kubectl `create namespace|secret|configmap|deployment`, karmadactl, Go
//! controllers) send built-in kinds as protobuf and never fall back to JSON, so the server decodes them into
//! the JSON a JSON client would have sent and runs its normal pipeline on that. Responses stay JSON (those
//! clients list `application/json` second in Accept).
//!
//! Wire format: the 4 bytes `k8s\0`, then a `runtime.Unknown` whose `typeMeta` names the kind and whose `raw`
//! holds the kind's k8s.io/api message, which the registry's messages decode
//! (`flotilla_registry::protobuf`).

use flotilla_registry::kinds;
use flotilla_registry::protobuf::{self, Decoder};
use k8s_pb::apimachinery::pkg::runtime::Unknown;
use kube::core::Status;
use prost::Message;
use serde_json::{Map, Value};

/// The protobuf content type.
pub const CONTENT_TYPE: &str = "application/vnd.kubernetes.protobuf";

/// The magic prefix of every Kubernetes protobuf body.
pub const MAGIC: [u8; 4] = [0x6b, 0x38, 0x73, 0x00];

/// A protobuf body that cannot be turned into JSON.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProtobufError {
    /// Not a Kubernetes protobuf message, or undecodable: `400 BadRequest`.
    #[error("{0}")]
    BadRequest(String),
    /// A kind we cannot decode from protobuf: `415 UnsupportedMediaType`, naming the kind and the way out.
    #[error(
        "protobuf request bodies are not supported for {kind} ({api_version}); send application/json instead"
    )]
    Unsupported {
        /// The body's `apiVersion`.
        api_version: String,
        /// The body's `kind`.
        kind: String,
    },
}

impl ProtobufError {
    /// The Status the server answers with.
    pub fn to_status(&self) -> Status {
        match self {
            Self::BadRequest(m) => Status::failure(m, "BadRequest").with_code(400),
            Self::Unsupported { .. } => {
                Status::failure(&self.to_string(), "UnsupportedMediaType").with_code(415)
            }
        }
    }
}

/// The decoder for `apiVersion`/`kind`, if the kind is supported: a built-in whose entry names a message
/// (`flotilla_registry::kinds`), or one of the bodies that are not resources of their own.
fn decoder(api_version: &str, kind: &str) -> Option<Decoder> {
    if let Some(decoder) = protobuf::options_decoder(api_version, kind) {
        return Some(decoder);
    }
    match kinds::find_api_version(api_version, kind)?.protobuf {
        protobuf::Protobuf::Message(m) => Some(m.decode),
        protobuf::Protobuf::None => None,
    }
}

/// Whether protobuf bodies of `apiVersion`/`kind` can be decoded.
pub fn supports(api_version: &str, kind: &str) -> bool {
    decoder(api_version, kind).is_some()
}

/// Whether a request `Content-Type` is protobuf (parameters ignored).
pub fn is_protobuf(content_type: &str) -> bool {
    content_type
        .split(';')
        .next()
        .is_some_and(|t| t.trim().eq_ignore_ascii_case(CONTENT_TYPE))
}

/// Decodes a protobuf request body into the JSON object a JSON client would have sent, `apiVersion` and `kind`
/// included (taken from the envelope).
///
/// Guarantees: Go's JSON conventions: empty non-pointer fields are left out, pointer fields keep their zero
/// values, times are RFC 3339, quantities strings, `bytes` base64, int-or-string as number or string.
///
/// Errors: [`ProtobufError::BadRequest`] for a missing `k8s\0` prefix, an undecodable envelope or message, or a
/// compressed envelope; [`ProtobufError::Unsupported`] for kinds outside the supported list (the built-ins whose
/// entry in `flotilla_registry::kinds` names a message, TokenRequest and DeleteOptions).
pub fn decode(body: &[u8]) -> Result<Value, ProtobufError> {
    let Some(rest) = body.strip_prefix(&MAGIC) else {
        return Err(ProtobufError::BadRequest(format!(
            "provided data does not appear to be a protobuf message, expected prefix {:?}",
            MAGIC
        )));
    };
    let unknown = Unknown::decode(rest).map_err(|e| {
        ProtobufError::BadRequest(format!("unable to decode protobuf envelope: {e}"))
    })?;
    if unknown
        .content_encoding
        .as_deref()
        .is_some_and(|e| !e.is_empty())
    {
        return Err(ProtobufError::BadRequest(
            "compressed protobuf bodies are not supported".to_string(),
        ));
    }
    let type_meta = unknown.type_meta.unwrap_or_default();
    let api_version = type_meta.api_version.unwrap_or_default();
    let kind = type_meta.kind.unwrap_or_default();
    let Some(decode_raw) = decoder(&api_version, &kind) else {
        return Err(ProtobufError::Unsupported { api_version, kind });
    };
    let raw = unknown.raw.unwrap_or_default();
    let body = decode_raw(&raw)
        .map_err(|e| ProtobufError::BadRequest(format!("unable to decode {kind}: {e}")))?;
    let mut out = Map::new();
    out.insert("apiVersion".to_string(), Value::String(api_version));
    out.insert("kind".to_string(), Value::String(kind));
    if let Value::Object(fields) = body {
        out.extend(fields);
    }
    Ok(Value::Object(out))
}

#[cfg(test)]
mod tests;
