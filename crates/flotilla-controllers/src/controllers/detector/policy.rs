//! Policy reconcile: creation and update, and deletion with the policy finalizer.

use std::collections::BTreeSet;
use std::sync::Arc;

use flotilla_api::names::{finalizers, labels};
use flotilla_api::policy::v1alpha1::{ClusterPropagationPolicy, PropagationPolicy};
use flotilla_api::work::v1alpha2::{ClusterResourceBinding, ResourceBinding, ResourceBindingSpec};
use flotilla_client::api_error::is_not_found;
use flotilla_core::selector::{TemplateRef, selectors_match};
use kube::api::ListParams;
use kube::core::object::HasSpec;
use kube::{Api, Resource, ResourceExt};
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::build::remove_claim;
use super::filter::Claim;
use super::reconcile::{Chosen, remove_binding_claim, template_key_of};
use super::{Detector, PolicyKey};
use crate::api::get_opt;
use crate::error::{Error, Result};
use crate::runtime::Action;
use crate::templates::with_type;
use crate::update;

impl Detector {
    /// Reconciles one policy: cleanup on deletion, else `handle_policy_change`.
    pub(super) async fn reconcile_policy(&self, key: PolicyKey) -> Result<Action> {
        match &key.namespace {
            Some(namespace) => {
                let policy = match self.pp.get(namespace, &key.name) {
                    Some(policy) => Some(policy.as_ref().clone()),
                    None => {
                        get_opt(
                            Api::<PropagationPolicy>::namespaced(
                                self.ctx.control.client.clone(),
                                namespace,
                            ),
                            &key.name,
                        )
                        .await?
                    }
                };
                let Some(policy) = policy else {
                    return Ok(Action::await_change());
                };
                let id = policy
                    .labels()
                    .get(labels::PROPAGATION_POLICY_PERMANENT_ID)
                    .cloned();
                let chosen = id
                    .filter(|id| !id.is_empty())
                    .map(|id| Chosen::pp(&policy, id));
                let api = Api::<PropagationPolicy>::namespaced(
                    self.ctx.control.client.clone(),
                    namespace,
                );
                self.reconcile_policy_object(policy, chosen, api, finalizers::PROPAGATION_POLICY)
                    .await
            }
            None => {
                let policy = match self.cpp.get("", &key.name) {
                    Some(policy) => Some(policy.as_ref().clone()),
                    None => {
                        get_opt(
                            Api::<ClusterPropagationPolicy>::all(self.ctx.control.client.clone()),
                            &key.name,
                        )
                        .await?
                    }
                };
                let Some(policy) = policy else {
                    return Ok(Action::await_change());
                };
                let id = policy
                    .labels()
                    .get(labels::CLUSTER_PROPAGATION_POLICY_PERMANENT_ID)
                    .cloned();
                let chosen = id
                    .filter(|id| !id.is_empty())
                    .map(|id| Chosen::cpp(&policy, id));
                let api = Api::<ClusterPropagationPolicy>::all(self.ctx.control.client.clone());
                self.reconcile_policy_object(
                    policy,
                    chosen,
                    api,
                    finalizers::CLUSTER_PROPAGATION_POLICY,
                )
                .await
            }
        }
    }

    async fn reconcile_policy_object<P>(
        &self,
        policy: P,
        chosen: Option<Chosen>,
        api: Api<P>,
        finalizer: &str,
    ) -> Result<Action>
    where
        P: Resource<DynamicType = ()> + Clone + Serialize + DeserializeOwned + std::fmt::Debug,
    {
        if policy.meta().deletion_timestamp.is_some() {
            if !policy.finalizers().iter().any(|f| f == finalizer) {
                return Ok(Action::await_change());
            }
            if let Some(chosen) = &chosen {
                self.cleanup_deleted_policy(chosen).await?;
            }
            remove_finalizer(&api, policy, finalizer).await?;
            return Ok(Action::await_change());
        }
        // A policy without a permanent id is never applied; the normaliser gives it one, which re-triggers us.
        let Some(chosen) = chosen else {
            return Ok(Action::await_change());
        };
        self.handle_policy_change(&chosen).await?;
        self.preempt(&chosen).await?;
        Ok(Action::await_change())
    }

