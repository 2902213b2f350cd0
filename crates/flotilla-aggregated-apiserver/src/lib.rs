//! Flotilla's karmada-aggregated-apiserver: `cluster.karmada.io/v1alpha1` served behind the control plane's
//! aggregator (APIService `v1alpha1.cluster.karmada.io`), with the connect subresource
//! `clusters/{name}/proxy/{path}` that karmadactl's member commands use.
//!
//! - **Callers** are the aggregator only: every request but the health checks must come with a front-proxy
//!   client certificate and identity headers, checked against ConfigMap
//!   `kube-system/extension-apiserver-authentication` (module `authn`).
//! - **Clusters** stay in the Cluster CRD. Requests are passed to the CRD's served alias version `storage`
//!   impersonating the caller, so the control plane's RBAC and admission decide; bodies are rewritten between
//!   the two versions (module `storage`). Where Karmada's server answers otherwise than the CRD, this one answers
//!   as Karmada's: Tables are Karmada's printer's, new Clusters pass Karmada's validation first (module
//!   `validation`), and the `storage` version's deprecation warning is not passed on.
//! - **The proxy** asks the control plane with a SubjectAccessReview whether the caller may use the cluster's
//!   proxy (module `authz`), then forwards to the member as the caller with the cluster's impersonator token
//!   (module `proxy`); `clusters/*/proxy` fans out over every cluster as Karmada's does. Upgrades (exec,
//!   attach, port-forward) switch end to end: the member's 101 reaches the caller and the two connections are
//!   joined until either closes.
//! - **Discovery and OpenAPI** are Karmada's resources; the OpenAPI documents are the CRD's, renamed.
//!
//! The binary calls [`serve`] (on a bound listener, with a serving certificate, a control-plane client and a
//! shutdown token), and [`register::register`] and [`register::wait_available`] to make the aggregator route
//! to it.
//!
//! Invariant: this crate never depends on `flotilla-apiserver`: it talks to any API server, embedded or real,
//! through its API only.

mod authn;
mod authz;
mod cache;
mod discovery;
mod error;
pub mod names;
mod openapi;
mod proxy;
pub mod register;
mod router;
mod server;
mod storage;
mod tls;
mod user;
mod validation;

pub use error::Error;
pub use server::serve;
