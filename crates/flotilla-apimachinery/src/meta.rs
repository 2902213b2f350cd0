//! kube's checks of object metadata maps, worded as kube-apiserver words them: label keys and values, annotation
//! keys and their total size. Both the embedded API server and Karmada's admission (labels and annotations an
//! override writes) use them.

use crate::field::FieldError;
use crate::validation::{is_qualified_name, is_valid_label_value};

/// The most bytes all annotations of one object (keys and values) may hold.
pub const TOTAL_ANNOTATION_SIZE_LIMIT: usize = 256 * 1024;

/// A label key's errors at `path` (kube's `ValidateLabelName`).
pub fn validate_label_name(key: &str, path: &str) -> Vec<FieldError> {
    is_qualified_name(key)
        .into_iter()
        .map(|m| FieldError::invalid(path, key, m))
        .collect()
}

/// The errors of a label map at `path`: each key a qualified name, each value a label value (kube's
/// `ValidateLabels`).
pub fn validate_labels<'a>(
    labels: impl IntoIterator<Item = (&'a str, &'a str)>,
    path: &str,
) -> Vec<FieldError> {
    let mut errors = Vec::new();
    for (key, value) in labels {
        errors.extend(validate_label_name(key, path));
        errors.extend(
            is_valid_label_value(value)
                .into_iter()
                .map(|m| FieldError::invalid(path, value, m)),
        );
    }
    errors
}

/// The errors of an annotation map at `path`: each key a qualified name once lowercased, and all of them at most
/// [`TOTAL_ANNOTATION_SIZE_LIMIT`] bytes (kube's `ValidateAnnotations`).
pub fn validate_annotations<'a>(
    annotations: impl IntoIterator<Item = (&'a str, &'a str)>,
    path: &str,
) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let mut total = 0;
    for (key, value) in annotations {
        errors.extend(
            is_qualified_name(&key.to_lowercase())
                .into_iter()
                .map(|m| FieldError::invalid(path, key, m)),
        );
        total += key.len() + value.len();
    }
    if total > TOTAL_ANNOTATION_SIZE_LIMIT {
        errors.push(FieldError::too_long(path, TOTAL_ANNOTATION_SIZE_LIMIT));
    }
    errors
}
