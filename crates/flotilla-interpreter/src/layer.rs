//! The contract every interpreter layer keeps: one request type, one response type, and the three-valued
//! (result, handled, error) answer of Karmada's layers: an error stops the dispatch, a handled result is the answer
//! (even an empty one), and an unhandled call passes to the next layer.
//!
//! Layers take owned JSON so that Lua evaluation can move the request to a blocking thread.

use std::fmt;

use flotilla_api::config::v1alpha1::{DependentObjectReference, InterpreterOperation};
use flotilla_api::work::v1alpha2::{AggregatedStatusItem, Component, ReplicaRequirements};
use futures::future::BoxFuture;
use kube::core::GroupVersionKind;
use serde_json::Value;

use crate::Error;

/// One interpreter call with its inputs.
#[derive(Clone, Debug, PartialEq)]
pub enum Request {
    /// InterpretReplica: replicas and per-replica requirements of `object`.
    InterpretReplica {
        /// The template.
        object: Value,
    },
    /// InterpretComponent: the pod-template components of `object`.
    InterpretComponent {
        /// The template.
        object: Value,
    },
    /// ReviseReplica: `object` with its replica count set to `replicas`.
    ReviseReplica {
        /// A copy of the template.
        object: Value,
        /// The replicas assigned to one cluster.
        replicas: i64,
    },
    /// Retain: `desired` keeping the fields member-side controllers own in `observed`.
    Retain {
        /// What Flotilla wants in the member (after generic retention).
        desired: Value,
        /// What the member holds now.
        observed: Value,
    },
    /// AggregateStatus: `object` with its status folded from `items`.
    AggregateStatus {
        /// The template, with its current status.
        object: Value,
        /// One item per member cluster, sorted by cluster name.
        items: Vec<AggregatedStatusItem>,
    },
    /// InterpretStatus: the status to reflect from the member object.
    InterpretStatus {
        /// The member object.
        object: Value,
    },
    /// InterpretHealth: whether the member object is healthy.
    InterpretHealth {
        /// The member object.
        object: Value,
    },
    /// InterpretDependency: objects the template depends on.
    InterpretDependency {
        /// The template.
        object: Value,
    },
}

impl Request {
    /// The operation this request asks for.
    pub fn operation(&self) -> InterpreterOperation {
        match self {
            Request::InterpretReplica { .. } => InterpreterOperation::InterpretReplica,
            Request::InterpretComponent { .. } => InterpreterOperation::InterpretComponent,
            Request::ReviseReplica { .. } => InterpreterOperation::ReviseReplica,
            Request::Retain { .. } => InterpreterOperation::Retain,
            Request::AggregateStatus { .. } => InterpreterOperation::AggregateStatus,
            Request::InterpretStatus { .. } => InterpreterOperation::InterpretStatus,
            Request::InterpretHealth { .. } => InterpreterOperation::InterpretHealth,
            Request::InterpretDependency { .. } => InterpreterOperation::InterpretDependency,
        }
    }

    /// The object whose kind selects the rule (the desired object for Retain).
    pub fn object(&self) -> &Value {
        match self {
            Request::InterpretReplica { object }
            | Request::InterpretComponent { object }
            | Request::ReviseReplica { object, .. }
            | Request::AggregateStatus { object, .. }
            | Request::InterpretStatus { object }
            | Request::InterpretHealth { object }
            | Request::InterpretDependency { object } => object,
            Request::Retain { desired, .. } => desired,
        }
    }

    /// The object's group, version and kind, from its own `apiVersion` and `kind`.
    pub fn gvk(&self) -> Result<GroupVersionKind, Error> {
        gvk_of(self.object())
    }
}

/// A [`Request`] with what its type cannot say: for AggregateStatus, whether the status items are absent rather
/// than an empty list. Lua scripts see the difference (`nil` or an empty table); the testdata format and
/// `flotilla interpret --status-file` can say it, as karmadactl's inputs can.
#[derive(Clone, Debug, PartialEq)]
pub struct Input {
    request: Request,
    items_absent: bool,
}

impl From<Request> for Input {
    /// Controllers pass an empty item list when a binding has no status items; Karmada passes `nil` then (the
    /// binding's list is omitted when empty).
    fn from(request: Request) -> Self {
        let items_absent =
            matches!(&request, Request::AggregateStatus { items, .. } if items.is_empty());
        Input {
            request,
            items_absent,
        }
    }
}

