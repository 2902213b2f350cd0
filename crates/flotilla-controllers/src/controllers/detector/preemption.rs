//! Policy preemption (feature gate `PropagationPolicyPreemption`): a policy with
//! `spec.preemption: Always` claims the templates its selectors name from a policy of strictly lower priority
//! (a PropagationPolicy also from any ClusterPropagationPolicy). The claim is all it writes: the template's
//! update then applies the new policy to the same binding, as for any claimed template.

use std::sync::Arc;

use flotilla_api::names::events;
use flotilla_api::policy::v1alpha1::{PreemptionBehavior, PropagationSpec};
use kube::Resource;
use kube::core::object::HasSpec;
use serde_json::Value;

use super::Detector;
use super::build::claim_template;
use super::filter::{Claim, claim_of};
use super::reconcile::Chosen;
use crate::error::Result;
use crate::events::reference_of;
use crate::features::Feature;
use crate::objects;
use crate::runtime::Trigger;
use crate::templates::TemplateKey;

impl Detector {
    /// Takes over, for `chosen`, every template its selectors name that a lower-priority policy claimed.
    /// Does nothing unless the policy asks for preemption and the gate is on.
    ///
    /// # Errors
    /// The first template that could not be read or claimed (the others are still tried).
    pub(super) async fn preempt(&self, chosen: &Chosen) -> Result<()> {
        if chosen.spec.preemption != PreemptionBehavior::Always {
            return Ok(());
        }
        if !self
            .ctx
            .feature_gates
            .enabled(Feature::PropagationPolicyPreemption)
        {
            tracing::warn!(
                policy = %chosen.display,
                "cannot preempt: feature gate {} is not enabled",
                Feature::PropagationPolicyPreemption.name()
            );
            return Ok(());
        }
        let mut first_error = None;
        for selector in &chosen.spec.resource_selectors {
            // Validation requires a name on every selector of a preempting policy.
            if selector.name.is_empty() {
                continue;
            }
            let key = TemplateKey {
                api_version: selector.api_version.clone(),
                kind: selector.kind.clone(),
                namespace: selector.namespace.clone(),
                name: selector.name.clone(),
            };
            let template = match self.ctx.templates.get(&key).await {
                Ok(Some(template)) if !objects::is_deleting(&template) => template,
                Ok(_) => continue,
                Err(err) => {
                    first_error.get_or_insert(err);
                    continue;
                }
            };
            if let Err(err) = self.preempt_template(template, chosen).await {
                first_error.get_or_insert(err);
            }
        }
        first_error.map_or(Ok(()), Err)
    }

    /// Claims one template for `chosen` when its current claim may be preempted, with Karmada's Event.
    async fn preempt_template(&self, mut template: Value, chosen: &Chosen) -> Result<()> {
        let Some(current) = claim_of(&template) else {
            return Ok(());
        };
        let priority = chosen.spec.priority;
        let taken_from = match (&chosen.claim, &current) {
            (
                Claim::Namespaced {
                    namespace, name, ..
                },
                Claim::Namespaced {
                    namespace: claimed_namespace,
                    name: claimed_name,
                    ..
                },
            ) => {
                if claimed_namespace == namespace && claimed_name == name {
                    return Ok(());
                }
                // A claim whose policy is gone is cleaned up by the detector, not preempted.
                let Some(claimed) = self.pp.get(claimed_namespace, claimed_name) else {
                    return Ok(());
                };
                if priority <= claimed.spec.priority {
                    return Ok(());
                }
                format!("propagation policy({claimed_namespace}/{claimed_name})")
            }
            // A PropagationPolicy takes a template from any ClusterPropagationPolicy, whatever the priorities.
            (Claim::Namespaced { .. }, Claim::Cluster { name, .. }) => {
                format!("cluster propagation policy({name})")
            }
            (Claim::Cluster { name, .. }, Claim::Cluster { name: claimed, .. }) => {
                if claimed == name {
                    return Ok(());
                }
                let Some(claimed_policy) = self.cpp.get("", claimed) else {
                    return Ok(());
                };
                if priority <= claimed_policy.spec.priority {
                    return Ok(());
                }
                format!("cluster propagation policy({claimed})")
            }
            (Claim::Cluster { .. }, Claim::Namespaced { .. }) => return Ok(()),
        };
        let preempting = match &chosen.claim {
            Claim::Namespaced { .. } => format!("Propagation policy({})", chosen.display),
            Claim::Cluster { .. } => format!("Cluster propagation policy({})", chosen.display),
        };
        let reference = reference_of(&template);
        claim_template(&mut template, &chosen.claim);
        match self.ctx.templates.update(&template).await {
            Ok(_) => {
                self.recorder.normal(
                    &reference,
                    events::PREEMPT_POLICY_SUCCEED,
                    format!("{preempting} preempted {taken_from} successfully"),
                );
                Ok(())
            }
            Err(err) => {
                self.recorder.failure(
                    &reference,
                    events::PREEMPT_POLICY_FAILED,
                    &err,
                    format!(
                        "{preempting} failed to preempt {taken_from}: {}",
                        err.message()
                    ),
                );
                Err(err)
            }
        }
    }
}

/// After a policy's priority was lowered from `old` to `new`, the preempting `policies` of the same scope (its
/// namespace's PropagationPolicies, or every ClusterPropagationPolicy) whose priority lies strictly between may
/// now take its templates: reconcile them, highest priority first (so the winner claims first).
pub(super) fn requeue_deprioritised<K>(
    policies: Vec<Arc<K>>,
    (old, new): (i32, i32),
    trigger: &Trigger<K>,
) where
    K: Resource<DynamicType = ()> + HasSpec<Spec = PropagationSpec>,
{
    let mut candidates: Vec<_> = policies
        .into_iter()
        .filter(|p| p.spec().preemption == PreemptionBehavior::Always)
        .filter(|p| p.spec().priority > new && p.spec().priority < old)
        .collect();
    candidates.sort_by_key(|p| std::cmp::Reverse(p.spec().priority));
    for policy in candidates {
        trigger.reconcile(&policy);
    }
}
