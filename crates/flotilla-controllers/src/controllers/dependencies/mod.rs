//! The dependencies distributor (feature gate `PropagateDeps`): for ResourceBindings with `propagateDeps`, the
//! objects the template depends on (InterpretDependency) get attached bindings whose `requiredBy` carries the
//! independent binding's clusters, so the binding controller sends them along.

pub(crate) mod build;
#[cfg(test)]
mod tests;

use std::collections::HashSet;
use std::sync::{Arc, Mutex, PoisonError};

use flotilla_api::config::v1alpha1::{DependentObjectReference, InterpreterOperation};
use flotilla_api::names::{annotations, events, finalizers};
use flotilla_api::work::v1alpha2::{ResourceBinding, ResourceBindingSpec};
use flotilla_core::bindings::Binding;
use flotilla_core::names::depended_by_label_key;
use flotilla_core::selector::label_selector_matches;
use kube::api::DynamicObject;
use kube::{Api, ResourceExt};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use self::build::{
    combined_policy, desired_attached, detach, entry_matches, merge_required_by,
    recorded_dependencies, snapshot_of,
};
use crate::api::get_opt;
use crate::bindings::BindingRef;
use crate::error::{Error, Result};
use crate::events::{EventRecorder, reference, reference_of};
use crate::interpreter::{Interpreter, enabled, get_dependencies};
use crate::objects;
use crate::resources::Resources;
use crate::runtime::{Action, Change, Controller, Informer, Trigger};
use crate::shared::{ControlPlane, Shared};
use crate::templates::{TemplateKey, Templates, with_type};
use crate::update::{self, Edit, Part};

/// Name of the controller (metrics, events `flotilla-dependencies-distributor`).
pub(crate) const NAME: &str = "dependencies-distributor";

/// What the dependencies distributor needs.
pub(crate) struct Context {
    /// The control plane (bindings; the attached bindings it writes), its Events and reconciles.
    pub control: ControlPlane,
    /// Served resources, to watch the kinds dependencies are of.
    pub resources: Resources,
    /// Where an independent binding's template is read.
    pub templates: Templates,
    /// A template's dependencies (InterpretDependency).
    pub interpreter: Arc<dyn Interpreter>,
}

impl Context {
    /// The dependencies distributor's context: its handles from `shared`.
    pub(crate) fn new(shared: &Shared) -> Self {
        Context {
            control: shared.control.clone(),
            resources: shared.resources.clone(),
            templates: shared.templates(),
            interpreter: shared.interpreter.clone(),
        }
    }
}

struct Distributor {
    ctx: Context,
    recorder: EventRecorder,
    trigger: Trigger<ResourceBinding>,
    rb: Arc<Informer<ResourceBinding>>,
    watched: Mutex<HashSet<String>>,
}

fn rb_relevant(change: &Change<'_, ResourceBinding>) -> bool {
    match change {
        Change::Added(rb) => rb.spec.propagate_deps && !rb.spec.clusters.is_empty(),
        Change::Updated { old, new } => {
            (old.metadata.generation != new.metadata.generation
                || (old.metadata.deletion_timestamp.is_none()
                    && new.metadata.deletion_timestamp.is_some()))
                && (old.spec.propagate_deps || new.spec.propagate_deps)
        }
        // A deleted binding was released (its finalizer removed) by the reconcile that saw it deleting.
        Change::Deleted(_) => false,
    }
}

/// Runs the distributor until `shutdown` is cancelled.
pub(crate) async fn run(ctx: Context, shutdown: CancellationToken) {
    let rb = ctx.control.informers.typed::<ResourceBinding>();
    let runner = Controller::new(NAME, &rb, &ctx.control.runtime);
    runner.reconcile_changes(&rb, rb_relevant);
    let controller = Arc::new(Distributor {
        recorder: ctx.control.events.recorder(NAME),
        trigger: runner.trigger(),
        rb,
        watched: Mutex::default(),
        ctx,
    });
    runner
        .run(shutdown, controller, |controller, rb| async move {
            controller.reconcile(BindingRef::of(rb.as_ref())).await
        })
        .await;
}

