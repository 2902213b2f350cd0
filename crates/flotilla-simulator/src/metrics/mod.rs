//! The member's metrics-server: `metrics.k8s.io/v1beta1` PodMetrics and NodeMetrics of the simulated Pods and
//! Nodes (`kubectl top`, `karmadactl top`, the metrics a FederatedHPA reads), served beside the simulated kubelet
//! and registered with the member's aggregator as metrics-server is (APIService `v1beta1.metrics.k8s.io` over an
//! ExternalName Service `kube-system/metrics-server` for 127.0.0.1).
//!
//! [`usage`] says what the simulated containers use; [`api`] answers as metrics-server does.

pub mod api;
pub mod usage;

pub use usage::{USAGE_CPU, USAGE_MEMORY, UsageError};
