//! Template reconcile (finding the template's policy) and applying a policy (claim, then binding).

use flotilla_api::config::v1alpha1::InterpreterOperation;
use flotilla_api::names::{events, labels};
use flotilla_api::policy::v1alpha1::{
    ActivationPreference, ClusterPropagationPolicy, PriorityClassSource, PropagationPolicy,
    PropagationSpec,
};
use flotilla_api::work::v1alpha2::{ClusterResourceBinding, ResourceBinding};
use flotilla_core::names::binding_name;
use flotilla_core::scheduler::defaults::default_propagation_spec;
use flotilla_core::selector::{TemplateRef, select_policy, selectors_match};
use k8s_openapi::api::scheduling::v1::PriorityClass;
use kube::{Api, Resource, ResourceExt};
use serde_json::Value;

use super::build::{
    ReplicaInfo, build_binding, claim_template, remove_claim, remove_claim_meta,
    workload_affinity_groups,
};
use super::filter::{Claim, claim_of};
use super::{Detector, TemplateItem};
use crate::api::get_opt;
use crate::bindings::BindingObject;
use crate::error::{Error, Result};
use crate::events::reference_of;
use crate::features::Feature;
use crate::interpreter::{self, enabled};
use crate::objects;
use crate::runtime::Action;
use crate::templates::TemplateKey;
use crate::update::{self, Edit, Part};

/// A chosen policy: its claim, defaulted spec and activation preference.
pub(super) struct Chosen {
    pub claim: Claim,
    pub spec: PropagationSpec,
    pub lazy: bool,
    pub display: String,
}

impl Chosen {
    /// How Karmada's events name the policy kind: `policy` or `cluster policy`.
    fn noun(&self) -> &'static str {
        match self.claim {
            Claim::Namespaced { .. } => "policy",
            Claim::Cluster { .. } => "cluster policy",
        }
    }

    pub(super) fn pp(policy: &PropagationPolicy, id: String) -> Self {
        let namespace = policy.namespace().unwrap_or_default();
        let mut spec = policy.spec.clone();
        default_propagation_spec(&mut spec, Some(&namespace));
        Chosen {
            lazy: spec.activation_preference == Some(ActivationPreference::Lazy),
            display: format!("{namespace}/{}", policy.name_any()),
            claim: Claim::Namespaced {
                namespace,
                name: policy.name_any(),
                id,
            },
            spec,
        }
    }

    pub(super) fn cpp(policy: &ClusterPropagationPolicy, id: String) -> Self {
        let mut spec = policy.spec.clone();
        default_propagation_spec(&mut spec, None);
        Chosen {
            lazy: spec.activation_preference == Some(ActivationPreference::Lazy),
            display: policy.name_any(),
            claim: Claim::Cluster {
                name: policy.name_any(),
                id,
            },
            spec,
        }
    }
}

fn policy_id<K: Resource>(policy: &K, label: &str) -> Option<String> {
    policy
        .meta()
        .labels
        .as_ref()?
        .get(label)
        .filter(|id| !id.is_empty())
        .cloned()
}

impl Detector {
    /// Finds the template's policy and applies it: the policy its claim names, else the best matching
    /// PropagationPolicy of its namespace, else the best ClusterPropagationPolicy (a PropagationPolicy always
    /// wins over a ClusterPropagationPolicy); a template no policy matches waits in the waiting list.
    pub(super) async fn reconcile_template(&self, item: TemplateItem) -> Result<Action> {
        let Some(template) = self.ctx.templates.get(&item.key).await? else {
            self.waiting().remove(&item.key);
            self.referenced.forget(&item.key);
            return Ok(Action::await_change());
        };
        if objects::label(&template, labels::CLAIMED_BY).is_some_and(|v| !v.is_empty()) {
            self.waiting().remove(&item.key);
            return Ok(Action::await_change());
        }
        match claim_of(&template) {
            Some(claim) => self.apply_claimed(template, &claim, item.lazy).await,
            None => self.apply_unclaimed(template, &item).await,
        }
    }