impl Distributor {
    /// Starts watching a dependency type (once), enqueueing the RBs whose recorded dependencies match a changed
    /// object.
    fn watch_type(
        self: &Arc<Self>,
        api_version: &str,
        kind: &str,
    ) -> Option<Arc<Informer<DynamicObject>>> {
        let served = self.ctx.resources.get_by_api_version(api_version, kind)?;
        let informer = self.ctx.control.informers.dynamic(&served.resource);
        let key = format!("{api_version}/{kind}");
        if self
            .watched
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(key)
        {
            let this = Arc::downgrade(self);
            let (api_version, kind) = (api_version.to_owned(), kind.to_owned());
            informer.add_handler(move |change| {
                let Some(this) = this.upgrade() else { return };
                let (old, new) = match change {
                    Change::Added(obj) | Change::Deleted(obj) => (None, obj),
                    Change::Updated { old, new } => (Some(old), new),
                };
                this.enqueue_dependents(&api_version, &kind, new, old.map(|o| o.labels().clone()));
            });
        }
        Some(informer)
    }

    fn enqueue_dependents(
        &self,
        api_version: &str,
        kind: &str,
        obj: &DynamicObject,
        old_labels: Option<std::collections::BTreeMap<String, String>>,
    ) {
        let namespace = obj.namespace().unwrap_or_default();
        let name = obj.name_any();
        for rb in self.rb.list_namespace(&namespace) {
            if rb.metadata.deletion_timestamp.is_some() {
                continue;
            }
            let hit = recorded_dependencies(&rb).iter().any(|entry| {
                entry_matches(entry, api_version, kind, &namespace, &name, obj.labels())
                    || old_labels.as_ref().is_some_and(|old| {
                        entry_matches(entry, api_version, kind, &namespace, &name, old)
                    })
            });
            if hit {
                self.trigger.reconcile(&rb);
            }
        }
    }

    async fn reconcile(self: &Arc<Self>, key: BindingRef) -> Result<Action> {
        let BindingRef::Namespaced { namespace, name } = key else {
            return Ok(Action::await_change());
        };
        let api: Api<ResourceBinding> =
            Api::namespaced(self.ctx.control.client.clone(), &namespace);
        let Some(rb) = get_opt(api.clone(), &name).await? else {
            return Ok(Action::await_change());
        };
        if !rb.spec.propagate_deps || rb.metadata.deletion_timestamp.is_some() {
            self.detach_all(&rb, None).await?;
            self.remove_finalizer(&api, rb).await?;
            return Ok(Action::await_change());
        }
        let resource = &rb.spec.resource;
        let template_key = TemplateKey {
            api_version: resource.api_version.clone(),
            kind: resource.kind.clone(),
            namespace: namespace.clone(),
            name: resource.name.clone(),
        };
        let template = self
            .ctx
            .templates
            .get(&template_key)
            .await?
            .ok_or_else(|| {
                Error::waiting(format!("template {template_key} of {}", rb.describe()))
            })?;
        let interpreter = self.ctx.interpreter.as_ref();
        if !enabled(
            interpreter,
            &template,
            InterpreterOperation::InterpretDependency,
        ) {
            return Ok(Action::await_change());
        }
        let template_ref = reference_of(&template);
        let (deps, answered) = get_dependencies(interpreter, &template).await;
        let deps = match deps {
            Ok(deps) => {
                let described: Vec<String> = deps
                    .iter()
                    .map(|d| format!("{} {} {}", d.api_version, d.kind, d.name))
                    .collect();
                self.recorder.normal(
                    &template_ref,
                    events::GET_DEPENDENCIES_SUCCEED,
                    answered.note(format!(
                        "Get dependencies([{}]) succeed.",
                        described.join(", ")
                    )),
                );
                deps
            }
            Err(err) => {
                self.recorder.failure(
                    &template_ref,
                    events::GET_DEPENDENCIES_FAILED,
                    &err,
                    answered.note(err.message()),
                );
                return Err(err);
            }
        };
        let rb = self.record(&api, rb, &deps).await?;
        let Some(id) = rb.permanent_id() else {
            return Err(Error::waiting(format!(
                "{} to get its permanent id",
                rb.describe()
            )));
        };
        self.detach_all(&rb, Some(&deps)).await?;
        let result = self.attach_all(&rb, &id, &deps).await;
        match &result {
            Ok(()) => self.recorder.normal(
                &reference(&rb),
                events::SYNC_SCHEDULE_RESULT_TO_DEPENDENCIES_SUCCEED,
                "Sync schedule results to dependencies succeed.",
            ),
            Err(err) => self.recorder.failure(
                &reference(&rb),
                events::SYNC_SCHEDULE_RESULT_TO_DEPENDENCIES_FAILED,
                err,
                err.message(),
            ),
        }
        result.map(|()| Action::await_change())
    }

