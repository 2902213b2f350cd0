//! Reading and writing resource templates (any kind) on the control plane: from the detector's informer cache
//! when it is current, else live.

use flotilla_client::api_error::is_not_found;
use kube::api::{DynamicObject, PostParams};
use serde_json::Value;

use crate::error::{Error, Result};
use crate::objects::{self, dynamic_to_value, value_to_dynamic};
use crate::resources::Resources;
use crate::runtime::Informers;

/// Identifies a template.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct TemplateKey {
    /// `apiVersion`.
    pub api_version: String,
    /// `kind`.
    pub kind: String,
    /// Namespace; empty for cluster-scoped templates.
    pub namespace: String,
    /// Name.
    pub name: String,
}

impl TemplateKey {
    /// The key of a template in JSON form.
    pub(crate) fn of(object: &Value) -> Self {
        TemplateKey {
            api_version: objects::api_version(object).to_owned(),
            kind: objects::kind(object).to_owned(),
            namespace: objects::namespace(object).to_owned(),
            name: objects::name(object).to_owned(),
        }
    }
}

impl std::fmt::Display for TemplateKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.namespace.is_empty() {
            write!(f, "{} {} {}", self.api_version, self.kind, self.name)
        } else {
            write!(
                f,
                "{} {} {}/{}",
                self.api_version, self.kind, self.namespace, self.name
            )
        }
    }
}

/// A dynamic object as JSON with `apiVersion` and `kind` filled in (list and watch items may lack them).
pub(crate) fn with_type(object: &DynamicObject, api_version: &str, kind: &str) -> Value {
    let mut value = dynamic_to_value(object);
    if let Some(map) = value.as_object_mut() {
        map.entry("apiVersion")
            .or_insert_with(|| Value::String(api_version.to_owned()));
        map.entry("kind")
            .or_insert_with(|| Value::String(kind.to_owned()));
    }
    value
}

/// Where templates are read and written: the control plane's informers (the detector's caches of every
/// propagated kind) and its served resources. Cheap to clone.
#[derive(Clone)]
pub(crate) struct Templates {
    /// The control plane's informers.
    pub informers: Informers,
    /// The control plane's served resources.
    pub resources: Resources,
}

impl Templates {
    /// The template, from the informer cache when its informer is running and synced, else from the API server;
    /// `None` when it does not exist (or its kind is not served).
    ///
    /// # Errors
    /// When the live read fails for another reason than NotFound.
    pub(crate) async fn get(&self, key: &TemplateKey) -> Result<Option<Value>> {
        let Some(served) = self
            .resources
            .get_by_api_version(&key.api_version, &key.kind)
        else {
            return self.get_live(key).await;
        };
        if let Some(informer) = self.informers.dynamic_if_started(&served.resource)
            && informer.is_synced()
        {
            return Ok(informer
                .get(
                    if served.namespaced {
                        &key.namespace
                    } else {
                        ""
                    },
                    &key.name,
                )
                .map(|obj| with_type(&obj, &key.api_version, &key.kind)));
        }
        self.get_live(key).await
    }

    /// The template as the API server has it now.
    ///
    /// # Errors
    /// When the read fails for another reason than NotFound or the kind not being served.
    pub(crate) async fn get_live(&self, key: &TemplateKey) -> Result<Option<Value>> {
        let served = match self.resources.resolve(&key.api_version, &key.kind).await {
            Ok(served) => served,
            Err(Error::Waiting { .. }) => return Ok(None),
            Err(err) => return Err(err),
        };
        let api = self.resources.api(&served, &key.namespace);
        match api.get(&key.name).await {
            Ok(obj) => Ok(Some(with_type(&obj, &key.api_version, &key.kind))),
            Err(err) if is_not_found(&err) => Ok(None),
            Err(source) => Err(Error::kube("get", key.to_string(), source)),
        }
    }

    /// Replaces a template (optimistic concurrency on its `resourceVersion`) and returns what the server stored.
    ///
    /// # Errors
    /// `Kube` (a 409 Conflict when the template changed meanwhile).
    pub(crate) async fn update(&self, template: &Value) -> Result<Value> {
        let key = TemplateKey::of(template);
        let served = self.resources.resolve(&key.api_version, &key.kind).await?;
        let api = self.resources.api(&served, &key.namespace);
        let object = value_to_dynamic(template.clone())?;
        let stored = api
            .replace(&key.name, &PostParams::default(), &object)
            .await
            .map_err(|source| Error::kube("update", key.to_string(), source))?;
        Ok(with_type(&stored, &key.api_version, &key.kind))
    }
}