impl Input {
    /// AggregateStatus with `items` as given: `None` reaches the script as `nil`, `Some(vec![])` as an empty table.
    pub fn aggregate_status(object: Value, items: Option<Vec<AggregatedStatusItem>>) -> Input {
        Input {
            items_absent: items.is_none(),
            request: Request::AggregateStatus {
                object,
                items: items.unwrap_or_default(),
            },
        }
    }

    /// The request.
    pub fn request(&self) -> &Request {
        &self.request
    }

    /// The operation.
    pub fn operation(&self) -> InterpreterOperation {
        self.request.operation()
    }

    /// The object whose kind selects the rule (the desired object for Retain).
    pub fn object(&self) -> &Value {
        self.request.object()
    }

    /// The request, for layers that cannot tell absent status items from an empty list.
    pub fn into_request(self) -> Request {
        self.request
    }

    /// Whether AggregateStatus's status items are absent (`nil` for a script) rather than an empty list.
    pub fn items_absent(&self) -> bool {
        self.items_absent
    }
}

/// Group, version and kind of a JSON object, from its `apiVersion` and `kind` fields.
pub fn gvk_of(object: &Value) -> Result<GroupVersionKind, Error> {
    let api_version = object
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let kind = object
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if kind.is_empty() {
        return Err(Error::MissingKind);
    }
    let (group, version) = match api_version.split_once('/') {
        Some((group, version)) => (group, version),
        None => ("", api_version),
    };
    Ok(GroupVersionKind::gvk(group, version, kind))
}

/// A layer's answer to a handled request.
#[derive(Clone, Debug, PartialEq)]
pub enum Response {
    /// InterpretReplica.
    Replicas {
        /// Replica count.
        replicas: i32,
        /// What one replica needs; `None` when nothing is required.
        requirements: Option<ReplicaRequirements>,
    },
    /// InterpretComponent.
    Components(Vec<Component>),
    /// ReviseReplica, Retain and AggregateStatus: the resulting object.
    Object(Value),
    /// InterpretStatus: the status to reflect; `None` when there is none.
    Status(Option<Value>),
    /// InterpretHealth.
    Healthy(bool),
    /// InterpretDependency.
    Dependencies(Vec<DependentObjectReference>),
}

/// The four layers, highest precedence first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum LayerKind {
    /// User ResourceInterpreterCustomizations (Lua).
    Customization,
    /// User ResourceInterpreterWebhookConfigurations.
    Webhook,
    /// Customizations bundled in the binary (Lua).
    ThirdParty,
    /// Built-in handlers for Kubernetes kinds.
    Native,
}

impl LayerKind {
    /// Every layer in dispatch order.
    pub const ORDER: [LayerKind; 4] = [
        LayerKind::Customization,
        LayerKind::Webhook,
        LayerKind::ThirdParty,
        LayerKind::Native,
    ];

    /// Lower-case name used in metrics labels, events and `--explain` (`customization`, `webhook`,
    /// `third-party`, `native`).
    pub fn as_str(self) -> &'static str {
        match self {
            LayerKind::Customization => "customization",
            LayerKind::Webhook => "webhook",
            LayerKind::ThirdParty => "third-party",
            LayerKind::Native => "native",
        }
    }
}

impl fmt::Display for LayerKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Whether a layer has a rule for an operation on a kind, and if so which (for `--explain`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Handles {
    /// The layer answers; the string names the rule (customization name, webhook id, bundled document or
    /// native handler).
    Yes(String),
    /// The layer does not answer; the string says why (e.g. "no customization for apps/v1 Deployment").
    No(String),
}

/// One interpreter layer.
///
/// Guarantees asked of implementors: `handles` is cheap and does no I/O; `interpret` is only called after
/// `handles` said yes for the request's kind and operation; a layer never falls back to another layer itself.
pub trait Layer: Send + Sync {
    /// Which layer this is.
    fn kind(&self) -> LayerKind;

    /// Whether this layer has a rule for the kind and operation (and so its part of `HookEnabled`).
    fn handles(&self, gvk: &GroupVersionKind, operation: &InterpreterOperation) -> Handles;

    /// Run the rule for `request`.
    fn interpret(&self, request: Request) -> BoxFuture<'_, Result<Response, Error>>;

    /// Run the rule for `input`, which may say that AggregateStatus's items were given as an empty list rather
    /// than not at all. Layers that cannot tell the two apart answer as for the request alone.
    fn interpret_input(&self, input: Input) -> BoxFuture<'_, Result<Response, Error>> {
        self.interpret(input.into_request())
    }
}
