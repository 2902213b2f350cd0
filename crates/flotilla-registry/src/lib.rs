//! The embedded API server's resources: what every served kind is and the rules its objects follow, and the one
//! write path that applies them before the store commits an object.
//!
//! Layers, each module using only those before it:
//! - the vocabulary: [`status`] (API failures as metav1 `Status`), [`auth`] (who a request speaks for, the
//!   tokens), [`kind_info`] and [`resource`] (what a served resource is), [`meta`] (object metadata rules);
//! - the generic machinery, which knows no kind by name: [`validation`], [`selector`] and [`fields`]
//!   (label and field selectors), [`schema`] (CRD structural schemas), [`typed`] (decoding against Go types),
//!   [`protobuf`] (k8s-pb messages as JSON), [`defaults`] (defaulting helpers and zero statuses);
//! - [`kinds`]: the table of built-in kinds and, per API group, their rules (strategies, defaults, conversions);
//! - what reads the table: [`patch`] (the four patch types and server-side apply), [`table`] (`kubectl get`
//!   printers), [`catalog`] (every served resource, built-in and custom);
//! - the write path: [`admission`] (built-in plugins and webhooks), [`context`] (what one server shares),
//!   [`write`] (create, update, patch, delete: prepare, then commit to the store; a pod's `binding`);
//! - [`connect`]: where a pod's `log` and `exec` subresources lead (the kubelet of its Node), for the server to
//!   proxy them;
//! - [`controllers`]: what kube-controller-manager and apiextensions would run beside a real kube-apiserver
//!   (namespace lifecycle, garbage collection, CRDs, published objects, ServiceAccount tokens, Event expiry),
//!   writing through [`write`].
//!
//! It knows nothing of HTTP (the server crate turns requests into calls here and answers into responses) and
//! nothing of Karmada: it serves whatever CRDs it is given, as a real kube-apiserver would.

pub mod status;

pub mod auth;
pub mod kind_info;
pub mod resource;

pub mod meta;

pub mod fields;
pub mod protobuf;
pub mod schema;
pub mod selector;
pub mod typed;
pub mod validation;

pub mod defaults;

pub mod kinds;

pub mod catalog;
pub mod patch;
pub mod table;

pub mod admission;
pub mod context;
pub mod write;

pub mod connect;

pub mod controllers;
