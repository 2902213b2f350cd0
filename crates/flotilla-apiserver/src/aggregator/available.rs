//! The `Available` condition of every APIService, kept as kube-aggregator's availability controllers keep it
//! (reasons and messages in their words).
//!
//! A Local APIService (no service) is always available (`Local`). For one with a service: the Service must exist
//! (`ServiceNotFound`); a ClusterIP Service must have the port (`ServicePortError`), EndpointSlices
//! (`EndpointsNotFound`) and a ready endpoint with the port's name (`MissingEndpoints`); then five concurrent
//! `GET /apis/<group>/<version>` as `system:kube-aggregator` in `system:masters` must find one 2xx or 3xx
//! answer within five seconds (`FailedDiscoveryCheck` with the last error; `Passed`, "all checks passed",
//! otherwise). Each APIService is checked on every change to it, to its Service or the Service's endpoints,
//! every 30 s, and after a failure again with a backoff from 5 ms doubling to 30 s. The status is written only
//! when it changes; the transition time moves only when the condition's status does.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{Request, header};
use http_body_util::{BodyExt, Empty};
use serde_json::{Value, json};
use tokio::sync::mpsc::UnboundedReceiver;

use super::apiservice::{ApiService, condition};
use super::queue::{Policy, drive};
use super::transport::Transport;
use super::{Aggregator, apiservices, resolve};
use crate::upstream::describe;
use flotilla_registry::auth::UserInfo;
use flotilla_registry::auth::user::MASTERS;
use flotilla_registry::write::{self, Outcome};

/// How often every APIService is checked again (the informer resync of kube-aggregator's controller).
const RESYNC: Duration = Duration::from_secs(30);
/// The first retry after a failed check, and the longest.
const FIRST_RETRY: Duration = Duration::from_millis(5);
const MAX_RETRY: Duration = Duration::from_secs(30);
/// Concurrent discovery requests per check.
const ATTEMPTS: usize = 5;

/// An `Available` condition without its transition time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Availability {
    /// `True`, `False` or `Unknown`.
    pub status: &'static str,
    /// Reason.
    pub reason: &'static str,
    /// Message.
    pub message: String,
}

impl Availability {
    fn new(status: &'static str, reason: &'static str, message: String) -> Self {
        Self {
            status,
            reason,
            message,
        }
    }
}

/// Why a check could not decide (kube requeues without writing).
type Undecided = String;

/// The availability of `spec` now.
///
/// # Errors
/// When the APIService's client cannot be built.
pub(crate) async fn check(agg: &Aggregator, spec: &ApiService) -> Result<Availability, Undecided> {
    let Some(svc) = &spec.service else {
        return Ok(Availability::new(
            "True",
            "Local",
            "Local APIServices are always available".into(),
        ));
    };
    let Some(service) = agg
        .registry
        .store
        .get(&resolve::services(), &svc.namespace, &svc.name)
    else {
        return Ok(Availability::new(
            "False",
            "ServiceNotFound",
            format!("service/{} in {:?} is not present", svc.name, svc.namespace),
        ));
    };
    if resolve::service_type(&service) == "ClusterIP" {
        let Some(port_name) = resolve::port_name(&service, svc.port) else {
            return Ok(Availability::new(
                "False",
                "ServicePortError",
                format!(
                    "service/{} in {:?} is not listening on port {}",
                    svc.name, svc.namespace, svc.port
                ),
            ));
        };
        if !resolve::has_endpoint_groups(&agg.registry.store, svc) {
            return Ok(Availability::new(
                "False",
                "EndpointsNotFound",
                format!(
                    "cannot find endpointslices for service/{} in {:?}",
                    svc.name, svc.namespace
                ),
            ));
        }
        if !resolve::has_available_endpoint(&agg.registry.store, svc, &port_name) {
            return Ok(Availability::new(
                "False",
                "MissingEndpoints",
                format!(
                    "endpointslices for service/{} in {:?} have no addresses with port name {port_name:?}",
                    svc.name, svc.namespace
                ),
            ));
        }
    }
    let transport = Transport::build(spec, agg.front_proxy()).map_err(|e| e.to_string())?;
    let mut attempts: futures::stream::FuturesUnordered<_> = (0..ATTEMPTS)
        .map(|_| probe(agg, spec, &transport))
        .collect();
    let mut last = String::new();
    while let Some(result) = futures::StreamExt::next(&mut attempts).await {
        match result {
            Ok(()) => {
                return Ok(Availability::new(
                    "True",
                    "Passed",
                    "all checks passed".into(),
                ));
            }
            Err(e) => last = e,
        }
    }
    Ok(Availability::new("False", "FailedDiscoveryCheck", last))
}

/// One discovery request to a resolved endpoint of the service, as kube-aggregator's check sends it.
async fn probe(agg: &Aggregator, spec: &ApiService, transport: &Transport) -> Result<(), String> {
    let Some(svc) = &spec.service else {
        return Ok(());
    };
    let host = resolve::resolve(&agg.registry.store, svc).map_err(|e| e.to_string())?;
    let path = if spec.name == "v1." {
        format!("/api/{}", spec.version)
    } else {
        spec.path()
    };
    let url = format!("https://{host}{path}");
    let mut req = Request::get(url.as_str())
        .body(Empty::<Bytes>::new().map_err(|e| match e {}).boxed_unsync())
        .map_err(|e| e.to_string())?;
    let user = UserInfo {
        username: "system:kube-aggregator".into(),
        groups: vec![MASTERS.into()],
        ..UserInfo::default()
    };
    super::proxy::set_identity(req.headers_mut(), &user);
    req.headers_mut().remove(header::ACCEPT);
    let failing =
        |detail: String| format!("failing or missing response from {url}: Get {url:?}: {detail}");
    let answer = tokio::time::timeout(CLIENT_TIMEOUT, transport.client().request(req));
    match tokio::time::timeout(CHECK_TIMEOUT, answer).await {
        Err(_) => Err(format!("timed out waiting for {url}")),
        Ok(Err(_)) => Err(failing(
            "context deadline exceeded (Client.Timeout exceeded while awaiting headers)".into(),
        )),
        Ok(Ok(Err(e))) => Err(failing(describe(&e, &host))),
        Ok(Ok(Ok(response))) => {
            let code = response.status().as_u16();
            if (200..300).contains(&code) {
                Ok(())
            } else {
                Err(format!("bad status from {url}: {code}"))
            }
        }
    }
}

