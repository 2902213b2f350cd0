//! What the caller's `Accept` asks for, negotiated as k8s.io/apiserver does: the first media range the server
//! can answer wins.
//!
//! A `meta.k8s.io` Table (`application/json;as=Table;g=meta.k8s.io;v=v1` or `v1beta1`) is built here from the
//! Clusters (Karmada's own printer, [`super::table`]), so the control plane is asked for plain JSON. Anything
//! else JSON (`application/json`, `*/*`, `PartialObjectMetadata`) is the control plane's to answer: its JSON
//! ranges are passed on. Protobuf, YAML and CBOR are not answered (JSON only).

use flotilla_apimachinery::table::IncludeObject;
use http::HeaderValue;

use crate::error::RequestError;
use flotilla_apimachinery::request_info::form_pairs;

/// What answers the caller.
#[derive(Debug, PartialEq)]
pub(crate) enum Wanted {
    /// The control plane's JSON, with `Accept` set to these ranges (none: the caller sent no `Accept`).
    Json(Option<HeaderValue>),
    /// A Table built here from the control plane's JSON.
    Table(TableRequest),
}

/// A Table as asked: its version and what its rows carry.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct TableRequest {
    /// `meta.k8s.io/v1` or `meta.k8s.io/v1beta1`.
    pub(crate) api_version: &'static str,
    /// `includeObject`.
    pub(crate) include_object: IncludeObject,
}

/// The answer `accept` asks for; `query` gives a Table's `includeObject`.
///
/// # Errors
/// [`RequestError::NotAcceptable`] when no range is answerable; [`RequestError::TableOptions`] for a Table with
/// an `includeObject` kube-apiserver refuses.
pub(crate) fn negotiate(accept: Option<&HeaderValue>, query: &str) -> Result<Wanted, RequestError> {
    let Some(accept) = accept
        .and_then(|value| value.to_str().ok())
        .map(str::trim)
        .filter(|accept| !accept.is_empty())
    else {
        return Ok(Wanted::Json(None));
    };
    let ranges: Vec<&str> = accept.split(',').map(str::trim).collect();
    for (index, range) in ranges.iter().enumerate() {
        let mut parts = range.split(';').map(str::trim);
        let media = parts.next().unwrap_or_default();
        if !["application/json", "application/*", "*/*"]
            .iter()
            .any(|json| media.eq_ignore_ascii_case(json))
        {
            continue;
        }
        let params: Vec<(&str, &str)> = parts
            .filter_map(|param| param.split_once('='))
            .map(|(key, value)| (key.trim(), value.trim().trim_matches('"')))
            .collect();
        let param = |name: &str| {
            params
                .iter()
                .find(|(key, _)| key.eq_ignore_ascii_case(name))
                .map(|(_, value)| *value)
        };
        let meta_version = (param("g") == Some("meta.k8s.io"))
            .then(|| param("v"))
            .flatten()
            .and_then(|version| match version {
                "v1" => Some("meta.k8s.io/v1"),
                "v1beta1" => Some("meta.k8s.io/v1beta1"),
                _ => None,
            });
        match (param("as"), meta_version) {
            (Some("Table"), Some(api_version)) => {
                return Ok(Wanted::Table(TableRequest {
                    api_version,
                    include_object: include_object(query)?,
                }));
            }
            (None, _) | (Some("PartialObjectMetadata" | "PartialObjectMetadataList"), Some(_)) => {
                return json_ranges(&ranges[index..]).map(Some).map(Wanted::Json);
            }
            // A conversion this server does not make: kube skips the range.
            _ => {}
        }
    }
    Err(RequestError::NotAcceptable)
}

/// The JSON ranges among `ranges`, joined for the control plane.
fn json_ranges(ranges: &[&str]) -> Result<HeaderValue, RequestError> {
    let kept: Vec<&str> = ranges
        .iter()
        .copied()
        .filter(|range| {
            let media = range.split(';').next().unwrap_or_default().trim();
            ["application/json", "application/*", "*/*"]
                .iter()
                .any(|json| media.eq_ignore_ascii_case(json))
        })
        .collect();
    HeaderValue::from_str(&kept.join(",")).map_err(|_| RequestError::NotAcceptable)
}

/// The query's `includeObject` (its first value, as kube decodes parameters).
fn include_object(query: &str) -> Result<IncludeObject, RequestError> {
    let value = form_pairs(query)
        .find(|(key, _)| key == "includeObject")
        .map(|(_, value)| value)
        .unwrap_or_default();
    IncludeObject::parse(&value).map_err(|message| RequestError::TableOptions { message })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wanted(accept: &'static str, query: &str) -> Result<Wanted, RequestError> {
        negotiate(Some(&HeaderValue::from_static(accept)), query)
    }

    fn passed(accept: &'static str) -> Option<String> {
        match wanted(accept, "") {
            Ok(Wanted::Json(Some(value))) => value.to_str().ok().map(str::to_owned),
            _ => None,
        }
    }

    #[test]
    fn kubectls_table_request_is_answered_here() {
        let kubectl = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json";
        assert_eq!(
            wanted(kubectl, "").ok(),
            Some(Wanted::Table(TableRequest {
                api_version: "meta.k8s.io/v1",
                include_object: IncludeObject::Metadata,
            }))
        );
        assert_eq!(
            wanted(
                "application/json;as=Table;v=v1beta1;g=meta.k8s.io",
                "watch=1&includeObject=Object"
            )
            .ok(),
            Some(Wanted::Table(TableRequest {
                api_version: "meta.k8s.io/v1beta1",
                include_object: IncludeObject::Object,
            }))
        );
        assert!(matches!(
            wanted(
                "application/json;as=Table;v=v1;g=meta.k8s.io",
                "includeObject=None"
            ),
            Ok(Wanted::Table(TableRequest {
                include_object: IncludeObject::None,
                ..
            }))
        ));
    }

    #[test]
    fn a_bad_include_object_is_kubes_bad_request() {
        let Err(RequestError::TableOptions { message }) = wanted(
            "application/json;as=Table;v=v1;g=meta.k8s.io",
            "includeObject=All",
        ) else {
            panic!("refused");
        };
        assert!(
            message.starts_with("Unable to convert to Table as requested: includeObject"),
            "{message}"
        );
    }

    #[test]
    fn tables_this_server_cannot_make_are_skipped() {
        assert_eq!(
            passed("application/json;as=Table;v=v2;g=meta.k8s.io,application/json").as_deref(),
            Some("application/json")
        );
        assert_eq!(
            passed("application/json;as=Table;g=meta.k8s.io,*/*").as_deref(),
            Some("*/*"),
            "a Table without a version is not one kube makes"
        );
        assert!(matches!(
            wanted("application/json;as=Table;v=v2;g=meta.k8s.io", ""),
            Err(RequestError::NotAcceptable)
        ));
    }

    #[test]
    fn other_json_goes_to_the_control_plane() {
        assert_eq!(
            passed("application/vnd.kubernetes.protobuf,application/json").as_deref(),
            Some("application/json")
        );
        assert_eq!(
            passed(
                "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io,application/json"
            )
            .as_deref(),
            Some(
                "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io,application/json"
            )
        );
        assert_eq!(passed("*/*").as_deref(), Some("*/*"));
        assert!(matches!(negotiate(None, ""), Ok(Wanted::Json(None))));
        assert!(matches!(
            wanted("application/vnd.kubernetes.protobuf", ""),
            Err(RequestError::NotAcceptable)
        ));
        assert!(matches!(
            wanted("application/yaml", ""),
            Err(RequestError::NotAcceptable)
        ));
    }
}
