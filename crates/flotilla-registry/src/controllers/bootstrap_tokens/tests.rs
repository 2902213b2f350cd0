use std::time::Duration;

use base64::Engine;

use super::*;
use crate::controllers::ensure;

const KUBECONFIG: &str = "apiVersion: v1\nkind: Config\nclusters:\n- name: \"\"\n  cluster:\n    server: https://127.0.0.1:6443\n";
/// `detached_signature(KUBECONFIG, "abcdef", "0123456789abcdef")`, as kube's own signer computes it.
const SIGNATURE: &str =
    "eyJhbGciOiJIUzI1NiIsImtpZCI6ImFiY2RlZiJ9..FmDd1cUgWwYSBjgJsqLp5-YyHI4LMaBSB3xm-xU6fy0";

fn b64(s: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(s)
}

/// A bootstrap token Secret named after `id`, with `data` (plain text) besides its id and secret.
fn token(id: &str, secret: &str, data: &[(&str, &str)]) -> Value {
    let mut all = json!({"token-id": b64(id), "token-secret": b64(secret)});
    for (k, v) in data {
        all[*k] = json!(b64(v));
    }
    json!({"metadata": {"name": format!("bootstrap-token-{id}"), "namespace": TOKEN_NAMESPACE},
        "type": SECRET_TYPE, "data": all})
}

async fn setup(dir: &std::path::Path) -> Arc<Ctx> {
    let ctx = Ctx::for_test(dir);
    for ns in [TOKEN_NAMESPACE, CLUSTER_INFO_NAMESPACE] {
        ensure(
            &ctx,
            "",
            "v1",
            "namespaces",
            json!({"metadata": {"name": ns}}),
        )
        .await
        .expect("namespace");
    }
    ctx
}

async fn put(ctx: &Ctx, plural: &str, obj: Value) {
    ensure(ctx, "", "v1", plural, obj).await.expect("created");
}

fn cluster_info(ctx: &Ctx) -> Option<Arc<Value>> {
    ctx.store
        .get(&configmaps(), CLUSTER_INFO_NAMESPACE, CLUSTER_INFO)
}

#[tokio::test]
async fn signs_with_every_valid_signing_token_and_drops_the_rest() {
    let dir = tempfile::tempdir().expect("tempdir");
    let ctx = setup(dir.path()).await;
    let signing = [("usage-bootstrap-signing", "true")];
    put(
        &ctx,
        "secrets",
        token("abcdef", "0123456789abcdef", &signing),
    )
    .await;
    put(
        &ctx,
        "secrets",
        token(
            "q1w2e3",
            "zyxwvutsrqponmlk",
            &[("usage-bootstrap-authentication", "true")],
        ),
    )
    .await;
    let expired = [
        ("usage-bootstrap-signing", "true"),
        ("expiration", "2020-01-01T00:00:00Z"),
    ];
    put(
        &ctx,
        "secrets",
        token("old000", "0123456789abcdef", &expired),
    )
    .await;
    let mut renamed = token("abc999", "0123456789abcdef", &signing);
    renamed["data"]["token-id"] = json!(b64("zzz999"));
    put(&ctx, "secrets", renamed).await;
    let mut elsewhere = token("else00", "0123456789abcdef", &signing);
    elsewhere["metadata"]["namespace"] = json!("default");
    put(&ctx, "secrets", elsewhere).await;

    // Nothing to sign: the signer never creates the ConfigMap.
    assert_eq!(
        Signer.reconcile(&ctx, &()).await.expect("nothing to sign"),
        Next::Done
    );
    assert!(cluster_info(&ctx).is_none());

    put(
        &ctx,
        "configmaps",
        json!({"metadata": {"name": CLUSTER_INFO, "namespace": CLUSTER_INFO_NAMESPACE},
            "data": {"kubeconfig": KUBECONFIG, "other": "kept", "jws-kubeconfig-gone00": "stale"}}),
    )
    .await;
    Signer.reconcile(&ctx, &()).await.expect("signed");
    let signed = cluster_info(&ctx).expect("ConfigMap");
    assert_eq!(
        signed["data"],
        json!({"kubeconfig": KUBECONFIG, "other": "kept", "jws-kubeconfig-abcdef": SIGNATURE}),
        "only the valid signing token signs; the stale signature is gone"
    );
    // Signed already: no write.
    Signer.reconcile(&ctx, &()).await.expect("nothing to do");
    assert_eq!(
        cluster_info(&ctx).expect("ConfigMap")["metadata"]["resourceVersion"],
        signed["metadata"]["resourceVersion"]
    );

    // The token goes, and its signature with it.
    let secrets = ctx.catalog.get("", "v1", "secrets").expect("secrets");
    write::delete(
        &ctx,
        &secrets,
        TOKEN_NAMESPACE,
        "bootstrap-token-abcdef",
        &DeleteOpts::default(),
    )
    .await
    .expect("deleted");
    Signer.reconcile(&ctx, &()).await.expect("unsigned");
    assert_eq!(
        cluster_info(&ctx).expect("ConfigMap")["data"],
        json!({"kubeconfig": KUBECONFIG, "other": "kept"})
    );
}

