//! Kubernetes' API conventions as text, shared by Flotilla's two API servers (the embedded `flotilla-apiserver`
//! and `flotilla-aggregated-apiserver`), so that both word what clients read exactly as kube-apiserver does
//! and neither writes it twice, and resource quantities, which the interpreter and the scheduler compute with.
//!
//! - [`validation`]: name, label and key format checks with the messages of k8s.io/apimachinery's
//!   `util/validation`.
//! - [`field`]: field errors (`field.Error`) and the text of a `422 Invalid` Status.
//! - [`duration`]: `duration.HumanDuration`, the ages kubectl prints.
//! - [`table`]: `meta.k8s.io` Tables: columns, rows and the object each row carries (`includeObject`), as
//!   k8s.io/apiserver's handlers assemble them.
//! - [`verbs`]: the verbs discovery lists for a resource and its subresources.
//! - [`request_info`]: what a request path and method ask for (kube's `RequestInfo`), which authorization
//!   and routing read.
//! - [`quantity`]: resource quantities (`100m`, `1.5Gi`) parsed, added, compared and printed as
//!   k8s.io/apimachinery's `api/resource` does.
//!
//! Invariant: pure text and JSON, no I/O, and no other Flotilla crate or Kubernetes client library (k8s-openapi's
//! wire types only, for quantities), so the embedded API server (which may use only `flotilla-yaml` and this
//! crate) can depend on it.

pub mod duration;
pub mod field;
pub mod go_url;
pub mod meta;
pub mod quantity;
pub mod request_info;
pub mod table;
pub mod validation;
pub mod verbs;
