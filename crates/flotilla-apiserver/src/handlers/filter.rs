//! List and watch filtering: namespace, label selector and field selector, parsed once per request with
//! the protocol modules' grammars (`flotilla_registry::selector`, `flotilla_registry::fields`).

use serde_json::Value;

use super::Req;
use flotilla_registry::fields::FieldSelector;
use flotilla_registry::resource::ResourceInfo;
use flotilla_registry::selector::Selector;
use flotilla_registry::status::{ApiError, ApiResult};

/// A parsed filter.
pub(crate) struct Filter {
    namespace: Option<String>,
    labels: Option<Selector>,
    fields: Option<FieldSelector>,
}

impl Filter {
    /// Parses the namespace from the path and the selectors from the query (400 on bad selectors).
    pub(crate) fn parse(info: &ResourceInfo, req: &Req) -> ApiResult<Self> {
        let labels = match req
            .query
            .get("labelSelector")
            .filter(|s| !s.trim().is_empty())
        {
            None => None,
            Some(s) => Some(Selector::parse(s).map_err(|e| ApiError::bad_request(e.message))?),
        };
        let fields = match req
            .query
            .get("fieldSelector")
            .filter(|s| !s.trim().is_empty())
        {
            None => None,
            Some(s) => Some(
                FieldSelector::parse_for_kind(s, &info.kind_info())
                    .map_err(|e| ApiError::bad_request(e.message))?,
            ),
        };
        Ok(Self {
            namespace: req.rp.namespace.clone(),
            labels,
            fields,
        })
    }

    /// Whether a label or field selector is set (no `remainingItemCount` then).
    pub(crate) fn has_selector(&self) -> bool {
        self.labels.is_some() || self.fields.is_some()
    }

    /// The namespace the request is scoped to.
    pub(crate) fn namespace(&self) -> Option<&str> {
        self.namespace.as_deref()
    }

    /// Whether an object passes the filter.
    pub(crate) fn matches(&self, obj: &Value) -> bool {
        if let Some(ns) = &self.namespace
            && obj
                .pointer("/metadata/namespace")
                .and_then(Value::as_str)
                .unwrap_or("")
                != ns
        {
            return false;
        }
        self.labels.as_ref().is_none_or(|l| l.matches_object(obj))
            && self.fields.as_ref().is_none_or(|f| f.matches(obj))
    }
}
