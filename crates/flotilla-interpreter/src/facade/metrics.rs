//! Prometheus metrics of interpreter calls: a counter and a latency histogram by layer, operation and kind.
//!
//! Labels stay low-cardinality: the kind is `group/Kind` (`core/Pod` for the core group), never an object
//! name, and the layer is `none` when no layer had a rule.

use prometheus::{HistogramOpts, HistogramVec, IntCounterVec, Opts, Registry};

/// The interpreter's collectors.
#[derive(Clone, Debug)]
pub struct Metrics {
    calls: IntCounterVec,
    latency: HistogramVec,
}

/// Label names of both collectors.
const LABELS: [&str; 4] = ["layer", "operation", "kind", "result"];

impl Metrics {
    /// New collectors, not registered anywhere.
    ///
    /// # Errors
    /// Only if the metric definitions were invalid, which is a bug caught by the tests.
    pub fn new() -> Result<Metrics, prometheus::Error> {
        let calls = IntCounterVec::new(
            Opts::new(
                "flotilla_interpreter_calls_total",
                "Interpreter calls by answering layer, operation, kind and result.",
            ),
            &LABELS,
        )?;
        let latency = HistogramVec::new(
            HistogramOpts::new(
                "flotilla_interpreter_call_duration_seconds",
                "Time the answering interpreter layer took, by layer, operation, kind and result.",
            )
            .buckets(vec![
                1e-5, 5e-5, 1e-4, 5e-4, 1e-3, 5e-3, 0.01, 0.05, 0.1, 0.5, 1.0, 5.0, 10.0,
            ]),
            &LABELS,
        )?;
        Ok(Metrics { calls, latency })
    }

    /// Registers both collectors in `registry`.
    ///
    /// # Errors
    /// When collectors of the same names are already registered there.
    pub fn register(&self, registry: &Registry) -> Result<(), prometheus::Error> {
        registry.register(Box::new(self.calls.clone()))?;
        registry.register(Box::new(self.latency.clone()))
    }

    /// Counts one call and its duration.
    pub(crate) fn observe(&self, layer: &str, operation: &str, kind: &str, ok: bool, seconds: f64) {
        let result = if ok { "ok" } else { "error" };
        let labels = [layer, operation, kind, result];
        self.calls.with_label_values(&labels).inc();
        self.latency.with_label_values(&labels).observe(seconds);
    }

    /// The number of calls counted for these labels (for tests and diagnostics).
    pub fn calls(&self, layer: &str, operation: &str, kind: &str, result: &str) -> u64 {
        self.calls
            .with_label_values(&[layer, operation, kind, result])
            .get()
    }
}