/// The discovery client's own deadline, and the check's insurance beyond it.
const CLIENT_TIMEOUT: Duration = Duration::from_secs(5);
const CHECK_TIMEOUT: Duration = Duration::from_secs(6);

/// `status.conditions` with `Available` set as kube's `SetAPIServiceCondition` sets it.
pub(crate) fn with_condition(obj: &Value, a: &Availability, now: &str) -> Value {
    let mut conditions: Vec<Value> = obj
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let fresh = json!({"type": "Available", "status": a.status, "lastTransitionTime": now,
        "reason": a.reason, "message": a.message});
    match conditions
        .iter_mut()
        .find(|c| c.get("type").and_then(Value::as_str) == Some("Available"))
    {
        None => conditions.push(fresh),
        Some(c) => {
            if c.get("status").and_then(Value::as_str) != Some(a.status) {
                c["status"] = json!(a.status);
                c["lastTransitionTime"] = json!(now);
            }
            c["reason"] = json!(a.reason);
            c["message"] = json!(a.message);
        }
    }
    let mut status = obj.get("status").cloned().unwrap_or_else(|| json!({}));
    if !status.is_object() {
        status = json!({});
    }
    status["conditions"] = Value::Array(conditions);
    status
}

/// Checks one APIService and records the outcome; `Err` asks for a retry with backoff.
async fn sync(agg: &Aggregator, name: &str) -> Result<(), ()> {
    let Some(obj) = agg.registry.store.get(&apiservices(), "", name) else {
        return Ok(());
    };
    let Some(spec) = ApiService::parse(&obj) else {
        return Ok(());
    };
    let availability = match check(agg, &spec).await {
        Ok(a) => a,
        Err(e) => {
            tracing::warn!(apiservice = name, error = %e, "cannot check the APIService");
            return Err(());
        }
    };
    let now = flotilla_registry::meta::now();
    let written = write::guaranteed_update(
        &agg.registry.store,
        &apiservices(),
        "",
        name,
        false,
        |cur| {
            let Some(cur) = cur.filter(|c| !flotilla_registry::meta::is_deleting(c)) else {
                return Ok(Outcome::Unchanged);
            };
            // A changed spec is checked again by the event it caused.
            if ApiService::parse(cur).as_ref() != Some(&spec) {
                return Ok(Outcome::Unchanged);
            }
            let status = with_condition(cur, &availability, &now);
            if cur.get("status") == Some(&status) {
                return Ok(Outcome::Unchanged);
            }
            let mut next = cur.as_ref().clone();
            next["status"] = status;
            Ok(Outcome::Put(next))
        },
    )
    .await;
    if let Err(e) = written {
        tracing::warn!(apiservice = name, error = %e, "failed to update the APIService status");
        return Err(());
    }
    if condition(&obj, "Available")
        .and_then(|c| c.get("reason"))
        .and_then(Value::as_str)
        != Some(availability.reason)
    {
        tracing::info!(apiservice = name, status = availability.status, reason = availability.reason,
            message = %availability.message, "changing APIService availability");
    }
    if availability.reason == "FailedDiscoveryCheck" {
        return Err(());
    }
    Ok(())
}

/// Keeps every APIService's condition: checks those named on `changes` at once, all of them every 30 s, and
/// failed ones again with backoff.
pub(crate) async fn run(agg: Arc<Aggregator>, changes: UnboundedReceiver<String>) {
    let policy = Policy {
        first_retry: FIRST_RETRY,
        max_retry: MAX_RETRY,
        resync: Some(RESYNC),
    };
    drive(
        agg,
        changes,
        policy,
        |_, _| {},
        |agg, name| async move { sync(&agg, &name).await.map(|()| None) },
    )
    .await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_condition_keeps_its_transition_time_while_its_status_holds() {
        let failed = Availability::new("False", "ServiceNotFound", "gone".into());
        let obj = json!({"status": {"conditions": [{"type": "Other", "status": "True"}]}});
        let status = with_condition(&obj, &failed, "t1");
        assert_eq!(
            status["conditions"][1],
            json!({"type": "Available", "status": "False", "lastTransitionTime": "t1",
                   "reason": "ServiceNotFound", "message": "gone"})
        );
        let obj = json!({"status": status});
        let still = Availability::new("False", "FailedDiscoveryCheck", "refused".into());
        let status = with_condition(&obj, &still, "t2");
        assert_eq!(status["conditions"][1]["lastTransitionTime"], "t1");
        assert_eq!(status["conditions"][1]["reason"], "FailedDiscoveryCheck");
        let obj = json!({"status": status});
        let passed = Availability::new("True", "Passed", "all checks passed".into());
        let status = with_condition(&obj, &passed, "t3");
        assert_eq!(status["conditions"][1]["lastTransitionTime"], "t3");
        assert_eq!(status["conditions"][0]["type"], "Other");
    }
}
