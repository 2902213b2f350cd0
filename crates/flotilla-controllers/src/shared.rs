//! The handles one process creates once for its controllers: the control plane's client and informers, member
//! access, discovery, the interpreter, the Event sink and the reconcile runtime. The manager and the agent build
//! one; each controller's `Context::new` takes from it (and from the [`Options`]) only what that controller uses.

use std::sync::Arc;

use flotilla_api::names::events;
use k8s_openapi::api::core::v1::ObjectReference;
use kube::Client;

use crate::events::EventSink;
use crate::features::Feature;
use crate::interpreter::Interpreter;
use crate::member::Members;
use crate::metrics::Metrics;
use crate::options::Options;
use crate::resources::Resources;
use crate::runtime::{Informers, Runtime, UndecodableHook, UndecodableObject};
use crate::templates::Templates;

/// What every controller works with: the control plane's client and its shared informers, where Events go, and
/// how reconciles run (cheap to clone: each is a handle).
#[derive(Clone)]
pub(crate) struct ControlPlane {
    /// Client of the control-plane API server (the "karmada-apiserver").
    pub client: Client,
    /// Informers on the control plane, shared between controllers.
    pub informers: Informers,
    /// Where Events go.
    pub events: EventSink,
    /// How reconciles run: workers, backoff, metrics.
    pub runtime: Runtime,
}

/// The handles every controller of a process draws from (cheap to clone: each is a handle).
#[derive(Clone)]
pub(crate) struct Shared {
    /// The control plane.
    pub control: ControlPlane,
    /// The resource interpreter (every layer, in precedence order).
    pub interpreter: Arc<dyn Interpreter>,
    /// Served resources of the control plane (discovery), refreshed as CRDs come and go.
    pub resources: Resources,
    /// Clients and informers of member clusters.
    pub members: Members,
}

impl Shared {
    /// The handles over the control plane of `client`, with member access as `options` sets it; `events`
    /// decides where Events go.
    pub(crate) fn new(
        client: Client,
        interpreter: Arc<dyn Interpreter>,
        events: EventSink,
        metrics: Metrics,
        options: &Options,
    ) -> Self {
        let report = report_undecodable(&events, &metrics);
        interpreter.report_undecodable_to(&report);
        Shared {
            resources: Resources::new(client.clone()),
            members: Members::new(
                client.clone(),
                options.member_request_timeout,
                options.cluster_api,
                options.write_fence.clone(),
            ),
            control: ControlPlane {
                informers: Informers::new(client.clone(), "control-plane")
                    .reporting_undecodable(report),
                runtime: Runtime {
                    workers: options.workers,
                    backoff: options.backoff,
                    metrics,
                    priority_queue: options
                        .feature_gates
                        .enabled(Feature::ControllerPriorityQueue),
                },
                client,
                events,
            },
            interpreter,
        }
    }

    /// Templates of any kind, through these informers and served resources.
    pub(crate) fn templates(&self) -> Templates {
        Templates {
            informers: self.control.informers.clone(),
            resources: self.resources.clone(),
        }
    }
}

/// What the control plane's informers do with an object they cannot read, besides logging it: count it, and
/// put a Warning Event on it, where `kubectl describe` shows the user which field to fix.
fn report_undecodable(events: &EventSink, metrics: &Metrics) -> UndecodableHook {
    let (recorder, metrics) = (events.recorder("informer"), metrics.clone());
    Arc::new(move |undecodable: &UndecodableObject<'_>| {
        metrics.count_undecodable(undecodable.informer);
        let meta = &undecodable.object.meta;
        let reference = ObjectReference {
            api_version: Some(undecodable.api_version.to_owned()),
            kind: Some(undecodable.kind.to_owned()),
            namespace: meta.namespace.clone(),
            name: meta.name.clone(),
            uid: meta.uid.clone(),
            ..ObjectReference::default()
        };
        recorder.warning(
            &reference,
            events::OBJECT_UNDECODABLE,
            format!(
                "Flotilla cannot read this object and leaves it out: {}",
                undecodable.object.error
            ),
        );
    })
}