    /// Adds the distributor's finalizer and writes the dependencies annotation (when either changes).
    async fn record(
        &self,
        api: &Api<ResourceBinding>,
        rb: ResourceBinding,
        deps: &[DependentObjectReference],
    ) -> Result<ResourceBinding> {
        let text = serde_json::to_string(deps).map_err(|source| Error::Decode {
            object: rb.describe(),
            source,
        })?;
        let name = rb.name_any();
        let what = rb.describe();
        let text = &text;
        let written = update::update(
            api,
            &what,
            &name,
            Some(rb),
            Part::Object,
            |mut rb| async move {
                let has_finalizer = rb
                    .finalizers()
                    .iter()
                    .any(|f| f == finalizers::BINDING_DEPENDENCIES_DISTRIBUTOR);
                let current = rb.annotations().get(annotations::DEPENDENCIES);
                if has_finalizer && current == Some(text) {
                    return Ok(Edit::Unchanged(rb));
                }
                if !has_finalizer {
                    rb.finalizers_mut()
                        .push(finalizers::BINDING_DEPENDENCIES_DISTRIBUTOR.to_owned());
                }
                rb.annotations_mut()
                    .insert(annotations::DEPENDENCIES.to_owned(), text.clone());
                Ok(Edit::Changed(rb))
            },
        )
        .await?;
        written
            .object()
            .ok_or_else(|| Error::waiting(format!("{what} to exist")))
    }

    /// Attached bindings of `rb` (by its depended-by label).
    fn attached_to(&self, rb: &ResourceBinding, id: &str) -> Vec<Arc<ResourceBinding>> {
        let label = depended_by_label_key(&rb.namespace().unwrap_or_default(), &rb.name_any());
        self.rb
            .filter(|b| b.labels().get(&label).is_some_and(|v| v == id))
    }

    /// Detaches `rb` from its attached bindings: all of them, or (with `deps`) those no entry names any more.
    async fn detach_all(
        &self,
        rb: &ResourceBinding,
        deps: Option<&[DependentObjectReference]>,
    ) -> Result<()> {
        let Some(id) = rb.permanent_id() else {
            return Ok(());
        };
        let namespace = rb.namespace().unwrap_or_default();
        for attached in self.attached_to(rb, &id) {
            let resource = &attached.spec.resource;
            let still_needed = deps.is_some_and(|deps| {
                deps.iter().any(|entry| {
                    let labels = self.labels_of(resource);
                    entry_matches(
                        entry,
                        &resource.api_version,
                        &resource.kind,
                        &resource.namespace,
                        &resource.name,
                        &labels,
                    )
                })
            });
            if !still_needed {
                self.detach_one(&namespace, &attached.name_any(), &rb.name_any())
                    .await?;
            }
        }
        Ok(())
    }

    fn labels_of(
        &self,
        resource: &flotilla_api::work::v1alpha2::ObjectReference,
    ) -> std::collections::BTreeMap<String, String> {
        self.ctx
            .resources
            .get_by_api_version(&resource.api_version, &resource.kind)
            .and_then(|served| {
                self.ctx
                    .control
                    .informers
                    .dynamic_if_started(&served.resource)
            })
            .and_then(|informer| informer.get(&resource.namespace, &resource.name))
            .map(|obj| obj.labels().clone())
            .unwrap_or_default()
    }

    async fn detach_one(&self, namespace: &str, attached: &str, independent: &str) -> Result<()> {
        let api: Api<ResourceBinding> = Api::namespaced(self.ctx.control.client.clone(), namespace);
        let what = format!("ResourceBinding {namespace}/{attached}");
        update::update(
            &api,
            &what,
            attached,
            None,
            Part::Object,
            |mut binding| async move {
                if !detach(&mut binding, namespace, independent) {
                    return Ok(Edit::Unchanged(binding));
                }
                if binding.spec.placement.is_none() {
                    self.apply_combined_policy(&mut binding, false).await?;
                }
                Ok(Edit::Changed(binding))
            },
        )
        .await?;
        Ok(())
    }

