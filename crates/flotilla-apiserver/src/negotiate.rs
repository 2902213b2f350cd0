//! Response content negotiation: the first acceptable media range wins; ranges with an `as=`
//! we cannot produce, protobuf, YAML and CBOR are skipped; nothing acceptable is a 406.

use flotilla_registry::status::ApiError;

/// What a response is rendered as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Output {
    /// Plain JSON.
    Json,
    /// `meta.k8s.io` Table at the given version (`v1` or `v1beta1`).
    Table(String),
    /// PartialObjectMetadata(List) at the given version.
    Metadata(String),
    /// Aggregated discovery at the given version (`v2` or `v2beta1`).
    Discovery(String),
}

/// Which parameterised outputs the endpoint can produce.
#[derive(Debug, Clone, Copy, Default)]
pub struct Allowed {
    /// Table transforms (get, list, watch).
    pub table: bool,
    /// Metadata transforms.
    pub metadata: bool,
    /// Aggregated discovery (`/api`, `/apis`).
    pub discovery: bool,
}

fn param<'a>(params: &'a [(String, String)], key: &str) -> Option<&'a str> {
    params
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(key))
        .map(|(_, v)| v.as_str())
}

/// Picks the output for an `Accept` header.
pub fn negotiate(accept: Option<&str>, allowed: Allowed) -> Result<Output, ApiError> {
    let Some(accept) = accept.map(str::trim).filter(|a| !a.is_empty()) else {
        return Ok(Output::Json);
    };
    for range in accept.split(',') {
        let mut parts = range.split(';').map(str::trim);
        let media = parts.next().unwrap_or("").to_ascii_lowercase();
        let params: Vec<(String, String)> = parts
            .filter_map(|p| p.split_once('='))
            .map(|(k, v)| (k.trim().to_string(), v.trim().trim_matches('"').to_string()))
            .collect();
        if !matches!(
            media.as_str(),
            "application/json" | "*/*" | "application/*" | "application/json-seq"
        ) {
            continue;
        }
        match param(&params, "as") {
            None => return Ok(Output::Json),
            Some("Table") if allowed.table && param(&params, "g") == Some("meta.k8s.io") => {
                let v = param(&params, "v").unwrap_or("v1");
                if v == "v1" || v == "v1beta1" {
                    return Ok(Output::Table(v.to_string()));
                }
            }
            Some("PartialObjectMetadata" | "PartialObjectMetadataList")
                if allowed.metadata && param(&params, "g") == Some("meta.k8s.io") =>
            {
                let v = param(&params, "v").unwrap_or("v1");
                if v == "v1" || v == "v1beta1" {
                    return Ok(Output::Metadata(v.to_string()));
                }
            }
            Some("APIGroupDiscoveryList")
                if allowed.discovery && param(&params, "g") == Some("apidiscovery.k8s.io") =>
            {
                let v = param(&params, "v").unwrap_or("");
                if v == "v2" || v == "v2beta1" {
                    return Ok(Output::Discovery(v.to_string()));
                }
            }
            Some(_) => {}
        }
    }
    Err(ApiError::not_acceptable())
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: Allowed = Allowed {
        table: true,
        metadata: true,
        discovery: true,
    };

    #[test]
    fn defaults_and_skips() {
        assert_eq!(negotiate(None, ALL).ok(), Some(Output::Json));
        assert_eq!(
            negotiate(
                Some("application/vnd.kubernetes.protobuf,application/json"),
                ALL
            )
            .ok(),
            Some(Output::Json)
        );
        assert_eq!(
            negotiate(
                Some("application/json;as=Table;v=v1;g=meta.k8s.io,application/json"),
                ALL
            )
            .ok(),
            Some(Output::Table("v1".into()))
        );
        assert_eq!(
            negotiate(
                Some("application/json;as=Table;v=v1;g=meta.k8s.io,application/json"),
                Allowed::default()
            )
            .ok(),
            Some(Output::Json)
        );
        assert_eq!(
            negotiate(
                Some("application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json"),
                ALL
            )
            .ok(),
            Some(Output::Discovery("v2".into()))
        );
        assert!(negotiate(Some("application/yaml"), ALL).is_err());
        assert_eq!(negotiate(Some("*/*"), ALL).ok(), Some(Output::Json));
    }
}
