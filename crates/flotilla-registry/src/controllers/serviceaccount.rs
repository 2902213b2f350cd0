//! ServiceAccount token Secrets, as kube-controller-manager's token controller: a Secret of type
//! `kubernetes.io/service-account-token` naming an existing ServiceAccount (annotation
//! `kubernetes.io/service-account.name`) gets a token, the CA and the namespace in its data and the account's uid
//! in its annotations; the authenticator's token table follows the Secrets (deleting the Secret revokes the
//! token).

use std::collections::HashMap;
use std::sync::Arc;

use base64::Engine;
use serde_json::{Value, json};

use flotilla_store::hub::Event;

use super::Steps;
use super::runtime::{Next, Reconciler, Watches};
use crate::auth::random_token;
use crate::context::Ctx;
use crate::meta;
use crate::status::{ApiError, ApiResult};
use crate::write::{self, Outcome};
use flotilla_store::ResKey;

const TOKEN_TYPE: &str = "kubernetes.io/service-account-token";
const SA_NAME: &str = "kubernetes.io/service-account.name";
const SA_UID: &str = "kubernetes.io/service-account.uid";

async fn sync(ctx: &Ctx) -> ApiResult<()> {
    let secrets = ResKey::new("", "secrets");
    let sas = ResKey::new("", "serviceaccounts");
    let b64 = base64::engine::general_purpose::STANDARD;
    let mut table = HashMap::new();
    let mut writes = Steps::default();
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
        let res = write::guaranteed_update(&ctx.store, &secrets, &ns, &name, false, |cur| {
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
        writes.note(res);
    }
    ctx.tokens.set_service_account_tokens(table);
    writes.finish()
}

/// The token controller. It has one key, `()`: every change of a Secret or ServiceAccount syncs every token
/// Secret, since the token table is rebuilt whole.
pub(crate) struct Tokens;

impl Reconciler for Tokens {
    type Key = ();

    fn name(&self) -> &'static str {
        "serviceaccount-token"
    }

    fn watches(&self) -> Watches {
        Watches::Resources(vec![
            ResKey::new("", "secrets"),
            ResKey::new("", "serviceaccounts"),
        ])
    }

    fn resync(&mut self, _ctx: &Ctx) -> Vec<()> {
        vec![()]
    }

    fn observe(&mut self, _ctx: &Ctx, _ev: &Event) -> Vec<()> {
        vec![()]
    }

    async fn reconcile(&self, ctx: &Arc<Ctx>, _key: &()) -> Result<Next, ApiError> {
        sync(ctx).await?;
        Ok(Next::Done)
    }
}
