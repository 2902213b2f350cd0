//! The one table of built-in resources: everything the server knows about a built-in kind that the
//! generic pipeline cannot read from a CRD, in one entry per served group/version/kind.
//!
//! An entry names its catalogue and discovery facts ([`Resource`]), its typed model for decoding ([`Typed`],
//! `crate::typed`), the shape strategic merge patch and server-side apply walk from its root ([`MergeShape`],
//! `crate::patch`), its protobuf message ([`Protobuf`], `crate::protobuf`), its table printer ([`Printer`],
//! `crate::table`), its defaulting and zero status ([`Defaults`], [`ZeroStatus`], `crate::defaults`) and its
//! name syntax ([`NameRule`], `crate::validation`).
//! The modules keep the behaviour (a printer's columns and cells, a round trip, a merge graph, a defaulting
//! function); the table says which applies to which kind, and the modules look the kind up here.
//!
//! Invariant: adding a built-in is one entry (plus whatever behaviour it needs in the modules). Every part is a
//! required field, so an entry that forgets one does not compile, and a part a kind lacks is said explicitly
//! (`Typed::None`, `Protobuf::None`, `Printer::Default`, `MergeShape::Object`, `Defaults::None`,
//! `ZeroStatus::None`, `NameRule::Dns1123Subdomain`). `tests.rs` checks every entry against the catalogue and
//! discovery, each part against the type it names, and exercises each part on the kind.
//!
//! Per-kind write hooks (`crate::write::hooks`: Namespace lifecycle, CRDs, Event views, HPA views, CSRs), field
//! selectors (`crate::fields`) and the internal controllers stay keyed by kind in their modules: they are
//! behaviour of a few kinds, not parts every kind has.

use std::sync::LazyLock;

use crate::kind_info::KindInfo;

pub mod access;
pub(crate) mod core;
mod parts;
pub(crate) mod platform;
pub(crate) mod workloads;

pub(crate) use crate::defaults::Defaults;
pub(crate) use crate::defaults::status::ZeroStatus;
pub(crate) use crate::protobuf::Protobuf;
pub(crate) use crate::typed::Typed;
pub(crate) use crate::validation::NameRule;
pub(crate) use parts::{Columns, MergeShape};

/// One built-in resource at one served version.
#[derive(Debug, Clone, Copy)]
pub struct Builtin {
    /// Catalogue and discovery: names, scope, subresources, generation, categories, storage version.
    pub(crate) resource: Resource,
    /// How request bodies are decoded against the kind's Go type.
    pub(crate) typed: Typed,
    /// The type graph strategic merge patch follows from the object's root.
    pub(crate) merge: MergeShape,
    /// How protobuf request bodies of this kind are read.
    pub protobuf: Protobuf,
    /// How `kubectl get` tables of this kind are printed.
    pub(crate) printer: Printer,
    /// How absent fields are defaulted on every write.
    pub(crate) defaults: Defaults,
    /// The status an object is stored with before anyone reports one.
    pub(crate) zero_status: ZeroStatus,
    /// The syntax object names follow.
    pub(crate) names: NameRule,
}

/// The catalogue facts of a built-in, as discovery serves them.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Resource {
    /// API group (`""` for core).
    pub(crate) group: &'static str,
    /// Served version.
    pub(crate) version: &'static str,
    /// Kind.
    pub(crate) kind: &'static str,
    /// Plural resource name.
    pub(crate) plural: &'static str,
    /// Whether objects live in namespaces.
    pub(crate) namespaced: bool,
    /// Short names for kubectl.
    pub(crate) short: &'static [&'static str],
    /// Whether a `status` subresource splits status from the main endpoint.
    pub(crate) status: bool,
    /// Whether a `scale` subresource serves `.spec.replicas`.
    pub(crate) scale: bool,
    /// Whether `metadata.generation` is maintained.
    pub(crate) generation: bool,
    /// Whether the kind is in the `all` category.
    pub(crate) all: bool,
    /// The version objects are stored in when several are served (the others are converted views).
    pub(crate) stored_as: Option<&'static str>,
}

impl Resource {
    /// Whether `api_version` (`v1`, `apps/v1`) names this resource's group and version.
    pub(crate) fn has_api_version(&self, api_version: &str) -> bool {
        if self.group.is_empty() {
            api_version == self.version
        } else {
            api_version
                .strip_prefix(self.group)
                .and_then(|rest| rest.strip_prefix('/'))
                == Some(self.version)
        }
    }

