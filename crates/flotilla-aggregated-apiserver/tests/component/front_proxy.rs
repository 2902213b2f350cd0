//! Only the front proxy gets in: a certificate from the published request-header CA with an allowed common
//! name and a user header; the CA is followed as the control plane republishes it.

use serde_json::json;

use crate::support::{
    Ca, Env, as_user, eventually, full, get, publish_request_header, request_header_data,
};

const RESOURCES: &str = "/apis/cluster.karmada.io/v1alpha1";

fn unauthorized() -> serde_json::Value {
    json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
           "message": "Unauthorized", "reason": "Unauthorized", "code": 401})
}

#[tokio::test]
async fn only_a_trusted_front_proxy_with_a_user_is_served() {
    let env = Env::start().await;
    let url = format!("{}{RESOURCES}", env.url);

    let trusted = env
        .front_proxy()
        .call(as_user("GET", &url, "tom", &[], full("")))
        .await;
    assert_eq!(trusted.status, 200, "{}", trusted.text());

    let no_certificate = env
        .caller_with(None)
        .call(as_user("GET", &url, "tom", &[], full("")))
        .await;
    assert_eq!(
        (no_certificate.status, no_certificate.json()),
        (401, unauthorized())
    );

    let stranger = Ca::new("another CA");
    let untrusted = env
        .caller_with(Some(stranger.client("front-proxy-client")))
        .call(as_user("GET", &url, "tom", &[], full("")))
        .await;
    assert_eq!((untrusted.status, untrusted.json()), (401, unauthorized()));

    let wrong_name = env
        .caller_with(Some(env.front_proxy_ca.client("someone-else")))
        .call(as_user("GET", &url, "tom", &[], full("")))
        .await;
    assert_eq!(
        (wrong_name.status, wrong_name.json()),
        (401, unauthorized())
    );

    let no_user = env.front_proxy().call(get(&url)).await;
    assert_eq!((no_user.status, no_user.json()), (401, unauthorized()));

    // The health checks and the version are answered to anyone.
    let anyone = env.caller_with(None);
    for path in ["/healthz", "/livez", "/readyz"] {
        let answer = anyone.call(get(&format!("{}{path}", env.url))).await;
        assert_eq!(
            (answer.status, answer.text().as_str()),
            (200, "ok"),
            "{path}"
        );
    }
    let version = anyone.call(get(&format!("{}/version", env.url))).await;
    assert_eq!(version.status, 200);
    assert!(version.json()["gitVersion"].is_string());
    env.stop().await;
}

#[tokio::test]
async fn a_rotated_request_header_ca_takes_effect_without_a_restart() {
    let env = Env::start().await;
    let url = format!("{}{RESOURCES}", env.url);
    let old = env.front_proxy();
    let rotated = Ca::new("rotated front-proxy CA");
    publish_request_header(&env.control.client, request_header_data(&rotated)).await;
    let new = env.caller_with(Some(rotated.client("front-proxy-client")));
    eventually(
        "the rotated CA to be trusted and the old one not",
        || async {
            let with_new = new.call(as_user("GET", &url, "tom", &[], full(""))).await;
            let with_old = old.call(as_user("GET", &url, "tom", &[], full(""))).await;
            (with_new.status == 200 && with_old.status == 401).then_some(())
        },
    )
    .await;
    env.stop().await;
}
