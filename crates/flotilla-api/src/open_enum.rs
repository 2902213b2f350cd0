//! Enums for fields that Karmada types as plain strings.
//!
//! Karmada's Go types keep such a field as a string and compare it with named constants; its CRD may list the
//! known values, but a newer Karmada, or a CRD of another version, can let others through. An enum declared
//! with [`open_enum!`] reads any string: a known value becomes its variant, any other value `Other` with the
//! text as written, so an object carrying it still decodes and serialises back unchanged. `Other` equals no
//! known variant, as such a string equals none of Karmada's constants. The JSON schema lists the known values
//! only, as Karmada's CRDs do.

/// Declares an open string enum: unit variants with their wire spelling (`Name = "spelling"`) and an
/// `Other(String)` variant for every other value. It derives `Clone`, `Debug`, `PartialEq`, `Eq`, `Hash` and
/// `JsonSchema` (with `Other` left out of the schema), reads and writes the value as a plain string, and has
/// `as_str`, `Display` and `From<String>`. Other derives (`Default`, `PartialOrd`, `Ord`) and
/// attributes are passed through.
macro_rules! open_enum {
    (
        $(#[$meta:meta])*
        pub enum $name:ident {
            $(
                $(#[$variant_meta:meta])*
                $variant:ident = $wire:literal,
            )+
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Debug, PartialEq, Eq, Hash, ::schemars::JsonSchema)]
        pub enum $name {
            $(
                $(#[$variant_meta])*
                #[schemars(rename = $wire)]
                $variant,
            )+
            /// A value this version does not know, kept as written; it equals none of the known values.
            #[schemars(skip)]
            Other(String),
        }

        impl $name {
            /// The value as written on the wire.
            pub fn as_str(&self) -> &str {
                match self {
                    $(Self::$variant => $wire,)+
                    Self::Other(value) => value,
                }
            }
        }

        impl ::std::convert::From<String> for $name {
            fn from(value: String) -> Self {
                match value.as_str() {
                    $($wire => Self::$variant,)+
                    _ => Self::Other(value),
                }
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl ::serde::Serialize for $name {
            fn serialize<S: ::serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }

        impl<'de> ::serde::Deserialize<'de> for $name {
            fn deserialize<D: ::serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                <String as ::serde::Deserialize>::deserialize(deserializer).map(Self::from)
            }
        }
    };
}

pub(crate) use open_enum;
