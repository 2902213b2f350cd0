//! Container image references and the image overrider, the first of a rule's overriders.
//!
//! An image is `[registry/]repository[:tag|@digest]`, validated against the distribution reference grammar.
//! The first path segment is a registry only if it contains `.` or `:` or is `localhost` (no `docker.io`
//! normalisation), and a tag hides a digest (the two are never both kept), as Karmada's image parser does.

use std::fmt;

use flotilla_api::policy::v1alpha1::{ImageComponent, ImageOverrider, OverriderOperator};
use serde_json::Value;

use super::OverriderError;

/// The longest image name (registry and repository) the reference grammar accepts.
const NAME_MAX_LEN: usize = 255;

/// Why a string is not an image reference.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ImageParseError {
    /// The reference is empty.
    #[error("repository name must have at least one component")]
    Empty,
    /// The name has upper-case letters where the grammar only allows lower case.
    #[error("repository name must be lowercase")]
    Uppercase,
    /// The name is longer than 255 characters.
    #[error("repository name must not be more than {NAME_MAX_LEN} characters")]
    NameTooLong,
    /// The digest names an algorithm other than sha256, sha384 or sha512, or its hex has the wrong length.
    #[error("unsupported digest algorithm or invalid digest length")]
    Digest,
    /// Anything else the grammar rejects.
    #[error("invalid reference format")]
    Format,
}

/// An image reference split into the parts an ImageOverrider changes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct ImageRef {
    /// The registry host (with port), e.g. `registry.k8s.io` or `localhost:5000`; empty when none.
    pub registry: String,
    /// The repository path, e.g. `library/nginx`.
    pub repository: String,
    /// The tag, e.g. `1.25`; empty when none.
    pub tag: String,
    /// The digest, e.g. `sha256:…`; empty when none or when a tag is present.
    pub digest: String,
}

impl ImageRef {
    /// Parses an image reference.
    ///
    /// # Errors
    /// [`ImageParseError`] when the string is not a valid reference.
    pub(crate) fn parse(image: &str) -> Result<ImageRef, ImageParseError> {
        if image.is_empty() {
            return Err(ImageParseError::Empty);
        }
        let (rest, digest) = match image.split_once('@') {
            Some((rest, digest)) => (rest, Some(digest)),
            None => (image, None),
        };
        let slash = rest.rfind('/');
        let (name, tag) = match rest.rfind(':') {
            Some(colon) if slash.is_none_or(|s| colon > s) => {
                (&rest[..colon], Some(&rest[colon + 1..]))
            }
            _ => (rest, None),
        };
        let tag_ok = tag.is_none_or(is_valid_tag);
        let digest_ok = digest.is_none_or(is_valid_digest_format);
        if !tag_ok || !digest_ok || !is_valid_name(name) {
            if !name.is_empty() && is_valid_name(&name.to_ascii_lowercase()) && tag_ok && digest_ok
            {
                return Err(ImageParseError::Uppercase);
            }
            return Err(ImageParseError::Format);
        }
        if name.len() > NAME_MAX_LEN {
            return Err(ImageParseError::NameTooLong);
        }
        if let Some(d) = digest
            && !is_supported_digest(d)
        {
            return Err(ImageParseError::Digest);
        }
        let (registry, repository) = split_registry(name);
        Ok(ImageRef {
            registry: registry.to_owned(),
            repository: repository.to_owned(),
            tag: tag.unwrap_or_default().to_owned(),
            // A tagged reference drops its digest, as Karmada's parser keeps only one of them.
            digest: if tag.is_some() {
                String::new()
            } else {
                digest.unwrap_or_default().to_owned()
            },
        })
    }

    /// The tag, or the digest when there is no tag.
    pub(crate) fn tag_or_digest(&self) -> &str {
        if self.tag.is_empty() {
            &self.digest
        } else {
            &self.tag
        }
    }

    /// Sets the tag when `value` is a valid tag, else the digest when it is a valid digest; otherwise
    /// leaves the reference unchanged.
    pub(crate) fn set_tag_or_digest(&mut self, value: &str) {
        if is_valid_tag(value) {
            self.tag = value.to_owned();
            self.digest.clear();
        } else if is_valid_digest_format(value) {
            self.digest = value.to_owned();
            self.tag.clear();
        }
    }

    /// Removes the tag, or the digest when there is no tag.
    pub(crate) fn remove_tag_or_digest(&mut self) {
        if self.tag.is_empty() {
            self.digest.clear();
        } else {
            self.tag.clear();
        }
    }

    /// Applies one overrider to this reference. An operator this version does not know leaves the component
    /// as it is, and a component it does not know is refused, as Karmada does.
    ///
    /// # Errors
    /// [`OverriderError::UnknownImageComponent`] for a component this version does not know.
    pub(crate) fn apply(&mut self, overrider: &ImageOverrider) -> Result<(), OverriderError> {
        let value = overrider.value.as_str();
        match (&overrider.component, &overrider.operator) {
            (ImageComponent::Registry, OverriderOperator::Add) => self.registry.push_str(value),
            (ImageComponent::Registry, OverriderOperator::Replace) => {
                self.registry = value.to_owned()
            }
            (ImageComponent::Registry, OverriderOperator::Remove) => self.registry.clear(),
            (ImageComponent::Repository, OverriderOperator::Add) => self.repository.push_str(value),
            (ImageComponent::Repository, OverriderOperator::Replace) => {
                self.repository = value.to_owned();
            }
            (ImageComponent::Repository, OverriderOperator::Remove) => self.repository.clear(),
            (ImageComponent::Tag, OverriderOperator::Add) => {
                let appended = format!("{}{value}", self.tag_or_digest());
                self.set_tag_or_digest(&appended);
            }
            (ImageComponent::Tag, OverriderOperator::Replace) => self.set_tag_or_digest(value),
            (ImageComponent::Tag, OverriderOperator::Remove) => self.remove_tag_or_digest(),
            (
                ImageComponent::Registry | ImageComponent::Repository | ImageComponent::Tag,
                OverriderOperator::Other(_),
            ) => {}
            (ImageComponent::Other(component), _) => {
                return Err(OverriderError::UnknownImageComponent {
                    component: component.clone(),
                });
            }
        }
        Ok(())
    }
}

