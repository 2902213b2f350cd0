//! The validating point of a write's admission: after validation, right before the commit.

use serde_json::Value;

use super::Admission;
use crate::admission::webhooks::Operation;
use crate::status::ApiResult;

impl Admission<'_> {
    /// Runs the validating webhooks on `obj` (`None` on delete; `old` the stored object).
    ///
    /// # Errors
    /// A webhook's denial or failure (per its failurePolicy).
    pub(crate) async fn validate(
        &self,
        operation: Operation,
        old: Option<&Value>,
        obj: Option<&Value>,
    ) -> ApiResult<()> {
        self.ctx
            .webhooks
            .validate(&self.ctx.store, &self.request(operation, old), obj)
            .await
            .map(drop)
    }
}
