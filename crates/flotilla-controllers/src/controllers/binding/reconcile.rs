//! The binding reconcile (orphan Works removed, then the template fetched and its Works ensured) and ensuring
//! Works.

use std::collections::BTreeMap;
use std::time::Duration;

use flotilla_api::config::v1alpha1::InterpreterOperation;
use flotilla_api::names::{annotations, events, finalizers};
use flotilla_api::policy::v1alpha1::{ClusterOverridePolicy, OverridePolicy};
use flotilla_api::work::v1alpha1::Work;
use flotilla_api::work::v1alpha2::{ClusterResourceBinding, ResourceBinding};
use flotilla_core::names::cluster_of_execution_namespace;
use flotilla_core::overrides::apply_overrides;
use kube::ResourceExt;
use serde_json::Value;

use super::BindingController;
use super::build::{
    BindingInfo, Target, build_work, directly_purged_clusters, expected_clusters, is_workload,
    job_completions, preserved_labels, set_completions, targets,
};
use crate::api::get_opt;
use crate::bindings::{BindingObject, BindingRef};
use crate::error::{Error, Result};
use crate::events::{reference, reference_of};
use crate::features::Feature;
use crate::interpreter::{enabled, revise_replica};
use crate::runtime::Action;
use crate::templates::TemplateKey;
use crate::update;
use crate::works::{create_or_update_work, delete_work};

/// How long to wait for a `Directly` purged cluster's Work to disappear.
const DIRECT_PURGE_RECHECK: Duration = Duration::from_secs(5);

impl BindingController {
    pub(super) async fn reconcile(&self, key: BindingRef) -> Result<Action> {
        match key {
            BindingRef::Namespaced { namespace, name } => {
                let cached = self.rb.get(&namespace, &name).map(|b| b.as_ref().clone());
                self.reconcile_binding::<ResourceBinding>(cached, &namespace, &name)
                    .await
            }
            BindingRef::Cluster { name } => {
                let cached = self.crb.get("", &name).map(|b| b.as_ref().clone());
                self.reconcile_binding::<ClusterResourceBinding>(cached, "", &name)
                    .await
            }
        }
    }

    async fn reconcile_binding<B: BindingObject>(
        &self,
        cached: Option<B>,
        namespace: &str,
        name: &str,
    ) -> Result<Action> {
        let binding = match cached {
            Some(binding) => binding,
            None => match get_opt(B::api(&self.ctx.control.client, namespace), name).await? {
                Some(binding) => binding,
                None => return Ok(Action::await_change()),
            },
        };
        let Some(id) = binding.permanent_id() else {
            return Err(Error::waiting(format!(
                "{} to get its permanent id",
                binding.describe()
            )));
        };
        if binding.meta().deletion_timestamp.is_some() {
            for work in self.works_of::<B>(&id) {
                delete_work(
                    &self.ctx.control.client,
                    &work.namespace().unwrap_or_default(),
                    &work.name_any(),
                )
                .await?;
            }
            self.remove_finalizer(binding).await?;
            return Ok(Action::await_change());
        }

        let spec = binding.spec();
        let expected = expected_clusters(spec);
        let mut cleanup_errors = Vec::new();
        for work in self.works_of::<B>(&id) {
            let work_namespace = work.namespace().unwrap_or_default();
            let Ok(cluster) = cluster_of_execution_namespace(&work_namespace) else {
                continue;
            };
            if !expected.contains(cluster)
                && let Err(err) =
                    delete_work(&self.ctx.control.client, &work_namespace, &work.name_any()).await
            {
                cleanup_errors.push(err);
            }
        }
        if let Err(err) = Error::aggregate(cleanup_errors) {
            self.recorder.warning(
                &reference(&binding),
                events::CLEANUP_WORK_FAILED,
                err.message(),
            );
            return Err(err);
        }
        let purged = directly_purged_clusters(spec);
        if self.works_of::<B>(&id).iter().any(|w| {
            cluster_of_execution_namespace(&w.namespace().unwrap_or_default())
                .is_ok_and(|c| purged.contains(c))
        }) {
            return Ok(Action::requeue(DIRECT_PURGE_RECHECK));
        }

        let key = TemplateKey {
            api_version: spec.resource.api_version.clone(),
            kind: spec.resource.kind.clone(),
            namespace: if B::CLUSTER_SCOPED {
                String::new()
            } else {
                namespace.to_owned()
            },
            name: spec.resource.name.clone(),
        };
        let Some(template) = self.ctx.templates.get(&key).await? else {
            return Ok(Action::await_change());
        };
        let result = self.ensure_works(&binding, &id, &template).await;
        let targets = [reference(&binding), reference_of(&template)];
        match &result {
            Ok(()) => {
                let message = format!("Sync work of {} successful.", binding.event_ref());
                for target in &targets {
                    self.recorder
                        .normal(target, events::SYNC_WORK_SUCCEED, message.clone());
                }
            }
            Err(err) => {
                let message = format!(
                    "Failed to sync work of {}: {}",
                    binding.event_ref(),
                    err.message()
                );
                for target in &targets {
                    self.recorder
                        .failure(target, events::SYNC_WORK_FAILED, err, message.clone());
                }
            }
        }
        result.map(|()| Action::await_change())
    }

