//! Small serde helpers shared by the API types.

/// Whether a value equals its type's default; used to omit empty fields as Go's `omitempty` does.
pub(crate) fn is_default<T: Default + PartialEq>(value: &T) -> bool {
    *value == T::default()
}
