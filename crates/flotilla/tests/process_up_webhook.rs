//! What a user of the README sees across restarts of `flotilla up`: the data dir remembers `--webhook-example`,
//! no webhook registration is left pointing at a port nobody serves, and a clean SIGTERM logs no error in a
//! log without colour codes.
#![allow(clippy::unwrap_used, clippy::panic)]

use crate::common;

use flotilla_api::config::v1alpha1::ResourceInterpreterWebhookConfiguration;
use kube::api::Api;

use common::{Up, assert_clean, client, up};

async fn registration(up: &Up) -> Option<ResourceInterpreterWebhookConfiguration> {
    let karmada = client(&up.karmada, "karmada-apiserver").await;
    let api: Api<ResourceInterpreterWebhookConfiguration> = Api::all(karmada);
    api.get_opt(flotilla_webhook::example::CONFIGURATION_NAME)
        .await
        .unwrap()
}

/// Whether something accepts connections at the registration's URL.
fn served(configuration: &ResourceInterpreterWebhookConfiguration) -> bool {
    let url = configuration.webhooks[0].client_config.url.clone().unwrap();
    let authority = url
        .strip_prefix("https://")
        .and_then(|rest| rest.split('/').next())
        .unwrap();
    std::net::TcpStream::connect(authority).is_ok()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_data_dir_remembers_the_example_webhook_and_leaves_no_registration_unserved() {
    let dir = tempfile::tempdir().unwrap();

    let first = up(dir.path(), &["--members", "1", "--webhook-example"]);
    let registered = registration(&first).await.expect("registered");
    assert!(served(&registered));
    let mut log = first.progress();
    log.extend(first.terminate());
    assert_clean(&log);

    // A plain restart serves the webhook again, at the port the registration now names.
    let second = up(dir.path(), &["--members", "1"]);
    let registered = registration(&second).await.expect("still registered");
    assert!(served(&registered), "the registration names a served port");
    let progress = second.progress();
    assert!(
        progress
            .iter()
            .any(|l| l.contains("serving the example webhook") && l.contains("--webhook-example")),
        "{progress:?}"
    );
    assert_clean(&second.terminate());

    // Turned off, the registration goes with it, and stays gone on the next plain start.
    let third = up(dir.path(), &["--members", "1", "--no-webhook-example"]);
    assert!(
        registration(&third).await.is_none(),
        "no registration of an unserved webhook"
    );
    assert_clean(&third.terminate());
    let fourth = up(dir.path(), &["--members", "1"]);
    assert!(registration(&fourth).await.is_none());
    assert_clean(&fourth.terminate());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_registration_someone_else_made_under_the_example_name_is_kept() {
    let dir = tempfile::tempdir().unwrap();
    let first = up(dir.path(), &["--members", "1"]);
    let karmada = client(&first.karmada, "karmada-apiserver").await;
    let api: Api<ResourceInterpreterWebhookConfiguration> = Api::all(karmada);
    let theirs = flotilla_webhook::example::webhook_configuration(
        "https://127.0.0.1:1/interpreter-workload",
        None,
    );
    api.create(&Default::default(), &theirs).await.unwrap();
    first.terminate();

    let second = up(dir.path(), &["--members", "1"]);
    assert!(
        registration(&second).await.is_some(),
        "only what flotilla up registered itself is removed"
    );
    second.terminate();
}
