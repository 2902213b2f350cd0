//! Component tests: the aggregated API server in-process in front of an embedded control plane, called as
//! kube-aggregator calls it (a front-proxy client certificate and `X-Remote-*` headers).

#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic, missing_docs)]

mod clusters;
mod discovery;
mod front_proxy;
mod member;
mod proxy;
mod real_kube;
mod real_kube_upgrade;
mod support;
mod tables;
mod upgrade;
mod upgrade_embedded;
mod upgrading_member;
mod validation;
