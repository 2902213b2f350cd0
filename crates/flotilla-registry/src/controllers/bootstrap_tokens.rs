//! kube-controller-manager's two bootstrap-token controllers.
//!
//! The bootstrap signer keeps ConfigMap `kube-public/cluster-info` signed: for every bootstrap token Secret in
//! `kube-system` that may sign (`usage-bootstrap-signing: "true"`, not expired, its `token-id` the one its name
//! carries, a `token-secret`), the key `jws-kubeconfig-<id>` holds the detached JWS of the ConfigMap's
//! `kubeconfig` under that token, and no other `jws-kubeconfig-` key is left. An agent holding a token reads the
//! ConfigMap anonymously and trusts the cluster's CA in it once the signature matches its own computation. The
//! signer never creates the ConfigMap (an installer publishes it) and leaves one without a `kubeconfig` alone.
//!
//! The token cleaner deletes bootstrap token Secrets of `kube-system` once their `expiration` has passed (or
//! cannot be read), with the Secret's uid as precondition; the signer then drops the token's signature.

use std::sync::Arc;

use serde_json::{Map, Value, json};

use flotilla_store::ResKey;
use flotilla_store::hub::{Event, EventType};

use super::acting_as;
use super::runtime::{Next, Reconciler, Watches};
use crate::auth::bootstrap::{self, SECRET_TYPE, detached_signature};
use crate::context::Ctx;
use crate::meta::{self, Endpoint};
use crate::status::ApiError;
use crate::write::delete::DeleteOpts;
use crate::write::{self, field_validation};

/// Where bootstrap token Secrets live.
pub(crate) const TOKEN_NAMESPACE: &str = "kube-system";
/// The namespace of the signed ConfigMap.
pub(crate) const CLUSTER_INFO_NAMESPACE: &str = "kube-public";
/// The name of the signed ConfigMap.
pub(crate) const CLUSTER_INFO: &str = "cluster-info";
/// The signed key of the ConfigMap.
const KUBECONFIG_KEY: &str = "kubeconfig";
/// The prefix of each token's signature key.
pub(crate) const SIGNATURE_PREFIX: &str = "jws-kubeconfig-";

/// The longest the token cleaner waits before it looks at an unexpired token again.
const RECHECK: std::time::Duration = std::time::Duration::from_secs(24 * 3600);

fn secrets() -> ResKey {
    ResKey::new("", "secrets")
}

fn configmaps() -> ResKey {
    ResKey::new("", "configmaps")
}

fn is_token_secret(obj: &Value) -> bool {
    obj.get("type").and_then(Value::as_str) == Some(SECRET_TYPE)
        && meta::meta_str(obj, "namespace") == Some(TOKEN_NAMESPACE)
}

/// The id and secret of a token Secret that may sign, as kube's signer accepts it: its name carries its
/// `token-id`, it has a `token-secret`, has not expired at `now` and says `usage-bootstrap-signing: "true"`.
/// (A Secret being deleted still signs until it is gone, as kube's signer reads its informer.)
fn signing_token(secret: &Value, now: jiff::Timestamp) -> Option<(String, Vec<u8>)> {
    let id = bootstrap::id_of_name(meta::meta_str(secret, "name")?)?;
    if bootstrap::data_bytes(secret, "token-id")? != id.as_bytes() {
        return None;
    }
    let token_secret = bootstrap::data_bytes(secret, "token-secret").filter(|s| !s.is_empty())?;
    if bootstrap::time_left(secret, now).is_some_and(|left| left.is_zero()) {
        return None;
    }
    (bootstrap::data_bytes(secret, "usage-bootstrap-signing")? == b"true")
        .then(|| (id.to_string(), token_secret))
}

/// `data` with every signature key replaced by the signatures of `tokens`, or `None` when it already is so.
fn signed(data: &Map<String, Value>, tokens: &[(String, Vec<u8>)]) -> Option<Map<String, Value>> {
    let content = data.get(KUBECONFIG_KEY)?.as_str()?;
    let mut new: Map<String, Value> = data
        .iter()
        .filter(|(k, _)| !k.starts_with(SIGNATURE_PREFIX))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    for (id, secret) in tokens {
        let signature = detached_signature(content.as_bytes(), id, secret);
        new.insert(format!("{SIGNATURE_PREFIX}{id}"), json!(signature));
    }
    (new != *data).then_some(new)
}

/// The bootstrap signer; its one key is the ConfigMap.
pub(crate) struct Signer;

impl Reconciler for Signer {
    type Key = ();

