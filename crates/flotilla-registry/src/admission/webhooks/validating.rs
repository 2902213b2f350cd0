//! The validating phase: the matching webhooks called all at once on the final object; the first denial in
//! configuration order decides.

use futures::future::join_all;
use serde_json::Value;

use super::{Request, Webhooks};
use crate::status::ApiResult;
use flotilla_store::Store;

impl Webhooks {
    /// Runs the validating webhooks that match `request` on `object` (`None` on delete), all at once. Returns
    /// their warnings.
    ///
    /// # Errors
    /// The first denial or failed call (of a webhook whose failurePolicy is `Fail`), in configuration order; a
    /// dry run that a webhook with side effects matches.
    pub async fn validate(
        &self,
        store: &Store,
        request: &Request<'_>,
        object: Option<&Value>,
    ) -> ApiResult<Vec<String>> {
        let hooks = self.matching(store, "validatingwebhookconfigurations", request, object)?;
        let answers = join_all(
            hooks
                .iter()
                .map(|hook| self.call(store, hook, request, object, false)),
        )
        .await;
        let mut warnings = Vec::new();
        for answer in answers {
            let Some(answer) = answer? else { continue };
            warnings.extend(answer.warnings);
            if let Some(denied) = answer.denied {
                return Err(denied);
            }
        }
        Ok(warnings)
    }
}