    /// This resource stored in another version (`autoscaling/v1` HorizontalPodAutoscalers are stored as `v2`).
    const fn stored_as(mut self, version: &'static str) -> Self {
        self.stored_as = Some(version);
        self
    }
}

/// A catalogue entry. Flags: `s` = status subresource, `c` = scale, `g` = generation, `a` = category "all".
const fn r(
    group: &'static str,
    version: &'static str,
    kind: &'static str,
    plural: &'static str,
    namespaced: bool,
    short: &'static [&'static str],
    flags: &'static str,
) -> Resource {
    let b = flags.as_bytes();
    let mut out = Resource {
        group,
        version,
        kind,
        plural,
        namespaced,
        short,
        status: false,
        scale: false,
        generation: false,
        all: false,
        stored_as: None,
    };
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b's' => out.status = true,
            b'c' => out.scale = true,
            b'g' => out.generation = true,
            b'a' => out.all = true,
            _ => {}
        }
        i += 1;
    }
    out
}

/// How tables of the kind are printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Printer {
    /// Upstream's printer for the kind (`crate::table`'s columns and cells).
    Columns(Columns),
    /// The generic Name / Created At table.
    Default,
}

/// Every built-in, group by group in discovery order (the catalogue lists groups as they first appear here).
const GROUPS: &[&[Builtin]] = &[
    core::CORE,
    workloads::APPS,
    workloads::BATCH,
    platform::COORDINATION,
    platform::EVENTS,
    access::RBAC,
    platform::APIEXTENSIONS,
    platform::NETWORKING,
    workloads::POLICY,
    workloads::AUTOSCALING,
    platform::DISCOVERY,
    platform::SCHEDULING,
    access::AUTHORIZATION,
    access::AUTHENTICATION,
    access::CERTIFICATES,
    platform::STORAGE,
    platform::ADMISSIONREGISTRATION,
    platform::APIREGISTRATION,
    platform::NODE,
];

/// Every built-in in discovery order.
pub(crate) static BUILTINS: LazyLock<Vec<Builtin>> =
    LazyLock::new(|| GROUPS.iter().flat_map(|g| g.iter()).copied().collect());

/// The built-in served at exactly this group, version and kind.
pub(crate) fn find(group: &str, version: &str, kind: &str) -> Option<&'static Builtin> {
    BUILTINS.iter().find(|b| {
        b.resource.group == group && b.resource.version == version && b.resource.kind == kind
    })
}

/// The built-in of this group and kind at any version (the first in the table), for the parts that do not
/// depend on the version (merge shape, printer; `tests.rs` checks that the versions of a kind agree on them).
pub(crate) fn find_kind(group: &str, kind: &str) -> Option<&'static Builtin> {
    BUILTINS
        .iter()
        .find(|b| b.resource.group == group && b.resource.kind == kind)
}

/// The entry of the resource `kind` describes: its version's, else any version's of the kind (the parts that do
/// not depend on the version); `None` for custom resources and kinds that are not built in.
pub(crate) fn entry(kind: &KindInfo<'_>) -> Option<&'static Builtin> {
    if kind.is_custom() {
        return None;
    }
    find(kind.group, kind.version, kind.kind).or_else(|| find_kind(kind.group, kind.kind))
}

/// How objects of `kind` are defaulted ([`Defaults::None`] for custom resources: their schema defaults them).
pub(crate) fn defaults(kind: &KindInfo<'_>) -> Defaults {
    entry(kind).map_or(Defaults::None, |b| b.defaults)
}

/// The status objects of `kind` are stored with before anyone reports one.
pub(crate) fn zero_status(kind: &KindInfo<'_>) -> ZeroStatus {
    entry(kind).map_or(ZeroStatus::None, |b| b.zero_status)
}

/// The syntax names of `kind` follow: DNS-1123 subdomains for custom resources.
pub(crate) fn name_rule(kind: &KindInfo<'_>) -> NameRule {
    entry(kind).map_or(NameRule::Dns1123Subdomain, |b| b.names)
}

/// How bodies of `kind` are decoded against its Go type ([`Typed::None`] for custom resources).
pub(crate) fn typed(kind: &KindInfo<'_>) -> Typed {
    entry(kind).map_or(Typed::None, |b| b.typed)
}

/// The built-in whose objects carry this `apiVersion` and `kind`.
pub fn find_api_version(api_version: &str, kind: &str) -> Option<&'static Builtin> {
    BUILTINS
        .iter()
        .find(|b| b.resource.kind == kind && b.resource.has_api_version(api_version))
}

#[cfg(test)]
mod tests;