#[tokio::test]
async fn a_config_map_without_a_kubeconfig_is_left_alone() {
    let dir = tempfile::tempdir().expect("tempdir");
    let ctx = setup(dir.path()).await;
    put(
        &ctx,
        "secrets",
        token(
            "abcdef",
            "0123456789abcdef",
            &[("usage-bootstrap-signing", "true")],
        ),
    )
    .await;
    let data = json!({"jws-kubeconfig-gone00": "stale"});
    put(
        &ctx,
        "configmaps",
        json!({"metadata": {"name": CLUSTER_INFO, "namespace": CLUSTER_INFO_NAMESPACE}, "data": data}),
    )
    .await;
    Signer.reconcile(&ctx, &()).await.expect("nothing to do");
    assert_eq!(cluster_info(&ctx).expect("ConfigMap")["data"], data);
}

#[test]
fn the_signer_wakes_for_cluster_info_and_token_secrets_only() {
    let dir = tempfile::tempdir().expect("tempdir");
    let ctx = Ctx::for_test(dir.path());
    let event = |kind, res: ResKey, object: Value| Event {
        kind,
        rv: 1,
        res,
        object: Arc::new(object),
        prev: None,
    };
    let cm = |ns: &str, name: &str| json!({"metadata": {"name": name, "namespace": ns}});
    let mut signer = Signer;
    let asked = |signer: &mut Signer, ev: Event| !signer.observe(&ctx, &ev).is_empty();
    assert!(asked(
        &mut signer,
        event(
            EventType::Modified,
            configmaps(),
            cm(CLUSTER_INFO_NAMESPACE, CLUSTER_INFO)
        )
    ));
    assert!(!asked(
        &mut signer,
        event(
            EventType::Deleted,
            configmaps(),
            cm(CLUSTER_INFO_NAMESPACE, CLUSTER_INFO)
        )
    ));
    assert!(!asked(
        &mut signer,
        event(EventType::Added, configmaps(), cm("default", CLUSTER_INFO))
    ));
    let secret = token("abcdef", "0123456789abcdef", &[]);
    assert!(asked(
        &mut signer,
        event(EventType::Deleted, secrets(), secret.clone())
    ));
    let mut opaque = secret;
    opaque["type"] = json!("Opaque");
    assert!(!asked(
        &mut signer,
        event(EventType::Added, secrets(), opaque)
    ));
}

#[tokio::test]
async fn the_cleaner_deletes_expired_tokens_and_waits_for_the_others() {
    let dir = tempfile::tempdir().expect("tempdir");
    let ctx = setup(dir.path()).await;
    put(
        &ctx,
        "secrets",
        token(
            "old000",
            "0123456789abcdef",
            &[("expiration", "2020-01-01T00:00:00Z")],
        ),
    )
    .await;
    put(
        &ctx,
        "secrets",
        token("bad000", "0123456789abcdef", &[("expiration", "soon")]),
    )
    .await;
    let later = jiff::Timestamp::now() + jiff::SignedDuration::from_secs(3600);
    put(
        &ctx,
        "secrets",
        token(
            "new000",
            "0123456789abcdef",
            &[("expiration", &later.to_string())],
        ),
    )
    .await;
    put(&ctx, "secrets", token("for000", "0123456789abcdef", &[])).await;
    let mut cleaner = Cleaner;
    let mut keys = cleaner.resync(&ctx);
    keys.sort();
    assert_eq!(
        keys,
        [
            "bootstrap-token-bad000",
            "bootstrap-token-for000",
            "bootstrap-token-new000",
            "bootstrap-token-old000"
        ]
    );
    for key in &keys {
        let next = cleaner.reconcile(&ctx, key).await.expect("reconciled");
        let present = ctx.store.get(&secrets(), TOKEN_NAMESPACE, key).is_some();
        match key.as_str() {
            "bootstrap-token-old000" | "bootstrap-token-bad000" => {
                assert_eq!((next, present), (Next::Done, false), "{key}");
            }
            "bootstrap-token-new000" => {
                let Next::After(wait) = next else {
                    panic!("{key}: {next:?}");
                };
                assert!(
                    wait > Duration::from_secs(3500) && wait <= Duration::from_secs(3600),
                    "{wait:?}"
                );
                assert!(present);
            }
            _ => assert_eq!((next, present), (Next::Done, true), "{key}"),
        }
    }
    // A Secret already gone is no failure.
    assert_eq!(
        cleaner
            .reconcile(&ctx, &"bootstrap-token-old000".to_string())
            .await
            .expect("gone already"),
        Next::Done
    );
}
