//! What ResourceBinding and ClusterResourceBinding have in common for controllers: one trait so the detector,
//! binding, status and dependency code is written once for both kinds.

use std::fmt::Debug;
use std::sync::Arc;

use flotilla_api::names::{annotations, finalizers, labels};
use flotilla_api::work::v1alpha2::{
    ClusterResourceBinding, ResourceBinding, ResourceBindingSpec, ResourceBindingStatus,
};
use kube::core::object::{HasSpec, HasStatus};
use kube::{Api, Client, Resource, ResourceExt};
use serde::Serialize;
use serde::de::DeserializeOwned;
use tokio_util::sync::CancellationToken;

use k8s_openapi::api::core::v1::ObjectReference;

use crate::error::Result;
use crate::runtime::{Action, Controller};

/// A ResourceBinding or a ClusterResourceBinding.
pub(crate) trait BindingObject:
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

    /// An API for objects of this kind in `namespace` (ignored for the cluster-scoped kind).
    fn api(client: &Client, namespace: &str) -> Api<Self>;

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

impl BindingObject for ResourceBinding {
    const CLUSTER_SCOPED: bool = false;
    const KIND: &'static str = "ResourceBinding";

    fn build(name: &str, spec: ResourceBindingSpec) -> Self {
        ResourceBinding::new(name, spec)
    }

    fn api(client: &Client, namespace: &str) -> Api<Self> {
        Api::namespaced(client.clone(), namespace)
    }
}

impl BindingObject for ClusterResourceBinding {
    const CLUSTER_SCOPED: bool = true;
    const KIND: &'static str = "ClusterResourceBinding";

    fn build(name: &str, spec: ResourceBindingSpec) -> Self {
        ClusterResourceBinding::new(name, spec)
    }

    fn api(client: &Client, _namespace: &str) -> Api<Self> {
        Api::all(client.clone())
    }
}

/// Which binding a Work belongs to, from its annotations.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum BindingRef {
    /// ResourceBinding `namespace/name`.
    Namespaced {
        /// Namespace.
        namespace: String,
        /// Name.
        name: String,
    },
    /// ClusterResourceBinding `name`.
    Cluster {
        /// Name.
        name: String,
    },
}

impl BindingRef {
    /// The reference of `binding`.
    pub(crate) fn of<B: BindingObject>(binding: &B) -> Self {
        if B::CLUSTER_SCOPED {
            BindingRef::Cluster {
                name: binding.name_any(),
            }
        } else {
            BindingRef::Namespaced {
                namespace: binding.namespace().unwrap_or_default(),
                name: binding.name_any(),
            }
        }
    }

    /// The binding named by an object's `resourcebinding.karmada.io/*` or `clusterresourcebinding.karmada.io/name`
    /// annotations.
    pub(crate) fn from_annotations(
        map: &std::collections::BTreeMap<String, String>,
    ) -> Option<Self> {
        if let (Some(namespace), Some(name)) = (
            map.get(annotations::RESOURCE_BINDING_NAMESPACE),
            map.get(annotations::RESOURCE_BINDING_NAME),
        ) {
            return Some(BindingRef::Namespaced {
                namespace: namespace.clone(),
                name: name.clone(),
            });
        }
        map.get(annotations::CLUSTER_RESOURCE_BINDING_NAME)
            .map(|name| BindingRef::Cluster { name: name.clone() })
    }
}

impl std::fmt::Display for BindingRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BindingRef::Namespaced { namespace, name } => {
                write!(f, "ResourceBinding {namespace}/{name}")
            }
            BindingRef::Cluster { name } => write!(f, "ClusterResourceBinding {name}"),
        }
    }
}

/// Runs a controller of ResourceBindings and one of ClusterResourceBindings until `shutdown` is cancelled,
/// both reconciling with `reconcile(state, binding)`.
pub(crate) async fn run_both<C, F, Fut>(
    rb: Controller<ResourceBinding>,
    crb: Controller<ClusterResourceBinding>,
    shutdown: CancellationToken,
    state: Arc<C>,
    reconcile: F,
) where
    C: Send + Sync + 'static,
    F: Fn(Arc<C>, BindingRef) -> Fut + Clone + Send + Sync + 'static,
    Fut: Future<Output = Result<Action>> + Send + 'static,
{
    let crb_reconcile = reconcile.clone();
    tokio::join!(
        rb.run(shutdown.clone(), state.clone(), move |state, rb| {
            reconcile(state, BindingRef::of(rb.as_ref()))
        }),
        crb.run(shutdown, state, move |state, crb| {
            crb_reconcile(state, BindingRef::of(crb.as_ref()))
        }),
    );
}

/// The template a binding's `spec.resource` names, as an Event's involved object.
pub(crate) fn template_reference(spec: &ResourceBindingSpec) -> ObjectReference {
    let r = &spec.resource;
    let non_empty = |s: &str| (!s.is_empty()).then(|| s.to_owned());
    ObjectReference {
        api_version: non_empty(&r.api_version),
        kind: non_empty(&r.kind),
        namespace: non_empty(&r.namespace),
        name: non_empty(&r.name),
        uid: non_empty(&r.uid),
        resource_version: None,
        field_path: None,
    }
}
