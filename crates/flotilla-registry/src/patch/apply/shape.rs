//! What server-side apply needs to know about each node of an object: granular or atomic maps, and the list
//! type (atomic, set, or map keyed by some fields).
//!
//! Built-in kinds reuse the strategic-merge-patch table (a merge-keyed list is a list-map, a merged list of
//! scalars is a set, every other list is atomic) plus the handful of atomic structs (label selectors, node
//! selectors, RBAC bindings' `roleRef`). Custom resources read `x-kubernetes-list-type`, `x-kubernetes-list-map-keys` and
//! `x-kubernetes-map-type` from their CRD schema; `metadata` always follows ObjectMeta's rules.

use crate::kind_info::KindInfo;
use crate::patch::strategic::schema::{self, Strategy, Ty};
use serde_json::Value;

/// How a list's elements are identified.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ListType {
    /// The whole list is one value.
    Atomic,
    /// Scalars identified by value.
    Set,
    /// Maps identified by these key fields.
    Map(Vec<String>),
}

/// The schema at one node.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Shape<'a> {
    /// A built-in type, and the strategy of the field that holds it.
    Builtin {
        ty: Ty,
        strategy: Strategy,
        atomic: bool,
    },
    /// A node of a CRD's structural schema.
    Crd(&'a Value),
    /// No schema: maps are granular, lists atomic.
    Unknown,
}

/// Default values upstream's schemas give list-map key fields, so `{containerPort: 80}` and
/// `{containerPort: 80, protocol: TCP}` name the same element.
pub(crate) fn key_default(field: &str) -> Option<Value> {
    (field == "protocol").then(|| Value::String("TCP".to_string()))
}

impl<'a> Shape<'a> {
    /// The shape of a whole object of `kind`.
    pub(super) fn root(kind: &KindInfo<'a>) -> Self {
        match kind.crd_schema() {
            Some(schema) => Shape::Crd(schema),
            None if kind.is_custom() => Shape::Unknown,
            None => Shape::Builtin {
                ty: schema::root(kind.group, kind.kind),
                strategy: Strategy::Default,
                atomic: false,
            },
        }
    }

    /// The shape of field `name` of the map at this node.
    pub(super) fn field(&self, name: &str, at_root: bool) -> Shape<'a> {
        match *self {
            Shape::Builtin { ty, .. } => {
                let (child, strategy) = schema::field(ty, name);
                let atomic = matches!(
                    name,
                    "selector" | "labelSelector" | "namespaceSelector" | "nodeSelector" | "roleRef"
                );
                Shape::Builtin {
                    ty: child,
                    strategy,
                    atomic,
                }
            }
            Shape::Crd(node) => {
                if at_root && name == "metadata" {
                    return Shape::Builtin {
                        ty: Ty::Meta,
                        strategy: Strategy::Default,
                        atomic: false,
                    };
                }
                let props = node.get("properties").and_then(|p| p.get(name));
                let additional = node.get("additionalProperties").filter(|a| a.is_object());
                match props.or(additional) {
                    Some(child) => Shape::Crd(child),
                    None => Shape::Unknown,
                }
            }
            Shape::Unknown => Shape::Unknown,
        }
    }

    /// The shape of the elements of the list at this node.
    pub(super) fn element(&self) -> Shape<'a> {
        match *self {
            Shape::Builtin { ty, .. } => Shape::Builtin {
                ty,
                strategy: Strategy::Default,
                atomic: false,
            },
            Shape::Crd(node) => node.get("items").map_or(Shape::Unknown, Shape::Crd),
            Shape::Unknown => Shape::Unknown,
        }
    }

    /// The list type of the list at this node.
    pub(super) fn list_type(&self) -> ListType {
        match *self {
            Shape::Builtin {
                strategy: Strategy::Merge(Some(key)),
                ..
            } => {
                // Server-side apply identifies ports and spread constraints by more fields than SMP does.
                let keys: &[&str] = match key {
                    "containerPort" => &["containerPort", "protocol"],
                    "port" => &["port", "protocol"],
                    "topologyKey" => &["topologyKey", "whenUnsatisfiable"],
                    other => return ListType::Map(vec![other.to_string()]),
                };
                ListType::Map(keys.iter().map(|k| (*k).to_string()).collect())
            }
            Shape::Builtin {
                strategy: Strategy::Merge(None),
                ..
            } => ListType::Set,
            Shape::Builtin { .. } | Shape::Unknown => ListType::Atomic,
            Shape::Crd(node) => match node.get("x-kubernetes-list-type").and_then(Value::as_str) {
                Some("set") => ListType::Set,
                Some("map") => {
                    let keys = node
                        .get("x-kubernetes-list-map-keys")
                        .and_then(Value::as_array);
                    ListType::Map(
                        keys.into_iter()
                            .flatten()
                            .filter_map(Value::as_str)
                            .map(str::to_string)
                            .collect(),
                    )
                }
                _ => ListType::Atomic,
            },
        }
    }

    /// Whether the map at this node is one value (owned and replaced as a whole).
    pub(super) fn atomic_map(&self) -> bool {
        match *self {
            Shape::Builtin { atomic, .. } => atomic,
            Shape::Crd(node) => {
                node.get("x-kubernetes-map-type").and_then(Value::as_str) == Some("atomic")
                    || node.get("x-kubernetes-int-or-string").is_some()
            }
            Shape::Unknown => false,
        }
    }
}
