//! ResourceBindings and ClusterResourceBindings as the controllers handle them: [`BindingObject`] adds the API to
//! `flotilla_core`'s [`Binding`] so the detector, binding, status and dependency code is written once for both
//! kinds; [`BindingRef`] names the binding a Work belongs to; [`run_both`] runs a controller of each kind.

use std::sync::Arc;

use flotilla_api::names::annotations;
use flotilla_api::work::v1alpha2::{ClusterResourceBinding, ResourceBinding, ResourceBindingSpec};
use flotilla_core::bindings::Binding;
use kube::{Api, Client, ResourceExt};
use tokio_util::sync::CancellationToken;

use k8s_openapi::api::core::v1::ObjectReference;

use crate::error::Result;
use crate::runtime::{Action, Controller};

/// A [`Binding`] the controllers read and write through the API.
pub(crate) trait BindingObject: Binding {
    /// An API for objects of this kind in `namespace` (ignored for the cluster-scoped kind).
    fn api(client: &Client, namespace: &str) -> Api<Self>;
}

impl BindingObject for ResourceBinding {
    fn api(client: &Client, namespace: &str) -> Api<Self> {
        Api::namespaced(client.clone(), namespace)
    }
}

impl BindingObject for ClusterResourceBinding {
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
