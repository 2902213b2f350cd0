//! What a handler receives: the decoded request, with helpers to decode its objects into typed values.

use std::ops::Deref;

use flotilla_api::config::v1alpha1::ResourceInterpreterRequest;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// One interpreter call, as the webhook received it.
#[derive(Clone, Debug, PartialEq)]
pub struct Request {
    /// The wire request.
    pub request: ResourceInterpreterRequest,
}

/// Why an object of a request could not be decoded.
#[derive(Debug, thiserror::Error)]
pub enum DecodeError {
    /// The request carries no such object.
    #[error("there is no content to decode")]
    NoContent,
    /// The object does not have the expected shape.
    #[error("failed to decode the object")]
    Invalid(#[source] serde_json::Error),
}

impl Request {
    /// `request.object`, or an error when it is absent.
    pub fn object(&self) -> Result<&Value, DecodeError> {
        present(self.request.object.as_ref())
    }

    /// `request.observedObject`, or an error when it is absent.
    pub fn observed_object(&self) -> Result<&Value, DecodeError> {
        present(self.request.observed_object.as_ref())
    }

    /// Decodes `request.object` into `T`.
    pub fn decode<T: DeserializeOwned>(&self) -> Result<T, DecodeError> {
        decode_raw(self.object()?)
    }

    /// Decodes `request.observedObject` into `T`.
    pub fn decode_observed<T: DeserializeOwned>(&self) -> Result<T, DecodeError> {
        decode_raw(self.observed_object()?)
    }
}

impl Deref for Request {
    type Target = ResourceInterpreterRequest;

    fn deref(&self) -> &ResourceInterpreterRequest {
        &self.request
    }
}

/// Decodes any raw object of a request (an aggregated status item's `status`, say) into `T`.
pub fn decode_raw<T: DeserializeOwned>(raw: &Value) -> Result<T, DecodeError> {
    T::deserialize(raw).map_err(DecodeError::Invalid)
}

fn present(value: Option<&Value>) -> Result<&Value, DecodeError> {
    value
        .filter(|value| !value.is_null())
        .ok_or(DecodeError::NoContent)
}
