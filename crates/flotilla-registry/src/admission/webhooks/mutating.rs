//! The mutating phase: the matching webhooks one after the other on the object, each patch applied and the
//! object defaulted again, and `reinvocationPolicy: IfNeeded` webhooks called once more when a later one changed
//! the object after them.

use serde_json::Value;

use super::{Hook, Request, Webhooks};
use crate::status::{ApiError, ApiResult};
use flotilla_store::Store;

impl Webhooks {
    /// Runs the mutating webhooks that match `request` over `object`, calling `redefault` on the object after each
    /// patch (the server defaults a webhook's result again). Returns the webhooks' warnings.
    ///
    /// # Errors
    /// A webhook's denial; a failed call of a webhook whose failurePolicy is `Fail`; a patch that does not apply;
    /// a dry run that a webhook with side effects matches; `redefault`'s error.
    pub async fn mutate(
        &self,
        store: &Store,
        request: &Request<'_>,
        object: &mut Value,
        redefault: &mut (dyn FnMut(&mut Value) -> ApiResult<()> + Send),
    ) -> ApiResult<Vec<String>> {
        let hooks = self.matching(
            store,
            "mutatingwebhookconfigurations",
            request,
            Some(object),
        )?;
        let mut warnings = Vec::new();
        // The object as each IfNeeded webhook left it: it runs again if a later webhook changed it.
        let mut left = Vec::new();
        for (index, hook) in hooks.iter().enumerate() {
            self.mutate_once(store, hook, request, object, redefault, &mut warnings)
                .await?;
            if hook.reinvoked() {
                left.push((index, object.clone()));
            }
        }
        for (index, seen) in left {
            if *object != seen {
                self.mutate_once(
                    store,
                    &hooks[index],
                    request,
                    object,
                    redefault,
                    &mut warnings,
                )
                .await?;
            }
        }
        Ok(warnings)
    }

    async fn mutate_once(
        &self,
        store: &Store,
        hook: &Hook,
        request: &Request<'_>,
        object: &mut Value,
        redefault: &mut (dyn FnMut(&mut Value) -> ApiResult<()> + Send),
        warnings: &mut Vec<String>,
    ) -> ApiResult<()> {
        let Some(answer) = self.call(store, hook, request, Some(object), true).await? else {
            return Ok(());
        };
        warnings.extend(answer.warnings);
        if let Some(denied) = answer.denied {
            return Err(denied);
        }
        if let Some(patch) = answer.patch {
            json_patch::patch(object, &patch).map_err(|e| {
                ApiError::internal(format!(
                    "admission webhook \"{}\" returned a patch that does not apply: {e}",
                    hook.name
                ))
            })?;
            redefault(object)?;
        }
        Ok(())
    }
}