impl fmt::Display for ImageRef {
    /// `registry/repository:tag`, `registry/repository@digest` or `repository`, each part only when set.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.registry.is_empty() {
            write!(f, "{}/", self.registry)?;
        }
        f.write_str(&self.repository)?;
        if !self.tag.is_empty() {
            write!(f, ":{}", self.tag)
        } else if !self.digest.is_empty() {
            write!(f, "@{}", self.digest)
        } else {
            Ok(())
        }
    }
}

/// The JSON pointers of the container images an overrider without predicate changes, or none for kinds it
/// leaves alone. Init containers are never touched.
pub(super) fn default_image_paths(object: &Value) -> Vec<String> {
    let prefix = match object.get("kind").and_then(Value::as_str) {
        Some("Pod") => "/spec",
        Some("ReplicaSet" | "Deployment" | "DaemonSet" | "StatefulSet" | "Job") => {
            "/spec/template/spec"
        }
        _ => return Vec::new(),
    };
    let count = object
        .pointer(&format!("{prefix}/containers"))
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    (0..count)
        .map(|i| format!("{prefix}/containers/{i}/image"))
        .collect()
}

/// Splits a validated name into registry and repository.
fn split_registry(name: &str) -> (&str, &str) {
    match name.split_once('/') {
        Some((first, rest)) if first.contains(['.', ':']) || first == "localhost" => (first, rest),
        _ => ("", name),
    }
}

/// `[\w][\w.-]{0,127}`.
fn is_valid_tag(tag: &str) -> bool {
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut chars = tag.chars();
    chars.next().is_some_and(word)
        && tag.len() <= 128
        && chars.all(|c| word(c) || c == '.' || c == '-')
}

/// `[A-Za-z][A-Za-z0-9]*([-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}`.
fn is_valid_digest_format(digest: &str) -> bool {
    let Some((algorithm, hex)) = digest.split_once(':') else {
        return false;
    };
    let component_ok = |c: &str| {
        let mut chars = c.chars();
        chars.next().is_some_and(|c| c.is_ascii_alphabetic())
            && chars.all(|c| c.is_ascii_alphanumeric())
    };
    hex.len() >= 32
        && hex.chars().all(|c| c.is_ascii_hexdigit())
        && algorithm.split(['-', '_', '+', '.']).all(component_ok)
}

/// Whether the digest names an algorithm the registry library knows, with hex of the right length.
fn is_supported_digest(digest: &str) -> bool {
    let Some((algorithm, hex)) = digest.split_once(':') else {
        return false;
    };
    let len = match algorithm {
        "sha256" => 64,
        "sha384" => 96,
        "sha512" => 128,
        _ => return false,
    };
    hex.len() == len
        && hex
            .chars()
            .all(|c| c.is_ascii_digit() || ('a'..='f').contains(&c))
}

/// `[domain/]path` of the reference grammar.
fn is_valid_name(name: &str) -> bool {
    if is_valid_path(name) {
        return true;
    }
    name.split_once('/')
        .is_some_and(|(domain, path)| is_valid_domain(domain) && is_valid_path(path))
}

/// `path-component ('/' path-component)*` with `path-component := [a-z0-9]+ (separator [a-z0-9]+)*` and
/// `separator := [_.] | __ | -+`.
fn is_valid_path(path: &str) -> bool {
    path.split('/').all(|component| {
        let bytes = component.as_bytes();
        let alnum = |b: u8| b.is_ascii_lowercase() || b.is_ascii_digit();
        if bytes.is_empty() || !alnum(bytes[0]) || !alnum(bytes[bytes.len() - 1]) {
            return false;
        }
        let mut i = 0;
        while i < bytes.len() {
            if alnum(bytes[i]) {
                i += 1;
                continue;
            }
            let start = i;
            while i < bytes.len() && !alnum(bytes[i]) {
                i += 1;
            }
            let sep = &component[start..i];
            let ok = sep == "." || sep == "_" || sep == "__" || sep.bytes().all(|b| b == b'-');
            if !ok {
                return false;
            }
        }
        true
    })
}

/// `host [':' port]` where host is dot-separated `[a-zA-Z0-9]([a-zA-Z0-9-]*[a-zA-Z0-9])?` labels or a
/// bracketed IPv6 address.
fn is_valid_domain(domain: &str) -> bool {
    let (host, port) = if let Some(stripped) = domain.strip_prefix('[') {
        match stripped.split_once(']') {
            Some((ip, rest)) => {
                if ip.is_empty() || !ip.chars().all(|c| c.is_ascii_hexdigit() || c == ':') {
                    return false;
                }
                match rest.strip_prefix(':') {
                    Some(port) => ("[ipv6]", Some(port)),
                    None if rest.is_empty() => ("[ipv6]", None),
                    None => return false,
                }
            }
            None => return false,
        }
    } else {
        match domain.split_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (domain, None),
        }
    };
    if port.is_some_and(|p| p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit())) {
        return false;
    }
    host == "[ipv6]"
        || host.split('.').all(|label| {
            let b = label.as_bytes();
            !b.is_empty()
                && b[0].is_ascii_alphanumeric()
                && b[b.len() - 1].is_ascii_alphanumeric()
                && b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'-')
        })
}
