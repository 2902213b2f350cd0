//! The field overrider, the last of a rule's overriders: JSON-patch a JSON or YAML document held in a string
//! field, such as a ConfigMap key.

use flotilla_api::policy::v1alpha1::{FieldOverrider, PatchOperation};
use serde_json::Value;

use super::OverriderError;
use super::patches::{operation, pointer};

/// The document format of a field overrider.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum DocumentFormat {
    /// The field holds JSON (`json` operations).
    Json,
    /// The field holds YAML (`yaml` operations).
    Yaml,
}

impl DocumentFormat {
    fn as_str(self) -> &'static str {
        match self {
            DocumentFormat::Json => "JSON",
            DocumentFormat::Yaml => "YAML",
        }
    }
}

/// Applies one field overrider to `object` in place.
pub(super) fn apply(object: &mut Value, overrider: &FieldOverrider) -> Result<(), OverriderError> {
    let path = overrider.field_path.as_str();
    let (format, ops) = match (overrider.json.is_empty(), overrider.yaml.is_empty()) {
        (false, true) => (DocumentFormat::Json, &overrider.json),
        (true, false) => (DocumentFormat::Yaml, &overrider.yaml),
        // Karmada's admission rejects both and neither; without admission, refusing is the closest match.
        _ => {
            return Err(OverriderError::FieldOperations {
                path: path.to_owned(),
            });
        }
    };
    // Validate the pointer's syntax first so a malformed path is reported as such, not as a missing field.
    pointer(path)?;
    let target = object
        .pointer_mut(path)
        .ok_or_else(|| OverriderError::NotString {
            path: path.to_owned(),
        })?;
    let Value::String(text) = target else {
        return Err(OverriderError::NotString {
            path: path.to_owned(),
        });
    };
    let mut document = parse(text, format).map_err(|source| OverriderError::ParseDocument {
        path: path.to_owned(),
        format: format.as_str(),
        source,
    })?;
    json_patch::patch(&mut document, &to_patch(ops)?).map_err(|source| OverriderError::Patch {
        source: Box::new(source),
    })?;
    *text = serialize(&document, format).map_err(|source| OverriderError::SerializeDocument {
        path: path.to_owned(),
        format: format.as_str(),
        source,
    })?;
    Ok(())
}

fn to_patch(ops: &[PatchOperation]) -> Result<Vec<json_patch::PatchOperation>, OverriderError> {
    ops.iter()
        .map(|op| operation(&op.operator, &op.sub_path, op.value.clone()))
        .collect()
}

type BoxError = Box<dyn std::error::Error + Send + Sync>;

fn parse(text: &str, format: DocumentFormat) -> Result<Value, BoxError> {
    Ok(match format {
        DocumentFormat::Json => serde_json::from_str(text)?,
        DocumentFormat::Yaml => flotilla_yaml::from_str(text)?,
    })
}

fn serialize(document: &Value, format: DocumentFormat) -> Result<String, BoxError> {
    Ok(match format {
        DocumentFormat::Json => serde_json::to_string(document)?,
        DocumentFormat::Yaml => flotilla_yaml::to_string(document)?,
    })
}