    /// The Works carrying the binding's permanent id, across execution namespaces.
    fn works_of<B: BindingObject>(&self, id: &str) -> Vec<std::sync::Arc<Work>> {
        let label = B::permanent_id_label();
        self.works
            .filter(|w| w.labels().get(label).is_some_and(|v| v == id))
    }

    async fn remove_finalizer<B: BindingObject>(&self, binding: B) -> Result<()> {
        let api = B::api(
            &self.ctx.control.client,
            &binding.namespace().unwrap_or_default(),
        );
        let what = binding.describe();
        update::remove_finalizer(&api, &what, binding, B::finalizer()).await
    }

    /// One Work per target cluster (`spec.clusters`, then the `requiredBy` clusters not already there); errors
    /// are collected so other clusters still get theirs.
    async fn ensure_works<B: BindingObject>(
        &self,
        binding: &B,
        id: &str,
        template: &Value,
    ) -> Result<()> {
        let spec = binding.spec();
        let targets = targets(spec);
        let completions = job_completions(template, spec, &targets);
        let name_annotations: BTreeMap<String, String> = if B::CLUSTER_SCOPED {
            [(
                annotations::CLUSTER_RESOURCE_BINDING_NAME.to_owned(),
                binding.name_any(),
            )]
            .into()
        } else {
            [
                (
                    annotations::RESOURCE_BINDING_NAMESPACE.to_owned(),
                    binding.namespace().unwrap_or_default(),
                ),
                (
                    annotations::RESOURCE_BINDING_NAME.to_owned(),
                    binding.name_any(),
                ),
            ]
            .into()
        };
        let info = BindingInfo {
            permanent_id: (B::permanent_id_label(), id),
            name_annotations,
            spec,
            targets: targets.len(),
        };
        let cops: Vec<ClusterOverridePolicy> =
            self.cop.list().iter().map(|p| p.as_ref().clone()).collect();
        let ops: Vec<OverridePolicy> = if B::CLUSTER_SCOPED {
            Vec::new()
        } else {
            self.op
                .list_namespace(&binding.namespace().unwrap_or_default())
                .iter()
                .map(|p| p.as_ref().clone())
                .collect()
        };
        // The clusters' Works are independent: write them concurrently.
        let results = futures::future::join_all(targets.iter().map(|target| {
            self.ensure_work(&info, template, target, completions.as_ref(), &cops, &ops)
        }))
        .await;
        let errors: Vec<Error> = results
            .into_iter()
            .filter_map(std::result::Result::err)
            .collect();
        Error::aggregate(errors)
    }

    async fn ensure_work(
        &self,
        binding: &BindingInfo<'_>,
        template: &Value,
        target: &Target,
        completions: Option<&BTreeMap<String, i64>>,
        cops: &[ClusterOverridePolicy],
        ops: &[OverridePolicy],
    ) -> Result<()> {
        let mut copy = template.clone();
        let interpreter = self.ctx.interpreter.as_ref();
        if is_workload(binding.spec)
            && enabled(interpreter, &copy, InterpreterOperation::ReviseReplica)
        {
            copy = revise_replica(interpreter, copy, i64::from(target.replicas)).await?;
        }
        if let Some(n) = completions.and_then(|c| c.get(&target.cluster)) {
            set_completions(&mut copy, *n);
        }
        let cluster = self
            .clusters
            .get("", &target.cluster)
            .ok_or_else(|| Error::waiting(format!("Cluster {} to exist", target.cluster)))?;
        let applied = apply_overrides(&mut copy, &cluster, cops, ops);
        let template_ref = reference_of(template);
        let applied = match applied {
            Ok(applied) => {
                for rule in &applied.rules {
                    self.recorder.normal(
                        &template_ref,
                        events::APPLY_OVERRIDE_POLICY_SUCCEED,
                        rule.event_message(&target.cluster),
                    );
                }
                applied
            }
            Err(err) => {
                self.recorder.warning(
                    &template_ref,
                    events::APPLY_OVERRIDE_POLICY_FAILED,
                    err.event_message(),
                );
                return Err(Error::invalid(
                    crate::objects::describe(template),
                    flotilla_client::api_error::error_chain(&err),
                ));
            }
        };
        // After the overrides, as Karmada does: the preserved state wins over them.
        if self
            .ctx
            .feature_gates
            .enabled(Feature::StatefulFailoverInjection)
        {
            for (key, value) in preserved_labels(binding.spec, &target.cluster, binding.targets) {
                crate::objects::set_label(&mut copy, key, value);
            }
        }
        let desired =
            build_work(binding, template, &target.cluster, copy, &applied).map_err(|source| {
                Error::Decode {
                    object: "applied overrides".into(),
                    source,
                }
            })?;
        let known_absent = self.works.get(&desired.namespace, &desired.name).is_none();
        create_or_update_work(
            &self.ctx.control.client,
            &desired,
            finalizers::EXECUTION,
            known_absent,
        )
        .await?;
        Ok(())
    }
}
