//! Names Karmada derives from objects (its `pkg/util/names`): binding names, Work names, execution namespaces and
//! the dependency reference key.
//!
//! Invariants: every function here is pure and total; the hashes are FNV-1a-32 over the exact ASCII input and
//! the encoding is apimachinery's `SafeEncodeString`, so names equal the ones Karmada writes for the same object.

use flotilla_api::names::{labels, namespaces};

/// The 27-letter alphabet of apimachinery's `SafeEncodeString`: no vowels and no easily confused characters.
const SAFE_ALPHABET: &[u8; 27] = b"bcdfghjklmnpqrstvwxz2456789";

/// FNV-1a-32 offset basis.
const FNV32_OFFSET: u32 = 0x811c_9dc5;
/// FNV-1a-32 prime.
const FNV32_PRIME: u32 = 0x0100_0193;

/// A name that should have been derived from a cluster's execution namespace was not one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("namespace {namespace:?} is not an execution namespace (missing prefix {prefix:?})")]
pub struct NotExecutionSpace {
    /// The namespace given.
    pub namespace: String,
    /// The prefix it lacks.
    pub prefix: &'static str,
}

/// FNV-1a-32 of `bytes`, as Go's `hash/fnv.New32a`.
///
/// The `fnv` crate only offers the 64-bit variant, and Karmada's names and tie-breaks need the 32-bit one.
pub(crate) fn fnv1a_32(bytes: &[u8]) -> u32 {
    bytes.iter().fold(FNV32_OFFSET, |hash, byte| {
        (hash ^ u32::from(*byte)).wrapping_mul(FNV32_PRIME)
    })
}

/// apimachinery's `SafeEncodeString`: every byte `c` becomes `alphabet[c mod 27]`.
///
/// Guarantees: the output has as many characters as `s` has bytes, all from the safe alphabet.
pub(crate) fn safe_encode(s: &str) -> String {
    s.bytes()
        .map(|byte| char::from(SAFE_ALPHABET[usize::from(byte) % SAFE_ALPHABET.len()]))
        .collect()
}

/// The hash suffix Karmada appends to derived names: `SafeEncode(decimal(FNV-1a-32(input)))`.
pub(crate) fn hash_suffix(input: &str) -> String {
    safe_encode(&fnv1a_32(input.as_bytes()).to_string())
}

/// A name with every `:` replaced by `.`, as Karmada does before deriving names (`system:foo` → `system.foo`).
fn dotted(name: &str) -> String {
    name.replace(':', ".")
}

/// The name of the ResourceBinding or ClusterResourceBinding of a template: lowercase(`<name>-<kind>`) after
/// replacing every `:` in the name with `.`.
///
/// Guarantees: deterministic; `binding_name("Deployment", "nginx") == "nginx-deployment"`.
pub fn binding_name(kind: &str, name: &str) -> String {
    format!("{}-{kind}", dotted(name)).to_lowercase()
}

/// The name of the Work that carries object `namespace/name` of `kind` (namespace empty for cluster-scoped
/// objects): `<n>-<hash>` with `n` = lowercase(name with `:`→`.`) and the hash over lowercase
/// `<namespace>-<n>-<kind>` (or `<n>-<kind>` when cluster scoped).
///
/// The same name is used in every execution namespace. Callers pass the kind, name and namespace of the
/// manifest *after* overrides.
///
/// Guarantees: `work_name("Deployment", "nginx", "default") == "nginx-687f7fb96f"`.
pub fn work_name(kind: &str, name: &str, namespace: &str) -> String {
    let n = dotted(name).to_lowercase();
    let hashed = if namespace.is_empty() {
        format!("{n}-{kind}")
    } else {
        format!("{namespace}-{n}-{kind}")
    }
    .to_lowercase();
    format!("{n}-{}", hash_suffix(&hashed))
}

/// The cluster an execution namespace belongs to (the namespace without its `karmada-es-` prefix).
///
/// # Errors
/// [`NotExecutionSpace`] when the namespace lacks the prefix.
pub fn cluster_of_execution_namespace(namespace: &str) -> Result<&str, NotExecutionSpace> {
    namespaces::cluster_of_execution_space(namespace).ok_or_else(|| NotExecutionSpace {
        namespace: namespace.to_owned(),
        prefix: namespaces::EXECUTION_SPACE_PREFIX,
    })
}

/// The key identifying an independent binding in its attached bindings' labels:
/// `SafeEncode(decimal(FNV-1a-32("<namespace>/<name>")))`, or of `<name>` alone for a ClusterResourceBinding
/// (empty namespace).
///
/// Guarantees: `binding_reference_key("default", "nginx-deployment") == "5bdc5c4dcf"`.
pub(crate) fn binding_reference_key(namespace: &str, name: &str) -> String {
    if namespace.is_empty() {
        hash_suffix(name)
    } else {
        hash_suffix(&format!("{namespace}/{name}"))
    }
}

/// The label an attached (dependency) binding carries for the independent binding `namespace/name`:
/// `resourcebinding.karmada.io/depended-by-<key>`; its value is the independent binding's permanent id.
pub fn depended_by_label_key(namespace: &str, name: &str) -> String {
    format!(
        "{}{}",
        labels::DEPENDED_BY_PREFIX,
        binding_reference_key(namespace, name)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1a_32_matches_known_vectors() {
        assert_eq!(fnv1a_32(b""), 0x811c_9dc5);
        assert_eq!(fnv1a_32(b"a"), 0xe40c_292c);
        assert_eq!(fnv1a_32(b"foobar"), 0xbf9c_f968);
        assert_eq!(fnv1a_32(b"default-nginx-deployment"), 2_439_396_529);
    }

    #[test]
    fn safe_encode_maps_digits_as_apimachinery() {
        assert_eq!(safe_encode("0123456789"), "456789bcdf");
        assert_eq!(safe_encode(""), "");
    }

    #[test]
    fn binding_names() {
        for (kind, name, want) in [
            ("Deployment", "nginx", "nginx-deployment"),
            ("ClusterRole", "system:foo", "system.foo-clusterrole"),
            ("Workload", "My-App", "my-app-workload"),
        ] {
            assert_eq!(binding_name(kind, name), want, "{kind} {name}");
        }
    }

    #[test]
    fn work_names_match_karmada_docs() {
        assert_eq!(
            work_name("Deployment", "nginx", "default"),
            "nginx-687f7fb96f"
        );
        assert_eq!(work_name("Namespace", "foo", ""), "foo-5dbdc7b59c");
        // Case and `:` are normalised before hashing, so these name the same Work.
        assert_eq!(
            work_name("ClusterRole", "system:foo", ""),
            work_name("clusterrole", "system.foo", "")
        );
        assert!(work_name("ClusterRole", "system:foo", "").starts_with("system.foo-"));
    }

    #[test]
    fn execution_namespaces_round_trip() {
        assert_eq!(
            flotilla_api::names::namespaces::execution_space("member1"),
            "karmada-es-member1"
        );
        assert_eq!(
            cluster_of_execution_namespace("karmada-es-member1"),
            Ok("member1")
        );
        let err = cluster_of_execution_namespace("default").unwrap_err();
        assert_eq!(err.namespace, "default");
    }

    #[test]
    fn depended_by_keys() {
        assert_eq!(
            binding_reference_key("default", "nginx-deployment"),
            "5bdc5c4dcf"
        );
        assert_eq!(
            depended_by_label_key("default", "nginx-deployment"),
            "resourcebinding.karmada.io/depended-by-5bdc5c4dcf"
        );
        assert_eq!(binding_reference_key("", "crb"), hash_suffix("crb"));
    }
}
