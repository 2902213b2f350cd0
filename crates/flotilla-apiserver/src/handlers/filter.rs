//! List and watch filtering: namespace, label selector and field selector, parsed once per request.

use serde_json::Value;

use super::Req;
use crate::catalog::ResourceInfo;
use crate::status::{ApiError, ApiResult};

/// A parsed filter.
pub struct Filter {
    namespace: Option<String>,
    labels: Vec<(String, String)>,
    fields: Vec<(String, bool, String)>,
}

impl Filter {
    /// Parses the namespace from the path and the selectors from the query.
    pub fn parse(_info: &ResourceInfo, req: &Req) -> ApiResult<Self> {
        let mut labels = Vec::new();
        if let Some(sel) = req
            .query
            .get("labelSelector")
            .filter(|s| !s.trim().is_empty())
        {
            for term in sel.split(',') {
                let (k, v) = term
                    .split_once("==")
                    .or_else(|| term.split_once('='))
                    .ok_or_else(|| {
                        ApiError::bad_request(format!("unable to parse requirement: {term:?}"))
                    })?;
                labels.push((k.trim().to_string(), v.trim().to_string()));
            }
        }
        let mut fields = Vec::new();
        if let Some(sel) = req
            .query
            .get("fieldSelector")
            .filter(|s| !s.trim().is_empty())
        {
            for term in sel.split(',') {
                let (k, neg, v) = if let Some((k, v)) = term.split_once("!=") {
                    (k, true, v)
                } else if let Some((k, v)) = term.split_once("==").or_else(|| term.split_once('='))
                {
                    (k, false, v)
                } else {
                    return Err(ApiError::bad_request(format!(
                        "invalid field selector: {term:?}"
                    )));
                };
                fields.push((k.trim().to_string(), neg, v.to_string()));
            }
        }
        Ok(Self {
            namespace: req.rp.namespace.clone(),
            labels,
            fields,
        })
    }

    /// Whether a label or field selector is set (no `remainingItemCount` then).
    pub fn has_selector(&self) -> bool {
        !self.labels.is_empty() || !self.fields.is_empty()
    }

    /// The namespace the request is scoped to.
    pub fn namespace(&self) -> Option<&str> {
        self.namespace.as_deref()
    }

    /// Whether an object passes the filter.
    pub fn matches(&self, obj: &Value) -> bool {
        let meta = obj.get("metadata");
        let s = |k: &str| {
            meta.and_then(|m| m.get(k))
                .and_then(Value::as_str)
                .unwrap_or("")
        };
        if let Some(ns) = &self.namespace
            && s("namespace") != ns
        {
            return false;
        }
        let labels = meta.and_then(|m| m.get("labels"));
        for (k, v) in &self.labels {
            if labels.and_then(|l| l.get(k)).and_then(Value::as_str) != Some(v.as_str()) {
                return false;
            }
        }
        for (k, neg, v) in &self.fields {
            let actual = match k.as_str() {
                "metadata.name" => s("name"),
                "metadata.namespace" => s("namespace"),
                _ => "",
            };
            if (actual == v) == *neg {
                return false;
            }
        }
        true
    }
}