    /// Recomputes conflictResolution / preserveResourcesOnDeletion of a dependency-only binding from every
    /// binding in its `requiredBy`. When attaching (`attaching`), a missing referrer is waited for and a
    /// disagreement is reported with Karmada's `DependencyPolicyConflict` Event on the attached binding; when
    /// detaching, Karmada reports nothing.
    async fn apply_combined_policy(
        &self,
        binding: &mut ResourceBinding,
        attaching: bool,
    ) -> Result<()> {
        let mut referrers = Vec::new();
        for snapshot in &binding.spec.required_by {
            let api: Api<ResourceBinding> =
                Api::namespaced(self.ctx.control.client.clone(), &snapshot.namespace);
            match get_opt(api, &snapshot.name).await? {
                Some(referrer) => referrers.push(referrer.spec),
                None if attaching => {
                    return Err(Error::waiting(format!(
                        "ResourceBinding {}/{} referenced by {}",
                        snapshot.namespace,
                        snapshot.name,
                        binding.describe()
                    )));
                }
                None => {}
            }
        }
        let specs: Vec<&ResourceBindingSpec> = referrers.iter().collect();
        let combined = combined_policy(&specs);
        binding.spec.conflict_resolution = combined.resolution.clone();
        binding.spec.preserve_resources_on_deletion = combined.preserve;
        if attaching && let Some(message) = combined.conflict_message() {
            self.recorder.warning(
                &reference(binding),
                events::DEPENDENCY_POLICY_CONFLICT,
                message,
            );
        }
        Ok(())
    }

    /// Every dependency object (by name, or every object its label selector matches) gets its attached binding;
    /// errors are collected.
    async fn attach_all(
        self: &Arc<Self>,
        rb: &ResourceBinding,
        id: &str,
        deps: &[DependentObjectReference],
    ) -> Result<()> {
        let mut errors = Vec::new();
        for entry in deps {
            let Some(informer) = self.watch_type(&entry.api_version, &entry.kind) else {
                continue;
            };
            if tokio::time::timeout(std::time::Duration::from_secs(10), informer.wait_synced())
                .await
                .is_err()
            {
                errors.push(Error::waiting(format!(
                    "the {} {} cache to sync",
                    entry.api_version, entry.kind
                )));
                continue;
            }
            let objects_found: Vec<Value> = if entry.name.is_empty() {
                let Some(selector) = &entry.label_selector else {
                    continue;
                };
                informer
                    .list_namespace(&entry.namespace)
                    .iter()
                    .filter(|obj| label_selector_matches(&selector.0, obj.labels()))
                    .map(|obj| with_type(obj, &entry.api_version, &entry.kind))
                    .collect()
            } else {
                informer
                    .get(&entry.namespace, &entry.name)
                    .map(|obj| with_type(&obj, &entry.api_version, &entry.kind))
                    .into_iter()
                    .collect()
            };
            for dependency in objects_found {
                if let Err(err) = self.upsert_attached(rb, id, &dependency).await {
                    errors.push(err);
                }
            }
        }
        Error::aggregate(errors)
    }

    async fn upsert_attached(
        &self,
        rb: &ResourceBinding,
        id: &str,
        dependency: &Value,
    ) -> Result<()> {
        let desired = &desired_attached(rb, id, dependency);
        let namespace = rb.namespace().unwrap_or_default();
        let name = desired.name_any();
        let api: Api<ResourceBinding> =
            Api::namespaced(self.ctx.control.client.clone(), &namespace);
        let what = format!("ResourceBinding {namespace}/{name}");
        let create = || {
            let mut created = desired.clone();
            created.labels_mut().insert(
                ResourceBinding::permanent_id_label().to_owned(),
                uuid::Uuid::new_v4().to_string(),
            );
            Ok(created)
        };
        update::create_or_update(
            &api,
            &what,
            &name,
            false,
            create,
            |mut existing| async move {
                if existing.owned_by_another(objects::uid(dependency)) {
                    return Err(Error::waiting(format!(
                        "{} of a previous object to be garbage collected",
                        existing.describe()
                    )));
                }
                let before = existing.clone();
                merge_required_by(&mut existing.spec.required_by, snapshot_of(rb));
                existing.labels_mut().extend(desired.labels().clone());
                if existing.permanent_id().is_none() {
                    existing.labels_mut().insert(
                        ResourceBinding::permanent_id_label().to_owned(),
                        uuid::Uuid::new_v4().to_string(),
                    );
                }
                existing.spec.resource = desired.spec.resource.clone();
                if existing.spec.placement.is_none() {
                    self.apply_combined_policy(&mut existing, true).await?;
                }
                let changed = existing != before;
                Ok(Edit::of(existing, changed))
            },
        )
        .await?;
        Ok(())
    }

    async fn remove_finalizer(
        &self,
        api: &Api<ResourceBinding>,
        rb: ResourceBinding,
    ) -> Result<()> {
        let what = rb.describe();
        update::remove_finalizer(api, &what, rb, finalizers::BINDING_DEPENDENCIES_DISTRIBUTOR).await
    }
}