    async fn apply_unclaimed(&self, template: Value, item: &TemplateItem) -> Result<Action> {
        let selector_view = TemplateRef::from_value(&template);
        let namespace = objects::namespace(&template).to_owned();
        if !namespace.is_empty() {
            let candidates: Vec<_> = self
                .pp
                .list_namespace(&namespace)
                .into_iter()
                .filter(|p| p.meta().deletion_timestamp.is_none())
                .collect();
            if let Some(policy) =
                select_policy(candidates.iter().map(AsRef::as_ref), &selector_view)
            {
                let chosen = self.chosen_pp(policy)?;
                self.check_dependent_overrides(&chosen)?;
                self.waiting().remove(&item.key);
                return self.apply(template, &chosen, item.lazy).await;
            }
        }
        let candidates: Vec<_> = self
            .cpp
            .list()
            .into_iter()
            .filter(|p| p.meta().deletion_timestamp.is_none())
            .collect();
        if let Some(policy) = select_policy(candidates.iter().map(AsRef::as_ref), &selector_view) {
            let chosen = self.chosen_cpp(policy)?;
            self.check_dependent_overrides(&chosen)?;
            self.waiting().remove(&item.key);
            return self.apply(template, &chosen, item.lazy).await;
        }
        // No policy: remember the template; the first time, fail once so it is retried, which covers a policy
        // created at the same moment.
        if self.waiting().insert(item.key.clone()) {
            return Err(Error::waiting(format!(
                "a propagation policy matching {}",
                item.key
            )));
        }
        Ok(Action::await_change())
    }

    fn chosen_pp(&self, policy: &PropagationPolicy) -> Result<Chosen> {
        let id = policy_id(policy, labels::PROPAGATION_POLICY_PERMANENT_ID).ok_or_else(|| {
            Error::waiting(format!(
                "PropagationPolicy {}/{} to get its permanent id",
                policy.namespace().unwrap_or_default(),
                policy.name_any()
            ))
        })?;
        Ok(Chosen::pp(policy, id))
    }

    fn chosen_cpp(&self, policy: &ClusterPropagationPolicy) -> Result<Chosen> {
        let id = policy_id(policy, labels::CLUSTER_PROPAGATION_POLICY_PERMANENT_ID).ok_or_else(
            || {
                Error::waiting(format!(
                    "ClusterPropagationPolicy {} to get its permanent id",
                    policy.name_any()
                ))
            },
        )?;
        Ok(Chosen::cpp(policy, id))
    }

    /// Whether every `dependentOverrides` name exists (OverridePolicies in the policy's namespace for a PP,
    /// ClusterOverridePolicies for a CPP).
    pub(super) fn check_dependent_overrides(&self, chosen: &Chosen) -> Result<()> {
        for name in &chosen.spec.dependent_overrides {
            let exists = match &chosen.claim {
                Claim::Namespaced { namespace, .. } => self.op.get(namespace, name).is_some(),
                Claim::Cluster { .. } => self.cop.get("", name).is_some(),
            };
            if !exists {
                return Err(Error::waiting(format!(
                    "dependent override {name} of policy {} to be created",
                    chosen.display
                )));
            }
        }
        Ok(())
    }

