//! ConfigMap `kube-system/extension-apiserver-authentication`, kept as kube-apiserver's cluster authentication
//! trust controller keeps it: what an aggregated API server needs to trust this server's front proxy.
//!
//! The keys are kube-apiserver's, each value a JSON array of strings but for the CA bundles:
//! `requestheader-client-ca-file` (the front-proxy CA), `requestheader-allowed-names` (`front-proxy-client`),
//! `requestheader-username-headers`, `requestheader-uid-headers`, `requestheader-group-headers` and
//! `requestheader-extra-headers-prefix` (`X-Remote-*`, as kubeadm configures them); no `client-ca-file`, since
//! this server takes no client certificates. As upstream, what the ConfigMap already holds is kept and merged
//! with what this server requires (string lists without repeats, CA bundles without duplicate or expired
//! certificates), so another server's trust written there survives; the ConfigMap is restored when it is
//! changed or deleted.

use std::sync::Arc;

use base64::Engine;
use rustls_pki_types::{CertificateDer, pem::PemObject};
use serde_json::{Map, Value, json};

use flotilla_registry::context::Ctx;
use flotilla_registry::controllers::runtime::{self, Next, Reconciler, Watches};
use flotilla_registry::controllers::{ensure, namespaces_key, restore};
use flotilla_registry::meta;
use flotilla_registry::status::{ApiError, ApiResult};
use flotilla_store::ResKey;
use flotilla_store::hub::Event;

use crate::tls::{FRONT_PROXY_CLIENT, FrontProxy};

const NAMESPACE: &str = "kube-system";
const NAME: &str = "extension-apiserver-authentication";
const CLIENT_CA: &str = "requestheader-client-ca-file";

/// The string lists this server requires, by key.
const REQUIRED: [(&str, &str); 5] = [
    ("requestheader-allowed-names", FRONT_PROXY_CLIENT),
    ("requestheader-username-headers", "X-Remote-User"),
    ("requestheader-uid-headers", "X-Remote-Uid"),
    ("requestheader-group-headers", "X-Remote-Group"),
    ("requestheader-extra-headers-prefix", "X-Remote-Extra-"),
];

/// A JSON array of strings, as upstream reads one (anything else counts as empty).
fn string_list(value: Option<&Value>) -> Vec<String> {
    value
        .and_then(Value::as_str)
        .and_then(|s| serde_json::from_str::<Vec<String>>(s).ok())
        .unwrap_or_default()
}

/// `existing` followed by the certificates of `required` it lacks, without certificates that expired more
/// than five minutes ago, as PEM.
fn combine_bundles(existing: &str, required: &str) -> String {
    let now = jiff::Timestamp::now().as_second();
    let mut seen: Vec<Vec<u8>> = Vec::new();
    let mut out = String::new();
    for der in CertificateDer::pem_slice_iter(existing.as_bytes())
        .chain(CertificateDer::pem_slice_iter(required.as_bytes()))
        .filter_map(Result::ok)
    {
        let expired = x509_parser::parse_x509_certificate(&der)
            .map(|(_, c)| c.validity().not_after.timestamp() < now - 300)
            .unwrap_or(true);
        if expired || seen.iter().any(|s| s.as_slice() == der.as_ref()) {
            continue;
        }
        let b64 = base64::engine::general_purpose::STANDARD.encode(der.as_ref());
        out.push_str("-----BEGIN CERTIFICATE-----\n");
        for line in b64.as_bytes().chunks(64) {
            out.push_str(&String::from_utf8_lossy(line));
            out.push('\n');
        }
        out.push_str("-----END CERTIFICATE-----\n");
        seen.push(der.as_ref().to_vec());
    }
    out
}

/// The data the ConfigMap should hold, given what it holds (`existing`) and the front-proxy CA.
pub(crate) fn data(existing: Option<&Value>, front_proxy_ca: &str) -> Value {
    let old = |k: &str| existing.and_then(|d| d.get(k));
    let mut data = Map::new();
    if let Some(ca) = old("client-ca-file").and_then(Value::as_str)
        && !ca.is_empty()
    {
        data.insert("client-ca-file".into(), json!(ca));
    }
    let ca = combine_bundles(
        old(CLIENT_CA).and_then(Value::as_str).unwrap_or(""),
        front_proxy_ca,
    );
    data.insert(CLIENT_CA.into(), json!(ca));
    for (key, required) in REQUIRED {
        let mut list = string_list(old(key));
        if !list.iter().any(|v| v == required) {
            list.push(required.to_string());
        }
        let encoded = serde_json::to_string(&list).unwrap_or_else(|_| "[]".into());
        data.insert(key.into(), json!(encoded));
    }
    Value::Object(data)
}

