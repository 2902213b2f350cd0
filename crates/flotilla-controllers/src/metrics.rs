//! Prometheus metrics shared by every controller, registered in one registry that `/metrics` serves.
//!
//! All series carry a `controller` label; failures also carry the error `category` (see
//! [`crate::Error::category`]).

use std::time::Duration;

use prometheus::{
    Encoder, HistogramOpts, HistogramVec, IntCounterVec, IntGaugeVec, Opts, Registry, TextEncoder,
};

/// The metric prefix.
pub(crate) const PREFIX: &str = "flotilla";

/// Reconcile counters, failure counters, durations and queue depth of every controller.
#[derive(Clone)]
pub struct Metrics {
    /// The registry `/metrics` serves; other components may register their own collectors in it.
    pub registry: Registry,
    reconciles: IntCounterVec,
    failures: IntCounterVec,
    duration: HistogramVec,
    queue_depth: IntGaugeVec,
    events_dropped: IntCounterVec,
    undecodable: IntCounterVec,
}

impl Metrics {
    /// A fresh registry with the controller metrics registered.
    ///
    /// # Errors
    /// Only if a metric definition is invalid or registered twice (a bug, ruled out by the unit test).
    pub fn new() -> Result<Self, prometheus::Error> {
        let registry = Registry::new_custom(Some(PREFIX.to_owned()), None)?;
        let reconciles = IntCounterVec::new(
            Opts::new(
                "controller_reconciles_total",
                "Reconciles run, per controller.",
            ),
            &["controller"],
        )?;
        let failures = IntCounterVec::new(
            Opts::new(
                "controller_reconcile_errors_total",
                "Reconciles that failed, per controller and error category.",
            ),
            &["controller", "category"],
        )?;
        let duration = HistogramVec::new(
            HistogramOpts::new(
                "controller_reconcile_duration_seconds",
                "Time one reconcile took, per controller.",
            )
            .buckets(vec![0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1.0, 5.0, 30.0]),
            &["controller"],
        )?;
        let queue_depth = IntGaugeVec::new(
            Opts::new(
                "controller_queue_depth",
                "Keys waiting in a controller's queue.",
            ),
            &["controller"],
        )?;
        let events_dropped = IntCounterVec::new(
            Opts::new(
                "events_dropped_total",
                "Events recorded but never written, per reporting controller and cause: queue_full (the \
                 publisher was a whole queue behind), spam (client-go's per-object spam filter), write_failed \
                 (the API server refused the write).",
            ),
            &["controller", "cause"],
        )?;
        let undecodable = IntCounterVec::new(
            Opts::new(
                "undecodable_objects_total",
                "Object versions an informer could not read and left out, per informer (`control-plane: \
                 <resource>`, `interpreter: <resource>` for the interpreter's configuration); each is also \
                 logged and given a Warning Event naming the field.",
            ),
            &["informer"],
        )?;
        registry.register(Box::new(undecodable.clone()))?;
        registry.register(Box::new(reconciles.clone()))?;
        registry.register(Box::new(failures.clone()))?;
        registry.register(Box::new(duration.clone()))?;
        registry.register(Box::new(queue_depth.clone()))?;
        registry.register(Box::new(events_dropped.clone()))?;
        Ok(Metrics {
            registry,
            reconciles,
            failures,
            duration,
            queue_depth,
            events_dropped,
            undecodable,
        })
    }

    /// Records one finished reconcile of `controller`.
    pub fn observe(&self, controller: &str, elapsed: Duration, failure: Option<&str>) {
        self.reconciles.with_label_values(&[controller]).inc();
        self.duration
            .with_label_values(&[controller])
            .observe(elapsed.as_secs_f64());
        if let Some(category) = failure {
            self.failures
                .with_label_values(&[controller, category])
                .inc();
        }
    }

    /// The queue-depth gauge of `controller`.
    pub fn queue_depth(&self, controller: &str) -> prometheus::IntGauge {
        self.queue_depth.with_label_values(&[controller])
    }

    /// Sets the queue depth of `controller`.
    pub fn set_queue_depth(&self, controller: &str, depth: usize) {
        self.queue_depth
            .with_label_values(&[controller])
            .set(i64::try_from(depth).unwrap_or(i64::MAX));
    }

    /// Reconciles run so far by `controller` (for tests and benchmarks).
    pub fn reconciles(&self, controller: &str) -> u64 {
        self.reconciles.with_label_values(&[controller]).get()
    }

    /// Failures of `controller` in `category` so far.
    pub fn failures(&self, controller: &str, category: &str) -> u64 {
        self.failures
            .with_label_values(&[controller, category])
            .get()
    }

    /// The counter of Events not written, by reporting controller and cause, for the event sink to count on.
    pub fn events_dropped(&self) -> IntCounterVec {
        self.events_dropped.clone()
    }

    /// Counts one object version `informer` could not read.
    pub fn count_undecodable(&self, informer: &str) {
        self.undecodable.with_label_values(&[informer]).inc();
    }

    /// Object versions `informer` could not read so far.
    pub fn undecodable(&self, informer: &str) -> u64 {
        self.undecodable.with_label_values(&[informer]).get()
    }

    /// The registry in Prometheus text format.
    pub fn encode(&self) -> String {
        let mut buf = Vec::new();
        if let Err(err) = TextEncoder::new().encode(&self.registry.gather(), &mut buf) {
            tracing::warn!(error = %err, "failed to encode metrics");
        }
        String::from_utf8(buf).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn observations_show_up_in_the_text_format() {
        let metrics = Metrics::new().unwrap();
        metrics.observe("binding", Duration::from_millis(3), None);
        metrics.observe("binding", Duration::from_millis(3), Some("kube_api"));
        metrics.set_queue_depth("binding", 4);
        assert_eq!(metrics.reconciles("binding"), 2);
        assert_eq!(metrics.failures("binding", "kube_api"), 1);
        let text = metrics.encode();
        assert!(text.contains("flotilla_controller_reconciles_total{controller=\"binding\"} 2"));
        assert!(text.contains(
            "flotilla_controller_reconcile_errors_total{category=\"kube_api\",controller=\"binding\"} 1"
        ));
        assert!(text.contains("flotilla_controller_queue_depth{controller=\"binding\"} 4"));
    }
}