    /// A template that already carries a claim: the claimed policy is applied while it exists and still selects
    /// the template; a policy gone for good has its claim removed.
    async fn apply_claimed(&self, template: Value, claim: &Claim, lazy: bool) -> Result<Action> {
        let chosen = match claim {
            Claim::Namespaced {
                namespace, name, ..
            } => {
                let policy = match self.pp.get(namespace, name) {
                    Some(policy) => Some(policy.as_ref().clone()),
                    None => {
                        get_opt(
                            Api::<PropagationPolicy>::namespaced(
                                self.ctx.control.client.clone(),
                                namespace,
                            ),
                            name,
                        )
                        .await?
                    }
                };
                match policy {
                    None => return self.cleanup_missed(template, claim).await,
                    Some(policy) if policy.meta().deletion_timestamp.is_some() => {
                        return Err(Error::waiting(format!(
                            "PropagationPolicy {namespace}/{name} to be cleaned up"
                        )));
                    }
                    Some(policy) => self.chosen_pp(&policy)?,
                }
            }
            Claim::Cluster { name, .. } => {
                let policy = match self.cpp.get("", name) {
                    Some(policy) => Some(policy.as_ref().clone()),
                    None => {
                        get_opt(
                            Api::<ClusterPropagationPolicy>::all(self.ctx.control.client.clone()),
                            name,
                        )
                        .await?
                    }
                };
                match policy {
                    None => return self.cleanup_missed(template, claim).await,
                    Some(policy) if policy.meta().deletion_timestamp.is_some() => {
                        return Err(Error::waiting(format!(
                            "ClusterPropagationPolicy {name} to be cleaned up"
                        )));
                    }
                    Some(policy) => self.chosen_cpp(&policy)?,
                }
            }
        };
        // The template may have changed (or appears under two API groups); a claim is only applied while the
        // policy still selects it.
        if !selectors_match(
            &chosen.spec.resource_selectors,
            &TemplateRef::from_value(&template),
        ) {
            return Ok(Action::await_change());
        }
        self.check_dependent_overrides(&chosen)?;
        self.apply(template, &chosen, lazy).await
    }

    /// The claimed policy is gone but its claim stayed (a missed cleanup): remove it from the binding, then
    /// from the template.
    async fn cleanup_missed(&self, template: Value, claim: &Claim) -> Result<Action> {
        self.remove_claims(template, claim).await?;
        Ok(Action::await_change())
    }

    /// Removes `claim` from the template's binding, then from the template (each only if it still carries
    /// this policy's id).
    pub(super) async fn remove_claims(&self, mut template: Value, claim: &Claim) -> Result<()> {
        let name = binding_name(objects::kind(&template), objects::name(&template));
        let namespace = objects::namespace(&template).to_owned();
        if namespace.is_empty() {
            remove_binding_claim::<ClusterResourceBinding>(
                &self.ctx.control.client,
                "",
                &name,
                claim,
            )
            .await?;
        } else {
            remove_binding_claim::<ResourceBinding>(
                &self.ctx.control.client,
                &namespace,
                &name,
                claim,
            )
            .await?;
        }
        if remove_claim(&mut template, claim) {
            self.ctx.templates.update(&template).await?;
        }
        Ok(())
    }

    /// Claims the template, then creates or updates its binding (a Lazy-only change stops after the claim).
    async fn apply(&self, mut template: Value, chosen: &Chosen, lazy: bool) -> Result<Action> {
        let reference = reference_of(&template);
        if claim_template(&mut template, &chosen.claim) {
            template = self.ctx.templates.update(&template).await?;
        }
        if lazy && chosen.lazy {
            return Ok(Action::await_change());
        }
        let result = self.ensure_binding(&template, chosen).await;
        match &result {
            Ok(true) => self.recorder.normal(
                &reference,
                events::APPLY_POLICY_SUCCEED,
                format!("Apply {}({}) succeed", chosen.noun(), chosen.display),
            ),
            Ok(false) => {}
            Err(err) => self.recorder.failure(
                &reference,
                events::APPLY_POLICY_FAILED,
                err,
                format!(
                    "Apply {}({}) failed: {}",
                    chosen.noun(),
                    chosen.display,
                    err.message()
                ),
            ),
        }
        result.map(|_| Action::await_change())
    }

