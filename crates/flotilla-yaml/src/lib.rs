//! YAML for every Flotilla crate, on serde-saphyr (the crate kube-rs reads kubeconfigs with).
//!
//! Users meet Flotilla's YAML beside kubectl's, so both directions follow kubectl:
//!
//! * **Reading** ([`from_str`], [`from_slice`], [`from_str_multiple`]) resolves YAML as kubectl does.
//!   kubectl (sigs.k8s.io/yaml) resolves plain scalars with go-yaml v2's YAML 1.1 rules, turns the
//!   document into JSON and decodes that. So `yes`, `on`, `y` and their kin are booleans, `017` is
//!   octal, `1_000` is a thousand, timestamps and `1:20` stay strings, mapping keys that resolve to
//!   another type become their JSON text (`on:` is the key `"true"`), a whole float is an integer
//!   (`1.0` reads as `1`, as it does after Go's JSON round trip), `.inf` and `.nan` are refused (JSON
//!   has no such numbers) and a repeated key keeps its last value. Only then is the target type
//!   decoded, from that JSON value.
//! * **Writing** ([`to_string`], [`to_string_multiple`]) quotes every string that a YAML 1.1 reader
//!   would resolve to another type (booleans in every spelling, nulls, numbers in every form including
//!   octal, hex, underscores, sexagesimal and `.inf`, timestamps), as go-yaml v2 does under kubectl, so
//!   PyYAML, go-yaml and kubectl read back the strings written. That is serde-saphyr's default (YAML 1.1
//!   quoting, `yaml_12: false`); the tests pin it against PyYAML. Multi-line strings are literal blocks
//!   (`|`), so scripts read as scripts; long single-line strings stay on their line.
//!
//! Multi-document streams (`---`) are read with [`from_str_multiple`], which skips empty documents as
//! kubectl does, and written with [`to_string_multiple`].

mod json;

use serde::Serialize;
use serde::de::DeserializeOwned;

pub use json::Json;

/// Why a YAML text could not be read or a value could not be written.
///
/// serde-saphyr's errors are boxed: they are large, and callers carry this error in their own.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The text is not YAML, or holds something kubectl would refuse (a `null` key, `.inf`).
    #[error("failed to parse YAML")]
    Parse(#[source] Box<serde_saphyr::Error>),
    /// The YAML is well formed but does not fit the type read.
    #[error("failed to decode YAML at `{path}`")]
    Decode {
        /// The path of the field that did not fit (`.` for the document itself).
        path: String,
        /// What did not fit.
        #[source]
        source: serde_json::Error,
    },
    /// The value cannot be written as YAML.
    #[error("failed to encode YAML")]
    Encode(#[source] Box<serde_saphyr::SerializeError>),
}

impl Error {
    /// The error and its cause on one line (`failed to parse YAML: line 2 column 3: ...`), for edges
    /// that carry messages as text, such as an API server's Status.
    pub fn chain(&self) -> String {
        let mut text = self.to_string();
        let mut source = std::error::Error::source(self);
        while let Some(cause) = source {
            text.push_str(": ");
            text.push_str(&cause.to_string());
            source = cause.source();
        }
        text
    }
}

/// The result of reading or writing YAML.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The reader's options: kubectl's YAML 1.1 resolution where serde-saphyr's defaults follow YAML 1.2.
fn options() -> serde_saphyr::Options {
    serde_saphyr::options! {
        // go-yaml v2 reads `017` as octal 15 (and `0o17` too, which serde-saphyr always does).
        legacy_octal_numbers: true,
        // go-yaml v2 under kubectl keeps the last of repeated keys.
        duplicate_keys: serde_saphyr::DuplicateKeyPolicy::LastWins,
        // Errors travel in error chains; a rendered snippet of the input would break their lines.
        with_snippet: false,
    }
}

/// Reads one YAML document as kubectl reads it, then decodes `T` from the resulting JSON value.
///
/// # Errors
/// [`Error::Parse`] when the text is not one YAML document kubectl accepts, [`Error::Decode`] (with the
/// field's path) when it does not fit `T`.
pub fn from_str<T: DeserializeOwned>(text: &str) -> Result<T> {
    let json: Json = serde_saphyr::from_str_with_options(text, options())
        .map_err(|e| Error::Parse(Box::new(e)))?;
    decode(json.0)
}

/// [`from_str`] for bytes (request bodies); the bytes must be UTF-8, as YAML is.
///
/// # Errors
/// As [`from_str`], and [`Error::Parse`] for bytes that are not UTF-8.
pub fn from_slice<T: DeserializeOwned>(bytes: &[u8]) -> Result<T> {
    let json: Json = serde_saphyr::from_slice_with_options(bytes, options())
        .map_err(|e| Error::Parse(Box::new(e)))?;
    decode(json.0)
}

/// Reads every document of a YAML stream (`---` separated) as [`from_str`] does, skipping empty ones.
///
/// # Errors
/// As [`from_str`], for the first document that fails.
pub fn from_str_multiple<T: DeserializeOwned>(text: &str) -> Result<Vec<T>> {
    let documents: Vec<Json> = serde_saphyr::from_multiple_with_options(text, options())
        .map_err(|e| Error::Parse(Box::new(e)))?;
    documents.into_iter().map(|json| decode(json.0)).collect()
}

/// The writer's options: serde-saphyr's defaults (YAML 1.1 quoting, literal blocks for multi-line
/// strings), except that a long single-line string stays on its line, as kubectl writes it, instead of
/// becoming a folded block: certificates and tokens in kubeconfigs stay one `key: value` line that
/// scripts can find.
fn writer_options() -> serde_saphyr::SerializerOptions {
    serde_saphyr::ser_options! {
        folded_wrap_chars: usize::MAX,
    }
}

fn decode<T: DeserializeOwned>(value: serde_json::Value) -> Result<T> {
    serde_path_to_error::deserialize(value).map_err(|e| Error::Decode {
        path: e.path().to_string(),
        source: e.into_inner(),
    })
}

/// Writes one YAML document, quoting every string a YAML 1.1 reader would take for another type.
///
/// # Errors
/// [`Error::Encode`] when `value` has no YAML form (a map with non-string keys, a failing `Serialize`).
pub fn to_string<T: Serialize>(value: &T) -> Result<String> {
    serde_saphyr::to_string_with_options(value, writer_options())
        .map_err(|e| Error::Encode(Box::new(e)))
}

/// Writes a YAML stream, one document per value, separated by `---` lines.
///
/// # Errors
/// As [`to_string`].
pub fn to_string_multiple<T: Serialize>(values: &[T]) -> Result<String> {
    serde_saphyr::to_string_multiple_with_options(values, writer_options())
        .map_err(|e| Error::Encode(Box::new(e)))
}

#[cfg(test)]
mod tests;
