//! The cluster-scoped twins of namespaced kinds (ClusterPropagationPolicy, ClusterOverridePolicy,
//! ClusterResourceBinding).
//!
//! kube's `CustomResource` derive makes one root type per spec struct, but Karmada's cluster-scoped kinds share
//! their spec (and status) types with a namespaced kind. [`cluster_twin!`] writes the second root type the way
//! the derive writes the first: same fields, same wire shape (`apiVersion`, `kind`, `metadata`, `spec`,
//! `status`), same trait impls, and a CRD derived from the namespaced kind's CRD with the names and scope
//! replaced.

/// Defines a cluster-scoped root type sharing its spec (and optionally status) with a derived namespaced kind.
macro_rules! cluster_twin {
    (
        $(#[$doc:meta])*
        root = $root:ident,
        namespaced = $ns:ident,
        group = $group:literal,
        spec = $spec:ty,
        $(status = $status:ty,)?
        kind = $kind:literal,
        plural = $plural:literal,
        shortname = $short:literal,
    ) => {
        $(#[$doc])*
        #[derive(Clone, Debug, Default, PartialEq, ::serde::Deserialize, ::schemars::JsonSchema)]
        #[serde(rename_all = "camelCase")]
        pub struct $root {
            /// Standard object metadata.
            #[schemars(skip)]
            #[serde(default)]
            pub metadata: ::k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
            /// The desired state, shared with the namespaced kind.
            pub spec: $spec,
            $(
                /// The observed state, shared with the namespaced kind.
                #[serde(default, skip_serializing_if = "Option::is_none")]
                pub status: Option<$status>,
            )?
        }

        impl $root {
            /// A new object with the given name and spec.
            pub fn new(name: &str, spec: $spec) -> Self {
                Self {
                    metadata: ::k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
                        name: Some(name.to_owned()),
                        ..Default::default()
                    },
                    spec,
                    $(status: {
                        let _: Option<&$status> = None;
                        None
                    },)?
                }
            }
        }

        impl ::serde::Serialize for $root {
            fn serialize<S: ::serde::Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
                use ::serde::ser::SerializeStruct;
                #[allow(unused_mut)]
                let mut fields = 4;
                $(
                    let _: Option<&$status> = None;
                    fields += usize::from(self.status.is_some());
                )?
                let mut obj = ser.serialize_struct($kind, fields)?;
                obj.serialize_field("apiVersion", &<$root as ::kube::Resource>::api_version(&()))?;
                obj.serialize_field("kind", $kind)?;
                obj.serialize_field("metadata", &self.metadata)?;
                obj.serialize_field("spec", &self.spec)?;
                $(
                    let _: Option<&$status> = None;
                    if let Some(status) = &self.status {
                        obj.serialize_field("status", status)?;
                    }
                )?
                obj.end()
            }
        }

        impl ::kube::Resource for $root {
            type DynamicType = ();
            type Scope = ::kube::core::ClusterResourceScope;

            fn kind(_: &()) -> ::std::borrow::Cow<'_, str> {
                $kind.into()
            }
            fn group(_: &()) -> ::std::borrow::Cow<'_, str> {
                $group.into()
            }
            fn version(_: &()) -> ::std::borrow::Cow<'_, str> {
                <$ns as ::kube::Resource>::version(&())
            }
            fn plural(_: &()) -> ::std::borrow::Cow<'_, str> {
                $plural.into()
            }
            fn meta(&self) -> &::k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
                &self.metadata
            }
            fn meta_mut(&mut self) -> &mut ::k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
                &mut self.metadata
            }
        }

        impl ::kube::core::object::HasSpec for $root {
            type Spec = $spec;
            fn spec(&self) -> &$spec {
                &self.spec
            }
            fn spec_mut(&mut self) -> &mut $spec {
                &mut self.spec
            }
        }

        $(
            impl ::kube::core::object::HasStatus for $root {
                type Status = $status;
                fn status(&self) -> Option<&$status> {
                    self.status.as_ref()
                }
                fn status_mut(&mut self) -> &mut Option<$status> {
                    &mut self.status
                }
            }
        )?

        impl ::kube::CustomResourceExt for $root {
            fn crd() -> ::k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition {
                let mut crd = <$ns as ::kube::CustomResourceExt>::crd();
                crd.metadata.name = Some(Self::crd_name().to_owned());
                crd.spec.scope = "Cluster".to_owned();
                crd.spec.names.kind = $kind.to_owned();
                crd.spec.names.plural = $plural.to_owned();
                crd.spec.names.singular = Some($kind.to_ascii_lowercase());
                crd.spec.names.short_names = Some(vec![$short.to_owned()]);
                crd
            }
            fn crd_name() -> &'static str {
                concat!($plural, ".", $group)
            }
            fn api_resource() -> ::kube::core::ApiResource {
                ::kube::core::ApiResource::erase::<Self>(&())
            }
            fn shortnames() -> &'static [&'static str] {
                &[$short]
            }
        }
    };
}

pub(crate) use cluster_twin;
