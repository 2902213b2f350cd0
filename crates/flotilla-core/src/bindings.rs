//! What ResourceBinding and ClusterResourceBinding have in common: one trait, so the code that reads bindings
//! (the controllers, the status page) is written once for both kinds.

use std::fmt::Debug;

use flotilla_api::names::{finalizers, labels};
use flotilla_api::work::v1alpha2::{
    ClusterResourceBinding, ResourceBinding, ResourceBindingSpec, ResourceBindingStatus,
};
use kube_core::object::{HasSpec, HasStatus};
use kube_core::{Resource, ResourceExt};
use serde::Serialize;
use serde::de::DeserializeOwned;

/// A ResourceBinding or a ClusterResourceBinding.
pub trait Binding:
    Resource<DynamicType = ()>
    + HasSpec<Spec = ResourceBindingSpec>
    + HasStatus<Status = ResourceBindingStatus>
    + Clone
    + Debug
    + Serialize
    + DeserializeOwned
    + Send
    + Sync
    + 'static
{
    /// Whether this is the cluster-scoped kind.
    const CLUSTER_SCOPED: bool;
    /// The kind's name, for messages.
    const KIND: &'static str;

    /// A new object.
    fn build(name: &str, spec: ResourceBindingSpec) -> Self;

    /// The permanent-id label key of this kind (also put on its Works and member objects).
    fn permanent_id_label() -> &'static str {
        if Self::CLUSTER_SCOPED {
            labels::CLUSTER_RESOURCE_BINDING_PERMANENT_ID
        } else {
            labels::RESOURCE_BINDING_PERMANENT_ID
        }
    }

    /// The binding controller's finalizer for this kind.
    fn finalizer() -> &'static str {
        if Self::CLUSTER_SCOPED {
            finalizers::CLUSTER_RESOURCE_BINDING
        } else {
            finalizers::BINDING
        }
    }

    /// `Kind namespace/name`, for messages.
    fn describe(&self) -> String {
        match self.namespace() {
            Some(ns) if !Self::CLUSTER_SCOPED => format!("{} {ns}/{}", Self::KIND, self.name_any()),
            _ => format!("{} {}", Self::KIND, self.name_any()),
        }
    }

    /// `ResourceBinding(<ns>/<name>)` or `ClusterResourceBinding(<name>)`, as Karmada's event messages spell
    /// it.
    fn event_ref(&self) -> String {
        if Self::CLUSTER_SCOPED {
            format!("{}({})", Self::KIND, self.name_any())
        } else {
            format!(
                "{}({}/{})",
                Self::KIND,
                self.namespace().unwrap_or_default(),
                self.name_any()
            )
        }
    }

    /// Whether the binding's controlling owner is another object than the one with `uid` (a previous object
    /// of the same name, whose binding awaits garbage collection).
    fn owned_by_another(&self, uid: &str) -> bool {
        self.owner_references()
            .iter()
            .find(|o| o.controller == Some(true))
            .is_some_and(|o| o.uid != uid)
    }

    /// The permanent id, if set.
    fn permanent_id(&self) -> Option<String> {
        self.labels()
            .get(Self::permanent_id_label())
            .filter(|id| !id.is_empty())
            .cloned()
    }
}

impl Binding for ResourceBinding {
    const CLUSTER_SCOPED: bool = false;
    const KIND: &'static str = "ResourceBinding";

    fn build(name: &str, spec: ResourceBindingSpec) -> Self {
        ResourceBinding::new(name, spec)
    }
}

impl Binding for ClusterResourceBinding {
    const CLUSTER_SCOPED: bool = true;
    const KIND: &'static str = "ClusterResourceBinding";

    fn build(name: &str, spec: ResourceBindingSpec) -> Self {
        ClusterResourceBinding::new(name, spec)
    }
}
