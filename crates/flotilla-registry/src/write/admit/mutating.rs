//! The mutating point of a write's admission: after the built-in mutating admission, before validation.

use serde_json::Value;

use super::Admission;
use crate::admission::webhooks::Operation;
use crate::status::ApiResult;
use crate::write::shape::Shaper;

impl Admission<'_> {
    /// Runs the mutating webhooks over `obj` (the object about to be validated; `old` the stored one), decoding
    /// and defaulting it again after each change.
    ///
    /// # Errors
    /// A webhook's denial or failure (per its failurePolicy), a patch that does not apply, or a patched object
    /// that no longer decodes.
    pub(crate) async fn mutate(
        &self,
        operation: Operation,
        old: Option<&Value>,
        obj: &mut Value,
        shaper: &mut Shaper,
    ) -> ApiResult<()> {
        let info = self.info;
        let mut redefault = |o: &mut Value| shaper.decode(info, o, old);
        self.ctx
            .webhooks
            .mutate(
                &self.ctx.store,
                &self.request(operation, old),
                obj,
                &mut redefault,
            )
            .await
            .map(drop)
    }
}
