//! How stored objects are named: a resource by its group and plural ([`ResKey`], the same for every version
//! the resource is served at), an object by its resource, namespace and name ([`ObjRef`]).

/// Identity of a stored resource across versions: (group, plural).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ResKey {
    /// API group.
    pub group: String,
    /// Plural resource name.
    pub plural: String,
}

impl ResKey {
    /// Builds a key.
    pub fn new(group: &str, plural: &str) -> Self {
        Self {
            group: group.into(),
            plural: plural.into(),
        }
    }
}

/// Namespace-then-name key of an object inside one resource.
pub type ObjKey = (String, String);

/// The [`ObjKey`] of a stored object (empty strings for what its metadata lacks): the order lists are served in.
pub fn obj_key(object: &serde_json::Value) -> ObjKey {
    let field = |k: &str| {
        object
            .pointer(&format!("/metadata/{k}"))
            .and_then(serde_json::Value::as_str)
            .unwrap_or("")
            .to_owned()
    };
    (field("namespace"), field("name"))
}

/// A reference to one stored object.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ObjRef {
    /// Resource.
    pub res: ResKey,
    /// Namespace (`""` for cluster-scoped).
    pub namespace: String,
    /// Name.
    pub name: String,
}
