//! An SDK for writing Karmada interpreter webhooks in Rust (interpreter spec §6.5), and the example Workload
//! webhook.
