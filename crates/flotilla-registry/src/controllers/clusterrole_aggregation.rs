//! kube-controller-manager's clusterrole-aggregation controller: a ClusterRole with an `aggregationRule` holds
//! the rules of every other ClusterRole its selectors match, in the order of those roles' names, each rule
//! once. Any ClusterRole change asks every aggregating role again (a label or rule anywhere may matter).

use std::sync::Arc;

use serde_json::{Value, json};

use super::runtime::{Next, Reconciler, Watches};
use crate::auth::rbac::resolver::GROUP;
use crate::context::Ctx;
use crate::meta;
use crate::selector::Selector;
use crate::status::ApiError;
use crate::write::{self, Outcome};
use flotilla_store::ResKey;
use flotilla_store::hub::Event;

fn cluster_roles() -> ResKey {
    ResKey::new(GROUP, "clusterroles")
}

fn selectors(role: &Value) -> Option<&Vec<Value>> {
    role.pointer("/aggregationRule/clusterRoleSelectors")
        .and_then(Value::as_array)
}

/// The rules `role`'s aggregation rule gathers, or `None` when it has none (or a selector does not parse,
/// which validation refuses on write).
fn gathered(ctx: &Ctx, role: &Value) -> Option<Vec<Value>> {
    let selectors: Vec<Selector> = selectors(role)?
        .iter()
        .map(Selector::from_label_selector)
        .collect::<Result<_, _>>()
        .ok()?;
    let name = meta::meta_str(role, "name").unwrap_or("");
    let (_, mut all) = ctx.store.list(&cluster_roles(), None);
    all.retain(|r| {
        meta::meta_str(r, "name") != Some(name) && selectors.iter().any(|s| s.matches_object(r))
    });
    all.sort_by(|a, b| meta::meta_str(a, "name").cmp(&meta::meta_str(b, "name")));
    let mut rules: Vec<Value> = Vec::new();
    for rule in all
        .iter()
        .filter_map(|r| r.get("rules").and_then(Value::as_array))
        .flatten()
    {
        if !rules.contains(rule) {
            rules.push(rule.clone());
        }
    }
    Some(rules)
}

/// The ClusterRole aggregation controller.
pub(crate) struct Aggregation;

impl Aggregation {
    fn aggregating(ctx: &Ctx) -> Vec<String> {
        ctx.store
            .list(&cluster_roles(), None)
            .1
            .iter()
            .filter(|r| selectors(r).is_some_and(|s| !s.is_empty()))
            .filter_map(|r| meta::meta_str(r, "name").map(str::to_string))
            .collect()
    }
}

impl Reconciler for Aggregation {
    type Key = String;

    fn name(&self) -> &'static str {
        "clusterrole-aggregation"
    }

    fn watches(&self) -> Watches {
        Watches::Resources(vec![cluster_roles()])
    }

    fn resync(&mut self, ctx: &Ctx) -> Vec<String> {
        Self::aggregating(ctx)
    }

    fn observe(&mut self, ctx: &Ctx, _event: &Event) -> Vec<String> {
        Self::aggregating(ctx)
    }

    async fn reconcile(&self, ctx: &Arc<Ctx>, key: &String) -> Result<Next, ApiError> {
        write::guaranteed_update(&ctx.store, &cluster_roles(), "", key, false, |cur| {
            let Some(cur) = cur.filter(|c| !meta::is_deleting(c)) else {
                return Ok(Outcome::Unchanged);
            };
            let Some(rules) = gathered(ctx, cur) else {
                return Ok(Outcome::Unchanged);
            };
            if cur
                .get("rules")
                .and_then(Value::as_array)
                .map_or(rules.is_empty(), |r| *r == rules)
            {
                return Ok(Outcome::Unchanged);
            }
            let mut new = cur.as_ref().clone();
            new["rules"] = json!(rules);
            Ok(Outcome::Put(new))
        })
        .await?;
        Ok(Next::Done)
    }
}
