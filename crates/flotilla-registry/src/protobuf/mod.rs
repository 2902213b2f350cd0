//! The k8s.io/api protobuf messages of built-in kinds, decoded with the k8s-pb crate into the JSON a JSON client
//! would have sent (Go's JSON conventions: empty non-pointer fields left out, pointer fields keeping their zero
//! values, times RFC 3339, quantities strings, `bytes` base64, int-or-string a number or a string).
//!
//! Which kind is decoded through which message is said by its entry in `crate::kinds` ([`message`]); the server
//! reads the envelope a request body comes in and hands its `raw` bytes to the kind's [`Decoder`].

mod apps_v1;
mod certificates;
mod core_v1;
mod core_v1_cluster;
mod groups;
mod json;
mod other;
mod reviews;

use json::ToJson;
use prost::Message;
use serde_json::Value;

/// Decodes a message's bytes into JSON.
pub type Decoder = fn(&[u8]) -> Result<Value, prost::DecodeError>;

/// Whether protobuf request bodies are accepted.
#[derive(Debug, Clone, Copy)]
pub enum Protobuf {
    /// Decoded through this k8s-pb message ([`message`]).
    Message(MessageType),
    /// Refused with 415 UnsupportedMediaType.
    None,
}

fn as_json<M: Message + Default + ToJson>(raw: &[u8]) -> Result<Value, prost::DecodeError> {
    Ok(M::decode(raw)?.to_json())
}

/// A built-in kind's protobuf message: its decoder, and what the k8s-pb type says of itself, so the table's
/// entry can be checked against it.
#[derive(Debug, Clone, Copy)]
#[cfg_attr(
    not(test),
    expect(
        dead_code,
        reason = "what the type says of itself is checked by `crate::kinds`' tests"
    )
)]
pub struct MessageType {
    /// Decodes the envelope's `raw` bytes into JSON.
    pub decode: Decoder,
    /// The message type's `apiVersion`.
    pub(crate) api_version: &'static str,
    /// The message type's kind.
    pub(crate) kind: &'static str,
}

/// The protobuf part of a built-in: bodies are decoded as the k8s-pb message `M`.
pub(crate) const fn message<M>() -> Protobuf
where
    M: Message + Default + ToJson + k8s_pb::Resource,
{
    Protobuf::Message(MessageType {
        decode: as_json::<M>,
        api_version: M::API_VERSION,
        kind: M::KIND,
    })
}

/// The decoder of the protobuf bodies that are not resources of their own: DeleteOptions (client-go stamps them
/// with the group version of the client that sends them) and the TokenRequest of the `serviceaccounts/token`
/// subresource. A resource's decoder is named by its entry in `crate::kinds`.
pub fn options_decoder(api_version: &str, kind: &str) -> Option<Decoder> {
    if kind == "DeleteOptions" {
        return Some(as_json::<k8s_pb::apimachinery::pkg::apis::meta::v1::DeleteOptions>);
    }
    if (api_version, kind) == ("authentication.k8s.io/v1", "TokenRequest") {
        return Some(as_json::<k8s_pb::api::authentication::v1::TokenRequest>);
    }
    None
}
