//! The verbs discovery lists, as k8s.io/apiserver derives them from the storage interfaces a resource's
//! registry implements.

/// A resource served by a generic registry store (every built-in and custom resource).
pub const STORE: [&str; 8] = [
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
];

/// A `status` (or `scale`, `approval`) subresource: get, update and patch of its part of the object.
pub const SUBRESOURCE: [&str; 3] = ["get", "patch", "update"];
