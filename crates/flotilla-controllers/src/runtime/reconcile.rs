//! What every reconcile gets, whichever loop runs it: a span naming the controller, the object and (once
//! known) the outcome; its count and duration in the controller metrics; its failure logged with the error,
//! which names the action and the object.
//!
//! Levels: the span is at `info`, so anything a reconcile logs at `info` or above carries it; failures are
//! `warn`, except `Waiting` ones, which are how a reconcile says it expects to be retried and are `debug`
//! (every object of a kind no policy selects waits once for a policy, so at `info` a fresh cluster would log
//! a line per object); a successful reconcile is a `debug` line.

use std::fmt::Display;

use tracing::Span;

use crate::error::{Error, Result};
use crate::metrics::Metrics;

/// The span of one reconcile of `object` by `controller`; [`observed`] records its outcome.
pub fn reconcile_span(controller: &'static str, object: &dyn Display) -> Span {
    tracing::info_span!(
        "reconcile",
        controller,
        object = %object,
        outcome = tracing::field::Empty
    )
}

/// Runs `reconcile` (inside its [`reconcile_span`]), then records its duration and outcome in `metrics` and
/// the span, and logs it.
pub async fn observed<T: std::fmt::Debug>(
    controller: &'static str,
    metrics: Metrics,
    reconcile: impl Future<Output = Result<T>>,
) -> Result<T> {
    let start = tokio::time::Instant::now();
    let result = reconcile.await;
    let elapsed = start.elapsed();
    let span = Span::current();
    match &result {
        Ok(action) => {
            metrics.observe(controller, elapsed, None);
            span.record("outcome", "ok");
            tracing::debug!(?action, elapsed_ms = elapsed.as_millis(), "reconciled");
        }
        Err(err) => {
            let category = err.category();
            metrics.observe(controller, elapsed, Some(category));
            span.record("outcome", category);
            if matches!(err, Error::Waiting { .. }) {
                tracing::debug!(error = %err.message(), "reconcile waits");
            } else {
                tracing::warn!(error = %err.message(), "reconcile failed");
            }
        }
    }
    result
}