/// Publishes the ConfigMap before the server serves, then keeps it until shutdown.
pub(crate) async fn start(ctx: &Arc<Ctx>, front_proxy: &FrontProxy) {
    let mut trust = Trust {
        ca: front_proxy.ca_pem.clone(),
    };
    runtime::once(ctx, &mut trust).await;
    tokio::spawn(runtime::run(ctx.clone(), trust));
}

/// The trust controller. It has one key, `()`: the ConfigMap.
struct Trust {
    /// The front-proxy CA it publishes.
    ca: String,
}

impl Reconciler for Trust {
    type Key = ();

    fn name(&self) -> &'static str {
        "cluster-authentication-trust"
    }

    fn watches(&self) -> Watches {
        Watches::Resources(vec![ResKey::new("", "configmaps"), namespaces_key()])
    }

    fn resync(&mut self, _ctx: &Ctx) -> Vec<()> {
        vec![()]
    }

    /// The ConfigMap itself, or its namespace (a re-created `kube-system` gets it back).
    fn observe(&mut self, _ctx: &Ctx, ev: &Event) -> Vec<()> {
        let ns = meta::meta_str(&ev.object, "namespace").unwrap_or("");
        let name = meta::meta_str(&ev.object, "name").unwrap_or("");
        let relevant = (ns == NAMESPACE && name == NAME) || (ns.is_empty() && name == NAMESPACE);
        if relevant { vec![()] } else { Vec::new() }
    }

    async fn reconcile(&self, ctx: &Arc<Ctx>, _key: &()) -> Result<Next, ApiError> {
        sync(ctx, &self.ca).await?;
        Ok(Next::Done)
    }
}

/// Creates the ConfigMap or brings its data up to date.
async fn sync(ctx: &Ctx, ca: &str) -> ApiResult<()> {
    let configmaps = ResKey::new("", "configmaps");
    let current = ctx.store.get(&configmaps, NAMESPACE, NAME);
    let wanted = data(current.as_deref().and_then(|c| c.get("data")), ca);
    if current.is_none() {
        let cm = json!({"metadata": {"name": NAME, "namespace": NAMESPACE}, "data": wanted});
        ensure(ctx, "", "v1", "configmaps", cm).await?;
    }
    restore(
        ctx,
        &configmaps,
        NAMESPACE,
        NAME,
        &[("data", Some(&wanted))],
    )
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ca() -> String {
        let dir = tempfile::tempdir().expect("tempdir");
        crate::tls::ensure_front_proxy(dir.path())
            .expect("front proxy")
            .ca_pem
    }

    #[test]
    fn a_fresh_configmap_holds_kube_apiservers_keys_as_json_arrays() {
        let ca = ca();
        let d = data(None, &ca);
        let keys: Vec<&String> = d.as_object().expect("object").keys().collect();
        assert_eq!(keys.len(), 6, "{d}");
        assert_eq!(d["requestheader-allowed-names"], "[\"front-proxy-client\"]");
        assert_eq!(d["requestheader-username-headers"], "[\"X-Remote-User\"]");
        assert_eq!(d["requestheader-uid-headers"], "[\"X-Remote-Uid\"]");
        assert_eq!(d["requestheader-group-headers"], "[\"X-Remote-Group\"]");
        assert_eq!(
            d["requestheader-extra-headers-prefix"],
            "[\"X-Remote-Extra-\"]"
        );
        assert!(d.get("client-ca-file").is_none());
        let bundle = d[CLIENT_CA].as_str().expect("pem");
        assert_eq!(CertificateDer::pem_slice_iter(bundle.as_bytes()).count(), 1);
        assert_eq!(
            CertificateDer::from_pem_slice(bundle.as_bytes()).ok(),
            CertificateDer::from_pem_slice(ca.as_bytes()).ok()
        );
    }

    #[test]
    fn what_another_server_wrote_is_kept_and_merged() {
        let (mine, theirs) = (ca(), ca());
        let existing = json!({
            "client-ca-file": "some CA",
            CLIENT_CA: theirs,
            "requestheader-allowed-names": "[\"aggregator\"]",
            "requestheader-group-headers": "[\"X-Remote-Group\"]",
            "requestheader-username-headers": "not json",
        });
        let d = data(Some(&existing), &mine);
        assert_eq!(d["client-ca-file"], "some CA");
        assert_eq!(
            d["requestheader-allowed-names"],
            "[\"aggregator\",\"front-proxy-client\"]"
        );
        assert_eq!(d["requestheader-group-headers"], "[\"X-Remote-Group\"]");
        assert_eq!(d["requestheader-username-headers"], "[\"X-Remote-User\"]");
        let bundle = d[CLIENT_CA].as_str().expect("pem");
        assert_eq!(CertificateDer::pem_slice_iter(bundle.as_bytes()).count(), 2);
        // Merging again changes nothing.
        assert_eq!(data(Some(&d), &mine), d);
    }
}