    /// Releases bindings the policy no longer selects (their templates' claims go, the bindings and Works stay),
    /// refreshes the others, and picks up waiting templates. A new or higher-priority policy takes no template
    /// another policy claimed, unless it preempts.
    async fn handle_policy_change(&self, chosen: &Chosen) -> Result<()> {
        let derived = self.derived_bindings(&chosen.claim);
        for (binding_namespace, binding_name, resource, cluster_scoped) in derived {
            let key = template_key_of(&resource, &binding_namespace);
            let Some(mut template) = self.ctx.templates.get(&key).await? else {
                continue;
            };
            if selectors_match(
                &chosen.spec.resource_selectors,
                &TemplateRef::from_value(&template),
            ) {
                self.enqueue_template(key, chosen.lazy);
                continue;
            }
            if remove_claim(&mut template, &chosen.claim) {
                self.ctx.templates.update(&template).await?;
            }
            if cluster_scoped {
                remove_binding_claim::<ClusterResourceBinding>(
                    &self.ctx.control.client,
                    "",
                    &binding_name,
                    &chosen.claim,
                )
                .await?;
            } else {
                remove_binding_claim::<ResourceBinding>(
                    &self.ctx.control.client,
                    &binding_namespace,
                    &binding_name,
                    &chosen.claim,
                )
                .await?;
            }
        }

        let waiting: Vec<_> = self.waiting().iter().cloned().collect();
        let mut matching = Vec::new();
        for key in waiting {
            if let Some(template) = self.ctx.templates.get(&key).await?
                && selectors_match(
                    &chosen.spec.resource_selectors,
                    &TemplateRef::from_value(&template),
                )
            {
                matching.push(key);
            }
        }
        if !matching.is_empty() {
            self.check_dependent_overrides(chosen)?;
        }
        for key in matching {
            self.waiting().remove(&key);
            self.enqueue_template(key, chosen.lazy);
        }
        Ok(())
    }

    /// Bindings labelled with the policy's id: `(namespace, name, spec.resource, cluster_scoped)`.
    fn derived_bindings(
        &self,
        claim: &Claim,
    ) -> Vec<(
        String,
        String,
        flotilla_api::work::v1alpha2::ObjectReference,
        bool,
    )> {
        fn carries<K: Resource>(obj: &K, label: &str, id: &str) -> bool {
            obj.meta()
                .labels
                .as_ref()
                .and_then(|l| l.get(label))
                .is_some_and(|v| v == id)
        }
        let describe = |obj: &Arc<ResourceBinding>| {
            let spec: &ResourceBindingSpec = obj.spec();
            (
                obj.namespace().unwrap_or_default(),
                obj.name_any(),
                spec.resource.clone(),
                false,
            )
        };
        match claim {
            Claim::Namespaced { namespace, id, .. } => self
                .rb
                .list_namespace(namespace)
                .iter()
                .filter(|rb| carries(rb.as_ref(), labels::PROPAGATION_POLICY_PERMANENT_ID, id))
                .map(describe)
                .collect(),
            Claim::Cluster { id, .. } => {
                let label = labels::CLUSTER_PROPAGATION_POLICY_PERMANENT_ID;
                let mut out: Vec<_> = self
                    .rb
                    .filter(|rb| carries(rb, label, id))
                    .iter()
                    .map(describe)
                    .collect();
                out.extend(
                    self.crb
                        .filter(|crb| carries(crb, label, id))
                        .iter()
                        .map(|crb| {
                            (
                                String::new(),
                                crb.name_any(),
                                crb.spec.resource.clone(),
                                true,
                            )
                        }),
                );
                out
            }
        }
    }

    /// Removes the policy's claim from every template it claimed (and their bindings), each only while it is
    /// still this policy's; bindings, Works and member objects stay, and another policy may claim the template.
    async fn cleanup_deleted_policy(&self, chosen: &Chosen) -> Result<()> {
        let (label, id) = match &chosen.claim {
            Claim::Namespaced { id, .. } => (labels::PROPAGATION_POLICY_PERMANENT_ID, id),
            Claim::Cluster { id, .. } => (labels::CLUSTER_PROPAGATION_POLICY_PERMANENT_ID, id),
        };
        let types: BTreeSet<(String, String, String)> = chosen
            .spec
            .resource_selectors
            .iter()
            .map(|s| (s.api_version.clone(), s.kind.clone(), s.namespace.clone()))
            .collect();
        for (api_version, kind, namespace) in types {
            let served = match self.ctx.resources.resolve(&api_version, &kind).await {
                Ok(served) => served,
                Err(Error::Waiting { .. }) => continue,
                Err(err) => return Err(err),
            };
            if !served.namespaced && !namespace.is_empty() {
                continue;
            }
            let api = self.ctx.resources.api(&served, &namespace);
            let list = match api
                .list(&ListParams::default().labels(&format!("{label}={id}")))
                .await
            {
                Ok(list) => list,
                Err(err) if is_not_found(&err) => continue,
                Err(source) => {
                    return Err(Error::kube(
                        "list",
                        format!("{api_version} {kind} claimed by {}", chosen.display),
                        source,
                    ));
                }
            };
            for obj in list.items {
                let template = with_type(&obj, &api_version, &kind);
                self.remove_claims(template, &chosen.claim).await?;
            }
        }
        Ok(())
    }
}

async fn remove_finalizer<P>(api: &Api<P>, policy: P, finalizer: &str) -> Result<()>
where
    P: Resource<DynamicType = ()> + Clone + Serialize + DeserializeOwned + std::fmt::Debug,
{
    let what = format!("{} {}", P::kind(&()), policy.name_any());
    update::remove_finalizer(api, &what, policy, finalizer).await
}