    fn name(&self) -> &'static str {
        "bootstrap-signer"
    }

    fn watches(&self) -> Watches {
        Watches::Resources(vec![configmaps(), secrets()])
    }

    fn resync(&mut self, _ctx: &Ctx) -> Vec<()> {
        vec![()]
    }

    /// A write of the ConfigMap (not its deletion: there is nothing left to sign), or any change of a token
    /// Secret.
    fn observe(&mut self, _ctx: &Ctx, ev: &Event) -> Vec<()> {
        let wanted = if ev.res == configmaps() {
            ev.kind != EventType::Deleted
                && meta::meta_str(&ev.object, "namespace") == Some(CLUSTER_INFO_NAMESPACE)
                && meta::meta_str(&ev.object, "name") == Some(CLUSTER_INFO)
        } else {
            is_token_secret(&ev.object)
        };
        if wanted { vec![()] } else { Vec::new() }
    }

    async fn reconcile(&self, ctx: &Arc<Ctx>, _key: &()) -> Result<Next, ApiError> {
        let Some(current) = ctx
            .store
            .get(&configmaps(), CLUSTER_INFO_NAMESPACE, CLUSTER_INFO)
        else {
            return Ok(Next::Done);
        };
        let now = jiff::Timestamp::now();
        let (_, stored) = ctx.store.list(&secrets(), Some(TOKEN_NAMESPACE));
        let mut tokens: Vec<(String, Vec<u8>)> = stored
            .iter()
            .filter(|s| is_token_secret(s))
            .filter_map(|s| signing_token(s, now))
            .collect();
        tokens.sort();
        let empty = Map::new();
        let data = current
            .get("data")
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        let Some(data) = signed(data, &tokens) else {
            return Ok(Next::Done);
        };
        let Some(info) = ctx.catalog.get("", "v1", "configmaps") else {
            return Ok(Next::Done);
        };
        // An update of the ConfigMap as read, as kube's signer sends it: a conflict means it changed since, and
        // that change asks for another pass.
        // As a client reads it (the store keeps managedFields compacted).
        let mut new = flotilla_store::compact::expanded(&current).as_ref().clone();
        new["data"] = Value::Object(data);
        let requester = acting_as("bootstrap-signer", json!({}));
        let opts = write::Options {
            dry_run: false,
            manager: "kube-controller-manager",
            validation: field_validation::Mode::Ignore,
            requester: Some(&requester),
        };
        match write::update(
            ctx,
            &info,
            CLUSTER_INFO_NAMESPACE,
            CLUSTER_INFO,
            new,
            Endpoint::Main,
            &opts,
        )
        .await
        {
            Ok(_) => Ok(Next::Done),
            Err(e) if e.code == 409 || e.code == 404 => Ok(Next::Done),
            Err(e) => Err(e),
        }
    }
}

/// The token cleaner; its keys are the names of token Secrets in `kube-system`.
pub(crate) struct Cleaner;

impl Reconciler for Cleaner {
    type Key = String;

    fn name(&self) -> &'static str {
        "token-cleaner"
    }

    fn watches(&self) -> Watches {
        Watches::Resources(vec![secrets()])
    }

    fn resync(&mut self, ctx: &Ctx) -> Vec<String> {
        ctx.store
            .list(&secrets(), Some(TOKEN_NAMESPACE))
            .1
            .iter()
            .filter(|s| is_token_secret(s))
            .filter_map(|s| meta::meta_str(s, "name").map(str::to_string))
            .collect()
    }

    fn observe(&mut self, _ctx: &Ctx, ev: &Event) -> Vec<String> {
        if ev.kind == EventType::Deleted || !is_token_secret(&ev.object) {
            return Vec::new();
        }
        meta::meta_str(&ev.object, "name")
            .map(str::to_string)
            .into_iter()
            .collect()
    }

    /// Deletes the Secret once it has expired; until then, comes back when it does.
    async fn reconcile(&self, ctx: &Arc<Ctx>, name: &String) -> Result<Next, ApiError> {
        let Some(secret) = ctx.store.get(&secrets(), TOKEN_NAMESPACE, name) else {
            return Ok(Next::Done);
        };
        if !is_token_secret(&secret) {
            return Ok(Next::Done);
        }
        match bootstrap::time_left(&secret, jiff::Timestamp::now()) {
            None => return Ok(Next::Done),
            // A far expiration is looked at again daily rather than armed as one timer of centuries.
            Some(left) if !left.is_zero() => return Ok(Next::After(left.min(RECHECK))),
            Some(_) => {}
        }
        let Some(info) = ctx.catalog.get("", "v1", "secrets") else {
            return Ok(Next::Done);
        };
        let uid = meta::meta_str(&secret, "uid")
            .filter(|u| !u.is_empty())
            .map(str::to_string);
        let options = match &uid {
            Some(uid) => json!({"preconditions": {"uid": uid}}),
            None => json!({}),
        };
        let opts = DeleteOpts {
            uid,
            requester: Some(acting_as("token-cleaner", options)),
            ..DeleteOpts::default()
        };
        // Gone already, or replaced by a Secret of the same name (the uid precondition fails): nothing to do.
        match write::delete(ctx, &info, TOKEN_NAMESPACE, name, &opts).await {
            Ok(_) => Ok(Next::Done),
            Err(e) if e.code == 409 || e.code == 404 => Ok(Next::Done),
            Err(e) => Err(e),
        }
    }
}

#[cfg(test)]
mod tests;
