//! Prometheus metrics of interpreter calls: a counter and a latency histogram by layer, operation and kind.
//!
//! Labels stay low-cardinality: the kind is `group/Kind` (`core/Pod` for the core group), never an object
//! name, and the layer is `none` when no layer had a rule.

use prometheus::core::{Collector, Desc};
use prometheus::proto::MetricFamily;
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

    /// Registers both collectors in a registry that puts `prefix_` before every name itself (as a registry made
    /// with `Registry::new_custom(Some("flotilla"), ..)` does), so the names it serves are still
    /// `flotilla_interpreter_*` rather than carrying the prefix twice.
    ///
    /// # Errors
    /// When collectors of the same names are already registered there.
    pub fn register_in_prefixed(
        &self,
        registry: &Registry,
        prefix: &str,
    ) -> Result<(), prometheus::Error> {
        let prefix = format!("{prefix}_");
        let collectors: Vec<Box<dyn Collector>> =
            vec![Box::new(self.calls.clone()), Box::new(self.latency.clone())];
        let mut descs = Vec::new();
        for desc in collectors.iter().flat_map(|c| c.desc()) {
            let name = desc.fq_name.strip_prefix(&prefix).unwrap_or(&desc.fq_name);
            descs.push(Desc::new(
                name.to_owned(),
                desc.help.clone(),
                desc.variable_labels.clone(),
                Default::default(),
            )?);
        }
        registry.register(Box::new(Unprefixed {
            collectors,
            descs,
            prefix,
        }))
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

/// Collectors whose names lose `prefix` when gathered, for a registry that adds it back.
struct Unprefixed {
    collectors: Vec<Box<dyn Collector>>,
    descs: Vec<Desc>,
    prefix: String,
}

impl Collector for Unprefixed {
    fn desc(&self) -> Vec<&Desc> {
        self.descs.iter().collect()
    }

    fn collect(&self) -> Vec<MetricFamily> {
        let mut families: Vec<MetricFamily> =
            self.collectors.iter().flat_map(|c| c.collect()).collect();
        for family in &mut families {
            if let Some(name) = family.name().strip_prefix(&self.prefix) {
                let name = name.to_owned();
                family.set_name(name);
            }
        }
        families
    }
}