    async fn ensure_binding(&self, template: &Value, chosen: &Chosen) -> Result<bool> {
        let replicas = self.interpret_replicas(template).await?;
        let cluster_scoped = objects::namespace(template).is_empty();
        // Karmada resolves the priority for ResourceBindings only, and only with `PriorityBasedScheduling`; without
        // it a binding's priority is cleared.
        let priority = if cluster_scoped
            || !self
                .ctx
                .feature_gates
                .enabled(Feature::PriorityBasedScheduling)
        {
            None
        } else {
            self.schedule_priority(&chosen.spec).await?
        };
        let mut desired = build_binding(
            template,
            &chosen.claim,
            &chosen.spec,
            replicas,
            priority,
            cluster_scoped,
        );
        if !cluster_scoped && self.ctx.feature_gates.enabled(Feature::WorkloadAffinity) {
            desired.1.workload_affinity_groups =
                workload_affinity_groups(template, &chosen.spec.placement);
        }
        let key = TemplateKey::of(template);
        let (version, print) = self.referenced.version_for(&key, template);
        desired.1.resource.resource_version = version.clone();
        let name = desired.0.name.as_deref().unwrap_or_default();
        let wrote = if cluster_scoped {
            let known_absent = self.crb.get("", name).is_none();
            upsert_binding::<ClusterResourceBinding>(
                &self.ctx.control.client,
                desired,
                &chosen.claim,
                objects::uid(template),
                known_absent,
            )
            .await?
        } else {
            let namespace = desired.0.namespace.as_deref().unwrap_or_default();
            let known_absent = self.rb.get(namespace, name).is_none();
            upsert_binding::<ResourceBinding>(
                &self.ctx.control.client,
                desired,
                &chosen.claim,
                objects::uid(template),
                known_absent,
            )
            .await?
        };
        self.referenced.record(&key, version, print);
        Ok(wrote)
    }

    /// Karmada's `applyReplicaInterpretation`: the components when the gate is on and the template's kind
    /// has InterpretComponent, else the replicas when it has InterpretReplica.
    async fn interpret_replicas(&self, template: &Value) -> Result<Option<ReplicaInfo>> {
        let interpreter = self.ctx.interpreter.as_ref();
        let reference = reference_of(template);
        if self
            .ctx
            .feature_gates
            .enabled(Feature::MultiplePodTemplatesScheduling)
            && enabled(
                interpreter,
                template,
                InterpreterOperation::InterpretComponent,
            )
        {
            let (result, answered) = interpreter::get_components(interpreter, template).await;
            return match result {
                Ok(components) => {
                    self.recorder.normal(
                        &reference,
                        events::GET_COMPONENTS_SUCCEED,
                        answered.note("Get components of resource template successfully."),
                    );
                    Ok(Some(ReplicaInfo {
                        components,
                        ..ReplicaInfo::default()
                    }))
                }
                Err(err) => {
                    self.recorder.failure(
                        &reference,
                        events::GET_COMPONENTS_FAILED,
                        &err,
                        answered.note(err.message()),
                    );
                    Err(err)
                }
            };
        }
        if !enabled(
            interpreter,
            template,
            InterpreterOperation::InterpretReplica,
        ) {
            return Ok(None);
        }
        let (result, answered) = interpreter::get_replicas(interpreter, template).await;
        match result {
            Ok((replicas, mut requirements)) => {
                // Interpreters read a pod template, which rarely names its namespace; under the gate the
                // requirements are charged to the template's.
                if self
                    .ctx
                    .feature_gates
                    .enabled(Feature::ResourceQuotaEstimate)
                    && let Some(requirements) = requirements.as_mut()
                    && requirements.namespace.is_empty()
                {
                    requirements.namespace = template
                        .pointer("/metadata/namespace")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_owned();
                }
                self.recorder.normal(
                    &reference,
                    events::GET_REPLICAS_SUCCEED,
                    answered.note("Get replicas of resource template successfully."),
                );
                Ok(Some(ReplicaInfo {
                    replicas,
                    requirements,
                    components: Vec::new(),
                }))
            }
            Err(err) => {
                self.recorder.failure(
                    &reference,
                    events::GET_REPLICAS_FAILED,
                    &err,
                    answered.note(err.message()),
                );
                Err(err)
            }
        }
    }

