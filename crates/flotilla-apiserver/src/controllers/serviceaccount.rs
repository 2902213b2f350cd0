//! ServiceAccount token Secrets (spec §9.5): fills `kubernetes.io/service-account-token` Secrets and keeps
//! the authenticator's token table in step with them (deleting the Secret revokes the token).

use std::collections::HashMap;
use std::sync::Arc;

use base64::Engine;
use serde_json::{Value, json};

use crate::auth::random_token;
use crate::catalog::ResKey;
use crate::context::Ctx;
use crate::meta;
use crate::registry::{self, Outcome};

const TOKEN_TYPE: &str = "kubernetes.io/service-account-token";
const SA_NAME: &str = "kubernetes.io/service-account.name";
const SA_UID: &str = "kubernetes.io/service-account.uid";

async fn sync(ctx: &Ctx) {
    let secrets = ResKey::new("", "secrets");
    let sas = ResKey::new("", "serviceaccounts");
    let b64 = base64::engine::general_purpose::STANDARD;
    let mut table = HashMap::new();
    for s in ctx.store.list(&secrets, None).1 {
        if s.get("type").and_then(Value::as_str) != Some(TOKEN_TYPE) {
            continue;
        }
        let ns = meta::meta_str(&s, "namespace").unwrap_or("").to_string();
        let name = meta::meta_str(&s, "name").unwrap_or("").to_string();
        let Some(sa_name) = s
            .pointer(&format!(
                "/metadata/annotations/{}",
                SA_NAME.replace('/', "~1")
            ))
            .and_then(Value::as_str)
        else {
            continue;
        };
        let Some(sa) = ctx.store.get(&sas, &ns, sa_name) else {
            continue;
        };
        let user = format!("system:serviceaccount:{ns}:{sa_name}");
        if let Some(tok) = s.pointer("/data/token").and_then(Value::as_str) {
            if let Ok(raw) = b64.decode(tok)
                && let Ok(t) = String::from_utf8(raw)
            {
                table.insert(t, user);
            }
            continue;
        }
        let token = random_token();
        let sa_uid = meta::meta_str(&sa, "uid").unwrap_or("").to_string();
        let ca = b64.encode(ctx.ca_pem.as_bytes());
        let (tok_b64, ns_b64) = (b64.encode(token.as_bytes()), b64.encode(ns.as_bytes()));
        // The token must authenticate from the instant a client can read it from the Secret, so it
        // joins the live table before the write is acknowledged; a failed write drops it at the end.
        ctx.tokens.grant(&token, &user);
        let res = registry::guaranteed_update(&ctx.store, &secrets, &ns, &name, false, |cur| {
            let Some(cur) = cur else {
                return Ok(Outcome::Unchanged);
            };
            let mut new = cur.as_ref().clone();
            if !new.get("data").is_some_and(Value::is_object) {
                new["data"] = json!({});
            }
            new["data"]["token"] = json!(tok_b64);
            new["data"]["ca.crt"] = json!(ca);
            new["data"]["namespace"] = json!(ns_b64);
            new["metadata"]["annotations"][SA_UID] = json!(sa_uid);
            Ok(Outcome::Put(new))
        })
        .await;
        if res.is_ok() {
            table.insert(token, user);
        }
    }
    ctx.tokens.set_service_account_tokens(table);
}

/// Runs the controller until shutdown.
pub(crate) async fn run(ctx: Arc<Ctx>) {
    let mut secrets = ctx.store.hub().subscribe(&ResKey::new("", "secrets"));
    let mut sas = ctx
        .store
        .hub()
        .subscribe(&ResKey::new("", "serviceaccounts"));
    sync(&ctx).await;
    loop {
        tokio::select! {
            _ = ctx.shutdown.cancelled() => return,
            r = secrets.recv() => if matches!(r, Err(tokio::sync::broadcast::error::RecvError::Closed)) { return },
            r = sas.recv() => if matches!(r, Err(tokio::sync::broadcast::error::RecvError::Closed)) { return },
        }
        // Fold bursts into one pass.
        while secrets.try_recv().is_ok() || sas.try_recv().is_ok() {}
        sync(&ctx).await;
    }
}
