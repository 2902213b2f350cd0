//! The object watcher (Karmada's `objectwatcher`): creates, updates and deletes member objects, and remembers what
//! it last wrote (resourceVersion and manifest fingerprint per member object) so that its own writes are not
//! mistaken for drift and unchanged Works cause no writes.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use flotilla_api::config::v1alpha1::InterpreterOperation;
use flotilla_client::api_error::{is_already_exists, is_not_found};
use kube::api::{DeleteParams, PostParams, PropagationPolicy};
use serde_json::Value;

use super::build::{check_ownership, fingerprint, is_managed, needs_update, retain_cluster_fields};
use crate::discovery::ServedResource;
use crate::error::{Error, Result};
use crate::interpreter::{Interpreter, enabled, retain};
use crate::member::Member;
use crate::objects::{self, describe, value_to_dynamic};
use crate::templates::with_type;

/// Identifies one member object.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct RecordKey {
    /// The member cluster.
    pub cluster: String,
    /// `apiVersion`.
    pub api_version: String,
    /// `kind`.
    pub kind: String,
    /// Namespace (empty for cluster-scoped objects).
    pub namespace: String,
    /// Name.
    pub name: String,
}

impl RecordKey {
    /// The key of `object` in `cluster`.
    pub(crate) fn of(cluster: &str, object: &Value) -> Self {
        RecordKey {
            cluster: cluster.to_owned(),
            api_version: objects::api_version(object).to_owned(),
            kind: objects::kind(object).to_owned(),
            namespace: objects::namespace(object).to_owned(),
            name: objects::name(object).to_owned(),
        }
    }
}

#[derive(Clone, Debug)]
struct Record {
    resource_version: String,
    fingerprint: u64,
}

/// What a write did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// The object was created.
    Created,
    /// The object was updated.
    Updated,
    /// Nothing needed writing.
    Unchanged,
}

/// Creates, updates and deletes member objects.
pub(crate) struct ObjectWatcher {
    interpreter: Arc<dyn Interpreter>,
    records: Mutex<HashMap<RecordKey, Record>>,
}

impl ObjectWatcher {
    /// A watcher using `interpreter` for Retain.
    pub(crate) fn new(interpreter: Arc<dyn Interpreter>) -> Self {
        ObjectWatcher {
            interpreter,
            records: Mutex::default(),
        }
    }

    fn records(&self) -> std::sync::MutexGuard<'_, HashMap<RecordKey, Record>> {
        self.records.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The resourceVersion Flotilla last wrote or saw for a member object.
    pub(crate) fn recorded_version(&self, key: &RecordKey) -> Option<String> {
        self.records().get(key).map(|r| r.resource_version.clone())
    }

    fn record(&self, key: RecordKey, resource_version: &str, manifest: &Value) {
        self.records().insert(
            key,
            Record {
                resource_version: resource_version.to_owned(),
                fingerprint: fingerprint(manifest),
            },
        );
    }

    /// The member object for `manifest`: from the member informer when synced, else live.
    ///
    /// # Errors
    /// `Kube` when the live read fails for another reason than NotFound.
    pub(crate) async fn observe(
        &self,
        member: &Member,
        served: &ServedResource,
        manifest: &Value,
    ) -> Result<Option<Value>> {
        let (namespace, name) = (objects::namespace(manifest), objects::name(manifest));
        let api_version = objects::api_version(manifest);
        let kind = objects::kind(manifest);
        if let Some(informer) = member.informer_if_started(served)
            && informer.is_synced()
        {
            return Ok(informer
                .get(if served.namespaced { namespace } else { "" }, name)
                .map(|obj| with_type(&obj, api_version, kind)));
        }
        match member.api(served, namespace).get(name).await {
            Ok(obj) => Ok(Some(with_type(&obj, api_version, kind))),
            Err(err) if is_not_found(&err) => Ok(None),
            Err(source) => Err(Error::kube(
                "get",
                format!("{} in cluster {}", describe(manifest), member.cluster),
                source,
            )),
        }
    }

    /// Creates the member object, or updates it when it exists.
    ///
    /// # Errors
    /// `Conflict` for an unmanaged object the Work may not take over; interpreter and API errors.
    pub(crate) async fn apply(
        &self,
        member: &Member,
        served: &ServedResource,
        manifest: &Value,
    ) -> Result<Outcome> {
        match self.observe(member, served, manifest).await? {
            None => self.create(member, served, manifest).await,
            Some(observed) => self.update(member, served, manifest, &observed).await,
        }
    }