    /// The PriorityClass value a policy asks for (`schedulePriority` with `KubePriorityClass`).
    async fn schedule_priority(&self, spec: &PropagationSpec) -> Result<Option<i32>> {
        let Some(priority) = &spec.schedule_priority else {
            return Ok(None);
        };
        let unsupported = match &priority.priority_class_source {
            PriorityClassSource::KubePriorityClass => None,
            source @ (PriorityClassSource::PodPriorityClass
            | PriorityClassSource::FederatedPriorityClass) => Some(format!(
                "priority class source is {source}, but {source} is not supported yet"
            )),
            PriorityClassSource::Other(_) => Some("unsupported priority class source".to_owned()),
        };
        if let Some(message) = unsupported {
            return Err(Error::invalid("propagation policy", message));
        }
        let api: Api<PriorityClass> = Api::all(self.ctx.control.client.clone());
        match get_opt(api, &priority.priority_class_name).await? {
            Some(class) => Ok(Some(class.value.unwrap_or_default())),
            None => Err(Error::waiting(format!(
                "PriorityClass {} to exist",
                priority.priority_class_name
            ))),
        }
    }
}

/// Creates the binding or merges the desired state into the existing one; returns whether anything was
/// written. With `known_absent` (the informer holds no such binding) the first attempt creates without
/// reading; a binding that exists after all answers AlreadyExists and is then read and merged.
async fn upsert_binding<B: BindingObject>(
    client: &kube::Client,
    desired: (
        k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
        flotilla_api::work::v1alpha2::ResourceBindingSpec,
    ),
    claim: &Claim,
    template_uid: &str,
    known_absent: bool,
) -> Result<bool> {
    let (meta, spec) = desired;
    let name = meta.name.clone().unwrap_or_default();
    let namespace = meta.namespace.clone().unwrap_or_default();
    let api = B::api(client, &namespace);
    let what = format!("{} {namespace}/{name}", B::KIND);
    let create = || {
        let mut binding = B::build(&name, spec.clone());
        let mut new_meta = meta.clone();
        new_meta.labels.get_or_insert_with(Default::default).insert(
            B::permanent_id_label().to_owned(),
            uuid::Uuid::new_v4().to_string(),
        );
        *binding.meta_mut() = new_meta;
        Ok(binding)
    };
    let (meta, spec, what) = (&meta, &spec, &what);
    let written = update::create_or_update(
        &api,
        what,
        &name,
        known_absent,
        create,
        |mut existing| async move {
            if existing.owned_by_another(template_uid) {
                return Err(Error::waiting(format!(
                    "{what} of a previous template with the same name to be garbage collected"
                )));
            }
            let mut changed = false;
            if existing.permanent_id().is_none() {
                existing.labels_mut().insert(
                    B::permanent_id_label().to_owned(),
                    uuid::Uuid::new_v4().to_string(),
                );
                changed = true;
            }
            let mut existing_meta = existing.meta().clone();
            let mut existing_spec = existing.spec().clone();
            changed |= super::build::merge_binding(
                (&mut existing_meta, &mut existing_spec),
                (meta, spec),
                claim,
                B::CLUSTER_SCOPED,
            );
            *existing.meta_mut() = existing_meta;
            *existing.spec_mut() = existing_spec;
            Ok(Edit::of(existing, changed))
        },
    )
    .await?;
    Ok(written.wrote())
}

/// Removes `claim` from binding `namespace/name` if it carries it.
pub(super) async fn remove_binding_claim<B: BindingObject>(
    client: &kube::Client,
    namespace: &str,
    name: &str,
    claim: &Claim,
) -> Result<()> {
    let api = B::api(client, namespace);
    let what = format!("{} {namespace}/{name}", B::KIND);
    update::update(
        &api,
        &what,
        name,
        None,
        Part::Object,
        |mut binding| async move {
            let changed = remove_claim_meta(binding.meta_mut(), claim);
            Ok(Edit::of(binding, changed))
        },
    )
    .await?;
    Ok(())
}

/// The template key of a binding's `spec.resource`.
pub(super) fn template_key_of(
    resource: &flotilla_api::work::v1alpha2::ObjectReference,
    binding_namespace: &str,
) -> TemplateKey {
    TemplateKey {
        api_version: resource.api_version.clone(),
        kind: resource.kind.clone(),
        namespace: if resource.namespace.is_empty() {
            binding_namespace.to_owned()
        } else {
            resource.namespace.clone()
        },
        name: resource.name.clone(),
    }
}