    async fn create(
        &self,
        member: &Member,
        served: &ServedResource,
        manifest: &Value,
    ) -> Result<Outcome> {
        let api = member.api(served, objects::namespace(manifest));
        let object = value_to_dynamic(manifest.clone())?;
        match api.create(&PostParams::default(), &object).await {
            Ok(created) => {
                let version = created
                    .metadata
                    .resource_version
                    .clone()
                    .unwrap_or_default();
                self.record(RecordKey::of(&member.cluster, manifest), &version, manifest);
                Ok(Outcome::Created)
            }
            Err(err) if is_already_exists(&err) => {
                // The cache was behind; read it live and update instead.
                let observed = api
                    .get(objects::name(manifest))
                    .await
                    .map_err(|source| Error::kube("get", self.what(member, manifest), source))?;
                let observed = with_type(
                    &observed,
                    objects::api_version(manifest),
                    objects::kind(manifest),
                );
                self.update(member, served, manifest, &observed).await
            }
            Err(source) => Err(Error::kube("create", self.what(member, manifest), source)),
        }
    }

    fn what(&self, member: &Member, manifest: &Value) -> String {
        format!("{} in cluster {}", describe(manifest), member.cluster)
    }

    /// Updates `observed` to `manifest`, keeping what the member owns: the ownership check, the generic
    /// retention, the interpreter's Retain, and no write when nothing differs.
    ///
    /// # Errors
    /// As [`ObjectWatcher::apply`].
    pub(crate) async fn update(
        &self,
        member: &Member,
        served: &ServedResource,
        manifest: &Value,
        observed: &Value,
    ) -> Result<Outcome> {
        check_ownership(manifest, observed, &member.cluster)?;
        let key = RecordKey::of(&member.cluster, manifest);
        let observed_version = objects::resource_version(observed).to_owned();
        let unchanged_manifest = self
            .records()
            .get(&key)
            .is_some_and(|r| r.fingerprint == fingerprint(manifest));
        let mut desired = manifest.clone();
        retain_cluster_fields(&mut desired, observed);
        let interpreter = self.interpreter.as_ref();
        if enabled(interpreter, &desired, InterpreterOperation::Retain) {
            desired = retain(interpreter, desired, observed.clone()).await?;
        }
        // Unchanged Work and no member-side change to what the Work says: nothing to write. A changed Work is
        // always written, so fields removed from the template are removed from the member too.
        if unchanged_manifest && !needs_update(&desired, observed) {
            self.record(key, &observed_version, manifest);
            return Ok(Outcome::Unchanged);
        }
        let object = value_to_dynamic(desired)?;
        let api = member.api(served, objects::namespace(manifest));
        let updated = api
            .replace(objects::name(manifest), &PostParams::default(), &object)
            .await
            .map_err(|source| Error::kube("update", self.what(member, manifest), source))?;
        let version = updated
            .metadata
            .resource_version
            .clone()
            .unwrap_or_default();
        self.record(key, &version, manifest);
        Ok(Outcome::Updated)
    }

    /// Deletes the member object of `manifest` if it exists and is managed by Flotilla (background
    /// propagation, so a Job's pods go too).
    ///
    /// # Errors
    /// `Kube` when the delete fails for another reason than NotFound.
    pub(crate) async fn delete(
        &self,
        member: &Member,
        served: &ServedResource,
        manifest: &Value,
    ) -> Result<()> {
        let key = RecordKey::of(&member.cluster, manifest);
        let Some(observed) = self.observe(member, served, manifest).await? else {
            self.records().remove(&key);
            return Ok(());
        };
        if !is_managed(&observed) {
            return Ok(());
        }
        let params = DeleteParams {
            propagation_policy: Some(PropagationPolicy::Background),
            ..DeleteParams::default()
        };
        match member
            .api(served, objects::namespace(manifest))
            .delete(objects::name(manifest), &params)
            .await
        {
            Ok(_) => {}
            Err(err) if is_not_found(&err) => {}
            Err(source) => return Err(Error::kube("delete", self.what(member, manifest), source)),
        }
        self.records().remove(&key);
        Ok(())
    }
}
